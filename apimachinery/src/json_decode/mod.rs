//! [`decode_json`], how every kclient crate decodes a JSON body or watch line it received:
//! kclient's own JSON decoder, a serde `Deserializer` over the text.
//!
//! It decodes what `serde_json::from_slice` decodes, to the same values (the differential tests
//! in `tests.rs` hold it to that), and more: strings holding bytes that are not UTF-8 or lone
//! surrogate escapes, which `serde_json` refuses, read as Go reads them (see [`decode_json`]). It differs where it is
//! faster:
//! - the UTF-8 of the whole buffer is checked once, up front, with SIMD (`from_slice` checks
//!   string by string; checking once decoded a Pod list 40% faster), and the text is then
//!   scanned as bytes, strings sixteen bytes per round (only in a buffer that is not all
//!   UTF-8 is each string checked on its own);
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
#[cfg(test)]
pub(crate) mod go_reading;
mod raw;
mod scan;
#[cfg(test)]
mod tests;

use serde::Deserialize;

pub use error::JsonError;
pub(crate) use raw::{RawText, deserialize_raw};

/// Appends `bytes`, string content, as Go's JSON decoder reads it: each byte that does not
/// start a valid UTF-8 sequence (Go's `utf8.DecodeRune` takes one byte of an invalid sequence
/// at a time) becomes U+FFFD.
pub(crate) fn push_go_text(out: &mut String, bytes: &[u8]) {
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for _ in chunk.invalid() {
            out.push(char::REPLACEMENT_CHARACTER);
        }
    }
}

/// The newtype name under which kclient's decoder hands out a value's raw text (see
/// [`raw`]).
const RAW_TOKEN: &str = "$kclient::private::RawJson";

/// Decodes JSON `bytes` into `T`, as `serde_json::from_slice` does, but faster.
///
/// Bytes that are not UTF-8 inside a string are read as Go's decoder reads them (client-go's,
/// the apiserver's), not refused as `serde_json` refuses them: each byte that does not start a
/// valid sequence becomes U+FFFD, in decoded strings and raw values alike; so does, in a decoded
/// string, a `\u` escape of a surrogate that is not half of a pair. The server writes
/// such bytes back where a client stored them in a raw field (a ControllerRevision's `data`,
/// any `runtime.RawExtension`), and an error would make the object, and every list and watch
/// that holds it, unreadable. Errors name the line and column.
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
/// let value: serde_json::Value = kclient_apimachinery::decode_json(b"\"a\xffb\"")?;
/// assert_eq!(value, "a\u{fffd}b");
/// let err = kclient_apimachinery::decode_json::<serde_json::Value>(b"{\"a\" 1}").unwrap_err();
/// assert_eq!(err.to_string(), "expected `:` at line 1 column 6");
/// # Ok::<(), kclient_apimachinery::JsonError>(())
/// ```
pub fn decode_json<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<T, JsonError> {
    // UTF-8 checked once, up front, for all of it; else slice by slice (bytes that are not
    // UTF-8 outside a string are not JSON, and are refused as any other byte out of place).
    let mut de = match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => deserializer::Deserializer::new(text),
        Err(_) => deserializer::Deserializer::new_not_utf8(bytes),
    };
    match T::deserialize(&mut de) {
        Ok(value) => {
            de.end()?;
            Ok(value)
        }
        Err(e) => Err(de.locate(e)),
    }
}
