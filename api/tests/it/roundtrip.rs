//! The round-trip check the generated tests (`roundtrip_generated.rs`) call.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Decodes `sample`, encodes it, and checks that the encoding equals the sample (every field
/// mapped both ways, nothing invented) and that decoding the encoding gives the same value.
/// Decoding is kclient's (`decode_json`, as the clients decode), checked against `serde_json`'s.
/// Decodes `sample` (JSON), encodes it as protobuf, and checks that the protobuf decodes to
/// the same value and re-encodes to the same bytes.
#[cfg(feature = "protobuf")]
pub(crate) fn check_protobuf<T>(sample: &str)
where
    T: DeserializeOwned + PartialEq + Debug + kclient_apimachinery::protobuf::Message,
{
    let decoded: T = kclient_apimachinery::decode_json(sample.as_bytes()).expect("decoding JSON");
    let bytes = decoded.encode_protobuf();
    let again = T::decode_protobuf(&bytes).unwrap_or_else(|e| {
        panic!(
            "decoding the protobuf of {}: {e}",
            std::any::type_name::<T>()
        )
    });
    if again != decoded {
        // Debug output of a Pod is long: show where the two first differ.
        let (a, b) = (format!("{decoded:?}"), format!("{again:?}"));
        let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
        let from = at.saturating_sub(300);
        panic!(
            "{}: protobuf decode(encode(x)) != x; from byte {from} of their Debug output:\n  sent {}\n  got  {}",
            std::any::type_name::<T>(),
            a.get(from..(at + 120).min(a.len())).unwrap_or(""),
            b.get(from..(at + 120).min(b.len())).unwrap_or(""),
        );
    }
    assert_eq!(
        again.encode_protobuf(),
        bytes,
        "protobuf re-encoding differs"
    );
}

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
