//! The differential suite: each scripted case runs against the fake and against the real
//! kube-apiserver from testenv, and the two transcripts must be equal once normalized.
//!
//! A transcript holds, for every request, its outcome: the response body (2xx) or the
//! error's code, reason and details (name, group, kind, and the fields its causes name); for
//! every watch whether it opened, or its error's code, reason and cause fields; then the events of every watch
//! the case opened, read until the case's marker object arrives. Normalizing replaces the
//! namespace name, uids, timestamps, generated name suffixes (the last 5 characters of a
//! name that starts with its `generateName` cut to 58 bytes, as the server cuts it) and
//! continue tokens by placeholders, keeps of `managedFields` only manager, operation, apiVersion and
//! subresource, and replaces each resourceVersion by its rank among the resourceVersions of
//! the transcript, so their order still counts but their values do not, and the times of a
//! PodDisruptionBudget's `disruptedPods` by a placeholder. Error messages are not compared
//! (the fake's wording differs, see the crate docs), except in the steps marked
//! [`Step::Exact`], which compare an error's whole `Status`.

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::StreamExt;
use kclient_apimachinery::{PatchType, WatchEvent};
use kclient_rest::{Client, Verb};
use kclient_testenv::{Identity, TestEnv};
use kclient_testing::Fake;
use serde_json::{Value, json};

use crate::differential_cases::cases;

/// One step of a case. Paths hold `{ns}` for the case's namespace; bodies and query values
/// may hold `$rv:N` / `$uid:N` / `$continue:N` for the resourceVersion / uid / continue
/// token of step N's response.
#[derive(Debug, Clone)]
pub(crate) enum Step {
    /// A request whose outcome is recorded.
    Req {
        verb: Verb,
        path: String,
        query: Vec<(String, String)>,
        headers: Vec<(String, String)>,
        content_type: Option<&'static str>,
        body: Option<Value>,
    },
    /// Opens a watch now; its events are read at the end of the case, until the marker
    /// (created at `marker_path` from `marker`) arrives or the watch ends with an error.
    Watch {
        path: String,
        query: Vec<(String, String)>,
        headers: Vec<(String, String)>,
        marker_path: String,
        marker: Value,
    },
    /// Like `Req`, recording only the names of the objects in the response, and of a single
    /// object its identity, generation and deletion fields, `spec.nodeName`,
    /// `spec.replicas`, `status.phase` and its conditions' types and statuses (for kinds the
    /// server fills with defaults the fake does not write, such as Pods).
    Names(Box<Step>),
    /// Like `Req`, recording of the response only its kind, name, generation, `spec.replicas`,
    /// `status.selector` and a DaemonSet's template generation annotation (for workloads
    /// whose controllers in testenv write them meanwhile).
    Replicas(Box<Step>),
    /// Like `Req`, recording only whether it succeeded, or the error's code and reason (for
    /// clean-up steps whose answers differ for reasons other cases pin, such as deleting a
    /// namespace, which the fake finishes at once).
    Outcome(Box<Step>),
    /// Like `Req`, recording of the response only its kind, name, labels, annotations,
    /// finalizers and owners' names (for objects whose controllers in testenv write the rest
    /// meanwhile).
    Metadata(Box<Step>),
    /// Like `Req`, recording of the response only its kind, name, `spec.replicas` and the
    /// `managedFields` entries of writes other than to `status` (which controllers in testenv
    /// make meanwhile): who wrote the object, how, and through which subresource.
    Managers(Box<Step>),
    /// Like `Req`, recording of an error its whole `Status` as well: message, causes (their
    /// reasons and messages too) and `retryAfterSeconds`, where the wording is what a test
    /// of the caller reads (such as an eviction's refusal).
    Exact(Box<Step>),
    /// Drops the fake's watch history. The real server's watch cache holds only recent
    /// changes and testenv compacts etcd every minute; before a case with this step runs,
    /// [`ensure_compacted`] makes sure the real history no longer reaches back to the
    /// versions the cases name, also before testenv's first periodic compaction (the
    /// apiserver's compactor skips its first tick, so that comes about two minutes after
    /// testenv starts).
    Compact,
}

impl Step {
    /// Adds a request header.
    pub(crate) fn h(mut self, key: &str, value: &str) -> Step {
        if let Step::Names(inner) = self {
            return Step::Names(Box::new(inner.h(key, value)));
        }
        if let Step::Replicas(inner) = self {
            return Step::Replicas(Box::new(inner.h(key, value)));
        }
        if let Step::Outcome(inner) = self {
            return Step::Outcome(Box::new(inner.h(key, value)));
        }
        if let Step::Metadata(inner) = self {
            return Step::Metadata(Box::new(inner.h(key, value)));
        }
        if let Step::Managers(inner) = self {
            return Step::Managers(Box::new(inner.h(key, value)));
        }
        if let Step::Exact(inner) = self {
            return Step::Exact(Box::new(inner.h(key, value)));
        }
        match &mut self {
            Step::Req { headers, .. } | Step::Watch { headers, .. } => {
                headers.push((key.into(), value.into()));
            }
            Step::Names(_)
            | Step::Replicas(_)
            | Step::Outcome(_)
            | Step::Metadata(_)
            | Step::Managers(_)
            | Step::Exact(_)
            | Step::Compact => {}
        }
        self
    }

    /// Records only kind, name, replicas and selector of the response.
    pub(crate) fn replicas(self) -> Step {
        Step::Replicas(Box::new(self))
    }

    /// Records only whether the request succeeded (or its error's code and reason).
    pub(crate) fn outcome(self) -> Step {
        Step::Outcome(Box::new(self))
    }

    /// Records only the kind, name and metadata a write sets (see [`Step::Metadata`]).
    pub(crate) fn metadata(self) -> Step {
        Step::Metadata(Box::new(self))
    }

    /// Records only the kind, name, replicas and field managers of the response (see
    /// [`Step::Managers`]).
    pub(crate) fn managers(self) -> Step {
        Step::Managers(Box::new(self))
    }

    /// Records an error's whole `Status` (see [`Step::Exact`]).
    pub(crate) fn exact(self) -> Step {
        Step::Exact(Box::new(self))
    }

    /// Records only the names in the response.
    pub(crate) fn names(self) -> Step {
        Step::Names(Box::new(self))
    }

    /// The same watch or request at another path.
    pub(crate) fn with_path(mut self, to: &str) -> Step {
        match &mut self {
            Step::Req { path, .. } | Step::Watch { path, .. } => *path = to.into(),
            Step::Names(_)
            | Step::Replicas(_)
            | Step::Outcome(_)
            | Step::Metadata(_)
            | Step::Managers(_)
            | Step::Exact(_)
            | Step::Compact => {}
        }
        self
    }

    /// Adds a query parameter.
    pub(crate) fn q(mut self, key: &str, value: &str) -> Step {
        if let Step::Names(inner) = self {
            return Step::Names(Box::new(inner.q(key, value)));
        }
        if let Step::Replicas(inner) = self {
            return Step::Replicas(Box::new(inner.q(key, value)));
        }
        if let Step::Outcome(inner) = self {
            return Step::Outcome(Box::new(inner.q(key, value)));
        }
        if let Step::Metadata(inner) = self {
            return Step::Metadata(Box::new(inner.q(key, value)));
        }
        if let Step::Managers(inner) = self {
            return Step::Managers(Box::new(inner.q(key, value)));
        }
        if let Step::Exact(inner) = self {
            return Step::Exact(Box::new(inner.q(key, value)));
        }
        match &mut self {
            Step::Req { query, .. } | Step::Watch { query, .. } => {
                query.push((key.into(), value.into()));
            }
            Step::Names(_)
            | Step::Replicas(_)
            | Step::Outcome(_)
            | Step::Metadata(_)
            | Step::Managers(_)
            | Step::Exact(_)
            | Step::Compact => {}
        }
        self
    }
}

