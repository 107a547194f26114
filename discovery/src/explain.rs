//! A field of an OpenAPI v3 schema as `kubectl explain` reads it (kubectl's
//! `explain/v2` plaintext template): the field path is followed through properties, array
//! items, map values and `allOf` alternatives, resolving `$ref`s within the document; the
//! type is kubectl's guess (`integer`, `[]ContainerPort`, `map[string]string`, `Object`);
//! the description joins the field's and its referenced type's; the subfields are listed in
//! name order, and, explained recursively, their subfields under them.

use serde_json::Value;

/// One field of a resource, as `kubectl explain RESOURCE.FIELD` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExplainedField {
    /// The field's name; empty for the resource itself.
    pub name: String,
    /// kubectl's type for it (`integer`, `[]ContainerPort`, `map[string]string`, `Object`);
    /// empty for the resource itself.
    pub type_name: String,
    /// The allowed values, when the schema lists them.
    pub enum_values: Vec<Value>,
    /// Its description followed by the descriptions of what it refers to, each followed by a
    /// newline but the last (a description that ends in newlines of its own keeps them, as
    /// kubectl prints them).
    pub description: String,
    /// Its subfields, by name.
    pub fields: Vec<FieldSummary>,
}

/// One subfield in the `FIELDS:` list of `kubectl explain`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSummary {
    /// The name.
    pub name: String,
    /// kubectl's type for it.
    pub type_name: String,
    /// Whether the parent requires it.
    pub required: bool,
    /// Its own description (`<no description>` when it has none, as kubectl prints).
    pub description: String,
    /// Its allowed values, when its schema lists them.
    pub enum_values: Vec<Value>,
    /// Its own subfields, nested the same way, when explained recursively
    /// ([`ResourceSchema::explain_recursive`](crate::ResourceSchema::explain_recursive),
    /// `kubectl explain --recursive`); empty otherwise, and for a field whose type refers back
    /// to a type it is nested in (a cycle, as in a CRD's own schema).
    pub fields: Vec<FieldSummary>,
}

/// Go template truth: absent, null, false, 0, "" and empty lists and maps are false.
fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
    }
}

/// `additionalProperties` when it is a schema (not `true`/`false`).
fn map_values(schema: &Value) -> Option<&Value> {
    let ap = schema.get("additionalProperties")?;
    (ap.is_object() && truthy(Some(ap))).then_some(ap)
}

fn items(schema: &Value) -> Option<&Value> {
    let items = schema.get("items")?;
    truthy(Some(items)).then_some(items)
}

fn all_of(schema: &Value) -> &[Value] {
    schema
        .get("allOf")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn enum_values(schema: &Value) -> Vec<Value> {
    schema
        .get("enum")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn reference(schema: &Value) -> &str {
    schema.get("$ref").and_then(Value::as_str).unwrap_or("")
}

/// Resolves a local `$ref` (`#/components/schemas/X`) within `document`.
fn resolve<'a>(reference: &str, document: &'a Value) -> Option<&'a Value> {
    let fragment = reference.strip_prefix('#')?;
    let mut current = document;
    for key in fragment.split('/').filter(|k| !k.is_empty()) {
        current = current.get(key)?;
        if !current.is_object() {
            return None;
        }
    }
    Some(current)
}

