//! [`SpamFilter`], client-go's `EventSourceObjectSpamFilter`: a token bucket per source,
//! involved object and event type (burst 25, refilled at one event per 300 s by default), so a
//! component that keeps failing on one object cannot flood the API server with events about it.

use std::time::{Instant, SystemTime};

use kclient_api::core::v1::Event;
use kclient_flowcontrol::TokenBucket;

use super::event_keys::spam_key;
use super::lru::LruCache;

/// Throttles events per source, involved object and event type.
///
/// The buckets run on a clock of their own that follows the correlator's wall clock forwards
/// only: a step back of the wall clock stops it for that step, rather than withholding every
/// token until the wall clock is back where it was (Go's buckets measure time on the monotonic
/// clock that `time.Now` carries).
#[derive(Debug)]
pub(crate) struct SpamFilter {
    cache: LruCache<TokenBucket<Instant>>,
    burst: u32,
    qps: f64,
    /// The wall-clock time of the last call and the buckets' time then.
    clock: Option<(SystemTime, Instant)>,
}

impl SpamFilter {
    pub(crate) fn new(cache_size: usize, burst: u32, qps: f64) -> Self {
        SpamFilter {
            cache: LruCache::new(cache_size),
            burst,
            qps,
            clock: None,
        }
    }

    /// The buckets' time at wall-clock time `now`: as far after the last call's as `now` is
    /// after the last call's wall-clock time, and no further on when the wall clock stepped
    /// back.
    fn advance(&mut self, now: SystemTime) -> Instant {
        let moment = match self.clock {
            Some((wall, moment)) => {
                let elapsed = now.duration_since(wall).unwrap_or_default();
                moment.checked_add(elapsed).unwrap_or(moment)
            }
            None => Instant::now(),
        };
        self.clock = Some((now, moment));
        moment
    }

    /// Whether `event` must be dropped: its source, object and type have used up their tokens.
    pub(crate) fn filter(&mut self, event: &Event, now: SystemTime) -> bool {
        let key = spam_key(event);
        let now = self.advance(now);
        let mut bucket = self
            .cache
            .get_mut(&key)
            .copied()
            .unwrap_or_else(|| TokenBucket::new(self.qps, self.burst));
        let accept = bucket.try_take(now);
        self.cache.put(&key, bucket);
        !accept
    }
}