fn req(verb: Verb, path: &str, content_type: Option<&'static str>, body: Option<Value>) -> Step {
    Step::Req {
        verb,
        path: path.into(),
        query: Vec::new(),
        headers: Vec::new(),
        content_type,
        body,
    }
}

/// GET.
pub(crate) fn get(path: &str) -> Step {
    req(Verb::Get, path, None, None)
}
/// POST a JSON body.
pub(crate) fn post(path: &str, body: Value) -> Step {
    req(Verb::Post, path, None, Some(body))
}
/// PUT a JSON body.
pub(crate) fn put(path: &str, body: Value) -> Step {
    req(Verb::Put, path, None, Some(body))
}
/// PATCH with a content type.
pub(crate) fn patch(path: &str, content_type: &'static str, body: Value) -> Step {
    req(Verb::Patch, path, Some(content_type), Some(body))
}
/// DELETE, with an optional DeleteOptions body.
pub(crate) fn delete(path: &str, body: Option<Value>) -> Step {
    req(Verb::Delete, path, None, body)
}
/// A watch on `path` whose marker is a ConfigMap (or a resource like `path`'s) named
/// `zz-marker` carrying `labels`.
pub(crate) fn watch(path: &str, labels: Value) -> Step {
    let (api_version, kind) = if path.contains("/widgets") {
        ("diff.kclient.dev/v1", "Widget")
    } else if path.contains("/v1beta1/namespaces/{ns}/paints") {
        ("diff.kclient.dev/v1beta1", "Paint")
    } else if path.contains("/pods") {
        ("v1", "Pod")
    } else {
        ("v1", "ConfigMap")
    };
    let mut marker = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": "zz-marker", "labels": labels}});
    if kind == "Pod" {
        marker["spec"] = json!({"schedulerName": "kclient-differential-none",
            "containers": [{"name": "app", "image": "app:1"}]});
    }
    Step::Watch {
        path: path.into(),
        query: Vec::new(),
        headers: Vec::new(),
        marker_path: path.into(),
        marker,
    }
}

/// A scripted case.
pub(crate) struct Case {
    pub(crate) name: &'static str,
    pub(crate) steps: Vec<Step>,
}

/// Where a case runs.
struct Target {
    client: Client,
    namespace: String,
    fake: Option<Fake>,
}

fn substitute(text: &str, ns: &str, outputs: &[Value]) -> String {
    let mut text = text.replace("{ns}", ns);
    for (prefix, field) in [
        ("$rv:", "resourceVersion"),
        ("$uid:", "uid"),
        ("$continue:", "continue"),
    ] {
        while let Some(start) = text.find(prefix) {
            let digits: String = text[start + prefix.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let index: usize = digits.parse().expect("a step index after $rv:/$uid:");
            let value = outputs
                .get(index)
                .and_then(|o| o["body"]["metadata"][field].as_str())
                .unwrap_or_else(|| panic!("step {index} has no metadata.{field}"))
                .to_string();
            text.replace_range(start..start + prefix.len() + digits.len(), &value);
        }
    }
    text
}

fn substitute_value(value: &Value, ns: &str, outputs: &[Value]) -> Value {
    match value {
        Value::String(s) => Value::String(substitute(s, ns, outputs)),
        Value::Array(a) => {
            Value::Array(a.iter().map(|v| substitute_value(v, ns, outputs)).collect())
        }
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), substitute_value(v, ns, outputs)))
                .collect(),
        ),
        other => other.clone(),
    }
}

async fn send(target: &Target, step: &Step, outputs: &[Value]) -> Value {
    let Step::Req {
        verb,
        path,
        query,
        headers,
        content_type,
        body,
    } = step
    else {
        unreachable!("only requests are sent")
    };
    let ns = &target.namespace;
    let mut request = target
        .client
        .verb(*verb)
        .abs_path(&substitute(path, ns, outputs))
        .params(
            query
                .iter()
                .map(|(k, v)| (k.clone(), substitute(v, ns, outputs))),
        );
    if let Some(ct) = content_type {
        request = request.content_type(ct);
    }
    for (k, v) in headers {
        request = request.header(k, v);
    }
    if let Some(b) = body {
        request = request.json(&substitute_value(b, ns, outputs));
    }
    match request.max_retries(0).send::<Value>().await {
        Ok(body) => json!({"ok": true, "body": body}),
        Err(e) => {
            let status = e
                .status()
                .unwrap_or_else(|| panic!("{path}: not an API error: {e}"));
            let details = status.details.as_ref();
            json!({
                "ok": false,
                "code": status.code,
                "reason": status.reason,
                "details": {
                    "name": details.map(|d| d.name.clone()),
                    "group": details.map(|d| d.group.clone()),
                    "kind": details.map(|d| d.kind.clone()),
                    // The fields the causes name (such as the list option that is invalid),
                    // each once: the fake may give one cause where the server gives several.
                    "fields": details.map(|d| cause_fields(&d.causes)),
                },
                "message": status.message,
                "status": serde_json::to_value(status).expect("a Status is JSON"),
            })
        }
    }
}

