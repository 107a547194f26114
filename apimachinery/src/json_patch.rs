//! JSON Patch (`application/json-patch+json`, RFC 6902): a list of operations addressed by
//! JSON Pointers (RFC 6901), and the one applier of them, [`apply_json_patch`] for a patch as
//! JSON and [`JsonPatch::apply`] for the typed form, both through [`apply_operation`]. It
//! follows kube-apiserver's json-patch library rather than the RFC's letter; where the two
//! part is listed on [`apply_json_patch`].

use std::fmt;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

/// One JSON Patch operation: a JSON object with its `op` and that op's members (an array
/// is refused, as the server's decoding refuses it, though serde would read one in order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(remote = "Self", tag = "op", rename_all = "lowercase")]
pub enum JsonPatchOperation {
    /// Adds a value: inserts into an array (`-` appends), or sets an object member.
    Add {
        /// Where, as a JSON Pointer.
        path: String,
        /// The value.
        value: Value,
    },
    /// Removes the value at `path`, which must exist.
    Remove {
        /// Where, as a JSON Pointer.
        path: String,
    },
    /// Replaces the value at `path`; an object member that does not exist is added, as the
    /// server does.
    Replace {
        /// Where, as a JSON Pointer.
        path: String,
        /// The new value.
        value: Value,
    },
    /// Moves the value at `from`, which must exist, to `path`.
    Move {
        /// The source, as a JSON Pointer.
        from: String,
        /// The destination, as a JSON Pointer.
        path: String,
    },
    /// Copies the value at `from` to `path` (`null` when `from` names a missing member, as
    /// on the server).
    Copy {
        /// The source, as a JSON Pointer.
        from: String,
        /// The destination, as a JSON Pointer.
        path: String,
    },
    /// Fails the patch unless the value at `path` equals `value` (a missing member equals
    /// `null`, as on the server).
    Test {
        /// Where, as a JSON Pointer.
        path: String,
        /// The expected value.
        value: Value,
    },
}

impl Serialize for JsonPatchOperation {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        JsonPatchOperation::serialize(self, serializer)
    }
}

impl<'de> Deserialize<'de> for JsonPatchOperation {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // An object only: serde's derive would also read `["add", "/a", 1]` by position.
        let members = Map::<String, Value>::deserialize(deserializer)?;
        JsonPatchOperation::deserialize(Value::Object(members)).map_err(D::Error::custom)
    }
}

/// A JSON Patch document: operations applied in order, all or nothing, with the server's
/// semantics (see [`apply_json_patch`] for where they depart from RFC 6902).
///
/// ```
/// use kclient_apimachinery::{JsonPatch, JsonPatchOperation};
/// use serde_json::json;
///
/// let patch = JsonPatch(vec![
///     JsonPatchOperation::Test { path: "/metadata/resourceVersion".into(), value: json!("7") },
///     JsonPatchOperation::Replace { path: "/spec/replicas".into(), value: json!(3) },
///     JsonPatchOperation::Add { path: "/metadata/labels/tier".into(), value: json!("web") },
/// ]);
/// assert_eq!(
///     serde_json::to_string(&patch.0[1]).unwrap(),
///     r#"{"op":"replace","path":"/spec/replicas","value":3}"#
/// );
///
/// let mut doc = json!({"metadata": {"resourceVersion": "7", "labels": {}}, "spec": {"replicas": 1}});
/// patch.apply(&mut doc)?;
/// assert_eq!(doc["spec"]["replicas"], 3);
/// # Ok::<(), kclient_apimachinery::JsonPatchError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct JsonPatch(pub Vec<JsonPatchOperation>);

impl JsonPatch {
    /// Applies every operation to `doc` as kube-apiserver would (the same code as
    /// [`apply_json_patch`]); on error `doc` is left unchanged.
    pub fn apply(&self, doc: &mut Value) -> Result<(), JsonPatchError> {
        let mut work = doc.clone();
        let mut copied = 0;
        for (index, op) in self.0.iter().enumerate() {
            apply_operation(&mut work, &op.fields(), &mut copied)
                .map_err(|reason| JsonPatchError::operation(index, reason))?;
        }
        *doc = work;
        Ok(())
    }
}

