//! An informer against a [`MisbehavingServer`]: a server that sends what a broken apiserver,
//! proxy or aggregated API can send. In each case the informer must report a clear error to
//! its watch-error handler, keep its request rate within what its backoff allows, and end
//! equal to the server's state once the server behaves again.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use kclient_cache::{
    Backoff, CancellationToken, REFLECTOR_BACKOFF, ReflectorOptions, SharedIndexInformer,
    SharedIndexInformerOptions,
};
use kclient_testenv::{MisbehavingServer, Reply, SeenRequest, StreamEnd};
use parking_lot::Mutex;
use serde_json::{Value, json};

use crate::adapter::{ConfigMap, ConfigMapListerWatcher, ForcedRelists};

/// How the scripted server answers at a given moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
enum Mode {
    /// Lists and watches like the apiserver.
    Behave,
    /// One stored object does not decode as a ConfigMap (its `data` is a number), in lists
    /// and in the initial events of a watch-list.
    UndecodableObject,
    /// Lists are fine; every watch sends one good event, then a line that is not JSON.
    GarbageWatchLine,
    /// Lists are fine; every watch sends an event of a type no server sends.
    UnknownEventType,
    /// Every list promises more bytes than it sends, then closes.
    TruncatedList,
    /// Every list is a 200 `text/html` page, as from a proxy's login page.
    HtmlList,
    /// Lists are fine; every watch sends a line of [`HUGE_LINE`] bytes that never ends.
    HugeWatchLine,
    /// Lists stop sending after their headers (the body stalls).
    StalledList,
    /// Lists are fine; every watch is a 200 `text/html` page, as from a proxy's login page.
    HtmlWatch,
}

/// The endless watch line of [`Mode::HugeWatchLine`]: 32 times the informer's limit.
const HUGE_LINE: u64 = 32 * LIMIT as u64;

/// The informers' per-object limit here (`Config::max_object_size`).
const LIMIT: usize = 8 << 20;

/// The scripted server's state: a namespace of ConfigMaps at one resource version.
struct Model {
    mode: AtomicU8,
}

const NAMESPACE: &str = "ns";
const RV: &str = "100";

fn configmap(name: &str, value: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE, "resourceVersion": "90", "uid": name},
        "data": {"value": value},
    })
}

fn good_objects() -> Vec<Value> {
    (0..5)
        .map(|i| configmap(&format!("cm-{i}"), "ok"))
        .collect()
}

fn undecodable() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "broken", "namespace": NAMESPACE, "resourceVersion": "95"},
        "data": 42,
    })
}

fn list_body(items: Vec<Value>) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": "v1",
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": RV},
        "items": items,
    }))
    .unwrap()
}

fn event(kind: &str, object: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"type": kind, "object": object})).unwrap()
}

fn initial_events_end() -> Vec<u8> {
    event(
        "BOOKMARK",
        json!({
            "kind": "ConfigMap",
            "apiVersion": "v1",
            "metadata": {
                "resourceVersion": RV,
                "annotations": {"k8s.io/initial-events-end": "true"},
            },
        }),
    )
}

impl Model {
    fn mode(&self) -> Mode {
        match self.mode.load(Ordering::SeqCst) {
            1 => Mode::UndecodableObject,
            2 => Mode::GarbageWatchLine,
            3 => Mode::UnknownEventType,
            4 => Mode::TruncatedList,
            5 => Mode::HtmlList,
            6 => Mode::HugeWatchLine,
            7 => Mode::StalledList,
            8 => Mode::HtmlWatch,
            _ => Mode::Behave,
        }
    }