/// kubectl's `typeGuess`.
pub(crate) fn type_guess(schema: &Value, document: &Value) -> String {
    if let Some(items) = items(schema) {
        return format!("[]{}", type_guess(items, document));
    }
    if let Some(values) = map_values(schema) {
        return format!("map[string]{}", type_guess(values, document));
    }
    let alternatives = all_of(schema);
    if alternatives.len() == 1 && !truthy(schema.get("properties")) {
        return type_guess(&alternatives[0], document);
    }
    let reference = reference(schema);
    if !reference.is_empty() {
        let target = resolve(reference, document);
        let target_type = target
            .and_then(|t| t.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("");
        if target_type.is_empty() || target_type == "object" {
            let name = reference.rsplit('/').next().unwrap_or("");
            let name = name.rsplit('.').next().unwrap_or("");
            return if name.is_empty() { "Object" } else { name }.to_owned();
        }
        return target_type.to_owned();
    }
    match schema.get("type").and_then(Value::as_str) {
        None | Some("") | Some("object") => "Object".to_owned(),
        Some(t) => t.to_owned(),
    }
}

/// kubectl's `description`: the schema's (or its target's) description, then those of its
/// `allOf` alternatives, array items and map values, each ended by a newline.
fn description(schema: &Value, document: &Value, out: &mut String) {
    let resolved = resolve(reference(schema), document).unwrap_or(schema);
    if let Some(text) = resolved.get("description").and_then(Value::as_str)
        && !text.is_empty()
    {
        out.push_str(text);
        out.push('\n');
    }
    for alternative in all_of(resolved) {
        description(alternative, document, out);
    }
    if let Some(items) = items(resolved) {
        description(items, document, out);
    }
    if let Some(values) = map_values(resolved) {
        description(values, document, out);
    }
}

/// kubectl's `fieldList`: the properties of the schema, of its `allOf` alternatives, array
/// items and map values, and, if `recursive`, each property's own list under it. `history`
/// holds the `$ref`s of the schemas this one is nested in (kubectl copies its history into
/// each branch, so siblings do not see each other's): a `$ref` among them is a cycle, skipped.
fn field_list<'a>(
    schema: &'a Value,
    document: &'a Value,
    history: &mut Vec<&'a str>,
    recursive: bool,
    out: &mut Vec<FieldSummary>,
) {
    let reference = reference(schema);
    if !reference.is_empty() && history.contains(&reference) {
        return;
    }
    history.push(reference);
    let resolved = resolve(reference, document).unwrap_or(schema);
    let required: Vec<&str> = resolved
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(properties) = resolved.get("properties").and_then(Value::as_object) {
        let mut names: Vec<&String> = properties.keys().collect();
        names.sort();
        for name in names {
            let field = &properties[name];
            let mut fields = Vec::new();
            if recursive {
                field_list(field, document, history, true, &mut fields);
            }
            out.push(FieldSummary {
                name: name.clone(),
                type_name: type_guess(field, document),
                required: required.contains(&name.as_str()),
                description: field
                    .get("description")
                    .and_then(Value::as_str)
                    .filter(|d| !d.is_empty())
                    .unwrap_or("<no description>")
                    .to_owned(),
                enum_values: enum_values(field),
                fields,
            });
        }
    }
    for alternative in all_of(resolved) {
        field_list(alternative, document, history, recursive, out);
    }
    if let Some(items) = items(resolved) {
        field_list(items, document, history, recursive, out);
    }
    if let Some(values) = map_values(resolved) {
        field_list(values, document, history, recursive, out);
    }
    history.pop();
}

/// kubectl's `output`: follows `path` from `schema`; `None` when the path leads nowhere.
fn output<'a>(
    schema: &'a Value,
    document: &'a Value,
    history: &mut Vec<&'a str>,
    path: &[&str],
    recursive: bool,
) -> Option<ExplainedField> {
    let reference = reference(schema);
    let resolved = resolve(reference, document).unwrap_or(schema);
    let Some((first, rest)) = path.split_first() else {
        let mut text = String::new();
        description(resolved, document, &mut text);
        let mut fields = Vec::new();
        field_list(resolved, document, &mut Vec::new(), recursive, &mut fields);
        return Some(ExplainedField {
            // Only the newline written after the last description: one of its own stays,
            // as kubectl prints it.
            description: text.strip_suffix('\n').unwrap_or(&text).to_owned(),
            fields,
            ..ExplainedField::default()
        });
    };
    if !reference.is_empty() && history.contains(&reference) {
        return None; // a cycle
    }
    history.push(reference);
    if let Some(sub) = resolved.get("properties").and_then(|p| p.get(*first)) {
        let mut found = output(sub, document, &mut Vec::new(), rest, recursive)?;
        if rest.is_empty() {
            found.name = (*first).to_owned();
            found.type_name = type_guess(sub, document);
            found.enum_values = enum_values(sub);
        }
        return Some(found);
    }
    if let Some(items) = items(resolved) {
        return output(items, document, history, path, recursive);
    }
    if let Some(values) = map_values(resolved) {
        return output(values, document, history, path, recursive);
    }
    all_of(resolved).iter().find_map(|alternative| {
        output(alternative, document, &mut history.clone(), path, recursive)
    })
}

