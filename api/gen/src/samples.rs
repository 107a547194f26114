//! Sample JSON for every generated struct, built from its schema, and the generated
//! round-trip test that decodes, re-encodes and compares each one.
//!
//! Every field is filled (optional struct fields down to a small depth, so recursive types end),
//! so the test proves that each field is mapped both ways, with exact integers (an `int64`
//! sample above 2^53), quantities, times and raw JSON. A left-out field that Go writes as
//! `null` when unset is `null` in the sample, so the test also proves that it encodes so.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

use crate::model::{Crate, Model, Struct, Ty};

const MAX_DEPTH: usize = 5;

fn sample_ty(model: &Model, ty: &Ty, field: &str, depth: usize, path: &mut Vec<String>) -> Value {
    match ty {
        Ty::Str { .. } => Value::String(format!("{field}-value")),
        Ty::Bool => Value::Bool(true),
        Ty::I32 => json!(7),
        Ty::I64 => json!(9_007_199_254_740_993_i64),
        Ty::F64 => json!(1.5),
        Ty::Bytes => json!("aGVsbG8="),
        Ty::Quantity => json!("250m"),
        Ty::IntOrString => {
            if depth.is_multiple_of(2) {
                json!(8080)
            } else {
                json!("http")
            }
        }
        Ty::Time => json!("2024-01-02T03:04:05Z"),
        Ty::MicroTime => json!("2024-01-02T03:04:05.123456Z"),
        Ty::RawJson => json!({"raw": [1, "x", null]}),
        Ty::FieldsV1 => json!({"f:metadata": {"f:labels": {"f:app": {}}}}),
        Ty::Named(n) => sample_struct_in(model, &model.structs[n], depth + 1, path),
        Ty::ApimachineryRoot("ListMeta") => json!({"resourceVersion": "5"}),
        Ty::ApimachineryRoot(_) => json!({}),
        Ty::HandWritten(_, "JSONSchemaPropsOrBool") => json!(true),
        Ty::HandWritten(_, "JSONSchemaPropsOrStringArray") => json!(["a", "b"]),
        Ty::HandWritten(_, _) => json!({"type": "string"}),
        Ty::List(inner) => Value::Array(vec![sample_ty(model, inner, field, depth, path)]),
        Ty::Map { value, .. } => {
            let mut m = Map::new();
            m.insert(
                format!("{field}-key"),
                sample_ty(model, value, field, depth, path),
            );
            Value::Object(m)
        }
    }
}

fn skippable(ty: &Ty) -> bool {
    match ty {
        Ty::Named(_) | Ty::ApimachineryRoot(_) | Ty::HandWritten(..) => true,
        Ty::List(inner) | Ty::Map { value: inner, .. } => skippable(inner),
        _ => false,
    }
}

/// The struct a type holds (directly, in a list or as map values).
fn held_struct<'m>(model: &'m Model, ty: &Ty) -> Option<&'m Struct> {
    match ty {
        Ty::Named(n) => model.structs.get(n),
        Ty::List(inner) | Ty::Map { value: inner, .. } => held_struct(model, inner),
        _ => None,
    }
}

/// The JSON of `s`'s zero value as kclient writes it: its required fields, each zero.
fn zero_struct(model: &Model, s: &Struct, depth: usize) -> Value {
    let mut m = Map::new();
    for f in s.fields.iter().filter(|f| f.required) {
        let v = match &f.ty {
            // Go's nil, which it writes as `null`.
            Ty::List(_) | Ty::Map { .. } | Ty::Bytes if f.nil_when_empty => Value::Null,
            Ty::Str { .. } | Ty::Bytes | Ty::Quantity => json!(""),
            Ty::Bool => json!(false),
            Ty::I32 | Ty::I64 | Ty::IntOrString => json!(0),
            Ty::F64 => json!(0),
            Ty::Time | Ty::MicroTime | Ty::RawJson => Value::Null,
            Ty::FieldsV1 => json!({}),
            Ty::List(_) => json!([]),
            Ty::Map { .. } => json!({}),
            Ty::Named(n) if depth < 8 => zero_struct(model, &model.structs[n], depth + 1),
            _ => json!({}),
        };
        m.insert(f.json.clone(), v);
    }
    Value::Object(m)
}

