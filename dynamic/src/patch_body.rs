//! [`PatchBody`]: the bytes of a dynamic patch, from whatever the caller holds.

/// Patch data: converted from bytes, a string or a JSON value.
///
/// ```
/// use kclient_dynamic::PatchBody;
///
/// let from_json: PatchBody = serde_json::json!({"spec": {"cidr": "10.0.0.0/24"}}).into();
/// let from_str: PatchBody = r#"{"spec":{"cidr":"10.0.0.0/24"}}"#.into();
/// assert_eq!(from_json.into_bytes(), from_str.into_bytes());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchBody(Vec<u8>);

impl PatchBody {
    /// The bytes sent.
    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl From<Vec<u8>> for PatchBody {
    fn from(v: Vec<u8>) -> Self {
        PatchBody(v)
    }
}

impl From<&[u8]> for PatchBody {
    fn from(v: &[u8]) -> Self {
        PatchBody(v.to_vec())
    }
}

impl From<&str> for PatchBody {
    fn from(v: &str) -> Self {
        PatchBody(v.as_bytes().to_vec())
    }
}

impl From<String> for PatchBody {
    fn from(v: String) -> Self {
        PatchBody(v.into_bytes())
    }
}

impl From<&serde_json::Value> for PatchBody {
    fn from(v: &serde_json::Value) -> Self {
        PatchBody(v.to_string().into_bytes())
    }
}

impl From<serde_json::Value> for PatchBody {
    fn from(v: serde_json::Value) -> Self {
        PatchBody(v.to_string().into_bytes())
    }
}
