//! Health and readiness checks and what `/healthz` and `/readyz` answer, controller-runtime's
//! `pkg/healthz`: [`Checker`] is one named check; `ProbeHandler` aggregates a set of them at
//! the endpoint's root and serves each alone at `/<name>`.
//!
//! The answers are pkg/healthz's, byte for byte:
//!
//! - **The root** (`/healthz`, `/readyz`, with or without a trailing `/`) runs every check in
//!   name order. All pass: `200` with the body `ok`, or with `?verbose` (the parameter's
//!   presence, any value) one `[+]<name> ok` line per check and `healthz check passed`. One
//!   fails: `500`, always verbose, the failed check as `[-]<name> failed: reason withheld`
//!   (the endpoint is public; the reason is in the log and at the check's own path) and
//!   `healthz check failed`. `?exclude=<name>` (repeatable) skips a check, listed as
//!   `[+]<name> excluded: ok`; a name that matches no check is reported in the verbose body as
//!   `warn: some health checks cannot be excluded: no matches for "<name>"`. With no check at
//!   all, a `ping` check that always passes stands in.
//! - **A check's path** (`/readyz/<name>`): `200` `ok`, or `500` with `internal server error:
//!   <reason>` and a newline; a name that is no check is `404` `404 page not found`.
//!
//! Every body is `text/plain; charset=utf-8`. A check that panics fails, with the panic's
//! message as its reason.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;

/// The boxed check: resolves to the reason it fails, if it does.
type CheckFn = Arc<dyn Fn() -> BoxFuture<'static, Result<(), String>> + Send + Sync>;

/// One health or readiness check (controller-runtime's `healthz.Checker`), added to a manager
/// with [`add_healthz_check`](crate::manager::Manager::add_healthz_check) or
/// [`add_readyz_check`](crate::manager::Manager::add_readyz_check).
///
/// A check runs on each request to its endpoint, on the server's task: keep it quick (read a
/// flag, compare a time), or make it async with [`from_async`](Self::from_async) for one that
/// waits on I/O. Its error's text is the reason the check's own path shows.
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use kclient_controller::manager::Checker;
///
/// let warmed_up = Arc::new(AtomicBool::new(false));
/// let flag = Arc::clone(&warmed_up);
/// let check = Checker::new(move || {
///     if flag.load(Ordering::Relaxed) { Ok(()) } else { Err("still warming up") }
/// });
/// # let _ = check;
/// ```
#[derive(Clone)]
pub struct Checker {
    check: CheckFn,
}

impl fmt::Debug for Checker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checker").finish_non_exhaustive()
    }
}

impl Checker {
    /// A check from a function that answers at once: `Ok(())` passes, an error fails with
    /// its text as the reason.
    pub fn new<F, E>(check: F) -> Self
    where
        F: Fn() -> Result<(), E> + Send + Sync + 'static,
        E: fmt::Display,
    {
        let check = Arc::new(check);
        Checker {
            check: Arc::new(move || {
                let result = check().map_err(|e| e.to_string());
                async move { result }.boxed()
            }),
        }
    }

    /// A check from an async function, for one that waits (on the API server, say).
    pub fn from_async<F, Fut, E>(check: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(), E>> + Send + 'static,
        E: fmt::Display,
    {
        Checker {
            check: Arc::new(move || check().map(|r| r.map_err(|e| e.to_string())).boxed()),
        }
    }

    /// A check that always passes (controller-runtime's `healthz.Ping`): a liveness probe
    /// that tells the process answers HTTP at all.
    pub fn ping() -> Self {
        Checker::new(|| Ok::<(), std::convert::Infallible>(()))
    }

    /// Runs the check; a panic in it is a failure with its message.
    pub(crate) async fn run(&self) -> Result<(), String> {
        let check = Arc::clone(&self.check);
        match AssertUnwindSafe(async move { check().await })
            .catch_unwind()
            .await
        {
            Ok(result) => result,
            Err(panic) => Err(format!(
                "check panicked: {}",
                kclient_flowcontrol::panic_message(&*panic)
            )),
        }
    }
}

/// The name of the check that stands in when an endpoint has none (pkg/healthz's).
const PING: &str = "ping";

/// What a probe endpoint answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProbeResponse {
    pub(crate) status: u16,
    pub(crate) body: String,
}