/// The field at `path` under `schema` (a schema of `document`), or `None` when there is none;
/// with its subfields' subfields if `recursive`.
pub(crate) fn explain(
    document: &Value,
    schema: &Value,
    path: &[&str],
    recursive: bool,
) -> Option<ExplainedField> {
    output(schema, document, &mut Vec::new(), path, recursive)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"components": {"schemas": {
            "io.k8s.api.apps.v1.Deployment": {"description": "Deployment enables updates.",
                "type": "object",
                "properties": {
                    "spec": {"description": "Desired behavior.", "default": {},
                        "allOf": [{"$ref": "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"}]},
                }},
            "io.k8s.api.apps.v1.DeploymentSpec": {"description": "DeploymentSpec is the spec.",
                "type": "object", "required": ["selector"],
                "properties": {
                    "replicas": {"description": "Number of desired pods.", "type": "integer",
                        "format": "int32"},
                    "selector": {"description": "Label selector.",
                        "allOf": [{"$ref": "#/components/schemas/io.k8s.LabelSelector"}]},
                    "strategy": {"type": "string", "enum": ["Recreate", "RollingUpdate"]},
                    "ports": {"type": "array", "description": "Ports.",
                        "items": {"default": {}, "allOf": [{"$ref": "#/components/schemas/io.k8s.ContainerPort"}]}},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "quantity": {"$ref": "#/components/schemas/io.k8s.Quantity"},
                }},
            "io.k8s.LabelSelector": {"description": "A label selector.", "type": "object",
                "properties": {"matchLabels": {"type": "object",
                    "additionalProperties": {"type": "string"}}}},
            "io.k8s.ContainerPort": {"description": "A port.", "type": "object",
                "required": ["containerPort"],
                "properties": {"containerPort": {"type": "integer", "description": "Number."}}},
            "io.k8s.Quantity": {"description": "A quantity.", "type": "string"},
        }}})
    }

    fn explain_path(path: &[&str]) -> Option<ExplainedField> {
        let doc = doc();
        let schema = doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"].clone();
        explain(&doc, &schema, path, false)
    }

    #[test]
    fn types_are_guessed_as_kubectl_does() {
        let spec = explain_path(&["spec"]).unwrap();
        assert_eq!(spec.type_name, "DeploymentSpec");
        assert_eq!(
            spec.description,
            "Desired behavior.\nDeploymentSpec is the spec."
        );
        let types: Vec<(&str, &str, bool)> = spec
            .fields
            .iter()
            .map(|f| (f.name.as_str(), f.type_name.as_str(), f.required))
            .collect();
        assert_eq!(
            types,
            [
                ("labels", "map[string]string", false),
                ("ports", "[]ContainerPort", false),
                ("quantity", "string", false),
                ("replicas", "integer", false),
                ("selector", "LabelSelector", true),
                ("strategy", "string", false),
            ]
        );
        assert_eq!(spec.fields[0].description, "<no description>");
    }

    /// kubectl's `--recursive` list: each property's own under it, through refs, arrays and
    /// maps, stopping at a `$ref` the field is nested in; siblings do not share that history.
    #[test]
    fn recursive_lists_nest_and_stop_at_cycles() {
        let doc = json!({"components": {"schemas": {
            "io.k8s.Props": {"type": "object", "properties": {
                "not": {"$ref": "#/components/schemas/io.k8s.Props"},
                "items": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/io.k8s.Props"}]}},
                "port": {"allOf": [{"$ref": "#/components/schemas/io.k8s.Port"}]},
                "other": {"allOf": [{"$ref": "#/components/schemas/io.k8s.Port"}]},
            }},
            "io.k8s.Port": {"type": "object", "required": ["number"],
                "properties": {"number": {"type": "integer"}}},
            "io.k8s.Root": {"type": "object", "properties": {
                "schema": {"$ref": "#/components/schemas/io.k8s.Props"}}},
        }}});
        let root = doc["components"]["schemas"]["io.k8s.Root"].clone();
        fn tree(fields: &[FieldSummary]) -> Vec<String> {
            fields
                .iter()
                .flat_map(|f| {
                    std::iter::once(f.name.clone())
                        .chain(tree(&f.fields).into_iter().map(|s| format!("  {s}")))
                })
                .collect()
        }
        let explained = explain(&doc, &root, &[], true).unwrap();
        assert_eq!(
            tree(&explained.fields),
            [
                "schema",
                // Props' own fields; `items` and `not` refer back to Props: not expanded.
                "  items",
                "  not",
                // Both refer to Port, each expanded: siblings do not share their history.
                "  other",
                "    number",
                "  port",
                "    number",
            ]
        );
        // Not recursive: no subfields.
        let flat = explain(&doc, &root, &[], false).unwrap();
        assert!(flat.fields.iter().all(|f| f.fields.is_empty()));
    }

    /// kubectl writes each description and a newline after it, and prints a description's own
    /// trailing newlines: only the one kubectl adds after the last is left out.
    #[test]
    fn a_description_keeps_its_own_trailing_newlines() {
        let doc = json!({"components": {"schemas": {
            "io.k8s.Root": {"type": "object", "description": "Root.\n\n", "properties": {
                "leaf": {"type": "string", "description": "Leaf.\n"},
                "blank": {"type": "string", "description": "\n"},
            }},
        }}});
        let root = doc["components"]["schemas"]["io.k8s.Root"].clone();
        assert_eq!(
            explain(&doc, &root, &[], false).unwrap().description,
            "Root.\n\n"
        );
        assert_eq!(
            explain(&doc, &root, &["leaf"], false).unwrap().description,
            "Leaf.\n"
        );
        assert_eq!(
            explain(&doc, &root, &["blank"], true).unwrap().description,
            "\n"
        );
    }

    #[test]
    fn paths_go_through_refs_arrays_and_maps() {
        let replicas = explain_path(&["spec", "replicas"]).unwrap();
        assert_eq!(
            (replicas.name.as_str(), replicas.type_name.as_str()),
            ("replicas", "integer")
        );
        assert_eq!(replicas.description, "Number of desired pods.");
        assert!(replicas.fields.is_empty());
        let port = explain_path(&["spec", "ports", "containerPort"]).unwrap();
        assert_eq!(port.type_name, "integer");
        let ports = explain_path(&["spec", "ports"]).unwrap();
        assert_eq!(ports.description, "Ports.\nA port.");
        assert_eq!(ports.fields[0].name, "containerPort");
        assert!(ports.fields[0].required);
        let strategy = explain_path(&["spec", "strategy"]).unwrap();
        assert_eq!(
            strategy.enum_values,
            [json!("Recreate"), json!("RollingUpdate")]
        );
        assert!(explain_path(&["spec", "nope"]).is_none());
        let kind = explain_path(&[]).unwrap();
        assert_eq!(kind.description, "Deployment enables updates.");
        assert_eq!(kind.fields[0].name, "spec");
    }
}
