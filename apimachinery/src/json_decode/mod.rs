//! [`decode_json`], how every kclient crate decodes a JSON body or watch line it received:
//! kclient's own JSON decoder, a serde `Deserializer` over the text.
//!
//! It decodes what `serde_json::from_slice` decodes, to the same values (the differential tests
//! in `tests.rs` hold it to that), and differs where it is faster:
//! - the UTF-8 of the whole buffer is checked once, up front, with SIMD (`from_slice` checks
//!   string by string; checking once decoded a Pod list 40% faster), and the text is then
//!   scanned as bytes, strings sixteen bytes per round;
//! - raw values ([`RawJson`](crate::meta::RawJson), and the field sets of managedFields, a
//!   third of a Pod's bytes) are checked by one skip over their text and borrowed from the
//!   input; through `serde_json` they were skipped, copied into a `Box<RawValue>`, and copied
//!   again. A raw object or array repeating one of the last few in the same input is taken
//!   whole without a second skip.
//!
//! Arrays and objects nest up to 10,003 levels deep, where `serde_json` refuses the 128th: the
//! apiserver stores objects nested up to 10,000 levels (a custom resource whose schema keeps
//! unknown fields), and a list puts two more around them. Past 64 levels the decoder grows the
//! stack as it goes (`stacker`), so that the deepest input fits on any thread, a 2 MiB tokio
//! worker's among them; shallower input, every object of a usual answer, pays nothing for it.
//! Deeper input is an error naming the limit, inside skipped and raw values too (which
//! `serde_json` skips at any depth).

mod deserializer;
mod error;
mod raw;
mod scan;
#[cfg(test)]
mod tests;

use serde::Deserialize;

pub use error::JsonError;
pub(crate) use raw::{RawText, deserialize_raw};

/// The newtype name under which kclient's decoder hands out a value's raw text (see
/// [`raw`]).
const RAW_TOKEN: &str = "$kclient::private::RawJson";

/// Decodes JSON `bytes` into `T`, as `serde_json::from_slice` does, but faster.
///
/// Bytes that are not UTF-8 are an error naming the offset of the first bad byte; other errors
/// name the line and column.
///
/// Arrays and objects may nest 10,003 levels deep (the apiserver stores objects up to 10,000
/// levels), on any thread. What is decoded must then live with its depth: a
/// `serde_json::Value` thousands of levels deep drops, clones and prints itself by recursion,
/// which a 2 MiB stack does not hold; [`Unstructured`](crate::Unstructured) handles its
/// depth itself and is the type to decode free-form objects of any depth into.
///
/// ```
/// let value: serde_json::Value = kclient_apimachinery::decode_json(br#"{"a":[1,2]}"#)?;
/// assert_eq!(value["a"][1], 2);
/// let err = kclient_apimachinery::decode_json::<serde_json::Value>(b"\"\xff\"").unwrap_err();
/// assert!(err.to_string().contains("byte 1"), "{err}");
/// let err = kclient_apimachinery::decode_json::<serde_json::Value>(b"{\"a\" 1}").unwrap_err();
/// assert_eq!(err.to_string(), "expected `:` at line 1 column 6");
/// # Ok::<(), kclient_apimachinery::JsonError>(())
/// ```
pub fn decode_json<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, JsonError> {
    // `simdutf8::basic` only says whether the bytes are UTF-8; std's check, run only then,
    // finds where they stop being so.
    let text = simdutf8::basic::from_utf8(bytes).map_err(|_| {
        let valid_up_to = std::str::from_utf8(bytes)
            .err()
            .map_or(0, |e| e.valid_up_to());
        JsonError::new(
            error::Category::Syntax,
            format!("the JSON is not valid UTF-8 at byte {valid_up_to}"),
        )
    })?;
    let mut de = deserializer::Deserializer::new(text);
    match T::deserialize(&mut de) {
        Ok(value) => {
            de.end()?;
            Ok(value)
        }
        Err(e) => Err(de.locate(e)),
    }
}
