//! Encoding `number` (float64) fields as Go's encoding/json does: a whole number is written
//! without a fraction (`0`, not serde_json's `0.0`), so an object read from the API server
//! encodes back to the same JSON (`minimum: 0` in a CRD schema stays `0`).

/// Serializes an optional float as Go writes it; for `#[serde(serialize_with)]` in generated
/// code.
pub fn serialize_option_f64<S: serde::Serializer>(
    value: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => serialize_f64(v, serializer),
        None => serializer.serialize_none(),
    }
}

/// Serializes a float as Go writes it: whole numbers below 1e18 as integers. NaN and the
/// infinities are an error, as in Go (`json: unsupported value: NaN`), rather than the `null`
/// serde_json writes for them, which the server would read as an unset field.
pub fn serialize_f64<S: serde::Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    let v = *value;
    if !v.is_finite() {
        return Err(serde::ser::Error::custom(format_args!(
            "json: unsupported value: {v}"
        )));
    }
    if v.fract() == 0.0 && v.abs() < 1e18 {
        serializer.serialize_i64(v as i64)
    } else {
        serializer.serialize_f64(v)
    }
}

#[cfg(test)]
mod tests {
    #[derive(serde::Serialize)]
    struct T {
        #[serde(serialize_with = "super::serialize_option_f64")]
        v: Option<f64>,
    }

    #[test]
    fn whole_numbers_have_no_fraction() {
        let enc = |v| serde_json::to_string(&T { v }).unwrap();
        assert_eq!(enc(Some(0.0)), r#"{"v":0}"#);
        assert_eq!(enc(Some(-3.0)), r#"{"v":-3}"#);
        assert_eq!(enc(Some(1.5)), r#"{"v":1.5}"#);
        assert_eq!(enc(None), r#"{"v":null}"#);
    }

    #[test]
    fn nan_and_infinities_are_refused() {
        // Go's encoder fails with "json: unsupported value: NaN"; serde_json would write
        // `null`, and the server would read the field as unset.
        for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = serde_json::to_string(&T { v: Some(v) }).unwrap_err();
            assert!(err.to_string().contains("unsupported value"), "{v}: {err}");
        }
    }
}
