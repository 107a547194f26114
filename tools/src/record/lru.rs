//! [`LruCache`], the bounded least-recently-used map behind the event correlator (client-go
//! uses `groupcache/lru` with 4096 entries): memory stays bounded however many distinct
//! objects and messages a process reports about.

use std::collections::{BTreeMap, HashMap};

/// A map of at most `capacity` entries that forgets the least recently used one when full.
#[derive(Debug)]
pub(crate) struct LruCache<V> {
    capacity: usize,
    /// Each value with the tick of its last use.
    entries: HashMap<String, (V, u64)>,
    /// Keys by the tick of their last use, oldest first.
    by_use: BTreeMap<u64, String>,
    tick: u64,
}

impl<V> LruCache<V> {
    /// An empty cache holding at most `capacity` entries (at least one).
    pub(crate) fn new(capacity: usize) -> Self {
        LruCache {
            capacity: capacity.max(1),
            entries: HashMap::new(),
            by_use: BTreeMap::new(),
            tick: 0,
        }
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// The value under `key`, marked as just used.
    pub(crate) fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        let tick = self.next_tick();
        let (_, used) = self.entries.get_mut(key)?;
        let old = std::mem::replace(used, tick);
        if let Some(k) = self.by_use.remove(&old) {
            self.by_use.insert(tick, k);
        }
        self.entries.get_mut(key).map(|(v, _)| v)
    }

    /// Stores `value` under `key` as just used, evicting the least recently used entry if
    /// the cache is full.
    pub(crate) fn put(&mut self, key: &str, value: V) {
        let tick = self.next_tick();
        if let Some((old_value, used)) = self.entries.get_mut(key) {
            *old_value = value;
            let old = std::mem::replace(used, tick);
            self.by_use.remove(&old);
            self.by_use.insert(tick, key.to_string());
            return;
        }
        if self.entries.len() >= self.capacity
            && let Some((_, oldest)) = self.by_use.pop_first()
        {
            self.entries.remove(&oldest);
        }
        self.entries.insert(key.to_string(), (value, tick));
        self.by_use.insert(tick, key.to_string());
    }

    /// The number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_the_least_recently_used() {
        let mut lru = LruCache::new(2);
        lru.put("a", 1);
        lru.put("b", 2);
        assert_eq!(lru.get_mut("a").copied(), Some(1)); // a is now newer than b
        lru.put("c", 3);
        assert_eq!(lru.len(), 2);
        assert!(lru.get_mut("b").is_none());
        assert_eq!(lru.get_mut("a").copied(), Some(1));
        assert_eq!(lru.get_mut("c").copied(), Some(3));
        lru.put("c", 4); // replacing does not evict
        assert_eq!(lru.len(), 2);
        assert_eq!(lru.get_mut("c").copied(), Some(4));
        lru.put("d", 5); // a was used before c: a goes
        assert!(lru.get_mut("a").is_none());
    }
}