/// Applies a JSON patch given as JSON (a request body, say) to a copy of `doc` as
/// kube-apiserver would, all or nothing.
///
/// The server applies JSON patches with the `evanphx/json-patch` v4 library, as do `kubectl
/// patch --local`, controllers and client-go users checking a patch locally; so does kclient,
/// here and in [`JsonPatch::apply`], and its fake. The library departs from RFC 6902 where a
/// user can see it:
///
/// - `replace` of an object member that does not exist adds it (the RFC says it fails);
///   `replace` of an array index past the end fails;
/// - `test` of a missing member passes when the value is `null` or absent; `test` compares
///   scalars by their JSON text, the document's as the server writes it against the
///   patch's: `3.0` and `3e0` do not equal `3`, and a string holding `<`, `>`, `&`, U+2028
///   or U+2029 equals nothing (the server writes those escaped, kclient sends them as they
///   are);
/// - `copy` from a missing object member copies `null`; `move` from one fails;
/// - `add`, `replace` and `copy` without a `value` (or with `null`) write `null`;
/// - `replace` of the whole document (path `""`) takes an object or an array, nothing else;
/// - array indexes are parsed as Go's `strconv.Atoi` parses them (`01` is 1, `+1` is 1), and a
///   negative index counts from the end (`-1` in an `add` appends); `-` appends in an `add`
///   and fails elsewhere;
/// - the first segment of a path is not read (`data/k` is `/k`), and a path without a `/`
///   (`""` for `add`, `remove`, `move` and `copy`) fails;
/// - pointer escapes are not checked (`~2` stays as it is);
/// - an unknown or missing `op`, or a missing `path` or `from`, fails that operation;
/// - the values the `copy` operations of one patch copy may add up to 3 MiB of JSON (the
///   server's `JSONPatchMaxCopyBytes`); the `copy` that goes past it fails.
///
/// A `patch` that is not a list of objects is [malformed](JsonPatchError::is_malformed):
/// the server answers it with 400 (BadRequest). An operation that cannot be applied
/// [fails](JsonPatchError::is_operation_failed): the server answers that with 422 (Invalid).
/// The server's request handler also refuses a patch of more than 10000 operations (413)
/// before applying it; that limit is the handler's and is not checked here.
///
/// ```
/// use kclient_apimachinery::apply_json_patch;
/// use serde_json::json;
///
/// let doc = json!({"data": {"k": "v"}});
/// let patched = apply_json_patch(
///     &doc,
///     &json!([{"op": "test", "path": "/data/k", "value": "v"},
///             {"op": "replace", "path": "/data/new", "value": "x"}]),
/// )?;
/// assert_eq!(patched, json!({"data": {"k": "v", "new": "x"}}));
///
/// let err = apply_json_patch(&doc, &json!([{"op": "remove", "path": "/data/nope"}])).unwrap_err();
/// assert!(err.is_operation_failed());
/// assert_eq!(err.index(), Some(0));
/// assert!(apply_json_patch(&doc, &json!({"op": "add"})).unwrap_err().is_malformed());
/// # Ok::<(), kclient_apimachinery::JsonPatchError>(())
/// ```
pub fn apply_json_patch(doc: &Value, patch: &Value) -> Result<Value, JsonPatchError> {
    let Some(ops) = patch.as_array() else {
        return Err(JsonPatchError::malformed(
            None,
            "the patch is not a list of operations".to_owned(),
        ));
    };
    // The server decodes the whole list before applying any of it; `null` decodes to an
    // operation without members.
    if let Some((index, bad)) = ops
        .iter()
        .enumerate()
        .find(|(_, op)| !op.is_object() && !op.is_null())
    {
        return Err(JsonPatchError::malformed(
            Some(index),
            format!("operation {index} is not an object: {bad}"),
        ));
    }
    let mut doc = doc.clone();
    let mut copied = 0;
    for (index, op) in ops.iter().enumerate() {
        apply_operation(&mut doc, &Fields::of_json(op), &mut copied)
            .map_err(|reason| JsonPatchError::operation(index, reason))?;
    }
    Ok(doc)
}

/// A JSON patch that is not one, or an operation of one that could not be applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPatchError {
    malformed: bool,
    index: Option<usize>,
    reason: String,
}

impl JsonPatchError {
    fn malformed(index: Option<usize>, reason: String) -> Self {
        JsonPatchError {
            malformed: true,
            index,
            reason,
        }
    }

    fn operation(index: usize, reason: String) -> Self {
        JsonPatchError {
            malformed: false,
            index: Some(index),
            reason,
        }
    }

    /// The index of the operation that failed or is not an object; `None` when the patch
    /// is not a list at all.
    pub fn index(&self) -> Option<usize> {
        self.index
    }

    /// Whether the patch is not a JSON patch: not a list, or an element of it not an
    /// object. The server answers such a body with 400 (BadRequest).
    pub fn is_malformed(&self) -> bool {
        self.malformed
    }

    /// Whether an operation could not be applied: a missing path, a failed `test`, an
    /// unknown `op`, a bad array index, ... The server answers such a patch with 422
    /// (Invalid).
    pub fn is_operation_failed(&self) -> bool {
        !self.malformed
    }
}

impl fmt::Display for JsonPatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.malformed, self.index) {
            (false, Some(index)) => {
                write!(f, "json patch operation {index} failed: {}", self.reason)
            }
            _ => write!(f, "invalid json patch: {}", self.reason),
        }
    }
}

impl std::error::Error for JsonPatchError {}

/// Escapes one reference token of a JSON Pointer (`~` → `~0`, `/` → `~1`), such as a label
/// key with a `/` in it.
pub fn escape_json_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// A member of an operation as the server's library reads it.
enum Member<'a> {
    /// Absent or `null`.
    Missing,
    String(&'a str),
    Other(&'a Value),
}

/// The members of one operation, from JSON or from a [`JsonPatchOperation`], so that both
/// forms go through [`apply_operation`].
struct Fields<'a> {
    op: Member<'a>,
    path: Member<'a>,
    from: Member<'a>,
    /// `None` when absent or `null`: either writes `null`.
    value: Option<&'a Value>,
}

impl<'a> Fields<'a> {
    fn of_json(op: &'a Value) -> Self {
        let member = |name: &str| match op.get(name) {
            None | Some(Value::Null) => Member::Missing,
            Some(Value::String(s)) => Member::String(s),
            Some(other) => Member::Other(other),
        };
        Fields {
            op: member("op"),
            path: member("path"),
            from: member("from"),
            value: op.get("value").filter(|v| !v.is_null()),
        }
    }
}