/// A JSON object with every field of `s` set.
pub(crate) fn sample_struct(model: &Model, s: &Struct, depth: usize) -> Value {
    sample_struct_in(model, s, depth, &mut Vec::new())
}

/// [`sample_struct`] below the structs on `path`: optional fields that would recurse into a
/// struct already on the path are left out, so recursive types (JSONSchemaProps) stay small.
fn sample_struct_in(model: &Model, s: &Struct, depth: usize, path: &mut Vec<String>) -> Value {
    path.push(s.schema.clone());
    let mut m = Map::new();
    if let Some((g, v, k)) = &s.gvk {
        let av = if g.is_empty() {
            v.clone()
        } else {
            format!("{g}/{v}")
        };
        m.insert("apiVersion".into(), json!(av));
        m.insert("kind".into(), json!(k));
    }
    for f in &s.fields {
        // Hand-written apimachinery types (Status, ListMeta) have their own tests; only
        // required ones are filled here.
        let skip = !f.required
            && ((depth > MAX_DEPTH && skippable(&f.ty))
                || matches!(f.ty, Ty::ApimachineryRoot(_))
                || held_struct(model, &f.ty).is_some_and(|h| path.contains(&h.schema)));
        if skip {
            // A Go value struct is never unset: JSON and protobuf always carry it, so the
            // sample holds its zero value (required fields only) rather than leaving it out.
            if f.go_value.is_some()
                && let Ty::Named(n) = &f.ty
            {
                m.insert(f.json.clone(), zero_struct(model, &model.structs[n], 0));
                continue;
            }
            // What Go writes for such a field when it is unset, and so must kclient.
            if f.null_when_unset {
                m.insert(f.json.clone(), Value::Null);
            }
            continue;
        }
        m.insert(
            f.json.clone(),
            sample_ty(model, &f.ty, &f.rust, depth, path),
        );
    }
    path.pop();
    Value::Object(m)
}

/// `api/tests/it/roundtrip.rs`.
pub(crate) fn roundtrip_tests(model: &Model) -> String {
    let mut out = String::from(
        "//! Round-trip tests of every generated type: decode a sample with every field set, \
         encode it, compare with the sample, and check decode(encode(x)) == x; with the \
         `protobuf` feature, the same through protobuf.\n//!\n//! \
         Generated by `api/gen`; do not edit.\n\n",
    );
    out.push_str("use super::roundtrip::check;\n\n");
    for s in model.structs.values() {
        let path = match s.module.krate {
            Crate::Apimachinery => format!(
                "kclient_apimachinery::{}::{}::{}",
                s.module.group, s.module.version, s.name
            ),
            Crate::Api => format!(
                "kclient_api::{}::{}::{}",
                s.module.group, s.module.version, s.name
            ),
        };
        let test = format!(
            "{}_{}_{}",
            s.module.group,
            s.module.version,
            crate::names::field_name(&s.name)
        );
        let sample = serde_json::to_string(&sample_struct(model, s, 0)).unwrap_or_default();
        if s.module.krate == Crate::Api {
            let _ = writeln!(out, "#[cfg(feature = {:?})]", s.module.feature());
        }
        let proto = if s.has_proto {
            format!(
                "    #[cfg(feature = \"protobuf\")]\n    super::roundtrip::check_protobuf::<{path}>(sample);\n"
            )
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "#[test]\nfn {test}() {{\n    let sample = r#\"{sample}\"#;\n    check::<{path}>(sample);\n{proto}}}\n"
        );
    }
    out
}
