//! [`Unstructured`]: an object of any kind held as a JSON map (client-go's
//! `unstructured.Unstructured`), for the dynamic client, dynamic informers and tools that
//! handle kinds unknown at compile time.
//!
//! It implements [`Object`] by reading `metadata` from the map: `labels()` and
//! `annotations()` are zero-copy [`StringMap`] views of the JSON objects (non-string values
//! read as absent). Nested fields are read and written with the `nested_*` and
//! `set_nested_field` helpers, which follow client-go's `NestedString`/`SetNestedField`: a path
//! through a value that is not an object, or a value of the wrong type, is an error; a missing
//! field is `Ok(None)`.

use std::collections::BTreeMap;
use std::fmt;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::de::null_as_default;
use crate::gvk::GroupVersionKind;
use crate::meta::LAST_APPLIED_CONFIGURATION_ANNOTATION;
use crate::meta::last_applied::REDACTED;
use crate::object::{EmptyStringMap, Object, OwnerRef, StringMap};
use crate::status::ListMeta;

/// A JSON object map, as `Unstructured` holds it.
pub type JsonMap = Map<String, Value>;

/// String values of a JSON object are its entries; other values read as absent.
impl StringMap for Map<String, Value> {
    fn get(&self, key: &str) -> Option<&str> {
        Map::get(self, key).and_then(Value::as_str)
    }

    fn entries(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(
            self.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v))),
        )
    }
}

/// An object of any kind as a JSON map; (de)serializes as that map.
///
/// ```
/// use kclient_apimachinery::{Object, Unstructured};
///
/// let mut obj: Unstructured = serde_json::from_str(
///     r#"{"apiVersion":"apps/v1","kind":"Deployment",
///         "metadata":{"name":"web","namespace":"prod","labels":{"app":"web"}},
///         "spec":{"replicas":3}}"#,
/// )?;
/// assert_eq!(obj.name(), "web");
/// assert_eq!(obj.labels().get("app"), Some("web"));
/// assert_eq!(obj.nested_i64(&["spec", "replicas"])?, Some(3));
///
/// obj.set_nested_field(5, &["spec", "replicas"])?;
/// obj.set_nested_field("nginx:1.27", &["spec", "template", "spec", "image"])?;
/// assert_eq!(obj.nested_string(&["spec", "template", "spec", "image"])?, Some("nginx:1.27"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// `Debug` prints the map, except a Secret's `data` and `stringData`, which show as
/// `<redacted>` (as the typed `Secret`'s `Debug` shows them), and, for every kind, the value of
/// the [`LAST_APPLIED_CONFIGURATION_ANNOTATION`](crate::meta::LAST_APPLIED_CONFIGURATION_ANNOTATION),
/// which holds a Secret's data when `kubectl apply` made it.
///
/// An object may nest as deep as the apiserver stores (10,000 levels, for a custom resource
/// whose schema keeps unknown fields): decoding, dropping, cloning, comparing, printing and
/// serializing an `Unstructured` never overflow the stack, on a 2 MiB tokio worker or test
/// thread either (`serde_json::Value`'s own implementations recurse once per level, so
/// `Unstructured` has its own). A `Value` taken out of it ([`into_map`](Self::into_map),
/// `Value::from`) is plain `serde_json` again.
#[derive(Default)]
pub struct Unstructured {
    object: JsonMap,
    /// Known to nest at most `deep::SHALLOW_LEVELS` levels, so that cloning, comparing,
    /// printing and serializing need no walk to size the stack first: set by decoding (which
    /// counts the levels as it reads) and kept by clones; cleared when the map is handed out
    /// for editing or given a value from outside.
    shallow: bool,
}

impl fmt::Debug for Unstructured {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        deep::with_room(self.room(), || self.debug(f))
    }
}

impl Unstructured {
    fn debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secret = self.kind() == "Secret" && self.api_version() == "v1";
        let hidden: &[&str] = if secret { &["data", "stringData"] } else { &[] };
        let last_applied = self
            .annotations()
            .contains_key(LAST_APPLIED_CONFIGURATION_ANNOTATION);
        if !last_applied && !hidden.iter().any(|k| self.object.contains_key(*k)) {
            return f
                .debug_struct("Unstructured")
                .field("object", &self.object)
                .finish();
        }
        let mut shown = self.object.clone();
        for key in hidden {
            if let Some(value) = shown.get_mut(*key) {
                *value = Value::String(REDACTED.into());
            }
        }
        if let Some(Value::Object(metadata)) = shown.get_mut("metadata")
            && let Some(Value::Object(annotations)) = metadata.get_mut("annotations")
            && let Some(value) = annotations.get_mut(LAST_APPLIED_CONFIGURATION_ANNOTATION)
        {
            *value = Value::String(REDACTED.into());
        }
        f.debug_struct("Unstructured")
            .field("object", &shown)
            .finish()
    }
}

impl Unstructured {
    /// An object with only `apiVersion` and `kind`.
    pub fn new(api_version: &str, kind: &str) -> Self {
        let mut u = Unstructured {
            object: JsonMap::new(),
            shallow: true,
        };
        u.set_api_version(api_version);
        u.set_kind(kind);
        u
    }

    /// Wraps a JSON map.
    pub fn from_map(object: JsonMap) -> Self {
        Unstructured {
            object,
            shallow: false,
        }
    }

    /// The stack a recursive operation on the map needs, if the caller's may not do (see
    /// `deep::room_for`).
    fn room(&self) -> Option<usize> {
        if self.shallow {
            None
        } else {
            deep::room_for(&self.object)
        }
    }

    /// Wraps a JSON value, which must be an object.
    pub fn from_value(value: Value) -> Result<Self, NestedFieldError> {
        match value {
            Value::Object(object) => Ok(Unstructured::from_map(object)),
            other => Err(NestedFieldError::wrong_type(&[], &other, "an object")),
        }
    }

    /// Converts a typed object (client-go's `ToUnstructured`).
    pub fn from_typed<T: Serialize>(typed: &T) -> Result<Self, serde_json::Error> {
        match serde_json::to_value(typed)? {
            Value::Object(object) => Ok(Unstructured::from_map(object)),
            _ => Err(serde::ser::Error::custom("the value is not a JSON object")),
        }
    }

