//! `metadata.managedFields` as the fake keeps them: one entry per field manager, operation
//! and subresource, in the server's `FieldsV1` format.
//!
//! The fake does not run structured-merge-diff: an `Apply` entry owns exactly the fields of
//! the applied configuration, an `Update` entry the fields its write changed. The kind's
//! [`Schema`] says how its lists are owned, as the server's does: a `listType=map` list
//! (containers, env, ports, a custom resource's conditions) item by item under its keys
//! (`k:{"name":"app"}`), with the item's own fields below it, a `listType=set` list (and
//! `metadata.finalizers`) item by item (`v:"<item>"`), any other list whole.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::schema::Schema;

/// The `FieldsV1` set of the fields in `object`: `{"f:spec":{"f:replicas":{}}}`, each list
/// owned as `schema` (the kind's) says; identity fields are left out as the server leaves
/// them out, and so are empty keyed lists, which hold no path.
pub(crate) fn fields_v1(object: &Value, schema: Schema<'_>) -> Value {
    let Some(map) = object.as_object() else {
        return json!({});
    };
    let mut out = Map::new();
    for (key, value) in map {
        if key == "apiVersion" || key == "kind" {
            continue;
        }
        if key == "metadata" {
            let mut meta = Map::new();
            if let Some(m) = value.as_object() {
                for (k, v) in m {
                    if matches!(
                        k.as_str(),
                        "labels"
                            | "annotations"
                            | "finalizers"
                            | "ownerReferences"
                            | "generateName"
                    ) && let Some(set) = leaf_set(v, Schema::object_meta().member(k), false)
                    {
                        meta.insert(format!("f:{k}"), set);
                    }
                }
            }
            if !meta.is_empty() {
                out.insert("f:metadata".into(), Value::Object(meta));
            }
            continue;
        }
        if let Some(set) = leaf_set(value, schema.member(key), !schema.declares(key)) {
            out.insert(format!("f:{key}"), set);
        }
    }
    Value::Object(out)
}

/// The set of one field's value, as its schema says it is owned: the field itself (`{}`)
/// for a scalar, an atomic list or map (a label selector), or an empty map; the fields
/// below it for a map or struct, and the object itself too (`"."`) when it is the value of
/// a field its parent's schema does not declare (`member`: a map's value, an unknown
/// field), as structured-merge-diff holds them; each item under its key for a keyed list.
/// `None` when the value holds no path: an empty keyed list, or an object (not a member)
/// of nothing but those.
fn leaf_set(value: &Value, schema: Schema<'_>, member: bool) -> Option<Value> {
    match value {
        Value::Object(m) if !m.is_empty() && !schema.is_atomic_map() => {
            let mut fields: Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| {
                    let set = leaf_set(v, schema.member(k), !schema.declares(k))?;
                    Some((format!("f:{k}"), set))
                })
                .collect();
            if member && !fields.is_empty() {
                fields.insert(".".into(), json!({}));
            }
            Some(Value::Object(fields))
                .filter(|f| member || f.as_object().is_some_and(|f| !f.is_empty()))
        }
        Value::Array(items) => match schema.list_map_keys() {
            Some(_) if items.is_empty() => None,
            None if items.is_empty() && schema.is_set() => None,
            Some(keys) => Some(map_items(items, schema, &keys).unwrap_or_else(|| json!({}))),
            None if schema.is_set() => Some(set_items(value)),
            None => Some(json!({})),
        },
        _ => Some(json!({})),
    }
}

/// The set of a `listType=map` list's items, each owned under its `keys` as the server
/// writes it: `{"k:{\"name\":\"app\"}":{".":{},"f:name":{},"f:image":{}}}`. `None` (the
/// list owned whole) when an item is not an object or has none of its keys.
fn map_items(items: &[Value], list: Schema<'_>, keys: &[&str]) -> Option<Value> {
    let item_schema = list.items();
    let mut out = Map::new();
    for item in items {
        let key = item_key(item, keys, item_schema)?;
        let mut set = Map::new();
        set.insert(".".into(), json!({}));
        for (k, v) in item.as_object()? {
            if let Some(field) = leaf_set(v, item_schema.member(k), !item_schema.declares(k)) {
                set.insert(format!("f:{k}"), field);
            }
        }
        out.insert(key, Value::Object(set));
    }
    Some(Value::Object(out))
}

/// The value of the key field `name` of a list-map item, whose schema is `items`: the
/// item's, else the schema's default for it, as structured-merge-diff fills a missing key
/// field.
fn key_field<'a>(
    item: &'a Map<String, Value>,
    name: &str,
    items: Schema<'_>,
) -> Option<std::borrow::Cow<'a, Value>> {
    match item.get(name) {
        Some(v) => Some(std::borrow::Cow::Borrowed(v)),
        None => items.key_default(name).map(std::borrow::Cow::Owned),
    }
}

