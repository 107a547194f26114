//! Client-side rate limiting, client-go's `flowcontrol.RateLimiter` and its token bucket.
//!
//! Every request waits on the client's limiter before it is sent (watches skip it on their
//! first try, retries always go through it). The default is a token bucket of
//! [`DEFAULT_QPS`](crate::DEFAULT_QPS) tokens per second holding at most
//! [`DEFAULT_BURST`](crate::DEFAULT_BURST); a negative QPS disables it and
//! [`Config::rate_limiter`](crate::Config::rate_limiter) replaces it.
//!
//! The bucket reserves a token at call time (possibly going into debt) and then sleeps until
//! the reservation is due, like `golang.org/x/time/rate`, so concurrent callers are served in
//! call order and never oversubscribe. A wait dropped before its token exists (a request's
//! deadline, a cancelled call) gives the token back, less those reserved after it, as
//! x/time/rate's `Reservation.Cancel`. A wait with a deadline (a retry's, within its
//! request's timeout) that the token would miss fails at once and takes nothing, as
//! x/time/rate's `Wait` does with a context deadline. Time comes from `tokio::time`, so tests
//! can pause it.
//!
//! A wait over 50 ms is logged at DEBUG ("waited for 1.2s due to client-side throttling, not
//! priority and fairness", client-go's V(3) line); a wait over a second is also logged at
//! INFO, at most once per 10 s per client, as client-go's throttled logger does at its
//! default verbosity, so that a busy client does not write a line per request.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use kclient_flowcontrol::TokenBucket;
use parking_lot::Mutex;
use tokio::time::Instant;

/// A future returned by [`RateLimiter::wait`].
pub type WaitFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A future returned by [`RateLimiter::wait_until`]: `true` once the token is taken, `false`
/// when it would not come by the deadline.
pub type DeadlineWaitFuture<'a> = Pin<Box<dyn Future<Output = bool> + Send + 'a>>;

/// Decides when the next request may be sent.
pub trait RateLimiter: Send + Sync {
    /// Waits until a request may be sent, consuming a token. The future is dropped before it
    /// completes when the request's deadline comes first or the call is cancelled; a limiter
    /// that reserved a token should then give it back.
    fn wait(&self) -> WaitFuture<'_>;

    /// Waits like [`wait`](RateLimiter::wait) for a token that comes by `deadline`, and
    /// answers `true`; answers `false` when it would come later. A request's retry waits this
    /// way within the request's timeout. client-go's limiter (x/time/rate's `Wait` with a
    /// context deadline) fails at once, taking no token, when it can tell that the token
    /// comes too late, and [`TokenBucketRateLimiter`] does the same. This default, for a
    /// limiter that cannot tell, waits on [`wait`](RateLimiter::wait) until the deadline.
    fn wait_until(&self, deadline: Instant) -> DeadlineWaitFuture<'_> {
        Box::pin(async move { tokio::time::timeout_at(deadline, self.wait()).await.is_ok() })
    }

    /// Takes a token if one is available right now.
    fn try_accept(&self) -> bool;

    /// The sustained rate in queries per second (for logs).
    fn qps(&self) -> f32;
}

/// A token bucket: `qps` tokens per second, at most `burst` saved up; starts full.
///
/// The bucket is [`kclient_flowcontrol::TokenBucket`], read on tokio's clock (so tests can
/// pause it). A `qps` of zero or less hands out the burst and then never another token.
pub struct TokenBucketRateLimiter {
    bucket: Mutex<TokenBucket<std::time::Instant>>,
}

impl TokenBucketRateLimiter {
    /// A bucket of `burst` tokens refilled at `qps` per second (client-go's
    /// `NewTokenBucketRateLimiter`). A `burst` of 0 is treated as 1.
    pub fn new(qps: f32, burst: u32) -> Self {
        TokenBucketRateLimiter {
            bucket: Mutex::new(TokenBucket::new(f64::from(qps), burst.max(1))),
        }
    }
}