/// The distinct fields that an error's causes name, in order.
fn cause_fields(causes: &[kclient_apimachinery::StatusCause]) -> Vec<String> {
    causes
        .iter()
        .map(|c| c.field.clone())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// What a `Names` step records of a response body (see [`Step::Names`]); watches on Pods
/// record their objects so too.
fn summary(body: &Value) -> Value {
    let names: Vec<Value> = match body["items"].as_array() {
        Some(items) => items
            .iter()
            .map(|i| i["metadata"]["name"].clone())
            .collect(),
        None => vec![body["metadata"]["name"].clone()],
    };
    let m = &body["metadata"];
    let conditions: Vec<Value> = body["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| json!({"type": c["type"], "status": c["status"]}))
        .collect();
    json!({"kind": body["kind"], "names": names, "items": [], "metadata": {
        "uid": m["uid"], "resourceVersion": m["resourceVersion"],
        "generation": m["generation"], "deletionTimestamp": m["deletionTimestamp"],
        "deletionGracePeriodSeconds": m["deletionGracePeriodSeconds"],
        "finalizers": m["finalizers"]},
        "spec": {"nodeName": body["spec"]["nodeName"], "replicas": body["spec"]["replicas"]},
        "status": {"phase": body["status"]["phase"], "conditions": conditions}})
}

/// Runs a case; returns its raw transcript (requests' outcomes, then each watch's events).
async fn run(target: &Target, case: &Case) -> Vec<Value> {
    let mut outputs: Vec<Value> = Vec::new();
    let mut watches = Vec::new();
    for step in &case.steps {
        let before = outputs.len();
        match step {
            Step::Req { .. } => outputs.push(send(target, step, &outputs).await),
            Step::Exact(inner) => outputs.push(send(target, inner, &outputs).await),
            Step::Names(inner) => {
                let mut out = send(target, inner, &outputs).await;
                if out["ok"] == true {
                    out["body"] = summary(&out["body"]);
                }
                outputs.push(out);
            }
            Step::Outcome(inner) => {
                let out = send(target, inner, &outputs).await;
                outputs
                    .push(json!({"ok": out["ok"], "code": out["code"], "reason": out["reason"]}));
            }
            Step::Metadata(inner) => {
                let mut out = send(target, inner, &outputs).await;
                if out["ok"] == true {
                    let m = &out["body"]["metadata"];
                    let owners: Vec<Value> = m["ownerReferences"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(|r| r["name"].clone())
                        .collect();
                    out["body"] = json!({"kind": out["body"]["kind"], "name": m["name"],
                        "labels": m["labels"], "annotations": m["annotations"],
                        "finalizers": m["finalizers"], "owners": owners});
                }
                outputs.push(out);
            }
            Step::Managers(inner) => {
                let mut out = send(target, inner, &outputs).await;
                if out["ok"] == true {
                    let b = &out["body"];
                    let managers: Vec<Value> = b["metadata"]["managedFields"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter(|e| e["subresource"] != "status")
                        .cloned()
                        .collect();
                    out["body"] = json!({"kind": b["kind"], "name": b["metadata"]["name"],
                        "replicas": b["spec"]["replicas"], "managedFields": managers});
                }
                outputs.push(out);
            }
            Step::Replicas(inner) => {
                let mut out = send(target, inner, &outputs).await;
                if out["ok"] == true {
                    let b = &out["body"];
                    out["body"] = json!({"kind": b["kind"], "apiVersion": b["apiVersion"],
                        "name": b["metadata"]["name"], "replicas": b["spec"]["replicas"],
                        "selector": b["status"]["selector"],
                        "generation": b["metadata"]["generation"],
                        "templateGeneration": b["metadata"]["annotations"]
                            ["deprecated.daemonset.template.generation"]});
                }
                outputs.push(out);
            }
            Step::Watch {
                path,
                query,
                headers,
                marker_path,
                marker,
            } => {
                let ns = &target.namespace;
                let mut request = target
                    .client
                    .get()
                    .abs_path(&substitute(path, ns, &outputs))
                    .params(
                        query
                            .iter()
                            .map(|(k, v)| (k.clone(), substitute(v, ns, &outputs))),
                    );
                for (k, v) in headers {
                    request = request.header(k, v);
                }
                let stream = request.watch::<Value>().await;
                outputs.push(match &stream {
                    Ok(_) => json!({"watch_opened": true}),
                    Err(e) => {
                        let status = e.status();
                        json!({"watch_opened": false,
                            "code": status.map(|s| s.code),
                            "reason": status.map(|s| s.reason.clone()),
                            "fields": status
                                .and_then(|s| s.details.as_ref())
                                .map(|d| cause_fields(&d.causes))})
                    }
                });
                watches.push((
                    stream.ok(),
                    substitute(marker_path, ns, &outputs),
                    marker.clone(),
                ));
            }
            Step::Compact => {
                if let Some(fake) = &target.fake {
                    fake.tracker().compact();
                }
            }
        }
        // Only an `Exact` step keeps an error's whole Status.
        if outputs.len() > before
            && !matches!(step, Step::Exact(_))
            && let Some(m) = outputs.last_mut().and_then(Value::as_object_mut)
        {
            m.remove("status");
        }
    }
    for (stream, marker_path, marker) in watches {
        let Some(mut stream) = stream else { continue };
        let _: Result<Value, _> = target
            .client
            .post()
            .abs_path(&marker_path)
            .json(&marker)
            .send()
            .await;
        let mut events = Vec::new();
        loop {
            let next = tokio::time::timeout(Duration::from_secs(30), stream.next())
                .await
                .unwrap_or_else(|_| panic!("{}: no watch event within 30 s", case.name));
            match next {
                None => break,
                Some(Err(e)) => {
                    events.push(
                        json!({"type": "ERROR", "code": e.code(), "reason": e.reason().as_str()}),
                    );
                    break;
                }
                Some(Ok(WatchEvent::Bookmark(b))) => {
                    // Periodic bookmarks come when the server likes; only the end of the
                    // initial events is part of the script.
                    if b.is_initial_events_end() {
                        events.push(json!({"type": "BOOKMARK", "object": {"metadata": {
                            "resourceVersion": b.resource_version}}}));
                    }
                }
                Some(Ok(event)) => {
                    let kind = event.event_type();
                    let obj = match event {
                        WatchEvent::Added(o) | WatchEvent::Modified(o) | WatchEvent::Deleted(o) => {
                            o
                        }
                        _ => Value::Null,
                    };
                    if obj["metadata"]["name"] == "zz-marker" {
                        break;
                    }
                    let obj = if marker_path.contains("/pods") {
                        summary(&obj)
                    } else {
                        obj
                    };
                    events.push(json!({"type": format!("{kind:?}"), "object": obj}));
                }
            }
        }
        outputs.push(json!({"events": events}));
    }
    outputs
}

/// Replaces what may differ between two servers by placeholders (see the module docs).
fn normalize(transcript: &[Value], ns: &str) -> Value {
    let mut transcript = transcript.to_vec();
    mark_collection_rvs(&mut transcript);
    let mut rvs = BTreeSet::new();
    collect_rvs(&Value::Array(transcript.clone()), &mut rvs);
    let ranks: Vec<u64> = rvs.into_iter().collect();
    let mut out = Value::Array(transcript);
    normalize_value(&mut out, ns, &ranks, None);
    // Messages are not compared.
    for entry in out.as_array_mut().into_iter().flatten() {
        if let Some(m) = entry.as_object_mut() {
            m.remove("message");
        }
    }
    out
}

fn max_rv(value: &Value) -> u64 {
    let mut rvs = BTreeSet::new();
    collect_rvs(value, &mut rvs);
    rvs.last().copied().unwrap_or(0)
}

/// The resourceVersion of a list (and of the bookmark ending initial events) is the store's
/// current one, which on a real server also counts writes of other clients: it is replaced
/// by whether it is at least every resourceVersion the case saw before it (`CURRENT`) or
/// not (`OLDER`).
fn mark_collection_rvs(transcript: &mut [Value]) {
    let mut seen = 0;
    for entry in transcript.iter_mut() {
        let is_list = entry["body"]["kind"]
            .as_str()
            .is_some_and(|k| k.ends_with("List"));
        if is_list {
            seen = seen.max(max_rv(&entry["body"]["items"]));
            if let Some(rv) = entry["body"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|r| r.parse::<u64>().ok())
            {
                entry["body"]["metadata"]["resourceVersion"] =
                    json!(if rv >= seen { "CURRENT" } else { "OLDER" });
                seen = seen.max(rv);
            }
        } else if let Some(events) = entry.get_mut("events").and_then(Value::as_array_mut) {
            let mut in_watch = 0;
            for event in events.iter_mut() {
                if event["type"] == "BOOKMARK" {
                    let rv = event["object"]["metadata"]["resourceVersion"]
                        .as_str()
                        .and_then(|r| r.parse::<u64>().ok())
                        .unwrap_or(0);
                    event["object"]["metadata"]["resourceVersion"] =
                        json!(if rv >= in_watch { "CURRENT" } else { "OLDER" });
                } else {
                    in_watch = in_watch.max(max_rv(event));
                }
            }
        } else {
            seen = seen.max(max_rv(entry));
        }
    }
}

fn collect_rvs(value: &Value, out: &mut BTreeSet<u64>) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                if k == "resourceVersion"
                    && let Some(n) = v.as_str().and_then(|s| s.parse::<u64>().ok())
                {
                    out.insert(n);
                }
                collect_rvs(v, out);
            }
        }
        Value::Array(a) => a.iter().for_each(|v| collect_rvs(v, out)),
        _ => {}
    }
}

