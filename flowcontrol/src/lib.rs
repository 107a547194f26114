//! Pacing shared by kclient's crates: a [`TokenBucket`] (golang.org/x/time/rate's, under
//! client-go's `flowcontrol` token bucket and the workqueue's `BucketRateLimiter`) and an
//! exponential [`Backoff`] (client-go's `wait.Backoff`, with [`jitter`] and the reflector's
//! [`DelayWithReset`]), an [`ItemBackoff`] kept per id (client-go's `flowcontrol.Backoff`,
//! under the REST client's per-host backoff), and the [`AcceptBackoff`] of a server's accept
//! loop (Go's `http.Server`'s waits after a failed accept).
//!
//! Both are plain arithmetic on [`Moment`]s the caller passes in: no clock, no lock, no
//! runtime. The REST client's limiter runs a bucket on tokio's clock, the workqueue's on its
//! own `Clock`, the event recorder's spam filter on wall-clock time; the reflector's retry
//! delays and `retry_on_conflict` step the same `Backoff`.
//!
//! It also holds [`assert_can_block`], the check every `*_blocking` function of the workspace
//! makes before it waits: on the thread that drives a current-thread tokio runtime, where the
//! wait would hang, it panics with a message naming the async form to await instead; and
//! [`panic_message`], what a caught panic said, for the crates that contain a panic of their
//! caller's code and log it.
//!
//! ```
//! use std::time::{Duration, Instant};
//! use kclient_flowcontrol::{Backoff, TokenBucket};
//!
//! // Five requests a second, bursts of two.
//! let mut limiter = TokenBucket::new(5.0, 2);
//! let now = Instant::now();
//! let waits: Vec<Duration> = (0..4).map(|_| limiter.reserve(now)).collect();
//! assert_eq!(waits, [0, 0, 200, 400].map(Duration::from_millis));
//!
//! // client-go's retry.DefaultBackoff without jitter: 10, 50, 250 ms.
//! let mut backoff = Backoff {
//!     duration: Duration::from_millis(10),
//!     factor: 5.0,
//!     jitter: 0.0,
//!     steps: 4,
//!     cap: Duration::ZERO,
//! };
//! assert_eq!(backoff.step(), Duration::from_millis(10));
//! assert_eq!(backoff.step(), Duration::from_millis(50));
//! ```

mod accept_backoff;
mod backoff;
mod blocking;
mod item_backoff;
mod moment;
mod panic_message;
mod token_bucket;

pub use accept_backoff::AcceptBackoff;
pub use backoff::{Backoff, DelayWithReset, jitter};
pub use blocking::assert_can_block;
pub use item_backoff::ItemBackoff;
pub use moment::Moment;
pub use panic_message::panic_message;
pub use token_bucket::TokenBucket;
