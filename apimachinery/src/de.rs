//! Tolerant decoding helpers for the hand-written wire types: the API server (and proxies in
//! front of it) sometimes send `null` where a value is optional, and Go treats `null` like an
//! absent field. These helpers give Rust the same reading.

use serde::{Deserialize, Deserializer};

/// Decodes `null` (or an absent field, with `#[serde(default)]`) as `T::default()`, as Go's
/// `encoding/json` leaves a field at its zero value for `null`: for hand-written wire types,
/// `#[serde(default, deserialize_with = "kclient_apimachinery::null_as_default")]`.
///
/// ```
/// #[derive(serde::Deserialize)]
/// struct Review {
///     #[serde(default, deserialize_with = "kclient_apimachinery::null_as_default")]
///     objects: Vec<String>,
/// }
/// let review: Review = serde_json::from_str(r#"{"objects": null}"#).unwrap();
/// assert!(review.objects.is_empty());
/// ```
pub fn null_as_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// Whether an integer is zero, for `skip_serializing_if` (Go's `omitempty`).
pub(crate) fn is_zero_i32(v: &i32) -> bool {
    *v == 0
}
