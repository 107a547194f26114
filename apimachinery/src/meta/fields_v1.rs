//! [`FieldsV1`], the set of fields one manager owns in `metadata.managedFields`, kept as its
//! exact JSON text and shared between objects that carry the same set.
//!
//! A field set names field *paths*, not values, so objects made from one template carry the
//! same sets: every replica of a ReplicaSet has the same set for the controller that created
//! it, and the same set for each later writer that touched the same fields. Those sets are
//! most of an object's managedFields (3.8 KB of a 8.2 KB Pod in `bench/`), so decoding one looks
//! its text up in a bounded process-wide table and equal sets share one allocation.
//!
//! # The table's bound
//!
//! Texts longer than [`MAX_SHARED_LEN`] are never shared. The table holds at most
//! [`CAPACITY`] texts and [`CAPACITY_BYTES`] bytes of text. The last object holding a set takes
//! it out of the table when dropped; should two holders drop at the same moment and leave it
//! behind, a full table sweeps out the texts no object uses any more, and if still full, a new
//! text is kept by its object alone. So the table never holds more than 32 MiB, and normally
//! nothing that objects do not also hold.

use std::fmt;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use hashbrown::HashTable;

use super::raw::{checked_json, serialize_raw};
use crate::json_decode::{JsonError, deserialize_raw};

use super::fx_hash::FxBuildHasher;
use super::interner;

/// Field sets longer than this are not shared.
pub const MAX_SHARED_LEN: usize = 64 * 1024;
/// The most field sets the table remembers.
pub const CAPACITY: usize = 8192;
/// The most bytes of text the table remembers.
pub const CAPACITY_BYTES: usize = 32 * 1024 * 1024;

/// `metav1.FieldsV1`: a set of fields in the structured-merge-diff JSON format
/// (`{"f:metadata":{"f:labels":{"f:app":{}}}}`), kept as its exact text and shared between
/// objects that carry the same set; see the module documentation of [`meta`](crate::meta).
///
/// Cloning is cheap (a reference count).
#[derive(Clone)]
pub struct FieldsV1(Arc<str>);

impl FieldsV1 {
    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.0
    }

    /// Checks that `json` is valid JSON and wraps it (shared like a decoded set).
    pub fn from_string(json: String) -> Result<Self, serde_json::Error> {
        checked_json(json).map(|text| share(&text))
    }

    /// Encodes `value` as JSON.
    pub fn encode<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, serde_json::Error> {
        serde_json::value::to_raw_value(value).map(|raw| share(raw.get()))
    }

    /// Decodes the JSON into `T` (for example a `serde_json::Value`) with
    /// [`decode_json`](crate::decode_json): the set of an object nested as deep as the
    /// apiserver stores them (10,000 levels) nests as deep.
    pub fn decode<'a, T: serde::Deserialize<'a>>(&'a self) -> Result<T, JsonError> {
        crate::decode_json(self.0.as_bytes())
    }

    /// Whether `self` and `other` share one allocation.
    pub fn ptr_eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Drop for FieldsV1 {
    /// The last object holding a shared set takes it out of the table, so the table does not
    /// keep sets alive that no object uses (sweeps remain for the rare case of two holders
    /// dropping at the same moment).
    fn drop(&mut self) {
        if Arc::strong_count(&self.0) == 2 {
            TABLE
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove_if_unused(&self.0);
        }
    }
}

impl Default for FieldsV1 {
    /// The empty set, `{}`.
    fn default() -> Self {
        share("{}")
    }
}

impl PartialEq for FieldsV1 {
    /// Textual equality.
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}
impl Eq for FieldsV1 {}

impl fmt::Debug for FieldsV1 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl serde::Serialize for FieldsV1 {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_raw(&self.0, serializer)
    }
}

impl<'de> serde::Deserialize<'de> for FieldsV1 {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_raw(deserializer).map(|text| share(text.get()))
    }
}

struct Table {
    /// The shared texts, placed by `hasher`'s hash of their text.
    set: HashTable<Arc<str>>,
    hasher: FxBuildHasher,
    /// Bytes of text in `set`.
    bytes: usize,
    /// Inserts to let pass before sweeping again after a sweep that freed little.
    sweep_backoff: usize,
    capacity: usize,
    capacity_bytes: usize,
}

