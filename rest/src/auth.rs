//! Request authentication: bearer token (static or file, re-read every minute), basic auth,
//! exec plugins, and impersonation headers, client-go's `transport` round trippers.
//!
//! Precedence follows client-go's wrapper order: an `Authorization` header set on the request
//! wins; then a token file (falling back to the static token if the file cannot be read); then
//! a static token or basic auth (both together are refused); then the exec plugin. Basic auth
//! needs a non-empty username, as client-go's `HasBasicAuth` (`len(Username) != 0`): a password
//! without one is ignored, so a token or exec plugin beside it is used.
//!
//! The exec plugin runs only when the config has no other credential: as client-go's exec
//! `UpdateTransportConfig` returns early `if c.HasTokenAuth() || c.HasBasicAuth() ||
//! c.HasCertAuth()`, a token, a token file, a username, or a client certificate with its key
//! (file or data, both needed) means the plugin is never run. Its configuration is
//! still checked when the client is built, as client-go's `GetAuthenticator` checks it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use http::{HeaderName, HeaderValue};
use kclient_apimachinery::{Error, TransportErrorKind};
use parking_lot::Mutex;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use tokio::time::Instant;

use crate::config::{Config, ImpersonationConfig};
use crate::config_error::ConfigError;
use crate::exec::{ExecAuthenticator, ExecCredential};
use crate::secret::Secret;
use crate::tls::ClientCertSlot;

/// How often a token file is re-read (client-go's `cachingTokenSource` period).
const TOKEN_FILE_PERIOD: Duration = Duration::from_secs(60);

/// The credentials a client attaches to each request.
pub(crate) struct Authenticator {
    header: HeaderSource,
    exec: Option<Arc<ExecAuthenticator>>,
}

enum HeaderSource {
    None,
    Static(HeaderValue),
    TokenFile(TokenFile),
}

/// What a request was sent with, so a 401 can tell the exec plugin which credentials failed.
pub(crate) enum UsedCredentials {
    Other,
    Exec(Arc<ExecCredential>),
}

impl Authenticator {
    pub(crate) fn new(
        config: &Config,
        cert_slot: Arc<ClientCertSlot>,
    ) -> Result<Self, ConfigError> {
        let token = config
            .bearer_token
            .as_ref()
            .filter(|t| !t.expose().is_empty());
        // client-go's `HasBasicAuth`: a username, whatever the password.
        let basic = config.username.as_deref().is_some_and(|u| !u.is_empty());
        if basic && (token.is_some() || config.bearer_token_file.is_some()) {
            return Err(ConfigError::invalid(
                "username/password or bearer token may be set, but not both",
            ));
        }
        let header = if let Some(path) = &config.bearer_token_file {
            HeaderSource::TokenFile(TokenFile {
                path: path.clone(),
                fallback: token.cloned(),
                cache: Mutex::new(None),
            })
        } else if let Some(token) = token {
            HeaderSource::Static(bearer_header(token.expose())?)
        } else if basic {
            let user = config.username.as_deref().unwrap_or_default();
            let pass = config
                .password
                .as_ref()
                .map(|p| p.expose().as_str())
                .unwrap_or("");
            let encoded =
                base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"));
            let mut value = HeaderValue::from_str(&format!("Basic {encoded}")).map_err(|_| {
                ConfigError::invalid("username or password holds invalid characters")
            })?;
            value.set_sensitive(true);
            HeaderSource::Static(value)
        } else {
            HeaderSource::None
        };
        let exec = match &config.exec_provider {
            Some(exec) => {
                // Built (so checked) either way, used only without another credential.
                let authenticator = ExecAuthenticator::new(exec.clone(), config, cert_slot)?;
                let other = !matches!(header, HeaderSource::None) || has_cert_auth(config);
                if other {
                    tracing::debug!(
                        command = %exec.command,
                        "the config has a token, basic auth or a client certificate: the exec plugin is not used"
                    );
                }
                (!other).then(|| Arc::new(authenticator))
            }
            None => None,
        };
        Ok(Authenticator { header, exec })
    }

