//! `schemars::JsonSchema` impls of the generated structs, behind the `schemars` feature of the
//! crate they are in (kclient-api's, which turns on kclient-apimachinery's): each struct's
//! schema is its OpenAPI definition, in the shape controller-gen writes for the same Go type,
//! so that a custom resource embedding a `PodTemplateSpec` gets the CRD schema a Go operator
//! would (kclient-clientset's `structural_schema` inlines the references).
//!
//! A `metadata: ObjectMeta` property is `name`, `namespace`, `labels`, `annotations` and
//! `finalizers`, as controller-gen writes an embedded `ObjectMeta` with
//! `crd:generateEmbeddedObjectMeta=true`: without it (`ObjectMeta`'s own schema, a bare
//! `type: object`) the API server would prune a pod template's labels away.
//!
//! What is kept from a definition: descriptions (a property's over its type's), `type`,
//! `format`, `enum`, `required`, `x-kubernetes-list-type`, `-list-map-keys` and `-map-type`;
//! a reference to another generated struct is `subschema_for::<T>()`, to a value type (`Quantity`,
//! `IntOrString`, `Time`, `RawJson`) that type's schema from kclient-apimachinery. Left out:
//!
//! - `default`, except a scalar one on an optional property (`protocol: TCP`, the `name: ""` of
//!   `LocalObjectReference`, which a map list's key needs): the `{}` and `""` on required and
//!   value-typed Go fields are openapi-gen's zero values, which controller-gen does not write,
//!   which the API server would apply to custom resources, and which (`default: {}` of a struct
//!   with required fields) would not validate;
//! - `x-kubernetes-patch-strategy`, `-patch-merge-key`, `-unions`, `-group-version-kind`, which
//!   a CRD schema has no field for;
//! - `x-kubernetes-list-type: map` where a key of the items is neither required nor defaulted
//!   (`ServiceAccount.secrets`, `FlowSchemaStatus.conditions`, `ResourceClaimStatus.devices`):
//!   the API server refuses such a CRD schema, so the list stays atomic (a comment says so).

use std::fmt::Write as _;

use serde_json::Value;

use crate::emit::FileCtx;
use crate::model::{Crate, Model, Struct, Ty};

/// The `meta/v1` structs whose schemas kclient-apimachinery writes by hand
/// (`meta/json_schema.rs`): as controller-gen writes them, which the document does not say
/// (`ObjectMeta` as a bare `type: object`, `Condition` with its limits).
const HAND_WRITTEN: &[&str] = &[
    "ObjectMeta",
    "Condition",
    "LabelSelector",
    "LabelSelectorRequirement",
];

/// Whether `s` gets a generated `JsonSchema` impl.
pub(crate) fn generated(s: &Struct) -> bool {
    !(s.module.krate == Crate::Apimachinery && HAND_WRITTEN.contains(&s.name.as_str()))
}

/// The schema name the document gives a reference (`$ref` or `allOf: [$ref]`).
fn ref_name(prop: &Value) -> Option<&str> {
    let r = prop.get("$ref").or_else(|| prop.pointer("/allOf/0/$ref"))?;
    r.as_str()?.strip_prefix("#/components/schemas/")
}

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn opt_lit(v: Option<&str>) -> String {
    match v {
        Some(v) => format!("Some({v:?})"),
        None => "None".into(),
    }
}

fn str_list(values: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let items: Vec<String> = values
        .into_iter()
        .map(|v| format!("{:?}", v.as_ref()))
        .collect();
    format!("&[{}]", items.join(", "))
}

/// The `default` of property `json` of `s` that the schema keeps: a scalar one on an optional
/// property (see the module docs), as a Rust expression of a `serde_json::Value`.
fn kept_default(s: &Struct, json: &str) -> Option<String> {
    if required_in_document(s, json) {
        return None;
    }
    let value = s
        .openapi
        .pointer(&format!("/properties/{}/default", pointer_escape(json)))?;
    Some(match value {
        Value::String(v) => format!("serde_json::Value::from({v:?})"),
        Value::Bool(b) => format!("serde_json::Value::from({b})"),
        Value::Number(n) if n.is_i64() => format!("serde_json::Value::from({n}i64)"),
        Value::Number(n) => format!("serde_json::Value::from({n}f64)"),
        _ => return None,
    })
}

fn pointer_escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn required_in_document(s: &Struct, json: &str) -> bool {
    s.openapi
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(json)))
}

/// Whether the schema lists property `json` of `s` as required: the document does, and the
/// model keeps it required (not one of the fixups of fields the server leaves out).
fn required(s: &Struct, json: &str) -> bool {
    required_in_document(s, json) && s.fields.iter().any(|f| f.json == json && f.required)
}