    /// Converts into a typed object (client-go's `FromUnstructured`).
    pub fn into_typed<T: DeserializeOwned>(mut self) -> Result<T, serde_json::Error> {
        let room = self.room();
        let object = std::mem::take(&mut self.object);
        deep::with_room(room, || serde_json::from_value(Value::Object(object)))
    }

    /// Converts a copy into a typed object.
    pub fn to_typed<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        self.clone().into_typed()
    }

    /// The whole map.
    pub fn as_map(&self) -> &JsonMap {
        &self.object
    }

    /// The whole map, for editing.
    pub fn as_map_mut(&mut self) -> &mut JsonMap {
        self.shallow = false;
        &mut self.object
    }

    /// The map, unwrapped.
    pub fn into_map(mut self) -> JsonMap {
        std::mem::take(&mut self.object)
    }

    /// `apiVersion`, or `""`.
    pub fn api_version(&self) -> &str {
        self.top_string("apiVersion")
    }

    /// `kind`, or `""`.
    pub fn kind(&self) -> &str {
        self.top_string("kind")
    }

    /// Group, version and kind from `apiVersion` and `kind`.
    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::from_api_version_and_kind(self.api_version(), self.kind())
    }

    /// Sets `apiVersion`.
    pub fn set_api_version(&mut self, api_version: &str) {
        self.object
            .insert("apiVersion".to_owned(), Value::from(api_version));
    }

    /// Sets `kind`.
    pub fn set_kind(&mut self, kind: &str) {
        self.object.insert("kind".to_owned(), Value::from(kind));
    }

    /// Sets `apiVersion` and `kind` from a GVK.
    pub fn set_gvk(&mut self, gvk: &GroupVersionKind) {
        self.set_api_version(&gvk.api_version());
        self.set_kind(&gvk.kind);
    }

    /// `metadata`, if it is an object.
    pub fn metadata(&self) -> Option<&JsonMap> {
        self.object.get("metadata").and_then(Value::as_object)
    }

    /// Sets `metadata.labels` (an empty map removes the field).
    pub fn set_labels(&mut self, labels: &BTreeMap<String, String>) {
        self.set_metadata_string_map("labels", labels);
    }

    /// Sets `metadata.annotations` (an empty map removes the field).
    pub fn set_annotations(&mut self, annotations: &BTreeMap<String, String>) {
        self.set_metadata_string_map("annotations", annotations);
    }

    fn set_metadata_string_map(&mut self, field: &str, map: &BTreeMap<String, String>) {
        let metadata = self.metadata_mut();
        if map.is_empty() {
            metadata.remove(field);
        } else {
            let value = map
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect();
            metadata.insert(field.to_owned(), Value::Object(value));
        }
    }

    fn top_string(&self, field: &str) -> &str {
        self.object.get(field).and_then(Value::as_str).unwrap_or("")
    }

    fn meta_value(&self, field: &str) -> Option<&Value> {
        self.metadata()?.get(field)
    }

    fn meta_string(&self, field: &str) -> &str {
        self.meta_value(field).and_then(Value::as_str).unwrap_or("")
    }

    fn meta_map(&self, field: &str) -> &dyn StringMap {
        match self.meta_value(field).and_then(Value::as_object) {
            Some(map) => map,
            None => &EmptyStringMap,
        }
    }

    /// `metadata` as an object, replacing a non-object value.
    fn metadata_mut(&mut self) -> &mut JsonMap {
        let metadata = self
            .object
            .entry("metadata")
            .or_insert_with(|| Value::Object(JsonMap::new()));
        if !metadata.is_object() {
            *metadata = Value::Object(JsonMap::new());
        }
        match metadata {
            Value::Object(map) => map,
            _ => unreachable!("metadata was just made an object"),
        }
    }

    fn set_meta_string(&mut self, field: &str, value: &str) {
        let metadata = self.metadata_mut();
        if value.is_empty() {
            metadata.remove(field);
        } else {
            metadata.insert(field.to_owned(), Value::from(value));
        }
    }

    // ----- nested access (client-go's unstructured helpers) -----

    /// The value at `path`, `Ok(None)` if any step is missing or a step before the last is
    /// `null`; an error if a step before the last is neither an object nor `null` (client-go's
    /// `NestedFieldNoCopy`). A `null` at the end of the path is found: `Ok(Some(&Value::Null))`.
    ///
    /// Every typed getter below reads through this, so `{"status": null}` has no
    /// `status.phase` (not found, not an error), while a `null` where the getter expects a
    /// string, an array or an object is the wrong type, as in client-go.
    pub fn nested_field(&self, path: &[&str]) -> Result<Option<&Value>, NestedFieldError> {
        nested_field(&self.object, path)
    }

    /// The string at `path` (client-go's `NestedString`).
    pub fn nested_string(&self, path: &[&str]) -> Result<Option<&str>, NestedFieldError> {
        typed(
            nested_field(&self.object, path)?,
            path,
            "a string",
            Value::as_str,
        )
    }

    /// The boolean at `path` (client-go's `NestedBool`).
    pub fn nested_bool(&self, path: &[&str]) -> Result<Option<bool>, NestedFieldError> {
        typed(
            nested_field(&self.object, path)?,
            path,
            "a boolean",
            Value::as_bool,
        )
    }

    /// The integer at `path` (client-go's `NestedInt64`).
    pub fn nested_i64(&self, path: &[&str]) -> Result<Option<i64>, NestedFieldError> {
        typed(
            nested_field(&self.object, path)?,
            path,
            "an integer",
            Value::as_i64,
        )
    }

    /// The number at `path` (client-go's `NestedFloat64`).
    pub fn nested_f64(&self, path: &[&str]) -> Result<Option<f64>, NestedFieldError> {
        typed(
            nested_field(&self.object, path)?,
            path,
            "a number",
            Value::as_f64,
        )
    }

    /// The array at `path` (client-go's `NestedSlice`, without the copy).
    pub fn nested_slice(&self, path: &[&str]) -> Result<Option<&Vec<Value>>, NestedFieldError> {
        typed(
            nested_field(&self.object, path)?,
            path,
            "an array",
            Value::as_array,
        )
    }

    /// The object at `path` (client-go's `NestedMap`, without the copy).
    pub fn nested_map(&self, path: &[&str]) -> Result<Option<&JsonMap>, NestedFieldError> {
        typed(
            nested_field(&self.object, path)?,
            path,
            "an object",
            Value::as_object,
        )
    }

    /// The array of strings at `path` (client-go's `NestedStringSlice`); any non-string
    /// element is an error.
    pub fn nested_string_slice(
        &self,
        path: &[&str],
    ) -> Result<Option<Vec<&str>>, NestedFieldError> {
        let Some(items) = self.nested_slice(path)? else {
            return Ok(None);
        };
        items
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| NestedFieldError::wrong_type(path, v, "an array of strings"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    }

    /// The object of strings at `path` (client-go's `NestedStringMap`); any non-string value
    /// is an error.
    pub fn nested_string_map(
        &self,
        path: &[&str],
    ) -> Result<Option<BTreeMap<String, String>>, NestedFieldError> {
        let Some(map) = self.nested_map(path)? else {
            return Ok(None);
        };
        map.iter()
            .map(|(k, v)| match v.as_str() {
                Some(s) => Ok((k.clone(), s.to_owned())),
                None => Err(NestedFieldError::wrong_type(
                    path,
                    v,
                    "an object of strings",
                )),
            })
            .collect::<Result<BTreeMap<_, _>, _>>()
            .map(Some)
    }

    /// Sets the value at `path`, creating missing objects on the way; an error if a step
    /// before the last exists and is not an object, `null` included (client-go's
    /// `SetNestedField`, which does not replace a `null` by an object either).
    pub fn set_nested_field(
        &mut self,
        value: impl Into<Value>,
        path: &[&str],
    ) -> Result<(), NestedFieldError> {
        let Some((last, parents)) = path.split_last() else {
            return Err(NestedFieldError {
                path: String::new(),
                message: "an empty path cannot be set".to_owned(),
            });
        };
        let mut map = &mut self.object;
        for (i, step) in parents.iter().enumerate() {
            let entry = map
                .entry(*step)
                .or_insert_with(|| Value::Object(JsonMap::new()));
            map = match entry {
                Value::Object(next) => next,
                other => {
                    return Err(NestedFieldError::wrong_type(
                        &path[..=i],
                        other,
                        "an object",
                    ));
                }
            };
        }
        self.shallow = false;
        map.insert((*last).to_owned(), value.into());
        Ok(())
    }

    /// Removes the value at `path`, returning it; missing steps, and steps before the last that
    /// are not objects (`null` included), are not an error and remove nothing (client-go's
    /// `RemoveNestedField`).
    pub fn remove_nested_field(&mut self, path: &[&str]) -> Option<Value> {
        let (last, parents) = path.split_last()?;
        let mut map = &mut self.object;
        for step in parents {
            map = map.get_mut(*step)?.as_object_mut()?;
        }
        map.remove(*last)
    }
}

