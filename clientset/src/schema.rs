//! A custom resource's `openAPIV3Schema` made from its Rust type (cargo feature `schema`):
//! [`structural_schema`] asks schemars for the type's JSON Schema and rewrites it into the
//! *structural* schema kube-apiserver requires of a CustomResourceDefinition, following the
//! rules of apiextensions-apiserver's `pkg/apiserver/schema` (`structural.go`,
//! `validation.go`) and `pkg/apis/apiextensions/validation`.
//!
//! The rules, and what each Rust shape becomes, are in [`structural_schema`]'s docs.

use std::fmt;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

/// The structural `openAPIV3Schema` of the custom resource type `T`, for
/// `CustomResource::crd` or [`CustomResource::crd_json_from_type`](crate::CustomResource).
///
/// `T` derives [`JsonSchema`](schemars::JsonSchema) (with serde's attributes, which schemars
/// reads); its `metadata: ObjectMeta` becomes `type: object` (only that: a doc comment or an
/// `Option` there would add keywords kube-apiserver refuses on the root's `metadata`), and
/// `apiVersion` and `kind` are added. It follows the rules of apiextensions-apiserver's `pkg/apiserver/schema`
/// (`structural.go`, `validation.go`) and the keywords `pkg/apis/apiextensions/validation`
/// forbids.
///
/// What each shape becomes:
///
/// - Structs: `type: object` with `properties` and `required` (fields that serde needs when
///   reading: neither `Option` nor `#[serde(default)]`), renames and `rename_all` applied.
///   Everything is inlined: a CRD schema has no `$ref` or `definitions`.
/// - `Option<T>`: `T`'s schema with `nullable: true` (never a type list or an `anyOf` with
///   `null`).
/// - `Vec<T>`, sets: `type: array` with `items`; a set of strings or numbers also gets
///   `x-kubernetes-list-type: set` (the server refuses `uniqueItems`).
/// - Maps: `type: object` with `additionalProperties`.
/// - Unit enums: `type: string` with `enum`.
/// - Enums with data (externally, internally or adjacently tagged, or untagged) whose
///   variants are all objects: every variant's properties on the enum's own object schema
///   (a property two variants share must have one schema, apart from a tag's values), and a
///   `oneOf` (`anyOf` for untagged enums) of the variants' `required` lists, plus the tag's
///   value for tagged ones, so the server still refuses an object that is no variant. An
///   untagged enum of an integer and a string becomes `x-kubernetes-int-or-string`.
/// - `#[serde(flatten)]`: the flattened struct's or enum's properties on the parent; a
///   flattened map makes the parent `x-kubernetes-preserve-unknown-fields: true` (its extra
///   keys are kept, not validated: a structural schema cannot type them beside `properties`).
/// - `serde_json::Value`, kclient's `RawJson`: `x-kubernetes-preserve-unknown-fields: true`.
/// - kclient-apimachinery's `IntOrString`, `Quantity`, `Time`, `MicroTime`, meta/v1
///   `Condition` and `LabelSelector`: as controller-gen writes them (see
///   `kclient_apimachinery::meta::json_schema`); `ObjectMeta` as `type: object`.
/// - The root: `type: object`, with `apiVersion` and `kind` as strings.
/// - kclient-api's generated types (a `PodTemplateSpec`, `ResourceRequirements`,
///   `Toleration`, `LocalObjectReference` in a spec), with kclient-api's feature `schemars`
///   (the facade's `schema` turns it on; this crate's `schema` does not, so that CRD authors
///   who embed none do not compile them): their OpenAPI definitions, inlined, as
///   controller-gen writes the Go types: descriptions, formats, the documents' `enum`s,
///   `required`, list types and map-list keys, map types, quantities and `IntOrString` as
///   int-or-string, scalar defaults of optional fields (a port's `protocol: TCP`), and a
///   template's `metadata` with the fields of controller-gen's `generateEmbeddedObjectMeta`
///   (`name`, `namespace`, `labels`, `annotations`, `finalizers`), which the server keeps
///   where a bare object would lose them to pruning. See kclient-api's README for what is
///   left out of the documents and why. A whole pod template adds about 320 KB (mostly its
///   descriptions) to the CRD.
///
/// Dropped because a CRD schema has no place for them: `$schema`, `title`, `$comment`,
/// `examples`, `readOnly`, `writeOnly`, `deprecated`, `additionalProperties: false` (a
/// structural schema prunes unknown fields instead of refusing them), `propertyNames`, a
/// `null` `default` and the `null` members of a default object. `const` becomes a one-value `enum`; integer formats become `int32` or
/// `int64`; JSON Schema 2020-12's numeric `exclusiveMinimum`/`exclusiveMaximum` become
/// OpenAPI 3.0's `minimum` with `exclusiveMinimum: true`.
///
/// Refused with a [`SchemaError`] naming the type and the field's path: recursive types
/// (schemars leaves a `$ref`), tuples (`prefixItems`), enums mixing unit and data variants
/// when externally tagged (a value that is a string or an object has no one `type`), variants
/// whose shared property differs, untagged enums of other scalar mixes, and keywords a CRD
/// schema does not have.
///
/// # Example
///
/// ```
/// use kclient_apimachinery::meta::v1::ObjectMeta;
/// use kclient_clientset::{custom_resource, structural_schema};
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// struct Backup {
///     metadata: ObjectMeta,
///     spec: BackupSpec,
/// }
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// #[serde(rename_all = "camelCase")]
/// struct BackupSpec {
///     retain_days: Option<u32>,
///     mode: Mode,
/// }
///
/// #[derive(Serialize, Deserialize, JsonSchema)]
/// enum Mode {
///     Full,
///     Incremental,
/// }
///
/// let schema = structural_schema::<Backup>()?;
/// let spec = &schema["properties"]["spec"];
/// assert_eq!(spec["properties"]["retainDays"]["nullable"], true);
/// assert_eq!(spec["properties"]["mode"]["enum"], serde_json::json!(["Full", "Incremental"]));
/// assert_eq!(spec["required"], serde_json::json!(["mode"]));
/// assert_eq!(schema["properties"]["metadata"], serde_json::json!({"type": "object"}));
/// # Ok::<(), kclient_clientset::SchemaError>(())
/// ```
pub fn structural_schema<T: JsonSchema>() -> Result<Value, SchemaError> {
    let settings = SchemaSettings::draft2020_12().with(|s| {
        s.meta_schema = None;
        s.inline_subschemas = true;
    });
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let type_name = T::schema_name().into_owned();
    to_structural_root(schema.as_value(), &type_name)
}

