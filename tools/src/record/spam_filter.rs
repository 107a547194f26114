//! [`SpamFilter`], client-go's `EventSourceObjectSpamFilter`: a token bucket per source and
//! involved object (burst 25, refilled at one event per 300 s by default), so a component
//! that keeps failing on one object cannot flood the API server with events about it.

use std::time::SystemTime;

use kclient_api::core::v1::Event;

use super::event_keys::spam_key;
use super::lru::LruCache;

/// A token bucket that starts full.
#[derive(Debug, Clone, Copy)]
struct TokenBucket {
    tokens: f64,
    last: SystemTime,
}

/// Throttles events per source and involved object.
#[derive(Debug)]
pub(crate) struct SpamFilter {
    cache: LruCache<TokenBucket>,
    burst: f64,
    qps: f64,
}

impl SpamFilter {
    pub(crate) fn new(cache_size: usize, burst: u32, qps: f64) -> Self {
        SpamFilter {
            cache: LruCache::new(cache_size),
            burst: f64::from(burst),
            qps,
        }
    }

    /// Whether `event` must be dropped: its source and object have used up their tokens.
    pub(crate) fn filter(&mut self, event: &Event, now: SystemTime) -> bool {
        let key = spam_key(event);
        let mut bucket = self.cache.get_mut(&key).copied().unwrap_or(TokenBucket {
            tokens: self.burst,
            last: now,
        });
        let elapsed = now.duration_since(bucket.last).unwrap_or_default();
        bucket.tokens = (bucket.tokens + elapsed.as_secs_f64() * self.qps).min(self.burst);
        bucket.last = now.max(bucket.last);
        let accept = bucket.tokens >= 1.0;
        if accept {
            bucket.tokens -= 1.0;
        }
        self.cache.put(&key, bucket);
        !accept
    }
}
