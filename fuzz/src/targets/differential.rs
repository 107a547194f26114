//! The differential target: kclient's `decode_json` against `serde_json`, which it claims to
//! match, on plain JSON values (`serde_json::Value`) and on a typed `Pod`. Both must accept the
//! same inputs and give the same values, or reject them both. `serde_json` is given the input
//! as Go reads it ([`go_text`], [`go_escapes`]): kclient reads bytes that are not UTF-8 and
//! lone surrogate escapes as Go does, where `serde_json` refuses them. For the `Pod`, kclient
//! too is given the input with its lone surrogate escapes already replaced: inside a raw value
//! (a managedFields entry's `fieldsV1`) kclient keeps an escape's text as written, as Go's
//! `RawExtension` keeps its bytes, where `serde_json`'s `RawValue` of the rewritten input
//! holds `\ufffd` (the `Value` comparison covers how those escapes decode).
//!
//! These differences are tolerated, all known:
//! - floats may differ in the last two bits: `serde_json` without its `float_roundtrip` feature
//!   does not always round correctly, kclient uses Rust's correctly rounded parser (the same
//!   rule as `apimachinery/src/json_decode/tests.rs`); a typed value is compared only when the
//!   input has no fraction or exponent, as a float's text ends up inside a `Quantity`;
//! - for the same reason, numbers within a hair of `f64::MAX` may round the other way:
//!   `1.7976931348623158e308` is `f64::MAX` to kclient, as to Go's `strconv.ParseFloat` and so
//!   to the API server, where `serde_json`'s approximation overflows and reports "number out of
//!   range"; `1.79769313486231586e308` overflows for kclient and Go, where `serde_json` gives
//!   `f64::MAX`. Tolerated only when the side that refuses says "number out of range", the
//!   other side's value holds `±f64::MAX`, and the literals of the input parsed with Rust's
//!   correctly rounded parser agree with kclient (one overflows when kclient refuses, none when
//!   it accepts);
//! - at nesting depth 127 and more, one side may stop at its recursion limit where the other
//!   does not: `serde_json` refuses the 128th level, kclient reads up to 10,003 (the
//!   apiserver stores objects 10,000 levels deep; a list adds two levels around them), and
//!   inside a typed decode `serde_json` skips unknown fields of any depth.

use kclient_api::core::v1::Pod;
use kclient_apimachinery::decode_json;
use serde_json::Value;

use super::{Target, err, mix, ok};
#[path = "../../../apimachinery/src/json_decode/go_reading.rs"]
mod go_reading;
use crate::mutate::InputKind;
use go_reading::{go_escapes, go_text};

/// The differential target.
pub(super) fn targets() -> Vec<Target> {
    vec![Target {
        name: "json_differential",
        about: "decode_json vs serde_json::from_slice into serde_json::Value and into Pod: same \
                accept/reject, same values (floats within 2 ULP; depth >= 127 tolerated for now)",
        kind: InputKind::Json,
        max_len: 64 << 10,
        dict: &[
            "1e309",
            "\\ud800",
            "\\u0000",
            "[[[[[[[[",
            "]]]]",
            "\"\\uD83D\\uDE00\"",
        ],
        run: differential,
    }]
}

/// Whether two values are equal, floats within two units in the last place (see the module
/// docs).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => {
                    x == y
                        || (x.is_sign_negative() == y.is_sign_negative()
                            && x.to_bits().abs_diff(y.to_bits()) <= 2)
                }
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx == ky && same(x, y))
        }
        _ => a == b,
    }
}

/// Whether `value` holds a number of magnitude `f64::MAX`: the one kind of number `serde_json`
/// (without `float_roundtrip`) may wrongly call out of range (see the module docs).
fn holds_f64_max(value: &Value) -> bool {
    match value {
        Value::Number(n) => n.as_f64().is_some_and(|x| x.abs() == f64::MAX),
        Value::Array(items) => items.iter().any(holds_f64_max),
        Value::Object(map) => map.values().any(holds_f64_max),
        _ => false,
    }
}

/// Whether the two decoders differ only in how they rounded a number within a hair of
/// `f64::MAX` (see the module docs): one refused it as out of range, the other's value holds
/// `±f64::MAX`, and rounding every number literal of `input` correctly says kclient was right
/// (`ours_refused`: kclient is the side that refused).
fn is_max_rounding(
    input: &[u8],
    ours_refused: bool,
    error: &dyn std::fmt::Display,
    other: Option<&Value>,
) -> bool {
    let overflows = number_literals(input).any(|text| {
        std::str::from_utf8(text)
            .ok()
            .and_then(|text| text.parse::<f64>().ok())
            .is_some_and(f64::is_infinite)
    });
    error.to_string().starts_with("number out of range")
        && other.is_some_and(holds_f64_max)
        && overflows == ours_refused
}

/// Calls `visit(index, byte)` for every byte of `input` outside JSON strings, as far as a byte
/// scan can tell (the quote that opens a string is visited, the string's bytes are not).
fn for_each_outside_strings(input: &[u8], mut visit: impl FnMut(usize, u8)) {
    let (mut in_string, mut escaped) = (false, false);
    for (i, &b) in input.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        in_string = b == b'"';
        visit(i, b);
    }
}

/// Whether `b` may be part of a JSON number.
fn is_number_byte(b: u8) -> bool {
    b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E')
}

/// The number literals of `input` outside strings (a run that is not valid JSON simply fails
/// to parse).
fn number_literals(input: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut literals = Vec::new();
    let mut start = None;
    for_each_outside_strings(input, |i, b| match (is_number_byte(b), start) {
        (true, None) => start = Some(i),
        (false, Some(s)) => {
            literals.push(&input[s..i]);
            start = None;
        }
        _ => {}
    });
    if let Some(s) = start {
        literals.push(&input[s..]);
    }
    literals.into_iter()
}

