//! Two-way strategic merge patches (client-go's `strategicpatch.CreateTwoWayMergePatch`): the
//! patch that turns one object into another, merging lists by key where the type's schema says
//! so, in the exact form client-go emits.
//!
//! What the schema says per field ([`PatchSchema`]):
//!
//! - no strategy: objects are diffed key by key (a removed key becomes `null`), lists are
//!   replaced whole;
//! - `patchStrategy: merge` on a list of objects with `patchMergeKey` (containers by `name`):
//!   changed and added items are listed (changed ones with only their changes plus the key),
//!   removed ones as `{"$patch": "delete", <key>: <value>}`, and `$setElementOrder/<field>`
//!   gives the full order (merge keys only) whenever the list's content or order changed;
//! - `patchStrategy: merge` on a list of scalars (finalizers): added values are listed,
//!   removed ones go to `$deleteFromPrimitiveList/<field>`, and `$setElementOrder/<field>` holds
//!   the modified list;
//! - `patchStrategy: replace` on an object: the object is replaced whole;
//! - `retainKeys` (a Deployment's `strategy`, the items of `volumes`): a changed object also
//!   lists the keys to keep in `$retainKeys`.
//!
//! Fields the schema does not describe are treated as having no strategy (client-go fails
//! instead when such a field changed); with the `()` schema the result is a JSON merge patch
//! that diffs nested objects, suitable for custom resources.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

const DIRECTIVE_MARKER: &str = "$patch";
const DELETE_DIRECTIVE: &str = "delete";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

/// The patch strategy of a field (`x-kubernetes-patch-strategy`, without `retainKeys`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PatchStrategy {
    /// No strategy: objects merge key by key, lists are replaced.
    #[default]
    Default,
    /// Lists merge by their merge key (or, for scalars, by value).
    Merge,
    /// The value is replaced whole.
    Replace,
}

/// What a strategic merge patch needs to know about one field.
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldPatchMeta<'a, S> {
    /// The strategy.
    pub strategy: PatchStrategy,
    /// Whether `retainKeys` is part of the strategy.
    pub retain_keys: bool,
    /// `x-kubernetes-patch-merge-key` of a merged list of objects.
    pub merge_key: Option<&'a str>,
    /// The schema of the object the field holds (directly, as list items or as map values).
    pub schema: S,
}

impl<S> FieldPatchMeta<'_, S> {
    /// Reads a `patchStrategy` tag such as `merge`, `replace`, `retainKeys` or
    /// `merge,retainKeys`.
    pub fn parse_strategy(tag: &str) -> (PatchStrategy, bool) {
        let mut strategy = PatchStrategy::Default;
        let mut retain_keys = false;
        for part in tag.split(',').map(str::trim) {
            match part {
                "merge" => strategy = PatchStrategy::Merge,
                "replace" => strategy = PatchStrategy::Replace,
                "retainKeys" => retain_keys = true,
                _ => {}
            }
        }
        (strategy, retain_keys)
    }
}

/// The patch metadata of an object type: for each field, its strategy, merge key and the
/// schema of what it holds. Implemented by [`PatchTable`] (built by hand or from generated
/// metadata) and by `()` (no metadata at all).
///
/// Schemas are small copyable handles (a reference to a table) so the walk can pass them down.
pub trait PatchSchema: Copy {
    /// The metadata of field `name`; unknown fields have no strategy and the empty schema.
    fn field(&self, name: &str) -> FieldPatchMeta<'_, Self>;
}

impl PatchSchema for () {
    fn field(&self, _name: &str) -> FieldPatchMeta<'_, Self> {
        FieldPatchMeta::default()
    }
}

