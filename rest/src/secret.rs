//! `Secret<T>`: a value (token, password, private key) that never shows in `Debug` output.
//!
//! Kubeconfig secrets are carried in this newtype from the moment they are parsed, so that a
//! `{:?}` of a [`Config`](crate::Config) or a kubeconfig can be logged safely.

use std::fmt;

use serde::{Deserialize, Deserializer};

/// A secret value whose `Debug` output is `<redacted>`.
///
/// Read it with [`Secret::expose`] only where it is sent (a header, a TLS handshake).
///
/// ```
/// use kclient_rest::Secret;
/// let token = Secret::new("s3cr3t".to_string());
/// assert_eq!(format!("{token:?}"), "<redacted>");
/// assert_eq!(token.expose(), "s3cr3t");
/// ```
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps a secret value.
    pub fn new(value: T) -> Self {
        Secret(value)
    }

    /// The secret itself.
    pub fn expose(&self) -> &T {
        &self.0
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Secret(value)
    }
}

impl From<&str> for Secret<String> {
    fn from(value: &str) -> Self {
        Secret(value.to_string())
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Secret<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Secret)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_is_redacted() {
        let s = Secret::new(b"-----BEGIN PRIVATE KEY-----".to_vec());
        assert_eq!(format!("{s:?}"), "<redacted>");
        assert_eq!(
            format!("{:?}", Some(Secret::<String>::from("tok"))),
            "Some(<redacted>)"
        );
    }
}