    fn answer(&self, req: &SeenRequest) -> Reply {
        let mode = self.mode();
        let mut objects = good_objects();
        if mode == Mode::UndecodableObject {
            objects.insert(2, undecodable());
        }
        if !req.is_watch() {
            return match mode {
                Mode::TruncatedList => Reply::Truncated {
                    status: 200,
                    content_type: "application/json".into(),
                    promised: 10_000,
                    body: list_body(objects)[..100].to_vec(),
                    end: StreamEnd::Close,
                },
                Mode::HtmlList => Reply::Body {
                    status: 200,
                    content_type: "text/html; charset=utf-8".into(),
                    body: b"<html><body>Please log in</body></html>".to_vec(),
                },
                Mode::StalledList => Reply::Truncated {
                    status: 200,
                    content_type: "application/json".into(),
                    promised: 10_000,
                    body: b"{\"kind\":\"ConfigMapList\",".to_vec(),
                    end: StreamEnd::Hang,
                },
                _ => Reply::json(list_body(objects)),
            };
        }
        if mode == Mode::HtmlWatch {
            return Reply::Body {
                status: 200,
                content_type: "text/html; charset=utf-8".into(),
                body: b"<html><body>Please log in</body></html>\n".to_vec(),
            };
        }
        let initial = req.param("sendInitialEvents") == Some("true");
        let mut lines: Vec<Vec<u8>> = Vec::new();
        if initial {
            lines.extend(objects.into_iter().map(|o| event("ADDED", o)));
            lines.push(initial_events_end());
        }
        match mode {
            Mode::GarbageWatchLine => {
                let mut changed = configmap("cm-0", "changed");
                changed["metadata"]["resourceVersion"] = json!("99");
                lines.push(event("MODIFIED", changed));
                lines.push(b"{this is not json".to_vec());
            }
            Mode::UnknownEventType => {
                lines.push(event("SURPRISE", configmap("cm-1", "changed")));
            }
            Mode::HugeWatchLine => {
                let mut prefix: Vec<u8> = lines.concat();
                prefix.extend_from_slice(b"{\"type\":\"MODIFIED\",\"object\":{\"data\":{\"k\":\"");
                return Reply::Generated {
                    status: 200,
                    content_type: "application/json".into(),
                    prefix,
                    fill: b'x',
                    len: HUGE_LINE,
                    suffix: Vec::new(),
                    end: StreamEnd::Hang,
                };
            }
            _ => {}
        }
        Reply::watch_lines(lines, StreamEnd::Hang)
    }
}

/// An error with its causes, as a log line shows it.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// An informer on the scripted server, with short backoff delays (100 ms doubling to 1 s,
/// so up to 2 s with jitter) to keep the test short; the paths taken are the same.
struct Scenario {
    server: MisbehavingServer,
    model: Arc<Model>,
    informer: SharedIndexInformer<ConfigMap>,
    errors: Arc<Mutex<Vec<String>>>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// A running informer and what its watch-error handler received.
struct Running {
    informer: SharedIndexInformer<ConfigMap>,
    errors: Arc<Mutex<Vec<String>>>,
    cancel: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// An informer of [`NAMESPACE`]'s ConfigMaps on `server`; it runs until its token is
/// cancelled.
fn informer_on(server: &MisbehavingServer, use_watch_list: bool) -> Running {
    let mut config = server.config();
    config.max_object_size = LIMIT;
    config.read_idle_timeout = Some(Duration::from_secs(1));
    let lw = ConfigMapListerWatcher {
        client: kclient_rest::Client::new(config).expect("client"),
        namespace: NAMESPACE.to_owned(),
        wire: crate::adapter::Wire::Json,
        lists: Arc::default(),
        forced_relists: ForcedRelists::default(),
    };
    let informer = SharedIndexInformer::with_options(
        Arc::new(lw),
        SharedIndexInformerOptions::default().reflector(
            ReflectorOptions::default()
                .use_watch_list(use_watch_list)
                .backoff(Backoff {
                    duration: Duration::from_millis(100),
                    cap: Duration::from_secs(1),
                    ..REFLECTOR_BACKOFF
                }),
        ),
    );
    let errors: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = errors.clone();
    informer
        .set_watch_error_handler(move |_, e| seen.lock().push(chain(e)))
        .unwrap();
    let cancel = CancellationToken::new();
    let task = tokio::spawn({
        let (informer, cancel) = (informer.clone(), cancel.clone());
        async move { informer.run(cancel).await }
    });
    Running {
        informer,
        errors,
        cancel,
        task,
    }
}

impl Scenario {
    async fn start(mode: Mode, use_watch_list: bool) -> Scenario {
        let model = Arc::new(Model {
            mode: AtomicU8::new(mode as u8),
        });
        let answering = model.clone();
        let server = MisbehavingServer::start(move |req| answering.answer(req)).await;
        let Running {
            informer,
            errors,
            cancel,
            task,
        } = informer_on(&server, use_watch_list);
        Scenario {
            server,
            model,
            informer,
            errors,
            cancel,
            task,
        }
    }

