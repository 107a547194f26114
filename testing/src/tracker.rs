//! `ObjectTracker`: client-go's `testing.ObjectTracker`, an in-memory store of JSON objects
//! keyed by group/version/resource, namespace and name, with the API server's write
//! semantics (see the crate docs for the list, and for where the fake deliberately differs)
//! and a watch hub fed in commit order.
//!
//! Every write takes one lock, assigns the next resourceVersion, records the change in a
//! bounded history (the "watch window") and hands it to every matching watcher before the
//! lock is released, so watchers see every change, in order, exactly once.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use kclient_apimachinery::{Error, Resource, StatusReason};
use parking_lot::{Mutex, RwLock};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

use crate::managed_fields;
use crate::registry::{ResourceInfo, ResourceRegistry};
use crate::selection::Selection;

#[path = "gc.rs"]
mod gc;

/// How many changes the tracker keeps for watches that start from an older resourceVersion;
/// a watch from before the window gets a 410 Expired, as from a compacted etcd.
pub const DEFAULT_HISTORY_WINDOW: usize = 10_000;

type Key = (String, String, String);

/// The kind of a change, as a watch event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Change {
    Added,
    Modified,
    Deleted,
}

#[derive(Debug)]
struct HistoryEntry {
    rv: u64,
    key: Key,
    change: Change,
    old: Option<Value>,
    object: Value,
}

struct Watcher {
    key: Key,
    /// The version the watch was opened through, when the resource's versions share their
    /// objects: each event is converted to it.
    view: Option<Arc<ResourceInfo>>,
    selection: Selection,
    bookmarks: bool,
    /// Changes at or below this resourceVersion are not sent: a watch from a version the
    /// store has not reached waits for it, as the server's watch cache does.
    after: u64,
    tx: mpsc::UnboundedSender<Bytes>,
}

struct State {
    rv: u64,
    objects: BTreeMap<Key, BTreeMap<(String, String), Value>>,
    history: VecDeque<HistoryEntry>,
    /// Changes at or below this resourceVersion are no longer in the history.
    compacted: u64,
    window: usize,
    watchers: Vec<Watcher>,
    /// The rest of each paged list, by continue-token id, so later pages show the first
    /// page's snapshot as the server's do; the oldest go past [`MAX_SNAPSHOTS`].
    snapshots: HashMap<u64, Vec<Value>>,
    snapshot_order: VecDeque<u64>,
    next_snapshot: u64,
}

/// How many unfinished paged lists the tracker remembers; a continue token of an older one
/// gets 410 Expired, as a token past etcd's compaction does.
const MAX_SNAPSHOTS: usize = 256;

/// Options of a delete, from the request's `DeleteOptions` body and query.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeleteRequest {
    pub(crate) uid: Option<String>,
    pub(crate) resource_version: Option<String>,
    pub(crate) propagation: Option<String>,
    pub(crate) grace_period: Option<i64>,
}

/// Options of a list.
#[derive(Debug, Clone, Default)]
pub(crate) struct ListRequest {
    pub(crate) limit: usize,
    pub(crate) continue_token: Option<String>,
    pub(crate) resource_version: Option<String>,
    pub(crate) resource_version_match: Option<String>,
    /// Whether `sendInitialEvents` was given (with any value), which a list refuses.
    pub(crate) send_initial_events: bool,
}

/// The server's Invalid error for `ListOptions` (its `ValidateListOptions`), each cause a
/// `(type, field, message)`.
fn invalid_list_options(causes: &[(&str, &str, String)]) -> Error {
    invalid_with_reasons("meta.k8s.io", "ListOptions", "", causes)
}

/// The server's Invalid error with one cause per `(reason, field, message)`.
fn invalid_with_reasons<F: AsRef<str>>(
    group: &str,
    kind: &str,
    name: &str,
    causes: &[(&str, F, String)],
) -> Error {
    let pairs: Vec<(&str, &str)> = causes
        .iter()
        .map(|(_, f, m)| (f.as_ref(), m.as_str()))
        .collect();
    let error = Error::new_invalid(group, kind, name, &pairs);
    let Some(mut status) = error.status().cloned() else {
        return error;
    };
    if let Some(details) = status.details.as_mut() {
        for (cause, (reason, _, _)) in details.causes.iter_mut().zip(causes) {
            cause.cause_type = (*reason).to_string();
        }
    }
    Error::from_status(status)
}

/// A custom resource checked by its schema (that of the version written through), as the
/// server validates one on every write.
fn validate_custom(
    info: &ResourceInfo,
    name: &str,
    (object, old): (&Value, Option<&Value>),
    status_only: bool,
) -> Result<(), Error> {
    let Some(schema) = &info.schema else {
        return Ok(());
    };
    let causes = if status_only {
        schema.validate_status(object, old)
    } else {
        schema.validate(object, old)
    };
    if causes.is_empty() {
        return Ok(());
    }
    let r = &info.api_resource;
    Err(invalid_with_reasons(&r.group, &r.kind, name, &causes))
}

const FORBIDDEN: &str = "FieldValueForbidden";
const NOT_SUPPORTED: &str = "FieldValueNotSupported";

/// A custom resource's numbers as the server stores them (an int64 where the text is one,
/// else a float64, see [`crate::numbers`]); built-in kinds are typed on the server. The
/// server validates a write before it stores it, so it sees `1e6` as a float64 there
/// (`Invalid value: 1e+06`) and stores `1000000`.
fn store_numbers(info: &ResourceInfo, object: &mut Value) {
    if info.patch_fields.is_none() {
        crate::numbers::store(object);
    }
}

/// A resourceVersion as the server's storage parses it (Go's `strconv.ParseUint`: digits
/// only, no sign).
fn parse_resource_version(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Which state a list reads, from its `resourceVersion` and `resourceVersionMatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListFrom {
    /// The latest state (`""`, `NotOlderThan`, or a version without a match and no limit).
    Latest,
    /// The latest state from the watch cache (`"0"`): `limit` is ignored.
    Cache,
    /// The state at exactly this version (`Exact`, or a version without a match with a limit).
    Exact(u64),
}

impl ListRequest {
    /// Validates the options as the server's `ValidateListOptions` and storage do, and says
    /// which state the list reads (`current` is the tracker's resourceVersion).
    fn from(&self, current: u64) -> Result<ListFrom, Error> {
        let rv = self.resource_version.as_deref().unwrap_or("");
        let matching = self.resource_version_match.as_deref().unwrap_or("");
        let has_continue = self
            .continue_token
            .as_deref()
            .is_some_and(|c| !c.is_empty());
        let mut causes: Vec<(&str, &str, String)> = Vec::new();
        if !matching.is_empty() {
            let field = "resourceVersionMatch";
            if rv.is_empty() {
                causes.push((FORBIDDEN, field, "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided".into()));
            }
            if has_continue {
                causes.push((
                    FORBIDDEN,
                    field,
                    "Forbidden: resourceVersionMatch is forbidden when continue is provided".into(),
                ));
            }
            if matching != "Exact" && matching != "NotOlderThan" {
                causes.push((NOT_SUPPORTED, field, format!("Unsupported value: {matching:?}: supported values: \"Exact\", \"NotOlderThan\", \"\"")));
            }
            if matching == "Exact" && rv == "0" {
                causes.push((FORBIDDEN, field, "Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"".into()));
            }
        }
        if self.send_initial_events {
            causes.push((
                FORBIDDEN,
                "sendInitialEvents",
                "Forbidden: sendInitialEvents is forbidden for list".into(),
            ));
        }
        if !causes.is_empty() {
            return Err(invalid_list_options(&causes));
        }
        if has_continue && !rv.is_empty() && rv != "0" {
            return Err(Error::new_bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        if rv.is_empty() || has_continue {
            return Ok(ListFrom::Latest);
        }
        let version = parse_resource_version(rv).ok_or_else(|| {
            Error::new_bad_request(format!(
                "invalid resource version: resourceVersion: Invalid value: {rv:?}: \
                 strconv.ParseUint: parsing {rv:?}: invalid syntax"
            ))
        })?;
        if version > current {
            return Err(too_large_resource_version(version, current));
        }
        Ok(match matching {
            "Exact" => ListFrom::Exact(version),
            _ if version == 0 => ListFrom::Cache,
            "" if self.limit > 0 => ListFrom::Exact(version),
            _ => ListFrom::Latest,
        })
    }
}

/// Options of a watch.
#[derive(Debug, Clone, Default)]
pub(crate) struct WatchRequest {
    pub(crate) resource_version: Option<String>,
    pub(crate) resource_version_match: Option<String>,
    pub(crate) has_continue: bool,
    pub(crate) bookmarks: bool,
    /// `sendInitialEvents`, when given.
    pub(crate) send_initial_events: Option<bool>,
}

impl WatchRequest {
    /// Validates the options as the server's `ValidateListOptions` does for a watch (and a
    /// continue token, which a watch refuses whatever the match).
    fn validate(&self) -> Result<(), Error> {
        let matching = self.resource_version_match.as_deref().unwrap_or("");
        let field = "resourceVersionMatch";
        let mut causes: Vec<(&str, &str, String)> = Vec::new();
        if self.send_initial_events.is_some() && matching != "NotOlderThan" {
            causes.push((
                FORBIDDEN,
                field,
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
                    .into(),
            ));
        }
        if !matching.is_empty() {
            if self.send_initial_events.is_none() {
                causes.push((FORBIDDEN, field, "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".into()));
            }
            if matching != "NotOlderThan" {
                causes.push((
                    NOT_SUPPORTED,
                    field,
                    format!("Unsupported value: {matching:?}: supported values: \"NotOlderThan\""),
                ));
            }
        }
        if self.has_continue {
            causes.push((
                FORBIDDEN,
                field,
                "Forbidden: resourceVersionMatch is forbidden when continue is provided".into(),
            ));
        }
        if causes.is_empty() {
            Ok(())
        } else {
            Err(invalid_list_options(&causes))
        }
    }
}

/// The in-memory store behind a [`Fake`](crate::Fake). Cheap to clone; clones share the
/// store.
///
/// ```
/// use kclient_testing::ObjectTracker;
///
/// let tracker = ObjectTracker::new();
/// tracker.add_yaml("
/// apiVersion: v1
/// kind: ConfigMap
/// metadata: {name: settings, namespace: default}
/// data: {mode: fast}
/// ")?;
/// let cm = tracker.get("", "v1", "configmaps", "default", "settings")?;
/// assert_eq!(cm["data"]["mode"], "fast");
/// // The four namespaces of a new cluster took resourceVersions 1 to 4.
/// assert_eq!(cm["metadata"]["resourceVersion"], "5");
/// # Ok::<(), kclient_testing::Error>(())
/// ```
#[derive(Clone)]
pub struct ObjectTracker {
    state: Arc<Mutex<State>>,
    registry: Arc<RwLock<ResourceRegistry>>,
}

impl std::fmt::Debug for ObjectTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectTracker")
            .field("resource_version", &self.state.lock().rv)
            .finish_non_exhaustive()
    }
}

impl Default for ObjectTracker {
    fn default() -> Self {
        ObjectTracker::new()
    }
}

