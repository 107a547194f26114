//! The optional fields Go writes as `null` when unset (a condition's `lastTransitionTime`, an
//! HPA status's `currentMetrics`; see `api/gen/go-nulls.txt`): a typed object encodes them as
//! `null`, as Go does, except as a server-side apply body.
//!
//! In an apply body a `null` is not "unset": the server counts it as a field the applier
//! sets (to nothing), so the applier would own it, conflict with the manager that set it, and,
//! forcing, remove its value. [`Apply`](crate::Apply) for a typed object therefore encodes it
//! inside `without_unset_nulls`, during which the generated code leaves these fields out
//! when unset ([`unset_in_apply`]), as every other unset optional field is.
//!
//! Some *required* fields are Go pointers, slices or maps without `omitempty` too (a CSINode's
//! `drivers`, a LimitRange's `limits`, a Deployment's `selector`). kclient holds them as plain
//! values, so an empty list or map stands for Go's nil one: it encodes as `null`
//! ([`serialize_nil_when_empty`]), as the server writes every empty one (it stores them nil),
//! except in an apply body, where it stays `[]` or `{}`. A `null` received for a required
//! struct or string decodes as its default ([`deserialize_null_as_default`]), as Go reads it
//! into a nil pointer: an object no validation has seen (an admission review's) may hold one.

use std::cell::Cell;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{ByteString, List, Map};

thread_local! {
    /// Whether this thread is encoding an apply body (see [`without_unset_nulls`]).
    static ENCODING_APPLY: Cell<bool> = const { Cell::new(false) };
}

/// For `#[serde(skip_serializing_if)]` in generated code: whether a field Go writes as `null`
/// when unset is left out, which it is when it is unset and an apply body is being encoded.
pub fn unset_in_apply<T>(value: &Option<T>) -> bool {
    value.is_none() && ENCODING_APPLY.with(Cell::get)
}

/// A value Go holds as a slice or map: empty when Go's would be nil.
pub trait GoNil {
    /// Whether the value is empty, which Go's nil slice or map would be.
    fn is_go_nil(&self) -> bool;
}

impl<T> GoNil for List<T> {
    fn is_go_nil(&self) -> bool {
        self.is_empty()
    }
}

impl<K, V> GoNil for Map<K, V> {
    fn is_go_nil(&self) -> bool {
        self.is_empty()
    }
}

impl GoNil for ByteString {
    fn is_go_nil(&self) -> bool {
        self.0.is_empty()
    }
}

/// For `#[serde(serialize_with)]` in generated code: a required list or map that Go leaves
/// nil when empty is written `null` when empty, as Go writes it, except in an apply body.
pub fn serialize_nil_when_empty<T: GoNil + Serialize, S: Serializer>(
    value: &T,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    if value.is_go_nil() && !ENCODING_APPLY.with(Cell::get) {
        return serializer.serialize_none();
    }
    value.serialize(serializer)
}

/// [`serialize_nil_when_empty`] as a value, for the generated `Serialize` of a kind.
pub struct NilWhenEmpty<'a, T>(pub &'a T);

impl<T: GoNil + Serialize> Serialize for NilWhenEmpty<'_, T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serialize_nil_when_empty(self.0, serializer)
    }
}

/// For `#[serde(deserialize_with)]` in generated code: a required field that Go holds in a
/// pointer reads `null` (Go's nil) as its default.
pub fn deserialize_null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Runs `encode` (a serialization, which runs on this thread) with the fields Go writes as
/// `null` left out when unset.
pub(crate) fn without_unset_nulls<R>(encode: impl FnOnce() -> R) -> R {
    /// Restores the previous state, also when `encode` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ENCODING_APPLY.with(|flag| flag.set(self.0));
        }
    }
    let _restore = Restore(ENCODING_APPLY.with(|flag| flag.replace(true)));
    encode()
}

#[cfg(test)]
mod tests {
    use super::{unset_in_apply, without_unset_nulls};

    #[test]
    fn only_unset_values_and_only_while_encoding_an_apply_body() {
        assert!(!unset_in_apply::<u8>(&None));
        without_unset_nulls(|| {
            assert!(unset_in_apply::<u8>(&None));
            assert!(!unset_in_apply(&Some(0)));
            // Nested use keeps the state of the outer one.
            without_unset_nulls(|| ());
            assert!(unset_in_apply::<u8>(&None));
        });
        assert!(!unset_in_apply::<u8>(&None));
        // A panic inside restores it too.
        let caught = std::panic::catch_unwind(|| without_unset_nulls(|| panic!("encoding")));
        assert!(caught.is_err());
        assert!(!unset_in_apply::<u8>(&None));
    }
}