/// The path element of a list-map item (of schema `items`): `k:` and the JSON of its key
/// fields, in name order, as the server writes it (`k:{"containerPort":80,"protocol":"TCP"}`),
/// a missing key field as its default. Other key fields the item does not set are left
/// out; `None` when that leaves none.
pub(crate) fn item_key(item: &Value, keys: &[&str], items: Schema<'_>) -> Option<String> {
    let object = item.as_object()?;
    let fields: BTreeMap<&str, std::borrow::Cow<'_, Value>> = keys
        .iter()
        .filter_map(|k| key_field(object, k, items).map(|v| (*k, v)))
        .collect();
    if fields.is_empty() {
        return None;
    }
    serde_json::to_string(&fields)
        .ok()
        .map(|k| format!("k:{k}"))
}

/// Whether `item` is the list-map item that the path element `key` (`k:{...}`) names: each
/// of the key's fields is the item's (or, missing, its default).
fn is_item(item: &Value, key: &str) -> bool {
    let (Some(Ok(Value::Object(fields))), Some(object)) = (
        key.strip_prefix("k:").map(serde_json::from_str::<Value>),
        item.as_object(),
    ) else {
        return false;
    };
    !fields.is_empty()
        && fields.iter().all(|(k, v)| {
            // Stored items carry their defaults, but a built-in's stored as written.
            let mine = object
                .get(k)
                .cloned()
                .or_else(|| crate::schema::built_in_key_default(k));
            mine.is_some_and(|mine| mine == *v)
        })
}

/// The set of a set list's items, owned one by one, as the server writes it:
/// `{"v:\"a\"":{}}`.
fn set_items(list: &Value) -> Value {
    let mut out = Map::new();
    for item in list.as_array().into_iter().flatten() {
        out.insert(format!("v:{item}"), json!({}));
    }
    Value::Object(out)
}

/// The leaf paths of a `FieldsV1` set (`{"f:data":{"f:a":{}}}` has `data.a`); an item of a
/// set list is a last element `v:<item>` (`metadata.finalizers.v:"a"`), and an item of a
/// list-map an element `k:{...}`, a path of its own (the item) besides its fields' paths.
fn leaf_paths(set: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    let Some(map) = set.as_object() else {
        return;
    };
    let children: Vec<(&String, &Value)> = map
        .iter()
        .filter(|(k, _)| k.starts_with("f:") || k.starts_with("v:") || k.starts_with("k:"))
        .collect();
    // A leaf, or a node that is a member itself (`"."`: a list-map item, a map's value).
    if !prefix.is_empty() && (children.is_empty() || map.contains_key(".")) {
        out.push(prefix.clone());
    }
    for (key, value) in children {
        prefix.push(match key.strip_prefix("f:") {
            Some(name) => name.to_string(),
            None => key.clone(),
        });
        leaf_paths(value, prefix, out);
        prefix.pop();
    }
}

/// Whether the set holds `path` itself, as structured-merge-diff's sets hold paths: a leaf
/// (`{}`: a scalar, an atomic list or map, an empty map) or a node marked as a member
/// (`"."`, as a list-map item is). A node that holds only fields below it does not hold
/// itself, and a leaf holds nothing below it: an atomic value's paths are its own, and an
/// empty map's owner does not own the fields another manager adds to it.
fn owns(set: &Value, path: &[String]) -> bool {
    set_node(set, path)
        .and_then(Value::as_object)
        .is_some_and(|node| node.is_empty() || node.contains_key("."))
}

/// The fields `manager` applied before and no longer applies, that no other manager owns:
/// server-side apply removes them from the object (a list-map item, such as a container,
/// whole). `schema` is the kind's.
pub(crate) fn removed_by_apply(
    object: &Value,
    manager: &str,
    subresource: &str,
    applied: &Value,
    schema: Schema<'_>,
) -> Vec<Vec<String>> {
    let Some(entries) = object["metadata"]["managedFields"].as_array() else {
        return Vec::new();
    };
    let is_mine = |e: &Value| is_apply_entry(e, manager, subresource);
    let Some(before) = entries.iter().find(|e| is_mine(e)) else {
        return Vec::new();
    };
    let now = fields_v1(applied, schema);
    let others: Vec<&Value> = entries
        .iter()
        .filter(|e| !is_mine(e))
        .map(|e| &e["fieldsV1"])
        .collect();
    let mut paths = Vec::new();
    dropped_fields(
        &before["fieldsV1"],
        &now,
        &others,
        &mut Vec::new(),
        &mut paths,
    );
    let mut leaves = Vec::new();
    leaf_paths(&before["fieldsV1"], &mut Vec::new(), &mut leaves);
    // A leaf the configuration still names stays: a map applied as `{}` before and with
    // entries now is kept, with them.
    paths.extend(
        leaves
            .into_iter()
            .filter(|p| set_node(&now, p).is_none())
            .filter(|p| !others.iter().any(|set| owns(set, p))),
    );
    paths
}

