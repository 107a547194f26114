//! Unit tests of the structural schema rewrite: one type per shape, and a check of the
//! apiserver's structural rules applied to every output.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use kclient_apimachinery::meta::v1::{Condition, ObjectMeta};
use kclient_apimachinery::meta::{IntOrString, Quantity, RawJson, Time};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{SchemaError, structural_schema};

/// The structural rules of apiextensions-apiserver's `pkg/apiserver/schema/validation.go`
/// and the keywords `pkg/apis/apiextensions/validation` forbids, checked over a whole schema.
fn assert_structural(v: &Value) {
    fn walk(v: &Value, path: &str, in_junctor: bool) {
        let o = v
            .as_object()
            .unwrap_or_else(|| panic!("{path}: not an object: {v}"));
        for forbidden in [
            "$ref",
            "$schema",
            "$defs",
            "definitions",
            "title",
            "const",
            "prefixItems",
            "uniqueItems",
            "patternProperties",
            "unevaluatedProperties",
        ] {
            assert!(!o.contains_key(forbidden), "{path}: has {forbidden}: {v}");
        }
        if let Some(t) = o.get("type") {
            assert!(t.is_string(), "{path}: type is not one string: {t}");
            assert_ne!(t, "null", "{path}");
        }
        assert_ne!(o.get("additionalProperties"), Some(&json!(false)), "{path}");
        assert_ne!(o.get("additionalProperties"), Some(&json!(true)), "{path}");
        assert!(
            !(o.contains_key("properties") && o.contains_key("additionalProperties")),
            "{path}: properties and additionalProperties"
        );
        let int_or_string = o.get("x-kubernetes-int-or-string") == Some(&json!(true));
        let preserve = o.get("x-kubernetes-preserve-unknown-fields") == Some(&json!(true));
        if in_junctor {
            for k in [
                "type",
                "description",
                "nullable",
                "default",
                "additionalProperties",
            ] {
                assert!(!o.contains_key(k), "{path}: {k} inside a junctor: {v}");
            }
        } else {
            assert!(
                o.contains_key("type") || int_or_string || preserve,
                "{path}: no type: {v}"
            );
        }
        if int_or_string {
            assert!(!o.contains_key("type"), "{path}");
            if let Some(any_of) = o.get("anyOf") {
                assert_eq!(any_of, &json!([{"type": "integer"}, {"type": "string"}]));
            }
        }
        if let Some(Value::Object(props)) = o.get("properties") {
            for (k, p) in props {
                walk(p, &format!("{path}.{k}"), in_junctor);
            }
        }
        for k in ["items", "additionalProperties"] {
            if let Some(s) = o.get(k) {
                walk(s, &format!("{path}[*]"), in_junctor);
            }
        }
        for j in ["oneOf", "anyOf", "allOf"] {
            if int_or_string && j == "anyOf" {
                continue;
            }
            if let Some(Value::Array(branches)) = o.get(j) {
                for b in branches {
                    walk(b, &format!("{path}({j})"), true);
                    // Every property a junctor names is also specified outside it.
                    if let Some(Value::Object(props)) = b.get("properties") {
                        for k in props.keys() {
                            assert!(
                                o["properties"].get(k).is_some(),
                                "{path}: {k} only inside {j}"
                            );
                        }
                    }
                }
            }
        }
    }
    walk(v, "", false);
}

/// The structural schema of `T`, checked.
fn schema<T: JsonSchema>() -> Value {
    let s = structural_schema::<T>().unwrap_or_else(|e| panic!("{e}"));
    assert_structural(&s);
    s
}

fn spec<T: JsonSchema>() -> Value {
    schema::<Root<T>>()["properties"]["spec"].clone()
}

fn error<T: JsonSchema>() -> SchemaError {
    match structural_schema::<T>() {
        Ok(s) => panic!("expected an error, got {s:#}"),
        Err(e) => e,
    }
}

