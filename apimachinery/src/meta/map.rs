//! [`Map`], the small sorted map of generated API objects (labels, annotations, ConfigMap data,
//! resource limits, ...).
//!
//! Kubernetes maps are small and read far more often than written, so a map is a boxed slice
//! of `(key, value)` pairs sorted by key: 16 bytes, one allocation, lookups by binary search,
//! and a deterministic (sorted) order when serialized, as Go's encoding/json writes maps.
//! Duplicate keys in the input keep the last value, as Go does.

use std::fmt;

use crate::StringMap;

/// A sorted, frozen map with string keys. See the [`meta`](crate::meta) module documentation.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Map<K, V>(Box<[(K, V)]>);

/// The map type of labels, annotations and node selectors: interned keys and values.
pub type StrMap = Map<crate::meta::IStr, crate::meta::IStr>;

impl<K, V> Map<K, V> {
    /// An empty map (allocates nothing).
    pub fn new() -> Self {
        Map(Box::default())
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the map has no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&K, &V)> + '_ {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &K> + '_ {
        self.0.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &V> + '_ {
        self.0.iter().map(|(_, v)| v)
    }

    /// The entries as a sorted `Vec`, to edit many at once.
    pub fn into_vec(self) -> Vec<(K, V)> {
        self.0.into_vec()
    }
}

impl<K: AsRef<str>, V> Map<K, V> {
    fn position(&self, key: &str) -> Result<usize, usize> {
        self.0.binary_search_by(|(k, _)| k.as_ref().cmp(key))
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&V> {
        self.position(key).ok().map(|i| &self.0[i].1)
    }

    /// A mutable reference to the value under `key`.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut V> {
        match self.position(key) {
            Ok(i) => Some(&mut self.0[i].1),
            Err(_) => None,
        }
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_ok()
    }

    /// Inserts or replaces the value under `key`, returning the old one.
    pub fn insert(&mut self, key: impl Into<K>, value: V) -> Option<V> {
        let key = key.into();
        match self.position(key.as_ref()) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, value)),
            Err(i) => {
                let mut v = std::mem::take(&mut self.0).into_vec();
                v.insert(i, (key, value));
                self.0 = v.into_boxed_slice();
                None
            }
        }
    }

    /// Removes `key`, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<V> {
        let i = self.position(key).ok()?;
        let mut v = std::mem::take(&mut self.0).into_vec();
        let (_, value) = v.remove(i);
        self.0 = v.into_boxed_slice();
        Some(value)
    }

    /// The map of decoded `pairs`, which are usually sorted already (Go writes maps sorted).
    /// Checked with `K`'s own order, which for the key types (`IStr`, `String`,
    /// `CompactString`) is their text's: `IStr` compares bytes without re-checking UTF-8.
    pub(crate) fn from_pairs(pairs: Box<[(K, V)]>) -> Self
    where
        K: Ord,
    {
        if pairs.windows(2).all(|w| w[0].0 < w[1].0) {
            Map(pairs)
        } else {
            Map::from_unsorted(pairs.into_vec())
        }
    }

    fn from_unsorted(mut v: Vec<(K, V)>) -> Self {
        // Stable sort, then keep the last of equal keys (Go's decoder lets later keys win).
        v.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        let mut out: Vec<(K, V)> = Vec::with_capacity(v.len());
        for (k, val) in v {
            match out.last_mut() {
                Some(last) if last.0.as_ref() == k.as_ref() => *last = (k, val),
                _ => out.push((k, val)),
            }
        }
        Map(out.into_boxed_slice())
    }
}

impl<K, V> Default for Map<K, V> {
    fn default() -> Self {
        Map::new()
    }
}

impl<K: fmt::Debug, V: fmt::Debug> fmt::Debug for Map<K, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K: AsRef<str>, V> FromIterator<(K, V)> for Map<K, V> {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Map::from_unsorted(iter.into_iter().collect())
    }
}

impl<K: AsRef<str>, V, const N: usize> From<[(K, V); N]> for Map<K, V> {
    fn from(entries: [(K, V); N]) -> Self {
        Map::from_unsorted(entries.into())
    }
}

impl<K: AsRef<str>, V> From<Vec<(K, V)>> for Map<K, V> {
    fn from(entries: Vec<(K, V)>) -> Self {
        Map::from_unsorted(entries)
    }
}

impl<K: AsRef<str>, V: AsRef<str>> StringMap for Map<K, V> {
    fn get(&self, key: &str) -> Option<&str> {
        Map::get(self, key).map(AsRef::as_ref)
    }
    fn entries(&self) -> Box<dyn Iterator<Item = (&str, &str)> + '_> {
        Box::new(self.0.iter().map(|(k, v)| (k.as_ref(), v.as_ref())))
    }
    fn len(&self) -> usize {
        self.0.len()
    }
}

impl<'a, K, V> IntoIterator for &'a Map<K, V> {
    type Item = &'a (K, V);
    type IntoIter = std::slice::Iter<'a, (K, V)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<K: serde::Serialize, V: serde::Serialize> serde::Serialize for Map<K, V> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(k, v)| (k, v)))
    }
}