    /// Lets the failure go on for `time`, then checks that requests stayed within the
    /// backoff: after the first second, at most `per_round` requests in any 1 s window
    /// (delays are at least 1 s once the backoff is capped, so one round per second).
    async fn fail_for(&self, time: Duration, per_round: usize) {
        tokio::time::sleep(time).await;
        let requests = self.server.requests();
        assert!(!requests.is_empty(), "the informer never called the server");
        let warmed_up = requests[0].at + Duration::from_secs(4);
        let steady = requests.iter().filter(|r| r.at >= warmed_up).count();
        let most = self
            .server
            .max_requests_in(Duration::from_secs(1), |r| r.at >= warmed_up);
        assert!(
            most <= per_round,
            "{most} requests within one second in steady failure ({steady} after warm-up, {} \
             in all): the retry loop ignores its backoff",
            requests.len()
        );
        assert!(
            requests.len() <= 30,
            "{} requests in {time:?}: the retry loop ignores its backoff",
            requests.len()
        );
    }

    fn assert_reported(&self, what: &str) {
        let errors = self.errors.lock();
        assert!(
            errors.iter().any(|e| e.contains(what)),
            "no error naming {what:?} reached the watch-error handler: {errors:?}"
        );
    }

    /// The server behaves again: the informer must end with exactly the good objects.
    async fn recovers(self) {
        self.model.mode.store(Mode::Behave as u8, Ordering::SeqCst);
        let want: Vec<String> = (0..5).map(|i| format!("{NAMESPACE}/cm-{i}")).collect();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
        loop {
            let mut keys = self.informer.get_indexer().list_keys();
            keys.sort();
            let values_ok = self
                .informer
                .get_indexer()
                .list()
                .iter()
                .all(|cm| cm.data.get("value").map(String::as_str) == Some("ok"));
            if self.informer.has_synced() && keys == want && values_ok {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the informer did not recover within 15 s: {keys:?}; errors {:?}",
                self.errors.lock()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.cancel.cancel();
        self.task.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_object_in_the_initial_events_backs_off_falls_back_to_list_and_recovers() {
    let scenario = Scenario::start(Mode::UndecodableObject, true).await;
    // One round is a watch-list and its fallback LIST.
    scenario.fail_for(Duration::from_secs(7), 2).await;
    assert!(!scenario.informer.has_synced());
    // One snapshot: the rounds alternate watch-list, LIST. The last watch-list's LIST may
    // still be on its way when the snapshot is taken, so the sequence may end in a watch.
    let kinds: Vec<bool> = scenario
        .server
        .requests()
        .iter()
        .map(|r| r.is_watch())
        .collect();
    assert!(kinds.len() >= 4, "only {} requests in 7 s", kinds.len());
    for (i, &watch) in kinds.iter().enumerate() {
        assert_eq!(
            watch,
            i % 2 == 0,
            "every watch-list should fall back to exactly one LIST, and each LIST follow a \
             watch-list; request {i} breaks that (watch = true, LIST = false): {kinds:?}"
        );
    }
    scenario.assert_reported("unable to decode an event from the watch stream");
    scenario.assert_reported("expected a map");
    scenario.recovers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_undecodable_object_in_a_list_backs_off_and_recovers() {
    let scenario = Scenario::start(Mode::UndecodableObject, false).await;
    scenario.fail_for(Duration::from_secs(7), 1).await;
    assert!(!scenario.informer.has_synced());
    assert!(scenario.server.requests().iter().all(|r| !r.is_watch()));
    scenario.assert_reported("expected a map");
    scenario.recovers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_garbage_watch_line_after_sync_ends_the_watch_backs_off_and_relists() {
    let scenario = Scenario::start(Mode::GarbageWatchLine, false).await;
    // One round: the re-watch and, after the failure, a relist.
    scenario.fail_for(Duration::from_secs(7), 2).await;
    assert!(scenario.informer.has_synced());
    scenario.assert_reported("unable to decode an event from the watch stream");
    scenario.recovers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_watch_event_type_is_reported_and_backed_off() {
    let scenario = Scenario::start(Mode::UnknownEventType, true).await;
    scenario.fail_for(Duration::from_secs(7), 2).await;
    scenario.assert_reported("SURPRISE");
    scenario.recovers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_truncated_list_body_is_reported_backed_off_and_recovers() {
    let scenario = Scenario::start(Mode::TruncatedList, false).await;
    scenario.fail_for(Duration::from_secs(7), 1).await;
    assert!(!scenario.informer.has_synced());
    let errors = scenario.errors.lock().clone();
    assert!(!errors.is_empty(), "the truncated list was not reported");
    scenario.recovers().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_html_page_instead_of_a_list_names_its_content_type_and_recovers() {
    let scenario = Scenario::start(Mode::HtmlList, false).await;
    scenario.fail_for(Duration::from_secs(7), 1).await;
    assert!(!scenario.informer.has_synced());
    scenario.assert_reported("text/html");
    scenario.recovers().await;
}

/// A watch answered with an HTML page (200, `text/html`) is refused when it opens, with an
/// error naming the content type, as client-go's watch refuses a content type it has no
/// stream decoder for ("no stream serializers registered for text/html"); the reflector
/// backs off and relists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_html_page_instead_of_a_watch_names_its_content_type_and_recovers() {
    let scenario = Scenario::start(Mode::HtmlWatch, false).await;
    // One round: the watch and, after its failure, a relist.
    scenario.fail_for(Duration::from_secs(7), 2).await;
    assert!(scenario.informer.has_synced());
    scenario.assert_reported("text/html");
    scenario.recovers().await;
}

/// The peak resident memory of this process so far (`VmHWM`), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmHWM in /proc/self/status")
        * 1024
}

/// Set in the child process that runs a memory-measured scenario alone.
const ALONE: &str = "KCLIENT_MISBEHAVING_ALONE";

/// Runs `test` again in a child process of this test binary, alone, so that its peak memory
/// is its own; returns the child's report (the lines it printed naming the peak growth).
fn in_a_child_process(test: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(ALONE, "1")
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{test} failed alone:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .filter(|l| l.contains("peak growth"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A watch line that never ends (here 256 MiB, 32 times the limit) is refused once it passes
/// `Config::max_object_size`, reported, and backed off; the process's peak memory grows by at
/// most twice the limit beyond what a healthy informer on the same server needs (measured
/// first, as the control). Measured in a child process running only this case.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_watch_line_is_refused_at_the_limit_with_bounded_memory() {
    const NAME: &str =
        "misbehaving::an_endless_watch_line_is_refused_at_the_limit_with_bounded_memory";
    if std::env::var_os(ALONE).is_none() {
        let report = in_a_child_process(NAME);
        eprintln!("{report}");
        assert!(
            report.contains("peak growth"),
            "no report from the child: {report:?}"
        );
        return;
    }
    let before = peak_rss();
    // The control: a healthy informer on the same kind of server, synced, then stopped.
    let control = Scenario::start(Mode::Behave, false).await;
    control.fail_for(Duration::from_secs(1), 2).await;
    control.recovers().await;
    let own = peak_rss().saturating_sub(before);

    let scenario = Scenario::start(Mode::HugeWatchLine, false).await;
    scenario.fail_for(Duration::from_secs(6), 2).await;
    scenario.assert_reported("max_object_size");
    let growth = peak_rss().saturating_sub(before);
    println!(
        "peak growth {} MiB with a {} MiB limit; a healthy informer alone: {} MiB",
        growth >> 20,
        LIMIT >> 20,
        own >> 20
    );
    assert!(
        growth <= own + 2 * LIMIT as u64,
        "peak memory grew by {} MiB reading lines refused at {} MiB (a healthy informer: {} MiB)",
        growth >> 20,
        LIMIT >> 20,
        own >> 20
    );
    scenario.recovers().await;
}

/// A list whose body stops after its headers fails after `Config::read_idle_timeout` (1 s
/// here), is reported as a timeout, and is retried through the backoff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_body_that_stalls_times_out_is_reported_and_recovers() {
    let scenario = Scenario::start(Mode::StalledList, false).await;
    scenario.fail_for(Duration::from_secs(6), 1).await;
    assert!(!scenario.informer.has_synced());
    scenario.assert_reported("read_idle_timeout");
    scenario.recovers().await;
}

/// Waits (15 s at most) until the informer holds ConfigMap `name` at resourceVersion `rv`;
/// fails with what it holds and `why()` otherwise.
async fn wait_until_held(
    informer: &SharedIndexInformer<ConfigMap>,
    name: &str,
    rv: &str,
    why: impl Fn() -> String,
) {
    let want = (name.to_owned(), rv.to_owned());
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !held(informer).contains(&want) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{name} at {rv} never held: {:?}; {}",
            held(informer),
            why()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The name and resourceVersion of each ConfigMap the informer holds.
fn held(informer: &SharedIndexInformer<ConfigMap>) -> Vec<(String, String)> {
    let mut held: Vec<(String, String)> = informer
        .get_indexer()
        .list()
        .iter()
        .map(|cm| {
            (
                cm.metadata.name.clone(),
                cm.metadata.resource_version.clone(),
            )
        })
        .collect();
    held.sort();
    held
}

/// A watch body that ends properly (its last chunk sent) in the middle of an event, after a
/// complete one: client-go's frame reader returns `io.ErrUnexpectedEOF`, which its
/// `StreamWatcher` treats as the end of the watch, and the reflector re-watches from the
/// last version it saw. So must kclient: one LIST only, the second watch from the complete
/// event's version, and that watch's events delivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_body_that_ends_inside_an_event_rewatches_from_the_last_version() {
    let server = MisbehavingServer::start(|req| {
        if !req.is_watch() {
            return Reply::json(list_body(good_objects()));
        }
        let changed = |name: &str, rv: &str| {
            let mut cm = configmap(name, "changed");
            cm["metadata"]["resourceVersion"] = json!(rv);
            event("MODIFIED", cm)
        };
        match req.param("resourceVersion") {
            Some(RV) => {
                let mut cut = changed("cm-1", "102");
                cut.truncate(cut.len() / 2);
                let mut whole = changed("cm-0", "101");
                whole.push(b'\n');
                Reply::Stream {
                    status: 200,
                    content_type: "application/json".into(),
                    parts: vec![(Duration::ZERO, whole), (Duration::ZERO, cut)],
                    end: StreamEnd::Finish,
                }
            }
            Some("101") => Reply::watch_lines([changed("cm-2", "103")], StreamEnd::Hang),
            _ => Reply::watch_lines([], StreamEnd::Hang),
        }
    })
    .await;
    let Running {
        informer,
        errors,
        cancel,
        task,
    } = informer_on(&server, false);
    wait_until_held(&informer, "cm-2", "103", || {
        format!(
            "the event after the re-watch never arrived; requests {:?}; errors {:?}",
            server.requests(),
            errors.lock()
        )
    })
    .await;
    let requests = server.requests();
    let lists = requests.iter().filter(|r| !r.is_watch()).count();
    let watches: Vec<Option<&str>> = requests
        .iter()
        .filter(|r| r.is_watch())
        .map(|r| r.param("resourceVersion"))
        .collect();
    assert_eq!(lists, 1, "relisted after the cut event: {requests:?}");
    assert_eq!(watches, [Some(RV), Some("101")], "{requests:?}");
    let held = held(&informer);
    assert!(
        held.contains(&("cm-0".to_owned(), "101".to_owned())),
        "{held:?}"
    );
    assert!(
        held.contains(&("cm-1".to_owned(), "90".to_owned())),
        "{held:?}"
    );
    let errors = errors.lock().clone();
    assert!(
        errors.iter().all(|e| !e.contains("decode")),
        "the end of the stream was reported as a decode error: {errors:?}"
    );
    cancel.cancel();
    task.await.unwrap();
}

/// A watch event whose object is of another kind (a Pod in a ConfigMap watch, as a broken
/// proxy or aggregated API might send) is skipped and logged as an error, as client-go's
/// reflector skips an object that is not of its expected type (`utilruntime.HandleError`);
/// the next event is delivered and the watch goes on (no relist). Before, the Pod was
/// decoded as a ConfigMap and put in the cache.
#[tokio::test]
async fn a_watch_event_of_another_kind_is_skipped_and_logged() {
    let logs = kclient_testenv::LogCapture::start(tracing::Level::ERROR);
    let server = MisbehavingServer::start(|req| {
        if !req.is_watch() {
            return Reply::json(list_body(good_objects()));
        }
        if req.param("resourceVersion") != Some(RV) {
            return Reply::watch_lines([], StreamEnd::Hang);
        }
        let pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "a-pod", "namespace": NAMESPACE, "resourceVersion": "101"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        });
        let mut changed = configmap("cm-1", "changed");
        changed["metadata"]["resourceVersion"] = json!("102");
        Reply::watch_lines(
            [event("ADDED", pod), event("MODIFIED", changed)],
            StreamEnd::Hang,
        )
    })
    .await;
    let Running {
        informer,
        errors,
        cancel,
        task,
    } = informer_on(&server, false);
    wait_until_held(&informer, "cm-1", "102", || {
        format!(
            "the event after the Pod never arrived; errors {:?}",
            errors.lock()
        )
    })
    .await;
    let held = held(&informer);
    assert!(
        held.iter().all(|(name, _)| name != "a-pod"),
        "the Pod was stored as a ConfigMap: {held:?}"
    );
    assert_eq!(held.len(), 5, "{held:?}");
    let text = logs.text();
    assert!(
        text.contains("unexpected watch event object type")
            && text.contains("kind=Pod")
            && text.contains("kind=ConfigMap"),
        "the skipped event was not logged as an error: {text}"
    );
    let requests = server.requests();
    assert_eq!(
        requests.iter().filter(|r| !r.is_watch()).count(),
        1,
        "relisted: {requests:?}"
    );
    cancel.cancel();
    task.await.unwrap();
}

/// A server that answers every watch with 200 and then an in-stream ERROR (here a 429) is
/// not heard from successfully: `last_successful_sync` stays at the list while the watches
/// keep failing, so that a health check on it sees the informer cut off.
#[tokio::test(flavor = "multi_thread")]
async fn a_watch_that_only_sends_an_error_is_no_successful_sync() {
    let server = MisbehavingServer::start(|req| {
        if !req.is_watch() {
            return Reply::json(list_body(good_objects()));
        }
        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "too many requests", "reason": "TooManyRequests", "code": 429});
        Reply::watch_lines([event("ERROR", status)], StreamEnd::Finish)
    })
    .await;
    let Running {
        informer,
        errors,
        cancel,
        task,
    } = informer_on(&server, false);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while errors.lock().len() < 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the watches' errors never came: {:?}",
            errors.lock()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after_list = informer.last_successful_sync().expect("the list succeeded");
    let watches_before = server.requests().iter().filter(|r| r.is_watch()).count();
    while server.requests().iter().filter(|r| r.is_watch()).count() < watches_before + 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no more watches were opened: {:?}",
            server.requests()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        informer.last_successful_sync(),
        Some(after_list),
        "a watch answered only with an ERROR counted as a success; errors {:?}",
        errors.lock()
    );
    cancel.cancel();
    task.await.unwrap();
}