/// Why a type's schema cannot be a CRD's structural schema: the type, where in it (a path of
/// serialized field names from the root, `[*]` for items and map values), and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchemaError {
    type_name: String,
    path: String,
    reason: String,
}

impl SchemaError {
    /// The Rust type whose schema was being made (its schemars name).
    pub fn type_name(&self) -> &str {
        &self.type_name
    }

    /// Where in it: `.spec.backends[*].weight`, or `.` for the root.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// What is wrong there.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot make a structural CRD schema of {} at {}: {}",
            self.type_name, self.path, self.reason
        )
    }
}

impl std::error::Error for SchemaError {}

/// The conversion's state: the type's name, for errors.
struct Converter<'a> {
    type_name: &'a str,
}

/// Keywords dropped: annotations a CRD schema has no field for, and `$defs` (everything
/// that is used is inlined; a `$ref` left is refused).
const DROPPED: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "$comment",
    "title",
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "propertyNames",
    "contentEncoding",
    "contentMediaType",
];

/// Keywords kept as they are (OpenAPI 3.0 value validations and annotations that
/// `JSONSchemaProps` has).
const KEPT: &[&str] = &[
    "description",
    "format",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "multipleOf",
    "minimum",
    "maximum",
];

fn to_structural_root(schema: &Value, type_name: &str) -> Result<Value, SchemaError> {
    let conv = Converter { type_name };
    let mut root = conv.node(schema, "")?;
    let ty = root.get("type").and_then(Value::as_str);
    if ty != Some("object") {
        return Err(conv.error(
            "",
            format!(
                "the root of a custom resource must be a struct (type object), not {}",
                ty.unwrap_or("an untyped value")
            ),
        ));
    }
    if root.contains_key("additionalProperties") || root.remove("nullable").is_some() {
        return Err(conv.error(
            "",
            "the root of a custom resource must be a struct, not a map or an Option",
        ));
    }
    let properties = root
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        for key in ["apiVersion", "kind"] {
            properties
                .entry(key)
                .or_insert_with(|| json!({"type": "string"}));
        }
        // kube-apiserver takes the root's `metadata` as `type: object` and nothing else (its
        // `validateStructuralMetadataInvariants`: a description, `nullable` or a default is
        // refused), so what the field's doc comment or `Option` added goes, as controller-gen
        // writes it.
        if let Some(Value::Object(metadata)) = properties.get_mut("metadata")
            && metadata.get("type").and_then(Value::as_str) == Some("object")
        {
            metadata.retain(|key, _| key == "type" || key == "properties");
        }
    }
    Ok(Value::Object(root))
}