/// The deepest nesting of arrays and objects in `input` (brackets inside strings skipped), and
/// whether a number outside strings has a fraction or exponent.
fn scan(input: &[u8]) -> (usize, bool) {
    let (mut depth, mut max, mut float, mut in_number) = (0usize, 0usize, false, false);
    for_each_outside_strings(input, |_, b| {
        match b {
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            b'0'..=b'9' | b'-' => in_number = true,
            b'.' | b'e' | b'E' if in_number => float = true,
            _ => {}
        }
        if !is_number_byte(b) {
            in_number = false;
        }
    });
    (max, float)
}

/// A nesting-limit error: `serde_json` refuses the 128th level, kclient the 10,004th (and
/// limits skipped fields too, which `serde_json` skips at any depth).
fn is_depth_error(text: &str) -> bool {
    text.contains("recursion limit")
}

fn differential(input: &[u8]) -> u64 {
    let (depth, has_float) = scan(input);
    let deep = depth >= 127;
    let show = || String::from_utf8_lossy(&input[..input.len().min(2000)]).into_owned();

    let ours_value = decode_json::<Value>(input);
    let escapes_replaced = go_escapes(input);
    let go_input = go_text(&escapes_replaced);
    let theirs_value = serde_json::from_slice::<Value>(go_input.as_bytes());
    let value = match (ours_value.as_ref(), theirs_value.as_ref()) {
        (Ok(ours), Ok(theirs)) => {
            assert!(
                same(ours, theirs),
                "Value: kclient {ours} != serde_json {theirs}\ninput: {:?}",
                show()
            );
            ok("Value")
        }
        (Err(ours), Err(_)) => err("Value", ours),
        (Ok(ours), Err(theirs)) if is_max_rounding(input, false, theirs, Some(ours)) => {
            ok("Value f64::MAX")
        }
        (Err(ours), Ok(theirs)) if is_max_rounding(input, true, ours, Some(theirs)) => {
            ok("Value f64::MAX")
        }
        (Ok(_), Err(theirs)) if deep && is_depth_error(&theirs.to_string()) => ok("Value depth"),
        (Err(ours), Ok(_)) if deep && is_depth_error(&ours.to_string()) => ok("Value depth"),
        (ours, theirs) => panic!(
            "Value: kclient {:?}, serde_json {:?}\ninput: {:?}",
            ours.map(|v| v.to_string()),
            theirs.map(|v| v.to_string()),
            show()
        ),
    };

    let pod = match (
        decode_json::<Pod>(&escapes_replaced),
        serde_json::from_slice::<Pod>(go_input.as_bytes()),
    ) {
        (Ok(ours), Ok(theirs)) => {
            assert!(
                has_float || ours == theirs,
                "Pod: kclient {ours:?} != serde_json {theirs:?}\ninput: {:?}",
                show()
            );
            ok("Pod")
        }
        (Err(ours), Err(_)) => err("Pod", &ours),
        (Ok(_), Err(theirs))
            if is_max_rounding(input, false, &theirs, ours_value.as_ref().ok()) =>
        {
            ok("Pod f64::MAX")
        }
        (Err(ours), Ok(_)) if is_max_rounding(input, true, &ours, theirs_value.as_ref().ok()) => {
            ok("Pod f64::MAX")
        }
        (Err(ours), Ok(_)) if deep && is_depth_error(&ours.to_string()) => ok("Pod depth"),
        (Ok(_), Err(theirs)) if deep && is_depth_error(&theirs.to_string()) => ok("Pod depth"),
        (ours, theirs) => panic!(
            "Pod: kclient {}, serde_json {}\ninput: {:?}",
            ours.map_or_else(|e| format!("error {e}"), |_| "ok".to_owned()),
            theirs.map_or_else(|e| format!("error {e}"), |_| "ok".to_owned()),
            show()
        ),
    };
    mix(&[value, pod])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scans_skip_strings_and_find_numbers_and_nesting() {
        let input = br#"{"a":"1e999 [[","b\"":[-1.5e3,2,{"c":[7]}]}"#;
        let literals: Vec<&[u8]> = number_literals(input).collect();
        assert_eq!(literals, [&b"-1.5e3"[..], b"2", b"7"]);
        assert_eq!(scan(input), (4, true));
        assert_eq!(scan(br#"[1,"2.5e1",3]"#), (1, false));
    }

    #[test]
    fn max_rounding_is_tolerated_only_when_correct_rounding_agrees_with_kclient() {
        let max = serde_json::json!([f64::MAX]);
        let out_of_range = "number out of range at line 1 column 20";
        // serde_json refused a number that rounds down to f64::MAX: kclient was right.
        assert!(is_max_rounding(
            b"[1.7976931348623158e308]",
            false,
            &out_of_range,
            Some(&max)
        ));
        // kclient refused a number past the halfway point: it was right.
        assert!(is_max_rounding(
            b"[1.79769313486231586e308]",
            true,
            &out_of_range,
            Some(&max)
        ));
        // kclient refusing f64::MAX itself would be a bug, not a rounding difference.
        assert!(!is_max_rounding(
            b"[1.7976931348623157e308]",
            true,
            &out_of_range,
            Some(&max)
        ));
        // Another error, or no f64::MAX on the other side, is never tolerated.
        assert!(!is_max_rounding(
            b"[1.79769313486231586e308]",
            true,
            &"trailing characters",
            Some(&max)
        ));
        assert!(!is_max_rounding(
            b"[1.79769313486231586e308]",
            true,
            &out_of_range,
            Some(&serde_json::json!([1.0]))
        ));
    }
}