impl Table {
    fn new(capacity: usize, capacity_bytes: usize) -> Self {
        Table {
            set: HashTable::new(),
            hasher: FxBuildHasher::random(),
            bytes: 0,
            sweep_backoff: 0,
            capacity,
            capacity_bytes,
        }
    }

    fn hash(&self, text: &[u8]) -> u64 {
        self.hasher.hash_text(text)
    }

    fn is_full(&self, len: usize) -> bool {
        self.set.len() >= self.capacity || self.bytes + len > self.capacity_bytes
    }

    /// Whether the table holds a text equal to `text`.
    #[cfg(test)]
    fn contains(&self, text: &str) -> bool {
        self.set
            .find(self.hash(text.as_bytes()), |entry| &**entry == text)
            .is_some()
    }

    /// The shared copy of a text equal byte for byte to `text`, if the table holds one.
    #[cfg(feature = "protobuf")]
    fn find(&self, text: &[u8]) -> Option<Arc<str>> {
        self.set
            .find(self.hash(text), |entry| entry.as_bytes() == text)
            .cloned()
    }

    /// Takes `text` out of the table if the table and the caller are its only holders.
    fn remove_if_unused(&mut self, text: &Arc<str>) {
        if Arc::strong_count(text) != 2 {
            return;
        }
        let hash = self.hash(text.as_bytes());
        if let Ok(entry) = self.set.find_entry(hash, |entry| Arc::ptr_eq(entry, text)) {
            entry.remove();
            self.bytes -= text.len();
        }
    }

    /// The shared copy of `text`, remembering it if there is room.
    fn share(&mut self, text: &str) -> Arc<str> {
        let hash = self.hash(text.as_bytes());
        if let Some(found) = self.set.find(hash, |entry| &**entry == text) {
            return Arc::clone(found);
        }
        let len = text.len();
        if self.is_full(len) {
            if self.sweep_backoff > 0 {
                self.sweep_backoff -= 1;
                return Arc::from(text);
            }
            let mut freed = 0;
            self.set.retain(|entry| {
                let used = Arc::strong_count(entry) > 1;
                if !used {
                    freed += entry.len();
                }
                used
            });
            self.bytes -= freed;
            if self.set.len() >= self.capacity * 3 / 4 || self.bytes >= self.capacity_bytes * 3 / 4
            {
                // Mostly live texts: sweeping again soon would free little and cost much.
                self.sweep_backoff = self.capacity / 4;
            }
            if self.is_full(len) {
                return Arc::from(text);
            }
        }
        let shared: Arc<str> = Arc::from(text);
        self.bytes += len;
        let hasher = self.hasher;
        self.set.insert_unique(hash, Arc::clone(&shared), |entry| {
            hasher.hash_text(entry.as_bytes())
        });
        shared
    }
}

static TABLE: LazyLock<Mutex<Table>> =
    LazyLock::new(|| Mutex::new(Table::new(CAPACITY, CAPACITY_BYTES)));

/// The shared copy of `text` from the process-wide table.
pub(crate) fn share(text: &str) -> FieldsV1 {
    if text.len() > MAX_SHARED_LEN || !interner::is_enabled() {
        return FieldsV1(Arc::from(text));
    }
    // A poisoned lock only means another thread panicked while holding it; the set is still a
    // valid set of texts.
    let mut table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    FieldsV1(table.share(text))
}

/// The shared copy of the text `bytes`. Unless the table already holds an equal text (which
/// passed the same check when it entered), `check` first turns the bytes into the text,
/// validating them as UTF-8 and as JSON: how a field set read from protobuf, whose bytes
/// nothing has scanned yet, skips both scans for sets it has seen.
#[cfg(feature = "protobuf")]
pub(crate) fn share_checked<'b, E>(
    bytes: &'b [u8],
    check: impl FnOnce(&'b [u8]) -> Result<&'b str, E>,
) -> Result<FieldsV1, E> {
    if bytes.len() > MAX_SHARED_LEN || !interner::is_enabled() {
        return Ok(FieldsV1(Arc::from(check(bytes)?)));
    }
    {
        let table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = table.find(bytes) {
            return Ok(FieldsV1(found));
        }
    }
    // Checked without the lock; another thread may insert the same text meanwhile, and
    // `share` then returns that one.
    Ok(share(check(bytes)?))
}