/// `path` plus one field.
fn child(path: &str, key: &str) -> String {
    format!("{path}.{key}")
}

/// A schema that only says `null`: `{"type": "null"}`, `{"const": null}`, `{"enum": [null]}`.
fn is_null_schema(v: &Value) -> bool {
    let Some(o) = v.as_object() else {
        return false;
    };
    o.get("type").is_some_and(|t| t == "null")
        || o.get("const").is_some_and(Value::is_null)
        || o.get("enum").is_some_and(|e| e == &json!([null]))
}

impl Converter<'_> {
    fn error(&self, path: &str, reason: impl Into<String>) -> SchemaError {
        SchemaError {
            type_name: self.type_name.to_owned(),
            path: if path.is_empty() {
                ".".to_owned()
            } else {
                path.to_owned()
            },
            reason: reason.into(),
        }
    }

    /// One schema node, structural.
    fn node(&self, v: &Value, path: &str) -> Result<Map<String, Value>, SchemaError> {
        match v {
            Value::Bool(true) => Ok(preserve_unknown()),
            Value::Bool(false) => Err(self.error(path, "a schema that accepts nothing (false)")),
            Value::Object(o) => self.object_node(o.clone(), path),
            other => Err(self.error(path, format!("not a schema: {other}"))),
        }
    }

    fn object_node(
        &self,
        mut o: Map<String, Value>,
        path: &str,
    ) -> Result<Map<String, Value>, SchemaError> {
        if let Some(r) = o.get("$ref") {
            return Err(self.error(
                path,
                format!(
                    "a recursive type (the schema refers to {r}); a CRD schema cannot refer to \
                     itself: hold the recursive part as serde_json::Value or RawJson"
                ),
            ));
        }
        for key in DROPPED {
            o.remove(*key);
        }
        let mut nullable = false;

        // `Option<T>` of a typed T: a type list with "null".
        if let Some(Value::Array(types)) = o.get_mut("type") {
            let before = types.len();
            types.retain(|t| t != "null");
            nullable |= types.len() != before;
            match types.len() {
                0 => return Err(self.error(path, "a value that can only be null (the unit type)")),
                1 => {
                    let t = types.remove(0);
                    o.insert("type".into(), t);
                }
                _ => {
                    let mut names: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
                    names.sort_unstable();
                    if names == ["integer", "string"] {
                        o.remove("type");
                        o.insert("x-kubernetes-int-or-string".into(), true.into());
                    } else {
                        return Err(self.error(
                            path,
                            format!("a value of several types ({}), which a structural schema cannot type", names.join(", ")),
                        ));
                    }
                }
            }
        } else if o.get("type").is_some_and(|t| t == "null") {
            return Err(self.error(path, "a value that can only be null (the unit type)"));
        }
        if let Some(Value::Array(values)) = o.get_mut("enum") {
            let before = values.len();
            values.retain(|v| !v.is_null());
            nullable |= values.len() != before;
        }
        if let Some(c) = o.remove("const") {
            if c.is_null() {
                return Err(self.error(path, "a value that can only be null (the unit type)"));
            }
            o.insert("enum".into(), json!([c]));
        }
        // `Option<T>` of an untyped T (an enum, an int-or-string): `anyOf: [T, null]`.
        if let Some(Value::Array(branches)) = o.get("anyOf")
            && branches.iter().any(is_null_schema)
        {
            let mut rest: Vec<Value> = branches
                .iter()
                .filter(|b| !is_null_schema(b))
                .cloned()
                .collect();
            o.remove("anyOf");
            match rest.len() {
                0 => return Err(self.error(path, "a value that can only be null (the unit type)")),
                1 => {
                    // T's own keys, with the outer ones (a field's description) over them.
                    let Value::Object(mut inner) = rest.remove(0) else {
                        return Err(self.error(path, "an Option of a schema that is not an object"));
                    };
                    for (k, v) in o {
                        inner.insert(k, v);
                    }
                    o = inner;
                }
                _ => {
                    o.insert("anyOf".into(), Value::Array(rest));
                }
            }
            let mut out = self.object_node(o, path)?;
            out.insert("nullable".into(), true.into());
            return Ok(out);
        }

        let mut out = Map::new();
        if o.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
            // Kept as written (`anyOf: [integer, string]` is the one junctor with types the
            // server allows), without a `type`.
            for (k, v) in o {
                if k != "type" && !(k == "default" && v.is_null()) {
                    out.insert(k, v);
                }
            }
            if nullable {
                out.insert("nullable".into(), true.into());
            }
            return Ok(out);
        }

        let junctors: Vec<(String, Value)> = ["oneOf", "anyOf", "allOf"]
            .into_iter()
            .filter_map(|k| o.remove(k).map(|v| (k.to_owned(), v)))
            .collect();
        let unevaluated = o.remove("unevaluatedProperties");
        let not = o.remove("not");
        let mut unique_items = false;

        for (key, value) in o {
            match key.as_str() {
                "type" | "enum" | "required" => {
                    out.insert(key, value);
                }
                "default" => {
                    if !value.is_null() {
                        out.insert(key, without_nulls(value));
                    }
                }
                "nullable" => nullable |= value == Value::Bool(true),
                "properties" => {
                    let Value::Object(props) = value else {
                        return Err(self.error(path, "properties is not an object"));
                    };
                    let mut converted = Map::new();
                    for (name, schema) in props {
                        let node = self.node(&schema, &child(path, &name))?;
                        converted.insert(name, Value::Object(node));
                    }
                    out.insert("properties".into(), Value::Object(converted));
                }
                "additionalProperties" => match value {
                    Value::Bool(false) => {}
                    other => {
                        let node = self.node(&other, &format!("{path}[*]"))?;
                        out.insert("additionalProperties".into(), Value::Object(node));
                    }
                },
                "items" => {
                    let node = self.node(&value, &format!("{path}[*]"))?;
                    out.insert("items".into(), Value::Object(node));
                }
                "uniqueItems" => {
                    // Replaced below by a list type where the items allow it.
                    unique_items = value == Value::Bool(true);
                }
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    let bound = if key == "exclusiveMinimum" {
                        "minimum"
                    } else {
                        "maximum"
                    };
                    if value.is_number() {
                        out.insert(bound.into(), value);
                        out.insert(key, true.into());
                    } else {
                        out.insert(key, value);
                    }
                }
                k if KEPT.contains(&k) || k.starts_with("x-kubernetes-") => {
                    out.insert(key, value);
                }
                "prefixItems" => {
                    return Err(self.error(
                        path,
                        "a tuple (prefixItems): a CRD schema types arrays by one items schema; \
                         use a struct",
                    ));
                }
                other => {
                    return Err(self.error(
                        path,
                        format!(
                            "the JSON Schema keyword {other:?}, which a CRD schema does not have"
                        ),
                    ));
                }
            }
        }

        if unique_items
            && let Some(Value::Object(items)) = out.get("items")
            && items
                .get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| matches!(t, "string" | "integer" | "number" | "boolean"))
            && !out.contains_key("x-kubernetes-list-type")
        {
            out.insert("x-kubernetes-list-type".into(), "set".into());
        }
        if let Some(Value::String(format)) = out.get("format")
            && let Some(t) = out.get("type").and_then(Value::as_str)
        {
            let mapped = match (t, format.as_str()) {
                ("integer", "int8" | "int16" | "int32" | "uint8" | "uint16") => Some("int32"),
                ("integer", _) => Some("int64"),
                ("number", "float") => Some("float"),
                ("number", _) => Some("double"),
                _ => None,
            };
            if let Some(mapped) = mapped {
                out.insert("format".into(), mapped.into());
            }
        }

        for (junctor, branches) in junctors {
            let Value::Array(branches) = branches else {
                return Err(self.error(path, format!("{junctor} is not a list")));
            };
            self.junctor(&mut out, &junctor, branches, path)?;
        }
        if let Some(not) = not {
            out.insert("not".into(), self.value_validation(&not, path)?);
        }
        if let Some(unevaluated) = unevaluated
            && unevaluated != Value::Bool(false)
        {
            out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        }
        // A flattened map beside fields: keep its keys, unvalidated.
        if out.contains_key("properties") && out.contains_key("additionalProperties") {
            out.remove("additionalProperties");
            out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        }
        if !out.contains_key("type")
            && out.get("x-kubernetes-preserve-unknown-fields") != Some(&Value::Bool(true))
            && out.get("x-kubernetes-int-or-string") != Some(&Value::Bool(true))
        {
            if out.contains_key("properties") || out.contains_key("additionalProperties") {
                out.insert("type".into(), "object".into());
            } else if out.contains_key("items") {
                out.insert("type".into(), "array".into());
            } else if out.is_empty() || out.keys().all(|k| k == "description") {
                // `{}`: any value, as serde_json::Value's own schema.
                out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
            } else {
                return Err(self.error(path, "a schema without a type"));
            }
        }
        if nullable {
            out.insert("nullable".into(), true.into());
        }
        Ok(out)
    }

    /// Merges `oneOf`/`anyOf`/`allOf` branches (an enum's variants, or flattened enums) into
    /// `out`: their types and properties on `out`, only `required` lists and tag values left
    /// in the junctor.
    fn junctor(
        &self,
        out: &mut Map<String, Value>,
        junctor: &str,
        branches: Vec<Value>,
        path: &str,
    ) -> Result<(), SchemaError> {
        let mut converted = Vec::with_capacity(branches.len());
        for (i, b) in branches.iter().enumerate() {
            let b = self.node(b, &format!("{path} ({junctor} branch {})", i + 1))?;
            converted.push(b);
        }
        if junctor == "allOf" {
            // Flattened enums: each branch is an object constraint on the same object.
            for b in converted {
                self.merge_object_branch(out, b, None, path)?;
            }
            return Ok(());
        }
        let types: Vec<&str> = converted
            .iter()
            .map(|b| {
                if b.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
                    && !b.contains_key("type")
                {
                    "any"
                } else {
                    b.get("type").and_then(Value::as_str).unwrap_or("any")
                }
            })
            .collect();
        if types.iter().all(|t| *t == "string") {
            // Unit variants (with doc comments, schemars writes one `const` each).
            out.insert("type".into(), "string".into());
            let mut values = Vec::new();
            for b in &converted {
                match b.get("enum") {
                    Some(Value::Array(v)) => values.extend(v.iter().cloned()),
                    _ => {
                        values.clear();
                        break;
                    }
                }
            }
            if values.is_empty() {
                out.remove("enum");
            } else {
                out.insert("enum".into(), Value::Array(values));
            }
            return Ok(());
        }
        if types.iter().all(|t| *t == "object") {
            let mut constraints = Vec::new();
            for b in converted {
                let mut constraint = Map::new();
                self.merge_object_branch(out, b, Some(&mut constraint), path)?;
                constraints.push(constraint);
            }
            // A branch with no constraint matches every object: the junctor says nothing
            // (anyOf) or could match twice (oneOf); leave it out.
            if constraints.iter().all(|c| !c.is_empty()) {
                out.insert(
                    junctor.into(),
                    Value::Array(constraints.into_iter().map(Value::Object).collect()),
                );
            }
            return Ok(());
        }
        let mut sorted = types.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted == ["integer", "string"] {
            out.insert(
                "anyOf".into(),
                json!([{"type": "integer"}, {"type": "string"}]),
            );
            out.insert("x-kubernetes-int-or-string".into(), true.into());
            return Ok(());
        }
        Err(self.error(
            path,
            format!(
                "an enum whose variants are of different kinds ({}); a structural schema gives \
                 a value one type: make every variant carry a struct (or none), or use \
                 #[serde(tag = \"...\")]",
                sorted.join(", ")
            ),
        ))
    }

    /// Puts a variant's (or flattened enum's) object schema `b` on `out`, and what tells it
    /// apart (its `required`, its tag values) in `constraint`.
    fn merge_object_branch(
        &self,
        out: &mut Map<String, Value>,
        mut b: Map<String, Value>,
        constraint: Option<&mut Map<String, Value>>,
        path: &str,
    ) -> Result<(), SchemaError> {
        out.insert("type".into(), "object".into());
        let own_required = b.remove("required");
        let mut tag_values = Map::new();
        if let Some(Value::Object(props)) = b.remove("properties") {
            let target = out
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(target) = target else {
                return Err(self.error(path, "properties is not an object"));
            };
            for (name, mut schema) in props {
                let values = schema.as_object_mut().and_then(|s| s.remove("enum"));
                match target.get_mut(&name) {
                    None => {
                        let mut merged = schema.clone();
                        if let (Some(values), Value::Object(m)) = (&values, &mut merged) {
                            m.insert("enum".into(), values.clone());
                        }
                        target.insert(name.clone(), merged);
                    }
                    Some(existing) => {
                        let existing_values =
                            existing.as_object_mut().and_then(|s| s.remove("enum"));
                        if without_descriptions(existing) != without_descriptions(&schema) {
                            return Err(self.error(
                                &child(path, &name),
                                "two variants of an enum (or two flattened types) give this \
                                 property different schemas; a structural schema has one",
                            ));
                        }
                        // The property allows the values of every variant, or any value if
                        // one variant does not restrict it.
                        if let (Some(Value::Array(mut a)), Some(Value::Array(more))) =
                            (existing_values, values.clone())
                        {
                            for v in more {
                                if !a.contains(&v) {
                                    a.push(v);
                                }
                            }
                            if let Value::Object(e) = existing {
                                e.insert("enum".into(), Value::Array(a));
                            }
                        }
                    }
                }
                if let Some(values) = values {
                    tag_values.insert(name, json!({"enum": values}));
                }
            }
        }
        if let Some(constraint) = constraint {
            if let Some(Value::Array(required)) = own_required
                && !required.is_empty()
            {
                constraint.insert("required".into(), Value::Array(required));
            }
            if !tag_values.is_empty() {
                constraint.insert("properties".into(), Value::Object(tag_values));
            }
            for j in ["oneOf", "anyOf"] {
                if let Some(v) = b.remove(j) {
                    constraint.insert(j.into(), v);
                }
            }
        } else {
            // allOf (flattened): every branch's requirements hold.
            if let Some(Value::Array(required)) = own_required {
                let list = out
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(list) = list {
                    for r in required {
                        if !list.contains(&r) {
                            list.push(r);
                        }
                    }
                }
            }
            let mut nested = Vec::new();
            for j in ["oneOf", "anyOf"] {
                if let Some(v) = b.remove(j) {
                    nested.push(json!({ j: v }));
                }
            }
            if !nested.is_empty() {
                let all = out
                    .entry("allOf")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let Value::Array(all) = all {
                    all.extend(nested);
                }
            }
        }
        if b.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
            out.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
        }
        Ok(())
    }

    /// A `not` schema as the value validation a junctor may hold: no types or annotations.
    fn value_validation(&self, v: &Value, path: &str) -> Result<Value, SchemaError> {
        let node = self.node(v, path)?;
        let mut out = Map::new();
        for (k, v) in node {
            if !matches!(
                k.as_str(),
                "type" | "description" | "nullable" | "default" | "additionalProperties"
            ) && !k.starts_with("x-kubernetes-")
            {
                out.insert(k, v);
            }
        }
        Ok(Value::Object(out))
    }
}

/// A default with its objects' `null` members left out: a `None` or a zero `Time` in a
/// `#[serde(default)]` struct means unset, which an absent member says too (kube-apiserver
/// v1.36 accepts such nulls and prunes the ones of non-nullable fields; a CRD without them
/// reads as what it does).
fn without_nulls(v: Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// `{"x-kubernetes-preserve-unknown-fields": true}`: any JSON value, kept as it is.
fn preserve_unknown() -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("x-kubernetes-preserve-unknown-fields".into(), true.into());
    m
}

/// A schema with every `description` annotation removed (not a property named so), to compare
/// two variants' properties.
fn without_descriptions(v: &Value) -> Value {
    strip_descriptions(v, false)
}

fn strip_descriptions(v: &Value, in_properties: bool) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| in_properties || *k != "description")
                .map(|(k, v)| {
                    (
                        k.clone(),
                        strip_descriptions(v, !in_properties && k == "properties"),
                    )
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| strip_descriptions(v, false)).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;