/// The value at `path` inside `map`; see [`Unstructured::nested_field`]. As client-go's
/// `NestedFieldNoCopy` (`if val == nil { return nil, false, nil }`), a `null` on the way is
/// "not found".
fn nested_field<'a>(
    map: &'a JsonMap,
    path: &[&str],
) -> Result<Option<&'a Value>, NestedFieldError> {
    let mut current = map;
    for (i, step) in path.iter().enumerate() {
        let Some(value) = current.get(*step) else {
            return Ok(None);
        };
        if i + 1 == path.len() {
            return Ok(Some(value));
        }
        current = match value {
            Value::Object(next) => next,
            Value::Null => return Ok(None),
            other => {
                return Err(NestedFieldError::wrong_type(
                    &path[..=i],
                    other,
                    "an object",
                ));
            }
        };
    }
    Ok(None)
}

fn typed<'a, T>(
    value: Option<&'a Value>,
    path: &[&str],
    expected: &str,
    read: impl Fn(&'a Value) -> Option<T>,
) -> Result<Option<T>, NestedFieldError> {
    match value {
        None => Ok(None),
        Some(v) => read(v)
            .map(Some)
            .ok_or_else(|| NestedFieldError::wrong_type(path, v, expected)),
    }
}

impl Object for Unstructured {
    fn name(&self) -> &str {
        self.meta_string("name")
    }
    fn namespace(&self) -> &str {
        self.meta_string("namespace")
    }
    fn resource_version(&self) -> &str {
        self.meta_string("resourceVersion")
    }
    fn uid(&self) -> &str {
        self.meta_string("uid")
    }
    fn generation(&self) -> i64 {
        self.meta_value("generation")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    }
    fn labels(&self) -> &dyn StringMap {
        self.meta_map("labels")
    }
    fn annotations(&self) -> &dyn StringMap {
        self.meta_map("annotations")
    }
    fn finalizers(&self) -> Vec<&str> {
        self.meta_value("finalizers")
            .and_then(Value::as_array)
            .map(|items| items.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        let Some(items) = self.meta_value("ownerReferences").and_then(Value::as_array) else {
            return Vec::new();
        };
        items
            .iter()
            .filter_map(Value::as_object)
            .map(|o| {
                let s = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("");
                let b = |k: &str| o.get(k).and_then(Value::as_bool).unwrap_or(false);
                OwnerRef {
                    api_version: s("apiVersion"),
                    kind: s("kind"),
                    name: s("name"),
                    uid: s("uid"),
                    controller: b("controller"),
                    block_owner_deletion: b("blockOwnerDeletion"),
                }
            })
            .collect()
    }
    fn is_being_deleted(&self) -> bool {
        self.meta_value("deletionTimestamp")
            .is_some_and(|v| !v.is_null())
    }
    fn set_name(&mut self, name: &str) {
        self.set_meta_string("name", name);
    }
    fn set_namespace(&mut self, namespace: &str) {
        self.set_meta_string("namespace", namespace);
    }
    fn set_resource_version(&mut self, resource_version: &str) {
        self.set_meta_string("resourceVersion", resource_version);
    }
    fn set_finalizers(&mut self, finalizers: Vec<String>) {
        let metadata = self.metadata_mut();
        if finalizers.is_empty() {
            metadata.remove("finalizers");
        } else {
            metadata.insert("finalizers".to_owned(), finalizers.into());
        }
    }
    fn clear_managed_fields(&mut self) {
        if let Some(Value::Object(metadata)) = self.object.get_mut("metadata") {
            metadata.remove("managedFields");
        }
    }
}

impl From<JsonMap> for Unstructured {
    fn from(object: JsonMap) -> Self {
        Unstructured::from_map(object)
    }
}

impl From<Unstructured> for Value {
    fn from(u: Unstructured) -> Self {
        Value::Object(u.into_map())
    }
}

impl Drop for Unstructured {
    fn drop(&mut self) {
        deep::drop_map(std::mem::take(&mut self.object));
    }
}

impl Clone for Unstructured {
    fn clone(&self) -> Self {
        Unstructured {
            object: deep::with_room(self.room(), || self.object.clone()),
            shallow: self.shallow,
        }
    }
}

impl PartialEq for Unstructured {
    fn eq(&self, other: &Self) -> bool {
        // The comparison stops at the shallower side's leaves.
        let room = if other.shallow { None } else { self.room() };
        deep::with_room(room, || self.object == other.object)
    }
}

impl Serialize for Unstructured {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        deep::with_room(self.room(), || self.object.serialize(serializer))
    }
}