/// Patch metadata as a table: fields by name, each with its strategy, merge key and nested
/// table.
///
/// ```
/// use kclient_apimachinery::PatchTable;
///
/// let container = PatchTable::new().merge_list("ports", "containerPort", PatchTable::new());
/// let pod_spec = PatchTable::new()
///     .merge_list("containers", "name", container)
///     .merge_list("volumes", "name", PatchTable::new())
///     .retain_keys("volumes");
/// let pod = PatchTable::new().object("spec", pod_spec);
/// # let _ = pod;
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatchTable {
    fields: BTreeMap<String, TableField>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct TableField {
    strategy: PatchStrategy,
    retain_keys: bool,
    merge_key: Option<String>,
    nested: Option<Box<PatchTable>>,
}

static EMPTY_TABLE: PatchTable = PatchTable {
    fields: BTreeMap::new(),
};

impl PatchTable {
    /// A table with no fields.
    pub fn new() -> Self {
        PatchTable::default()
    }

    fn entry(&mut self, name: &str) -> &mut TableField {
        self.fields.entry(name.to_owned()).or_default()
    }

    /// Field `name` holds an object (or a list or map of objects) described by `nested`.
    pub fn object(mut self, name: &str, nested: PatchTable) -> Self {
        self.entry(name).nested = Some(Box::new(nested));
        self
    }

    /// Field `name` is a list of objects merged by `merge_key` (`patchStrategy: merge`), its
    /// items described by `item`.
    pub fn merge_list(mut self, name: &str, merge_key: &str, item: PatchTable) -> Self {
        let field = self.entry(name);
        field.strategy = PatchStrategy::Merge;
        field.merge_key = Some(merge_key.to_owned());
        field.nested = Some(Box::new(item));
        self
    }

    /// Field `name` is a list of scalars merged as a set (`patchStrategy: merge`).
    pub fn merge_scalars(mut self, name: &str) -> Self {
        self.entry(name).strategy = PatchStrategy::Merge;
        self
    }

    /// Field `name` is replaced whole (`patchStrategy: replace`).
    pub fn replace(mut self, name: &str) -> Self {
        self.entry(name).strategy = PatchStrategy::Replace;
        self
    }

    /// Field `name` also has the `retainKeys` strategy.
    pub fn retain_keys(mut self, name: &str) -> Self {
        self.entry(name).retain_keys = true;
        self
    }

    /// A field with a raw `patchStrategy` tag (`merge,retainKeys`) and merge key, as generated
    /// metadata carries them.
    pub fn tagged(
        mut self,
        name: &str,
        patch_strategy: &str,
        merge_key: Option<&str>,
        nested: Option<PatchTable>,
    ) -> Self {
        let (strategy, retain_keys) = FieldPatchMeta::<()>::parse_strategy(patch_strategy);
        let field = self.entry(name);
        field.strategy = strategy;
        field.retain_keys = retain_keys;
        field.merge_key = merge_key.map(str::to_owned);
        field.nested = nested.map(Box::new);
        self
    }
}

impl PatchSchema for &PatchTable {
    fn field(&self, name: &str) -> FieldPatchMeta<'_, Self> {
        match self.fields.get(name) {
            None => FieldPatchMeta {
                strategy: PatchStrategy::Default,
                retain_keys: false,
                merge_key: None,
                schema: &EMPTY_TABLE,
            },
            Some(field) => FieldPatchMeta {
                strategy: field.strategy,
                retain_keys: field.retain_keys,
                merge_key: field.merge_key.as_deref(),
                schema: field.nested.as_deref().unwrap_or(&EMPTY_TABLE),
            },
        }
    }
}

/// A strategic merge patch that could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategicPatchError {
    message: String,
}

impl StrategicPatchError {
    fn new(message: impl Into<String>) -> Self {
        StrategicPatchError {
            message: message.into(),
        }
    }
}

impl fmt::Display for StrategicPatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StrategicPatchError {}

/// Which parts of a diff to produce (client-go's `DiffOptions`).
#[derive(Debug, Clone, Copy)]
struct DiffOptions {
    set_element_order: bool,
    ignore_changes_and_additions: bool,
    ignore_deletions: bool,
    build_retain_keys: bool,
}

/// The two-way strategic merge patch from `original` to `modified`, following client-go's
/// `CreateTwoWayMergePatch`. Both must be JSON objects (`null` counts as `{}`).
///
/// ```
/// use kclient_apimachinery::{create_two_way_merge_patch, PatchTable};
/// use serde_json::json;
///
/// let schema = PatchTable::new().object(
///     "spec",
///     PatchTable::new().merge_list("containers", "name", PatchTable::new()),
/// );
/// let original = json!({"spec": {"containers": [{"name": "app", "image": "app:1"}]}});
/// let modified = json!({"spec": {"containers": [{"name": "app", "image": "app:2"}]}});
/// let patch = create_two_way_merge_patch(&original, &modified, &schema)?;
/// assert_eq!(
///     patch,
///     json!({"spec": {
///         "$setElementOrder/containers": [{"name": "app"}],
///         "containers": [{"image": "app:2", "name": "app"}]
///     }})
/// );
/// # Ok::<(), kclient_apimachinery::StrategicPatchError>(())
/// ```
pub fn create_two_way_merge_patch<S: PatchSchema>(
    original: &Value,
    modified: &Value,
    schema: S,
) -> Result<Value, StrategicPatchError> {
    let empty = Map::new();
    let original = document_object(original, &empty, "original")?;
    let modified = document_object(modified, &empty, "modified")?;
    let options = DiffOptions {
        set_element_order: true,
        ignore_changes_and_additions: false,
        ignore_deletions: false,
        build_retain_keys: false,
    };
    diff_maps(original, modified, schema, options).map(Value::Object)
}

/// A top-level document as an object; `null` reads as `{}`.
fn document_object<'a>(
    value: &'a Value,
    empty: &'a Map<String, Value>,
    which: &str,
) -> Result<&'a Map<String, Value>, StrategicPatchError> {
    match value {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(empty),
        _ => Err(StrategicPatchError::new(format!(
            "invalid JSON document: the {which} object is not a JSON object"
        ))),
    }
}