impl ProbeResponse {
    fn ok() -> Self {
        ProbeResponse {
            status: 200,
            body: "ok".to_owned(),
        }
    }

    /// Go's `http.NotFound`.
    pub(crate) fn not_found() -> Self {
        ProbeResponse {
            status: 404,
            body: "404 page not found\n".to_owned(),
        }
    }
}

/// One endpoint's checks by name (controller-runtime's `healthz.Handler`).
#[derive(Clone, Default)]
pub(crate) struct ProbeHandler {
    checks: BTreeMap<String, Checker>,
}

impl fmt::Debug for ProbeHandler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.checks.keys()).finish()
    }
}

/// How one check of the aggregated endpoint came out.
struct CheckStatus<'a> {
    name: &'a str,
    healthy: bool,
    excluded: bool,
}

impl ProbeHandler {
    /// Adds `check` as `name`, in place of one of that name.
    pub(crate) fn insert(&mut self, name: String, check: Checker) {
        self.checks.insert(name, check);
    }

    /// Answers a request for `path`, the path after the endpoint's own (`""`, `/`,
    /// `/<check>`), with the raw query string `query`.
    pub(crate) async fn serve(&self, path: &str, query: Option<&str>) -> ProbeResponse {
        let path = clean_path(path);
        if path == "/" {
            return self.serve_aggregated(query).await;
        }
        let name = &path[1..];
        if self.checks.is_empty() && name == PING {
            return ProbeResponse::ok();
        }
        let Some(check) = self.checks.get(name) else {
            return ProbeResponse::not_found();
        };
        match check.run().await {
            Ok(()) => ProbeResponse::ok(),
            // Go's `http.Error` adds the newline.
            Err(reason) => ProbeResponse {
                status: 500,
                body: format!("internal server error: {reason}\n"),
            },
        }
    }

    async fn serve_aggregated(&self, query: Option<&str>) -> ProbeResponse {
        let query = Query::parse(query.unwrap_or(""));
        let mut unknown_excludes: BTreeSet<&str> =
            query.exclude.iter().map(String::as_str).collect();
        let mut parts = Vec::with_capacity(self.checks.len().max(1));
        let mut failed = false;
        // In name order: the map's.
        for (name, check) in &self.checks {
            if unknown_excludes.remove(name.as_str()) {
                parts.push(CheckStatus {
                    name,
                    healthy: true,
                    excluded: true,
                });
                continue;
            }
            let healthy = match check.run().await {
                Ok(()) => true,
                Err(reason) => {
                    tracing::info!(checker = %name, error = %reason, "healthz check failed");
                    false
                }
            };
            failed |= !healthy;
            parts.push(CheckStatus {
                name,
                healthy,
                excluded: false,
            });
        }
        if self.checks.is_empty() {
            parts.push(CheckStatus {
                name: PING,
                healthy: true,
                excluded: false,
            });
        }
        for name in &unknown_excludes {
            tracing::debug!(checker = %name, "cannot exclude health check, no matches for it");
        }
        if !failed && !query.verbose {
            return ProbeResponse::ok();
        }
        let mut body = String::new();
        for part in &parts {
            let line = if part.excluded {
                format!("[+]{} excluded: ok\n", part.name)
            } else if part.healthy {
                format!("[+]{} ok\n", part.name)
            } else {
                format!("[-]{} failed: reason withheld\n", part.name)
            };
            body.push_str(&line);
        }
        if !unknown_excludes.is_empty() {
            let quoted: Vec<String> = unknown_excludes.iter().map(|n| go_quote(n)).collect();
            body.push_str(&format!(
                "warn: some health checks cannot be excluded: no matches for {}\n",
                quoted.join(",")
            ));
        }
        if failed {
            body.push_str("healthz check failed\n");
        } else {
            body.push_str("healthz check passed\n");
        }
        ProbeResponse {
            status: if failed { 500 } else { 200 },
            body,
        }
    }
}