impl JsonPatchOperation {
    /// The members this operation has when serialised.
    fn fields(&self) -> Fields<'_> {
        let (op, path, from, value) = match self {
            JsonPatchOperation::Add { path, value } => ("add", path, None, Some(value)),
            JsonPatchOperation::Remove { path } => ("remove", path, None, None),
            JsonPatchOperation::Replace { path, value } => ("replace", path, None, Some(value)),
            JsonPatchOperation::Move { from, path } => ("move", path, Some(from), None),
            JsonPatchOperation::Copy { from, path } => ("copy", path, Some(from), None),
            JsonPatchOperation::Test { path, value } => ("test", path, None, Some(value)),
        };
        Fields {
            op: Member::String(op),
            path: Member::String(path),
            from: from.map_or(Member::Missing, |from| Member::String(from)),
            value: value.filter(|v| !v.is_null()),
        }
    }
}

fn string_member<'a>(member: &Member<'a>, name: &str, kind: &str) -> Result<&'a str, String> {
    match *member {
        Member::String(s) => Ok(s),
        Member::Other(other) => Err(format!("{kind} operation: {name} is not a string: {other}")),
        Member::Missing => Err(format!("{kind} operation: missing {name} field")),
    }
}

/// The most the `copy` operations of one patch may add together, in bytes of JSON:
/// kube-apiserver's `JSONPatchMaxCopyBytes`. Without it a patch of a few dozen operations,
/// each copying a value into itself, doubles the document each time.
const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Applies one operation; `copied` is what the patch's `copy` operations added so far.
fn apply_operation(doc: &mut Value, op: &Fields<'_>, copied: &mut usize) -> Result<(), String> {
    let kind = match op.op {
        Member::String(s) => s,
        _ => "unknown",
    };
    let value = op.value.cloned();
    match kind {
        "add" => {
            let path = string_member(&op.path, "path", kind)?;
            let (parent, key) = parent_of(doc, path).ok_or_else(|| {
                format!("add operation does not apply: doc is missing path: {path:?}")
            })?;
            add(parent, &key, value.unwrap_or(Value::Null))
                .map_err(|e| format!("error in add for path {path:?}: {e}"))
        }
        "remove" => {
            let path = string_member(&op.path, "path", kind)?;
            let (parent, key) = parent_of(doc, path).ok_or_else(|| {
                format!("remove operation does not apply: doc is missing path: {path:?}")
            })?;
            remove(parent, &key)
                .map(|_| ())
                .map_err(|e| format!("error in remove for path {path:?}: {e}"))
        }
        "replace" => {
            let path = string_member(&op.path, "path", kind)?;
            if path.is_empty() {
                return match value {
                    Some(v @ (Value::Object(_) | Value::Array(_))) => {
                        *doc = v;
                        Ok(())
                    }
                    _ => Err("replace operation value must be object or array".into()),
                };
            }
            let (parent, key) = parent_of(doc, path).ok_or_else(|| {
                format!("replace operation does not apply: doc is missing path: {path}")
            })?;
            get(parent, &key).map_err(|_| {
                format!("replace operation does not apply: doc is missing key: {path}")
            })?;
            set(parent, &key, value.unwrap_or(Value::Null))
                .map_err(|e| format!("error in replace for path {path:?}: {e}"))
        }
        "move" => {
            let from = string_member(&op.from, "from", kind)?;
            let (parent, key) = parent_of(doc, from).ok_or_else(|| {
                format!("move operation does not apply: doc is missing from path: {from}")
            })?;
            get(parent, &key).map_err(|e| format!("error in move for path {from:?}: {e}"))?;
            let moved = remove(parent, &key)
                .map_err(|e| format!("error in move for path {from:?}: {e}"))?;
            let path = string_member(&op.path, "path", kind)?;
            let (parent, key) = parent_of(doc, path).ok_or_else(|| {
                format!("move operation does not apply: doc is missing destination path: {path}")
            })?;
            add(parent, &key, moved).map_err(|e| format!("error in move for path {path:?}: {e}"))
        }
        "copy" => {
            let from = string_member(&op.from, "from", kind)?;
            let (parent, key) = parent_of(doc, from).ok_or_else(|| {
                format!("copy operation does not apply: doc is missing from path: {from}")
            })?;
            let source =
                get(parent, &key).map_err(|e| format!("error in copy for from {from:?}: {e}"))?;
            // Measured before it is cloned, so that a refused copy allocates nothing.
            *copied = copied.saturating_add(source.map_or(0, json_len));
            if *copied > MAX_COPY_BYTES {
                return Err(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is \
                     {copied}, exceeding the limit {MAX_COPY_BYTES}"
                ));
            }
            let value = source.cloned().unwrap_or(Value::Null);
            let path = string_member(&op.path, "path", kind)?;
            let (parent, key) = parent_of(doc, path).ok_or_else(|| {
                format!("copy operation does not apply: doc is missing destination path: {path}")
            })?;
            add(parent, &key, value).map_err(|e| format!("error in copy for path {path:?}: {e}"))
        }
        "test" => {
            let path = string_member(&op.path, "path", kind)?;
            let failed = || format!("testing value {path} failed");
            if path.is_empty() {
                return match &value {
                    Some(v) if json_equal(doc, v) => Ok(()),
                    _ => Err(failed()),
                };
            }
            let (parent, key) = parent_of(doc, path)
                .ok_or_else(|| format!("test operation does not apply: is missing path: {path}"))?;
            let found =
                get(parent, &key).map_err(|e| format!("error in test for path {path:?}: {e}"))?;
            match (found, &value) {
                (None, None) => Ok(()),
                (Some(a), Some(b)) if json_equal(a, b) => Ok(()),
                _ => Err(failed()),
            }
        }
        other => Err(format!("Unexpected kind: {other}")),
    }
}