impl<'de> Deserialize<'de> for Unstructured {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let deepest = std::cell::Cell::new(1);
        let object = deserializer.deserialize_map(deep::MapVisitor { deepest: &deepest })?;
        Ok(Unstructured {
            object,
            shallow: deepest.get() <= deep::SHALLOW_LEVELS,
        })
    }
}

/// Objects nested as deep as the apiserver stores them (10,000 levels).
///
/// `decode_json` reads them, growing the stack as it goes; but `serde_json::Value` drops,
/// clones, compares, prints and serializes itself by recursion, one set of frames per level,
/// and a 2 MiB stack does not hold 10,000 of them (in a debug build not even the drop's). So
/// [`Unstructured`] drops its map by recursion only through the first [`SHALLOW_LEVELS`] levels
/// and with a vector below them, runs the other operations on a stack sized for the map's
/// depth when it is deeper than that, and decodes its values with [`ValueSeed`], whose
/// half-built containers an error drops the same way, and which counts the levels it reads:
/// a decoded object no deeper than [`SHALLOW_LEVELS`] (every object of a usual answer; a Pod
/// nests about 10 levels) is marked shallow, and its clones, comparisons, prints and
/// serializations, and those of its clones, go straight to `serde_json`'s. An object built or
/// edited through its map is walked, within [`SHALLOW_LEVELS`] levels, before each of them.
pub(crate) mod deep {
    use std::cell::Cell;
    use std::fmt;

    use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
    use serde_json::{Map, Number, Value};

    use super::JsonMap;

    /// How many levels of arrays and objects are handled by plain recursion.
    pub(crate) const SHALLOW_LEVELS: u32 = 64;

    /// The stack given to a recursive operation per level of a deep map: more than twice what
    /// `Value`'s clone, comparison, `Debug` and serialization take in a debug build.
    const STACK_PER_LEVEL: usize = 4 * 1024;

    /// The stack given to a patch operation per level of the deepest value it walks: more
    /// than twice what the deepest of them takes in a debug build.
    const PATCH_STACK_PER_LEVEL: usize = 16 * 1024;

    /// The stack given to a recursive operation besides its levels.
    const STACK_BASE: usize = 1024 * 1024;

    /// The stack an operation recursing once per level of `map` needs, when `map` nests
    /// deeper than [`SHALLOW_LEVELS`] (`None`: the caller's stack will do).
    pub(crate) fn room_for(map: &JsonMap) -> Option<usize> {
        if !map.values().any(|v| deeper_than(v, SHALLOW_LEVELS - 1)) {
            return None;
        }
        Some(STACK_BASE + STACK_PER_LEVEL * depth(map))
    }

    /// The stack an operation recursing once per level of a value `levels` deep needs, when
    /// that is deeper than [`SHALLOW_LEVELS`] (`None`: the caller's stack will do).
    pub(crate) fn room_for_levels(levels: u32) -> Option<usize> {
        (levels > SHALLOW_LEVELS).then(|| STACK_BASE + STACK_PER_LEVEL * levels as usize)
    }

    /// Runs `f` on a stack of `room` bytes, or on the caller's for `None`.
    pub(crate) fn with_room<R>(room: Option<usize>, f: impl FnOnce() -> R) -> R {
        match room {
            None => f(),
            Some(size) => stacker::grow(size, f),
        }
    }

    /// Whether `value` holds arrays or objects more than `levels` levels deep, itself
    /// counting as one (recursing at most `levels` deep).
    fn deeper_than(value: &Value, levels: u32) -> bool {
        match value {
            Value::Array(items) => {
                levels == 0 || items.iter().any(|item| deeper_than(item, levels - 1))
            }
            Value::Object(entries) => {
                levels == 0 || entries.values().any(|item| deeper_than(item, levels - 1))
            }
            _ => false,
        }
    }

    /// The stack a patch operation (a merge patch or strategic merge patch made or applied),
    /// which recurses once per level of the values it walks and clones, compares and drops
    /// parts of them, needs when one of `values` nests deeper than [`SHALLOW_LEVELS`] (`None`:
    /// the caller's stack will do). A shallow value is walked through its first
    /// [`SHALLOW_LEVELS`] levels, which is all of it.
    pub(crate) fn room_for_patch(values: &[&Value]) -> Option<usize> {
        if !values.iter().any(|v| deeper_than(v, SHALLOW_LEVELS)) {
            return None;
        }
        let deepest = values
            .iter()
            .map(|v| levels(std::iter::once(*v), 0))
            .max()
            .unwrap_or(0);
        Some(STACK_BASE + PATCH_STACK_PER_LEVEL * deepest)
    }

    /// How many levels `map` nests, itself counting as one, walked without recursion.
    fn depth(map: &JsonMap) -> usize {
        levels(map.values(), 1)
    }

