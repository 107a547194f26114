//! The model the emitter works from: every generated struct with its module, fields and Rust
//! field types, after the layout rules and the fixups of known upstream mistakes.
//!
//! Layout rules (measured in `api/README.md`):
//! - optional struct-typed fields are `Option<Box<T>>`; required ones are inline;
//! - strings are `CompactString` (inline up to 24 bytes), and `IStr` (inline or interned) for
//!   values that repeat across objects;
//! - lists are `List<T>` (a boxed slice), maps `Map<IStr, V>` (a sorted boxed slice; keys repeat
//!   across objects, so they are always `IStr`);
//! - the field sets of `metadata.managedFields` are `FieldsV1`: raw JSON, shared between
//!   objects that carry the same set.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::go_nulls::GoNulls;
use crate::names;
use crate::spec::{ResourceInfo, Spec};

/// Which crate a module lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Crate {
    /// `kclient-apimachinery` (`meta/v1`, `meta/version`).
    Apimachinery,
    /// `kclient-api` (every API group).
    Api,
}

/// A module of generated types: `(crate, [group-or-meta, version])`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Module {
    pub(crate) krate: Crate,
    pub(crate) group: String,
    pub(crate) version: String,
}

impl Module {
    /// `Some("alpha")` or `Some("beta")` for an unstable version (`v1alpha3`, `v1beta2`), `None`
    /// for a GA one.
    pub(crate) fn stability(&self) -> Option<&'static str> {
        if self.version.contains("alpha") {
            Some("alpha")
        } else if self.version.contains("beta") {
            Some("beta")
        } else {
            None
        }
    }

    /// The `kclient-api` Cargo feature that compiles the module: its group's for a GA version,
    /// `<group>-<version>` for an unstable one (opt-in, never in `all`).
    pub(crate) fn feature(&self) -> String {
        match self.stability() {
            None => self.group.clone(),
            Some(_) => format!("{}-{}", self.group, self.version),
        }
    }
}

/// A Rust field type.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ty {
    /// `CompactString`, or `IStr` when interned.
    Str {
        interned: bool,
    },
    Bool,
    I32,
    I64,
    F64,
    Bytes,
    Quantity,
    IntOrString,
    Time,
    MicroTime,
    RawJson,
    /// A generated struct, by schema name.
    Named(String),
    /// A hand-written type at the root of `kclient-apimachinery` (`Status`, `ListMeta`, ...).
    ApimachineryRoot(&'static str),
    /// A hand-written type in a generated module of `kclient-api`.
    HandWritten(Module, &'static str),
    List(Box<Ty>),
    Map {
        interned: bool,
        value: Box<Ty>,
    },
    /// `metav1.FieldsV1`: raw JSON shared between equal sets.
    FieldsV1,
}

/// One field of a generated struct.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub(crate) json: String,
    pub(crate) rust: String,
    pub(crate) ty: Ty,
    pub(crate) required: bool,
    /// An optional field Go writes as `null` when unset (see `go_nulls`): `None` encodes as
    /// `null` instead of being left out.
    pub(crate) null_when_unset: bool,
    /// A required field Go holds in a pointer, slice or map without `omitempty` (see
    /// `go_nulls`), which Go writes as `null` when nil: an empty list or map encodes as
    /// `null`, and a `null` decodes as the default (see `meta::go_null`).
    pub(crate) nil_when_empty: bool,
    /// The protobuf field numbers leading to it (filled by `protobuf::attach`): one number,
    /// or more when Go embeds a struct (`json:",inline"`), which protobuf writes as a nested
    /// message while OpenAPI flattens it. Empty for `apiVersion`/`kind` and the exceptions.
    pub(crate) proto: Vec<u32>,
    /// A list that protobuf wraps in a message (`Verbs`: `repeated string items = 1`).
    pub(crate) proto_wrapped: bool,
    /// For an optional field whose Go type is a value (not a pointer): whether its JSON tag
    /// says `omitempty` (see `go_nulls::GoValues`).
    pub(crate) go_value: Option<bool>,
    pub(crate) doc: String,
    pub(crate) patch_strategy: Option<String>,
    pub(crate) patch_merge_key: Option<String>,
    pub(crate) list_type: Option<String>,
    pub(crate) list_map_keys: Vec<String>,
    pub(crate) map_type: Option<String>,
}