/// The fields below the top level that `before` holds something of, and neither `now` nor
/// any of `others` holds anything of: they go whole, with what nobody owns below them (the
/// defaults filled in them), as structured-merge-diff counts a named field its manager
/// applied as a member of what it removes.
fn dropped_fields(
    before: &Value,
    now: &Value,
    others: &[&Value],
    prefix: &mut Vec<String>,
    out: &mut Vec<Vec<String>>,
) {
    let Some(map) = before.as_object() else {
        return;
    };
    for (key, child) in map {
        let part = match key.strip_prefix("f:") {
            Some(name) => name.to_string(),
            None if key.starts_with("k:") || key.starts_with("v:") => key.clone(),
            None => continue,
        };
        prefix.push(part);
        let named = key.starts_with("f:");
        let in_now = set_node(now, prefix).is_some();
        if named
            && prefix.len() >= 2
            && !in_now
            && others.iter().all(|set| set_node(set, prefix).is_none())
        {
            out.push(prefix.clone());
        } else if named || in_now {
            // An item no longer applied goes as an item (see `leaf_paths`), not field by
            // field.
            dropped_fields(child, now, others, prefix, out);
        }
        prefix.pop();
    }
}

/// The paths whose values differ between two versions of an object, among the fields
/// managers can own: maps and structs compared key by key, a list-map's items by their keys
/// (an item added or removed is its own path, `k:{...}`), a set's items one by one
/// (`v:<item>`), anything else whole. `schema` is the kind's.
pub(crate) fn changed_paths(old: &Value, new: &Value, schema: Schema<'_>) -> Vec<Vec<String>> {
    fn walk_map(
        a: &Map<String, Value>,
        b: &Map<String, Value>,
        schema: Schema<'_>,
        prefix: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        for k in keys {
            let (x, y) = (
                a.get(k).unwrap_or(&Value::Null),
                b.get(k).unwrap_or(&Value::Null),
            );
            if x != y {
                prefix.push(k.clone());
                if prefix.len() == 1 && k == "metadata" {
                    // Every kind's metadata is ObjectMeta, whatever `table` knows.
                    match (x, y) {
                        (Value::Object(x), Value::Object(y)) => {
                            walk_map(x, y, Schema::object_meta(), prefix, out);
                        }
                        _ => out.push(prefix.clone()),
                    }
                } else {
                    walk(x, y, schema.member(k), prefix, out);
                }
                prefix.pop();
            }
        }
    }
    fn walk(
        old: &Value,
        new: &Value,
        schema: Schema<'_>,
        prefix: &mut Vec<String>,
        out: &mut Vec<Vec<String>>,
    ) {
        match (old, new) {
            (Value::Object(a), Value::Object(b)) if !schema.is_atomic_map() => {
                walk_map(a, b, schema, prefix, out);
            }
            (Value::Array(a), Value::Array(b)) => match schema.list_map_keys() {
                Some(keys) => {
                    let keyed = |items: &[Value]| -> Option<BTreeMap<String, Value>> {
                        items
                            .iter()
                            .map(|i| Some((item_key(i, &keys, schema.items())?, i.clone())))
                            .collect()
                    };
                    let (Some(a), Some(b)) = (keyed(a), keyed(b)) else {
                        out.push(prefix.clone());
                        return;
                    };
                    let keys: std::collections::BTreeSet<&String> =
                        a.keys().chain(b.keys()).collect();
                    for k in keys {
                        prefix.push(k.clone());
                        match (a.get(k), b.get(k)) {
                            (Some(Value::Object(x)), Some(Value::Object(y))) => {
                                walk_map(x, y, schema.items(), prefix, out);
                            }
                            (x, y) if x != y => out.push(prefix.clone()),
                            _ => {}
                        }
                        prefix.pop();
                    }
                }
                None if schema.is_set() => {
                    for item in a
                        .iter()
                        .filter(|i| !b.contains(i))
                        .chain(b.iter().filter(|i| !a.contains(i)))
                    {
                        prefix.push(format!("v:{item}"));
                        out.push(prefix.clone());
                        prefix.pop();
                    }
                }
                _ => out.push(prefix.clone()),
            },
            _ => out.push(prefix.clone()),
        }
    }
    let (old, new) = (fields_v1_source(old), fields_v1_source(new));
    let mut out = Vec::new();
    match (old.as_object(), new.as_object()) {
        (Some(a), Some(b)) => walk_map(a, b, schema, &mut Vec::new(), &mut out),
        _ => out.push(Vec::new()),
    }
    out
}

/// Records that `manager` changed the fields at `changed` (from [`changed_paths`]) of
/// `object` with an `Update` through `subresource`, as the server records an update: its
/// entry keeps what it owned and gains the fields it set (their sets as [`fields_v1`] gives
/// them), and loses those it removed; an entry left owning nothing goes.
pub(crate) fn record_update(
    (object, old): (&mut Value, &Value),
    (manager, subresource): (&str, &str),
    api_version: &str,
    changed: &[Vec<String>],
    schema: Schema<'_>,
    time: &str,
) {
    if manager.is_empty() {
        return;
    }
    let mut set = object["metadata"]["managedFields"]
        .as_array()
        .and_then(|entries| {
            entries
                .iter()
                .find(|e| is_entry(e, (manager, "Update", subresource)))
        })
        .map_or_else(|| json!({}), |e| e["fieldsV1"].clone());
    let full = fields_v1(object, schema);
    for path in changed {
        match set_node(&full, path) {
            Some(node) if value_at(object, path).is_some() => {
                if value_at(old, path).is_none() && marks_created(schema, path) {
                    let mut node = node.clone();
                    mark_created(&mut node);
                    graft(&mut set, path, &node);
                } else {
                    graft(&mut set, path, node);
                }
            }
            _ => disown(&mut set, path),
        }
    }
    store_entry(
        object,
        (manager, "Update", subresource),
        api_version,
        set,
        time,
    );
}

