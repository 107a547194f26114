//! The round-trip check the generated tests (`roundtrip_generated.rs`) call.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes `sample`, encodes it, and checks that the encoding equals the sample (every field
/// mapped both ways, nothing invented) and that decoding the encoding gives the same value.
/// Decoding is kclient's (`decode_json`, as the clients decode), checked against `serde_json`'s.
pub(crate) fn check<T: DeserializeOwned + Serialize + PartialEq + Debug>(sample: &str) {
    let expected: serde_json::Value = serde_json::from_str(sample).expect("sample is JSON");
    let decoded: T = kclient_apimachinery::decode_json(sample.as_bytes())
        .unwrap_or_else(|e| panic!("decoding {}: {e}\n{sample}", std::any::type_name::<T>()));
    let by_serde_json: T = serde_json::from_str(sample).expect("decoding by serde_json");
    assert_eq!(decoded, by_serde_json, "the decoders differ");
    let encoded = serde_json::to_string(&decoded).expect("encoding");
    let reencoded: serde_json::Value = serde_json::from_str(&encoded).expect("encoding is JSON");
    assert_eq!(
        reencoded,
        expected,
        "{} did not encode back to its sample",
        std::any::type_name::<T>()
    );
    let again: T =
        kclient_apimachinery::decode_json(encoded.as_bytes()).expect("decoding the encoding");
    assert_eq!(again, decoded, "decode(encode(x)) != x");
}