/// A generated struct.
#[derive(Debug, Clone)]
pub(crate) struct Struct {
    pub(crate) schema: String,
    pub(crate) module: Module,
    pub(crate) name: String,
    pub(crate) doc: String,
    pub(crate) fields: Vec<Field>,
    /// The single group/version/kind of a top-level type (serialized as apiVersion/kind).
    pub(crate) gvk: Option<(String, String, String)>,
    /// Whether it has `metadata: ObjectMeta` (and so implements `Object`).
    pub(crate) has_object_meta: bool,
    /// Plural and scope, when the kind is served as a resource.
    pub(crate) resource: Option<ResourceInfo>,
    pub(crate) map_type: Option<String>,
    /// Whether it has a protobuf message (filled by `protobuf::attach`).
    pub(crate) has_proto: bool,
    /// Its schema in the OpenAPI document, which its `JsonSchema` impl follows (`json_schema`).
    pub(crate) openapi: Value,
    /// Whether every field is `Eq` (no float anywhere inside), so that the struct derives `Eq`
    /// beside `PartialEq` (filled by `mark_eq`).
    pub(crate) eq: bool,
}

/// Everything the emitter needs.
pub(crate) struct Model {
    pub(crate) structs: BTreeMap<String, Struct>,
}

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.";

/// String fields whose values are unique per object: stored as `CompactString`, never
/// interned (interning them would only fill the interner). Every other string field is an
/// `IStr`: inline when short, and shared when long and repeated (images, mount paths,
/// toleration keys, owner names, condition messages, ...).
const UNIQUE_FIELDS: &[&str] = &[
    "uid",
    "containerID",
    "resourceVersion",
    "podIP",
    "ip",
    "hostIP",
    "clusterIP",
    "clusterIPs",
    "continue",
    "selfLink",
    "token",
    "nominatedNodeName",
];

/// Whether string values of field `json` of schema `schema` are interned.
fn interned(schema: &str, json: &str) -> bool {
    if schema == "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference" {
        return true; // an owner's name and UID repeat across all its children
    }
    if schema == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" && json == "name" {
        return false;
    }
    !UNIQUE_FIELDS.contains(&json)
}

/// Map fields whose keys and values repeat across objects (labels and their kin).
const INTERNED_MAPS: &[&str] = &[
    "labels",
    "annotations",
    "nodeSelector",
    "matchLabels",
    "selector",
];

/// Schemas that map to hand-written value types or are not generated at all.
fn special(schema: &str) -> Option<Option<Ty>> {
    let api_ext = Module {
        krate: Crate::Api,
        group: "apiextensions".into(),
        version: "v1".into(),
    };
    Some(Some(match schema {
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => Ty::Quantity,
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => Ty::IntOrString,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => Ty::Time,
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => Ty::MicroTime,
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1" => Ty::FieldsV1,
        "io.k8s.apimachinery.pkg.runtime.RawExtension" => Ty::RawJson,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON" => Ty::RawJson,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status" => Ty::ApimachineryRoot("Status"),
        "io.k8s.apimachinery.pkg.apis.meta.v1.StatusDetails" => {
            Ty::ApimachineryRoot("StatusDetails")
        }
        "io.k8s.apimachinery.pkg.apis.meta.v1.StatusCause" => Ty::ApimachineryRoot("StatusCause"),
        "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta" => Ty::ApimachineryRoot("ListMeta"),
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray" => {
            Ty::HandWritten(api_ext, "JSONSchemaPropsOrArray")
        }
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool" => {
            Ty::HandWritten(api_ext, "JSONSchemaPropsOrBool")
        }
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray" => {
            Ty::HandWritten(api_ext, "JSONSchemaPropsOrStringArray")
        }
        "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent"
        | "io.k8s.apimachinery.pkg.apis.meta.v1.Patch" => return Some(None),
        _ => return None,
    }))
}