/// What the aggregated endpoint reads of the query: `verbose`'s presence and every `exclude`.
#[derive(Debug, Default, PartialEq, Eq)]
struct Query {
    verbose: bool,
    exclude: Vec<String>,
}

impl Query {
    /// Reads a query as Go's `url.ParseQuery` does (`&`-separated, `+` and `%XX` decoded).
    fn parse(query: &str) -> Query {
        let mut out = Query::default();
        for (key, value) in url::form_urlencoded::parse(query.as_bytes()) {
            match &*key {
                "verbose" => out.verbose = true,
                "exclude" => out.exclude.push(value.into_owned()),
                _ => {}
            }
        }
        out
    }
}

/// Go's `path.Clean` of a path made absolute, as pkg/healthz cleans the path it is given:
/// `.` and empty segments dropped, `..` taking the one before, no trailing slash but on `/`.
fn clean_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    format!("/{}", segments.join("/"))
}

/// A name quoted as Go's `%q` quotes it (pkg/healthz's `formatQuoted`), for the characters a
/// check name has in practice; others are escaped as Rust escapes them.
fn go_quote(name: &str) -> String {
    format!("{name:?}")
}

#[cfg(test)]
mod tests {
    //! The cases of controller-runtime's `healthz_test.go`, and the query and path parsing.

    use super::*;

    fn handler(checks: &[(&str, Result<(), &'static str>)]) -> ProbeHandler {
        let mut h = ProbeHandler::default();
        for (name, result) in checks {
            let result = *result;
            h.insert((*name).to_owned(), Checker::new(move || result));
        }
        h
    }

    async fn get(h: &ProbeHandler, target: &str) -> ProbeResponse {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        h.serve(path, query).await
    }

    const OK: Result<(), &str> = Ok(());
    const BAD: Result<(), &str> = Err("blech");

    #[tokio::test]
    async fn aggregated_passes_when_every_check_passes() {
        let h = handler(&[("ok1", OK), ("ok2", OK)]);
        assert_eq!(get(&h, "/").await, ProbeResponse::ok());
        assert_eq!(get(&h, "").await, ProbeResponse::ok());
    }

    #[tokio::test]
    async fn aggregated_fails_verbosely_when_one_check_fails() {
        let h = handler(&[("ok1", OK), ("bad1", BAD)]);
        let r = get(&h, "/").await;
        assert_eq!(r.status, 500);
        assert_eq!(
            r.body,
            "[-]bad1 failed: reason withheld\n[+]ok1 ok\nhealthz check failed\n"
        );
    }

    #[tokio::test]
    async fn excluded_checks_do_not_count() {
        let h = handler(&[("ok1", OK), ("bad1", BAD)]);
        assert_eq!(get(&h, "/?exclude=bad1").await, ProbeResponse::ok());
        let r = get(&h, "/?exclude=bad1&verbose").await;
        assert_eq!(r.status, 200);
        assert_eq!(
            r.body,
            "[+]bad1 excluded: ok\n[+]ok1 ok\nhealthz check passed\n"
        );
    }

    #[tokio::test]
    async fn excluding_an_unknown_check_is_fine_and_reported_when_verbose() {
        let h = handler(&[("ok1", OK), ("ok2", OK)]);
        assert_eq!(get(&h, "/?exclude=nonexistent").await, ProbeResponse::ok());
        let r = get(&h, "/?verbose=true&exclude=zz&exclude=nonexistent").await;
        assert_eq!(r.status, 200);
        assert_eq!(
            r.body,
            "[+]ok1 ok\n[+]ok2 ok\nwarn: some health checks cannot be excluded: no matches for \
             \"nonexistent\",\"zz\"\nhealthz check passed\n"
        );
    }

    #[tokio::test]
    async fn verbose_success_lists_every_check() {
        let h = handler(&[("ok2", OK), ("ok1", OK)]);
        let r = get(&h, "/?verbose=true").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body, "[+]ok1 ok\n[+]ok2 ok\nhealthz check passed\n");
        // The parameter's presence is enough, with or without a value.
        assert_eq!(get(&h, "/?verbose").await.body, r.body);
        assert_eq!(get(&h, "/?verbose=").await.body, r.body);
        assert_eq!(get(&h, "/?verbose=false").await.body, r.body);
    }

    #[tokio::test]
    async fn no_checks_means_ping() {
        let h = ProbeHandler::default();
        let r = get(&h, "/?verbose=true").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.body, "[+]ping ok\nhealthz check passed\n");
        assert_eq!(get(&h, "/ping").await, ProbeResponse::ok());
        // Once there are checks, ping is not one of them.
        let h = handler(&[("ok1", OK)]);
        assert_eq!(get(&h, "/ping").await, ProbeResponse::not_found());
    }