/// `text` with every uid in it (8-4-4-4-12 hexadecimal digits) replaced by `UID`.
fn mask_uids(text: &str) -> String {
    let is_uid = |w: &[u8]| {
        w.len() == 36
            && w.iter().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => *b == b'-',
                _ => b.is_ascii_hexdigit(),
            })
    };
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes.len() - i >= 36 && is_uid(&bytes[i..i + 36]) {
            out.push_str("UID");
            i += 36;
        } else {
            let c = text[i..].chars().next().expect("within the text");
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

fn normalize_value(value: &mut Value, ns: &str, ranks: &[u64], key: Option<&str>) {
    match value {
        Value::String(s) => {
            match key {
                // A Job's generated selector and labels carry its uid.
                Some("uid" | "controller-uid" | "batch.kubernetes.io/controller-uid") => {
                    *s = "UID".into();
                }
                Some("creationTimestamp" | "deletionTimestamp" | "time" | "lastTransitionTime") => {
                    *s = "TIME".into();
                }
                Some("continue") if !s.is_empty() => *s = "TOKEN".into(),
                // A TokenRequest's token and its expiry.
                Some("token") => *s = "SECRET".into(),
                Some("expirationTimestamp") => *s = "TIME".into(),
                // A Service's address is allocated at random.
                Some("clusterIP") if s != "None" => *s = "IP".into(),
                // An error's message may name the uid of the object it is about.
                Some("message") => *s = mask_uids(s),
                Some("resourceVersion") => {
                    if let Ok(n) = s.parse::<u64>() {
                        let rank = ranks.iter().position(|r| *r == n).unwrap_or(usize::MAX);
                        *s = format!("RV{rank}");
                    }
                }
                _ => {}
            }
            if s.contains(ns) {
                *s = s.replace(ns, "NS");
            }
        }
        Value::Array(a) => {
            let inner = if key == Some("clusterIPs") {
                Some("clusterIP")
            } else {
                None
            };
            a.iter_mut()
                .for_each(|v| normalize_value(v, ns, ranks, inner));
        }
        Value::Object(m) => {
            // A PodDisruptionBudget's disrupted Pods map each name to the time of its eviction.
            if key == Some("disruptedPods") {
                m.values_mut().for_each(|v| *v = json!("TIME"));
            }
            if let Some(Value::Array(managed)) = m.get_mut("managedFields") {
                let mut entries: Vec<Value> = managed
                    .iter()
                    .map(|e| {
                        // testenv's apiserver is a binary named so: its own writes (an
                        // eviction's to a PodDisruptionBudget) carry that name where a
                        // kube-apiserver's carry its.
                        let manager = if e["manager"] == "testenv" {
                            json!("kube-apiserver")
                        } else {
                            e["manager"].clone()
                        };
                        json!({"manager": manager, "operation": e["operation"],
                            "apiVersion": e["apiVersion"], "subresource": e["subresource"]})
                    })
                    .collect();
                entries.sort_by_key(|e| e.to_string());
                *managed = entries;
            }
            let generated = m
                .get("generateName")
                .and_then(Value::as_str)
                .map(str::to_string);
            // The server keeps the first 58 bytes of a generateName: the 5 characters after
            // those are masked, so a name that kept more of the prefix still differs.
            if let (Some(prefix), Some(Value::String(name))) = (generated, m.get_mut("name"))
                && name.len() > 5
                && name.starts_with(&prefix[..prefix.len().min(58)])
                && name.is_char_boundary(name.len() - 5)
            {
                name.replace_range(name.len() - 5.., "XXXXX");
            }
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if let Some(v) = m.get_mut(&k) {
                    normalize_value(v, ns, ranks, Some(&k));
                }
            }
        }
        _ => {}
    }
}