/// The module and type name of a generated schema.
pub(crate) fn module_of(schema: &str) -> Result<(Module, String), String> {
    let (prefix, name) = schema
        .rsplit_once('.')
        .ok_or_else(|| format!("schema name without a package: {schema}"))?;
    let parts: Vec<&str> = prefix.split('.').collect();
    let module = |krate, group: &str, version: &str| Module {
        krate,
        group: group.to_string(),
        version: version.to_string(),
    };
    let m = match parts.as_slice() {
        ["io", "k8s", "apimachinery", "pkg", "apis", "meta", v] => {
            module(Crate::Apimachinery, "meta", v)
        }
        ["io", "k8s", "apimachinery", "pkg", "version"] => {
            module(Crate::Apimachinery, "meta", "version")
        }
        ["io", "k8s", "api", g, v] => module(Crate::Api, g, v),
        ["io", "k8s", "apiextensions-apiserver", "pkg", "apis", g, v]
        | ["io", "k8s", "kube-aggregator", "pkg", "apis", g, v] => module(Crate::Api, g, v),
        _ => return Err(format!("no module for schema {schema}")),
    };
    Ok((m, name.to_string()))
}

/// The schema name a property refers to (directly or through `allOf`).
fn ref_of(prop: &Value) -> Option<&str> {
    let r = prop.get("$ref").or_else(|| prop.pointer("/allOf/0/$ref"))?;
    r.as_str()?.strip_prefix("#/components/schemas/")
}

/// Whether a schema is a list kind (`XxxList` with `items` and `metadata: ListMeta`), which
/// clients replace with the generic `ObjectList<T>`.
fn is_list_kind(name: &str, schema: &Value) -> bool {
    name.ends_with("List")
        && schema
            .pointer("/properties/items/type")
            .and_then(Value::as_str)
            == Some("array")
        && schema.pointer("/properties/metadata").and_then(ref_of)
            == Some(&format!("{META}ListMeta"))
}

/// Builds the model from the loaded documents, applying the fixups.
pub(crate) fn build(spec: &Spec, go_nulls: &GoNulls) -> Result<Model, String> {
    // Which schemas are referenced from other schemas (list kinds referenced are kept).
    let mut referenced = BTreeSet::new();
    for schema in spec.schemas.values() {
        collect_refs(schema, &mut referenced);
    }
    let mut structs = BTreeMap::new();
    for (name, schema) in &spec.schemas {
        if special(name).is_some() {
            continue;
        }
        if is_list_kind(name, schema) && !referenced.contains(name.as_str()) {
            continue;
        }
        let Some(props) = schema.get("properties").and_then(Value::as_object) else {
            // A schema with no properties is an opaque object (e.g. subresource status).
            if schema.get("type").and_then(Value::as_str) == Some("object") {
                let (module, rust_name) = module_of(name)?;
                structs.insert(
                    name.clone(),
                    Struct {
                        schema: name.clone(),
                        module,
                        name: rust_name,
                        doc: description(schema),
                        fields: vec![],
                        gvk: None,
                        has_object_meta: false,
                        resource: None,
                        map_type: None,
                        has_proto: false,
                        openapi: schema.clone(),
                        eq: true,
                    },
                );
                continue;
            }
            return Err(format!(
                "schema {name} has no properties and is not handled"
            ));
        };
        let (module, rust_name) = module_of(name)?;
        let required: BTreeSet<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let gvks: Vec<&Value> = schema
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default();
        let gvk = match gvks.as_slice() {
            [one] if props.contains_key("apiVersion") && props.contains_key("kind") => {
                let get = |k: &str| one.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                Some((get("group"), get("version"), get("kind")))
            }
            _ => None,
        };
        let has_object_meta =
            props.get("metadata").and_then(ref_of) == Some(&format!("{META}ObjectMeta"));
        let mut fields = Vec::new();
        let mut rust_names = BTreeSet::new();
        for (json, prop) in props {
            if gvk.is_some() && (json == "apiVersion" || json == "kind") {
                continue;
            }
            let mut is_required = required.contains(json.as_str());
            // Fixups of upstream mistakes (the ones k8s-openapi corrects that still apply):
            // these are marked required but the server sends null or omits them.
            if (name == "io.k8s.api.core.v1.ContainerImage" && json == "names")
                || (name == "io.k8s.api.events.v1.Event" && json == "eventTime")
            {
                is_required = false;
            }
            // The metadata of a resource is always present (sending `{}` is the same as none),
            // so it is inline and `Object` reads it without an Option.
            if json == "metadata" && has_object_meta && gvk.is_some() {
                is_required = true;
            }
            let ty =
                field_ty(name, json, prop, false).map_err(|e| format!("{name}.{json}: {e}"))?;
            let rust = names::field_name(json);
            if !rust_names.insert(rust.clone()) {
                return Err(format!("{name}: two properties map to field {rust}"));
            }
            let ext = |k: &str| prop.get(k).and_then(Value::as_str).map(str::to_string);
            fields.push(Field {
                json: json.clone(),
                rust,
                ty,
                required: is_required,
                null_when_unset: !is_required && go_nulls.contains(&(name.clone(), json.clone())),
                nil_when_empty: is_required && go_nulls.contains(&(name.clone(), json.clone())),
                proto: Vec::new(),
                proto_wrapped: false,
                go_value: None,
                doc: description(prop),
                patch_strategy: ext("x-kubernetes-patch-strategy"),
                patch_merge_key: ext("x-kubernetes-patch-merge-key"),
                list_type: ext("x-kubernetes-list-type"),
                list_map_keys: prop
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                map_type: ext("x-kubernetes-map-type"),
            });
        }
        // metadata first, the rest in name order (as the documents list them).
        fields.sort_by_key(|f| (f.json != "metadata", f.json.clone()));
        let resource = gvk.as_ref().and_then(|g| spec.resources.get(g).cloned());
        structs.insert(
            name.clone(),
            Struct {
                schema: name.clone(),
                module,
                name: rust_name,
                doc: description(schema),
                fields,
                gvk,
                has_object_meta,
                resource,
                map_type: schema
                    .get("x-kubernetes-map-type")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                has_proto: false,
                openapi: schema.clone(),
                eq: true,
            },
        );
    }
    // Every named reference must resolve.
    for s in structs.values() {
        for f in &s.fields {
            let mut t = &f.ty;
            loop {
                match t {
                    Ty::List(inner) | Ty::Map { value: inner, .. } => t = inner,
                    Ty::Named(n) if !structs.contains_key(n) => {
                        return Err(format!("{}.{} refers to ungenerated {n}", s.schema, f.json));
                    }
                    _ => break,
                }
            }
        }
    }
    mark_eq(&mut structs);
    Ok(Model { structs })
}