/// Marks every node of a set that holds fields below it as a member itself (`"."`), as the
/// server's entry for an update marks each map, list and object the update created.
fn mark_created(node: &mut Value) {
    if let Some(map) = node.as_object_mut() {
        let holds_fields = map.keys().any(|k| k != ".");
        for (k, child) in map.iter_mut() {
            if k != "." {
                mark_created(child);
            }
        }
        if holds_fields {
            map.insert(".".into(), json!({}));
        }
    }
}

/// Whether an update's entry marks what it creates at `path` (see [`mark_created`]): in a
/// custom resource, always; in a built-in, only ObjectMeta's maps, since the server marks a
/// created map or optional (pointer) struct but not a struct Go always holds, which the
/// fake cannot tell apart.
fn marks_created(schema: Schema<'_>, path: &[String]) -> bool {
    schema.is_custom()
        || matches!(path, [m, f, ..] if m == "metadata" && (f == "labels" || f == "annotations"))
}

/// Adds the set `node` at `path` to `set`, merged with what is there.
fn graft(set: &mut Value, path: &[String], node: &Value) {
    fn union(into: &mut Value, from: &Value) {
        if let (Some(a), Some(b)) = (into.as_object_mut(), from.as_object()) {
            for (k, v) in b {
                union(a.entry(k.clone()).or_insert_with(|| json!({})), v);
            }
        }
    }
    let mut current = set;
    for part in path {
        let Some(map) = current.as_object_mut() else {
            return;
        };
        current = map.entry(set_key(part)).or_insert_with(|| json!({}));
    }
    union(current, node);
}

/// The part of an object managers can own (what [`fields_v1`] reads), as a value.
fn fields_v1_source(object: &Value) -> Value {
    let mut out = object.clone();
    if let Some(m) = out.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.retain(|k, _| {
                matches!(
                    k.as_str(),
                    "labels" | "annotations" | "finalizers" | "ownerReferences" | "generateName"
                )
            });
        }
    }
    out
}

/// The key of a path element in a `FieldsV1` set: `f:<name>` for a field, the element itself
/// for an item (`k:{...}`, `v:<item>`).
fn set_key(part: &str) -> String {
    if part.starts_with("k:") || part.starts_with("v:") {
        part.to_string()
    } else {
        format!("f:{part}")
    }
}

/// Removes `path` from a `FieldsV1` set, and the nodes left owning nothing above it.
fn disown(set: &mut Value, path: &[String]) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let key = set_key(first);
    let Some(map) = set.as_object_mut() else {
        return;
    };
    if rest.is_empty() {
        map.remove(&key);
    } else if let Some(child) = map.get_mut(&key) {
        disown(child, rest);
        if child
            .as_object()
            .is_some_and(|c| c.keys().all(|k| k == "."))
        {
            map.remove(&key);
        }
    }
}

/// Takes the fields at `paths` away from every entry `keep` does not pick, and drops the
/// entries left owning nothing.
fn take_from_others(object: &mut Value, keep: impl Fn(&Value) -> bool, paths: &[Vec<String>]) {
    let Some(entries) = object["metadata"]
        .get_mut("managedFields")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for entry in entries.iter_mut().filter(|e| !keep(e)) {
        for path in paths {
            disown(&mut entry["fieldsV1"], path);
        }
    }
    entries.retain(|e| e["fieldsV1"].as_object().is_some_and(|m| !m.is_empty()));
}

/// Takes the fields at `paths` away from every entry but `manager`'s `Update` one: a manager
/// that changes a field becomes its only owner, as on the server. Entries left owning
/// nothing are dropped.
pub(crate) fn take_ownership(object: &mut Value, manager: &str, paths: &[Vec<String>]) {
    take_from_others(
        object,
        |e| e["manager"] == manager && e["operation"] == "Update",
        paths,
    );
}

/// A field an apply sets to another value than the object holds, which another manager
/// owns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Conflict {
    /// The owner as the server names it: `"m"`, `"m" with subresource "status"`, and for an
    /// `Update` entry `"m" using v1`.
    pub(crate) owner: String,
    /// The field, as a path of [`leaf_paths`].
    pub(crate) path: Vec<String>,
}

/// Whether `entry` is the entry of `manager`'s `operation` through `subresource` (`""` for
/// the main resource): the server keeps one per such triple.
fn is_entry(entry: &Value, (manager, operation, subresource): (&str, &str, &str)) -> bool {
    entry["manager"] == manager
        && entry["operation"] == operation
        && entry["subresource"].as_str().unwrap_or("") == subresource
}

/// Whether `entry` is `manager`'s `Apply` entry through `subresource`.
fn is_apply_entry(entry: &Value, manager: &str, subresource: &str) -> bool {
    is_entry(entry, (manager, "Apply", subresource))
}

