//! The optional fields Go writes as `null` when unset (a condition's `lastTransitionTime`, an
//! HPA status's `currentMetrics`; see `api/gen/go-nulls.txt`): a typed object encodes them as
//! `null`, as Go does, except as a server-side apply body.
//!
//! In an apply body a `null` is not "unset": the server counts it as a field the applier
//! sets (to nothing), so the applier would own it, conflict with the manager that set it, and,
//! forcing, remove its value. [`Apply`](crate::Apply) for a typed object therefore encodes it
//! inside `without_unset_nulls`, during which the generated code leaves these fields out
//! when unset ([`unset_in_apply`]), as every other unset optional field is.

use std::cell::Cell;

thread_local! {
    /// Whether this thread is encoding an apply body (see [`without_unset_nulls`]).
    static ENCODING_APPLY: Cell<bool> = const { Cell::new(false) };
}

/// For `#[serde(skip_serializing_if)]` in generated code: whether a field Go writes as `null`
/// when unset is left out, which it is when it is unset and an apply body is being encoded.
pub fn unset_in_apply<T>(value: &Option<T>) -> bool {
    value.is_none() && ENCODING_APPLY.with(Cell::get)
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
