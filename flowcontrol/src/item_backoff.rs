//! [`ItemBackoff`], client-go's `flowcontrol.Backoff`: an exponential backoff per id.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::time::Duration;

use crate::moment::Moment;

/// An exponential backoff kept per id (a host, an image, a pod), client-go's
/// `flowcontrol.Backoff` (`NewBackOff`, `NewBackOffWithJitter`).
///
/// Each [`next`](ItemBackoff::next) for an id doubles its backoff, from `initial` up to `max`;
/// [`get`](ItemBackoff::get) reads it. An id that has had no `next` for more than twice `max`
/// starts again from `initial`, and [`gc`](ItemBackoff::gc) forgets it. Like the rest of this
/// crate it keeps no clock and takes no lock: every call is told what time it is, and the owner
/// wraps the backoff in its lock (client-go's has a lock and a clock inside).
///
/// With a jitter factor, each step adds a random part of up to `factor` times the backoff before
/// it, and that part stays in the backoff the next step doubles, as in client-go.
///
/// It is not a map of [`DelayWithReset`](crate::DelayWithReset)s: that one jitters only the
/// delay it returns and reads a zero cap as none, where client-go's per-id backoff keeps the
/// jitter in the doubled value and holds a zero `max` to zero.
///
/// ```
/// use std::time::{Duration, Instant};
/// use kclient_flowcontrol::ItemBackoff;
///
/// let mut backoff = ItemBackoff::new(Duration::from_secs(1), Duration::from_secs(4));
/// let t0 = Instant::now();
/// for want in [1, 2, 4, 4] {
///     backoff.next("10.0.0.1:6443".to_string(), t0);
///     assert_eq!(backoff.get("10.0.0.1:6443"), Duration::from_secs(want));
/// }
/// assert_eq!(backoff.get("10.0.0.2:6443"), Duration::ZERO, "an id never backed off");
/// // Quiet for more than twice the longest backoff: the next failure starts again.
/// backoff.next("10.0.0.1:6443".to_string(), t0 + Duration::from_secs(9));
/// assert_eq!(backoff.get("10.0.0.1:6443"), Duration::from_secs(1));
/// ```
#[derive(Debug, Clone)]
pub struct ItemBackoff<K, M> {
    initial: Duration,
    max: Duration,
    max_jitter_factor: f64,
    entries: HashMap<K, Entry<M>>,
}

#[derive(Debug, Clone, Copy)]
struct Entry<M> {
    backoff: Duration,
    last_update: M,
}

impl<K: Hash + Eq, M: Moment> ItemBackoff<K, M> {
    /// Backoffs that start at `initial` and double up to `max`, without jitter (client-go's
    /// `NewBackOff`).
    pub fn new(initial: Duration, max: Duration) -> Self {
        Self::with_jitter(initial, max, 0.0)
    }

    /// Backoffs whose every step adds a random part of up to `max_jitter_factor` times the
    /// backoff before it (client-go's `NewBackOffWithJitter`); a factor of zero or less, or
    /// not a finite number, adds none.
    pub fn with_jitter(initial: Duration, max: Duration, max_jitter_factor: f64) -> Self {
        let max_jitter_factor = if max_jitter_factor > 0.0 && max_jitter_factor.is_finite() {
            max_jitter_factor
        } else {
            0.0
        };
        ItemBackoff {
            initial,
            max,
            max_jitter_factor,
            entries: HashMap::new(),
        }
    }

    /// The current backoff of `id`: zero when it has none.
    pub fn get<Q>(&self, id: &Q) -> Duration
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.get(id).map_or(Duration::ZERO, |e| e.backoff)
    }

    /// Moves the backoff of `id` to its next step at `now`: `initial` for an id with none, or
    /// whose last step is more than twice `max` ago; otherwise double the current one, at
    /// most `max` (client-go's `Next`, called with the clock's now).
    pub fn next(&mut self, id: K, now: M) {
        let (initial, max) = (self.initial, self.max);
        let jitter = self.max_jitter_factor;
        let expired = |e: &Entry<M>| now.since(e.last_update) > max.saturating_mul(2);
        let backoff = match self.entries.get(&id) {
            Some(e) if !expired(e) => e
                .backoff
                .saturating_mul(2)
                .saturating_add(jitter_of(e.backoff, jitter))
                .min(max),
            _ => initial.saturating_add(jitter_of(initial, jitter)),
        };
        self.entries.insert(
            id,
            Entry {
                backoff,
                last_update: now,
            },
        );
    }

    /// Whether `id` is still backing off at `now` from an event at `event_time`: the event is
    /// less than the current backoff ago (client-go's `IsInBackOffSince`). False for an id
    /// with no backoff, or whose last step is more than twice `max` before the event.
    pub fn is_in_backoff_since<Q>(&self, id: &Q, event_time: M, now: M) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.live_entry(id, event_time)
            .is_some_and(|e| now.since(event_time) < e.backoff)
    }

    /// Whether an event at `event_time` falls within the current backoff of `id`, counted
    /// from its last step (client-go's `IsInBackOffSinceUpdate`).
    pub fn is_in_backoff_since_update<Q>(&self, id: &Q, event_time: M) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.live_entry(id, event_time)
            .is_some_and(|e| event_time.since(e.last_update) < e.backoff)
    }

    /// Forgets the backoff of `id` (client-go's `Reset` and `DeleteEntry`).
    pub fn reset<Q>(&mut self, id: &Q)
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries.remove(id);
    }

    /// Forgets every id whose last step is more than twice `max` before `now` (client-go's
    /// `GC`, which its users call now and then: the backoff never forgets on its own).
    pub fn gc(&mut self, now: M) {
        let limit = self.max.saturating_mul(2);
        self.entries
            .retain(|_, e| now.since(e.last_update) <= limit);
    }

    /// How many ids have a backoff.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no id has a backoff.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry of `id`, unless its last step is more than twice `max` before `at`.
    fn live_entry<Q>(&self, id: &Q, at: M) -> Option<&Entry<M>>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.entries
            .get(id)
            .filter(|e| at.since(e.last_update) <= self.max.saturating_mul(2))
    }
}