/// The node at a path of [`leaf_paths`] in a `FieldsV1` set.
fn set_node<'a>(set: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(set, |node, part| node.get(set_key(part)))
}

/// The conflicts of `manager` applying `applied` through `subresource` to `object`, which
/// the apply turns into `merged`, as structured-merge-diff finds them: each field the
/// configuration sets (not a list-map or set item as such) whose value the apply changes,
/// for every other entry that owns it. Sorted by owner, then path.
pub(crate) fn apply_conflicts(
    object: &Value,
    manager: &str,
    subresource: &str,
    (applied, merged): (&Value, &Value),
    schema: Schema<'_>,
) -> Vec<Conflict> {
    let Some(entries) = object["metadata"]["managedFields"].as_array() else {
        return Vec::new();
    };
    let now = fields_v1(applied, schema);
    let mut paths = Vec::new();
    leaf_paths(&now, &mut Vec::new(), &mut paths);
    let mut conflicts = Vec::new();
    for path in paths {
        let item = path
            .last()
            .is_some_and(|p| p.starts_with("k:") || p.starts_with("v:"));
        // An item, or an object held as a member, is not a value that conflicts: its fields
        // are.
        let holds_fields = set_node(&now, &path)
            .and_then(Value::as_object)
            .is_some_and(|n| n.keys().any(|k| k != "."));
        if item || holds_fields {
            continue;
        }
        let (Some(old), Some(new)) = (value_at(object, &path), value_at(merged, &path)) else {
            continue;
        };
        if old == new {
            continue;
        }
        for entry in entries {
            if !is_apply_entry(entry, manager, subresource) && owns(&entry["fieldsV1"], &path) {
                conflicts.push(Conflict {
                    owner: owner_name(entry),
                    path: path.clone(),
                });
            }
        }
    }
    conflicts.sort_by_cached_key(|c| (c.owner.clone(), path_string(&c.path)));
    conflicts
}

/// Gives `manager`'s `Apply` entry through `subresource` sole ownership of the conflicting
/// fields (an apply with `force`): the other entries lose them, and those left owning
/// nothing go.
pub(crate) fn force_ownership(
    object: &mut Value,
    manager: &str,
    subresource: &str,
    conflicts: &[Conflict],
) {
    let paths: Vec<Vec<String>> = conflicts.iter().map(|c| c.path.clone()).collect();
    take_from_others(object, |e| is_apply_entry(e, manager, subresource), &paths);
}

/// The value at a path of [`leaf_paths`] in an object: through fields, list-map items by
/// their keys, and set items.
fn value_at<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(object, |current, part| {
        if part.starts_with("k:") {
            current.as_array()?.iter().find(|item| is_item(item, part))
        } else if let Some(item) = part.strip_prefix("v:") {
            let item: Value = serde_json::from_str(item).ok()?;
            current.as_array()?.iter().find(|x| **x == item)
        } else {
            current.get(part)
        }
    })
}

/// An entry's manager as the server names it in a conflict.
fn owner_name(entry: &Value) -> String {
    let mut name = format!("{:?}", entry["manager"].as_str().unwrap_or(""));
    if let Some(sub) = entry["subresource"].as_str().filter(|s| !s.is_empty()) {
        name.push_str(&format!(" with subresource {sub:?}"));
    }
    if entry["operation"] == "Update" {
        name.push_str(&format!(
            " using {}",
            entry["apiVersion"].as_str().unwrap_or("")
        ));
    }
    name
}

/// A path as the server prints it: `.spec.template.spec.containers[name="app"].image`, a set
/// item `[="a"]`.
pub(crate) fn path_string(path: &[String]) -> String {
    let mut out = String::new();
    for part in path {
        if let Some(key) = part.strip_prefix("k:") {
            let fields: Vec<String> = serde_json::from_str::<Map<String, Value>>(key)
                .map(|m| m.iter().map(|(k, v)| format!("{k}={v}")).collect())
                .unwrap_or_default();
            out.push_str(&format!("[{}]", fields.join(",")));
        } else if let Some(item) = part.strip_prefix("v:") {
            out.push_str(&format!("[={item}]"));
        } else if let Some(index) = part.strip_prefix("i:") {
            // An atomic list's item, by index (only in the faults of a configuration).
            out.push_str(&format!("[{index}]"));
        } else {
            out.push('.');
            out.push_str(part);
        }
    }
    out
}

/// Removes the field at `path` as server-side apply removes a field its manager no longer
/// applies: with the maps and lists above it that this leaves empty, up to the nearest
/// list item (structured-merge-diff makes an emptied one `null`, which the server drops).
/// With `config` (the configuration applied, for a custom resource), an emptied map that
/// the configuration holds (as `{}`) becomes `null` instead, and stops the walk up:
/// structured-merge-diff keeps the field the configuration names, emptied, as `null`.
pub(crate) fn remove_applied_field(object: &mut Value, path: &[String], config: Option<&Value>) {
    remove_path(object, path);
    for end in (1..path.len()).rev() {
        let parent = &path[..end];
        if parent
            .last()
            .is_some_and(|p| p.starts_with("k:") || p.starts_with("v:"))
        {
            break;
        }
        let emptied = value_at(object, parent).is_some_and(|v| match v {
            Value::Array(items) => items.is_empty(),
            Value::Object(fields) => fields.is_empty(),
            _ => false,
        });
        if !emptied {
            break;
        }
        let named = config
            .and_then(|c| value_at(c, parent))
            .is_some_and(Value::is_object);
        if named && value_at(object, parent).is_some_and(Value::is_object) {
            set_path(object, parent, Value::Null);
            break;
        }
        remove_path(object, parent);
    }
}