    /// How many levels `values` nest when they are at `level + 1`: `level` if none is an
    /// array or object. Walked without recursion.
    pub(crate) fn levels<'a>(values: impl Iterator<Item = &'a Value>, level: usize) -> usize {
        let mut deepest = level;
        let mut pending: Vec<(&Value, usize)> = values.map(|v| (v, level + 1)).collect();
        while let Some((value, level)) = pending.pop() {
            match value {
                Value::Array(items) => pending.extend(items.iter().map(|v| (v, level + 1))),
                Value::Object(entries) => pending.extend(entries.values().map(|v| (v, level + 1))),
                _ => continue,
            }
            deepest = deepest.max(level);
        }
        deepest
    }

    /// Drops `map` by recursion through [`SHALLOW_LEVELS`] levels and without recursion
    /// below them.
    pub(crate) fn drop_map(map: JsonMap) {
        for (_, value) in map {
            drop_value(value, SHALLOW_LEVELS - 1);
        }
    }

    /// Drops `value` by recursion through `levels` more levels and without recursion below.
    fn drop_value(value: Value, levels: u32) {
        match value {
            Value::Array(items) if levels > 0 => {
                for item in items {
                    drop_value(item, levels - 1);
                }
            }
            Value::Object(entries) if levels > 0 => {
                for (_, item) in entries {
                    drop_value(item, levels - 1);
                }
            }
            Value::Array(_) | Value::Object(_) => dismantle(value),
            _ => {}
        }
    }

    /// Drops `value` with a vector of the containers still to empty.
    #[cold]
    pub(crate) fn dismantle(value: Value) {
        let mut pending = vec![value];
        while let Some(value) = pending.pop() {
            match value {
                Value::Array(items) => pending.extend(items.into_iter().filter(is_container)),
                Value::Object(entries) => {
                    pending.extend(entries.into_iter().map(|(_, v)| v).filter(is_container))
                }
                _ => {}
            }
        }
    }

    fn is_container(value: &Value) -> bool {
        matches!(value, Value::Array(_) | Value::Object(_))
    }

    /// An object's entries while they are decoded: an error drops them with [`drop_map`].
    struct PartialMap(JsonMap);

    impl Drop for PartialMap {
        fn drop(&mut self) {
            if !self.0.is_empty() {
                drop_map(std::mem::take(&mut self.0));
            }
        }
    }

    /// An array's elements while they are decoded: an error drops them without recursion
    /// below [`SHALLOW_LEVELS`].
    struct PartialVec(Vec<Value>);

    impl Drop for PartialVec {
        fn drop(&mut self) {
            if !self.0.is_empty() {
                drop_value(Value::Array(std::mem::take(&mut self.0)), SHALLOW_LEVELS);
            }
        }
    }

    /// Decodes the map of an [`Unstructured`](super::Unstructured), as `serde_json::Map`'s
    /// `Deserialize` does (`null` is an empty map).
    pub(crate) struct MapVisitor<'a> {
        /// The deepest level read so far, the map itself counting as 1.
        pub(crate) deepest: &'a Cell<u32>,
    }

    impl<'de> Visitor<'de> for MapVisitor<'_> {
        type Value = JsonMap;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a map")
        }

        fn visit_unit<E: de::Error>(self) -> Result<JsonMap, E> {
            Ok(Map::new())
        }

        fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<JsonMap, A::Error> {
            entries(
                access,
                ValueSeed {
                    level: 2,
                    deepest: self.deepest,
                },
            )
        }
    }

    /// Reads an object's entries, whose values are decoded with `seed`.
    fn entries<'de, A: MapAccess<'de>>(
        mut access: A,
        seed: ValueSeed<'_>,
    ) -> Result<JsonMap, A::Error> {
        let mut map = PartialMap(Map::new());
        while let Some(key) = access.next_key::<String>()? {
            let value = access.next_value_seed(seed)?;
            map.0.insert(key, value);
        }
        Ok(std::mem::take(&mut map.0))
    }

    /// Decodes a `serde_json::Value` as its own `Deserialize` does, except that an error drops
    /// the containers decoded so far without deep recursion, and records how deep it nests.
    #[derive(Clone, Copy)]
    pub(crate) struct ValueSeed<'a> {
        /// The level of the value to decode.
        level: u32,
        /// The deepest level of an array or object read so far.
        deepest: &'a Cell<u32>,
    }

    impl ValueSeed<'_> {
        /// The seed of the values inside an array or object read at this seed's level.
        fn inside(self) -> Self {
            if self.deepest.get() < self.level {
                self.deepest.set(self.level);
            }
            ValueSeed {
                level: self.level.saturating_add(1),
                deepest: self.deepest,
            }
        }
    }

    impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
        type Value = Value;

        fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
            deserializer.deserialize_any(ValueVisitor(self))
        }
    }

    struct ValueVisitor<'a>(ValueSeed<'a>);

    impl<'de> Visitor<'de> for ValueVisitor<'_> {
        type Value = Value;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("any valid JSON value")
        }

        fn visit_bool<E: de::Error>(self, value: bool) -> Result<Value, E> {
            Ok(Value::Bool(value))
        }

        fn visit_i64<E: de::Error>(self, value: i64) -> Result<Value, E> {
            Ok(Value::Number(value.into()))
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<Value, E> {
            Ok(Value::Number(value.into()))
        }

        fn visit_i128<E: de::Error>(self, value: i128) -> Result<Value, E> {
            de::Deserialize::deserialize(de::value::I128Deserializer::<E>::new(value))
                .map(Value::Number)
        }

        fn visit_u128<E: de::Error>(self, value: u128) -> Result<Value, E> {
            de::Deserialize::deserialize(de::value::U128Deserializer::<E>::new(value))
                .map(Value::Number)
        }

        fn visit_f64<E: de::Error>(self, value: f64) -> Result<Value, E> {
            Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<Value, E> {
            Ok(Value::String(value.to_owned()))
        }

        fn visit_string<E: de::Error>(self, value: String) -> Result<Value, E> {
            Ok(Value::String(value))
        }

        fn visit_none<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
            self.0.deserialize(deserializer)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
            let seed = self.0.inside();
            let mut items = PartialVec(Vec::new());
            while let Some(item) = access.next_element_seed(seed)? {
                items.0.push(item);
            }
            Ok(Value::Array(std::mem::take(&mut items.0)))
        }

        fn visit_map<A: MapAccess<'de>>(self, access: A) -> Result<Value, A::Error> {
            entries(access, self.0.inside()).map(Value::Object)
        }
    }
}

/// A list of [`Unstructured`] objects, as the dynamic client lists them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnstructuredList {
    /// The list's `apiVersion`, such as `v1`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// The list's kind, such as `PodList`.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "String::is_empty"
    )]
    pub kind: String,
    /// The list's metadata (resource version, continue token).
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ListMeta,
    /// The objects.
    #[serde(default, deserialize_with = "null_as_default")]
    pub items: Vec<Unstructured>,
}

/// A nested field access through a value of the wrong type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NestedFieldError {
    path: String,
    message: String,
}