/// Marks the structs that can derive `Eq`: those without a float, a hand-written type that is
/// not `Eq` (`JSONSchemaPropsOr*` hold floats), or a struct that cannot, anywhere inside. A
/// fixpoint: every struct starts `Eq` and loses it when a field cannot be, until nothing
/// changes (the references may form cycles, as `JSONSchemaProps`'s do).
fn mark_eq(structs: &mut BTreeMap<String, Struct>) {
    fn ty_eq(ty: &Ty, structs: &BTreeMap<String, Struct>) -> bool {
        match ty {
            Ty::F64 | Ty::HandWritten(..) => false,
            Ty::Named(n) => structs.get(n).is_some_and(|s| s.eq),
            Ty::List(inner) | Ty::Map { value: inner, .. } => ty_eq(inner, structs),
            Ty::Str { .. }
            | Ty::Bool
            | Ty::I32
            | Ty::I64
            | Ty::Bytes
            | Ty::Quantity
            | Ty::IntOrString
            | Ty::Time
            | Ty::MicroTime
            | Ty::RawJson
            | Ty::ApimachineryRoot(_)
            | Ty::FieldsV1 => true,
        }
    }
    loop {
        let not_eq: Vec<String> = structs
            .values()
            .filter(|s| s.eq && !s.fields.iter().all(|f| ty_eq(&f.ty, structs)))
            .map(|s| s.schema.clone())
            .collect();
        if not_eq.is_empty() {
            return;
        }
        for name in not_eq {
            if let Some(s) = structs.get_mut(&name) {
                s.eq = false;
            }
        }
    }
}

fn collect_refs<'a>(v: &'a Value, out: &mut BTreeSet<&'a str>) {
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref").and_then(Value::as_str)
                && let Some(n) = r.strip_prefix("#/components/schemas/")
            {
                out.insert(n);
            }
            m.values().for_each(|x| collect_refs(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
        _ => {}
    }
}