/// Sets the field at `path` to `value`, if it is there.
fn set_path(object: &mut Value, path: &[String], value: Value) {
    if let Some(field) = at_mut(object, path) {
        *field = value;
    }
}

/// The field at `path` (a list-map item named `k:{...}`), to change.
fn at_mut<'a>(object: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(object, |current, part| {
        if part.starts_with("k:") {
            current
                .as_array_mut()?
                .iter_mut()
                .find(|item| is_item(item, part))
        } else {
            current.get_mut(part)
        }
    })
}

/// Removes the field at `path` from `object`: a list-map item named `k:{...}`, whole.
pub(crate) fn remove_path(object: &mut Value, path: &[String]) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let Some(current) = at_mut(object, parents) else {
        return;
    };
    if last.starts_with("k:") {
        if let Some(list) = current.as_array_mut() {
            list.retain(|item| !is_item(item, last));
        }
    } else if let Some(item) = last.strip_prefix("v:") {
        // An item of a set list.
        if let (Ok(item), Some(list)) =
            (serde_json::from_str::<Value>(item), current.as_array_mut())
        {
            list.retain(|x| *x != item);
        }
    } else if let Some(map) = current.as_object_mut() {
        map.remove(last);
    }
}

/// Records that `manager` wrote `written` with `operation` (`Apply` or `Update`) through
/// `subresource` (`""` for the main resource): replaces that manager's entry, or adds one.
/// `schema` (the kind's) says how its lists are owned.
pub(crate) fn record(
    object: &mut Value,
    (manager, operation): (&str, &str),
    subresource: &str,
    api_version: &str,
    written: &Value,
    schema: Schema<'_>,
    time: &str,
) {
    if manager.is_empty() {
        return;
    }
    let mut set = fields_v1(written, schema);
    if operation == "Update"
        && let Some(fields) = set.as_object_mut()
    {
        // A create: every field is one the update created.
        for (key, node) in fields.iter_mut() {
            if key == "f:metadata" {
                for meta_map in ["f:labels", "f:annotations"] {
                    if let Some(map) = node.get_mut(meta_map) {
                        mark_created(map);
                    }
                }
            } else if schema.is_custom() {
                mark_created(node);
            }
        }
    }
    store_entry(
        object,
        (manager, operation, subresource),
        api_version,
        set,
        time,
    );
}