/// The custom resources of the cases: Widgets (with a status subresource), Gadgets
/// (with status and scale subresources), Sprockets (with `spec.color` and `spec.size`
/// as selectable fields) and Settings (a status subresource, and a schema with defaults,
/// nullable fields, a subtree that keeps unknown fields, an embedded object and a list-map
/// with a defaulted key), Paints (versions v1, stored, and v1beta1, whose schemas differ,
/// without a conversion webhook), Gauges (a schema of bounds, lengths, patterns, sizes,
/// formats and list types, and a status subresource) and Checks (CEL rules: on objects,
/// scalars, list items and map values, with messages, reasons, field paths, and transition
/// rules, and a status subresource) and Libraries (CEL rules that call Kubernetes'
/// libraries, see `libraries_crd`).
pub(crate) fn test_crds() -> Vec<Value> {
    let crd = |plural: &str, kind: &str, subresources: Value| {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.diff.kclient.dev")},
            "spec": {
                "group": "diff.kclient.dev",
                "scope": "Namespaced",
                "names": {"plural": plural, "singular": kind.to_lowercase(), "kind": kind,
                    "listKind": format!("{kind}List")},
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "subresources": subresources,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                }],
            },
        })
    };
    vec![
        crd("widgets", "Widget", json!({"status": {}})),
        crd(
            "gadgets",
            "Gadget",
            json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}}),
        ),
        {
            let mut sprockets = crd("sprockets", "Sprocket", json!({}));
            let version = &mut sprockets["spec"]["versions"][0];
            version["selectableFields"] =
                json!([{"jsonPath": ".spec.color"}, {"jsonPath": ".spec.size"}]);
            // Selectable fields must have a type in the schema.
            version["schema"]["openAPIV3Schema"]["properties"] = json!({"spec": {
                "type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"color": {"type": "string"}, "size": {"type": "integer"}}}});
            sprockets
        },
        {
            let mut settings = crd("settings", "Setting", json!({"status": {}}));
            settings["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({
                "type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "replicas": {"type": "integer", "default": 1},
                    "mode": {"type": "string", "default": "a"},
                    "nested": {"type": "object", "default": {},
                        "properties": {"inner": {"type": "string", "default": "x"}}},
                    "items": {"type": "array", "items": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "weight": {"type": "integer", "default": 5}}}},
                    "labels": {"type": "object", "additionalProperties": {"type": "object",
                        "properties": {"v": {"type": "string", "default": "d"}}}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                        "properties": {"known": {"type": "string", "default": "k"},
                            "sub": {"type": "object",
                                "properties": {"a": {"type": "string"}}}}},
                    "tags": {"type": "array", "items": {"type": "string", "default": "t"}},
                    "weights": {"type": "object",
                        "additionalProperties": {"type": "integer", "default": 7}},
                    "anything": {"type": "object", "additionalProperties": true},
                    "level": {"type": "string", "enum": ["low", "high"]},
                    "checks": {"type": "array", "items": {"type": "object",
                        "required": ["name"], "properties": {"name": {"type": "string"},
                            "count": {"type": "integer"}}}},
                    "nulldef": {"type": "string", "default": "n"},
                    "nullok": {"type": "string", "nullable": true, "default": "z"},
                    "nullnodef": {"type": "string"},
                    "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                        "properties": {"spec": {"type": "object"}}},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["port", "protocol"],
                        "items": {"type": "object", "required": ["port"], "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"},
                            "name": {"type": "string"}}}}}},
                "status": {"type": "object", "properties": {
                    "phase": {"type": "string", "default": "P"},
                    "count": {"type": "integer"}}}}});
            settings
        },
        {
            let mut gauges = crd("gauges", "Gauge", json!({"status": {}}));
            let text = |format: &str| json!({"type": "string", "format": format});
            gauges["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({
                "type": "object", "properties": {
                "spec": {"type": "object", "properties": {
                    "min": {"type": "integer", "minimum": 1},
                    "max": {"type": "integer", "maximum": 10},
                    "above": {"type": "integer", "minimum": 1, "exclusiveMinimum": true},
                    "below": {"type": "number", "maximum": 10, "exclusiveMaximum": true},
                    "triple": {"type": "integer", "multipleOf": 3},
                    "half": {"type": "number", "multipleOf": 0.5},
                    "small": {"type": "integer", "format": "int32"},
                    "short": {"type": "string", "minLength": 2},
                    "long": {"type": "string", "maxLength": 3},
                    "word": {"type": "string", "pattern": "^[a-z]+\\d?$"},
                    "few": {"type": "array", "minItems": 2, "items": {"type": "string"}},
                    "many": {"type": "array", "maxItems": 2, "items": {"type": "string"}},
                    "one": {"type": "array", "maxItems": 1, "items": {"type": "integer"}},
                    "wide": {"type": "object", "minProperties": 2,
                        "additionalProperties": {"type": "string"}},
                    "narrow": {"type": "object", "maxProperties": 1,
                        "additionalProperties": {"type": "string"}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set",
                        "items": {"type": "string"}},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["port", "protocol"],
                        "items": {"type": "object", "required": ["port"], "properties": {
                            "port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"}}}},
                    "level": {"type": "integer", "enum": [1, 2]},
                    "uid": text("uuid"),
                    "at": text("date-time"),
                    "day": text("date"),
                    "data": text("byte"),
                    "ip": text("ipv4"),
                    "net": text("cidr"),
                    "mac": text("mac"),
                    "host": text("hostname"),
                    "label": text("k8s-short-name"),
                    "secret": text("password")}},
                "status": {"type": "object", "properties": {
                    "count": {"type": "integer", "minimum": 0},
                    "names": {"type": "array", "x-kubernetes-list-type": "set",
                        "items": {"type": "string"}}}}}});
            // A schema may constrain the name (and generateName) of the metadata.
            gauges["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"] = json!({"type": "object", "properties": {"name": {"type": "string", "maxLength": 20}}});
            // CEL rules, which the fake checks only with its `cel` feature (difference 1).
            let spec = &mut gauges["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
                ["spec"]["properties"];
            spec["tiny"] = json!({"type": "string", "maxLength": 1});
            spec["ratio"] = json!({"type": "number", "enum": [1, 2]});
            spec["choice"] = json!({"type": "string", "nullable": true, "enum": ["x"]});
            spec["groups"] = json!({"type": "object", "additionalProperties": {"type": "array",
                "x-kubernetes-list-type": "set", "items": {"type": "string"}}});
            spec["ruled"] = json!({"type": "integer",
                "x-kubernetes-validations": [{"rule": "self > 0"}]});
            spec["site"] = json!({"type": "string", "maxLength": 100,
                "x-kubernetes-validations": [{"rule": "isURL(self)"}]});
            gauges
        },
        {
            let mut checks = crd("checks", "Check", json!({"status": {}}));
            let ruled = |schema: Value, rule: Value| {
                let mut schema = schema;
                schema["x-kubernetes-validations"] = json!([rule]);
                schema
            };
            let text = json!({"type": "string", "maxLength": 10});
            checks["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({
                "type": "object", "properties": {
                "spec": {"type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "!has(self.a) || !has(self.b) || self.a <= self.b"},
                        {"rule": "!has(self.c) || self.c != 'bad'", "message": "c must not be bad"},
                        {"rule": "!has(self.d) || self.d < 10", "reason": "FieldValueForbidden",
                            "fieldPath": ".d", "message": "d too big"},
                        {"rule": "!has(self.g) || !has(oldSelf.g) || self.g == oldSelf.g",
                            "reason": "FieldValueForbidden", "message": "g is immutable"}],
                    "properties": {
                        "a": {"type": "integer"}, "b": {"type": "integer"},
                        "c": text, "d": {"type": "integer"}, "g": text,
                        "e": ruled(json!({"type": "integer"}),
                            json!({"rule": "self < 10", "messageExpression": "'e is too big'"})),
                        "pos": ruled(json!({"type": "integer"}), json!({"rule": "self > 0"})),
                        "name": ruled(text.clone(),
                            json!({"rule": "self == oldSelf", "message": "name is immutable"})),
                        "tags": {"type": "array", "maxItems": 5,
                            "items": ruled(text.clone(), json!({"rule": "self.size() < 3"}))},
                        "f": ruled(json!({"type": "number"}), json!({"rule": "self < 2.5"})),
                        "m": ruled(json!({"type": "object", "maxProperties": 5,
                                "additionalProperties": {"type": "integer"}}),
                            json!({"rule": "self.all(k, self[k] > 0)"})),
                        "x": ruled(json!({"type": "object",
                                "properties": {"yy": {"type": "integer"}}}),
                            json!({"rule": "self.yy > 0"})),
                        "w": ruled(json!({"type": "object",
                                "properties": {"q": {"type": "integer"}}}),
                            json!({"rule": "self.q > 0", "message": "q must be positive"})),
                        "mm": {"type": "object", "maxProperties": 5,
                            "additionalProperties": ruled(json!({"type": "integer"}),
                                json!({"rule": "self >= 0"}))},
                        "ports": {"type": "array", "maxItems": 5,
                            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                            "items": {"type": "object", "required": ["port"],
                                "properties": {"port": {"type": "integer"}, "name": text},
                                "x-kubernetes-validations": [
                                    {"rule": "self.port > 0"},
                                    {"rule": "self.name == oldSelf.name",
                                        "message": "port names are immutable"}]}}}},
                "status": {"type": "object", "properties": {
                    "count": ruled(json!({"type": "integer"}), json!({"rule": "self >= 0"}))}}}});
            checks
        },
        libraries_crd(crd("libraries", "Library", json!({}))),
        {
            let mut paints = crd("paints", "Paint", json!({}));
            let version = |name: &str, storage: bool, spec: Value| {
                json!({"name": name, "served": true, "storage": storage,
                    "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                        "spec": {"type": "object", "properties": spec}}}}})
            };
            paints["spec"]["versions"] = json!([
                version(
                    "v1",
                    true,
                    json!({"color": {"type": "string", "default": "red"},
                    "size": {"type": "integer"}})
                ),
                version(
                    "v1beta1",
                    false,
                    json!({"color": {"type": "string"},
                    "shade": {"type": "string", "default": "light"}})
                ),
            ]);
            paints
        },
    ]
}

