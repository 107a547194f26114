//! JSON numbers as kube-apiserver stores and sends them.
//!
//! The server decodes a custom resource's numbers into an int64 when the text is an integer
//! that fits and a float64 otherwise, and encodes them with Go's `encoding/json`; the
//! storage decodes what it wrote again. So `3.0`, `1e3` and `-0.0` come back as `3`, `1000`
//! and `0`, `18446744073709551615` as `18446744073709552000`, `1.50` as `1.5`. Every JSON
//! response is written with Go's float format too (`1e+21`, `0.000001`, `1e-7`).

use std::io;

use serde_json::{Number, Value};

/// Rewrites every number in `value` as the server stores it (see the module docs).
pub(crate) fn store(value: &mut Value) {
    match value {
        Value::Number(n) => {
            if !n.is_i64() {
                *n = stored(n);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(store),
        Value::Object(members) => members.values_mut().for_each(store),
        Value::Null | Value::Bool(_) | Value::String(_) => {}
    }
}

/// A number that is not an int64 (a float, or an unsigned integer past `i64::MAX`): as a
/// float64, written by Go and read back, an int64 when that text is one.
fn stored(n: &Number) -> Number {
    let Some(f) = n.as_f64() else {
        return n.clone();
    };
    let text = go_float(f);
    if let Ok(i) = text.parse::<i64>() {
        return Number::from(i);
    }
    Number::from_f64(f).unwrap_or_else(|| n.clone())
}

/// A float64 as Go's `encoding/json` writes it: the shortest text that reads back as `f`,
/// in plain decimal from 1e-6 up to 1e21 and with an exponent (`1e+21`, `1e-7`) outside.
pub(crate) fn go_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        // Rust writes `1e21` and `1e-7`; Go `1e+21` and (once encoding/json has trimmed the
        // exponent's leading zero) `1e-7`.
        let text = format!("{f:e}");
        return match text.split_once('e') {
            Some((mantissa, exponent)) if !exponent.starts_with('-') => {
                format!("{mantissa}e+{exponent}")
            }
            _ => text,
        };
    }
    // Rust's `Display` writes the shortest round-trip digits without an exponent, `3` for
    // 3.0 and `-0` for -0.0, as Go's 'f' format does.
    format!("{f}")
}

/// Writes floats as Go does.
struct GoFormatter;

impl serde_json::ser::Formatter for GoFormatter {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        writer.write_all(go_float(value).as_bytes())
    }
}

/// `value` as JSON, its floats written as Go writes them.
pub(crate) fn to_vec(value: &Value) -> Vec<u8> {
    let mut out = Vec::new();
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, GoFormatter);
    match serde::Serialize::serialize(value, &mut serializer) {
        Ok(()) => out,
        Err(_) => b"{}".to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_are_written_as_go_writes_them() {
        for (f, want) in [
            (3.0, "3"),
            (-0.0, "-0"),
            (0.0, "0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.2345678901234568e29, "1.2345678901234568e+29"),
            (18446744073709551615.0, "18446744073709552000"),
            (0.000001, "0.000001"),
            (1e-7, "1e-7"),
            (1.5e-10, "1.5e-10"),
            (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (-9223372036854775808.0, "-9223372036854776000"),
        ] {
            assert_eq!(go_float(f), want, "{f:?}");
        }
    }

    #[test]
    fn numbers_are_stored_as_the_server_stores_them() {
        let mut value: Value = serde_json::from_str(
            r#"{"a": 3.0, "b": 1e3, "c": -0.0, "d": 1.50, "e": 9007199254740993,
            "f": 18446744073709551615, "g": 99999999999999999999, "h": -9223372036854775808,
            "i": -9223372036854775809, "j": [2.0, {"k": 1e21}], "l": "3.0", "m": 0.5}"#,
        )
        .unwrap();
        store(&mut value);
        assert_eq!(
            String::from_utf8(to_vec(&value)).unwrap(),
            r#"{"a":3,"b":1000,"c":0,"d":1.5,"e":9007199254740993,"f":18446744073709552000,"g":100000000000000000000,"h":-9223372036854775808,"i":-9223372036854776000,"j":[2,{"k":1e+21}],"l":"3.0","m":0.5}"#
        );
        assert!(value["a"].is_i64() && value["c"].is_i64() && value["f"].is_f64());
        assert_eq!(value["j"], json!([2, {"k": 1e21}]));
    }
}
