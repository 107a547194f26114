//! Protobuf for the generated types: matches every struct and field of the model with its
//! message and field in the `generated.proto` files (`api/proto/`), checks that their types
//! agree, and emits each struct's `kclient_apimachinery::protobuf::Message` implementation.
//!
//! Generation fails when an OpenAPI field has no protobuf field or a protobuf field no OpenAPI
//! field, except for [`EXCEPTIONS`], each with its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use crate::go_nulls::GoValues;
use crate::model::{Field, Model, Struct, Ty};
use crate::proto::{Label, ProtoField, Protos, message_of};

/// Fields on one side only, allowed and why: `(schema or "*", field, reason)`.
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "*",
        "apiVersion",
        "TypeMeta: protobuf carries it in the envelope (runtime.Unknown), not in the message",
    ),
    (
        "*",
        "kind",
        "TypeMeta: protobuf carries it in the envelope (runtime.Unknown), not in the message",
    ),
];

/// Schemas that have no protobuf message, and why.
const NO_MESSAGE: &[(&str, &str)] = &[(
    "io.k8s.apimachinery.pkg.version.Info",
    "served only as JSON (/version); k8s.io/apimachinery/pkg/version has no generated.proto",
)];

fn excepted(schema: &str, field: &str) -> bool {
    EXCEPTIONS
        .iter()
        .any(|(s, f, _)| (*s == "*" || *s == schema) && *f == field)
}

