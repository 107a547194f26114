//! [`BackoffManager`], client-go's `rest.BackoffManagerWithContext`, and [`UrlBackoff`], its
//! per-host exponential backoff.
//!
//! A request asks its manager how long to back off before its first attempt and before each
//! retry (a retry waits for the longer of that and the server's `Retry-After`), and tells it
//! the outcome of every attempt. [`UrlBackoff`] backs off a host after a 429 or a 5xx, doubling
//! from its initial backoff up to its longest, and forgets it after any other answer or an
//! attempt that got no response, as client-go's `URLBackoff` does.
//!
//! A request uses the manager set with [`Request::backoff`](crate::Request::backoff).
//! Otherwise, as in client-go, each request gets a fresh [`UrlBackoff`] when the environment
//! sets both `KUBE_CLIENT_BACKOFF_BASE` and `KUBE_CLIENT_BACKOFF_DURATION` to whole seconds
//! (read when the client is made), so that its retries back off exponentially; and none at
//! all when it does not.

use std::fmt;
use std::time::Duration;

use http::StatusCode;
use kclient_flowcontrol::ItemBackoff;
use parking_lot::Mutex;
use url::Url;

use crate::rate_limiter::now;

/// The environment variable with a [`UrlBackoff`]'s initial backoff, in whole seconds.
pub const ENV_BACKOFF_BASE: &str = "KUBE_CLIENT_BACKOFF_BASE";
/// The environment variable with a [`UrlBackoff`]'s longest backoff, in whole seconds.
pub const ENV_BACKOFF_DURATION: &str = "KUBE_CLIENT_BACKOFF_DURATION";

/// Decides how long requests back off before their attempts (client-go's
/// `BackoffManagerWithContext`; the request's own deadline or cancellation ends its sleep).
pub trait BackoffManager: Send + Sync {
    /// Records the outcome of an attempt at `url`: its status code, or `None` when it got no
    /// response.
    fn update_backoff(&self, url: &Url, status: Option<StatusCode>);

    /// How long to back off before the next attempt at `url`.
    fn calculate_backoff(&self, url: &Url) -> Duration;
}

/// An exponential backoff per host (`host:port`), client-go's `URLBackoff` over a
/// [`kclient_flowcontrol::ItemBackoff`]: a 429 or a 5xx steps the host's backoff (doubling
/// from `initial` up to `max`), any other status or an attempt without a response forgets it.
///
/// ```
/// use std::time::Duration;
/// use http::StatusCode;
/// use kclient_rest::{BackoffManager, UrlBackoff};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let backoff = UrlBackoff::new(Duration::from_secs(1), Duration::from_secs(30));
/// let url = url::Url::parse("https://10.0.0.1:6443/api/v1/pods").unwrap();
/// backoff.update_backoff(&url, Some(StatusCode::SERVICE_UNAVAILABLE));
/// backoff.update_backoff(&url, Some(StatusCode::TOO_MANY_REQUESTS));
/// let other_path = url.join("/apis/apps/v1/deployments").unwrap();
/// assert_eq!(backoff.calculate_backoff(&other_path), Duration::from_secs(2));
/// backoff.update_backoff(&url, Some(StatusCode::NOT_FOUND));
/// assert_eq!(backoff.calculate_backoff(&url), Duration::ZERO);
/// # }
/// ```
pub struct UrlBackoff {
    backoff: Mutex<ItemBackoff<String, std::time::Instant>>,
}

impl UrlBackoff {
    /// A backoff per host that starts at `initial` and doubles up to `max` (client-go's
    /// `URLBackoff{Backoff: flowcontrol.NewBackOff(initial, max)}`).
    pub fn new(initial: Duration, max: Duration) -> Self {
        UrlBackoff {
            backoff: Mutex::new(ItemBackoff::new(initial, max)),
        }
    }