/// The length of `value` written as compact JSON, without writing it anywhere.
fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 = self.0.saturating_add(bytes.len());
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing a `Value` fails only when the writer does, and this one does not.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// RFC 6901's unescaping: `~1` to `/`, then `~0` to `~`.
fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

/// The container of the value `path` names, and the last token: the first segment of the
/// path is skipped, every other but the last must name an object or array.
fn parent_of<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let segments: Vec<&str> = path.split('/').collect();
    if segments.len() < 2 {
        return None;
    }
    let key = unescape(segments[segments.len() - 1]);
    let mut current = doc;
    for segment in &segments[1..segments.len() - 1] {
        let token = unescape(segment);
        let next = match current {
            Value::Object(map) => map.get_mut(&token),
            Value::Array(items) => {
                let len = items.len();
                index(&token, len, len).ok().and_then(|i| items.get_mut(i))
            }
            _ => None,
        }?;
        if !next.is_object() && !next.is_array() {
            return None;
        }
        current = next;
    }
    Some((current, key))
}

/// An array index as the library reads it: Go's `strconv.Atoi`, a negative index counted
/// back from `negative_base`, and at most `limit - 1`.
fn index(token: &str, negative_base: usize, limit: usize) -> Result<usize, String> {
    let raw: i64 = token
        .parse()
        .map_err(|_| format!("value was not a proper array index: {token:?}"))?;
    let base = i64::try_from(negative_base).unwrap_or(i64::MAX);
    let adjusted = if raw < 0 {
        if raw < -base {
            return Err(format!("Unable to access invalid index: {raw}"));
        }
        raw + base
    } else {
        raw
    };
    match usize::try_from(adjusted) {
        Ok(i) if i < limit => Ok(i),
        _ => Err(format!("Unable to access invalid index: {raw}")),
    }
}

/// The value at `key` in `parent`: `None` for an object member that is missing or `null`;
/// an error for an array index that is not one.
fn get<'a>(parent: &'a Value, key: &str) -> Result<Option<&'a Value>, String> {
    match parent {
        Value::Object(map) => Ok(map.get(key).filter(|v| !v.is_null())),
        Value::Array(items) => {
            let i = index(key, items.len(), items.len())?;
            Ok(items.get(i).filter(|v| !v.is_null()))
        }
        _ => Err("not a container".into()),
    }
}

fn add(parent: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match parent {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) if key == "-" => {
            items.push(value);
            Ok(())
        }
        Value::Array(items) => {
            let size = items.len() + 1;
            let i = index(key, size, size)?;
            items.insert(i, value);
            Ok(())
        }
        _ => Err("not a container".into()),
    }
}