/// Libraries: CEL rules that call Kubernetes' libraries (lists, sets, regex, URLs and
/// quantities) on fields bounded so that the server's cost estimate takes them. A URL's
/// parts and a quantity sum are compared with sibling fields that a case gives, so that a
/// part the fake reads otherwise than the server refuses on one side only. IP addresses and
/// CIDRs and versions are compared the same way. Fields of the formats `duration`,
/// `date-time`, `date` and `byte` are durations, timestamps and bytes in CEL; `label` is
/// checked against the format `formatName` names; `names` and `counts` have
/// two-variable comprehensions.
fn libraries_crd(mut libraries: Value) -> Value {
    let text = |max: u64| json!({"type": "string", "maxLength": max});
    let ruled = |schema: Value, rules: Value| {
        let mut schema = schema;
        schema["x-kubernetes-validations"] = rules;
        schema
    };
    let part = |field: &str, getter: &str| {
        json!({"rule": format!("!has(self.url) || !has(self.{field}) || url(self.url).{getter}() == self.{field}"),
            "message": format!("{field} differs")})
    };
    libraries["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({
        "type": "object", "properties": {
        "spec": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "!has(self.url) || isURL(self.url)", "message": "not a URL"},
                part("scheme", "getScheme"), part("host", "getHost"),
                part("hostname", "getHostname"), part("port", "getPort"),
                part("path", "getEscapedPath"),
                {"rule": "!has(self.url) || !has(self.qx) || url(self.url).getQuery()['x'] == self.qx",
                    "message": "query x differs"},
                {"rule": "!has(self.qa) || !has(self.qb) || !has(self.qsum) || quantity(self.qa).add(quantity(self.qb)).asInteger() == self.qsum",
                    "message": "qsum differs"},
                {"rule": "!has(self.qa) || !has(self.qb) || quantity(self.qa).sub(quantity(self.qb)).compareTo(quantity(self.qa)) <= 0",
                    "message": "qb is negative"}],
            "properties": {
                "nums": ruled(json!({"type": "array", "maxItems": 5, "items": {"type": "integer"}}), json!([
                    {"rule": "self.isSorted()", "message": "nums must be sorted"},
                    {"rule": "self.sum() <= 10", "message": "the sum is over 10"},
                    {"rule": "self.min() >= 0"},
                    {"rule": "self.max() < 100"},
                    {"rule": "self.indexOf(7) != 0 && self.lastIndexOf(8) != 1"},
                    {"rule": "self.first().orValue(0) != 9 && self.last().orValue(0) != 6"},
                    {"rule": "!sets.intersects(self, [13]) && (!sets.contains(self, [1, 2]) || sets.equivalent(self, [2, 1]))"}])),
                "words": ruled(json!({"type": "array", "maxItems": 5, "items": text(10)}), json!([
                    {"rule": "self.isSorted()"}, {"rule": "self.max() != 'zz'"},
                    {"rule": "self.indexOf('x') == -1"}])),
                "code": ruled(text(20), json!([
                    {"rule": "self.find('[0-9]+') != '13'"},
                    {"rule": "self.findAll('[a-z]').size() < 4"},
                    {"rule": "self.findAll('[0-9]', 2).size() < 2 || self.find('\\\\d\\\\d') != ''",
                        "message": "two digits apart"}])),
                "url": text(60), "scheme": text(60), "host": text(60), "hostname": text(60),
                "port": text(60), "path": text(60),
                "qx": {"type": "array", "maxItems": 3, "items": text(10)},
                "qty": ruled(text(20), json!([
                    {"rule": "isQuantity(self)"},
                    {"rule": "!isQuantity(self) || quantity(self).isLessThan(quantity('10Gi'))"},
                    {"rule": "!isQuantity(self) || sign(quantity(self)) >= 0", "message": "negative"}])),
                "whole": ruled(text(20), json!([{"rule": "quantity(self).isInteger()"}])),
                "approx": ruled(text(20), json!([{"rule": "quantity(self).asApproximateFloat() < 2.0"}])),
                "qa": text(20), "qb": text(20), "qsum": {"type": "integer"},
                "addr": text(40), "family": {"type": "integer"}, "canonical": {"type": "boolean"},
                "flags": {"type": "array", "maxItems": 5, "items": {"type": "boolean"}},
                "text": text(60), "net": text(50), "member": text(40), "within": {"type": "boolean"},
                "sub": text(50), "subWithin": {"type": "boolean"}, "bits": {"type": "integer"},
                "version": ruled(text(40), json!([{"rule": "isSemver(self)"}]))}}}});
    let fields = &mut libraries["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"];
    for name in ["major", "minor", "patch", "order"] {
        fields[name] = json!({"type": "integer"});
    }
    fields["newer"] = text(40);
    fields["timeout"] = ruled(
        text(20),
        json!([{"rule": "duration(self) >= duration('1s')"}]),
    );
    // Strings of the formats CEL reads as durations, timestamps and bytes.
    let formatted = |format: &str| json!({"type": "string", "format": format, "maxLength": 40});
    fields["ttl"] = ruled(
        formatted("duration"),
        json!([{"rule": "self >= duration('1m')", "message": "ttl under a minute"},
            {"rule": "self.getHours() < 1000"}]),
    );
    fields["start"] = formatted("date-time");
    fields["end"] = formatted("date-time");
    fields["day"] = ruled(
        formatted("date"),
        json!([{"rule": "self > timestamp('2020-01-01T00:00:00Z')", "message": "day too early"},
            {"rule": "self.getDayOfWeek() != 0", "message": "not on a Sunday"}]),
    );
    fields["blob"] = ruled(formatted("byte"), json!([{"rule": "size(self) <= 4"}]));
    // Named formats: the rule fails with the list of what is wrong as its message.
    fields["label"] = text(70);
    fields["formatName"] = text(30);
    fields["problem"] = text(400);
    // Transition rules with `optionalOldSelf`, which run on creates too.
    fields["opt"] = ruled(
        json!({"type": "integer"}),
        json!([{"rule": "oldSelf.hasValue() || self < 100", "optionalOldSelf": true,
                "message": "opt starts under 100"},
            {"rule": "oldSelf.orValue(0) <= self", "optionalOldSelf": true,
                "message": "opt may only grow"}]),
    );
    fields["problems"] = json!({"type": "integer"});
    // Two-variable comprehensions.
    fields["names"] = ruled(
        json!({"type": "array", "maxItems": 5, "items": text(10)}),
        json!([{"rule": "self.all(i, x, i < 4 && x != '')", "message": "all"},
            {"rule": "!self.exists(i, x, i == 1 && x == 'no')", "message": "exists"},
            {"rule": "self.size() < 3 || self.existsOne(i, x, x == 'one')", "message": "existsOne"},
            {"rule": "self.transformList(i, x, i > 0, x) == self.slice(1, self.size())",
                "message": "transformList"},
            {"rule": "self.transformMap(i, x, x).size() == self.size()", "message": "transformMap"},
            {"rule": "self.transformMapEntry(i, x, {x: i}).size() >= 0", "message": "transformMapEntry"}]),
    );
    fields["counts"] = ruled(
        json!({"type": "object", "maxProperties": 5, "additionalProperties": {"type": "integer"}}),
        json!([{"rule": "self.all(k, v, k.size() < 5 && v >= 0)", "message": "counts"},
            {"rule": "self.transformMapEntry(k, v, v > 0, {k + '!': v}).size() <= 3",
                "message": "positive counts"}]),
    );
    let rules = &mut libraries["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["x-kubernetes-validations"];
    let rules = rules.as_array_mut().expect("the rules of spec");
    for (rule, message) in [
        ("!has(self.addr) || isIP(self.addr)", "not an IP"),
        (
            "!has(self.addr) || !has(self.family) || ip(self.addr).family() == self.family",
            "family differs",
        ),
        (
            "!has(self.addr) || !has(self.canonical) || ip.isCanonical(self.addr) == self.canonical",
            "canonical differs",
        ),
        (
            "!has(self.addr) || !has(self.flags) || [ip(self.addr).isUnspecified(), ip(self.addr).isLoopback(), ip(self.addr).isLinkLocalMulticast(), ip(self.addr).isLinkLocalUnicast(), ip(self.addr).isGlobalUnicast()] == self.flags",
            "flags differ",
        ),
        (
            "!has(self.addr) || !has(self.text) || string(ip(self.addr)) == self.text",
            "text differs",
        ),
        ("!has(self.net) || isCIDR(self.net)", "not a CIDR"),
        (
            "!has(self.net) || !has(self.bits) || cidr(self.net).prefixLength() == self.bits",
            "bits differ",
        ),
        (
            "!has(self.net) || !has(self.member) || !has(self.within) || cidr(self.net).containsIP(self.member) == self.within",
            "containsIP(string) differs",
        ),
        (
            "!has(self.net) || !has(self.member) || !has(self.within) || !isIP(self.member) || cidr(self.net).containsIP(ip(self.member)) == self.within",
            "containsIP(ip) differs",
        ),
        (
            "!has(self.net) || !has(self.sub) || !has(self.subWithin) || cidr(self.net).containsCIDR(self.sub) == self.subWithin",
            "containsCIDR differs",
        ),
        (
            "!has(self.net) || !has(self.text) || string(cidr(self.net).masked()) == self.text",
            "masked differs",
        ),
        (
            "!has(self.net) || !has(self.addr) || cidr(self.net).ip() == ip(self.addr)",
            "ip() differs",
        ),
        (
            "!has(self.label) || !has(self.formatName) || !format.named(self.formatName).hasValue() || !format.named(self.formatName).value().validate(self.label).hasValue()",
            "label does not match its format",
        ),
        (
            "!has(self.problem) || !has(self.problems) || format.named(self.formatName).value().validate(self.label).orValue(['']).size() == self.problems && format.named(self.formatName).value().validate(self.label).orValue([''])[0] == self.problem",
            "problems differ",
        ),
        (
            "!has(self.start) || !has(self.end) || self.start < self.end",
            "start must precede end",
        ),
        (
            "!has(self.start) || !has(self.end) || self.end - self.start <= duration('48h')",
            "longer than two days",
        ),
        (
            "!has(self.start) || self.start.getFullYear() >= 2000 && self.start.getHours('America/New_York') != 3",
            "start hour",
        ),
        (
            "!has(self.version) || !has(self.major) || semver(self.version, true).major() == self.major",
            "major differs",
        ),
        (
            "!has(self.version) || !has(self.minor) || semver(self.version, true).minor() == self.minor",
            "minor differs",
        ),
        (
            "!has(self.version) || !has(self.patch) || semver(self.version, true).patch() == self.patch",
            "patch differs",
        ),
        (
            "!has(self.version) || !has(self.newer) || !has(self.order) || semver(self.version, true).compareTo(semver(self.newer, true)) == self.order",
            "order differs",
        ),
        (
            "!has(self.version) || !has(self.newer) || !has(self.order) || semver(self.version, true).isLessThan(semver(self.newer, true)) == (self.order < 0)",
            "isLessThan differs",
        ),
    ] {
        rules.push(json!({"rule": rule, "message": message}));
    }
    libraries
}