    /// The initial and longest backoff that `var` gives for [`ENV_BACKOFF_BASE`] and
    /// [`ENV_BACKOFF_DURATION`], when both are whole seconds (as client-go parses them, a
    /// negative number counts as zero); `None` otherwise.
    pub(crate) fn env_config(var: impl Fn(&str) -> Option<String>) -> Option<(Duration, Duration)> {
        let seconds = |name: &str| -> Option<Duration> {
            let n: i64 = var(name)?.parse().ok()?;
            Some(Duration::from_secs(n.max(0).unsigned_abs()))
        };
        Some((seconds(ENV_BACKOFF_BASE)?, seconds(ENV_BACKOFF_DURATION)?))
    }
}

/// The key a URL backs off under: its host and port, as client-go's `url.Host`.
fn host_key(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_string(),
    }
}

impl BackoffManager for UrlBackoff {
    fn update_backoff(&self, url: &Url, status: Option<StatusCode>) {
        let key = host_key(url);
        let overloaded =
            status.is_some_and(|s| s.as_u16() > 499 || s == StatusCode::TOO_MANY_REQUESTS);
        let mut backoff = self.backoff.lock();
        if overloaded {
            backoff.next(key, now());
        } else {
            backoff.reset(key.as_str());
        }
    }

    fn calculate_backoff(&self, url: &Url) -> Duration {
        self.backoff.lock().get(host_key(url).as_str())
    }
}

impl fmt::Debug for UrlBackoff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UrlBackoff")
            .field("hosts", &self.backoff.lock().len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    #[tokio::test(start_paused = true)]
    async fn steps_on_overload_and_forgets_on_anything_else() {
        let b = UrlBackoff::new(Duration::from_secs(1), Duration::from_secs(3));
        let a = url("https://a.example:6443/api/v1/pods");
        let other = url("https://b.example:6443/api/v1/pods");
        for (status, want) in [
            (Some(500), 1),
            (Some(429), 2),
            (Some(503), 3),
            (Some(599), 3),
            (Some(404), 0),
            (Some(502), 1),
            (None, 0),
            (Some(504), 1),
            (Some(200), 0),
        ] {
            b.update_backoff(&a, status.map(|s| StatusCode::from_u16(s).unwrap()));
            assert_eq!(
                b.calculate_backoff(&a),
                Duration::from_secs(want),
                "after {status:?}"
            );
        }
        b.update_backoff(&a, Some(StatusCode::INTERNAL_SERVER_ERROR));
        assert_eq!(b.calculate_backoff(&other), Duration::ZERO, "per host");
        let same_host = url("https://a.example:6443/apis/apps/v1/deployments?watch=1");
        assert_eq!(b.calculate_backoff(&same_host), Duration::from_secs(1));
        let other_port = url("https://a.example:8443/api/v1/pods");
        assert_eq!(b.calculate_backoff(&other_port), Duration::ZERO, "per port");
    }

    #[test]
    fn env_config_needs_both_as_whole_seconds() {
        let env = |base: Option<&'static str>, duration: Option<&'static str>| {
            move |name: &str| match name {
                ENV_BACKOFF_BASE => base.map(str::to_string),
                ENV_BACKOFF_DURATION => duration.map(str::to_string),
                _ => None,
            }
        };
        assert_eq!(
            UrlBackoff::env_config(env(Some("2"), Some("60"))),
            Some((Duration::from_secs(2), Duration::from_secs(60)))
        );
        assert_eq!(
            UrlBackoff::env_config(env(Some("-4"), Some("0"))),
            Some((Duration::ZERO, Duration::ZERO))
        );
        for (base, duration) in [
            (None, Some("60")),
            (Some("2"), None),
            (Some("2s"), Some("60")),
            (Some("1.5"), Some("60")),
            (Some("2"), Some("")),
        ] {
            assert_eq!(
                UrlBackoff::env_config(env(base, duration)),
                None,
                "{base:?} {duration:?}"
            );
        }
    }
}
