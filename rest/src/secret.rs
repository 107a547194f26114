//! What never prints: `Secret<T>`, a value (token, password, private key) that never shows in
//! `Debug` output, and the redaction of secrets that live inside plain values.
//!
//! Kubeconfig secrets are carried in this newtype from the moment they are parsed, so that a
//! `{:?}` of a [`Config`](crate::Config) or a kubeconfig can be logged safely. Two kinds of
//! secret sit in plain strings instead, and their owners' `Debug` redacts them as client-go
//! does: an exec plugin's arguments and environment values (client-go's `ExecConfig.String`
//! prints `--- REDACTED ---` for both; `--token=...` is a common argument), and the password
//! of a server or proxy URL (`http://user:xxxxx@host:3128`, as Go's `url.URL.Redacted`).

use std::borrow::Cow;
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

/// Prints as `<redacted>`: stands for a value left out of a `Debug` output.
#[derive(Clone, Copy)]
pub(crate) struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Prints as a list of `n` [`Redacted`] entries: a list whose length shows, not its items.
pub(crate) struct RedactedList(pub(crate) usize);

impl fmt::Debug for RedactedList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(std::iter::repeat_n(Redacted, self.0))
            .finish()
    }
}

/// `url` with the password of its user info replaced by `xxxxx`, as Go's `URL.Redacted`
/// does. Works on text that does not parse as a URL too: whatever stands between the scheme
/// (if any) and the last `@` of the authority counts as user info.
pub(crate) fn redact_url_password(url: &str) -> Cow<'_, str> {
    let authority_start = url.find("://").map_or(0, |i| i + 3);
    let rest = &url[authority_start..];
    let authority_len = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_len].rfind('@') else {
        return Cow::Borrowed(url);
    };
    let Some(colon) = rest[..at].find(':') else {
        return Cow::Borrowed(url);
    };
    let password_start = authority_start + colon + 1;
    let password_end = authority_start + at;
    Cow::Owned(format!(
        "{}xxxxx{}",
        &url[..password_start],
        &url[password_end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_url_passwords_are_redacted() {
        let table = [
            ("http://u:PASSWORD@host:3128", "http://u:xxxxx@host:3128"),
            (
                "http://u:PASS@WORD@host:3128/p@th",
                "http://u:xxxxx@host:3128/p@th",
            ),
            (
                "socks5://u:PASSWORD@[::1]:1080",
                "socks5://u:xxxxx@[::1]:1080",
            ),
            ("u:PASSWORD@host:3128", "u:xxxxx@host:3128"),
            ("http://u@host:3128", "http://u@host:3128"),
            ("http://host:3128/a:b@c", "http://host:3128/a:b@c"),
            ("http://host:3128", "http://host:3128"),
            ("", ""),
        ];
        for (url, want) in table {
            assert_eq!(redact_url_password(url), want, "{url}");
        }
    }

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