    /// The `Authorization` header for the next request, if any.
    pub(crate) async fn authorization(
        &self,
    ) -> Result<(Option<HeaderValue>, UsedCredentials), Error> {
        match &self.header {
            HeaderSource::Static(v) => return Ok((Some(v.clone()), UsedCredentials::Other)),
            HeaderSource::TokenFile(f) => return Ok((Some(f.header()?), UsedCredentials::Other)),
            HeaderSource::None => {}
        }
        if let Some(exec) = &self.exec {
            let creds = exec
                .credentials()
                .await
                .map_err(|e| Error::transport(TransportErrorKind::Other, e))?;
            let header = match creds.token() {
                Some(t) => Some(
                    bearer_header(t).map_err(|e| Error::transport(TransportErrorKind::Other, e))?,
                ),
                None => None,
            };
            return Ok((header, UsedCredentials::Exec(creds)));
        }
        Ok((None, UsedCredentials::Other))
    }

    /// Called after a 401: the exec plugin runs again next time unless its credentials were
    /// already rotated since `used` was handed out.
    pub(crate) fn unauthorized(&self, used: &UsedCredentials) {
        if let (Some(exec), UsedCredentials::Exec(creds)) = (&self.exec, used) {
            exec.invalidate(creds);
        }
    }
}

/// client-go's `Config.HasCertAuth`: a client certificate and its key, each as a file or data.
fn has_cert_auth(config: &Config) -> bool {
    let tls = &config.tls;
    let file = |f: &Option<PathBuf>| f.as_ref().is_some_and(|p| !p.as_os_str().is_empty());
    let cert = file(&tls.cert_file) || tls.cert_data.as_ref().is_some_and(|d| !d.is_empty());
    let key = file(&tls.key_file)
        || tls
            .key_data
            .as_ref()
            .is_some_and(|d| !d.expose().is_empty());
    cert && key
}

fn bearer_header(token: &str) -> Result<HeaderValue, ConfigError> {
    let mut value = HeaderValue::from_str(&format!("Bearer {}", token.trim()))
        .map_err(|_| ConfigError::invalid("bearer token holds invalid characters"))?;
    value.set_sensitive(true);
    Ok(value)
}

/// A token file re-read at most once per [`TOKEN_FILE_PERIOD`]; on a read error the last good
/// token (or the static token) is used, as in client-go.
struct TokenFile {
    path: PathBuf,
    fallback: Option<Secret<String>>,
    cache: Mutex<Option<(HeaderValue, Instant)>>,
}

impl TokenFile {
    fn header(&self) -> Result<HeaderValue, Error> {
        let mut cache = self.cache.lock();
        if let Some((value, at)) = &*cache
            && at.elapsed() < TOKEN_FILE_PERIOD
        {
            return Ok(value.clone());
        }
        let read = std::fs::read_to_string(&self.path)
            .map_err(|e| ConfigError::io(&self.path, e))
            .and_then(|t| {
                if t.trim().is_empty() {
                    Err(ConfigError::invalid(format!(
                        "token file {} is empty",
                        self.path.display()
                    )))
                } else {
                    bearer_header(&t)
                }
            });
        match read {
            Ok(value) => {
                *cache = Some((value.clone(), Instant::now()));
                Ok(value)
            }
            Err(e) => {
                if let Some((value, _)) = &*cache {
                    tracing::warn!(error = %e, "cannot re-read token file, using the previous token");
                    return Ok(value.clone());
                }
                if let Some(token) = &self.fallback {
                    return bearer_header(token.expose())
                        .map_err(|e| Error::transport(TransportErrorKind::Other, e));
                }
                Err(Error::transport(TransportErrorKind::Other, e))
            }
        }
    }
}

/// The impersonation headers for a config, client-go's `NewImpersonatingRoundTripper`. As
/// there, a request that sets its own non-empty `Impersonate-User` gets none of them (see
/// `Request::attempts`).
pub(crate) fn impersonation_headers(
    imp: &ImpersonationConfig,
) -> Result<Vec<(HeaderName, HeaderValue)>, ConfigError> {
    let mut out = Vec::new();
    let value = |v: &str| {
        HeaderValue::from_str(v).map_err(|_| {
            ConfigError::invalid(format!(
                "impersonation value {v:?} is not a valid header value"
            ))
        })
    };
    if let Some(user) = imp.user_name.as_deref().filter(|u| !u.is_empty()) {
        out.push((HeaderName::from_static("impersonate-user"), value(user)?));
    }
    if let Some(uid) = imp.uid.as_deref().filter(|u| !u.is_empty()) {
        out.push((HeaderName::from_static("impersonate-uid"), value(uid)?));
    }
    for group in &imp.groups {
        out.push((HeaderName::from_static("impersonate-group"), value(group)?));
    }
    for (key, values) in &imp.extra {
        let name = HeaderName::from_bytes(
            format!("impersonate-extra-{}", escape_extra_key(key)).as_bytes(),
        )
        .map_err(|_| ConfigError::invalid(format!("impersonation extra key {key:?} is invalid")))?;
        for v in values {
            out.push((name.clone(), value(v)?));
        }
    }
    Ok(out)
}