/// Stores `set` as the entry of `manager`'s `operation` through `subresource`: replaces that
/// entry, or adds one; a manager that owns no field has no entry (the server drops it), and
/// the last entry gone takes `managedFields` along.
fn store_entry(
    object: &mut Value,
    (manager, operation, subresource): (&str, &str, &str),
    api_version: &str,
    set: Value,
    time: &str,
) {
    let owns_nothing = set.as_object().is_some_and(Map::is_empty);
    let mut entry = json!({
        "manager": manager,
        "operation": operation,
        "apiVersion": api_version,
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": set,
    });
    if !subresource.is_empty() {
        entry["subresource"] = json!(subresource);
    }
    let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let list = meta
        .entry("managedFields")
        .or_insert_with(|| Value::Array(Vec::new()));
    if !list.is_array() {
        *list = Value::Array(Vec::new());
    }
    let Some(items) = list.as_array_mut() else {
        return;
    };
    match items
        .iter()
        .position(|e| is_entry(e, (manager, operation, subresource)))
    {
        Some(i) if owns_nothing => {
            items.remove(i);
        }
        Some(i) => items[i] = entry,
        None if owns_nothing => {}
        None => items.push(entry),
    }
    if items.is_empty() {
        meta.remove("managedFields");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_v1_lists_owned_fields() {
        let applied = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "labels": {"app": "x"}},
            "data": {"k": "v"},
        });
        assert_eq!(
            fields_v1(&applied, Schema::Unknown),
            json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:data": {"f:k": {}}})
        );
    }

    /// Finalizers are a set: each item owned alone, in the server's format (read from a
    /// kube-apiserver's managedFields after an apply), and an item its manager no longer
    /// applies is removed unless another manager owns it.
    #[test]
    fn finalizers_are_owned_item_by_item() {
        let applied = |items: Value| json!({"metadata": {"name": "a", "finalizers": items}});
        let apply = |obj: &mut Value, manager: &str, items: Value| {
            record(
                obj,
                (manager, "Apply"),
                "",
                "v1",
                &applied(items),
                Schema::Unknown,
                "t",
            );
        };
        assert_eq!(
            fields_v1(&applied(json!(["example.com/a"])), Schema::Unknown),
            json!({"f:metadata": {"f:finalizers": {"v:\"example.com/a\"": {}}}})
        );
        // An empty set holds no path, as on the server (testenv's kube-apiserver records a
        // ConfigMap applied with `finalizers: []` and `data: {"a": "1"}` as
        // `{"f:data":{"f:a":{}}}`).
        assert_eq!(fields_v1(&applied(json!([])), Schema::Unknown), json!({}));
        let mut obj = json!({"metadata": {"name": "a", "finalizers": ["x/a", "x/b"]}});
        apply(&mut obj, "m", json!(["x/a"]));
        apply(&mut obj, "n", json!(["x/b"]));
        let removed = removed_by_apply(&obj, "m", "", &applied(json!([])), Schema::Unknown);
        assert_eq!(removed, [["metadata", "finalizers", "v:\"x/a\""]]);
        remove_path(&mut obj, &removed[0]);
        assert_eq!(obj["metadata"]["finalizers"], json!(["x/b"]));
        // Owned by both: stays.
        apply(&mut obj, "m", json!(["x/b"]));
        assert!(removed_by_apply(&obj, "m", "", &applied(json!([])), Schema::Unknown).is_empty());
    }

    /// A `listType=map` list of a built-in kind is owned item by item under its keys, in the
    /// server's format; an item (or an item's field) its manager no longer applies is
    /// removed unless another manager owns it, and the list of a kind without a schema (a
    /// custom resource registered without one) is owned whole.
    #[test]
    fn list_map_items_are_owned_by_their_keys() {
        use kclient_apimachinery::meta::PatchMeta as _;

        let fields = Schema::Struct(kclient_api::apps::v1::Deployment::patch_fields());
        let applied = |containers: Value| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web"},
                "spec": {"template": {"spec": {"containers": containers}}}})
        };
        let app = json!({"name": "app", "image": "a", "ports": [{"containerPort": 80}],
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]});
        let sidecar = json!({"name": "sidecar", "image": "s"});
        let set = fields_v1(&applied(json!([app, sidecar])), fields);
        let containers = &set["f:spec"]["f:template"]["f:spec"]["f:containers"];
        assert_eq!(
            containers["k:{\"name\":\"app\"}"],
            json!({".": {}, "f:name": {}, "f:image": {},
            // The key with the protocol the server defaults, as it writes it.
            "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":
                {".": {}, "f:containerPort": {}}},
            "f:env": {
                "k:{\"name\":\"A\"}": {".": {}, "f:name": {}, "f:value": {}},
                "k:{\"name\":\"B\"}": {".": {}, "f:name": {}, "f:value": {}},
            }})
        );
        assert_eq!(
            containers["k:{\"name\":\"sidecar\"}"],
            json!({".": {}, "f:name": {}, "f:image": {}})
        );
        // Without a schema the list is owned whole.
        assert_eq!(
            fields_v1(&applied(json!([app])), Schema::Unknown)["f:spec"]["f:template"]["f:spec"]["f:containers"],
            json!({})
        );

        let mut obj = applied(json!([app, sidecar]));
        let first = obj.clone();
        record(&mut obj, ("m", "Apply"), "", "apps/v1", &first, fields, "t");
        // m drops the sidecar and env B, and keeps the app with env A.
        let app_a = json!({"name": "app", "image": "a", "ports": [{"containerPort": 80}],
            "env": [{"name": "A", "value": "1"}]});
        let removed = removed_by_apply(&obj, "m", "", &applied(json!([app_a])), fields);
        let prefix = ["spec", "template", "spec", "containers"];
        let path = |rest: &[&str]| -> Vec<String> {
            prefix.iter().chain(rest).map(|s| s.to_string()).collect()
        };
        assert!(
            removed.contains(&path(&["k:{\"name\":\"sidecar\"}"])),
            "{removed:?}"
        );
        assert!(
            removed.contains(&path(&[
                "k:{\"name\":\"app\"}",
                "env",
                "k:{\"name\":\"B\"}"
            ])),
            "{removed:?}"
        );
        assert!(
            !removed.contains(&path(&["k:{\"name\":\"app\"}"])),
            "{removed:?}"
        );
        for p in &removed {
            remove_path(&mut obj, p);
        }
        assert_eq!(
            obj["spec"]["template"]["spec"]["containers"],
            json!([app_a])
        );

        // Owned by another manager too, the sidecar stays.
        let mut obj = applied(json!([app, sidecar]));
        let first = obj.clone();
        record(&mut obj, ("m", "Apply"), "", "apps/v1", &first, fields, "t");
        record(
            &mut obj,
            ("n", "Apply"),
            "",
            "apps/v1",
            &applied(json!([sidecar])),
            fields,
            "t",
        );
        let removed = removed_by_apply(&obj, "m", "", &applied(json!([app])), fields);
        assert!(
            !removed
                .iter()
                .any(|p| p.iter().any(|e| e.contains("sidecar"))),
            "{removed:?}"
        );
    }

    /// An update owns what it changed, by key in a list-map, keeps what it owned, and loses
    /// what it removed; an apply that changes a field another manager owns conflicts with
    /// it, named as the server names it.
    #[test]
    fn an_update_owns_what_it_changed() {
        use kclient_apimachinery::meta::PatchMeta as _;

        let fields = Schema::Struct(kclient_api::apps::v1::Deployment::patch_fields());
        let with = |containers: Value, labels: Value| {
            json!({"metadata": {"name": "web", "labels": labels},
                "spec": {"template": {"spec": {"containers": containers}}}})
        };
        let app = json!({"name": "app", "image": "a:1"});
        let old = with(json!([app]), json!({"team": "x"}));
        let mut new = with(
            json!([{"name": "app", "image": "a:2"}, {"name": "sidecar", "image": "s"}]),
            json!({}),
        );
        let changed = changed_paths(&old, &new, fields);
        let containers = ["spec", "template", "spec", "containers"];
        let path = |rest: &[&str]| -> Vec<String> {
            containers
                .iter()
                .chain(rest)
                .map(|s| s.to_string())
                .collect()
        };
        assert_eq!(
            changed,
            [
                vec!["metadata".to_string(), "labels".into(), "team".into()],
                path(&["k:{\"name\":\"app\"}", "image"]),
                path(&["k:{\"name\":\"sidecar\"}"]),
            ]
        );
        // It owned the label before; the label is gone, the image and the sidecar are its.
        new["metadata"]["managedFields"] = json!([{"manager": "u", "operation": "Update",
            "apiVersion": "apps/v1", "fieldsV1": {"f:metadata": {"f:labels": {"f:team": {}}}}}]);
        record_update(
            (&mut new, &old),
            ("u", ""),
            "apps/v1",
            &changed,
            fields,
            "t",
        );
        let entries = new["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(
            entries[0]["fieldsV1"],
            json!({"f:spec": {"f:template": {"f:spec": {"f:containers": {
                "k:{\"name\":\"app\"}": {"f:image": {}},
                "k:{\"name\":\"sidecar\"}": {".": {}, "f:name": {}, "f:image": {}},
            }}}}})
        );
        // Applying another image conflicts with the updater, named with its apiVersion.
        let applied = with(json!([{"name": "app", "image": "a:3"}]), json!({}));
        let conflicts = apply_conflicts(&new, "deployer", "", (&applied, &applied), fields);
        assert_eq!(
            conflicts,
            [Conflict {
                owner: "\"u\" using apps/v1".into(),
                path: path(&["k:{\"name\":\"app\"}", "image"]),
            }]
        );
        assert_eq!(
            path_string(&conflicts[0].path),
            ".spec.template.spec.containers[name=\"app\"].image"
        );
        // The same image is no conflict.
        let same = with(json!([{"name": "app", "image": "a:2"}]), json!({}));
        assert!(apply_conflicts(&new, "deployer", "", (&same, &same), fields).is_empty());
    }

    /// A kind without a schema still has ObjectMeta's: an update that adds a
    /// finalizer changes that item only, and owner references are keyed by uid.
    #[test]
    fn a_custom_resources_metadata_is_owned_as_object_meta() {
        let old = json!({"metadata": {"name": "w", "finalizers": ["a/x"]}});
        let new = json!({"metadata": {"name": "w", "finalizers": ["a/x", "b/y"],
            "ownerReferences": [{"uid": "u1", "name": "o", "kind": "K", "apiVersion": "v1"}]}});
        assert_eq!(
            changed_paths(&old, &new, Schema::Unknown),
            [
                vec![
                    "metadata".to_string(),
                    "finalizers".into(),
                    "v:\"b/y\"".into()
                ],
                vec!["metadata".to_string(), "ownerReferences".into()],
            ]
        );
        assert!(
            fields_v1(&new, Schema::Unknown)["f:metadata"]["f:ownerReferences"]
                .get("k:{\"uid\":\"u1\"}")
                .is_some()
        );
    }

    #[test]
    fn record_replaces_the_managers_entry() {
        let mut obj = json!({"metadata": {"name": "a"}});
        record(
            &mut obj,
            ("m", "Apply"),
            "",
            "v1",
            &json!({"data": {"a": "1"}}),
            Schema::Unknown,
            "t1",
        );
        record(
            &mut obj,
            ("m", "Apply"),
            "",
            "v1",
            &json!({"data": {"b": "1"}}),
            Schema::Unknown,
            "t2",
        );
        record(
            &mut obj,
            ("other", "Update"),
            "",
            "v1",
            &json!({"data": {"c": "1"}}),
            Schema::Unknown,
            "t3",
        );
        let mf = obj["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(mf.len(), 2);
        assert_eq!(mf[0]["fieldsV1"], json!({"f:data": {"f:b": {}}}));
        assert_eq!(mf[1]["manager"], "other");
        // A manager left owning nothing loses its entry; the last one takes the list along.
        record(
            &mut obj,
            ("other", "Update"),
            "",
            "v1",
            &json!({}),
            Schema::Unknown,
            "t4",
        );
        assert_eq!(
            obj["metadata"]["managedFields"].as_array().unwrap().len(),
            1
        );
        record(
            &mut obj,
            ("m", "Apply"),
            "",
            "v1",
            &json!({}),
            Schema::Unknown,
            "t5",
        );
        assert!(obj["metadata"].get("managedFields").is_none());
    }
}