impl<'de, K, V> serde::Deserialize<'de> for Map<K, V>
where
    K: serde::Deserialize<'de> + AsRef<str> + Ord,
    V: serde::Deserialize<'de>,
{
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<K, V>(std::marker::PhantomData<(K, V)>);
        impl<'de, K, V> serde::de::Visitor<'de> for Visitor<K, V>
        where
            K: serde::Deserialize<'de> + AsRef<str> + Ord,
            V: serde::Deserialize<'de>,
        {
            type Value = Map<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                access: A,
            ) -> Result<Map<K, V>, A::Error> {
                if std::mem::size_of::<(K, V)>() > crate::meta::list::LARGE_ELEMENT {
                    collect_large(access)
                } else {
                    collect_small(access)
                }
            }
        }
        // Entries held in locals, unless they are large (see `LARGE_ELEMENT`): each way in its
        // own function, so that a large entry's frame does not hold five of them.
        fn collect_small<'de, K, V, A>(mut access: A) -> Result<Map<K, V>, A::Error>
        where
            K: serde::Deserialize<'de> + AsRef<str> + Ord,
            V: serde::Deserialize<'de>,
            A: serde::de::MapAccess<'de>,
        {
            // The first entries wait in locals so small maps are allocated once, at their
            // exact size, each entry moved once into place.
            let Some(a) = access.next_entry::<K, V>()? else {
                return Ok(Map::new());
            };
            let Some(b) = access.next_entry::<K, V>()? else {
                return Ok(Map(Box::new([a])));
            };
            let Some(c) = access.next_entry::<K, V>()? else {
                return Ok(Map::from_pairs(Box::new([a, b])));
            };
            let Some(d) = access.next_entry::<K, V>()? else {
                return Ok(Map::from_pairs(Box::new([a, b, c])));
            };
            let Some(e) = access.next_entry::<K, V>()? else {
                return Ok(Map::from_pairs(Box::new([a, b, c, d])));
            };
            let mut v: Vec<(K, V)> = Vec::with_capacity(8);
            v.extend([a, b, c, d, e]);
            while let Some(entry) = access.next_entry::<K, V>()? {
                v.push(entry);
            }
            Ok(Map::from_pairs(v.into_boxed_slice()))
        }
        fn collect_large<'de, K, V, A>(mut access: A) -> Result<Map<K, V>, A::Error>
        where
            K: serde::Deserialize<'de> + AsRef<str> + Ord,
            V: serde::Deserialize<'de>,
            A: serde::de::MapAccess<'de>,
        {
            let mut v: Vec<(K, V)> = Vec::with_capacity(1);
            while let Some(entry) = access.next_entry::<K, V>()? {
                v.push(entry);
            }
            Ok(Map::from_pairs(v.into_boxed_slice()))
        }
        // `null` decodes as an empty map, as Go decodes it into a nil map.
        struct OrNull<K, V>(std::marker::PhantomData<(K, V)>);
        impl<'de, K, V> serde::de::Visitor<'de> for OrNull<K, V>
        where
            K: serde::Deserialize<'de> + AsRef<str> + Ord,
            V: serde::Deserialize<'de>,
        {
            type Value = Map<K, V>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a map or null")
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<Map<K, V>, E> {
                Ok(Map::new())
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Map<K, V>, E> {
                Ok(Map::new())
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Map<K, V>, D::Error> {
                d.deserialize_map(Visitor(std::marker::PhantomData))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                access: A,
            ) -> Result<Map<K, V>, A::Error> {
                serde::de::Visitor::visit_map(Visitor(std::marker::PhantomData), access)
            }
        }
        deserializer.deserialize_option(OrNull(std::marker::PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::IStr;

    #[test]
    fn sorts_and_keeps_last_duplicate() {
        let m: StrMap = serde_json::from_str(r#"{"b":"1","a":"2","b":"3"}"#).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m.get("b").map(|v| v.as_str()), Some("3"));
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"a":"2","b":"3"}"#);
        let null: StrMap = serde_json::from_str("null").unwrap();
        assert!(null.is_empty());
    }

    #[test]
    fn decodes_maps_of_any_length_in_any_order() {
        for n in 0..12 {
            let keys: Vec<String> = (0..n).map(|i| format!("k{i:02}")).collect();
            for reversed in [false, true] {
                let mut entries: Vec<String> =
                    keys.iter().map(|k| format!(r#""{k}":"v-{k}""#)).collect();
                if reversed {
                    entries.reverse();
                }
                let json = format!("{{{}}}", entries.join(","));
                let m: StrMap = crate::decode_json(json.as_bytes()).unwrap();
                let got: Vec<(&str, &str)> =
                    m.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                let want: Vec<(String, String)> =
                    keys.iter().map(|k| (k.clone(), format!("v-{k}"))).collect();
                let want: Vec<(&str, &str)> =
                    want.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                assert_eq!(got, want, "{json}");
            }
        }
        let dup: StrMap =
            crate::decode_json(br#"{"a":"1","b":"2","a":"3","c":"4","b":"5"}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&dup).unwrap(),
            r#"{"a":"3","b":"5","c":"4"}"#
        );
    }

    #[test]
    fn edits_and_string_map_view() {
        let mut m: StrMap = [("app", "web")]
            .map(|(k, v)| (IStr::from(k), IStr::from(v)))
            .into();
        assert_eq!(m.insert("tier", "front".into()), None);
        assert_eq!(m.insert("app", "api".into()).as_deref(), Some("web"));
        let view: &dyn StringMap = &m;
        assert_eq!(view.get("app"), Some("api"));
        assert_eq!(view.len(), 2);
        assert_eq!(m.remove("app").as_deref(), Some("api"));
        assert!(!m.contains_key("app"));
    }
}