impl TokenBucketRateLimiter {
    /// Sleeps until the token reserved at `reserved_at`, due `delay` later, exists. Dropped
    /// before then, it gives the token back.
    fn hold(
        &self,
        reserved_at: std::time::Instant,
        delay: Duration,
    ) -> impl Future<Output = ()> + Send + '_ {
        let reservation = Reservation {
            limiter: self,
            reserved_at,
            delay,
            pending: !delay.is_zero(),
        };
        async move {
            // Moves the whole guard into the future (a use of its field alone would capture
            // only the field, and the guard would be dropped, and give back its token, here).
            let mut reservation = reservation;
            if reservation.pending {
                // Until the token exists, counted from its reservation, not from this first
                // poll: a future polled late waits no longer than the token needs.
                // A bucket that never refills (`qps` 0, or so small that its period overflows)
                // answers `Duration::MAX`: past what an instant holds, it waits for ever.
                match reserved_at.checked_add(delay) {
                    Some(at) => tokio::time::sleep_until(Instant::from_std(at)).await,
                    None => std::future::pending().await,
                }
                reservation.pending = false;
            }
        }
    }
}

/// Now on tokio's clock, which follows a paused test clock.
pub(crate) fn now() -> std::time::Instant {
    Instant::now().into_std()
}

impl RateLimiter for TokenBucketRateLimiter {
    /// Reserves a token now and waits until it exists. Dropping the future before then (a
    /// request's deadline, a cancelled call) gives the token back, as client-go's limiter does
    /// when the request's context ends during the wait: otherwise every later request would
    /// wait for a token that nobody used.
    fn wait(&self) -> WaitFuture<'_> {
        let reserved_at = now();
        let delay = self.bucket.lock().reserve(reserved_at);
        Box::pin(self.hold(reserved_at, delay))
    }

    /// Fails at once, taking no token, when the token would come after `deadline`.
    fn wait_until(&self, deadline: Instant) -> DeadlineWaitFuture<'_> {
        let reserved_at = now();
        let max_wait = deadline.into_std().saturating_duration_since(reserved_at);
        let Some(delay) = self.bucket.lock().reserve_within(reserved_at, max_wait) else {
            return Box::pin(async { false });
        };
        let held = self.hold(reserved_at, delay);
        Box::pin(async move {
            held.await;
            true
        })
    }

    fn try_accept(&self) -> bool {
        self.bucket.lock().try_take(now())
    }

    fn qps(&self) -> f32 {
        self.bucket.lock().qps() as f32
    }
}

/// A token reserved by [`TokenBucketRateLimiter::wait`], given back if its wait is dropped
/// before the token exists.
struct Reservation<'a> {
    limiter: &'a TokenBucketRateLimiter,
    reserved_at: std::time::Instant,
    delay: Duration,
    /// Whether the wait has not yet ended.
    pending: bool,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if self.pending {
            self.limiter
                .bucket
                .lock()
                .cancel(self.reserved_at, self.delay, now());
        }
    }
}

impl fmt::Debug for TokenBucketRateLimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bucket = self.bucket.lock();
        f.debug_struct("TokenBucketRateLimiter")
            .field("qps", &bucket.qps())
            .field("burst", &bucket.burst())
            .finish()
    }
}

/// How often a client logs a wait over a second at INFO: client-go's throttled logger writes
/// such a wait at most once per 10 s at its default verbosity (once per second at V(2)).
const LONG_WAIT_LOG_INTERVAL: Duration = Duration::from_secs(10);

/// When a client last logged a long wait at INFO, so that it does so at most once per
/// [`LONG_WAIT_LOG_INTERVAL`] (client-go's `globalThrottledLogger`, kept per client here).
#[derive(Debug, Default)]
pub(crate) struct LongWaitLog {
    last: Mutex<Option<Instant>>,
}