/// A random part of up to `factor` times `delay`; none for a factor of zero.
fn jitter_of(delay: Duration, factor: f64) -> Duration {
    if factor > 0.0 {
        crate::jitter(delay, factor).saturating_sub(delay)
    } else {
        Duration::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn s(n: u64) -> Duration {
        Duration::from_secs(n)
    }

    #[test]
    fn doubles_up_to_max_per_id() {
        let t0 = Instant::now();
        let mut b = ItemBackoff::new(s(1), s(5));
        let mut seen = Vec::new();
        for _ in 0..5 {
            b.next("a", t0);
            seen.push(b.get("a"));
        }
        assert_eq!(seen, [s(1), s(2), s(4), s(5), s(5)]);
        assert_eq!(b.get("b"), Duration::ZERO, "each id has its own");
        b.next("b", t0);
        assert_eq!((b.get("a"), b.get("b")), (s(5), s(1)));
        b.reset("a");
        assert_eq!(b.get("a"), Duration::ZERO);
        b.next("a", t0);
        assert_eq!(b.get("a"), s(1), "a reset id starts again");
    }

    /// An id quiet for more than twice `max` starts again, and `gc` forgets it; exactly twice
    /// `max` is not yet expired (client-go compares with `>`).
    #[test]
    fn expiry_after_twice_max() {
        let t0 = Instant::now();
        let mut b = ItemBackoff::new(s(1), s(4));
        b.next("a", t0);
        b.next("a", t0 + s(8));
        assert_eq!(b.get("a"), s(2), "8 s after is not more than twice the max");
        b.next("a", t0 + s(17));
        assert_eq!(b.get("a"), s(1), "9 s after is");
        b.next("z", t0 + s(17));
        b.gc(t0 + s(25));
        assert_eq!(b.len(), 2);
        b.next("z", t0 + s(20));
        b.gc(t0 + s(26));
        assert_eq!(b.len(), 1, "only the id quiet for more than 8 s is gone");
        assert_eq!(b.get("z"), s(2));
    }

    #[test]
    fn in_backoff_since_an_event_or_since_the_last_step() {
        let t0 = Instant::now();
        let mut b = ItemBackoff::new(s(2), s(10));
        assert!(!b.is_in_backoff_since("a", t0, t0), "no backoff, no wait");
        b.next("a", t0);
        assert!(b.is_in_backoff_since("a", t0, t0 + s(1)));
        assert!(!b.is_in_backoff_since("a", t0, t0 + s(2)));
        assert!(b.is_in_backoff_since_update("a", t0 + s(1)));
        assert!(!b.is_in_backoff_since_update("a", t0 + s(2)));
        // An event more than twice the max after the last step is not backed off.
        assert!(!b.is_in_backoff_since("a", t0 + s(21), t0 + s(21)));
        assert!(!b.is_in_backoff_since_update("a", t0 + s(21)));
    }

    /// Jitter adds up to its factor of the previous backoff at each step, and stays in the
    /// backoff the next step doubles; the result never passes `max`.
    #[test]
    fn jitter_adds_at_most_its_factor_and_never_passes_max() {
        let t0 = Instant::now();
        for _ in 0..200 {
            let mut b = ItemBackoff::with_jitter(s(1), s(60), 0.5);
            b.next("a", t0);
            let first = b.get("a");
            assert!(
                first >= s(1) && first < Duration::from_millis(1500),
                "{first:?}"
            );
            b.next("a", t0);
            let second = b.get("a");
            assert!(
                second >= first * 2 && second < first * 2 + first / 2,
                "{first:?} then {second:?}"
            );
            for _ in 0..10 {
                b.next("a", t0);
            }
            assert_eq!(b.get("a"), s(60));
        }
        for nonsense in [f64::NAN, f64::INFINITY, -1.0] {
            let mut b = ItemBackoff::with_jitter(s(1), s(60), nonsense);
            b.next("a", t0);
            b.next("a", t0);
            assert_eq!(b.get("a"), s(2), "{nonsense} adds no jitter");
        }
    }

    #[test]
    fn edges_do_not_overflow() {
        let t0 = Instant::now();
        let mut b = ItemBackoff::new(Duration::MAX, Duration::MAX);
        b.next("a", t0);
        b.next("a", t0);
        assert_eq!(b.get("a"), Duration::MAX);
        b.gc(t0);
        assert_eq!(b.len(), 1);
        let mut zero = ItemBackoff::new(Duration::ZERO, Duration::ZERO);
        zero.next("a", t0);
        assert_eq!(zero.get("a"), Duration::ZERO);
        assert!(!zero.is_in_backoff_since("a", t0, t0));
        // An initial above the max is kept once, then capped (as client-go's).
        let mut b = ItemBackoff::new(s(10), s(3));
        b.next("a", t0);
        assert_eq!(b.get("a"), s(10));
        b.next("a", t0);
        assert_eq!(b.get("a"), s(3));
    }
}