/// Now, as the server writes timestamps (RFC 3339, whole seconds, UTC).
pub(crate) fn now() -> String {
    kclient_apimachinery::meta::Time::now().to_string()
}

fn new_uid() -> String {
    let b: [u8; 16] = rand::random();
    format!(
        "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-4{:01x}{:02x}-{:01x}{:01x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        b[0],
        b[1],
        b[2],
        b[3],
        b[4],
        b[5],
        b[6] & 0x0f,
        b[7],
        8 | (b[8] & 0x3),
        b[8] >> 4,
        b[9],
        b[10],
        b[11],
        b[12],
        b[13],
        b[14],
        b[15]
    )
}

/// The 5 characters the server appends to `generateName` (its alphabet leaves out vowels and
/// look-alike characters).
fn name_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| ALPHABET[rand::random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// The order in which the server reads a resource's objects: that of their etcd keys,
/// `/registry/<resource>/<namespace>/<name>` (or `.../<name>` without a namespace), byte
/// by byte. Within a namespace that is name order; across namespaces the `/` after the
/// namespace counts, so `team-a/y` comes before `team/x` (`-` sorts before `/`).
fn key_order(a: &(String, String), b: &(String, String)) -> std::cmp::Ordering {
    // Compared as byte iterators: a sort calls this O(n log n) times, and building each key
    // would allocate twice per call.
    fn key((ns, name): &(String, String)) -> impl Iterator<Item = u8> + '_ {
        let slash = (!ns.is_empty()).then_some(b'/');
        ns.bytes().chain(slash).chain(name.bytes())
    }
    key(a).cmp(key(b))
}

/// The objects of a bucket in [`key_order`].
fn in_key_order<'a>(
    objects: impl IntoIterator<Item = (&'a (String, String), &'a Value)>,
) -> Vec<(&'a (String, String), &'a Value)> {
    let mut objects: Vec<_> = objects.into_iter().collect();
    objects.sort_by(|a, b| key_order(a.0, b.0));
    objects
}

fn meta(obj: &Value) -> &Value {
    &obj["metadata"]
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj.get_mut("metadata")
        .and_then(Value::as_object_mut)
        .expect("metadata was just made an object")
}

fn str_of<'a>(obj: &'a Value, field: &str) -> &'a str {
    meta(obj)[field].as_str().unwrap_or("")
}

/// Drops what the server's typed decoding drops: empty or null metadata fields, and for
/// built-in kinds empty or null top-level fields (`data: {}`); sets the namespace name label
/// the server puts on every Namespace.
fn drop_empty(info: &ResourceInfo, obj: &mut Value) {
    let empty = |v: &Value| {
        v.is_null()
            || v.as_object().is_some_and(serde_json::Map::is_empty)
            || v.as_array().is_some_and(Vec::is_empty)
    };
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.retain(|_, v| !empty(v) && v.as_str() != Some(""));
    }
    if info.patch_fields.is_some()
        && let Some(m) = obj.as_object_mut()
    {
        m.retain(|k, v| k == "spec" || k == "status" || k == "metadata" || !empty(v));
    }
    let r = &info.api_resource;
    if r.group.is_empty() && r.kind == "Namespace" {
        let name = str_of(obj, "name").to_string();
        let m = meta_mut(obj);
        let labels = m.entry("labels").or_insert_with(|| json!({}));
        if let Some(l) = labels.as_object_mut() {
            l.insert("kubernetes.io/metadata.name".into(), json!(name));
        }
    }
}

/// What a generation counts: the object without `metadata`, and without `status` when the
/// kind has a status subresource (a custom resource without one counts every change
/// outside metadata, status too, as the server's custom resource strategy does).
fn spec_part(info: &ResourceInfo, obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(m) = out.as_object_mut() {
        m.remove("metadata");
        if info.has_status {
            m.remove("status");
        }
        m.remove("apiVersion");
        m.remove("kind");
    }
    out
}

/// The object without its `managedFields`, to tell a no-op write.
fn without_managed_fields(obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(m) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    out
}

/// The object with its managedFields' timestamps blanked, to tell a no-op apply.
fn without_manager_times(obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(entries) = out["metadata"]
        .get_mut("managedFields")
        .and_then(Value::as_array_mut)
    {
        for e in entries {
            if let Some(m) = e.as_object_mut() {
                m.remove("time");
            }
        }
    }
    out
}

fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `stored` goes once a write leaves it without finalizers (the registry's
/// `ShouldDeleteDuringUpdate`): its deletion was asked for and waits on nothing else. A Pod
/// in its grace period (`deletionGracePeriodSeconds` above 0) still waits for its kubelet, a
/// Namespace with `spec.finalizers` for the namespace controller to remove its content
/// (`ShouldDeleteNamespaceDuringUpdate`).
fn goes_without_finalizers(stored: &Value) -> bool {
    !meta(stored)["deletionTimestamp"].is_null()
        && meta(stored)["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0)
            == 0
        && (!is_namespace_object(stored) || namespace_spec_finalizers(stored).is_empty())
}

/// Whether `object` is a v1 Namespace.
fn is_namespace_object(object: &Value) -> bool {
    object["apiVersion"] == "v1" && object["kind"] == "Namespace"
}

/// A Namespace's `spec.finalizers`: what the namespace controller must do before it goes
/// (`kubernetes`: delete its content).
fn namespace_spec_finalizers(namespace: &Value) -> Vec<&str> {
    namespace["spec"]["finalizers"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

pub(crate) fn event_line(kind: &str, object: &Value) -> Bytes {
    let mut line = crate::numbers::to_vec(&json!({"type": kind, "object": object}));
    line.push(b'\n');
    Bytes::from(line)
}

/// The event a watch with `selection` sees for a change, if any: an object entering the
/// selection is ADDED, one leaving it is DELETED (its last selected state, with the change's
/// resourceVersion), as the server's watch cache reports them.
fn event_for(
    selection: &Selection,
    change: Change,
    old: Option<&Value>,
    object: &Value,
) -> Option<Bytes> {
    let new_matches = selection.matches(object);
    let old_matches = old.is_some_and(|o| selection.matches(o));
    match (change, old_matches, new_matches) {
        (Change::Added, _, true) => Some(event_line("ADDED", object)),
        (Change::Deleted, _, true) => Some(event_line("DELETED", object)),
        (Change::Modified, true, true) => Some(event_line("MODIFIED", object)),
        (Change::Modified, false, true) => Some(event_line("ADDED", object)),
        (Change::Modified, true, false) => {
            let mut last = old?.clone();
            meta_mut(&mut last).insert(
                "resourceVersion".into(),
                object["metadata"]["resourceVersion"].clone(),
            );
            Some(event_line("DELETED", &last))
        }
        _ => None,
    }
}

impl State {
    /// Keeps the rest of a paged list; returns its continue-token id.
    fn keep_snapshot(&mut self, rest: Vec<Value>) -> u64 {
        self.next_snapshot += 1;
        let id = self.next_snapshot;
        self.snapshots.insert(id, rest);
        self.snapshot_order.push_back(id);
        while self.snapshot_order.len() > MAX_SNAPSHOTS {
            if let Some(old) = self.snapshot_order.pop_front() {
                self.snapshots.remove(&old);
            }
        }
        id
    }

    fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    fn bucket(&mut self, key: &Key) -> &mut BTreeMap<(String, String), Value> {
        self.objects.entry(key.clone()).or_default()
    }

    /// Records a change and delivers it to the watchers that select it.
    fn emit(&mut self, key: &Key, change: Change, old: Option<Value>, object: Value) {
        let rv = self.rv;
        self.watchers.retain(|w| {
            if &w.key != key || rv <= w.after {
                return !w.tx.is_closed();
            }
            let event = match &w.view {
                Some(view) => event_for(
                    &w.selection,
                    change,
                    old.clone().map(|o| view.served(o)).as_ref(),
                    &view.served(object.clone()),
                ),
                None => event_for(&w.selection, change, old.as_ref(), &object),
            };
            match event {
                Some(line) => w.tx.send(line).is_ok(),
                None => !w.tx.is_closed(),
            }
        });
        self.history.push_back(HistoryEntry {
            rv,
            key: key.clone(),
            change,
            old,
            object,
        });
        while self.history.len() > self.window {
            if let Some(e) = self.history.pop_front() {
                self.compacted = e.rv;
            }
        }
    }

    /// The objects of a resource as they were at resourceVersion `rv`: the current ones with
    /// the later changes undone from the history; 410 Expired when the history no longer
    /// reaches back to `rv`, as a list at a compacted etcd revision.
    fn objects_at(&self, key: &Key, rv: u64) -> Result<BTreeMap<(String, String), Value>, Error> {
        if rv < self.compacted {
            return Err(Error::new_resource_expired(
                "The resourceVersion for the provided list is too old.",
            ));
        }
        let mut objects = self.objects.get(key).cloned().unwrap_or_default();
        for e in self.history.iter().rev().take_while(|e| e.rv > rv) {
            if &e.key != key {
                continue;
            }
            let id = (
                str_of(&e.object, "namespace").to_string(),
                str_of(&e.object, "name").to_string(),
            );
            match (e.change, &e.old) {
                (Change::Added, _) => {
                    objects.remove(&id);
                }
                (Change::Modified | Change::Deleted, Some(old)) => {
                    objects.insert(id, old.clone());
                }
                (Change::Modified | Change::Deleted, None) => {}
            }
        }
        Ok(objects)
    }

    fn namespace_exists(&self, namespace: &str) -> Option<&Value> {
        self.objects
            .get(&(String::new(), "v1".into(), "namespaces".into()))
            .and_then(|b| b.get(&(String::new(), namespace.to_string())))
    }
}

impl ObjectTracker {
    /// A tracker that serves every built-in resource, holding the `default`, `kube-system`,
    /// `kube-public` and `kube-node-lease` namespaces as a new cluster does.
    pub fn new() -> Self {
        ObjectTracker::with_history_window(DEFAULT_HISTORY_WINDOW)
    }

    /// A tracker that keeps `window` changes for watches from an older resourceVersion.
    pub fn with_history_window(window: usize) -> Self {
        let tracker = ObjectTracker {
            state: Arc::new(Mutex::new(State {
                rv: 0,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                compacted: 0,
                window: window.max(1),
                watchers: Vec::new(),
                snapshots: HashMap::new(),
                snapshot_order: VecDeque::new(),
                next_snapshot: 0,
            })),
            registry: Arc::new(RwLock::new(ResourceRegistry::builtin())),
        };
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let _created = tracker.ensure_namespace(ns);
        }
        tracker
    }

    /// Serves another resource (a custom resource), as its CRD being established would.
    pub fn register(&self, info: ResourceInfo) {
        self.registry.write().register(info);
    }

    /// A detached copy of the objects and registry, without history or watchers: a dry-run
    /// write runs against it, so it answers as the real write would but changes nothing.
    pub(crate) fn dry_run_copy(&self) -> ObjectTracker {
        let state = self.state.lock();
        ObjectTracker {
            state: Arc::new(Mutex::new(State {
                rv: state.rv,
                objects: state.objects.clone(),
                history: VecDeque::new(),
                compacted: state.rv,
                window: 1,
                watchers: Vec::new(),
                snapshots: HashMap::new(),
                snapshot_order: VecDeque::new(),
                next_snapshot: 0,
            })),
            registry: Arc::new(RwLock::new(self.registry.read().clone())),
        }
    }

    /// Stops serving a resource and drops its objects (its CRD was deleted), each with a
    /// DELETED event, as the server's CRD finalizer deletes them; then the resource's watches
    /// end, as its storage goes.
    pub(crate) fn unregister(&self, group: &str, version: &str, plural: &str) {
        let key = self.info(group, version, plural).map_or_else(
            |_| (group.to_string(), version.to_string(), plural.to_string()),
            |info| key_of(&info),
        );
        self.registry.write().unregister(group, version, plural);
        let mut state = self.state.lock();
        let objects = state.objects.remove(&key).unwrap_or_default();
        for (_, mut obj) in objects {
            let old = obj.clone();
            let rv = state.next_rv();
            meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
            state.emit(&key, Change::Deleted, Some(old), obj);
        }
        self.finish_namespaces(&mut state);
        // Dropping a watcher's sender ends its stream.
        state.watchers.retain(|w| w.key != key);
    }

    /// The resources served.
    pub fn registry(&self) -> ResourceRegistry {
        self.registry.read().clone()
    }

    /// The entry of a served resource, or NotFound as the server answers an unknown path.
    pub(crate) fn info(
        &self,
        group: &str,
        version: &str,
        resource: &str,
    ) -> Result<Arc<ResourceInfo>, Error> {
        self.registry
            .read()
            .get(group, version, resource)
            .ok_or_else(|| Error::new_not_found(group, resource, ""))
    }

    /// The entry of the resource whose objects are stored under `key` (for versions that
    /// share their objects, any of those versions).
    pub(crate) fn info_of_key(&self, key: &Key) -> Option<Arc<ResourceInfo>> {
        let registry = self.registry.read();
        if key.1.is_empty() {
            registry
                .iter()
                .find(|i| {
                    let r = &i.api_resource;
                    i.storage.is_some() && r.group == key.0 && r.plural == key.2
                })
                .cloned()
        } else {
            registry.get(&key.0, &key.1, &key.2)
        }
    }

    /// The current resourceVersion (of the last change).
    pub fn resource_version(&self) -> u64 {
        self.state.lock().rv
    }

    fn ensure_namespace(&self, ns: &str) -> Result<(), Error> {
        if ns.is_empty() || self.state.lock().namespace_exists(ns).is_some() {
            return Ok(());
        }
        let info = self.info("", "v1", "namespaces")?;
        match self.seed(
            &info,
            None,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        ) {
            Ok(_) => Ok(()),
            Err(e) if e.is_already_exists() => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Seeds a typed object (client-go's `tracker.Add`): created as a client would create it,
    /// with its namespace created first if missing.
    pub fn add<K: Resource>(&self, object: &K) -> Result<Value, Error> {
        let value = serde_json::to_value(object)
            .map_err(|e| Error::invalid_request(format!("cannot serialize the object: {e}")))?;
        let info = self.info(K::GROUP, K::VERSION, K::PLURAL)?;
        self.add_with(&info, value)
    }

    /// Seeds an object given as JSON (or an `Unstructured` turned into a `Value`); its
    /// `apiVersion` and `kind` say which resource it is.
    pub fn add_value(&self, object: Value) -> Result<Value, Error> {
        let api_version = object["apiVersion"].as_str().unwrap_or("");
        let kind = object["kind"].as_str().unwrap_or("");
        let info = self
            .registry
            .read()
            .for_kind(api_version, kind)
            .ok_or_else(|| {
                Error::new_bad_request(format!(
                    "no resource serves apiVersion {api_version:?} kind {kind:?}; register \
                     custom resources first (ObjectTracker::register or by creating their CRD)"
                ))
            })?;
        self.add_with(&info, object)
    }

    /// Seeds every object of a YAML stream (documents separated by `---`).
    pub fn add_yaml(&self, yaml: &str) -> Result<Vec<Value>, Error> {
        use serde::Deserialize as _;
        let mut out = Vec::new();
        for doc in serde_yaml_ng::Deserializer::from_str(yaml) {
            let value = Value::deserialize(doc)
                .map_err(|e| Error::new_bad_request(format!("invalid YAML: {e}")))?;
            if value.is_null() {
                continue;
            }
            out.push(self.add_value(value)?);
        }
        Ok(out)
    }

    fn add_with(&self, info: &ResourceInfo, value: Value) -> Result<Value, Error> {
        let ns = if info.api_resource.namespaced {
            let ns = str_of(&value, "namespace");
            let ns = if ns.is_empty() { "default" } else { ns }.to_string();
            self.ensure_namespace(&ns)?;
            Some(ns)
        } else {
            None
        };
        self.seed(info, ns.as_deref(), value)
    }

    /// Reads one object.
    pub fn get(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<Value, Error> {
        let info = self.info(group, version, resource)?;
        let ns = if info.api_resource.namespaced {
            namespace
        } else {
            ""
        };
        self.get_object(&info, ns, name)
    }

    pub(crate) fn get_object(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
    ) -> Result<Value, Error> {
        let key = key_of(info);
        let state = self.state.lock();
        state
            .objects
            .get(&key)
            .and_then(|b| b.get(&(namespace.to_string(), name.to_string())))
            .cloned()
            .map(|o| info.served(o))
            .ok_or_else(|| not_found(info, name))
    }

    /// Every stored object of a resource (in one namespace, or all with `""`), in the
    /// server's key order.
    pub fn list_values(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        namespace: &str,
    ) -> Vec<Value> {
        let Ok(info) = self.info(group, version, resource) else {
            return Vec::new();
        };
        let key = key_of(&info);
        let state = self.state.lock();
        state
            .objects
            .get(&key)
            .map(|b| {
                in_key_order(b)
                    .into_iter()
                    .filter(|((ns, _), _)| namespace.is_empty() || ns == namespace)
                    .map(|(_, v)| info.served(v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Lists as the server does: items in etcd key order (see [`key_order`]), the list's resourceVersion,
    /// and pages of `limit` items with a continue token.
    pub(crate) fn list(
        &self,
        info: &ResourceInfo,
        selection: &Selection,
        request: &ListRequest,
    ) -> Result<Value, Error> {
        let key = key_of(info);
        let mut state = self.state.lock();
        let from = request.from(state.rv)?;
        let limit = if from == ListFrom::Cache {
            0
        } else {
            request.limit
        };
        // What this page is cut from: the rest of an earlier page's snapshot, the selected
        // objects at the version asked for, or the selected objects now (in key order).
        let (rv, source) = match request.continue_token.as_deref() {
            Some(token) if !token.is_empty() => {
                let (rv, snapshot) = decode_continue(token)?;
                match state.snapshots.get(&snapshot).cloned() {
                    Some(rest) => (rv, rest),
                    None => {
                        return Err(Error::new_resource_expired(
                            "The provided continue parameter is too old to display a consistent \
                             list result. You can start a new list without the continue parameter.",
                        ));
                    }
                }
            }
            _ => {
                let (rv, objects) = match from {
                    ListFrom::Exact(rv) => (rv, state.objects_at(&key, rv)?),
                    ListFrom::Latest | ListFrom::Cache => (
                        state.rv,
                        state.objects.get(&key).cloned().unwrap_or_default(),
                    ),
                };
                let selected = in_key_order(&objects)
                    .into_iter()
                    .map(|(_, o)| o)
                    .filter(|o| selection.matches(o))
                    .cloned()
                    .collect();
                (rv, selected)
            }
        };
        let mut source = source;
        let rest = if limit > 0 && source.len() > limit {
            source.split_off(limit)
        } else {
            Vec::new()
        };
        let items: Vec<Value> = source.iter().map(|o| list_item(info, o)).collect();
        let remaining = rest.len();
        let more = if rest.is_empty() {
            None
        } else {
            Some(state.keep_snapshot(rest))
        };
        let mut metadata = json!({"resourceVersion": rv.to_string()});
        if info.patch_fields.is_none() {
            // Custom resource lists are unstructured on the server: `continue` is always there.
            metadata["continue"] = json!("");
        }
        if let Some(snapshot) = more {
            metadata["continue"] = json!(encode_continue(rv, snapshot));
            if selection.is_everything() {
                metadata["remainingItemCount"] = json!(remaining);
            }
        }
        Ok(json!({
            "kind": format!("{}List", info.api_resource.kind),
            "apiVersion": info.api_resource.api_version,
            "metadata": metadata,
            "items": items,
        }))
    }

    /// Creates an object (POST), as the server's create handler and registry do: a body
    /// that carries a resourceVersion is refused by the storage (500), as an object read
    /// from the server and created again unchanged is.
    pub(crate) fn create(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        obj: Value,
        manager: &str,
    ) -> Result<Value, Error> {
        // As the storage reads it: a value that does not parse (a sign, a space, letters,
        // past u64) or is 0 counts as unset and is dropped.
        let set = meta(&obj)["resourceVersion"]
            .as_str()
            .and_then(parse_resource_version)
            .is_some_and(|rv| rv != 0);
        self.create_as(info, namespace, obj, (manager, "Update"), None, set)
    }

    /// Seeds an object: as a create, but a resourceVersion in it (a fixture read from a
    /// cluster) is replaced, as client-go's tracker accepts one.
    fn seed(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        obj: Value,
    ) -> Result<Value, Error> {
        self.create_as(info, namespace, obj, ("", "Update"), None, false)
    }

    /// Creates, recording `manager` with `operation`, owning `written` (default: the whole
    /// object). With `refuse_resource_version`, fails as the storage does for a body that
    /// sets one, after validation and admission.
    fn create_as(
        &self,
        info: &ResourceInfo,
        namespace: Option<&str>,
        mut obj: Value,
        (manager, operation): (&str, &str),
        written: Option<&Value>,
        refuse_resource_version: bool,
    ) -> Result<Value, Error> {
        check_type(info, &mut obj)?;
        let r = &info.api_resource;
        let url_ns = namespace.unwrap_or("");
        {
            let body_ns = str_of(&obj, "namespace").to_string();
            let m = meta_mut(&mut obj);
            if r.namespaced {
                if !body_ns.is_empty() && !url_ns.is_empty() && body_ns != url_ns {
                    return Err(Error::new_bad_request(
                        "the namespace of the provided object does not match the namespace sent on the request",
                    ));
                }
                let ns = if body_ns.is_empty() { url_ns } else { &body_ns };
                if ns.is_empty() {
                    return Err(Error::new_bad_request(
                        "the namespace of the object is required",
                    ));
                }
                m.insert("namespace".into(), json!(ns));
            } else {
                m.remove("namespace");
            }
            let name = m.get("name").and_then(Value::as_str).unwrap_or("");
            if name.is_empty() {
                match m.get("generateName").and_then(Value::as_str) {
                    Some(prefix) if !prefix.is_empty() => {
                        let name = crate::names::generate(prefix, &name_suffix());
                        m.insert("name".into(), json!(name));
                    }
                    _ => {
                        return Err(invalid(
                            info,
                            "",
                            "metadata.name",
                            "Required value: name or generateName is required",
                        ));
                    }
                }
            }
        }
        let name = str_of(&obj, "name").to_string();
        if let Some(problem) = crate::names::problem(info, &name, &obj) {
            return Err(invalid(
                info,
                &name,
                "metadata.name",
                &format!("Invalid value: {name:?}: {problem}"),
            ));
        }
        check_metadata(info, &name, &obj)?;
        drop_empty(info, &mut obj);
        let ns = str_of(&obj, "namespace").to_string();
        let time = now();
        {
            let m = meta_mut(&mut obj);
            for field in [
                "uid",
                "resourceVersion",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "managedFields",
                "selfLink",
            ] {
                m.remove(field);
            }
            m.insert("uid".into(), json!(new_uid()));
            m.insert("creationTimestamp".into(), json!(time));
            if info.keeps_generation {
                m.insert("generation".into(), json!(1));
            }
        }
        if info.has_status {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
            if r.group.is_empty() && r.kind == "Namespace" {
                obj["status"] = json!({"phase": "Active"});
                if obj["spec"]["finalizers"].is_null() {
                    obj["spec"] = json!({"finalizers": ["kubernetes"]});
                }
            }
        }
        // Defaults count as written by the manager, as the server defaults while decoding.
        crate::defaults::apply(info, &mut obj, true);
        validate_custom(info, &name, (&obj, None), false)?;
        store_numbers(info, &mut obj);
        let written = written.cloned().unwrap_or_else(|| obj.clone());
        managed_fields::record(
            &mut obj,
            (manager, operation),
            "",
            &r.api_version,
            &written,
            info.apply_schema(),
            &time,
        );
        info.to_storage(&mut obj);
        let key = key_of(info);
        let mut state = self.state.lock();
        if r.namespaced {
            match state.namespace_exists(&ns) {
                None => {
                    return Err(Error::new_not_found("", "namespaces", &ns));
                }
                Some(n) if !meta(n)["deletionTimestamp"].is_null() => {
                    return Err(Error::new_forbidden(
                        &r.group,
                        &r.plural,
                        &name,
                        &format!(
                            "unable to create new content in namespace {ns} because it is being terminated"
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        if refuse_resource_version {
            return Err(Error::from_status(kclient_apimachinery::Status::failure(
                500,
                StatusReason::Unknown,
                "resourceVersion should not be set on objects to be created",
            )));
        }
        if state
            .objects
            .get(&key)
            .is_some_and(|b| b.contains_key(&(ns.clone(), name.clone())))
        {
            return Err(Error::new_already_exists(&r.group, &r.plural, &name));
        }
        let rv = state.next_rv();
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        state.bucket(&key).insert((ns, name), obj.clone());
        state.emit(&key, Change::Added, None, obj.clone());
        Ok(obj)
    }

    /// A PUT: replaces the object (or only its status with `status_only`), or, when it does
    /// not exist and the kind allows it (`ResourceInfo::allow_create_on_update`), creates
    /// it. Returns the object and whether it was created (201).
    pub(crate) fn update_or_create(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        obj: Value,
        manager: &str,
        status_only: bool,
    ) -> Result<(Value, bool), Error> {
        if status_only || !info.allow_create_on_update {
            return Ok((
                self.update(info, namespace, name, obj, manager, status_only)?,
                false,
            ));
        }
        match self.update(info, namespace, name, obj.clone(), manager, false) {
            Err(e) if e.is_not_found() && self.get_object(info, namespace, name).is_err() => {}
            other => return other.map(|o| (o, false)),
        }
        let mut obj = obj;
        check_type(info, &mut obj)?;
        // The uid precondition is checked against the empty object the storage starts from.
        let body_uid = str_of(&obj, "uid").to_string();
        if !body_uid.is_empty() {
            return Err(uid_precondition_failed(info, name, &body_uid, ""));
        }
        // The name comes from the URL (checked against the body by `update`); a
        // resourceVersion in the body is ignored.
        meta_mut(&mut obj).insert("name".into(), json!(name));
        let ns = Some(namespace).filter(|n| !n.is_empty());
        match self.create_as(info, ns, obj.clone(), (manager, "Update"), None, false) {
            Ok(created) => Ok((created, true)),
            // Created meanwhile by another request: this one updates it.
            Err(e) if e.is_already_exists() => self
                .update(info, namespace, name, obj, manager, false)
                .map(|o| (o, false)),
            Err(e) => Err(e),
        }
    }

    /// Replaces an object (PUT), or only its status with `status_only`.
    pub(crate) fn update(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        mut obj: Value,
        manager: &str,
        status_only: bool,
    ) -> Result<Value, Error> {
        check_type(info, &mut obj)?;
        let body_name = str_of(&obj, "name");
        if body_name != name {
            return Err(Error::new_bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let body_ns = str_of(&obj, "namespace");
        if info.api_resource.namespaced && !body_ns.is_empty() && body_ns != namespace {
            return Err(Error::new_bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        let body_rv = str_of(&obj, "resourceVersion").to_string();
        // A uid in the body is a precondition (the update handler's `Preconditions()`),
        // checked against the stored object before anything else.
        let body_uid = str_of(&obj, "uid").to_string();
        self.write_existing(
            info,
            namespace,
            name,
            (manager, "Update"),
            |existing| {
                if !body_uid.is_empty() && body_uid != str_of(existing, "uid") {
                    return Err(uid_precondition_failed(
                        info,
                        name,
                        &body_uid,
                        str_of(existing, "uid"),
                    ));
                }
                if body_rv.is_empty() {
                    if !info.allow_unconditional_update {
                        // The server names the resource, not the kind, in these details.
                        return Err(Error::new_invalid(
                            &info.api_resource.group,
                            &info.api_resource.plural,
                            name,
                            &[(
                                "metadata.resourceVersion",
                                "Invalid value: 0: must be specified for an update",
                            )],
                        ));
                    }
                } else if body_rv != str_of(existing, "resourceVersion") {
                    return Err(conflict(info, name));
                }
                Ok((merge_write(info, existing, obj, status_only), None))
            },
            if status_only { "status" } else { "" },
        )
    }

    /// The common tail of update, patch and apply: `compute` turns the stored object into the
    /// new one; then the server's rules for what a write may change run, and the change is
    /// committed (or dropped, when nothing changed).
    fn write_existing(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        (manager, operation): (&str, &str),
        compute: impl FnOnce(&Value) -> Result<(Value, Option<Value>), Error>,
        subresource: &str,
    ) -> Result<Value, Error> {
        let key = key_of(info);
        let r = &info.api_resource;
        let mut state = self.state.lock();
        let existing = state
            .objects
            .get(&key)
            .and_then(|b| b.get(&(namespace.to_string(), name.to_string())))
            .cloned()
            .ok_or_else(|| not_found(info, name))?;
        // The write sees the object as its version serves it; what follows compares it
        // as stored.
        let view = info
            .storage
            .is_some()
            .then(|| info.served(existing.clone()));
        let (mut new, applied) = compute(view.as_ref().unwrap_or(&existing))?;
        if subresource == "status" {
            pod_status_update(info, name, &existing, &mut new)?;
        }
        if applied.is_some() {
            crate::defaults::apply_result(info, &mut new);
        } else {
            crate::defaults::apply(info, &mut new, false);
        }
        let old = view.as_ref().unwrap_or(&existing);
        validate_custom(info, name, (&new, Some(old)), subresource == "status")?;
        store_numbers(info, &mut new);
        info.to_storage(&mut new);
        drop_empty(info, &mut new);
        check_deletion_fields(info, name, &existing, &new)?;
        // What a write may not change.
        {
            let m = meta_mut(&mut new);
            for field in [
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "name",
                "namespace",
            ] {
                match meta(&existing).get(field) {
                    Some(v) => {
                        m.insert(field.into(), v.clone());
                    }
                    None => {
                        m.remove(field);
                    }
                }
            }
            m.insert(
                "resourceVersion".into(),
                meta(&existing)["resourceVersion"].clone(),
            );
        }
        check_metadata(info, name, &new)?;
        if !meta(&existing)["deletionTimestamp"].is_null() {
            let old: Vec<String> = finalizers(&existing);
            let added: Vec<String> = finalizers(&new)
                .into_iter()
                .filter(|f| !old.contains(f))
                .collect();
            if !added.is_empty() {
                return Err(invalid(
                    info,
                    name,
                    "metadata.finalizers",
                    &format!(
                        "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {added:?}"
                    ),
                ));
            }
        }
        // A binding writes the Pod in storage directly, past the strategy that counts
        // generations.
        if info.keeps_generation
            && subresource != "binding"
            && spec_part(info, &new) != spec_part(info, &existing)
        {
            let generation = meta(&existing)["generation"].as_i64().unwrap_or(0) + 1;
            meta_mut(&mut new).insert("generation".into(), json!(generation));
            if r.group == "apps"
                && r.kind == "DaemonSet"
                && new["spec"]["template"] != existing["spec"]["template"]
            {
                crate::defaults::set_daemon_set_template_generation(&mut new, generation);
            }
        }
        let time = now();
        let written = applied.unwrap_or_else(|| new.clone());
        if operation == "Apply" {
            // An apply that changes no value may still change who owns what (a second
            // manager applying the same value): that is a write.
            managed_fields::record(
                &mut new,
                (manager, operation),
                subresource,
                &r.api_version,
                &written,
                info.apply_schema(),
                &time,
            );
            if without_manager_times(&new) == without_manager_times(&existing) {
                return Ok(existing);
            }
        } else {
            // An update that changes nothing writes nothing, whoever sends it.
            if without_managed_fields(&new) == without_managed_fields(&existing) {
                return Ok(existing);
            }
            // The writer owns what it changed, and takes it from the others.
            let changed = managed_fields::changed_paths(&existing, &new, info.apply_schema());
            managed_fields::take_ownership(&mut new, manager, &changed);
            managed_fields::record_update(
                (&mut new, &existing),
                (manager, subresource),
                &r.api_version,
                &changed,
                info.apply_schema(),
                &time,
            );
        }
        let rv = state.next_rv();
        meta_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
        let id = (namespace.to_string(), name.to_string());
        if goes_without_finalizers(&existing) && finalizers(&new).is_empty() {
            // The server deletes the object: the DELETED event carries its last stored state
            // with the deletion's resourceVersion, the response the written object with the
            // last stored resourceVersion.
            state.bucket(&key).remove(&id);
            let mut last = existing.clone();
            meta_mut(&mut last).insert("resourceVersion".into(), json!(rv.to_string()));
            state.emit(&key, Change::Deleted, Some(existing.clone()), last.clone());
            meta_mut(&mut new).insert(
                "resourceVersion".into(),
                meta(&existing)["resourceVersion"].clone(),
            );
            self.collect_dependents_of(&mut state, &last);
            self.finish_namespaces(&mut state);
        } else {
            state.bucket(&key).insert(id, new.clone());
            state.emit(&key, Change::Modified, Some(existing), new.clone());
        }
        Ok(new)
    }

    /// Writes an object through a subresource other than status (scale, binding): `change`
    /// turns the stored object into the new one, then the rules of every write apply
    /// (generation, managedFields with `subresource`, no-op detection, the event).
    pub(crate) fn write_subresource(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        (manager, subresource): (&str, &str),
        change: impl FnOnce(&Value) -> Result<Value, Error>,
    ) -> Result<Value, Error> {
        self.write_existing(
            info,
            namespace,
            name,
            (manager, "Update"),
            |existing| Ok((change(existing)?, None)),
            subresource,
        )
    }

    /// Server-side apply through a subresource other than status (scale): `change` turns the
    /// stored object into the new one and returns with it the fields the manager applied, in
    /// the object's shape, which its `Apply` entry for `subresource` then owns (the server
    /// records an apply to `scale` on the object so: `f:spec.f:replicas`, `subresource:
    /// scale`). The rules of every write apply as for [`ObjectTracker::write_subresource`].
    pub(crate) fn apply_subresource(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        (manager, subresource): (&str, &str),
        change: impl FnOnce(&Value) -> Result<(Value, Value), Error>,
    ) -> Result<Value, Error> {
        self.write_existing(
            info,
            namespace,
            name,
            (manager, "Apply"),
            |existing| {
                let (new, applied) = change(existing)?;
                Ok((new, Some(applied)))
            },
            subresource,
        )
    }

    /// Patches an object (PATCH) with an already-decoded patch applied by `patch_fn`.
    pub(crate) fn patch(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        manager: &str,
        status_only: bool,
        patch_fn: impl FnOnce(&Value) -> Result<Value, Error>,
    ) -> Result<Value, Error> {
        self.write_existing(info, namespace, name, (manager, "Update"), |existing| {
            let mut patched = patch_fn(existing)?;
            check_type(info, &mut patched)?;
            let rv = str_of(&patched, "resourceVersion");
            if !rv.is_empty() && rv != str_of(existing, "resourceVersion") {
                return Err(conflict(info, name));
            }
            // A patch carries no preconditions: a changed uid fails validation instead.
            let patched_uid = str_of(&patched, "uid");
            if !patched_uid.is_empty() && patched_uid != str_of(existing, "uid") {
                return Err(invalid(
                    info,
                    name,
                    "metadata.uid",
                    &format!("Invalid value: {patched_uid:?}: field is immutable"),
                ));
            }
            let patched_name = str_of(&patched, "name");
            if patched_name != name {
                return Err(Error::new_bad_request(format!(
                    "the name of the object ({patched_name}) does not match the name on the URL ({name})"
                )));
            }
            let patched_ns = str_of(&patched, "namespace");
            if info.api_resource.namespaced && !patched_ns.is_empty() && patched_ns != namespace {
                return Err(Error::new_bad_request(format!(
                    "the namespace of the object ({patched_ns}) does not match the namespace on the request ({namespace})"
                )));
            }
            Ok((merge_write(info, existing, patched, status_only), None))
        }, if status_only { "status" } else { "" })
    }

    /// Server-side apply: creates the object from the configuration, or merges the
    /// configuration into it, recording `manager` as an `Apply` manager. A field the
    /// configuration changes that another manager owns is a conflict (409) unless `force`,
    /// which takes it from them.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn apply(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        manager: &str,
        status_only: bool,
        force: bool,
        applied: Value,
    ) -> Result<Value, Error> {
        if manager.is_empty() {
            return Err(field_manager_required());
        }
        let mut config = applied;
        // The configuration names its type: the server decodes it by its own apiVersion and
        // kind, not the URL's.
        let api_version = config["apiVersion"].as_str().unwrap_or("");
        let kind = config["kind"].as_str().unwrap_or("");
        if api_version.is_empty() || kind.is_empty() {
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            return Err(Error::new_bad_request(format!(
                "invalid object type: {group}/{version}, Kind={kind}"
            )));
        }
        check_type(info, &mut config)?;
        let config_name = str_of(&config, "name");
        if !config_name.is_empty() && config_name != name {
            return Err(Error::new_bad_request(format!(
                "the name of the object ({config_name}) does not match the name on the URL ({name})"
            )));
        }
        let config_ns = str_of(&config, "namespace");
        if info.api_resource.namespaced && !config_ns.is_empty() && config_ns != namespace {
            return Err(Error::new_bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        // The server first builds the configuration's typed object, which its keyed lists
        // must allow.
        let faults = crate::merge::faults(&config, info.apply_schema());
        if !faults.is_empty() {
            let r = &info.api_resource;
            return Err(Error::from_status(kclient_apimachinery::Status::failure(
                500,
                StatusReason::Unknown,
                format!(
                    "failed to create typed patch object ({}/{}; {}/{}, Kind={}): {}",
                    config_ns,
                    config_name,
                    r.group,
                    r.version,
                    r.kind,
                    crate::merge::describe(&faults)
                ),
            )));
        }
        // A resourceVersion in the configuration is a precondition on an existing object.
        let config_rv = str_of(&config, "resourceVersion").to_string();
        let exists = self.get_object(info, namespace, name).is_ok();
        if !exists && !status_only {
            let mut obj = config.clone();
            meta_mut(&mut obj).insert("name".into(), json!(name));
            return self.create_as(
                info,
                Some(namespace).filter(|n| !n.is_empty()),
                obj,
                (manager, "Apply"),
                Some(&config),
                false,
            );
        }
        self.write_existing(
            info,
            namespace,
            name,
            (manager, "Apply"),
            |existing| {
                if !config_rv.is_empty() && config_rv != str_of(existing, "resourceVersion") {
                    return Err(conflict(info, name));
                }
                let subresource = if status_only { "status" } else { "" };
                let mut patch = config.clone();
                if let Some(m) = patch.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.remove("resourceVersion");
                }
                // Keyed lists (containers, env, a custom resource's conditions, finalizers)
                // merge item by item, as the kind's schema keys them.
                let mut merged = crate::merge::merge(existing, &patch, info.apply_schema());
                // The fields this endpoint resets are not compared, as the server leaves them
                // out: all but status through `status`, status through the object.
                let conflicts: Vec<managed_fields::Conflict> = managed_fields::apply_conflicts(
                    existing,
                    manager,
                    subresource,
                    (&config, &merged),
                    info.apply_schema(),
                )
                .into_iter()
                .filter(|c| {
                    let in_status = c.path.first().is_some_and(|p| p == "status");
                    if status_only {
                        in_status
                    } else {
                        !(info.has_status && in_status)
                    }
                })
                .collect();
                if !conflicts.is_empty() && !force {
                    return Err(apply_conflict(&conflicts));
                }
                // Fields this manager applied before, no longer applies and nobody else owns
                // are removed, as server-side apply removes them.
                for path in managed_fields::removed_by_apply(
                    existing,
                    manager,
                    subresource,
                    &config,
                    info.apply_schema(),
                ) {
                    // A custom resource's map the configuration gives as `{}` and the
                    // removal empties becomes `null`, as structured-merge-diff leaves it.
                    let nulls = info.patch_fields.is_none().then_some(&config);
                    managed_fields::remove_applied_field(&mut merged, &path, nulls);
                }
                // An empty set is left out, as the server leaves it out.
                if meta(&merged)["finalizers"]
                    .as_array()
                    .is_some_and(Vec::is_empty)
                {
                    meta_mut(&mut merged).remove("finalizers");
                }
                let mut written = merge_write(info, existing, merged, status_only);
                // Forced, the conflicting fields become this manager's alone.
                managed_fields::force_ownership(&mut written, manager, subresource, &conflicts);
                Ok((written, Some(config.clone())))
            },
            if status_only { "status" } else { "" },
        )
    }

    /// Deletes an object (DELETE): at once, or, when finalizers remain, by setting its
    /// deletionTimestamp. Returns the object as it is after the request and whether it is
    /// gone.
    pub(crate) fn delete(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        request: &DeleteRequest,
    ) -> Result<(Value, bool), Error> {
        let mut state = self.state.lock();
        let (answer, gone) = self.delete_locked(&mut state, info, namespace, name, request)?;
        // The garbage collector's work, done at once (see gc.rs).
        if gone {
            self.collect_dependents_of(&mut state, &answer);
        } else {
            self.finish_deletion_of(&mut state, &answer);
        }
        self.finish_namespaces(&mut state);
        // The answer is the object as this request left it, before the collector ran.
        Ok((answer, gone))
    }

    /// [`ObjectTracker::delete`] with the lock held, without the garbage collector's work.
    fn delete_locked(
        &self,
        state: &mut State,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        request: &DeleteRequest,
    ) -> Result<(Value, bool), Error> {
        let key = key_of(info);
        let r = &info.api_resource;
        let id = (namespace.to_string(), name.to_string());
        let existing = state
            .objects
            .get(&key)
            .and_then(|b| b.get(&id))
            .cloned()
            .ok_or_else(|| not_found(info, name))?;
        check_preconditions(info, name, &existing, request)?;
        let fins = deletion_finalizers(info, &existing, request.propagation.as_deref());
        if r.group.is_empty()
            && r.kind == "Pod"
            && let Some(period) = pod_grace_period(&existing, request.grace_period)
        {
            // Graceful deletion (the pod strategy's CheckGracefulDelete and BeforeDelete): a
            // Pod the kubelet must stop keeps existing with its deletionTimestamp in
            // `period` seconds; with 0 it goes at once, after a write that marks it.
            let Some(period) = period else {
                // A graceful deletion is already pending with a shorter or equal period.
                return Ok((existing, false));
            };
            let mut new = existing.clone();
            {
                let stored_period = meta(&existing)["deletionGracePeriodSeconds"].as_i64();
                let deadline = match (meta(&existing)["deletionTimestamp"].as_str(), stored_period)
                {
                    // Shortened: the deadline moves earlier by the difference.
                    (Some(at), Some(old)) => kclient_apimachinery::meta::Time::parse(at)
                        .map(|t| t.0 - old + period)
                        .unwrap_or_else(|| kclient_apimachinery::meta::Time::now().0 + period),
                    _ => kclient_apimachinery::meta::Time::now().0 + period,
                };
                let fresh = meta(&existing)["deletionTimestamp"].is_null();
                let generation = meta(&existing)["generation"].as_i64().unwrap_or(0);
                let m = meta_mut(&mut new);
                m.insert(
                    "deletionTimestamp".into(),
                    json!(kclient_apimachinery::meta::Time(deadline).to_string()),
                );
                m.insert("deletionGracePeriodSeconds".into(), json!(period));
                if fresh && generation > 0 {
                    m.insert("generation".into(), json!(generation + 1));
                }
                if fins.is_empty() {
                    m.remove("finalizers");
                } else {
                    m.insert("finalizers".into(), json!(fins));
                }
            }
            let rv = state.next_rv();
            meta_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
            state.bucket(&key).insert(id.clone(), new.clone());
            state.emit(&key, Change::Modified, Some(existing), new.clone());
            if period > 0 || !fins.is_empty() {
                return Ok((new, false));
            }
            let mut gone = new.clone();
            state.bucket(&key).remove(&id);
            let rv = state.next_rv();
            meta_mut(&mut gone).insert("resourceVersion".into(), json!(rv.to_string()));
            state.emit(&key, Change::Deleted, Some(new), gone.clone());
            // After the write that marked it, the answer carries the deletion's version.
            return Ok((gone, true));
        }
        let is_namespace = r.group.is_empty() && r.kind == "Namespace";
        if is_namespace && fins.is_empty() && !meta(&existing)["deletionTimestamp"].is_null() {
            // Already Terminating: the server answers with the namespace as it is.
            return Ok((existing, false));
        }
        if is_namespace && fins.is_empty() {
            // The server marks the namespace Terminating and answers with it; the namespace
            // controller then deletes the content and the namespace. The fake does that work
            // at once.
            let mut terminating = existing.clone();
            meta_mut(&mut terminating).insert("deletionTimestamp".into(), json!(now()));
            terminating["status"] = json!({"phase": "Terminating"});
            let rv = state.next_rv();
            meta_mut(&mut terminating).insert("resourceVersion".into(), json!(rv.to_string()));
            state.bucket(&key).insert(id, terminating.clone());
            state.emit(
                &key,
                Change::Modified,
                Some(existing.clone()),
                terminating.clone(),
            );
            // `finish_namespaces`, after this delete, deletes the namespace once its content
            // is gone: at once unless a finalizer or a Pod's grace period holds some of it.
            self.delete_namespace_content(state, name);
            return Ok((terminating, false));
        }
        if !fins.is_empty() {
            let mut new = existing.clone();
            if is_namespace {
                // Finalizers keep the namespace, Terminating, but not its content: the
                // namespace controller deletes that whatever holds the namespace itself.
                self.delete_namespace_content(state, name);
                new["status"] = json!({"phase": "Terminating"});
            }
            {
                let m = meta_mut(&mut new);
                m.insert("finalizers".into(), json!(fins));
                if m.get("deletionTimestamp").is_none_or(Value::is_null) {
                    m.insert("deletionTimestamp".into(), json!(now()));
                    m.insert("deletionGracePeriodSeconds".into(), json!(0));
                    // The registry's markAsDeleting bumps a kept generation.
                    if let Some(generation) = m
                        .get("generation")
                        .and_then(Value::as_i64)
                        .filter(|g| *g > 0)
                    {
                        m.insert("generation".into(), json!(generation + 1));
                    }
                }
            }
            if new == existing {
                return Ok((existing, false));
            }
            let rv = state.next_rv();
            meta_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
            state.bucket(&key).insert(id, new.clone());
            state.emit(&key, Change::Modified, Some(existing), new.clone());
            return Ok((new, false));
        }
        let mut gone = existing.clone();
        state.bucket(&key).remove(&id);
        let rv = state.next_rv();
        meta_mut(&mut gone).insert("resourceVersion".into(), json!(rv.to_string()));
        state.emit(&key, Change::Deleted, Some(existing), gone.clone());
        // The object as deleted, with the deletion's resourceVersion (the kinds that answer a
        // delete with the object show it so).
        Ok((gone, true))
    }

    /// Checks a get's resourceVersion as the server's watch cache does: `""` and `"0"` read
    /// the latest state, as does any version the store has reached; one that does not parse
    /// is a 500, one not reached yet a 504 (the server waits 3 seconds for it first).
    pub(crate) fn check_get_resource_version(
        &self,
        resource_version: Option<&str>,
    ) -> Result<(), Error> {
        let Some(text) = resource_version.filter(|t| !t.is_empty() && *t != "0") else {
            return Ok(());
        };
        let asked =
            parse_resource_version(text).ok_or_else(|| unparsable_resource_version(text))?;
        let current = self.state.lock().rv;
        if asked > current {
            return Err(too_large_resource_version(asked, current));
        }
        Ok(())
    }

    /// Checks the list options of a collection delete as a list checks them (422, 400, 410,
    /// 504): the server lists what it deletes with them.
    pub(crate) fn check_list_options(&self, request: &ListRequest) -> Result<(), Error> {
        let state = self.state.lock();
        request.from(state.rv).map(|_| ())
    }

    /// Deletes every selected object (DELETE on a collection); returns them as they were
    /// listed before the deletes.
    pub(crate) fn delete_collection(
        &self,
        info: &ResourceInfo,
        selection: &Selection,
        request: &DeleteRequest,
    ) -> Result<Vec<Value>, Error> {
        let selected: Vec<((String, String), Value)> = {
            let state = self.state.lock();
            state
                .objects
                .get(&key_of(info))
                .map(|b| {
                    in_key_order(b)
                        .into_iter()
                        .filter(|(_, o)| selection.matches(o))
                        .map(|(k, o)| (k.clone(), o.clone()))
                        .collect()
                })
                .unwrap_or_default()
        };
        // The server answers with the objects it listed to delete, as they were then.
        let mut out = Vec::new();
        for ((ns, name), listed) in selected {
            match self.delete(info, &ns, &name, request) {
                Ok(_) => out.push(list_item(info, &listed)),
                Err(e) if e.is_not_found() => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Opens a watch: the stream of event lines, starting as the request asks.
    pub(crate) fn watch(
        &self,
        info: &ResourceInfo,
        selection: Selection,
        request: &WatchRequest,
    ) -> Result<mpsc::UnboundedReceiver<Bytes>, Error> {
        request.validate()?;
        let key = key_of(info);
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.state.lock();
        let from = match request.resource_version.as_deref() {
            None | Some("") | Some("0") => None,
            Some(text) => Some(
                parse_resource_version(text).ok_or_else(|| unparsable_resource_version(text))?,
            ),
        };
        // The current objects first: asked for, or (without `sendInitialEvents`) a watch from
        // no version; `sendInitialEvents=false` from no version starts at the current one.
        let initial = request.send_initial_events.unwrap_or(from.is_none());
        if request.send_initial_events == Some(true)
            && let Some(asked) = from.filter(|f| *f > state.rv)
        {
            // The server waits a few seconds for the version, then ends the watch.
            let error = too_large_resource_version(asked, state.rv);
            let _sent = tx.send(event_line("ERROR", &status_json(&error)));
            return Ok(rx);
        }
        if initial {
            if let Some(bucket) = state.objects.get(&key) {
                for (_, obj) in in_key_order(bucket) {
                    let obj = info.served(obj.clone());
                    if selection.matches(&obj) {
                        let _sent = tx.send(event_line("ADDED", &obj));
                    }
                }
            }
            if request.bookmarks {
                let bookmark = json!({
                    "kind": info.api_resource.kind,
                    "apiVersion": info.api_resource.api_version,
                    "metadata": {
                        "resourceVersion": state.rv.to_string(),
                        "annotations": {kclient_apimachinery::INITIAL_EVENTS_END_ANNOTATION: "true"},
                    },
                });
                let _sent = tx.send(event_line("BOOKMARK", &bookmark));
            }
        } else if let Some(from) = from {
            if from < state.compacted {
                let oldest = state.history.front().map_or(state.rv, |e| e.rv);
                let status = Error::new_resource_expired(format!(
                    "too old resource version: {from} ({oldest})"
                ));
                let _sent = tx.send(event_line("ERROR", &status_json(&status)));
                return Ok(rx);
            }
            for e in state.history.iter().filter(|e| e.rv > from && e.key == key) {
                let old = e.old.clone().map(|o| info.served(o));
                let object = info.served(e.object.clone());
                if let Some(line) = event_for(&selection, e.change, old.as_ref(), &object) {
                    let _sent = tx.send(line);
                }
            }
        }
        let after = match from {
            Some(from) if !initial => from.max(state.rv),
            _ => state.rv,
        };
        state.watchers.push(Watcher {
            key,
            view: info.storage.is_some().then(|| Arc::new(info.clone())),
            selection,
            bookmarks: request.bookmarks,
            after,
            tx,
        });
        Ok(rx)
    }

    /// Sends a BOOKMARK with the current resourceVersion to every watch that asked for
    /// bookmarks (the server sends them about once a minute; a test calls this when it wants
    /// one).
    pub fn send_bookmarks(&self) {
        let registry = self.registry.read().clone();
        let state = self.state.lock();
        for w in &state.watchers {
            if !w.bookmarks || state.rv < w.after {
                continue;
            }
            let Some(info) = w
                .view
                .clone()
                .or_else(|| registry.get(&w.key.0, &w.key.1, &w.key.2))
            else {
                continue;
            };
            let bookmark = json!({
                "kind": info.api_resource.kind,
                "apiVersion": info.api_resource.api_version,
                "metadata": {"resourceVersion": state.rv.to_string()},
            });
            let _sent = w.tx.send(event_line("BOOKMARK", &bookmark));
        }
    }

    /// Drops the watch history, as an etcd compaction does: a watch from an older
    /// resourceVersion gets 410 Expired.
    pub fn compact(&self) {
        let mut state = self.state.lock();
        state.history.clear();
        state.compacted = state.rv;
    }

    /// How many watches are open.
    pub fn watch_count(&self) -> usize {
        let mut state = self.state.lock();
        state.watchers.retain(|w| !w.tx.is_closed());
        state.watchers.len()
    }
}

/// The grace period of a Pod's deletion, as the pod strategy decides it: `None` when the
/// deletion is not graceful (a Pod already marked with period 0); `Some(None)` when a
/// graceful deletion is pending and this request does not shorten it; `Some(Some(period))`
/// for the period to write (0: the Pod goes at once).
fn pod_grace_period(pod: &Value, asked: Option<i64>) -> Option<Option<i64>> {
    // Negative periods count as 1 second on the delete path.
    let asked = asked.map(|g| if g < 0 { 1 } else { g });
    if !meta(pod)["deletionTimestamp"].is_null() {
        let stored = meta(pod)["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0);
        if stored == 0 {
            return None;
        }
        return Some(asked.filter(|a| *a < stored));
    }
    let mut period = asked
        .or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64())
        .unwrap_or(DEFAULT_TERMINATION_GRACE_PERIOD);
    let phase = pod["status"]["phase"].as_str().unwrap_or("");
    let unscheduled = pod["spec"]["nodeName"].as_str().unwrap_or("").is_empty();
    if unscheduled || phase == "Succeeded" || phase == "Failed" {
        // No kubelet runs it, or it has stopped: nothing to wait for.
        period = 0;
    }
    Some(Some(period.max(0)))
}

/// What a kind's deletes do with dependents when the request names no policy (its registry
/// strategy's `DefaultGarbageCollectionPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DefaultPropagation {
    /// Background: the garbage collector deletes the dependents (most kinds).
    Delete,
    /// The `orphan` finalizer: batch/v1 Jobs and v1 ReplicationControllers, for backward
    /// compatibility (so a Job deleted without a policy leaves its Pods).
    Orphan,
    /// No propagation at all (Events): no policy adds a finalizer.
    Unsupported,
}

fn default_propagation(info: &ResourceInfo) -> DefaultPropagation {
    let r = &info.api_resource;
    match (r.group.as_str(), r.version.as_str(), r.kind.as_str()) {
        ("batch", "v1", "Job") | ("", "v1", "ReplicationController") => DefaultPropagation::Orphan,
        ("" | "events.k8s.io", _, "Event") => DefaultPropagation::Unsupported,
        _ => DefaultPropagation::Delete,
    }
}

/// The names of the objects of `bucket` in the namespace `namespace`.
fn names_in_namespace(bucket: &BTreeMap<(String, String), Value>, namespace: &str) -> Vec<String> {
    bucket
        .range((namespace.to_string(), String::new())..)
        .take_while(|((ns, _), _)| ns == namespace)
        .map(|((_, name), _)| name.clone())
        .collect()
}

/// Whether anything is stored in the namespace `namespace`.
fn has_content(state: &State, namespace: &str) -> bool {
    state.objects.values().any(|bucket| {
        bucket
            .range((namespace.to_string(), String::new())..)
            .next()
            .is_some_and(|((ns, _), _)| ns == namespace)
    })
}

impl ObjectTracker {
    /// Deletes every object in the namespace `namespace` as the namespace controller does,
    /// with the `Background` propagation policy (its `deleteCollection`): an object goes at
    /// once with a DELETED event, unless finalizers or a Pod's grace period hold it, which
    /// then stays, marked for deletion, and holds the namespace in `Terminating` until it
    /// goes ([`finish_namespaces`](Self::finish_namespaces)).
    fn delete_namespace_content(&self, state: &mut State, namespace: &str) {
        let request = DeleteRequest {
            propagation: Some("Background".into()),
            ..DeleteRequest::default()
        };
        let keys: Vec<Key> = state.objects.keys().cloned().collect();
        for k in keys {
            let Some(info) = self.info_of_key(&k) else {
                continue;
            };
            let names = state
                .objects
                .get(&k)
                .map(|b| names_in_namespace(b, namespace))
                .unwrap_or_default();
            for name in names {
                // NotFound: a cascade of an earlier delete took it already.
                match self.delete_locked(state, &info, namespace, &name, &request) {
                    Ok((answer, true)) => self.collect_dependents_of(state, &answer),
                    Ok((answer, false)) => self.finish_deletion_of(state, &answer),
                    Err(_) => {}
                }
            }
        }
    }

    /// The namespace controller's last step, for each namespace being deleted whose content
    /// has gone: takes `kubernetes` off its `spec.finalizers` (the `finalize` subresource's
    /// write), and the namespace goes with that write when no finalizer is left (a MODIFIED
    /// event otherwise, and it goes when the last of its `metadata.finalizers` does).
    fn finish_namespaces(&self, state: &mut State) {
        let key: Key = (String::new(), "v1".into(), "namespaces".into());
        let done: Vec<(String, String)> = state
            .objects
            .get(&key)
            .into_iter()
            .flatten()
            .filter(|(_, ns)| {
                !meta(ns)["deletionTimestamp"].is_null()
                    && namespace_spec_finalizers(ns).contains(&"kubernetes")
            })
            .map(|(id, _)| id.clone())
            .filter(|(_, name)| !has_content(state, name))
            .collect();
        for id in done {
            let Some(existing) = state.objects.get(&key).and_then(|b| b.get(&id)).cloned() else {
                continue;
            };
            let mut new = existing.clone();
            let left: Vec<String> = namespace_spec_finalizers(&existing)
                .into_iter()
                .filter(|f| *f != "kubernetes")
                .map(str::to_string)
                .collect();
            if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
                if left.is_empty() {
                    spec.remove("finalizers");
                } else {
                    spec.insert("finalizers".into(), json!(left));
                }
            }
            let rv = state.next_rv();
            meta_mut(&mut new).insert("resourceVersion".into(), json!(rv.to_string()));
            if left.is_empty() && finalizers(&new).is_empty() {
                state.bucket(&key).remove(&id);
                state.emit(&key, Change::Deleted, Some(existing), new.clone());
                self.collect_dependents_of(state, &new);
            } else {
                state.bucket(&key).insert(id, new.clone());
                state.emit(&key, Change::Modified, Some(existing), new);
            }
        }
    }
}

/// The finalizers a delete leaves on `existing`, as the registry's
/// `deletionFinalizersForGarbageCollection` computes them: the `orphan` and
/// `foregroundDeletion` finalizers are taken off, then the one the request's policy asks for
/// is put back at the end; without a policy, one already there decides, else the kind's
/// default. A later delete with another policy so replaces the earlier one's finalizer.
fn deletion_finalizers(info: &ResourceInfo, existing: &Value, policy: Option<&str>) -> Vec<String> {
    use gc::{FOREGROUND, ORPHAN};
    let old = finalizers(existing);
    let default = default_propagation(info);
    // The first of the two finalizers present, which stands for the earlier policy.
    let present = old.iter().find(|f| *f == ORPHAN || *f == FOREGROUND);
    let (orphan, foreground) = match (default, policy) {
        (DefaultPropagation::Unsupported, _) => (false, false),
        (_, Some("Orphan")) => (true, false),
        (_, Some("Foreground")) => (false, true),
        (_, Some(_)) => (false, false),
        (_, None) => match present.map(String::as_str) {
            Some(ORPHAN) => (true, false),
            Some(_) => (false, true),
            None => (default == DefaultPropagation::Orphan, false),
        },
    };
    let mut new: Vec<String> = old
        .iter()
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        new.push(ORPHAN.to_string());
    }
    if foreground {
        new.push(FOREGROUND.to_string());
    }
    let same_set = new.iter().all(|f| old.contains(f)) && old.iter().all(|f| new.contains(f));
    if same_set { old } else { new }
}

/// A Pod's `spec.terminationGracePeriodSeconds` when it does not say (the server's default).
const DEFAULT_TERMINATION_GRACE_PERIOD: i64 = 30;

/// The server's answer to an apply without `fieldManager` (422).
pub(crate) fn field_manager_required() -> Error {
    Error::new_invalid(
        "meta.k8s.io",
        "PatchOptions",
        "",
        &[(
            "fieldManager",
            "Required value: is required for apply patch",
        )],
    )
}

/// The JSON of an error's `Status`.
pub(crate) fn status_json(err: &Error) -> Value {
    let mut status = err.status().cloned().unwrap_or_else(|| {
        kclient_apimachinery::Status::failure(500, StatusReason::InternalError, err.to_string())
    });
    status.kind = "Status".into();
    status.api_version = "v1".into();
    serde_json::to_value(&status).unwrap_or_else(|_| json!({}))
}

/// Where a resource's objects are stored: by group, version and resource, or, for the
/// versions of a custom resource that share their objects, by group and resource alone
/// (an empty version).
fn key_of(info: &ResourceInfo) -> Key {
    let r = &info.api_resource;
    let version = if info.storage.is_some() {
        String::new()
    } else {
        r.version.clone()
    };
    (r.group.clone(), version, r.plural.clone())
}

/// A read at a resourceVersion the store has not reached: the server waits up to 3 seconds
/// for it, then answers 504 Timeout with a `ResourceVersionTooLarge` cause (the fake answers
/// at once: nothing else writes to it meanwhile).
/// The server's watch cache answers a resourceVersion that does not parse (in a watch or a
/// get) with a plain 500.
fn unparsable_resource_version(text: &str) -> Error {
    Error::from_status(kclient_apimachinery::Status::failure(
        500,
        StatusReason::Unknown,
        format!(
            "resourceVersion: Invalid value: {text:?}: strconv.ParseUint: parsing {text:?}: \
             invalid syntax"
        ),
    ))
}

fn too_large_resource_version(asked: u64, current: u64) -> Error {
    let mut status = kclient_apimachinery::Status::failure(
        504,
        StatusReason::Timeout,
        format!("Timeout: Too large resource version: {asked}, current: {current}"),
    );
    status.details = Some(kclient_apimachinery::StatusDetails {
        causes: vec![kclient_apimachinery::StatusCause {
            cause_type: "ResourceVersionTooLarge".into(),
            message: "Too large resource version".into(),
            ..Default::default()
        }],
        retry_after_seconds: 1,
        ..Default::default()
    });
    Error::from_status(status)
}

fn not_found(info: &ResourceInfo, name: &str) -> Error {
    Error::new_not_found(&info.api_resource.group, &info.api_resource.plural, name)
}

/// An apply refused for the fields other managers own (409 `Conflict`), worded as the
/// server words it: one cause `FieldManagerConflict` per field, and a message that lists
/// them by owner.
pub(crate) fn apply_conflict(conflicts: &[managed_fields::Conflict]) -> Error {
    let message = match conflicts {
        [one] => format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.owner,
            managed_fields::path_string(&one.path)
        ),
        _ => {
            let mut lines = Vec::new();
            let mut owner = None;
            for c in conflicts {
                if owner != Some(&c.owner) {
                    lines.push(format!("conflicts with {}:", c.owner));
                    owner = Some(&c.owner);
                }
                lines.push(format!("- {}", managed_fields::path_string(&c.path)));
            }
            format!(
                "Apply failed with {} conflicts: {}",
                conflicts.len(),
                lines.join("\n")
            )
        }
    };
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|c| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {}", c.owner),
                "field": managed_fields::path_string(&c.path),
            })
        })
        .collect();
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "Conflict", "details": {"causes": causes}, "code": 409,
    });
    match serde_json::from_value(status) {
        Ok(status) => Error::from_status(status),
        Err(e) => Error::new_internal_error(format!("the fake's conflict status: {e}")),
    }
}

pub(crate) fn conflict(info: &ResourceInfo, name: &str) -> Error {
    Error::new_conflict(
        &info.api_resource.group,
        &info.api_resource.plural,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    )
}

/// An update whose body names another uid than the stored object's (or a uid for an object
/// that does not exist): the storage's precondition check fails, which the server reports
/// as a Conflict naming the resource, as other update conflicts do.
fn uid_precondition_failed(info: &ResourceInfo, name: &str, wanted: &str, stored: &str) -> Error {
    let r = &info.api_resource;
    Error::new_conflict(
        &r.group,
        &r.plural,
        name,
        &format!(
            "Precondition failed: UID in precondition: {wanted}, UID in object meta: {stored}"
        ),
    )
}

/// A delete's uid and resourceVersion preconditions against the stored object (also checked by
/// an eviction before it writes its condition): 409 when one does not match.
pub(crate) fn check_preconditions(
    info: &ResourceInfo,
    name: &str,
    existing: &Value,
    request: &DeleteRequest,
) -> Result<(), Error> {
    let preconditions = [
        ("UID", &request.uid, "uid"),
        (
            "ResourceVersion",
            &request.resource_version,
            "resourceVersion",
        ),
    ];
    for (label, wanted, field) in preconditions {
        if let Some(wanted) = wanted
            && wanted != str_of(existing, field)
        {
            return Err(precondition_failed(
                info,
                name,
                &format!(
                    "Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {}",
                    str_of(existing, field)
                ),
            ));
        }
    }
    Ok(())
}

/// A failed delete precondition: a Conflict whose details name the kind (not the resource,
/// as other conflicts do), as the server reports it.
fn precondition_failed(info: &ResourceInfo, name: &str, message: &str) -> Error {
    let r = &info.api_resource;
    let mut status = kclient_apimachinery::Status::failure(
        409,
        StatusReason::Conflict,
        format!(
            "Operation cannot be fulfilled on {} \"{name}\": {message}",
            r.plural
        ),
    );
    status.details = Some(kclient_apimachinery::StatusDetails {
        name: name.to_string(),
        group: r.group.clone(),
        kind: r.kind.clone(),
        ..Default::default()
    });
    Error::from_status(status)
}

/// The most bytes an object's annotations may hold, keys and values together.
const MAX_ANNOTATIONS_SIZE: usize = 256 * 1024;

/// What the server's `ValidateObjectMeta` finds wrong with an object's labels, annotations
/// and finalizers, for every kind: label keys, annotation keys (lowercased) and finalizers
/// must be qualified names, label values valid label values, and the annotations at most
/// 256 KiB. Each problem as a field path and the server's message.
fn metadata_problems(obj: &Value) -> Vec<(&'static str, String)> {
    use kclient_apimachinery::{validate_label_key, validate_label_value};
    let mut out = Vec::new();
    for (key, value) in meta(obj)["labels"].as_object().into_iter().flatten() {
        if let Err(e) = validate_label_key(key) {
            out.push(("metadata.labels", format!("Invalid value: {key:?}: {e}")));
        }
        if let Some(value) = value.as_str()
            && let Err(e) = validate_label_value(value)
        {
            out.push(("metadata.labels", format!("Invalid value: {value:?}: {e}")));
        }
    }
    let mut size = 0;
    for (key, value) in meta(obj)["annotations"].as_object().into_iter().flatten() {
        if let Err(e) = validate_label_key(&key.to_lowercase()) {
            out.push((
                "metadata.annotations",
                format!("Invalid value: {key:?}: {e}"),
            ));
        }
        size += key.len() + value.as_str().map_or(0, str::len);
    }
    if size > MAX_ANNOTATIONS_SIZE {
        out.push((
            "metadata.annotations",
            format!("Too long: may not be more than {MAX_ANNOTATIONS_SIZE} bytes"),
        ));
    }
    for finalizer in finalizers(obj) {
        if let Err(e) = validate_label_key(&finalizer) {
            out.push((
                "metadata.finalizers",
                format!("Invalid value: {finalizer:?}: {e}"),
            ));
        }
    }
    out
}

/// The deletion fields against the stored ones, as the server's update checks them: a
/// write keeps a `deletionTimestamp` that is set (whatever the body says) but may not set
/// one, and may leave `deletionGracePeriodSeconds` out but not change it (422, "field is
/// immutable"): only a delete marks an object for deletion.
fn check_deletion_fields(
    info: &ResourceInfo,
    name: &str,
    existing: &Value,
    new: &Value,
) -> Result<(), Error> {
    let stored = meta(existing);
    let written = meta(new);
    if stored["deletionTimestamp"].is_null() && !written["deletionTimestamp"].is_null() {
        return Err(invalid(
            info,
            name,
            "metadata.deletionTimestamp",
            &format!(
                "Invalid value: {}: field is immutable",
                written["deletionTimestamp"]
            ),
        ));
    }
    let period = &written["deletionGracePeriodSeconds"];
    if !period.is_null() && *period != stored["deletionGracePeriodSeconds"] {
        return Err(invalid(
            info,
            name,
            "metadata.deletionGracePeriodSeconds",
            &format!("Invalid value: {period}: field is immutable"),
        ));
    }
    Ok(())
}

/// 422 naming every problem [`metadata_problems`] finds, if any.
fn check_metadata(info: &ResourceInfo, name: &str, obj: &Value) -> Result<(), Error> {
    let problems = metadata_problems(obj);
    if problems.is_empty() {
        return Ok(());
    }
    let causes: Vec<(&str, &str)> = problems.iter().map(|(f, m)| (*f, m.as_str())).collect();
    Err(Error::new_invalid(
        &info.api_resource.group,
        &info.api_resource.kind,
        name,
        &causes,
    ))
}

fn invalid(info: &ResourceInfo, name: &str, field: &str, message: &str) -> Error {
    Error::new_invalid(
        &info.api_resource.group,
        &info.api_resource.kind,
        name,
        &[(field, message)],
    )
}

/// A list item as the server writes it: built-in items carry no `apiVersion`/`kind`, custom
/// resources keep them.
fn list_item(info: &ResourceInfo, obj: &Value) -> Value {
    if info.patch_fields.is_none() {
        return info.served(obj.clone());
    }
    let mut item = obj.clone();
    if let Some(m) = item.as_object_mut() {
        m.remove("apiVersion");
        m.remove("kind");
    }
    item
}

/// Checks the body's `apiVersion` and `kind` against the resource, and fills them in when
/// missing, as the server's decoder does.
fn check_type(info: &ResourceInfo, obj: &mut Value) -> Result<(), Error> {
    let r = &info.api_resource;
    let Some(map) = obj.as_object_mut() else {
        return Err(Error::new_bad_request(
            "the body of the request was in an unknown format: it is not a JSON object",
        ));
    };
    let api_version = map.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or("");
    if !kind.is_empty() && kind != r.kind {
        return Err(Error::new_bad_request(format!(
            "the kind in the body ({kind}) does not match the resource ({})",
            r.kind
        )));
    }
    if !api_version.is_empty() && api_version != r.api_version {
        return Err(Error::new_bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            r.api_version
        )));
    }
    map.insert("apiVersion".into(), json!(r.api_version));
    map.insert("kind".into(), json!(r.kind));
    Ok(())
}

/// The object a write stores: through the main endpoint, the body with the stored status
/// (when the resource has a status subresource); through `status`, the stored object with
/// the body's status.
fn merge_write(info: &ResourceInfo, existing: &Value, body: Value, status_only: bool) -> Value {
    if status_only {
        let mut new = existing.clone();
        match body.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(m) = new.as_object_mut() {
                    m.remove("status");
                }
            }
        }
        if let Some(kept) = status_write_keeps(info) {
            // The body's metadata, but for the fields the kind's status strategy keeps and
            // the managers (the server's).
            let mut metadata = match body.get("metadata") {
                Some(Value::Object(m)) => m.clone(),
                _ => Map::new(),
            };
            for field in kept.iter().chain(&["managedFields"]) {
                match meta(existing).get(*field) {
                    Some(v) => {
                        metadata.insert((*field).to_string(), v.clone());
                    }
                    None => {
                        metadata.remove(*field);
                    }
                }
            }
            new["metadata"] = Value::Object(metadata);
        }
        // Otherwise the stored metadata, with the managers this request may change.
        return new;
    }
    let mut new = body;
    if info.has_status {
        match existing.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Some(m) = new.as_object_mut() {
                    m.remove("status");
                }
            }
        }
    }
    // managedFields are the server's; a client's copy is replaced by the stored one.
    let stored = meta(existing)["managedFields"].clone();
    let m = meta_mut(&mut new);
    if stored.is_null() {
        m.remove("managedFields");
    } else {
        m.insert("managedFields".into(), stored);
    }
    new
}

/// A Pod's status strategy and status validation, as kube-apiserver's: a write through
/// `status` that leaves out `qosClass`, `observedGeneration` or a condition's
/// `observedGeneration` (zero is left out) keeps the stored value, the condition matched by
/// type; `qosClass` may then not differ from the stored one, and no generation may be
/// negative (422).
fn pod_status_update(
    info: &ResourceInfo,
    name: &str,
    existing: &Value,
    new: &mut Value,
) -> Result<(), Error> {
    let r = &info.api_resource;
    if !(r.group.is_empty() && r.kind == "Pod") {
        return Ok(());
    }
    let unset = |v: &Value| v.is_null() || v.as_str() == Some("") || v.as_i64() == Some(0);
    let old = &existing["status"];
    if !new["status"].is_object() {
        new["status"] = json!({});
    }
    let status = &mut new["status"];
    for field in ["qosClass", "observedGeneration"] {
        if unset(&status[field]) && !unset(&old[field]) {
            status[field] = old[field].clone();
        }
    }
    let mut causes: Vec<(String, String)> = Vec::new();
    fn qos_class(status: &Value) -> &str {
        status["qosClass"].as_str().unwrap_or("")
    }
    if qos_class(status) != qos_class(old) {
        causes.push((
            "status.qosClass".into(),
            format!("Invalid value: {}: field is immutable", status["qosClass"]),
        ));
    }
    let negative = |field: String, v: &Value, causes: &mut Vec<(String, String)>| {
        if let Some(n) = v.as_i64().filter(|n| *n < 0) {
            causes.push((
                field,
                format!("Invalid value: {n}: must be a non-negative integer"),
            ));
        }
    };
    negative(
        "status.observedGeneration".into(),
        &status["observedGeneration"],
        &mut causes,
    );
    let old_conditions = old["conditions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    if let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        for (i, condition) in conditions.iter_mut().enumerate() {
            // A condition that is not an object is the schema's to refuse, not this to index.
            if !condition.is_object() {
                continue;
            }
            if unset(&condition["observedGeneration"])
                && let Some(kept) = old_conditions
                    .iter()
                    .find(|c| c["type"] == condition["type"])
                    .map(|c| &c["observedGeneration"])
                    .filter(|g| !unset(g))
            {
                condition["observedGeneration"] = kept.clone();
            }
            negative(
                format!("status.conditions[{i}].observedGeneration"),
                &condition["observedGeneration"],
                &mut causes,
            );
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let causes: Vec<(&str, &str)> = causes
        .iter()
        .map(|(f, m)| (f.as_str(), m.as_str()))
        .collect();
    Err(Error::new_invalid(&r.group, &r.kind, name, &causes))
}

/// Which metadata a write through the status subresource keeps from the stored object,
/// as the kind's status strategy (its `PrepareForUpdate`) decides: `None` for all of it
/// (custom resources, and the built-ins whose strategy calls `ResetObjectMetaForStatus`,
/// such as FlowSchemas, APIServices and ResourceClaims); otherwise the body's labels,
/// annotations, finalizers and owner references are written, but for the fields named
/// (read from the pinned version by writing each through every built-in's status
/// subresource).
fn status_write_keeps(info: &ResourceInfo) -> Option<&'static [&'static str]> {
    // Custom resources have no table of patch fields.
    info.patch_fields?;
    let r = &info.api_resource;
    match (r.group.as_str(), r.kind.as_str()) {
        ("", "Pod") => Some(&["ownerReferences", "deletionTimestamp"]),
        ("apps", "Deployment") => Some(&["labels"]),
        (
            "",
            "Namespace"
            | "Node"
            | "PersistentVolume"
            | "PersistentVolumeClaim"
            | "ReplicationController"
            | "ResourceQuota"
            | "Service",
        )
        | ("apps", "DaemonSet" | "ReplicaSet" | "StatefulSet")
        | ("autoscaling", "HorizontalPodAutoscaler")
        | ("batch", "CronJob" | "Job")
        | ("networking.k8s.io", "Ingress")
        | ("policy", "PodDisruptionBudget")
        | ("certificates.k8s.io", "CertificateSigningRequest")
        | ("apiextensions.k8s.io", "CustomResourceDefinition") => Some(&[]),
        _ => None,
    }
}

fn encode_continue(rv: u64, snapshot: u64) -> String {
    use base64::Engine as _;
    let token = json!({"rv": rv, "snapshot": snapshot}).to_string();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token)
}

fn decode_continue(token: &str) -> Result<(u64, u64), Error> {
    use base64::Engine as _;
    let bad = || Error::new_bad_request(format!("invalid continue token {token:?}"));
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let rv = v["rv"].as_u64().ok_or_else(bad)?;
    let snapshot = v["snapshot"].as_u64().ok_or_else(bad)?;
    Ok((rv, snapshot))
}