impl NestedFieldError {
    fn wrong_type(path: &[&str], value: &Value, expected: &str) -> Self {
        let found = match value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(n) if n.is_f64() => "a floating-point number",
            Value::Number(_) => "an integer",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        };
        NestedFieldError {
            path: path.join("."),
            message: format!("is {found}, expected {expected}"),
        }
    }

    /// The dotted path of the offending value.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl fmt::Display for NestedFieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "value {}", self.message)
        } else {
            write!(f, "{} accessor error: value {}", self.path, self.message)
        }
    }
}

impl std::error::Error for NestedFieldError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::on_small_stack;
    use serde_json::json;

    /// A Secret held as an `Unstructured` (the dynamic client's, a dynamic informer's) shows
    /// no data in `Debug`, as the typed `Secret`'s `Debug` does not.
    #[test]
    fn debug_of_a_secret_shows_no_data() {
        const MARKER: &str = "kclient-unstructured-secret-5e1f";
        let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, MARKER);
        let secret = Unstructured::from_value(json!({
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "db", "namespace": "prod"},
            "type": "Opaque",
            "data": {"password": encoded},
            "stringData": {"token": MARKER},
        }))
        .unwrap();
        let list = UnstructuredList {
            items: vec![secret.clone()],
            ..Default::default()
        };
        for shown in [
            format!("{secret:?}"),
            format!("{list:?}"),
            format!("{secret:#?}"),
        ] {
            assert!(
                !shown.contains(MARKER) && !shown.contains(&encoded),
                "Secret data in Debug: {shown}"
            );
            assert!(
                shown.contains("\"db\"") && shown.contains("Opaque"),
                "{shown}"
            );
        }
        // Another kind shows everything.
        let config_map = Unstructured::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap", "data": {"k": MARKER},
        }))
        .unwrap();
        assert!(format!("{config_map:?}").contains(MARKER));
    }

    /// `clear_managed_fields` removes `metadata.managedFields` and nothing else, and adds no
    /// `metadata` to an object without one.
    #[test]
    fn clear_managed_fields_removes_only_them() {
        let mut object = Unstructured::from_value(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}]},
        }))
        .unwrap();
        object.clear_managed_fields();
        assert_eq!(
            Value::from(object.clone()),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}})
        );
        let mut bare =
            Unstructured::from_value(json!({"apiVersion": "v1", "kind": "List"})).unwrap();
        bare.clear_managed_fields();
        assert_eq!(
            Value::from(bare),
            json!({"apiVersion": "v1", "kind": "List"})
        );
    }

    /// `kubectl apply` copies the whole Secret, data included, into its last-applied
    /// annotation: `Debug` hides that value for every kind and shows the other annotations.
    #[test]
    fn debug_hides_the_last_applied_annotation() {
        const MARKER: &str = "kclient-last-applied-7c2d";
        let applied = json!({"apiVersion": "v1", "kind": "Secret",
            "stringData": {"password": MARKER}})
        .to_string();
        for (kind, data) in [("Secret", "stringData"), ("ConfigMap", "data")] {
            let object = Unstructured::from_value(json!({
                "apiVersion": "v1",
                "kind": kind,
                "metadata": {"name": "db", "annotations": {
                    LAST_APPLIED_CONFIGURATION_ANNOTATION: applied,
                    "team": "payments",
                }},
                data: {"visible": "shown-value"},
            }))
            .unwrap();
            let shown = format!("{object:?}");
            assert!(!shown.contains(MARKER), "{kind}: {shown}");
            assert!(
                shown.contains(LAST_APPLIED_CONFIGURATION_ANNOTATION) && shown.contains("payments"),
                "{kind}: {shown}"
            );
            assert_eq!(
                shown.contains("shown-value"),
                kind == "ConfigMap",
                "{shown}"
            );
            // The object itself keeps the value.
            assert_eq!(
                object
                    .annotations()
                    .get(LAST_APPLIED_CONFIGURATION_ANNOTATION),
                Some(applied.as_str())
            );
        }
    }

    fn deployment() -> Unstructured {
        Unstructured::from_value(json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "prod",
                "uid": "u-1",
                "resourceVersion": "42",
                "generation": 3,
                "labels": {"app": "web", "tier": "front", "weird": 1},
                "annotations": {"note": "x"},
                "finalizers": ["a/b", 7, "c"],
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Thing", "name": "owner", "uid": "u-0",
                     "controller": true, "blockOwnerDeletion": true},
                    {"apiVersion": "v1", "kind": "Other", "name": "o2", "uid": "u-2"}
                ],
                "deletionTimestamp": "2026-01-01T00:00:00Z"
            },
            "spec": {
                "replicas": 3,
                "paused": false,
                "ratio": 0.5,
                "selector": {"matchLabels": {"app": "web"}},
                "args": ["a", "b"],
                "mixed": ["a", 1]
            }
        }))
        .unwrap()
    }

    #[test]
    fn implements_object_from_the_map() {
        let d = deployment();
        assert_eq!(d.api_version(), "apps/v1");
        assert_eq!(d.kind(), "Deployment");
        assert_eq!(d.gvk(), GroupVersionKind::new("apps", "v1", "Deployment"));
        assert_eq!(d.name(), "web");
        assert_eq!(d.namespace(), "prod");
        assert_eq!(d.uid(), "u-1");
        assert_eq!(d.resource_version(), "42");
        assert_eq!(d.generation(), 3);
        assert_eq!(d.labels().get("app"), Some("web"));
        assert_eq!(
            d.labels().get("weird"),
            None,
            "non-string values read as absent"
        );
        assert_eq!(d.labels().len(), 2);
        assert!(d.labels().contains_key("tier"));
        assert_eq!(d.annotations().get("note"), Some("x"));
        assert_eq!(d.finalizers(), ["a/b", "c"]);
        let owners = d.owner_references();
        assert_eq!(owners.len(), 2);
        assert!(owners[0].controller && owners[0].block_owner_deletion);
        assert_eq!(owners[1].name, "o2");
        assert!(!owners[1].controller);
        assert!(d.is_being_deleted());
        assert_eq!(crate::meta_namespace_key(&d), "prod/web");

        let empty = Unstructured::default();
        assert_eq!(empty.name(), "");
        assert_eq!(empty.generation(), 0);
        assert!(empty.labels().is_empty());
        assert!(empty.finalizers().is_empty());
        assert!(!empty.is_being_deleted());
    }

    #[test]
    fn setters_edit_metadata() {
        let mut u = Unstructured::new("v1", "ConfigMap");
        u.set_name("cm");
        u.set_namespace("default");
        u.set_resource_version("7");
        u.set_labels(&BTreeMap::from([("a".to_owned(), "b".to_owned())]));
        assert_eq!(
            serde_json::to_value(&u).unwrap(),
            json!({"apiVersion":"v1","kind":"ConfigMap",
                   "metadata":{"name":"cm","namespace":"default","resourceVersion":"7","labels":{"a":"b"}}})
        );
        u.set_resource_version("");
        u.set_labels(&BTreeMap::new());
        assert_eq!(u.metadata().unwrap().len(), 2);
        // A non-object metadata is replaced rather than panicking.
        u.as_map_mut().insert("metadata".into(), json!("junk"));
        u.set_name("again");
        assert_eq!(u.name(), "again");
        u.set_gvk(&GroupVersionKind::new("batch", "v1", "Job"));
        assert_eq!(u.api_version(), "batch/v1");
    }

    #[test]
    fn nested_getters() {
        let d = deployment();
        assert_eq!(d.nested_i64(&["spec", "replicas"]), Ok(Some(3)));
        assert_eq!(d.nested_bool(&["spec", "paused"]), Ok(Some(false)));
        assert_eq!(d.nested_f64(&["spec", "ratio"]), Ok(Some(0.5)));
        assert_eq!(d.nested_string(&["metadata", "name"]), Ok(Some("web")));
        assert_eq!(d.nested_string(&["spec", "missing"]), Ok(None));
        assert_eq!(d.nested_string(&["missing", "deeper"]), Ok(None));
        assert_eq!(
            d.nested_string_slice(&["spec", "args"]),
            Ok(Some(vec!["a", "b"]))
        );
        assert!(d.nested_string_slice(&["spec", "mixed"]).is_err());
        assert_eq!(
            d.nested_string_map(&["spec", "selector", "matchLabels"]),
            Ok(Some(BTreeMap::from([("app".to_owned(), "web".to_owned())])))
        );
        assert!(d.nested_string_map(&["metadata", "labels"]).is_err());
        assert_eq!(d.nested_map(&["spec"]).unwrap().unwrap().len(), 6);
        assert_eq!(d.nested_slice(&["spec", "args"]).unwrap().unwrap().len(), 2);

        let err = d.nested_string(&["spec", "replicas"]).unwrap_err();
        assert_eq!(err.path(), "spec.replicas");
        assert_eq!(
            err.to_string(),
            "spec.replicas accessor error: value is an integer, expected a string"
        );
        let err = d.nested_string(&["spec", "replicas", "x"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "spec.replicas accessor error: value is an integer, expected an object"
        );
        assert!(d.nested_i64(&["spec", "ratio"]).is_err());
    }

    #[test]
    fn set_and_remove_nested_fields() {
        let mut d = deployment();
        d.set_nested_field(json!({"x": 1}), &["spec", "strategy"])
            .unwrap();
        d.set_nested_field("y", &["status", "conditions", "ready"])
            .unwrap();
        assert_eq!(d.nested_i64(&["spec", "strategy", "x"]), Ok(Some(1)));
        assert_eq!(
            d.nested_string(&["status", "conditions", "ready"]),
            Ok(Some("y"))
        );
        let err = d
            .set_nested_field(1, &["spec", "replicas", "deeper"])
            .unwrap_err();
        assert_eq!(err.path(), "spec.replicas");
        assert!(d.set_nested_field(1, &[]).is_err());

        assert_eq!(d.remove_nested_field(&["spec", "replicas"]), Some(json!(3)));
        assert_eq!(d.nested_i64(&["spec", "replicas"]), Ok(None));
        assert_eq!(d.remove_nested_field(&["nope", "x"]), None);
        assert_eq!(d.remove_nested_field(&["spec", "paused", "x"]), None);
    }

    /// client-go's `NestedFieldNoCopy` answers "not found" when a step on the way is `null`,
    /// so every getter does; a `null` at the end is found, and the typed getters call it the
    /// wrong type. `SetNestedField` refuses to go through a `null` and `RemoveNestedField`
    /// does nothing.
    #[test]
    fn null_on_the_path() {
        let mut u = Unstructured::from_value(json!({
            "apiVersion": "v1",
            "kind": "X",
            "status": null,
            "spec": {"inner": null, "list": null},
        }))
        .unwrap();
        for path in [
            &["status", "phase"][..],
            &["status", "conditions", "ready"],
            &["spec", "inner", "x"],
        ] {
            assert_eq!(u.nested_field(path), Ok(None), "{path:?}");
            assert_eq!(u.nested_string(path), Ok(None), "{path:?}");
            assert_eq!(u.nested_bool(path), Ok(None), "{path:?}");
            assert_eq!(u.nested_i64(path), Ok(None), "{path:?}");
            assert_eq!(u.nested_f64(path), Ok(None), "{path:?}");
            assert_eq!(u.nested_slice(path), Ok(None), "{path:?}");
            assert_eq!(u.nested_map(path), Ok(None), "{path:?}");
            assert_eq!(u.nested_string_slice(path), Ok(None), "{path:?}");
            assert_eq!(u.nested_string_map(path), Ok(None), "{path:?}");
        }
        // A null at the end is found; as a string, array or object it is the wrong type.
        assert_eq!(u.nested_field(&["status"]), Ok(Some(&Value::Null)));
        let err = u.nested_string(&["status"]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "status accessor error: value is null, expected a string"
        );
        assert!(u.nested_map(&["spec", "inner"]).is_err());
        assert!(u.nested_slice(&["spec", "list"]).is_err());
        assert!(u.nested_string_slice(&["spec", "list"]).is_err());
        assert!(u.nested_string_map(&["spec", "inner"]).is_err());
        // A step that is neither an object nor null is still an error.
        u.set_nested_field(1, &["spec", "n"]).unwrap();
        assert!(u.nested_string(&["spec", "n", "x"]).is_err());

        // SetNestedField: "value cannot be set because status is not a map".
        let err = u
            .set_nested_field("Running", &["status", "phase"])
            .unwrap_err();
        assert_eq!(err.path(), "status");
        assert_eq!(u.nested_field(&["status"]), Ok(Some(&Value::Null)));
        // RemoveNestedField goes no further than the null.
        assert_eq!(u.remove_nested_field(&["status", "phase"]), None);
        assert_eq!(u.remove_nested_field(&["spec", "inner", "x"]), None);
        assert_eq!(u.remove_nested_field(&["spec", "inner"]), Some(Value::Null));
        assert_eq!(u.nested_field(&["spec", "inner"]), Ok(None));
    }

    #[test]
    fn typed_conversions_and_serde() {
        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        struct Cm {
            #[serde(rename = "apiVersion")]
            api_version: String,
            data: BTreeMap<String, String>,
        }
        let cm = Cm {
            api_version: "v1".into(),
            data: BTreeMap::from([("k".to_owned(), "v".to_owned())]),
        };
        let u = Unstructured::from_typed(&cm).unwrap();
        assert_eq!(u.api_version(), "v1");
        assert_eq!(u.to_typed::<Cm>().unwrap(), cm);
        assert!(Unstructured::from_typed(&5).is_err());
        assert!(Unstructured::from_value(json!([1])).is_err());

        let text = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}"#;
        let u: Unstructured = serde_json::from_str(text).unwrap();
        assert_eq!(serde_json::to_string(&u).unwrap(), text);
        assert!(serde_json::from_str::<Unstructured>("[]").is_err());
    }

    #[test]
    fn lists_decode() {
        let list: UnstructuredList = serde_json::from_str(
            r#"{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"9"},
                "items":[{"kind":"Pod","metadata":{"name":"a"}},{"kind":"Pod","metadata":{"name":"b"}}]}"#,
        )
        .unwrap();
        assert_eq!(list.kind, "PodList");
        assert_eq!(list.metadata.resource_version, "9");
        let names: Vec<_> = list.items.iter().map(|i| i.name()).collect();
        assert_eq!(names, ["a", "b"]);
        let empty: UnstructuredList = serde_json::from_str(r#"{"items":null}"#).unwrap();
        assert!(empty.items.is_empty());
    }

    /// An object whose `spec` nests objects and arrays down to `depth` levels in all (the
    /// apiserver stores up to 10,000), with `tail` after the deepest value, as text.
    fn deep_text(depth: usize, tail: &str) -> String {
        let open: String = (0..depth - 2)
            .map(|i| if i % 2 == 0 { r#"{"a":"# } else { "[" })
            .collect();
        let close: String = (0..depth - 2)
            .rev()
            .map(|i| if i % 2 == 0 { "}" } else { "]" })
            .collect();
        format!(
            r#"{{"apiVersion":"deep.kclient.test/v1","kind":"Deep","metadata":{{"name":"d"}},"spec":{{"x":{open}0{close}{tail}}}}}"#
        )
    }

    /// Decoding marks an object shallow exactly when the walk before a clone would find no
    /// need for a bigger stack, clones keep the mark, and editing through the map clears it.
    #[test]
    fn decoding_marks_an_object_shallow_exactly_when_it_is() {
        for depth in [3, 63, 64, 65, 66, 200] {
            let text = deep_text(depth, "");
            let object: Unstructured = crate::decode_json(text.as_bytes()).unwrap();
            assert_eq!(object.shallow, depth <= 64, "{depth} levels");
            assert_eq!(
                object.shallow,
                deep::room_for(&object.object).is_none(),
                "{depth} levels"
            );
            assert_eq!(object.clone().shallow, object.shallow, "{depth} levels");
        }
        let decode = |depth| -> Unstructured {
            crate::decode_json(deep_text(depth, "").as_bytes()).unwrap()
        };
        let mut edited = decode(3);
        assert!(edited.shallow);
        edited.as_map_mut();
        assert!(!edited.shallow);
        let mut set = decode(3);
        set.set_nested_field(json!({"a": [1]}), &["spec", "y"])
            .unwrap();
        assert!(!set.shallow);
        // A shallow object made deep through its map is walked again, and fits a small stack.
        on_small_stack(move || {
            let mut object = decode(3);
            let deep = decode(10_000).into_map();
            object
                .as_map_mut()
                .insert("deep".to_owned(), Value::Object(deep));
            let copy = object.clone();
            assert!(copy == object);
            assert!(serde_json::to_vec(&object).unwrap().len() > 20_000);
            assert!(format!("{object:?}").len() > 20_000);
        });
    }

    #[test]
    fn an_object_as_deep_as_the_apiserver_stores_is_usable_on_a_small_stack() {
        on_small_stack(|| {
            let text = deep_text(10_000, "");
            let object: Unstructured = crate::decode_json(text.as_bytes()).unwrap();
            assert_eq!(object.name(), "d");
            let copy = object.clone();
            assert!(copy == object);
            assert_eq!(serde_json::to_string(&copy).unwrap(), text);
            assert!(format!("{copy:?}").starts_with("Unstructured { object: {"));
            drop(copy);
            let value = Value::from(object.clone());
            assert!(Unstructured::from_value(value).unwrap() == object);
            let map: Value = object.clone().into_typed().unwrap();
            assert!(map.is_object());
            std::mem::forget(map);
            drop(object);
            // Two of them in a list.
            let list = format!(r#"{{"items":[{text},{text}]}}"#);
            let list: UnstructuredList = crate::decode_json(list.as_bytes()).unwrap();
            assert_eq!(list.items.len(), 2);
            drop(list.clone());
            drop(list);
        });
    }

    #[test]
    fn a_bad_answer_after_a_deep_value_is_an_error_not_a_stack_overflow() {
        on_small_stack(|| {
            // The deep value is whole when the error comes, at its level and further out.
            for tail in [r#","b":tru"#, "]"] {
                let text = deep_text(10_000, tail);
                let err = crate::decode_json::<Unstructured>(text.as_bytes()).unwrap_err();
                assert!(err.is_syntax(), "{err}");
                let list = format!(r#"{{"items":[{},{text}]}}"#, deep_text(10_000, ""));
                let err = crate::decode_json::<UnstructuredList>(list.as_bytes()).unwrap_err();
                assert!(err.is_syntax(), "{err}");
            }
            // An error deep inside, with deep values whole beside it on every level.
            let sibling = deep_text(5_000, "");
            let text = format!(
                r#"{{"spec":{}{{"x":tru}}{}}}"#,
                format!("[{sibling},").repeat(60),
                "]".repeat(60)
            );
            let err = crate::decode_json::<Unstructured>(text.as_bytes()).unwrap_err();
            assert!(err.is_syntax(), "{err}");
        });
    }
}