/// `$ref` → `ref`, `x-kubernetes-embedded-resource` → `xkubernetesembeddedresource`: JSON
/// names and proto names compared without case, `$` and `-`.
fn normalized(name: &str) -> String {
    name.chars()
        .filter(|c| *c != '$' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Where OpenAPI field `json` is in message `message`: its field numbers (more than one through
/// embedded messages, whose fields OpenAPI flattens), and the protobuf field.
fn find<'p>(
    protos: &'p Protos,
    message: &'p BTreeMap<String, ProtoField>,
    json: &str,
    openapi_names: &BTreeSet<String>,
    depth: usize,
) -> Option<(Vec<u32>, &'p ProtoField)> {
    if let Some(p) = message.get(json) {
        return Some((vec![p.number], p));
    }
    let want = normalized(json);
    let mut hits = message.iter().filter(|(n, _)| normalized(n) == want);
    if let (Some((_, p)), None) = (hits.next(), hits.next()) {
        return Some((vec![p.number], p));
    }
    if depth > 4 {
        return None;
    }
    // An embedded struct: a message field with no OpenAPI counterpart.
    for (name, p) in message {
        if p.label != Label::Optional || openapi_names.contains(&normalized(name)) {
            continue;
        }
        if let Some(inner) = protos.get(&p.ty)
            && let Some((mut path, leaf)) = find(protos, inner, json, openapi_names, depth + 1)
        {
            path.insert(0, p.number);
            return Some((path, leaf));
        }
    }
    None
}

/// Protobuf fields of `message` (and of the embedded messages along `used` paths) that no
/// OpenAPI field reached.
fn unused(
    protos: &Protos,
    message_name: &str,
    message: &BTreeMap<String, ProtoField>,
    prefix: &[u32],
    used: &BTreeSet<Vec<u32>>,
    out: &mut Vec<String>,
) {
    for (name, p) in message {
        let mut path = prefix.to_vec();
        path.push(p.number);
        if used.contains(&path) {
            continue;
        }
        if used.iter().any(|u| u.starts_with(&path)) {
            if let Some(inner) = protos.get(&p.ty) {
                unused(protos, &p.ty, inner, &path, used, out);
            }
            continue;
        }
        out.push(format!("{message_name}.{name} (= {})", p.number));
    }
}

/// Fills `proto` and `go_value` of every field and `has_proto` of every struct.
pub(crate) fn attach(
    model: &mut Model,
    protos: &Protos,
    go_values: &GoValues,
) -> Result<(), String> {
    let mut errors = Vec::new();
    let snapshot: Vec<String> = model.structs.keys().cloned().collect();
    let mut leaves = Vec::new();
    for schema in snapshot {
        let message = message_of(&schema).and_then(|m| protos.get(&m).map(|f| (m, f)));
        let Some((message_name, proto_fields)) = message else {
            if !NO_MESSAGE.iter().any(|(s, _)| *s == schema) {
                errors.push(format!("{schema} has no protobuf message in api/proto/"));
            }
            continue;
        };
        let s = model.structs.get_mut(&schema).expect("listed above");
        s.has_proto = true;
        let openapi_names: BTreeSet<String> =
            s.fields.iter().map(|f| normalized(&f.json)).collect();
        let mut used = BTreeSet::new();
        for f in &mut s.fields {
            f.go_value = go_values.get(&(schema.clone(), f.json.clone())).copied();
            match find(protos, proto_fields, &f.json, &openapi_names, 0) {
                Some((path, leaf)) => {
                    used.insert(path.clone());
                    f.proto = path;
                    f.proto_wrapped = leaf.label == Label::Optional && matches!(f.ty, Ty::List(_));
                    leaves.push((schema.clone(), f.json.clone(), f.ty.clone(), leaf.clone()));
                }
                None if excepted(&schema, &f.json) => {}
                None => errors.push(format!(
                    "{schema}.{}: no field of protobuf message {message_name}",
                    f.json
                )),
            }
        }
        let mut missing = Vec::new();
        unused(
            protos,
            &message_name,
            proto_fields,
            &[],
            &used,
            &mut missing,
        );
        for m in missing {
            errors.push(format!("{m}: no field in the OpenAPI schema {schema}"));
        }
    }
    // Types agree.
    for (schema, json, ty, leaf) in leaves {
        if let Err(e) = check_field(model, protos, &ty, &leaf) {
            errors.push(format!("{schema}.{json}: {e}"));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the OpenAPI documents and api/proto/ disagree ({} problems):\n  {}",
            errors.len(),
            errors.join("\n  ")
        ))
    }
}

/// Whether Rust type `ty` can carry protobuf field `p`.
fn check_field(model: &Model, protos: &Protos, ty: &Ty, p: &ProtoField) -> Result<(), String> {
    match (&p.label, ty) {
        (Label::Repeated, Ty::List(inner)) => check_value(model, protos, inner, &p.ty),
        (Label::Map { key }, Ty::Map { value, .. }) if key == "string" => {
            check_value(model, protos, value, &p.ty)
        }
        (Label::Optional, t) if !matches!(t, Ty::Map { .. }) => {
            check_value(model, protos, t, &p.ty)
        }
        _ => Err(format!(
            "the protobuf field is {:?} {}, the Rust type {ty:?}",
            p.label, p.ty
        )),
    }
}

const META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";

fn check_value(model: &Model, protos: &Protos, ty: &Ty, proto: &str) -> Result<(), String> {
    let ok = match ty {
        Ty::Str { .. } => proto == "string",
        Ty::Bool => proto == "bool",
        // int32 and int64 are the same varint on the wire (a negative int32 is sign-extended).
        Ty::I32 | Ty::I64 => proto == "int32" || proto == "int64",
        Ty::F64 => proto == "double",
        Ty::Bytes => proto == "bytes",
        Ty::Quantity => proto == "k8s.io.apimachinery.pkg.api.resource.Quantity",
        Ty::IntOrString => proto == "k8s.io.apimachinery.pkg.util.intstr.IntOrString",
        Ty::Time => proto == format!("{META}.Time"),
        Ty::MicroTime => proto == format!("{META}.MicroTime"),
        Ty::FieldsV1 => proto == format!("{META}.FieldsV1"),
        Ty::RawJson => {
            proto == "k8s.io.apimachinery.pkg.runtime.RawExtension"
                || proto == "k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.JSON"
        }
        Ty::Named(schema) => {
            let s = &model.structs[schema];
            s.has_proto && message_of(schema).as_deref() == Some(proto)
        }
        Ty::ApimachineryRoot(name) => proto == format!("{META}.{name}"),
        Ty::HandWritten(_, name) => {
            proto == format!("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.{name}")
        }
        // A list as a map value is a message wrapping it: `repeated T items = 1`.
        Ty::List(inner) => {
            let Some(wrapper) = protos.get(proto) else {
                return Err(format!("{proto} is not a message"));
            };
            match wrapper.get("items") {
                Some(items)
                    if wrapper.len() == 1
                        && items.number == 1
                        && items.label == Label::Repeated =>
                {
                    return check_value(model, protos, inner, &items.ty);
                }
                _ => {
                    return Err(format!(
                        "{proto} is not a list wrapper (`repeated T items = 1`)"
                    ));
                }
            }
        }
        Ty::Map { .. } => false,
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "the protobuf type is {proto}, the Rust type {ty:?}"
        ))
    }
}

/// Whether a zero value of this optional field reads as unset (as it does from JSON).
fn zero_is_unset(f: &Field) -> bool {
    match f.ty {
        Ty::Time | Ty::MicroTime | Ty::RawJson => true,
        Ty::Str { .. } | Ty::Bool | Ty::I32 | Ty::I64 | Ty::F64 => f.go_value == Some(true),
        _ => false,
    }
}