/// The nodes the cases bind their Pods to on the real server, where nothing runs them.
pub(crate) const CASE_NODES: [&str; 2] = ["node-1", "node-2"];

/// Creates the Nodes [`CASE_NODES`] on the real server unless they exist. The cases' Pods
/// name them, and they must exist: testenv runs kube-controller-manager's pod garbage
/// collector, which deletes every Pod bound to a node that has been missing for 40 s, at its
/// next pass (every 20 s). A case whose Pod such a pass caught read `404` on the server where
/// the fake still had the Pod (a CI run of session 60: `eviction budgets: a dry run changes
/// neither the Pod nor the budget`). The nodes are cordoned and tainted, so that neither the
/// scheduler nor a DaemonSet puts other tests' Pods on them, and carry no kwok annotation, so
/// that neither kwok nor the simulated kubelet takes them over: their Pods stay as the cases
/// leave them, as in the fake, which collects no Pods.
pub(crate) async fn ensure_case_nodes(client: &Client) {
    static DONE: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    DONE.get_or_init(|| async {
        for name in CASE_NODES {
            let node = json!({
                "metadata": {"name": name, "labels": {"kclient.dev/differential": "true"}},
                "spec": {"unschedulable": true, "taints": [{"key": "kclient.dev/differential",
                    "value": "no-kubelet", "effect": "NoSchedule"}]}});
            let created: Result<Value, _> = client
                .post()
                .abs_path("/api/v1/nodes")
                .json(&node)
                .send()
                .await;
            match created {
                Ok(_) => {}
                Err(e) if e.is_already_exists() => {}
                Err(e) => panic!("creating the Node {name} for the cases' Pods: {e}"),
            }
        }
    })
    .await;
}

