//! [`List`], the frozen list type of generated API objects.
//!
//! A decoded object never grows its lists, so a list is a boxed slice: 16 bytes and exactly one
//! allocation of exactly the right size. Decoding collects the first few elements on the
//! stack, so lists of up to four elements (most of them) are allocated once and never
//! reallocated; elements of more than 512 bytes go straight into a `Vec` instead (lists of
//! one of them are allocated once). Editing goes through [`List::push`] or through `Vec`
//! (`into_vec`, `From<Vec<T>>`).

use std::fmt;
use std::ops::{Deref, DerefMut};

/// How many elements decoding holds in locals before it allocates.
const STACK_ELEMENTS: usize = 4;

/// Elements larger than this many bytes are decoded straight into a `Vec` instead: held in
/// locals, five of them (and, in a debug build, the arrays and results they move through) made
/// one frame of a recursive type's decode tens of kilobytes, and a CustomResourceDefinition
/// whose schema nested 42 levels through `properties` or `allOf` (`JSONSchemaProps` is 592
/// bytes), well within the decoder's nesting limit, overflowed a 2 MiB thread's stack.
pub(crate) const LARGE_ELEMENT: usize = 512;

/// An immutable-length list: a `Box<[T]>` with list conveniences. See the
/// [`meta`](crate::meta) module documentation.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct List<T>(Box<[T]>);

impl<T> List<T> {
    /// An empty list (allocates nothing).
    pub fn new() -> Self {
        List(Box::default())
    }

    /// The elements as a `Vec`, to edit them.
    pub fn into_vec(self) -> Vec<T> {
        self.0.into_vec()
    }

    /// Appends an element (reallocating the list).
    pub fn push(&mut self, value: T) {
        let mut v = std::mem::take(&mut self.0).into_vec();
        v.push(value);
        self.0 = v.into_boxed_slice();
    }

    /// Keeps only the elements for which `keep` returns true.
    pub fn retain(&mut self, keep: impl FnMut(&T) -> bool) {
        let mut v = std::mem::take(&mut self.0).into_vec();
        v.retain(keep);
        self.0 = v.into_boxed_slice();
    }
}

impl<T> Default for List<T> {
    fn default() -> Self {
        List::new()
    }
}

impl<T> Deref for List<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> DerefMut for List<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T: fmt::Debug> fmt::Debug for List<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.0.iter()).finish()
    }
}

impl<T> From<Vec<T>> for List<T> {
    fn from(v: Vec<T>) -> Self {
        List(v.into_boxed_slice())
    }
}

impl<T> From<Box<[T]>> for List<T> {
    fn from(v: Box<[T]>) -> Self {
        List(v)
    }
}

impl<T, const N: usize> From<[T; N]> for List<T> {
    fn from(v: [T; N]) -> Self {
        List(Box::new(v))
    }
}

impl<T> FromIterator<T> for List<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        List(iter.into_iter().collect())
    }
}

impl<'a, T> IntoIterator for &'a List<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T> IntoIterator for List<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_vec().into_iter()
    }
}

impl<T: serde::Serialize> serde::Serialize for List<T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter())
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for List<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<List<T>, A::Error> {
                collect_frozen(seq).map(List)
            }
        }
        // `null` decodes as an empty list, as Go decodes it into a nil slice (Go encodes nil
        // slices of fields without `omitempty` as `null`).
        struct OrNull<T>(std::marker::PhantomData<T>);
        impl<'de, T: serde::Deserialize<'de>> serde::de::Visitor<'de> for OrNull<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list or null")
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<List<T>, E> {
                Ok(List::new())
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<List<T>, E> {
                Ok(List::new())
            }
            fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<List<T>, D::Error> {
                d.deserialize_seq(Visitor(std::marker::PhantomData))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<List<T>, A::Error> {
                collect_frozen(seq).map(List)
            }
        }
        deserializer.deserialize_option(OrNull(std::marker::PhantomData))
    }
}