/// What a header name may not hold, percent-encoded in an impersonated extra's key as
/// client-go's `headerKeyEscape` does: everything but the legal token characters
/// (alphanumerics and ``!#$&'*+-.^_`|~``), and `%` itself.
const NOT_HEADER_TOKEN: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'!')
    .remove(b'#')
    .remove(b'$')
    .remove(b'&')
    .remove(b'\'')
    .remove(b'*')
    .remove(b'+')
    .remove(b'-')
    .remove(b'.')
    .remove(b'^')
    .remove(b'_')
    .remove(b'`')
    .remove(b'|')
    .remove(b'~');

/// Percent-encodes characters that may not appear in a header name (see
/// [`NOT_HEADER_TOKEN`]).
fn escape_extra_key(key: &str) -> String {
    utf8_percent_encode(key, NOT_HEADER_TOKEN).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubeconfig::ExecConfig;

    fn cfg() -> Config {
        Config::new("https://h")
    }

    #[tokio::test]
    async fn static_basic_and_conflicts() {
        let mut c = cfg();
        c.bearer_token = Some("abc".into());
        let a = Authenticator::new(&c, Default::default()).unwrap();
        let (h, _) = a.authorization().await.unwrap();
        assert_eq!(h.unwrap(), "Bearer abc");
        let mut c = cfg();
        c.username = Some("u".into());
        c.password = Some("p".into());
        let a = Authenticator::new(&c, Default::default()).unwrap();
        let (h, _) = a.authorization().await.unwrap();
        assert_eq!(h.unwrap(), "Basic dTpw");
        c.bearer_token = Some("abc".into());
        let err = Authenticator::new(&c, Default::default()).err().unwrap();
        assert!(err.to_string().contains("not both"));
        // client-go's `HasBasicAuth` is a non-empty username: a password without one (or
        // with an empty one) is no basic auth, and the token beside it is used.
        for username in [None, Some("")] {
            let mut c = cfg();
            c.username = username.map(String::from);
            c.password = Some("p".into());
            let a = Authenticator::new(&c, Default::default()).unwrap();
            let (h, _) = a.authorization().await.unwrap();
            assert!(h.is_none(), "username {username:?}");
            c.bearer_token = Some("abc".into());
            let a = Authenticator::new(&c, Default::default()).unwrap();
            let (h, _) = a.authorization().await.unwrap();
            assert_eq!(h.unwrap(), "Bearer abc", "username {username:?}");
        }
    }

    /// client-go's exec `UpdateTransportConfig` does nothing when the config has token, basic
    /// or certificate auth. The plugin here cannot run: where it is skipped there is no
    /// `Authorization` header and no error; where it is used, the request fails.
    #[tokio::test]
    async fn the_exec_plugin_is_not_used_with_another_credential() {
        /// What a case changes in the config.
        type Edit = fn(&mut Config);
        let with = |edit: Edit| {
            let mut c = cfg();
            let mut exec =
                ExecConfig::new("/nonexistent/plugin", "client.authentication.k8s.io/v1");
            exec.interactive_mode = Some("Never".into());
            c.exec_provider = Some(exec);
            edit(&mut c);
            c
        };
        let skipped: [(&str, Edit, Option<&str>); 5] = [
            (
                "cert and key files",
                |c| {
                    c.tls.cert_file = Some("/some/cert.pem".into());
                    c.tls.key_file = Some("/some/key.pem".into());
                },
                None,
            ),
            (
                "cert and key data",
                |c| {
                    c.tls.cert_data = Some(b"CERT".to_vec());
                    c.tls.key_data = Some(Secret::new(b"KEY".to_vec()));
                },
                None,
            ),
            (
                "cert file and key data",
                |c| {
                    c.tls.cert_file = Some("/some/cert.pem".into());
                    c.tls.key_data = Some(Secret::new(b"KEY".to_vec()));
                },
                None,
            ),
            (
                "token",
                |c| c.bearer_token = Some("abc".into()),
                Some("Bearer abc"),
            ),
            (
                "basic",
                |c| {
                    c.username = Some("u".into());
                    c.password = Some("p".into());
                },
                Some("Basic dTpw"),
            ),
        ];
        for (what, edit, want) in skipped {
            let a = Authenticator::new(&with(edit), Default::default()).unwrap();
            let (header, _) = a.authorization().await.unwrap();
            assert_eq!(header.as_ref().map(|h| h.to_str().unwrap()), want, "{what}");
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "from-file").unwrap();
        let mut c = with(|_| {});
        c.bearer_token_file = Some(path);
        let a = Authenticator::new(&c, Default::default()).unwrap();
        let (header, _) = a.authorization().await.unwrap();
        assert_eq!(header.unwrap(), "Bearer from-file");
        // A certificate without its key (or a key alone) is no cert auth: the plugin is used.
        let used: [(&str, Edit); 3] = [
            ("nothing", |_| {}),
            ("cert only", |c| {
                c.tls.cert_file = Some("/some/cert.pem".into())
            }),
            ("key only", |c| {
                c.tls.key_data = Some(Secret::new(b"KEY".to_vec()))
            }),
        ];
        for (what, edit) in used {
            let a = Authenticator::new(&with(edit), Default::default()).unwrap();
            let err = a.authorization().await.err();
            assert!(
                err.is_some_and(|e| e.is_transport()),
                "{what}: the plugin was not used"
            );
        }
        // The plugin's configuration is still checked, as client-go's GetAuthenticator does.
        let mut c = with(|c| c.tls.cert_data = Some(b"CERT".to_vec()));
        c.tls.key_data = Some(Secret::new(b"KEY".to_vec()));
        c.exec_provider.as_mut().unwrap().interactive_mode = None;
        let err = Authenticator::new(&c, Default::default()).err().unwrap();
        assert!(err.to_string().contains("interactiveMode"), "{err}");
    }

    #[tokio::test(start_paused = true)]
    async fn token_file_is_reread_every_minute_and_survives_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "one\n").unwrap();
        let mut c = cfg();
        c.bearer_token_file = Some(path.clone());
        c.bearer_token = Some("static".into());
        let a = Authenticator::new(&c, Default::default()).unwrap();
        let get = || async { a.authorization().await.unwrap().0.unwrap() };
        assert_eq!(get().await, "Bearer one");
        std::fs::write(&path, "two").unwrap();
        tokio::time::advance(Duration::from_secs(30)).await;
        assert_eq!(get().await, "Bearer one", "cached for a minute");
        tokio::time::advance(Duration::from_secs(31)).await;
        assert_eq!(get().await, "Bearer two");
        std::fs::remove_file(&path).unwrap();
        tokio::time::advance(Duration::from_secs(61)).await;
        assert_eq!(get().await, "Bearer two", "last good token on error");
        // A fresh authenticator with no good read falls back to the static token.
        let a = Authenticator::new(&c, Default::default()).unwrap();
        assert_eq!(a.authorization().await.unwrap().0.unwrap(), "Bearer static");
        c.bearer_token = None;
        let a = Authenticator::new(&c, Default::default()).unwrap();
        let err = a.authorization().await.err().unwrap();
        assert!(err.is_transport());
    }

    #[test]
    fn impersonation() {
        let mut imp = ImpersonationConfig {
            user_name: Some("jane".into()),
            uid: Some("42".into()),
            groups: vec!["a".into(), "b".into()],
            ..Default::default()
        };
        imp.extra
            .insert("scopes/x y".into(), vec!["s1".into(), "s2".into()]);
        let h = impersonation_headers(&imp).unwrap();
        let pairs: Vec<(String, String)> = h
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_str().unwrap().to_string()))
            .collect();
        let expect = [
            ("impersonate-user", "jane"),
            ("impersonate-uid", "42"),
            ("impersonate-group", "a"),
            ("impersonate-group", "b"),
            ("impersonate-extra-scopes%2fx%20y", "s1"),
            ("impersonate-extra-scopes%2fx%20y", "s2"),
        ];
        let expect: Vec<(String, String)> = expect
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(pairs, expect);
    }
}