/// A resource root around the spec under test.
#[derive(Serialize, Deserialize, JsonSchema)]
struct Root<T> {
    metadata: ObjectMeta,
    spec: T,
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct Plain {
    /// Replicas wanted.
    replica_count: i32,
    name: String,
    ratio: f64,
    enabled: bool,
    size: u32,
    inner: Inner,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Inner {
    path: String,
}

#[test]
fn the_root_gets_api_version_kind_and_metadata_as_an_object() {
    let s = schema::<Root<Inner>>();
    assert_eq!(s["type"], "object");
    assert_eq!(s["properties"]["apiVersion"], json!({"type": "string"}));
    assert_eq!(s["properties"]["kind"], json!({"type": "string"}));
    assert_eq!(s["properties"]["metadata"], json!({"type": "object"}));
    assert_eq!(s["required"], json!(["metadata", "spec"]));
    assert!(s.get("title").is_none() && s.get("$schema").is_none());
}

/// A root whose `metadata` has a doc comment and is optional: kube-apiserver refuses any
/// keyword on the root's `metadata` beyond `type` ("must not specify anything other than name
/// and generateName, but metadata is implicitly specified"), a description or `nullable`
/// included, so both go, as controller-gen writes `metadata: {type: object}`.
#[derive(Serialize, Deserialize, JsonSchema)]
struct DocumentedRoot {
    /// Standard object metadata.
    #[serde(default)]
    metadata: Option<ObjectMeta>,
    spec: Inner,
}

#[test]
fn the_roots_metadata_is_only_an_object_whatever_its_field_says() {
    let s = schema::<DocumentedRoot>();
    assert_eq!(s["properties"]["metadata"], json!({"type": "object"}));
    assert_eq!(s["required"], json!(["spec"]));
    // Deeper down, a field named metadata is an ordinary field and keeps its description.
    let nested = spec::<DocumentedRoot>();
    assert_eq!(
        nested["properties"]["metadata"]["description"],
        "Standard object metadata."
    );
}

#[test]
fn structs_nest_inline_with_renames_and_formats() {
    let s = spec::<Plain>();
    assert_eq!(
        s,
        json!({
            "type": "object",
            "properties": {
                "replicaCount": {"type": "integer", "format": "int32", "description": "Replicas wanted."},
                "name": {"type": "string"},
                "ratio": {"type": "number", "format": "double"},
                "enabled": {"type": "boolean"},
                "size": {"type": "integer", "format": "int64", "minimum": 0},
                "inner": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
            },
            "required": ["replicaCount", "name", "ratio", "enabled", "size", "inner"],
        })
    );
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Optional {
    count: Option<i64>,
    inner: Option<Inner>,
    mode: Option<Mode>,
    shape: Option<Shape>,
    port: Option<IntOrString>,
    #[serde(default)]
    defaulted: String,
}

#[test]
fn options_are_nullable_and_not_required() {
    let s = spec::<Optional>();
    let p = &s["properties"];
    assert_eq!(
        p["count"],
        json!({"type": "integer", "format": "int64", "nullable": true})
    );
    assert_eq!(p["inner"]["type"], "object");
    assert_eq!(p["inner"]["nullable"], true);
    assert_eq!(
        p["mode"],
        json!({"type": "string", "enum": ["Fast", "Safe"], "nullable": true})
    );
    assert_eq!(p["shape"]["type"], "object");
    assert_eq!(p["shape"]["nullable"], true);
    assert!(p["shape"]["oneOf"].is_array());
    assert_eq!(p["port"]["x-kubernetes-int-or-string"], true);
    assert_eq!(p["port"]["nullable"], true);
    assert_eq!(p["defaulted"], json!({"type": "string", "default": ""}));
    assert!(s.get("required").is_none(), "{s}");
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Collections {
    list: Vec<Inner>,
    names: Vec<String>,
    tags: BTreeSet<String>,
    rules: BTreeSet<Vec<String>>,
    labels: BTreeMap<String, String>,
    nested: HashMap<String, Vec<i32>>,
    anything: serde_json::Value,
    raw: RawJson,
    values: BTreeMap<String, serde_json::Value>,
}

#[test]
fn arrays_sets_maps_and_free_form_values() {
    let p = spec::<Collections>()["properties"].clone();
    assert_eq!(p["list"]["type"], "array");
    assert_eq!(p["list"]["items"]["type"], "object");
    // A Vec may repeat its items: no list type.
    assert_eq!(
        p["names"],
        json!({"type": "array", "items": {"type": "string"}})
    );
    // A set of non-scalars cannot be a `set` list; it is left a plain list.
    assert!(p["rules"].get("x-kubernetes-list-type").is_none());
    assert_eq!(
        p["tags"],
        json!({"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"})
    );
    assert_eq!(
        p["labels"],
        json!({"type": "object", "additionalProperties": {"type": "string"}})
    );
    assert_eq!(
        p["nested"]["additionalProperties"]["items"],
        json!({"type": "integer", "format": "int32"})
    );
    assert_eq!(
        p["anything"],
        json!({"x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        p["raw"],
        json!({"x-kubernetes-preserve-unknown-fields": true})
    );
    assert_eq!(
        p["values"],
        json!({"type": "object", "additionalProperties": {"x-kubernetes-preserve-unknown-fields": true}})
    );
}

#[derive(Serialize, Deserialize, JsonSchema)]
enum Mode {
    Fast,
    Safe,
}

/// Unit variants with doc comments: schemars writes a `oneOf` of `const`s.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Documented {
    /// The first.
    One,
    /// The second.
    Two,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Enums {
    mode: Mode,
    documented: Documented,
}

#[test]
fn unit_enums_are_strings_with_enum() {
    let p = spec::<Enums>()["properties"].clone();
    assert_eq!(
        p["mode"],
        json!({"type": "string", "enum": ["Fast", "Safe"]})
    );
    assert_eq!(p["documented"]["enum"], json!(["one", "two"]));
    assert_eq!(p["documented"]["type"], "string");
    assert!(p["documented"].get("oneOf").is_none());
}

/// Externally tagged, every variant with data.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
enum Shape {
    Circle { radius: f64 },
    Rect(Rect),
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Rect {
    w: i32,
    h: i32,
}

#[test]
fn externally_tagged_enums_put_variants_on_the_object_and_one_of_required() {
    let s = spec::<Root<Shape>>()["properties"]["spec"].clone();
    assert_eq!(s["type"], "object");
    assert_eq!(
        s["properties"]["circle"]["properties"]["radius"]["type"],
        "number"
    );
    assert_eq!(s["properties"]["rect"]["required"], json!(["w", "h"]));
    assert_eq!(
        s["oneOf"],
        json!([{"required": ["circle"]}, {"required": ["rect"]}])
    );
}

/// Internally tagged.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "camelCase")]
enum Source {
    Git { url: String, branch: Option<String> },
    Bucket { url: String, region: String },
    Empty,
}

#[test]
fn internally_tagged_enums_keep_the_tag_values_per_variant() {
    let s = spec::<Source>();
    assert_eq!(
        s["properties"]["kind"],
        json!({"type": "string", "enum": ["git", "bucket", "empty"]})
    );
    assert_eq!(s["properties"]["url"], json!({"type": "string"}));
    assert_eq!(s["properties"]["region"], json!({"type": "string"}));
    assert_eq!(
        s["oneOf"],
        json!([
            {"required": ["kind", "url"], "properties": {"kind": {"enum": ["git"]}}},
            {"required": ["kind", "url", "region"], "properties": {"kind": {"enum": ["bucket"]}}},
            {"required": ["kind"], "properties": {"kind": {"enum": ["empty"]}}},
        ])
    );
}

/// Adjacently tagged, with the same content type in both variants.
#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum Adjacent {
    A(Inner),
    B(Inner),
}

#[test]
fn adjacently_tagged_enums_with_one_content_schema() {
    let s = spec::<Adjacent>();
    assert_eq!(s["properties"]["t"]["enum"], json!(["A", "B"]));
    assert_eq!(s["properties"]["c"]["type"], "object");
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(tag = "t", content = "c")]
enum AdjacentConflict {
    A(Inner),
    B(i32),
}

#[test]
fn variants_giving_a_property_two_schemas_are_refused() {
    let e = error::<Root<AdjacentConflict>>();
    assert_eq!(e.path(), ".spec.c");
    assert!(e.reason().contains("different schemas"), "{e}");
    assert!(e.to_string().contains("Root"), "{e}");
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Untagged {
    ByName { name: String },
    ById { id: i64 },
}

#[derive(Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
enum NumberOrName {
    Number(i32),
    Name(String),
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Untaggeds {
    target: Untagged,
    port: NumberOrName,
}

#[test]
fn untagged_enums_of_objects_use_any_of_and_of_int_and_string_int_or_string() {
    let p = spec::<Untaggeds>()["properties"].clone();
    assert_eq!(p["target"]["type"], "object");
    assert_eq!(
        p["target"]["anyOf"],
        json!([{"required": ["name"]}, {"required": ["id"]}])
    );
    assert_eq!(
        p["port"],
        json!({"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": true})
    );
}

#[derive(Serialize, Deserialize, JsonSchema)]
enum Mixed {
    Off,
    On { level: i32 },
}

#[test]
fn externally_tagged_enums_mixing_unit_and_data_variants_are_refused() {
    let e = error::<Root<Mixed>>();
    assert_eq!(e.path(), ".spec");
    assert!(e.reason().contains("different kinds"), "{e}");
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Flattened {
    name: String,
    #[serde(flatten)]
    inner: Inner,
    #[serde(flatten)]
    source: Source,
}

#[test]
fn flattened_structs_and_enums_land_on_the_parent() {
    let s = spec::<Flattened>();
    assert_eq!(s["properties"]["path"], json!({"type": "string"}));
    assert_eq!(s["properties"]["name"], json!({"type": "string"}));
    assert_eq!(
        s["properties"]["kind"]["enum"],
        json!(["git", "bucket", "empty"])
    );
    let required = s["required"].as_array().unwrap();
    assert!(required.contains(&json!("name")) && required.contains(&json!("path")));
    assert_eq!(s["oneOf"].as_array().unwrap().len(), 3);
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct FlattenedMap {
    name: String,
    #[serde(flatten)]
    extra: BTreeMap<String, String>,
}

#[test]
fn a_flattened_map_keeps_unknown_fields() {
    let s = spec::<FlattenedMap>();
    assert_eq!(s["properties"]["name"], json!({"type": "string"}));
    assert_eq!(s["x-kubernetes-preserve-unknown-fields"], true);
    assert!(s.get("additionalProperties").is_none());
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Kubernetes {
    port: IntOrString,
    memory: Quantity,
    started: Time,
    conditions: Vec<Condition>,
}

#[test]
fn apimachinery_types_are_as_controller_gen_writes_them() {
    let p = spec::<Kubernetes>()["properties"].clone();
    assert_eq!(p["port"]["x-kubernetes-int-or-string"], true);
    assert_eq!(
        p["memory"]["pattern"],
        kclient_apimachinery::meta::json_schema::QUANTITY_PATTERN
    );
    assert_eq!(
        p["started"],
        json!({"type": "string", "format": "date-time"})
    );
    let condition = &p["conditions"]["items"];
    assert_eq!(
        condition["required"],
        json!(["lastTransitionTime", "message", "reason", "status", "type"])
    );
    // Not a set: its items are objects.
    assert!(p["conditions"].get("x-kubernetes-list-type").is_none());
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Tree {
    children: Vec<Tree>,
}

#[test]
fn recursive_types_are_refused() {
    let e = error::<Root<Tree>>();
    assert!(e.reason().contains("recursive"), "{e}");
    assert_eq!(e.type_name(), "Root");
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Tuple {
    pair: (i32, String),
}

#[test]
fn tuples_are_refused_naming_the_field() {
    let e = error::<Root<Tuple>>();
    assert_eq!(e.path(), ".spec.pair");
    assert!(e.reason().contains("tuple"), "{e}");
}

#[test]
fn a_root_that_is_not_a_struct_is_refused() {
    assert!(error::<Mode>().reason().contains("root"));
    assert!(
        error::<BTreeMap<String, String>>()
            .reason()
            .contains("root")
    );
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Bounds {
    #[schemars(range(min = 1, max = 10), extend("x-kubernetes-validations" = [{"rule": "self > 0"}]))]
    level: u8,
    #[schemars(length(min = 1, max = 5), regex(pattern = r"^[a-z]+$"))]
    word: String,
    nonzero: std::num::NonZeroU32,
}

#[test]
fn validations_and_kubernetes_extensions_are_kept() {
    let p = spec::<Bounds>()["properties"].clone();
    assert_eq!(p["level"]["minimum"], 1);
    assert_eq!(p["level"]["maximum"], 10);
    assert_eq!(p["level"]["format"], "int32");
    assert_eq!(
        p["level"]["x-kubernetes-validations"][0]["rule"],
        "self > 0"
    );
    assert_eq!(p["word"]["maxLength"], 5);
    assert_eq!(p["word"]["pattern"], "^[a-z]+$");
    assert_eq!(p["nonzero"]["type"], "integer");
}

#[derive(Default, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
struct Window {
    start: Time,
    note: Option<String>,
    port: IntOrString,
}

#[derive(Serialize, Deserialize, JsonSchema)]
struct Defaults {
    #[serde(default)]
    window: Window,
}

#[test]
fn defaults_keep_their_values_without_nulls() {
    let p = spec::<Defaults>()["properties"]["window"].clone();
    // Time::ZERO and None are written as null: unset, so left out of the default.
    assert_eq!(p["default"], json!({"port": 0}));
    assert_eq!(p["properties"]["port"]["default"], 0);
    assert!(p["properties"]["start"].get("default").is_none());
}

#[cfg(feature = "core")]
mod api_types;