/// The fields of a message, or of a message Go embeds, by field number.
enum Node<'a> {
    Leaf(&'a Field),
    /// An embedded message (`json:",inline"`) holding these fields.
    Embedded(Vec<(u32, Node<'a>)>),
}

/// Groups fields by their number paths, in field-number order.
fn tree<'a>(fields: &[(&'a Field, &'a [u32])]) -> Vec<(u32, Node<'a>)> {
    let mut numbers: Vec<u32> = fields.iter().map(|(_, p)| p[0]).collect();
    numbers.sort_unstable();
    numbers.dedup();
    numbers
        .into_iter()
        .map(|n| {
            let here: Vec<(&Field, &[u32])> = fields
                .iter()
                .filter(|(_, p)| p[0] == n)
                .map(|(f, p)| (*f, &p[1..]))
                .collect();
            match here.as_slice() {
                [(f, [])] => (n, Node::Leaf(f)),
                _ => (n, Node::Embedded(tree(&here))),
            }
        })
        .collect()
}

fn emit_decode(out: &mut String, pb: &str, nodes: &[(u32, Node<'_>)]) {
    out.push_str("match field {\n");
    for (n, node) in nodes {
        match node {
            Node::Leaf(f) => {
                let x = format!("&mut self.{}", f.rust);
                let call = match (&f.ty, f.required) {
                    (Ty::List(_), true) if f.proto_wrapped => {
                        format!("{pb}::merge({x}, field, wire, r)")
                    }
                    (Ty::List(_), false) if f.proto_wrapped => {
                        format!("{pb}::merge_option({x}, field, wire, r, false)")
                    }
                    (Ty::List(_), true) => format!("{pb}::merge_list({x}, field, wire, r)"),
                    (Ty::List(_), false) => format!("{pb}::merge_option_list({x}, field, wire, r)"),
                    (Ty::Map { .. }, true) => format!("{pb}::merge_map({x}, field, wire, r)"),
                    (Ty::Map { .. }, false) => {
                        format!("{pb}::merge_option_map({x}, field, wire, r)")
                    }
                    (_, true) => format!("{pb}::merge({x}, field, wire, r)"),
                    (Ty::Named(_), false) => format!("{pb}::merge_boxed({x}, field, wire, r)"),
                    (_, false) => format!(
                        "{pb}::merge_option({x}, field, wire, r, {})",
                        zero_is_unset(f)
                    ),
                };
                let _ = writeln!(out, "{n} => {call}?,");
            }
            Node::Embedded(inner) => {
                // Through the helper, which reads an occurrence seen again after other
                // fields together with every later one, as a message's.
                let _ = writeln!(
                    out,
                    "{n} => {pb}::merge_embedded(field, wire, r, |field, wire, r| {{"
                );
                emit_decode(out, pb, inner);
                out.push_str("Ok(())\n})?,\n");
            }
        }
    }
    out.push_str("_ => r.skip(wire)?,\n}\n");
}

fn emit_encode(out: &mut String, pb: &str, nodes: &[(u32, Node<'_>)]) {
    for (n, node) in nodes {
        match node {
            Node::Leaf(f) => {
                let x = format!("&self.{}", f.rust);
                let write_zero = f.go_value.is_some();
                let call = match (&f.ty, f.required) {
                    (Ty::List(_), true) if f.proto_wrapped => format!("{pb}::put(w, {n}, {x})"),
                    (Ty::List(_), false) if f.proto_wrapped => {
                        format!("{pb}::put_option(w, {n}, {x}, false)")
                    }
                    (Ty::List(_), true) => format!("{pb}::put_list(w, {n}, {x})"),
                    (Ty::List(_), false) => format!("{pb}::put_option_list(w, {n}, {x})"),
                    (Ty::Map { .. }, true) => format!("{pb}::put_map(w, {n}, {x})"),
                    (Ty::Map { .. }, false) => format!("{pb}::put_option_map(w, {n}, {x})"),
                    (_, true) => format!("{pb}::put(w, {n}, {x})"),
                    (Ty::Named(_), false) => {
                        format!("{pb}::put_boxed(w, {n}, {x}, {write_zero})")
                    }
                    (_, false) => format!("{pb}::put_option(w, {n}, {x}, {write_zero})"),
                };
                let _ = writeln!(out, "{call};");
            }
            Node::Embedded(inner) => {
                // Go always writes an embedded struct (a value).
                let _ = writeln!(out, "w.tag({n}, {pb}::WireType::Len);");
                out.push_str("w.nested(|w| {\n");
                emit_encode(out, pb, inner);
                out.push_str("});\n");
            }
        }
    }
}

/// The `Message` implementation of `s` (behind the `protobuf` feature).
pub(crate) fn emit_message(out: &mut String, pb: &str, s: &Struct) {
    if !s.has_proto {
        return;
    }
    let fields: Vec<(&Field, &[u32])> = s
        .fields
        .iter()
        .filter(|f| !f.proto.is_empty())
        .map(|f| (f, f.proto.as_slice()))
        .collect();
    let nodes = tree(&fields);
    let _ = writeln!(out, "#[cfg(feature = \"protobuf\")]");
    let _ = writeln!(out, "impl {pb}::Message for {} {{", s.name);
    let _ = writeln!(
        out,
        "    fn merge_field(&mut self, field: u32, wire: {pb}::WireType, r: &mut {pb}::Reader<'_>) -> Result<(), {pb}::ProtoError> {{"
    );
    if nodes.is_empty() {
        out.push_str("let _ = field;\nr.skip(wire)\n}\n");
    } else {
        emit_decode(out, pb, &nodes);
        out.push_str("Ok(())\n}\n");
    }
    let _ = writeln!(out, "    fn encode_fields(&self, w: &mut {pb}::Writer) {{");
    if nodes.is_empty() {
        out.push_str("let _ = w;\n");
    }
    emit_encode(out, pb, &nodes);
    out.push_str("}\n}\n\n");
}
