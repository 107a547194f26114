//! The check the generated apply-configuration round trips (`apply_roundtrip_generated.rs`)
//! call.

use std::fmt::Debug;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// `value` without its `null` members: what Go writes for some unset fields, which an apply
/// configuration (sending only what is set) leaves out.
fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| (k, without_nulls(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// Decodes `sample` (every field set) as the configuration `A`, and checks that it encodes
/// back to the sample and to what the typed `T` decoded from the same sample encodes (both
/// without `null`s), and that decoding the encoding gives the same configuration.
pub(crate) fn check<T, A>(sample: &str)
where
    T: DeserializeOwned + Serialize,
    A: DeserializeOwned + Serialize + PartialEq + Debug,
{
    let expected = without_nulls(serde_json::from_str(sample).expect("sample is JSON"));
    let config: A = serde_json::from_str(sample)
        .unwrap_or_else(|e| panic!("decoding {}: {e}\n{sample}", std::any::type_name::<A>()));
    let encoded = serde_json::to_value(&config).expect("encoding the configuration");
    assert_eq!(
        encoded,
        expected,
        "{} did not encode back to its sample",
        std::any::type_name::<A>()
    );
    let typed: T = serde_json::from_str(sample).expect("decoding the typed object");
    let typed = without_nulls(serde_json::to_value(&typed).expect("encoding the typed object"));
    assert_eq!(
        encoded,
        typed,
        "{} and its typed object encode differently",
        std::any::type_name::<A>()
    );
    let again: A = serde_json::from_value(encoded).expect("decoding the encoding");
    assert_eq!(again, config, "decode(encode(x)) != x");
}