/// The Rust expression of the schema of a value of type `ty`, whose OpenAPI schema is `prop`.
fn schema_expr(
    ctx: &mut FileCtx<'_>,
    model: &Model,
    ty: &Ty,
    prop: &Value,
    notes: &mut Vec<String>,
) -> String {
    let format = str_of(prop, "format");
    match ty {
        Ty::Str { .. } => {
            let values: Vec<&str> = prop
                .get("enum")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            format!("s::string({}, {})", opt_lit(format), str_list(values))
        }
        Ty::Bool => "s::boolean()".into(),
        Ty::I32 | Ty::I64 => format!("s::integer({})", opt_lit(format)),
        Ty::F64 => format!("s::number({})", opt_lit(format)),
        Ty::Bytes => "s::string(Some(\"byte\"), &[])".into(),
        Ty::RawJson => {
            if ref_name(prop)
                == Some("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON")
            {
                let path = ctx.ty(ty, model);
                format!("generator.subschema_for::<{path}>()")
            } else {
                // `runtime.RawExtension`: an object of any kind, as controller-gen writes it.
                "s::raw_extension()".into()
            }
        }
        Ty::Named(n) if n == "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" => {
            // Never a custom resource's root here: embedded, as controller-gen's
            // `generateEmbeddedObjectMeta` writes it, so that a template keeps its labels.
            "s::embedded_object_meta()".into()
        }
        Ty::Quantity
        | Ty::IntOrString
        | Ty::Time
        | Ty::MicroTime
        | Ty::FieldsV1
        | Ty::Named(_)
        | Ty::ApimachineryRoot(_)
        | Ty::HandWritten(..) => {
            let path = ctx.ty(ty, model);
            format!("generator.subschema_for::<{path}>()")
        }
        Ty::List(inner) => {
            let items = prop.get("items").unwrap_or(&Value::Null);
            let items_expr = schema_expr(ctx, model, inner, items, notes);
            let mut list_type = str_of(prop, "x-kubernetes-list-type");
            let mut keys: Vec<&str> = prop
                .get("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if list_type == Some("map")
                && let Ty::Named(item) = &**inner
                && let Some(item) = model.structs.get(item)
                && let Some(key) = keys
                    .iter()
                    .find(|k| !required(item, k) && kept_default(item, k).is_none())
            {
                notes.push(format!(
                    "x-kubernetes-list-type map left out (atomic): key {key:?} of {} is neither required nor defaulted, which the API server refuses in a CRD schema",
                    item.name
                ));
                list_type = None;
                keys.clear();
            }
            format!(
                "s::array({items_expr}, {}, {})",
                opt_lit(list_type),
                str_list(keys)
            )
        }
        Ty::Map { value, .. } => {
            let values = prop.get("additionalProperties").unwrap_or(&Value::Null);
            format!("s::map({})", schema_expr(ctx, model, value, values, notes))
        }
    }
}

/// Writes `s`'s `JsonSchema` impl (gated on the `schemars` feature).
pub(crate) fn emit(out: &mut String, ctx: &mut FileCtx<'_>, model: &Model, s: &Struct) {
    if !generated(s) {
        return;
    }
    let mut props = Vec::new();
    let mut notes = Vec::new();
    if s.gvk.is_some() {
        for key in ["apiVersion", "kind"] {
            let desc = s
                .openapi
                .pointer(&format!("/properties/{key}/description"))
                .and_then(Value::as_str)
                .unwrap_or("");
            props.push(format!(
                "({key:?}, s::property(s::string(None, &[]), {desc:?}, None, None))"
            ));
        }
    }
    let mut required_names = Vec::new();
    for f in &s.fields {
        let prop = s
            .openapi
            .pointer(&format!("/properties/{}", pointer_escape(&f.json)))
            .cloned()
            .unwrap_or(Value::Null);
        let expr = schema_expr(ctx, model, &f.ty, &prop, &mut notes);
        let map_type = str_of(&prop, "x-kubernetes-map-type");
        let default = kept_default(s, &f.json);
        let expr = if f.doc.is_empty() && map_type.is_none() && default.is_none() {
            expr
        } else {
            format!(
                "s::property({expr}, {:?}, {}, {})",
                f.doc,
                opt_lit(map_type),
                match default {
                    Some(d) => format!("Some({d})"),
                    None => "None".into(),
                }
            )
        };
        props.push(format!("({:?}, {expr})", f.json));
        if required(s, &f.json) {
            required_names.push(f.json.clone());
        }
    }
    let body = format!(
        "s::object({:?}, {}, {}, vec![{}])",
        s.doc,
        opt_lit(s.map_type.as_deref()),
        str_list(&required_names),
        props.join(", ")
    );
    let generator = if body.contains("generator.") {
        "generator"
    } else {
        "_generator"
    };
    let schema_id = &s.schema;
    let _ = writeln!(out, "#[cfg(feature = \"schemars\")]");
    let _ = writeln!(out, "impl schemars::JsonSchema for {} {{", s.name);
    let _ = writeln!(
        out,
        "    fn schema_name() -> std::borrow::Cow<'static, str> {{\n        std::borrow::Cow::Borrowed({:?})\n    }}",
        s.name
    );
    let _ = writeln!(
        out,
        "    fn schema_id() -> std::borrow::Cow<'static, str> {{\n        std::borrow::Cow::Borrowed({schema_id:?})\n    }}"
    );
    let _ = writeln!(
        out,
        "    fn json_schema({generator}: &mut schemars::SchemaGenerator) -> schemars::Schema {{"
    );
    for note in &notes {
        let _ = writeln!(out, "        // {note}.");
    }
    let _ = writeln!(
        out,
        "        use {}::meta::json_schema::openapi as s;",
        ctx.apimachinery()
    );
    let _ = writeln!(out, "        {body}\n    }}\n}}\n");
}
