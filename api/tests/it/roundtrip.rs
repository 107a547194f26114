//! The round-trip check the generated tests (`roundtrip_generated.rs`) call.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes `sample`, encodes it, and checks that the encoding equals the sample (every field
/// mapped both ways, nothing invented) and that decoding the encoding gives the same value.
pub(crate) fn check<T: DeserializeOwned + Serialize + PartialEq + Debug>(sample: &str) {
    let expected: serde_json::Value = serde_json::from_str(sample).expect("sample is JSON");
    let decoded: T = serde_json::from_str(sample)
        .unwrap_or_else(|e| panic!("decoding {}: {e}\n{sample}", std::any::type_name::<T>()));
    let encoded = serde_json::to_string(&decoded).expect("encoding");
    let reencoded: serde_json::Value = serde_json::from_str(&encoded).expect("encoding is JSON");
    assert_eq!(
        reencoded,
        expected,
        "{} did not encode back to its sample",
        std::any::type_name::<T>()
    );
    let again: T = serde_json::from_str(&encoded).expect("decoding the encoding");
    assert_eq!(again, decoded, "decode(encode(x)) != x");
}