impl LongWaitLog {
    /// Whether a line may be written at `now`; if so, `now` is the last one.
    fn due(&self, now: Instant) -> bool {
        let mut last = self.last.lock();
        if last.is_some_and(|at| now.saturating_duration_since(at) < LONG_WAIT_LOG_INTERVAL) {
            return false;
        }
        *last = Some(now);
        true
    }
}

/// Waits on `limiter` and logs long waits the way client-go does: every wait over 50 ms at
/// DEBUG (client-go's V(3)), and a wait over a second at INFO too, at most once per
/// [`LONG_WAIT_LOG_INTERVAL`] per client (`log`). With a `deadline`, answers `false` when the
/// token would not come by then ([`RateLimiter::wait_until`]).
pub(crate) async fn throttle(
    limiter: &dyn RateLimiter,
    log: &LongWaitLog,
    what: &str,
    deadline: Option<Instant>,
) -> bool {
    let start = Instant::now();
    let in_time = match deadline {
        Some(deadline) => limiter.wait_until(deadline).await,
        None => {
            limiter.wait().await;
            true
        }
    };
    let waited = start.elapsed();
    if waited > Duration::from_millis(50) {
        tracing::debug!(
            waited = ?waited,
            request = what,
            "waited for {waited:?} due to client-side throttling, not priority and fairness"
        );
    }
    if waited > Duration::from_secs(1) && log.due(Instant::now()) {
        tracing::info!(
            waited = ?waited,
            request = what,
            "waited for {waited:?} due to client-side throttling, not priority and fairness"
        );
    }
    in_time
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn burst_then_qps() {
        let l = TokenBucketRateLimiter::new(5.0, 10);
        let start = Instant::now();
        for _ in 0..10 {
            l.wait().await;
        }
        assert_eq!(start.elapsed(), Duration::ZERO, "the burst is free");
        l.wait().await;
        let e = start.elapsed();
        assert!(
            e >= Duration::from_millis(199) && e <= Duration::from_millis(201),
            "{e:?}"
        );
        for _ in 0..5 {
            l.wait().await;
        }
        let e = start.elapsed();
        assert!(
            e >= Duration::from_millis(1199) && e <= Duration::from_millis(1201),
            "{e:?}"
        );
    }

    /// A bucket that never refills hands out its burst, then waits for ever, without a panic:
    /// at `qps` 0 and at one so small that its period overflows.
    #[tokio::test(start_paused = true)]
    async fn a_bucket_that_never_refills_waits_for_ever() {
        for qps in [0.0, 1e-20] {
            let l = TokenBucketRateLimiter::new(qps, 1);
            l.wait().await;
            let second = tokio::time::timeout(Duration::from_secs(3600 * 24 * 365), l.wait());
            assert!(second.await.is_err(), "qps {qps}: a second token came");
        }
    }

    /// A wait cut short (a request's deadline, a dropped call) gives its token back: the next
    /// caller waits for what is left of the first interval, not for a second one.
    #[tokio::test(start_paused = true)]
    async fn a_wait_cut_short_gives_its_token_back() {
        let l = TokenBucketRateLimiter::new(1.0, 1);
        let start = Instant::now();
        l.wait().await;
        let cut = tokio::time::timeout(Duration::from_millis(500), l.wait()).await;
        assert!(cut.is_err(), "the second wait should take 1 s");
        l.wait().await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        // A wait never polled gives its token back too.
        drop(l.wait());
        let before = Instant::now();
        l.wait().await;
        assert_eq!(before.elapsed(), Duration::from_secs(1));
    }

    /// A wait polled late waits only for what is left until its token exists: the token was
    /// reserved when `wait` was called, as x/time/rate's `Reserve` counts from then.
    #[tokio::test(start_paused = true)]
    async fn a_wait_polled_late_waits_from_its_reservation() {
        let l = TokenBucketRateLimiter::new(1.0, 1);
        l.wait().await;
        let start = Instant::now();
        let second = l.wait(); // its token exists 1 s from now
        tokio::time::advance(Duration::from_millis(700)).await;
        second.await;
        assert_eq!(start.elapsed(), Duration::from_secs(1));
    }

    /// A wait with a deadline the token would miss answers at once and takes no token, as
    /// x/time/rate's `Wait` does with a context deadline; one the token meets waits for it.
    #[tokio::test(start_paused = true)]
    async fn a_wait_that_would_pass_its_deadline_fails_at_once() {
        let l = TokenBucketRateLimiter::new(1.0, 1);
        let start = Instant::now();
        assert!(l.wait_until(start).await, "the burst is there");
        assert!(!l.wait_until(start + Duration::from_millis(999)).await);
        assert_eq!(start.elapsed(), Duration::ZERO, "it did not wait");
        assert!(l.wait_until(start + Duration::from_secs(1)).await);
        assert_eq!(start.elapsed(), Duration::from_secs(1));
        // The refused wait took nothing: the next token is one interval on.
        l.wait().await;
        assert_eq!(start.elapsed(), Duration::from_secs(2));
    }

    /// A limiter that keeps only `wait` gives up at the deadline.
    #[tokio::test(start_paused = true)]
    async fn the_default_wait_until_gives_up_at_the_deadline() {
        struct Slow;
        impl RateLimiter for Slow {
            fn wait(&self) -> WaitFuture<'_> {
                Box::pin(tokio::time::sleep(Duration::from_secs(5)))
            }
            fn try_accept(&self) -> bool {
                false
            }
            fn qps(&self) -> f32 {
                0.2
            }
        }
        let start = Instant::now();
        assert!(!Slow.wait_until(start + Duration::from_secs(2)).await);
        assert_eq!(start.elapsed(), Duration::from_secs(2));
        assert!(Slow.wait_until(start + Duration::from_secs(10)).await);
        assert_eq!(start.elapsed(), Duration::from_secs(7));
    }

    #[tokio::test(start_paused = true)]
    async fn refills_up_to_burst_only() {
        let l = TokenBucketRateLimiter::new(10.0, 3);
        for _ in 0..3 {
            assert!(l.try_accept());
        }
        assert!(!l.try_accept());
        tokio::time::advance(Duration::from_secs(60)).await;
        for _ in 0..3 {
            assert!(l.try_accept());
        }
        assert!(!l.try_accept(), "only burst tokens accumulate");
        tokio::time::advance(Duration::from_millis(100)).await;
        assert!(l.try_accept());
    }

    #[tokio::test(start_paused = true)]
    async fn long_waits_are_logged_like_client_go() {
        let logs = kclient_testenv::LogCapture::start(tracing::Level::DEBUG);
        let log = LongWaitLog::default();
        let l = TokenBucketRateLimiter::new(0.5, 1);
        throttle(&l, &log, "GET /a", None).await; // free
        throttle(&l, &log, "GET /b", None).await; // waits 2s
        let fast = TokenBucketRateLimiter::new(10.0, 1);
        throttle(&fast, &log, "GET /c", None).await;
        throttle(&fast, &log, "GET /d", None).await; // waits 100ms
        let text = logs.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(
            lines[0].contains("DEBUG") && lines[0].contains("GET /b"),
            "{text}"
        );
        assert!(
            lines[1].contains("INFO") && lines[1].contains("GET /b"),
            "{text}"
        );
        assert!(
            lines[2].contains("DEBUG") && lines[2].contains("GET /d"),
            "{text}"
        );
        assert!(text.contains("client-side throttling, not priority and fairness"));
    }

    /// Waits over a second are logged at INFO at most once per ten seconds, as client-go's
    /// throttled logger does at its default verbosity: with the default 5 QPS, a busy client
    /// waits over a second on nearly every request, and a line for each would flood the log.
    /// Every wait over 50 ms is still logged at DEBUG (client-go's V(3)).
    #[tokio::test(start_paused = true)]
    async fn long_waits_are_logged_at_info_at_most_once_per_ten_seconds() {
        let logs = kclient_testenv::LogCapture::start(tracing::Level::DEBUG);
        let log = LongWaitLog::default();
        let l = TokenBucketRateLimiter::new(0.5, 1);
        throttle(&l, &log, "GET /a", None).await; // free
        for path in ["/b", "/c", "/d"] {
            throttle(&l, &log, &format!("GET {path}"), None).await; // each waits 2s
        }
        // 10 s after the first INFO line, the next long wait is logged again.
        tokio::time::advance(Duration::from_secs(5)).await;
        throttle(&l, &log, "GET /e", None).await;
        throttle(&l, &log, "GET /f", None).await; // waits 2s, 11 s after /b's line
        let text = logs.text();
        let info: Vec<&str> = text.lines().filter(|l| l.contains("INFO")).collect();
        assert_eq!(info.len(), 2, "{text}");
        assert!(
            info[0].contains("GET /b") && info[1].contains("GET /f"),
            "{text}"
        );
        let debug = text.lines().filter(|l| l.contains("DEBUG")).count();
        assert_eq!(debug, 4, "every long wait at DEBUG: {text}");
    }

    /// A limiter that counts calls and never waits.
    #[derive(Default)]
    struct Counting(std::sync::atomic::AtomicUsize);

    impl RateLimiter for Counting {
        fn wait(&self) -> WaitFuture<'_> {
            self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Box::pin(async {})
        }
        fn try_accept(&self) -> bool {
            true
        }
        fn qps(&self) -> f32 {
            f32::INFINITY
        }
    }

    #[tokio::test]
    async fn a_custom_limiter_replaces_the_bucket() {
        let server = crate::test_server::TestServer::start(vec![crate::test_server::Reply::Http(
            200,
            vec![],
            "{}".into(),
        )])
        .await;
        let counting = std::sync::Arc::new(Counting::default());
        let mut config = crate::Config::new(server.url.clone());
        config.rate_limiter = Some(counting.clone());
        config.qps = -1.0; // ignored: the custom limiter wins
        let client = crate::Client::new(config).unwrap();
        for _ in 0..3 {
            client.get_raw("/x").await.unwrap();
        }
        assert_eq!(counting.0.load(std::sync::atomic::Ordering::Relaxed), 3);
    }

    /// client-go builds its limiter only for a QPS above zero (0 meaning the default), so a
    /// QPS that is not a number (a flag parsed from "NaN") throttles nothing; a bucket filled at
    /// NaN per second would hold every request after its burst for ever.
    #[tokio::test]
    async fn a_qps_that_is_not_a_number_does_not_throttle() {
        let server = crate::test_server::TestServer::start(vec![crate::test_server::Reply::Http(
            200,
            vec![],
            "{}".into(),
        )])
        .await;
        let mut config = crate::Config::new(server.url.clone());
        config.qps = f32::NAN;
        let client = crate::Client::new(config).unwrap();
        let requests = async {
            for _ in 0..2 * crate::config::DEFAULT_BURST {
                client.get_raw("/x").await.unwrap();
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(20), requests)
            .await
            .expect("requests past the default burst went through at once");
    }

    #[tokio::test(start_paused = true)]
    async fn concurrent_waiters_are_spaced() {
        let l = std::sync::Arc::new(TokenBucketRateLimiter::new(2.0, 1));
        let start = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..5 {
            let l = l.clone();
            tasks.push(tokio::spawn(async move {
                l.wait().await;
                start.elapsed()
            }));
        }
        let mut times = Vec::new();
        for t in tasks {
            times.push(t.await.unwrap());
        }
        times.sort();
        let ms: Vec<u128> = times.iter().map(|d| d.as_millis()).collect();
        assert_eq!(ms, vec![0, 500, 1000, 1500, 2000]);
    }
}
