//! [`ByteString`]: the bytes of a `format: byte` field (Secret `data`, ConfigMap
//! `binaryData`, CA bundles), base64-encoded on the wire.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Binary data, encoded as standard base64 in JSON.
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct ByteString(pub Box<[u8]>);

impl ByteString {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for ByteString {
    /// Shows only the length: the bytes are often secrets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ByteString({} bytes)", self.0.len())
    }
}

impl From<&[u8]> for ByteString {
    fn from(b: &[u8]) -> Self {
        ByteString(b.into())
    }
}

impl From<Vec<u8>> for ByteString {
    fn from(b: Vec<u8>) -> Self {
        ByteString(b.into_boxed_slice())
    }
}

impl From<&str> for ByteString {
    fn from(s: &str) -> Self {
        ByteString(s.as_bytes().into())
    }
}

impl serde::Serialize for ByteString {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(&self.0))
    }
}

impl<'de> serde::Deserialize<'de> for ByteString {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = ByteString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a base64 string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<ByteString, E> {
                STANDARD
                    .decode(v)
                    .map(ByteString::from)
                    .map_err(|e| E::custom(format_args!("invalid base64 data: {e}")))
            }
            /// `null` is Go's nil `[]byte`, which a required field Go leaves nil when empty
            /// (a CertificateSigningRequest's `spec.request`) is written as.
            fn visit_unit<E: serde::de::Error>(self) -> Result<ByteString, E> {
                Ok(ByteString::default())
            }
            fn visit_none<E: serde::de::Error>(self) -> Result<ByteString, E> {
                Ok(ByteString::default())
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_base64() {
        let b: ByteString = serde_json::from_str("\"aGVsbG8=\"").unwrap();
        assert_eq!(b.as_bytes(), b"hello");
        assert_eq!(serde_json::to_string(&b).unwrap(), "\"aGVsbG8=\"");
        assert!(serde_json::from_str::<ByteString>("\"%%%\"").is_err());
        assert_eq!(format!("{b:?}"), "ByteString(5 bytes)");
    }

    /// Go reads `null` into a `[]byte` as nil, and writes an empty required one so: it reads
    /// back as empty instead of failing the whole object.
    #[test]
    fn null_reads_as_empty() {
        let b: ByteString = serde_json::from_str("null").unwrap();
        assert!(b.as_bytes().is_empty());
        let b: ByteString = crate::decode_json(b"null").unwrap();
        assert!(b.as_bytes().is_empty());
        assert!(serde_json::from_str::<ByteString>("3").is_err());
    }
}