/// Collects a sequence into an exactly sized boxed slice. The first [`STACK_ELEMENTS`] are
/// held in locals (unless they are larger than [`LARGE_ELEMENT`]), so a short sequence is
/// allocated once, at its exact size, and each element is moved once into place (an array of
/// `Option`s moved through an iterator cost a Pod's decode several copies of every element).
pub(crate) fn collect_frozen<'de, T, A>(seq: A) -> Result<Box<[T]>, A::Error>
where
    T: serde::Deserialize<'de>,
    A: serde::de::SeqAccess<'de>,
{
    if std::mem::size_of::<T>() > LARGE_ELEMENT {
        collect_large(seq)
    } else {
        collect_small(seq)
    }
}

/// [`collect_frozen`] for elements of more than [`LARGE_ELEMENT`] bytes, straight into a `Vec`
/// (its own function, so that the locals of [`collect_small`] are not in its frame).
fn collect_large<'de, T, A>(mut seq: A) -> Result<Box<[T]>, A::Error>
where
    T: serde::Deserialize<'de>,
    A: serde::de::SeqAccess<'de>,
{
    // One element, the usual length, is allocated at its exact size.
    let mut v: Vec<T> = Vec::with_capacity(1);
    while let Some(value) = seq.next_element()? {
        v.push(value);
    }
    Ok(v.into_boxed_slice())
}

/// [`collect_frozen`] for elements of at most [`LARGE_ELEMENT`] bytes, the first ones held in
/// locals.
fn collect_small<'de, T, A>(mut seq: A) -> Result<Box<[T]>, A::Error>
where
    T: serde::Deserialize<'de>,
    A: serde::de::SeqAccess<'de>,
{
    let Some(a) = seq.next_element()? else {
        return Ok(Box::default());
    };
    let Some(b) = seq.next_element()? else {
        return Ok(Box::new([a]));
    };
    let Some(c) = seq.next_element()? else {
        return Ok(Box::new([a, b]));
    };
    let Some(d) = seq.next_element()? else {
        return Ok(Box::new([a, b, c]));
    };
    let Some(e) = seq.next_element()? else {
        return Ok(Box::new([a, b, c, d]));
    };
    let mut v: Vec<T> = Vec::with_capacity(STACK_ELEMENTS * 2);
    v.extend([a, b, c, d, e]);
    while let Some(value) = seq.next_element()? {
        v.push(value);
    }
    Ok(v.into_boxed_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_lists_of_any_length_exactly() {
        for n in 0..12 {
            let json = serde_json::to_string(&(0..n).collect::<Vec<i32>>()).unwrap();
            let list: List<i32> = serde_json::from_str(&json).unwrap();
            assert_eq!(&*list, &(0..n).collect::<Vec<i32>>()[..]);
            assert_eq!(serde_json::to_string(&list).unwrap(), json);
        }
    }

    #[test]
    fn null_is_an_empty_list() {
        let list: List<i32> = serde_json::from_str("null").unwrap();
        assert!(list.is_empty());
        let v: List<i32> = serde_json::from_value(serde_json::json!([1, 2])).unwrap();
        assert_eq!(&*v, &[1, 2]);
    }

    #[test]
    fn edits_through_push_and_retain() {
        let mut list: List<&str> = ["a", "b"].into();
        list.push("c");
        list.retain(|s| *s != "a");
        assert_eq!(&*list, &["b", "c"]);
    }

    #[test]
    fn empty_and_absent_stay_distinct() {
        #[derive(serde::Serialize, serde::Deserialize, Default)]
        struct T {
            #[serde(skip_serializing_if = "Option::is_none", default)]
            finalizers: Option<List<String>>,
        }
        let empty: T = serde_json::from_str(r#"{"finalizers":[]}"#).unwrap();
        assert_eq!(
            serde_json::to_string(&empty).unwrap(),
            r#"{"finalizers":[]}"#
        );
        let absent: T = serde_json::from_str("{}").unwrap();
        assert_eq!(serde_json::to_string(&absent).unwrap(), "{}");
    }
}
