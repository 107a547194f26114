//! [`SpamFilter`], client-go's `EventSourceObjectSpamFilter`: a token bucket per source,
//! involved object and event type (burst 25, refilled at one event per 300 s by default), so a
//! component that keeps failing on one object cannot flood the API server with events about it.

use std::time::SystemTime;

use kclient_api::core::v1::Event;
use kclient_flowcontrol::TokenBucket;

use super::event_keys::spam_key;
use super::lru::LruCache;

/// Throttles events per source, involved object and event type.
#[derive(Debug)]
pub(crate) struct SpamFilter {
    cache: LruCache<TokenBucket<SystemTime>>,
    burst: u32,
    qps: f64,
}

impl SpamFilter {
    pub(crate) fn new(cache_size: usize, burst: u32, qps: f64) -> Self {
        SpamFilter {
            cache: LruCache::new(cache_size),
            burst,
            qps,
        }
    }

    /// Whether `event` must be dropped: its source, object and type have used up their tokens.
    pub(crate) fn filter(&mut self, event: &Event, now: SystemTime) -> bool {
        let key = spam_key(event);
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