/// How many field sets the process-wide table holds, and their bytes (for tests and memory
/// reports).
pub fn shared_count() -> (usize, usize) {
    let table = TABLE.lock().unwrap_or_else(PoisonError::into_inner);
    (table.set.len(), table.bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(n: usize) -> String {
        format!(r#"{{"f:metadata":{{"f:labels":{{"f:app-{n}":{{}}}}}}}}"#)
    }

    #[test]
    fn equal_sets_share_one_allocation_and_keep_their_text() {
        let a: FieldsV1 = serde_json::from_str(&set(1)).unwrap();
        let b: FieldsV1 = serde_json::from_str(&set(1)).unwrap();
        let c: FieldsV1 = serde_json::from_str(&set(2)).unwrap();
        assert!(a.ptr_eq(&b));
        assert!(!a.ptr_eq(&c));
        assert_eq!(a.get(), set(1));
        assert_eq!(serde_json::to_string(&a).unwrap(), set(1));
        let v: serde_json::Value = a.decode().unwrap();
        assert!(v["f:metadata"]["f:labels"]["f:app-1"].is_object());
    }

    /// The field set of an object nested as deep as the apiserver stores (10,000 levels)
    /// nests as deep, and decodes on a 2 MiB stack.
    #[test]
    fn sets_as_deep_as_the_apiserver_stores_decode() {
        crate::test_support::on_small_stack(|| {
            let text = crate::test_support::nested_objects(10_000);
            let set: FieldsV1 = crate::decode_json(text.as_bytes()).unwrap();
            let decoded: crate::Unstructured = set.decode().unwrap();
            assert!(decoded.as_map().contains_key("a"));
        });
    }

    #[test]
    fn the_last_holder_takes_a_set_out_of_the_table() {
        let text = set(424_242);
        let contained = || {
            TABLE
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&text)
        };
        let a = FieldsV1::from_string(text.clone()).unwrap();
        let b = a.clone();
        assert!(contained());
        drop(a);
        assert!(contained(), "b still holds it");
        drop(b);
        assert!(!contained());
    }

    #[test]
    fn invalid_json_is_an_error() {
        assert!(FieldsV1::from_string("{\"f:a\":".to_owned()).is_err());
        assert!(serde_json::from_str::<FieldsV1>("{\"f:a\" 1}").is_err());
    }

    #[test]
    fn long_sets_are_not_shared() {
        let long = format!(r#"{{"f:data":"{}"}}"#, "x".repeat(MAX_SHARED_LEN));
        let a = FieldsV1::from_string(long.clone()).unwrap();
        let b = FieldsV1::from_string(long).unwrap();
        assert_eq!(a, b);
        assert!(!a.ptr_eq(&b));
    }

    #[test]
    fn the_table_stays_bounded_and_sweeps_unused_texts() {
        let raw = |n: usize| set(n);
        let mut table = Table::new(16, 10_000);
        let kept: Vec<_> = (0..20).map(|i| table.share(&raw(i))).collect();
        assert_eq!(table.set.len(), 16, "the first 16 are remembered");
        assert!(Arc::ptr_eq(&kept[3], &table.share(&raw(3))));
        assert!(!Arc::ptr_eq(&kept[18], &table.share(&raw(18))));
        drop(kept);
        // The next new text finds the table full, sweeps out the unused ones and is remembered.
        let again = table.share(&raw(100));
        assert_eq!(table.set.len(), 1);
        assert_eq!(table.bytes, again.len());
        assert!(Arc::ptr_eq(&again, &table.share(&raw(100))));
        // The byte bound holds too.
        let mut small = Table::new(1000, 100);
        let texts: Vec<_> = (0..10).map(|i| small.share(&raw(i))).collect();
        assert!(small.bytes <= 100, "{} bytes", small.bytes);
        assert!(small.set.len() < texts.len());
    }
}