fn diff_maps<S: PatchSchema>(
    original: &Map<String, Value>,
    modified: &Map<String, Value>,
    schema: S,
    options: DiffOptions,
) -> Result<Map<String, Value>, StrategicPatchError> {
    let mut patch = Map::new();
    let mut retain_keys: Vec<&str> = Vec::new();

    for (key, modified_value) in modified {
        if options.build_retain_keys && !modified_value.is_null() {
            retain_keys.push(key);
        }
        let Some(original_value) = original.get(key) else {
            if !options.ignore_changes_and_additions {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        };
        if key == DIRECTIVE_MARKER {
            let (Some(o), Some(m)) = (original_value.as_str(), modified_value.as_str()) else {
                return Err(StrategicPatchError::new(format!(
                    "invalid value for special key: {DIRECTIVE_MARKER}"
                )));
            };
            if o != m {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        }
        if !same_type(original_value, modified_value) {
            if !options.ignore_changes_and_additions {
                patch.insert(key.clone(), modified_value.clone());
            }
            continue;
        }
        match (original_value, modified_value) {
            (Value::Object(o), Value::Object(m)) => {
                handle_map_diff(key, o, m, &mut patch, schema, options)?;
            }
            (Value::Array(o), Value::Array(m)) => {
                handle_slice_diff(key, o, m, &mut patch, schema, options)?;
            }
            _ => replace_if_not_equal(key, original_value, modified_value, &mut patch, options),
        }
    }

    if !options.ignore_deletions {
        for key in original.keys() {
            if !modified.contains_key(key) {
                patch.insert(key.clone(), Value::Null);
            }
        }
    }

    let has_additional_field = original
        .iter()
        .any(|(k, v)| !v.is_null() && !modified.contains_key(k));
    if !retain_keys.is_empty() && (!patch.is_empty() || has_additional_field) {
        retain_keys.sort_unstable();
        let list = retain_keys.into_iter().map(Value::from).collect();
        patch.insert(RETAIN_KEYS_DIRECTIVE.to_owned(), Value::Array(list));
    }
    Ok(patch)
}

fn handle_map_diff<S: PatchSchema>(
    key: &str,
    original: &Map<String, Value>,
    modified: &Map<String, Value>,
    patch: &mut Map<String, Value>,
    schema: S,
    mut options: DiffOptions,
) -> Result<(), StrategicPatchError> {
    let meta = schema.field(key);
    options.build_retain_keys = meta.retain_keys;
    if meta.strategy == PatchStrategy::Replace {
        if !options.ignore_changes_and_additions {
            patch.insert(key.to_owned(), Value::Object(modified.clone()));
        }
        return Ok(());
    }
    let nested = diff_maps(original, modified, meta.schema, options)?;
    if !nested.is_empty() {
        patch.insert(key.to_owned(), Value::Object(nested));
    }
    Ok(())
}

fn handle_slice_diff<S: PatchSchema>(
    key: &str,
    original: &[Value],
    modified: &[Value],
    patch: &mut Map<String, Value>,
    schema: S,
    mut options: DiffOptions,
) -> Result<(), StrategicPatchError> {
    let meta = schema.field(key);
    if meta.strategy != PatchStrategy::Merge {
        if !options.ignore_changes_and_additions && original != modified {
            patch.insert(key.to_owned(), Value::Array(modified.to_vec()));
        }
        return Ok(());
    }
    options.build_retain_keys = meta.retain_keys;
    let merge_key = meta.merge_key.unwrap_or("");
    let lists = diff_lists(original, modified, meta.schema, merge_key, options)
        .map_err(|e| StrategicPatchError::new(format!("{key}: {}", e.message)))?;
    if !lists.patch.is_empty() {
        patch.insert(key.to_owned(), Value::Array(lists.patch));
    }
    if !lists.deletions.is_empty() {
        patch.insert(
            format!("{DELETE_FROM_PRIMITIVE_LIST_PREFIX}/{key}"),
            Value::Array(lists.deletions),
        );
    }
    if !lists.set_order.is_empty() {
        patch.insert(
            format!("{SET_ELEMENT_ORDER_PREFIX}/{key}"),
            Value::Array(lists.set_order),
        );
    }
    Ok(())
}

fn replace_if_not_equal(
    key: &str,
    original: &Value,
    modified: &Value,
    patch: &mut Map<String, Value>,
    options: DiffOptions,
) {
    if !options.ignore_changes_and_additions && original != modified {
        patch.insert(key.to_owned(), modified.clone());
    }
}

/// The three parts of a merged list's diff.
#[derive(Default)]
struct ListDiff {
    /// The list itself in the patch: changes, additions and (for objects) delete directives.
    patch: Vec<Value>,
    /// `$deleteFromPrimitiveList`: scalars to remove.
    deletions: Vec<Value>,
    /// `$setElementOrder`: the full order of the modified list.
    set_order: Vec<Value>,
}

/// The kind of the elements of merged lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ElementKind {
    Object,
    Scalar(u8),
}

fn element_kind(v: &Value) -> Result<ElementKind, StrategicPatchError> {
    Ok(match v {
        Value::Object(_) => ElementKind::Object,
        Value::Array(_) => {
            return Err(StrategicPatchError::new("lists of lists are not supported"));
        }
        Value::Null => ElementKind::Scalar(0),
        Value::Bool(_) => ElementKind::Scalar(1),
        Value::Number(n) if n.is_f64() => ElementKind::Scalar(2),
        Value::Number(_) => ElementKind::Scalar(3),
        Value::String(_) => ElementKind::Scalar(4),
    })
}

/// The common element kind of both lists (client-go's `sliceElementType`).
fn slice_element_kind(lists: [&[Value]; 2]) -> Result<ElementKind, StrategicPatchError> {
    let mut kind = None;
    for value in lists.into_iter().flatten() {
        let k = element_kind(value)?;
        match kind {
            None => kind = Some(k),
            Some(prev) if prev != k => {
                return Err(StrategicPatchError::new(
                    "list element types are not identical",
                ));
            }
            Some(_) => {}
        }
    }
    kind.ok_or_else(|| StrategicPatchError::new("no elements in any of the given lists"))
}

fn diff_lists<S: PatchSchema>(
    original: &[Value],
    modified: &[Value],
    schema: S,
    merge_key: &str,
    options: DiffOptions,
) -> Result<ListDiff, StrategicPatchError> {
    if original.is_empty() {
        if modified.is_empty() || options.ignore_changes_and_additions {
            return Ok(ListDiff::default());
        }
        return Ok(ListDiff {
            patch: modified.to_vec(),
            ..ListDiff::default()
        });
    }

    let mut diff = ListDiff::default();
    match slice_element_kind([original, modified])? {
        ElementKind::Object => {
            if merge_key.is_empty() {
                return Err(StrategicPatchError::new(
                    "a merged list of objects needs a patch merge key",
                ));
            }
            let (changes, deletions) =
                diff_lists_of_maps(original, modified, schema, merge_key, options)?;
            let mut patch = normalize_slice_order(changes, modified, Some(merge_key))?;
            let order_same = is_order_same(original, modified, merge_key)?;
            patch.extend(deletions);
            if options.set_element_order
                && ((!options.ignore_changes_and_additions && (!patch.is_empty() || !order_same))
                    || (!options.ignore_deletions && !patch.is_empty()))
            {
                diff.set_order = modified
                    .iter()
                    .map(|item| {
                        let mut only_key = Map::new();
                        let value = item.get(merge_key).cloned().unwrap_or(Value::Null);
                        only_key.insert(merge_key.to_owned(), value);
                        Value::Object(only_key)
                    })
                    .collect();
            }
            diff.patch = patch;
        }
        ElementKind::Scalar(_) => {
            let (additions, deletions) = diff_lists_of_scalars(original, modified, options);
            diff.patch = normalize_slice_order(additions, modified, None)?;
            if options.set_element_order
                && ((!options.ignore_deletions && !deletions.is_empty())
                    || (!options.ignore_changes_and_additions && original != modified))
            {
                diff.set_order = modified.to_vec();
            }
            diff.deletions = deletions;
        }
    }
    Ok(diff)
}

/// Go's `fmt.Sprintf("%v", v)` for the JSON values that appear as merge keys and scalars.
fn go_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".to_owned(),
        other => other.to_string(),
    }
}

fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// The merge key value of a list item, which must be an object carrying it.
fn merge_key_value<'a>(item: &'a Value, merge_key: &str) -> Result<&'a Value, StrategicPatchError> {
    let Value::Object(map) = item else {
        return Err(StrategicPatchError::new(format!(
            "expected a JSON object in a merged list, got {item}"
        )));
    };
    map.get(merge_key).ok_or_else(|| {
        StrategicPatchError::new(format!(
            "map: {item} does not contain declared merge key: {merge_key}"
        ))
    })
}

fn diff_lists_of_maps<S: PatchSchema>(
    original: &[Value],
    modified: &[Value],
    schema: S,
    merge_key: &str,
    options: DiffOptions,
) -> Result<(Vec<Value>, Vec<Value>), StrategicPatchError> {
    let keyed = |list: &[Value]| -> Result<Vec<(String, Value)>, StrategicPatchError> {
        let mut out = list
            .iter()
            .map(|item| Ok((go_string(merge_key_value(item, merge_key)?), item.clone())))
            .collect::<Result<Vec<_>, StrategicPatchError>>()?;
        out.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(out)
    };
    let original_sorted = keyed(original)?;
    let modified_sorted = keyed(modified)?;

    let mut patch = Vec::new();
    let mut deletions = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < original_sorted.len() || j < modified_sorted.len() {
        let order = match (original_sorted.get(i), modified_sorted.get(j)) {
            (Some((o, _)), Some((m, _))) => o.cmp(m),
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (None, None) => break,
        };
        match order {
            Ordering::Equal => {
                let (Value::Object(o), Value::Object(m)) =
                    (&original_sorted[i].1, &modified_sorted[j].1)
                else {
                    return Err(StrategicPatchError::new(
                        "expected JSON objects in a merged list",
                    ));
                };
                let mut item_patch = diff_maps(o, m, schema, options)?;
                if !item_patch.is_empty() {
                    let key_value = merge_key_value(&modified_sorted[j].1, merge_key)?.clone();
                    item_patch.insert(merge_key.to_owned(), key_value);
                    patch.push(Value::Object(item_patch));
                }
                i += 1;
                j += 1;
            }
            // The modified list has an item the original lacks.
            Ordering::Greater => {
                if !options.ignore_changes_and_additions {
                    patch.push(modified_sorted[j].1.clone());
                }
                j += 1;
            }
            // The original list has an item the modified one lacks.
            Ordering::Less => {
                if !options.ignore_deletions {
                    let key_value = merge_key_value(&original_sorted[i].1, merge_key)?.clone();
                    let mut directive = Map::new();
                    directive.insert(DIRECTIVE_MARKER.to_owned(), Value::from(DELETE_DIRECTIVE));
                    directive.insert(merge_key.to_owned(), key_value);
                    deletions.push(Value::Object(directive));
                }
                i += 1;
            }
        }
    }
    Ok((patch, deletions))
}