    #[tokio::test]
    async fn per_check_paths() {
        let h = handler(&[("okcheck", OK), ("failcheck", BAD)]);
        assert_eq!(get(&h, "/okcheck").await, ProbeResponse::ok());
        assert_eq!(
            get(&h, "/failcheck").await,
            ProbeResponse {
                status: 500,
                body: "internal server error: blech\n".to_owned()
            }
        );
        assert_eq!(get(&h, "/doesnotexist").await, ProbeResponse::not_found());
        // Cleaned as Go's path.Clean: a trailing slash, dots and doubled slashes.
        assert_eq!(get(&h, "/okcheck/").await, ProbeResponse::ok());
        assert_eq!(get(&h, "//okcheck").await, ProbeResponse::ok());
        assert_eq!(get(&h, "/x/../okcheck").await, ProbeResponse::ok());
        assert_eq!(get(&h, "/./").await.status, 500, "the root, aggregated");
    }

    #[tokio::test]
    async fn a_panicking_check_fails_with_its_message() {
        let mut h = ProbeHandler::default();
        h.insert(
            "boom".to_owned(),
            Checker::new(|| -> Result<(), String> { panic!("kaboom") }),
        );
        let r = get(&h, "/boom").await;
        assert_eq!(r.status, 500);
        assert_eq!(r.body, "internal server error: check panicked: kaboom\n");
        assert_eq!(get(&h, "/").await.status, 500);
    }

    #[tokio::test]
    async fn async_checks() {
        let mut h = ProbeHandler::default();
        h.insert(
            "later".to_owned(),
            Checker::from_async(|| async {
                tokio::task::yield_now().await;
                Err::<(), _>("not yet")
            }),
        );
        assert_eq!(
            get(&h, "/later").await.body,
            "internal server error: not yet\n"
        );
    }

    #[test]
    fn query_parsing() {
        assert_eq!(Query::parse(""), Query::default());
        assert_eq!(
            Query::parse("verbose&exclude=a&exclude=b%20c&exclude=d+e&other=1"),
            Query {
                verbose: true,
                exclude: vec!["a".into(), "b c".into(), "d e".into()],
            }
        );
        // A comma is part of the name, as in Go: exclusions repeat the parameter.
        assert_eq!(Query::parse("exclude=a,b").exclude, vec!["a,b".to_owned()]);
        assert!(!Query::parse("verbosee=1").verbose);
    }

    #[test]
    fn path_cleaning() {
        for (path, clean) in [
            ("", "/"),
            ("/", "/"),
            ("//", "/"),
            ("/a/", "/a"),
            ("a", "/a"),
            ("/a/./b", "/a/b"),
            ("/a/../b", "/b"),
            ("/../a", "/a"),
        ] {
            assert_eq!(clean_path(path), clean, "{path:?}");
        }
    }
}