fn set(parent: &mut Value, key: &str, value: Value) -> Result<(), String> {
    match parent {
        Value::Object(map) => {
            map.insert(key.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            let i = index(key, items.len(), items.len())?;
            items[i] = value;
            Ok(())
        }
        _ => Err("not a container".into()),
    }
}

/// Removes the value at `key`; an object member must exist (`null` counts).
fn remove(parent: &mut Value, key: &str) -> Result<Value, String> {
    match parent {
        Value::Object(map) => map
            .remove(key)
            .ok_or_else(|| format!("Unable to remove nonexistent key: {key}")),
        Value::Array(items) => {
            let i = index(key, items.len(), items.len())?;
            Ok(items.remove(i))
        }
        _ => Err("not a container".into()),
    }
}

/// Whether the document's value `doc` equals the `test` operation's `value`, as the library
/// decides it: objects and arrays member by member, and scalars by their JSON text, the
/// document's as the server writes it against the patch's as sent. A value as sent is only
/// known here decoded, so it is taken to be written as serde_json writes it (`<` as itself,
/// a number with a fraction or exponent as a float).
fn json_equal(doc: &Value, value: &Value) -> bool {
    match (doc, value) {
        (Value::Number(d), Value::Number(v)) => numbers_equal(d, v),
        (Value::Array(d), Value::Array(v)) => {
            d.len() == v.len() && d.iter().zip(v).all(|(d, v)| json_equal(d, v))
        }
        (Value::Object(d), Value::Object(v)) => objects_equal(d, v),
        (Value::String(d), Value::String(v)) => d == v && !d.contains(escaped_by_the_server),
        _ => doc == value,
    }
}

/// The characters the server writes escaped in the document (Go's HTML-safe JSON: `<` as
/// `\u003c`, ...), so that the document's text for a string holding one differs from the
/// patch's as kclient sends it.
fn escaped_by_the_server(c: char) -> bool {
    matches!(c, '<' | '>' | '&' | '\u{2028}' | '\u{2029}')
}

fn objects_equal(doc: &Map<String, Value>, value: &Map<String, Value>) -> bool {
    doc.len() == value.len()
        && doc
            .iter()
            .all(|(k, d)| value.get(k).is_some_and(|v| json_equal(d, v)))
}

/// The server writes an integral number as an integer (`3`, also when it was sent as
/// `3.0`), so the number in a patch equals it only when written as one: `3` equals a stored
/// `3` or `3.0`, `3.0` and `3e0` equal neither; a fraction equals the same fraction.
fn numbers_equal(doc: &Number, value: &Number) -> bool {
    let integer = |n: &Number| {
        n.as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
    };
    let integral_doc = doc.as_f64().is_some_and(|f| f.fract() == 0.0);
    match (integer(doc), integer(value)) {
        (Some(d), Some(v)) => d == v,
        (None, Some(_)) => integral_doc && doc.as_f64() == value.as_f64(),
        (_, None) => !integral_doc && doc.as_f64() == value.as_f64(),
    }
}

/// The JSON Patch that turns `original` into `modified` (what `jsonpatch.CreatePatch` gives an
/// admission webhook that mutates objects): objects are compared member by member, arrays
/// element by element (elements past the shorter one's end are removed from the end, or
/// appended), and anything else that differs is replaced; equal values give no operation.
/// Applied to `original` ([`JsonPatch::apply`]), it gives `modified` whenever `modified` is
/// an object or an array: a document that is neither (`3`, `"x"`, `null`) gives a `replace`
/// of the root, which the applier, as the server's library, refuses.
///
/// ```
/// use kclient_apimachinery::create_json_patch;
/// use serde_json::json;
///
/// let original = json!({"metadata": {"labels": {"a": "1", "b/c": "2"}}, "spec": {"ports": [80]}});
/// let modified = json!({"metadata": {"labels": {"a": "9"}}, "spec": {"ports": [80, 443]}});
/// let patch = create_json_patch(&original, &modified);
/// assert_eq!(
///     serde_json::to_value(&patch).unwrap(),
///     json!([
///         {"op": "remove", "path": "/metadata/labels/b~1c"},
///         {"op": "replace", "path": "/metadata/labels/a", "value": "9"},
///         {"op": "add", "path": "/spec/ports/1", "value": 443},
///     ])
/// );
/// let mut doc = original.clone();
/// patch.apply(&mut doc).unwrap();
/// assert_eq!(doc, modified);
/// ```
pub fn create_json_patch(original: &Value, modified: &Value) -> JsonPatch {
    let mut operations = Vec::new();
    diff_into(original, modified, "", &mut operations);
    JsonPatch(operations)
}

/// Appends to `out` the operations that turn `a` into `b`, both at `path`.
fn diff_into(a: &Value, b: &Value, path: &str, out: &mut Vec<JsonPatchOperation>) {
    if a == b {
        return;
    }
    let at = |path: &str, token: &str| format!("{path}/{}", escape_json_pointer_token(token));
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            for key in a.keys().filter(|key| !b.contains_key(*key)) {
                out.push(JsonPatchOperation::Remove {
                    path: at(path, key),
                });
            }
            for (key, new) in b {
                let member = at(path, key);
                match a.get(key) {
                    Some(old) => diff_into(old, new, &member, out),
                    None => out.push(JsonPatchOperation::Add {
                        path: member,
                        value: new.clone(),
                    }),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for (index, (old, new)) in a.iter().zip(b).enumerate() {
                diff_into(old, new, &at(path, &index.to_string()), out);
            }
            // Removed from the end, so that each index is still the element's.
            for index in (b.len()..a.len()).rev() {
                out.push(JsonPatchOperation::Remove {
                    path: at(path, &index.to_string()),
                });
            }
            for (index, new) in b.iter().enumerate().skip(a.len()) {
                out.push(JsonPatchOperation::Add {
                    path: at(path, &index.to_string()),
                    value: new.clone(),
                });
            }
        }
        _ => out.push(JsonPatchOperation::Replace {
            path: path.to_owned(),
            value: b.clone(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn patch(ops: Value) -> JsonPatch {
        serde_json::from_value(ops).unwrap()
    }

    /// Applies `ops` both as JSON and typed (when they decode as typed operations), checks
    /// that the two agree, and returns the JSON form's outcome.
    fn run(doc: &Value, ops: &Value) -> Result<Value, JsonPatchError> {
        let raw = apply_json_patch(doc, ops);
        if let Ok(typed) = serde_json::from_value::<JsonPatch>(ops.clone()) {
            let mut target = doc.clone();
            let outcome = typed.apply(&mut target).map(|()| target);
            assert_eq!(outcome, raw, "typed and JSON forms differ for {ops}");
        }
        raw
    }

    /// An operation is a JSON object, as the server decodes one: an array in the op's field
    /// order, which serde's derive would read by position, is refused, so the typed form
    /// refuses what `apply_json_patch` calls malformed (a finding of the json_patch fuzz
    /// target, `fuzz/corpus/json_patch/regress-array-operation.json`).
    #[test]
    fn an_operation_is_an_object_not_an_array() {
        let as_array = serde_json::from_value::<JsonPatch>(json!([["add", "/a", 1]]));
        assert!(as_array.is_err(), "{as_array:?}");
        assert!(serde_json::from_str::<JsonPatchOperation>(r#"["remove", "/a"]"#).is_err());
        let op = JsonPatchOperation::Add {
            path: "/a".into(),
            value: json!(1),
        };
        let written = serde_json::to_value(&op).unwrap();
        assert_eq!(written, json!({"op": "add", "path": "/a", "value": 1}));
        assert_eq!(
            serde_json::from_value::<JsonPatchOperation>(written).unwrap(),
            op
        );
        assert!(
            apply_json_patch(&json!({}), &json!([["add", "/a", 1]]))
                .unwrap_err()
                .is_malformed()
        );
    }

    #[test]
    fn rfc_6902_appendix_a_examples() {
        // (document, patch, result or None for an error)
        let cases: Vec<(Value, Value, Option<Value>)> = vec![
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/baz","value":"qux"}]),
                Some(json!({"baz":"qux","foo":"bar"})),
            ),
            (
                json!({"foo":["bar","baz"]}),
                json!([{"op":"add","path":"/foo/1","value":"qux"}]),
                Some(json!({"foo":["bar","qux","baz"]})),
            ),
            (
                json!({"baz":"qux","foo":"bar"}),
                json!([{"op":"remove","path":"/baz"}]),
                Some(json!({"foo":"bar"})),
            ),
            (
                json!({"foo":["bar","qux","baz"]}),
                json!([{"op":"remove","path":"/foo/1"}]),
                Some(json!({"foo":["bar","baz"]})),
            ),
            (
                json!({"baz":"qux","foo":"bar"}),
                json!([{"op":"replace","path":"/baz","value":"boo"}]),
                Some(json!({"baz":"boo","foo":"bar"})),
            ),
            (
                json!({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}),
                json!([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]),
                Some(json!({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}})),
            ),
            (
                json!({"foo":["all","grass","cows","eat"]}),
                json!([{"op":"move","from":"/foo/1","path":"/foo/3"}]),
                Some(json!({"foo":["all","cows","eat","grass"]})),
            ),
            (
                json!({"baz":"qux","foo":["a",2,"c"]}),
                json!([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]),
                Some(json!({"baz":"qux","foo":["a",2,"c"]})),
            ),
            (
                json!({"baz":"qux"}),
                json!([{"op":"test","path":"/baz","value":"bar"}]),
                None,
            ),
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/child","value":{"grandchild":{}}}]),
                Some(json!({"foo":"bar","child":{"grandchild":{}}})),
            ),
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/baz/bat","value":"qux"}]),
                None,
            ),
            (
                json!({"/":9,"~1":10}),
                json!([{"op":"test","path":"/~01","value":10}]),
                Some(json!({"/":9,"~1":10})),
            ),
            (
                json!({"foo":["bar"]}),
                json!([{"op":"add","path":"/foo/-","value":["abc","def"]}]),
                Some(json!({"foo":["bar",["abc","def"]]})),
            ),
            (
                json!({"a":{"b":1}}),
                json!([{"op":"copy","from":"/a","path":"/c"}]),
                Some(json!({"a":{"b":1},"c":{"b":1}})),
            ),
        ];
        for (doc, ops, expected) in cases {
            let mut target = doc.clone();
            let result = patch(ops.clone()).apply(&mut target);
            match expected {
                Some(expected) => {
                    assert_eq!(result, Ok(()), "{ops}");
                    assert_eq!(target, expected, "{ops}");
                    assert_eq!(run(&doc, &ops), Ok(expected), "{ops}");
                }
                None => {
                    let err = result.expect_err("should fail");
                    assert!(err.is_operation_failed(), "{ops}");
                    assert_eq!(target, doc, "a failed patch leaves the document unchanged");
                    assert!(run(&doc, &ops).is_err(), "{ops}");
                }
            }
        }
    }

    #[test]
    fn follows_the_servers_library_where_it_departs_from_the_rfc() {
        let doc = json!({"spec": {"k": "v", "list": ["a", "b"], "x~y": 1, "a/b": 2}});
        let ok = |ops: Value| run(&doc, &ops).expect("applies");
        let refused = |ops: Value| run(&doc, &ops).expect_err("refused");
        assert_eq!(
            ok(json!([{"op": "replace", "path": "/spec/nope", "value": 1}]))["spec"]["nope"],
            1
        );
        assert_eq!(
            ok(json!([{"op": "test", "path": "/spec/nope", "value": null}])),
            doc
        );
        assert_eq!(
            ok(json!([{"op": "test", "path": "/spec/nope"}])),
            doc,
            "a test without value is one against null"
        );
        assert_eq!(
            ok(json!([{"op": "copy", "from": "/spec/nope", "path": "/spec/c"}]))["spec"]["c"],
            Value::Null
        );
        assert_eq!(
            ok(json!([{"op": "add", "path": "/spec/n"}]))["spec"]["n"],
            Value::Null
        );
        assert_eq!(
            ok(json!([{"op": "add", "path": "/spec/list/-1", "value": "z"}]))["spec"]["list"],
            json!(["a", "b", "z"])
        );
        assert_eq!(
            ok(json!([{"op": "add", "path": "/spec/list/01", "value": "z"}]))["spec"]["list"],
            json!(["a", "z", "b"])
        );
        assert_eq!(
            ok(json!([{"op": "add", "path": "/spec/list/+0", "value": "z"}]))["spec"]["list"],
            json!(["z", "a", "b"])
        );
        assert_eq!(
            ok(json!([{"op": "remove", "path": "/spec/list/-1"}]))["spec"]["list"],
            json!(["a"])
        );
        assert_eq!(
            ok(json!([{"op": "replace", "path": "/spec/x~0y", "value": 3},
                {"op": "remove", "path": "/spec/a~1b"}]))["spec"],
            json!({"k": "v", "list": ["a", "b"], "x~y": 3})
        );
        assert_eq!(
            ok(json!([{"op": "add", "path": "spec/top", "value": 1}]))["top"],
            1
        );
        assert_eq!(
            ok(json!([{"op": "replace", "path": "", "value": [1]}])),
            json!([1])
        );
        assert_eq!(
            ok(json!([{"op": "test", "path": "", "value": doc.clone()}])),
            doc
        );
        for ops in [
            json!([{"op": "remove", "path": "/spec/nope"}]),
            json!([{"op": "move", "from": "/spec/nope", "path": "/spec/m"}]),
            json!([{"op": "move", "from": "/spec", "path": "/spec/inner"}]),
            json!([{"op": "add", "path": "/spec/list/3", "value": "z"}]),
            json!([{"op": "add", "path": "/spec/list/-4", "value": "z"}]),
            json!([{"op": "add", "path": "/spec/list/x", "value": "z"}]),
            json!([{"op": "replace", "path": "/spec/list/-", "value": "z"}]),
            json!([{"op": "replace", "path": "/spec/list/2", "value": "z"}]),
            json!([{"op": "replace", "path": "", "value": 1}]),
            json!([{"op": "remove", "path": "/spec/list/-"}]),
            json!([{"op": "remove", "path": "/spec/list/-3"}]),
            json!([{"op": "remove", "path": "/spec/x~2y"}]),
            json!([{"op": "test", "path": "/spec/k", "value": "other"}]),
            json!([{"op": "test", "path": "/spec/nope", "value": "other"}]),
            json!([{"op": "test", "path": "/spec/k"}]),
            json!([{"op": "add", "path": "", "value": {}}]),
            json!([{"op": "remove", "path": ""}]),
            json!([{"op": "add", "path": "/spec/nope/deeper", "value": 1}]),
            json!([{"op": "add", "path": "/spec/k/deeper", "value": 1}]),
            json!([{"op": "bogus", "path": "/spec/k"}]),
            json!([{"op": 1, "path": "/spec/k"}]),
            json!([{"path": "/spec/k", "value": 1}]),
            json!([{"op": "add", "value": 1}]),
            json!([{"op": "add", "path": 1, "value": 1}]),
            json!([{"op": "copy", "path": "/spec/c"}]),
            json!([null]),
        ] {
            let err = refused(ops.clone());
            assert!(err.is_operation_failed() && !err.is_malformed(), "{ops}");
            assert_eq!(err.index(), Some(0), "{ops}");
        }
        let err = refused(json!({"op": "add"}));
        assert!(err.is_malformed() && !err.is_operation_failed());
        assert_eq!(err.index(), None);
        assert!(err.to_string().starts_with("invalid json patch"), "{err}");
        // The whole list is read before any of it applies.
        let err = refused(json!([{"op": "bogus"}, 1]));
        assert!(err.is_malformed());
        assert_eq!(err.index(), Some(1));
        assert_eq!(ok(json!([])), doc);
    }

    #[test]
    fn a_failed_operation_names_its_index_and_changes_nothing() {
        let doc = json!({"a": [1, 2], "s": "x"});
        let ops = json!([{"op": "test", "path": "/s", "value": "x"},
            {"op": "add", "path": "/b", "value": 1},
            {"op": "remove", "path": "/nope"}]);
        let mut target = doc.clone();
        let err = patch(ops.clone()).apply(&mut target).unwrap_err();
        assert_eq!(err.index(), Some(2));
        assert!(err.is_operation_failed());
        assert!(
            err.to_string()
                .starts_with("json patch operation 2 failed: "),
            "{err}"
        );
        assert_eq!(target, doc);
        assert_eq!(run(&doc, &ops), Err(err));
    }

    #[test]
    fn numbers_compare_as_the_server_writes_them() {
        let doc = json!({"n": 3, "f": 3.0, "half": 2.5, "big": u64::MAX, "m": {"k": 2}});
        let holds = |path: &str, value: Value| {
            run(&doc, &json!([{"op": "test", "path": path, "value": value}])).is_ok()
        };
        assert!(holds("/n", json!(3)));
        assert!(holds("/f", json!(3)), "the server writes a stored 3.0 as 3");
        assert!(holds("/half", json!(2.5)));
        assert!(holds("/big", json!(u64::MAX)));
        assert!(holds("/m", json!({"k": 2})));
        assert!(
            !holds("/n", json!(3.0)),
            "3.0 is not the server's text for 3"
        );
        assert!(!holds("/f", json!(3.0)));
        assert!(!holds("/n", json!("3")));
        assert!(!holds("/n", json!(4)));
        assert!(!holds("/big", json!(u64::MAX - 1)));
        assert!(!holds("/half", json!(2.25)));
        assert!(!holds("/m", json!({"k": 2.0})));
    }

    #[test]
    fn strings_the_server_writes_escaped_never_test_equal() {
        let doc = json!({"plain": "é \"q\" \\ \n", "html": "x<y", "list": ["a&b"]});
        let holds = |path: &str, value: Value| {
            run(&doc, &json!([{"op": "test", "path": path, "value": value}])).is_ok()
        };
        assert!(holds("/plain", json!("é \"q\" \\ \n")));
        assert!(!holds("/html", json!("x<y")));
        assert!(!holds("/list", json!(["a&b"])));
        for c in ['<', '>', '&', '\u{2028}', '\u{2029}'] {
            let s = format!("a{c}b");
            let doc = json!({"s": s});
            assert!(
                run(&doc, &json!([{"op": "test", "path": "/s", "value": s}])).is_err(),
                "{c:?}"
            );
        }
    }

    #[test]
    fn copies_are_bounded_as_on_the_server() {
        // Each operation copies the document's only member into itself, doubling it: 13 of
        // them would make 8 MiB from 1 KiB, and 40 a terabyte.
        let doc = json!({"a": {"s": "x".repeat(1024)}});
        let ops: Vec<Value> = (0..40)
            .map(|i| json!({"op": "copy", "from": "/a", "path": format!("/a/c{i}")}))
            .collect();
        let err = run(&doc, &Value::Array(ops)).unwrap_err();
        assert!(err.is_operation_failed(), "{err}");
        // 1 KiB · (2^(n+1) − 1) passes 3 MiB at the twelfth copy (index 11).
        assert_eq!(err.index(), Some(11), "{err}");
        assert!(
            err.to_string().contains("exceeding the limit 3145728"),
            "{err}"
        );

        // The limit is on what the copies add up to, also when each is removed again.
        let big = json!({"big": "y".repeat(1_000_000)});
        let copy_and_remove = |n: usize| {
            let ops: Vec<Value> = (0..n)
                .flat_map(|_| {
                    [
                        json!({"op": "copy", "from": "/big", "path": "/c"}),
                        json!({"op": "remove", "path": "/c"}),
                    ]
                })
                .collect();
            run(&big, &Value::Array(ops))
        };
        assert_eq!(copy_and_remove(3), Ok(big.clone()));
        assert_eq!(copy_and_remove(4).unwrap_err().index(), Some(6));
        // A copy of a missing member adds nothing.
        let ops: Vec<Value> = (0..10)
            .map(|_| json!({"op": "copy", "from": "/nope", "path": "/c"}))
            .collect();
        assert!(run(&big, &Value::Array(ops)).is_ok());
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape_json_pointer_token("app.kubernetes.io/name"),
            "app.kubernetes.io~1name"
        );
        assert_eq!(escape_json_pointer_token("a~b"), "a~0b");
        let mut doc = json!({"metadata":{"labels":{"app.kubernetes.io/name":"x"}}});
        let path = format!(
            "/metadata/labels/{}",
            escape_json_pointer_token("app.kubernetes.io/name")
        );
        JsonPatch(vec![JsonPatchOperation::Remove { path }])
            .apply(&mut doc)
            .unwrap();
        assert_eq!(doc, json!({"metadata":{"labels":{}}}));
    }

    #[test]
    fn hostile_indexes_do_not_panic() {
        let doc = json!({"l": []});
        for token in [
            "99999999999999999999",
            "-9223372036854775808",
            "9223372036854775807",
            "",
            "-0",
            "+0",
        ] {
            for ops in [
                json!([{"op": "add", "path": format!("/l/{token}"), "value": 1}]),
                json!([{"op": "remove", "path": format!("/l/{token}")}]),
                json!([{"op": "replace", "path": format!("/l/{token}"), "value": 1}]),
                json!([{"op": "test", "path": format!("/l/{token}/x"), "value": 1}]),
            ] {
                let _ = run(&doc, &ops);
            }
        }
    }

    /// Any JSON value, with keys that need escaping, empty keys, nested arrays and numbers
    /// written as integers and as floats.
    fn any_json() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-3i64..3).prop_map(Value::from),
            (-3i64..3).prop_map(|n| Value::from(n as f64)),
            Just(json!(1.5)),
            "[-a~/01]{0,3}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map("[-a~/01]{0,3}", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    use proptest::strategy::Strategy as _;

    proptest::proptest! {
        /// Applying `create_json_patch(a, b)` to `a` gives `b`, for any two documents.
        #[test]
        fn any_created_patch_turns_the_original_into_the_modified(
            original in any_json(),
            modified in any_json().prop_filter("a patch's root is an object or array", |v| {
                v.is_object() || v.is_array()
            }),
        ) {
            let patch = create_json_patch(&original, &modified);
            let mut doc = original.clone();
            let applied = patch.apply(&mut doc);
            proptest::prop_assert!(applied.is_ok(), "{original} -> {modified}: {patch:?}: {applied:?}");
            proptest::prop_assert_eq!(&doc, &modified, "{} -> {}: {:?}", original, modified, patch);
        }
    }

    /// A created patch, applied to the original, gives the modified document, for pairs that
    /// cover every kind of change.
    #[test]
    fn created_patches_turn_the_original_into_the_modified() {
        let docs = [
            json!({}),
            json!({"a": 1, "b": {"c": [1, 2, 3], "d": "x"}, "e~/f": null}),
            json!({"a": "1", "b": {"c": [1, {"z": 2}], "g": true}, "e~/f": [null]}),
            json!({"b": {"c": [], "d": "x"}, "h": {"i": {"j": 1.5}}}),
            json!({"b": {"c": [3, 2, 1, 0], "d": {"nested": [[1], [2, 3]]}}}),
            json!({"b": []}),
        ];
        for original in &docs {
            for modified in &docs {
                let patch = create_json_patch(original, modified);
                let mut doc = original.clone();
                patch
                    .apply(&mut doc)
                    .unwrap_or_else(|e| panic!("{original} -> {modified}: {e}"));
                assert_eq!(&doc, modified, "{original} -> {modified}: {patch:?}");
                assert_eq!(patch.0.is_empty(), original == modified);
            }
        }
        // The root itself, when it is not an object on both sides.
        let patch = create_json_patch(&json!([1]), &json!({"a": 1}));
        assert_eq!(
            patch.0,
            [JsonPatchOperation::Replace {
                path: String::new(),
                value: json!({"a": 1})
            }]
        );
    }
}