fn diff_lists_of_scalars(
    original: &[Value],
    modified: &[Value],
    options: DiffOptions,
) -> (Vec<Value>, Vec<Value>) {
    let sorted = |list: &[Value]| {
        let mut out: Vec<(String, Value)> =
            list.iter().map(|v| (go_string(v), v.clone())).collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    };
    let original_sorted = sorted(original);
    let modified_sorted = sorted(modified);
    let mut additions = Vec::new();
    let mut deletions = Vec::new();
    let (mut i, mut j) = (0, 0);
    loop {
        let order = match (original_sorted.get(i), modified_sorted.get(j)) {
            (Some((o, _)), Some((m, _))) => o.cmp(m),
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (None, None) => break,
        };
        match order {
            Ordering::Equal => {
                i += 1;
                j += 1;
            }
            Ordering::Greater => {
                if !options.ignore_changes_and_additions {
                    additions.push(modified_sorted[j].1.clone());
                }
                j += 1;
            }
            Ordering::Less => {
                if !options.ignore_deletions {
                    deletions.push(original_sorted[i].1.clone());
                }
                i += 1;
            }
        }
    }
    (additions, deduplicate_scalars(deletions))
}

/// Removes repeated values the way client-go's `deduplicateScalars` does (moving the last
/// element into a duplicate's place), so the output order matches.
fn deduplicate_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i + 1 < s.len() {
        let mut j = i + 1;
        while j < s.len() {
            if s[i] == s[j] {
                s.swap_remove(j);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    s
}

/// Sorts `to_sort` by the position of each item in `order` (by merge key for objects),
/// moving `$patch: delete` items to the end (client-go's `normalizeSliceOrder`).
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>, StrategicPatchError> {
    let (mut keep, deleted): (Vec<Value>, Vec<Value>) = match merge_key {
        Some(key) => {
            for item in to_sort.iter().chain(order) {
                merge_key_value(item, key)?;
            }
            to_sort.into_iter().partition(|item| {
                item.get(DIRECTIVE_MARKER).and_then(Value::as_str) != Some(DELETE_DIRECTIVE)
            })
        }
        None => (to_sort, Vec::new()),
    };
    let position = |item: &Value| -> usize {
        order
            .iter()
            .position(|candidate| match merge_key {
                Some(key) => candidate.get(key) == item.get(key),
                None => candidate == item,
            })
            .unwrap_or(usize::MAX)
    };
    keep.sort_by_key(|item| position(item));
    keep.extend(deleted);
    Ok(keep)
}

/// Whether both lists hold the same merge keys in the same order.
fn is_order_same(
    original: &[Value],
    modified: &[Value],
    merge_key: &str,
) -> Result<bool, StrategicPatchError> {
    if original.len() != modified.len() {
        return Ok(false);
    }
    for (o, m) in original.iter().zip(modified) {
        if merge_key_value(o, merge_key)? != merge_key_value(m, merge_key)? {
            return Ok(false);
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// client-go's `MergeItem` test type (patch_test.go).
    fn merge_item() -> PatchTable {
        let leaf = PatchTable::new()
            .merge_list("mergingList", "name", PatchTable::new())
            .merge_scalars("mergingIntList");
        let retain_keys_item = PatchTable::new()
            .merge_scalars("mergingIntList")
            .merge_list("mergingList", "name", leaf.clone());
        // `MergeItem` is recursive; two levels are enough for the cases below.
        let item = PatchTable::new()
            .merge_list("mergingList", "name", leaf.clone())
            .object("nonMergingList", leaf.clone())
            .merge_scalars("mergingIntList")
            .merge_list("mergeItemPtr", "name", leaf.clone())
            .replace("replacingItem")
            .tagged("retainKeysMap", "retainKeys", None, Some(retain_keys_item))
            .tagged(
                "retainKeysMergingList",
                "merge,retainKeys",
                Some("name"),
                Some(leaf),
            );
        item.clone()
            .merge_list("mergingList", "name", item.clone())
            .merge_list("retainKeysMergingList", "name", item.clone())
            .retain_keys("retainKeysMergingList")
    }

    /// (description, original, modified, expected two-way patch): cases from client-go's
    /// `createStrategicMergePatchTestCaseData` and `strategicMergePatchRawTestCases`.
    fn cases() -> Vec<(&'static str, Value, Value, Value)> {
        vec![
            (
                "nil original",
                json!(null),
                json!({"name":1,"value":1}),
                json!({"name":1,"value":1}),
            ),
            ("nil patch", json!({"name":1}), json!({"name":1}), json!({})),
            (
                "add field to map",
                json!({"name":1}),
                json!({"name":1,"value":1}),
                json!({"value":1}),
            ),
            (
                "add field and delete field from map",
                json!({"name":1}),
                json!({"value":1}),
                json!({"name":null,"value":1}),
            ),
            (
                "delete field from nested map",
                json!({"simpleMap":{"key1":1,"key2":1}}),
                json!({"simpleMap":{"key1":1}}),
                json!({"simpleMap":{"key2":null}}),
            ),
            (
                "delete all fields from map",
                json!({"name":1,"value":1}),
                json!({}),
                json!({"name":null,"value":null}),
            ),
            (
                "add field and delete all fields from map",
                json!({"name":1,"value":1}),
                json!({"other":"a"}),
                json!({"name":null,"value":null,"other":"a"}),
            ),
            (
                "replace list of scalars",
                json!({"nonMergingIntList":[1,2]}),
                json!({"nonMergingIntList":[2,3]}),
                json!({"nonMergingIntList":[2,3]}),
            ),
            (
                "delete all maps from merging list",
                json!({"mergingList":[{"name":1},{"name":2}]}),
                json!({"mergingList":[]}),
                json!({"mergingList":[{"name":1,"$patch":"delete"},{"name":2,"$patch":"delete"}]}),
            ),
            (
                "merge empty merging lists",
                json!({"mergingList":[]}),
                json!({"mergingList":[]}),
                json!({}),
            ),
            (
                "defined null values should propagate overwrite current fields",
                json!({"name":2}),
                json!({"name":1,"value":1,"other":null}),
                json!({"name":1,"value":1,"other":null}),
            ),
            (
                "defined null values should propagate removing original fields",
                json!({"name":"original-name","value":"original-value"}),
                json!({"name":"modified-name","value":null}),
                json!({"name":"modified-name","value":null}),
            ),
            (
                "nil patch with retainKeys map",
                json!({"name":"a","retainKeysMap":{"name":"foo"}}),
                json!({"name":"a","retainKeysMap":{"name":"foo"}}),
                json!({}),
            ),
            (
                "retainKeys map with no change should not be present",
                json!({"name":"a","retainKeysMap":{"name":"foo"}}),
                json!({"name":"a","value":"b","retainKeysMap":{"name":"foo"}}),
                json!({"value":"b"}),
            ),
            (
                "delete items in lists of scalars",
                json!({"mergingIntList":[1,2,3]}),
                json!({"mergingIntList":[1,2]}),
                json!({"$setElementOrder/mergingIntList":[1,2],"$deleteFromPrimitiveList/mergingIntList":[3]}),
            ),
            (
                "delete all duplicate items in lists of scalars",
                json!({"mergingIntList":[1,2,3,3]}),
                json!({"mergingIntList":[1,2]}),
                json!({"$setElementOrder/mergingIntList":[1,2],"$deleteFromPrimitiveList/mergingIntList":[3]}),
            ),
            (
                "add and delete items in lists of scalars",
                json!({"mergingIntList":[1,2,3]}),
                json!({"mergingIntList":[1,2,4]}),
                json!({
                    "$setElementOrder/mergingIntList":[1,2,4],
                    "$deleteFromPrimitiveList/mergingIntList":[3],
                    "mergingIntList":[4]
                }),
            ),
            (
                "merge lists of maps",
                json!({"mergingList":[{"name":1},{"name":2,"value":2}]}),
                json!({"mergingList":[{"name":4,"value":4},{"name":1},{"name":2,"value":2},{"name":3,"value":3}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":4},{"name":1},{"name":2},{"name":3}],
                    "mergingList":[{"name":4,"value":4},{"name":3,"value":3}]
                }),
            ),
            (
                "add field to map in merging list",
                json!({"mergingList":[{"name":1},{"name":2,"value":2}]}),
                json!({"mergingList":[{"name":1,"value":1},{"name":2,"value":2}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":1},{"name":2}],
                    "mergingList":[{"name":1,"value":1}]
                }),
            ),
            (
                "de-duplicate field in merging list",
                json!({"mergingList":[{"name":1},{"name":1}]}),
                json!({"mergingList":[{"name":1}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":1}],
                    "mergingList":[{"$patch":"delete","name":1}]
                }),
            ),
            (
                "delete duplicate field in merging list",
                json!({"mergingList":[{"name":1},{"name":1}]}),
                json!({"mergingList":{}}),
                json!({"mergingList":{}}),
            ),
            (
                "replace map field value in merging list",
                json!({"mergingList":[{"name":1,"value":1},{"name":2,"value":2}]}),
                json!({"mergingList":[{"name":1,"value":"a"},{"name":2,"value":2}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":1},{"name":2}],
                    "mergingList":[{"name":1,"value":"a"}]
                }),
            ),
            (
                "delete map from merging list",
                json!({"mergingList":[{"name":1},{"name":2}]}),
                json!({"mergingList":[{"name":2}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":2}],
                    "mergingList":[{"name":1,"$patch":"delete"}]
                }),
            ),
            (
                "add map and delete map from merging list",
                json!({"mergingList":[{"name":1},{"name":2}]}),
                json!({"mergingList":[{"name":2},{"name":3}]}),
                json!({
                    "$setElementOrder/mergingList":[{"name":2},{"name":3}],
                    "mergingList":[{"name":3},{"name":1,"$patch":"delete"}]
                }),
            ),
            (
                "only reorder a merging list",
                json!({"mergingList":[{"name":1},{"name":2}]}),
                json!({"mergingList":[{"name":2},{"name":1}]}),
                json!({"$setElementOrder/mergingList":[{"name":2},{"name":1}]}),
            ),
            (
                "only reorder a merging int list",
                json!({"mergingIntList":[1,2,3]}),
                json!({"mergingIntList":[3,1,2]}),
                json!({"$setElementOrder/mergingIntList":[3,1,2]}),
            ),
            (
                "replace a replacing item whole",
                json!({"replacingItem":{"a":1,"b":2}}),
                json!({"replacingItem":{"a":1}}),
                json!({"replacingItem":{"a":1}}),
            ),
            (
                "retainKeys map adds a field and clear a field",
                json!({"retainKeysMap":{"name":"foo"}}),
                json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
                json!({"retainKeysMap":{"$retainKeys":["name","value"],"value":"bar"}}),
            ),
            (
                "retainKeys map deletes a field",
                json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
                json!({"retainKeysMap":{"name":"foo"}}),
                json!({"retainKeysMap":{"$retainKeys":["name"],"value":null}}),
            ),
            (
                "retainKeys map clears a field",
                json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
                json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
                json!({}),
            ),
            (
                "retainKeys map should clear defaulted field",
                json!({}),
                json!({"retainKeysMap":{"other":"bar"}}),
                json!({"retainKeysMap":{"other":"bar"}}),
            ),
            (
                "retainKeys map adds a field in a nested map",
                json!({"retainKeysMap":{"name":"foo","value":"bar","simpleMap":{"key1":"a"}}}),
                json!({"retainKeysMap":{"name":"foo","value":"bar","simpleMap":{"key1":"a","key2":"b"}}}),
                json!({"retainKeysMap":{"$retainKeys":["name","simpleMap","value"],"simpleMap":{"key2":"b"}}}),
            ),
            (
                "retainKeys map replaces non-merging list",
                json!({"retainKeysMap":{"name":"foo","value":"bar","nonMergingList":[{"name":"a"},{"name":"b"}]}}),
                json!({"retainKeysMap":{"name":"foo","value":"bar","nonMergingList":[{"name":"a"},{"name":"c"},{"name":"b"}]}}),
                json!({"retainKeysMap":{
                    "$retainKeys":["name","nonMergingList","value"],
                    "nonMergingList":[{"name":"a"},{"name":"c"},{"name":"b"}]
                }}),
            ),
            (
                "retainKeys map deletes nested non-merging list",
                json!({"retainKeysMap":{"name":"foo","nonMergingList":[{"name":"a"},{"name":"b"}]}}),
                json!({"retainKeysMap":{"name":"foo","value":"bar"}}),
                json!({"retainKeysMap":{"$retainKeys":["name","value"],"value":"bar","nonMergingList":null}}),
            ),
            (
                "retainKeys map adds an item in nested merging int list",
                json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,2]}}),
                json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,4]}}),
                json!({"retainKeysMap":{
                    "$setElementOrder/mergingIntList":[1,2,4],
                    "$retainKeys":["mergingIntList","name"],
                    "mergingIntList":[4]
                }}),
            ),
            (
                "retainKeys map adds an item and deletes an item in nested merging int list",
                json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,3]}}),
                json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,3,5]}}),
                json!({"retainKeysMap":{
                    "$retainKeys":["mergingIntList","name"],
                    "mergingIntList":[5],
                    "$deleteFromPrimitiveList/mergingIntList":[2],
                    "$setElementOrder/mergingIntList":[1,3,5]
                }}),
            ),
            (
                "retainKeys map deletes nested merging int list",
                json!({"retainKeysMap":{"name":"foo","mergingIntList":[1,2,3]}}),
                json!({"retainKeysMap":{"name":"foo"}}),
                json!({"retainKeysMap":{"$retainKeys":["name"],"mergingIntList":null}}),
            ),
            (
                "retainKeys map adds an item in nested merging list",
                json!({"retainKeysMap":{"name":"foo","mergingList":[{"name":"a"},{"name":"b"}]}}),
                json!({"retainKeysMap":{"name":"foo","mergingList":[{"name":"a"},{"name":"b"},{"name":"c"}]}}),
                json!({"retainKeysMap":{
                    "$retainKeys":["mergingList","name"],
                    "$setElementOrder/mergingList":[{"name":"a"},{"name":"b"},{"name":"c"}],
                    "mergingList":[{"name":"c"}]
                }}),
            ),
            (
                "retainKeys merging list item changes a field",
                json!({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"a"}]}),
                json!({"retainKeysMergingList":[{"name":"bar"},{"name":"foo","value":"b"}]}),
                json!({
                    "$setElementOrder/retainKeysMergingList":[{"name":"bar"},{"name":"foo"}],
                    "retainKeysMergingList":[{"$retainKeys":["name","value"],"name":"foo","value":"b"}]
                }),
            ),
        ]
    }

    #[test]
    fn two_way_patches_match_client_go() {
        let schema = merge_item();
        for (description, original, modified, expected) in cases() {
            let patch = create_two_way_merge_patch(&original, &modified, &schema)
                .unwrap_or_else(|e| panic!("{description}: {e}"));
            assert_eq!(patch, expected, "{description}");
        }
    }

    /// The seed article's Deployment: `kubectl apply` after changing the image from
    /// nginx:1.7.9 to nginx:1.21.6 sends this patch.
    #[test]
    fn deployment_image_change() {
        let deployment = |image: &str| {
            json!({
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "nginx-deployment", "labels": {"app": "nginx"}},
                "spec": {
                    "replicas": 3,
                    "selector": {"matchLabels": {"app": "nginx"}},
                    "template": {
                        "metadata": {"labels": {"app": "nginx"}},
                        "spec": {"containers": [{
                            "name": "nginx",
                            "image": image,
                            "ports": [{"containerPort": 80}]
                        }]}
                    }
                }
            })
        };
        let patch = create_two_way_merge_patch(
            &deployment("nginx:1.7.9"),
            &deployment("nginx:1.21.6"),
            &deployment_schema(),
        )
        .unwrap();
        assert_eq!(
            patch,
            json!({"spec": {"template": {"spec": {
                "$setElementOrder/containers": [{"name": "nginx"}],
                "containers": [{"image": "nginx:1.21.6", "name": "nginx"}]
            }}}})
        );
        assert_eq!(
            serde_json::to_string(&patch).unwrap(),
            r#"{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"nginx"}],"containers":[{"image":"nginx:1.21.6","name":"nginx"}]}}}}"#
        );
    }

    fn deployment_schema() -> PatchTable {
        let container = PatchTable::new()
            .merge_list("ports", "containerPort", PatchTable::new())
            .merge_list("env", "name", PatchTable::new())
            .merge_list("volumeMounts", "mountPath", PatchTable::new());
        let pod_spec = PatchTable::new()
            .merge_list("containers", "name", container.clone())
            .merge_list("initContainers", "name", container)
            .tagged(
                "volumes",
                "merge,retainKeys",
                Some("name"),
                Some(PatchTable::new()),
            );
        let pod_template = PatchTable::new()
            .object("metadata", PatchTable::new().merge_scalars("finalizers"))
            .object("spec", pod_spec);
        let deployment_spec = PatchTable::new()
            .object("template", pod_template)
            .retain_keys("strategy");
        PatchTable::new().object("spec", deployment_spec)
    }

    /// The seed article's Istio initializer: the Envoy sidecar container and its config
    /// volume are merged into the user's Pod.
    #[test]
    fn pod_sidecar_injection() {
        let pod_schema = PatchTable::new().object("spec", {
            // A Pod's spec is a Deployment's spec.template.spec.
            let container =
                PatchTable::new().merge_list("volumeMounts", "mountPath", PatchTable::new());
            PatchTable::new()
                .merge_list("containers", "name", container)
                .tagged(
                    "volumes",
                    "merge,retainKeys",
                    Some("name"),
                    Some(PatchTable::new()),
                )
        });
        let original = json!({
            "metadata": {"name": "web"},
            "spec": {"containers": [{"name": "app", "image": "app:1"}]}
        });
        let modified = json!({
            "metadata": {"name": "web"},
            "spec": {
                "containers": [
                    {"name": "app", "image": "app:1"},
                    {"name": "envoy", "image": "lyft/envoy:845747b",
                     "volumeMounts": [{"name": "envoy-conf", "mountPath": "/etc/envoy"}]}
                ],
                "volumes": [{"name": "envoy-conf", "configMap": {"name": "envoy"}}]
            }
        });
        let patch = create_two_way_merge_patch(&original, &modified, &pod_schema).unwrap();
        assert_eq!(
            patch,
            json!({"spec": {
                "$setElementOrder/containers": [{"name": "app"}, {"name": "envoy"}],
                "containers": [{"name": "envoy", "image": "lyft/envoy:845747b",
                    "volumeMounts": [{"name": "envoy-conf", "mountPath": "/etc/envoy"}]}],
                "volumes": [{"name": "envoy-conf", "configMap": {"name": "envoy"}}]
            }})
        );
    }

    #[test]
    fn retain_keys_on_a_deployment_strategy() {
        let original = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        let modified = json!({"spec": {"strategy": {"type": "Recreate"}}});
        let patch = create_two_way_merge_patch(&original, &modified, &deployment_schema()).unwrap();
        assert_eq!(
            patch,
            json!({"spec": {"strategy": {
                "$retainKeys": ["type"],
                "rollingUpdate": null,
                "type": "Recreate"
            }}})
        );
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let schema = merge_item();
        let cases = [
            (json!([1]), json!({}), "not a JSON object"),
            (
                json!({"mergingList":[{"name":1}]}),
                json!({"mergingList":[{"value":2}]}),
                "does not contain declared merge key: name",
            ),
            (
                json!({"mergingList":[{"name":1}]}),
                json!({"mergingList":[1]}),
                "list element types are not identical",
            ),
            (
                json!({"mergingIntList":[[1]]}),
                json!({"mergingIntList":[[2]]}),
                "lists of lists",
            ),
            (
                json!({"$patch":"replace"}),
                json!({"$patch":1}),
                "invalid value for special key",
            ),
        ];
        for (original, modified, fragment) in cases {
            let err = create_two_way_merge_patch(&original, &modified, &schema).unwrap_err();
            assert!(err.to_string().contains(fragment), "{err}");
        }
    }

    #[test]
    fn without_a_schema_lists_are_replaced_and_maps_diffed() {
        let original = json!({"a": {"b": 1, "c": [1, 2]}, "d": 1});
        let modified = json!({"a": {"b": 2, "c": [1]}});
        assert_eq!(
            create_two_way_merge_patch(&original, &modified, ()).unwrap(),
            json!({"a": {"b": 2, "c": [1]}, "d": null})
        );
    }

    #[test]
    fn strategy_tags_parse() {
        type Meta<'a> = FieldPatchMeta<'a, ()>;
        assert_eq!(Meta::parse_strategy("merge"), (PatchStrategy::Merge, false));
        assert_eq!(
            Meta::parse_strategy("merge,retainKeys"),
            (PatchStrategy::Merge, true)
        );
        assert_eq!(
            Meta::parse_strategy("retainKeys"),
            (PatchStrategy::Default, true)
        );
        assert_eq!(
            Meta::parse_strategy("replace"),
            (PatchStrategy::Replace, false)
        );
        assert_eq!(Meta::parse_strategy(""), (PatchStrategy::Default, false));
    }

    #[test]
    fn deduplication_matches_client_go_order() {
        let v = |xs: &[i64]| xs.iter().map(|x| json!(x)).collect::<Vec<_>>();
        assert_eq!(deduplicate_scalars(v(&[1, 1, 2])), v(&[1, 2]));
        assert_eq!(deduplicate_scalars(v(&[3, 1, 3, 2, 1])), v(&[3, 1, 2]));
        assert_eq!(deduplicate_scalars(v(&[])), v(&[]));
    }
}