/// Creates the test CRDs unless they exist, and waits until each is Established and served.
pub(crate) async fn ensure_test_crds(client: &Client) {
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    for crd in test_crds() {
        let name = crd["metadata"]["name"].as_str().unwrap().to_string();
        let plural = crd["spec"]["names"]["plural"].as_str().unwrap().to_string();
        let created: Result<Value, _> = client.post().abs_path(path).json(&crd).send().await;
        if let Err(e) = &created {
            assert!(e.is_already_exists(), "creating the CRD {name}: {e}");
        }
        let mut ready = false;
        for _ in 0..300 {
            let crd: Value = client
                .get()
                .abs_path(&format!("{path}/{name}"))
                .send()
                .await
                .unwrap_or_else(|e| panic!("read the CRD {name}: {e}"));
            let established = crd["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            if established {
                // Established CRDs may still 404 for a moment while the handler installs.
                let listed: Result<Value, _> = client
                    .get()
                    .abs_path(&format!("/apis/diff.kclient.dev/v1/{plural}"))
                    .send()
                    .await;
                if listed.is_ok() {
                    ready = true;
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            ready,
            "the CRD {name} did not become Established within 30 s"
        );
    }
}

/// The resourceVersion a case lists at after a [`Step::Compact`] (a watch case asks for
/// "1", which goes with it).
pub(crate) const COMPACTED_RV: &str = "2";

/// Makes sure the real server answers a list at [`COMPACTED_RV`] with `410 Expired`:
/// compacts etcd if it still holds that revision (as it does until the first periodic
/// compaction, about two minutes after testenv starts) and waits until the apiserver has
/// noticed. Any other answer (a 429 under load) counts as not yet, and is named if the wait
/// runs out.
async fn ensure_compacted(env: &TestEnv) {
    static DONE: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    DONE.get_or_init(|| async {
        let client = env.client(Identity::Admin);
        // Whether the list was refused as expired; otherwise what it answered.
        let expired = || async {
            let listed: Result<Value, _> = client
                .get()
                .abs_path("/api/v1/configmaps")
                .param("resourceVersion", COMPACTED_RV)
                .param("resourceVersionMatch", "Exact")
                .param("limit", "1")
                .send()
                .await;
            match listed {
                Ok(_) => Err("a list".to_string()),
                Err(e) if e.is_resource_expired() || e.is_gone() => Ok(()),
                Err(e) => Err(format!("an error: {e}")),
            }
        };
        if expired().await.is_ok() {
            return;
        }
        env.compact_etcd().await;
        let mut last = String::new();
        for _ in 0..300 {
            match expired().await {
                Ok(()) => return,
                Err(answer) => last = answer,
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "30 s after compacting etcd, a list at resourceVersion {COMPACTED_RV} still got {last}"
        );
    })
    .await;
}

/// Runs one case on both servers; returns a description of the difference, if any.
async fn compare(env: &TestEnv, case: &Case) -> Option<String> {
    if case.steps.iter().any(|s| matches!(s, Step::Compact)) {
        ensure_compacted(env).await;
    }
    let real_ns = env.namespace().await;
    let real = Target {
        client: env.client(Identity::Admin),
        namespace: real_ns.name().to_string(),
        fake: None,
    };
    let fake = Fake::new();
    let fake_target = Target {
        client: fake.client(),
        namespace: real_ns.name().to_string(),
        fake: Some(fake.clone()),
    };
    let _: Value = fake_target
        .client
        .post()
        .abs_path("/api/v1/namespaces")
        .json(&json!({"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": real_ns.name(), "labels": {"kclient.dev/test": "true"}}}))
        .send()
        .await
        .expect("the namespace in the fake");
    for crd in test_crds() {
        let _: Value = fake_target
            .client
            .post()
            .abs_path("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
            .json(&crd)
            .send()
            .await
            .expect("the test CRDs in the fake");
    }
    let want = normalize(&run(&real, case).await, real_ns.name());
    release_finalizers(&real).await;
    let got = normalize(&run(&fake_target, case).await, real_ns.name());
    if want == got {
        return None;
    }
    let (w, g) = (want.as_array().unwrap(), got.as_array().unwrap());
    let mut text = format!("case {}:\n", case.name);
    for i in 0..w.len().max(g.len()) {
        if w.get(i) != g.get(i) {
            text.push_str(&format!(
                "  output {i}:\n    real: {}\n    fake: {}\n",
                w.get(i).map(Value::to_string).unwrap_or_default(),
                g.get(i).map(Value::to_string).unwrap_or_default()
            ));
        }
    }
    Some(text)
}

/// Clears the finalizers a case left on ConfigMaps (the only kind the cases give finalizers
/// that no controller removes), so that the real server can delete the case's namespace: one
/// left behind holds the namespace in `Terminating` for good, and a testenv that outlives a
/// test run collects such namespaces, which slows its namespace controller for every later
/// test.
async fn release_finalizers(target: &Target) {
    let path = format!("/api/v1/namespaces/{}/configmaps", target.namespace);
    let list: Value = target
        .client
        .get()
        .abs_path(&path)
        .send()
        .await
        .expect("listing the case's ConfigMaps");
    for item in list["items"].as_array().into_iter().flatten() {
        let held = item["metadata"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty());
        if !held {
            continue;
        }
        let name = item["metadata"]["name"]
            .as_str()
            .expect("a ConfigMap's name");
        let _: Value = target
            .client
            .patch(PatchType::Merge)
            .abs_path(&format!("{path}/{name}"))
            .json(&json!({"metadata": {"finalizers": null}}))
            .send()
            .await
            .unwrap_or_else(|e| panic!("releasing ConfigMap {name}'s finalizers: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_fake_answers_every_scripted_case_as_the_real_apiserver_does() {
    let env = TestEnv::connect().await;
    ensure_test_crds(&env.client(Identity::Admin)).await;
    ensure_case_nodes(&env.client(Identity::Admin)).await;
    let cases = cases();
    assert!(cases.len() >= 60, "{} cases", cases.len());
    let names: BTreeSet<&str> = cases.iter().map(|c| c.name).collect();
    assert_eq!(names.len(), cases.len(), "case names are unique");
    let env = &env;
    let differences: Vec<String> = futures_util::stream::iter(cases.iter())
        .map(|case| compare(env, case))
        .buffer_unordered(6)
        .filter_map(|d| async move { d })
        .collect()
        .await;
    assert!(
        differences.is_empty(),
        "{} of {} cases differ:\n{}",
        differences.len(),
        cases.len(),
        differences.join("\n")
    );
}

/// A watch whose `timeoutSeconds` is negative ends at once, without an object: the server's
/// deadline has passed before it starts (the server sends an ERROR event first or not, as its
/// goroutines race, so the scripted cases cannot compare it).
#[tokio::test(flavor = "multi_thread")]
async fn a_negative_watch_timeout_ends_the_watch_at_once() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let fake = Fake::new();
    let fake_client = fake.client();
    let _: Value = fake_client
        .post()
        .abs_path("/api/v1/namespaces")
        .json(&json!({"metadata": {"name": ns.name()}}))
        .send()
        .await
        .expect("the namespace in the fake");
    let path = format!("/api/v1/namespaces/{}/configmaps", ns.name());
    for (client, server) in [(env.client(Identity::Admin), "real"), (fake_client, "fake")] {
        let _: Value = client
            .post()
            .abs_path(&path)
            .json(&json!({"metadata": {"name": "a"}}))
            .send()
            .await
            .expect("a ConfigMap");
        let mut stream = client
            .get()
            .abs_path(&path)
            .param("timeoutSeconds", "-1")
            .watch::<Value>()
            .await
            .unwrap_or_else(|e| panic!("{server}: the watch opens: {e}"));
        // The first item ends it: the end of the stream or an ERROR event, not an object.
        let first = tokio::time::timeout(Duration::from_secs(10), stream.next())
            .await
            .unwrap_or_else(|_| panic!("{server}: the watch is still open after 10 s"));
        if let Some(Ok(event)) = first {
            panic!("{server}: an event: {event:?}");
        }
    }
}

/// The normalizer keeps what must be equal: a different order of resourceVersions, a
/// different code or a missing event is a difference.
#[test]
fn normalizing_keeps_order_and_outcomes() {
    let a = vec![
        json!({"ok": true, "body": {"metadata": {"resourceVersion": "10", "uid": "u1", "namespace": "ns-1"}}}),
        json!({"ok": true, "body": {"metadata": {"resourceVersion": "12"}}}),
    ];
    let b = vec![
        json!({"ok": true, "body": {"metadata": {"resourceVersion": "7", "uid": "u2", "namespace": "ns-1"}}}),
        json!({"ok": true, "body": {"metadata": {"resourceVersion": "9"}}}),
    ];
    assert_eq!(normalize(&a, "ns-1"), normalize(&b, "ns-1"));
    let swapped = vec![b[1].clone(), b[0].clone()];
    assert_ne!(normalize(&a, "ns-1"), normalize(&swapped, "ns-1"));
    let other_ns = vec![
        json!({"ok": true, "body": {"metadata": {"resourceVersion": "7", "uid": "u2", "namespace": "ns-2"}}}),
        b[1].clone(),
    ];
    assert_ne!(normalize(&a, "ns-1"), normalize(&other_ns, "ns-1"));
}

/// The categories of discovery, which the scripted cases cannot compare (a discovery
/// document lists every resource the server has): for every resource the fake serves,
/// the real server's categories in the same group version, and a CRD's `names.categories`.
#[tokio::test(flavor = "multi_thread")]
async fn discovery_serves_the_servers_categories() {
    let env = TestEnv::connect().await;
    let real = env.client(Identity::Admin);
    let fake = Fake::new();
    let categories = |doc: &Value| -> Vec<(String, Value)> {
        doc["resources"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                (
                    r["name"].as_str().unwrap_or("").to_string(),
                    r["categories"].clone(),
                )
            })
            .collect()
    };
    let groups: Value = fake.client().get().abs_path("/apis").send().await.unwrap();
    let mut paths = vec!["/api/v1".to_string()];
    for g in groups["groups"].as_array().into_iter().flatten() {
        for v in g["versions"].as_array().into_iter().flatten() {
            paths.push(format!("/apis/{}", v["groupVersion"].as_str().unwrap()));
        }
    }
    let mut compared = 0;
    for path in paths {
        let Ok(served) = real.get().abs_path(&path).send::<Value>().await else {
            continue;
        };
        let want = categories(&served);
        let doc: Value = fake.client().get().abs_path(&path).send().await.unwrap();
        for (name, got) in categories(&doc) {
            if let Some((_, want)) = want.iter().find(|(n, _)| *n == name) {
                assert_eq!(&got, want, "{path} {name}");
                compared += 1;
            }
        }
    }
    assert!(compared > 50, "{compared} resources compared");
    let pods: Value = fake
        .client()
        .get()
        .abs_path("/api/v1")
        .send()
        .await
        .unwrap();
    assert!(categories(&pods).contains(&("pods".into(), json!(["all"]))));

    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.diff.kclient.dev"},
        "spec": {"group": "diff.kclient.dev", "scope": "Namespaced",
            "names": {"plural": "gizmos", "kind": "Gizmo", "categories": ["all", "toys"]},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object",
                    "x-kubernetes-preserve-unknown-fields": true}}}]}});
    let _: Value = fake
        .client()
        .post()
        .abs_path("/apis/apiextensions.k8s.io/v1/customresourcedefinitions")
        .json(&crd)
        .send()
        .await
        .unwrap();
    let doc: Value = fake
        .client()
        .get()
        .abs_path("/apis/diff.kclient.dev/v1")
        .send()
        .await
        .unwrap();
    assert!(categories(&doc).contains(&("gizmos".into(), json!(["all", "toys"]))));
}