fn description(v: &Value) -> String {
    v.get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The Rust type of a property (before `Option`/`Box`).
fn field_ty(schema: &str, json: &str, prop: &Value, map_value: bool) -> Result<Ty, String> {
    if let Some(r) = ref_of(prop) {
        return match special(r) {
            Some(Some(t)) => Ok(t),
            Some(None) => Err(format!("refers to {r}, which is not generated")),
            None => Ok(Ty::Named(r.to_string())),
        };
    }
    let ty = prop.get("type").and_then(Value::as_str).unwrap_or("");
    let format = prop.get("format").and_then(Value::as_str).unwrap_or("");
    Ok(match (ty, format) {
        ("string", "byte") => Ty::Bytes,
        ("string", "date-time") => Ty::Time,
        ("string", _) => Ty::Str {
            interned: !map_value && interned(schema, json),
        },
        ("boolean", _) => Ty::Bool,
        ("integer", "int32") => Ty::I32,
        ("integer", _) => Ty::I64,
        ("number", _) => Ty::F64,
        ("array", _) => {
            let items = prop.get("items").ok_or("array without items")?;
            Ty::List(Box::new(field_ty(schema, json, items, map_value)?))
        }
        ("object", _) => match prop.get("additionalProperties") {
            Some(value) => {
                let interned = INTERNED_MAPS.contains(&json);
                let value =
                    if interned && value.get("type").and_then(Value::as_str) == Some("string") {
                        Ty::Str { interned: true }
                    } else {
                        field_ty(schema, json, value, true)?
                    };
                Ty::Map {
                    interned,
                    value: Box::new(value),
                }
            }
            None => Ty::RawJson,
        },
        _ => return Err(format!("unhandled property schema {prop}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(json: &str, ty: Ty) -> Field {
        Field {
            json: json.to_string(),
            rust: json.to_string(),
            ty,
            required: false,
            null_when_unset: false,
            nil_when_empty: false,
            proto: Vec::new(),
            proto_wrapped: false,
            go_value: None,
            doc: String::new(),
            patch_strategy: None,
            patch_merge_key: None,
            list_type: None,
            list_map_keys: Vec::new(),
            map_type: None,
        }
    }

    fn strukt(name: &str, fields: Vec<Field>) -> (String, Struct) {
        let s = Struct {
            schema: name.to_string(),
            module: Module {
                krate: Crate::Api,
                group: "core".to_string(),
                version: "v1".to_string(),
            },
            name: name.to_string(),
            doc: String::new(),
            fields,
            gvk: None,
            has_object_meta: false,
            resource: None,
            map_type: None,
            has_proto: false,
            openapi: Value::Null,
            eq: true,
        };
        (name.to_string(), s)
    }

    #[test]
    fn a_float_anywhere_inside_keeps_a_struct_from_eq_through_cycles() {
        let named = |n: &str| Ty::Named(n.to_string());
        let mut structs: BTreeMap<String, Struct> = [
            strukt("Leaf", vec![field("name", Ty::Str { interned: true })]),
            strukt("Float", vec![field("ratio", Ty::F64)]),
            // Holds a float two levels down, through a list and a map.
            strukt(
                "Outer",
                vec![
                    field("leaf", named("Leaf")),
                    field("middle", Ty::List(Box::new(named("Middle")))),
                ],
            ),
            strukt(
                "Middle",
                vec![field(
                    "floats",
                    Ty::Map {
                        interned: false,
                        value: Box::new(named("Float")),
                    },
                )],
            ),
            // A cycle without a float stays Eq; one with a float does not.
            strukt("CycleA", vec![field("b", named("CycleB"))]),
            strukt(
                "CycleB",
                vec![field("a", named("CycleA")), field("t", Ty::Time)],
            ),
            strukt("FloatCycleA", vec![field("b", named("FloatCycleB"))]),
            strukt(
                "FloatCycleB",
                vec![field("a", named("FloatCycleA")), field("x", Ty::F64)],
            ),
        ]
        .into_iter()
        .collect();
        mark_eq(&mut structs);
        let eq: Vec<&str> = structs
            .values()
            .filter(|s| s.eq)
            .map(|s| s.name.as_str())
            .collect();
        assert_eq!(eq, ["CycleA", "CycleB", "Leaf"]);
    }
}
