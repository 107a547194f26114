//! TLS for the transport: a rustls `ClientConfig` built from a
//! [`TlsClientConfig`](crate::TlsClientConfig).
//!
//! - Crypto provider, chosen by Cargo feature as reqwest and kube-rs let you choose it:
//!   `rustls-ring` (ring, the default) or `rustls-aws-lc` (aws-lc-rs; it wins when both are on).
//!   With neither, the process's default provider is used
//!   (`rustls::crypto::CryptoProvider::install_default`), and building a client without one is
//!   an error that says which feature to turn on.
//! - Trust: the CA data or file (PEM, any number of certificates) when given, otherwise the
//!   system's roots through `rustls-native-certs` (the same store Go's `crypto/x509` reads on
//!   Linux, so kclient trusts what kubectl trusts).
//! - `tls-server-name`: the certificate is verified against that name instead of the URL host,
//!   and the name is the SNI of the handshake (the transport puts it in the URL reqwest is
//!   given; an IP address sends no SNI, as in Go).
//! - `insecure-skip-tls-verify`: only when the config says so; a warning is logged and the
//!   handshake signatures are still checked. A CA together with insecure is refused, as in
//!   client-go.
//! - Client certificates: PEM certificate chain and PEM key (PKCS#1 RSA, SEC1 EC or PKCS#8),
//!   held in a [`ClientCertSlot`] that an exec plugin can update later, and that reads a pair
//!   given as files alone again at most once a minute, as client-go reloads such files (new
//!   connections use the new pair; the transport drops the old connections and then resumes
//!   no TLS session, which would carry the old pair's identity).
//! - ALPN offers `h2` then `http/1.1`, so the API server's HTTP/2 is used and watches share a
//!   connection.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::config::TlsClientConfig;
use crate::config_error::{ConfigError, Kind};

/// The crypto provider of every TLS config (see the module docs for how it is chosen).
#[cfg(feature = "rustls-aws-lc")]
pub(crate) fn provider() -> Result<Arc<CryptoProvider>, ConfigError> {
    Ok(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
}

/// The crypto provider of every TLS config (see the module docs for how it is chosen).
#[cfg(all(feature = "rustls-ring", not(feature = "rustls-aws-lc")))]
pub(crate) fn provider() -> Result<Arc<CryptoProvider>, ConfigError> {
    Ok(Arc::new(rustls::crypto::ring::default_provider()))
}

/// The crypto provider of every TLS config (see the module docs for how it is chosen).
#[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc")))]
pub(crate) fn provider() -> Result<Arc<CryptoProvider>, ConfigError> {
    CryptoProvider::get_default().cloned().ok_or_else(|| {
        ConfigError::invalid(
            "no TLS crypto provider: turn on kclient-rest's (or kclient's) `rustls-ring` or \
             `rustls-aws-lc` feature, or install one with rustls's CryptoProvider::install_default",
        )
    })
}

/// Reads `data`, else the file at `path`.
fn data_or_file(
    data: Option<&[u8]>,
    path: Option<&Path>,
    what: &str,
) -> Result<Option<Vec<u8>>, ConfigError> {
    if let Some(d) = data.filter(|d| !d.is_empty()) {
        return Ok(Some(d.to_vec()));
    }
    match path {
        Some(p) => std::fs::read(p)
            .map(Some)
            .map_err(|e| ConfigError::io(p, e).context_what(what)),
        None => Ok(None),
    }
}

impl ConfigError {
    fn context_what(mut self, what: &str) -> Self {
        self.prefix(what);
        self
    }
}

/// What is wrong with a PEM text, without quoting any of it. The PEM parser's own errors carry
/// the line they stopped at (as a list of byte values), and in a private key whose line
/// breaks were lost that line is the whole key, so they are never kept as a source.
fn pem_problem(e: &rustls::pki_types::pem::Error) -> &'static str {
    use rustls::pki_types::pem::Error as E;
    match e {
        E::MissingSectionEnd { .. } => "a section has no END line (were its line breaks lost?)",
        E::IllegalSectionStart { .. } => "a BEGIN line is malformed",
        E::Base64Decode(_) => "a section's body is not valid base64",
        E::NoItemsFound => "no section of the expected type",
        E::SectionTooLarge => "a section is larger than 256 MB",
        _ => "unreadable PEM",
    }
}

/// Parses every certificate in a PEM bundle; at least one is required.
pub(crate) fn parse_certs(
    pem: &[u8],
    what: &str,
) -> Result<Vec<CertificateDer<'static>>, ConfigError> {
    let mut certs = Vec::new();
    for cert in CertificateDer::pem_slice_iter(pem) {
        certs.push(cert.map_err(|e| {
            ConfigError::new(
                Kind::Parse,
                format!("{what}: invalid PEM certificate: {}", pem_problem(&e)),
            )
        })?);
    }
    if certs.is_empty() {
        return Err(ConfigError::new(
            Kind::Parse,
            format!("{what}: no PEM certificate found"),
        ));
    }
    Ok(certs)
}

/// Builds a signing pair from PEM certificate and key, checking that they match.
pub(crate) fn certified_key(
    cert_pem: &[u8],
    key_pem: &[u8],
) -> Result<Arc<CertifiedKey>, ConfigError> {
    let certs = parse_certs(cert_pem, "client certificate")?;
    // The PEM parser's error is not kept: it can quote the key (see `pem_problem`).
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| {
        ConfigError::new(
            Kind::Parse,
            format!(
                "client key: no usable PEM private key (RSA, EC or PKCS#8): {}",
                pem_problem(&e)
            ),
        )
    })?;
    let provider = provider()?;
    let key = CertifiedKey::from_der(certs, key, &provider).map_err(|e| {
        ConfigError::invalid("client certificate and key cannot be used together").with_source(e)
    })?;
    Ok(Arc::new(key))
}

/// How often client certificate and key files are read again (at most; on requests).
/// client-go reads them at each new handshake and every five minutes closes the connections
/// made with a pair that changed.
pub(crate) const CERT_FILE_PERIOD: Duration = Duration::from_secs(60);

/// The client certificate presented during handshakes; empty, static, read again from its
/// files, or updated by an exec plugin.
///
/// Its generation counts changes of the certificate, so the transport can drop connections
/// made with an old one (client-go closes connections on rotation).
#[derive(Default)]
pub(crate) struct ClientCertSlot {
    current: RwLock<Option<Arc<CertifiedKey>>>,
    generation: AtomicU64,
    /// The files the pair came from, when both certificate and key are files: read again
    /// when they are due (client-go's `ReloadTLSFiles`).
    files: Option<CertFiles>,
}

/// A client certificate and key read from files, and when they were last read.
struct CertFiles {
    cert: PathBuf,
    key: PathBuf,
    period: Mutex<Duration>,
    last_read: Mutex<Instant>,
}

impl ClientCertSlot {
    pub(crate) fn set(&self, key: Arc<CertifiedKey>) {
        let mut current = self.current.write();
        let changed = current.as_ref().is_none_or(|old| old.cert != key.cert);
        *current = Some(key);
        if changed {
            self.generation.fetch_add(1, Ordering::Release);
        }
    }

    /// Presents no certificate from now on (an exec plugin's credentials no longer have one).
    pub(crate) fn clear(&self) {
        if self.current.write().take().is_some() {
            self.generation.fetch_add(1, Ordering::Release);
        }
    }

    /// How many times the certificate changed.
    pub(crate) fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub(crate) fn is_set(&self) -> bool {
        self.current.read().is_some()
    }

    /// True when the pair comes from files that are read again.
    pub(crate) fn reloads_files(&self) -> bool {
        self.files.is_some()
    }

    /// Reads the certificate and key files again when [`CERT_FILE_PERIOD`] has passed since
    /// they were last read, and uses the pair if it changed (the generation then moves on).
    /// A pair that cannot be read or does not match (a renewal half written) is logged and
    /// the current one kept.
    pub(crate) fn reload_files_if_due(&self) {
        let Some(files) = &self.files else {
            return;
        };
        {
            let mut last_read = files.last_read.lock();
            if last_read.elapsed() < *files.period.lock() {
                return;
            }
            *last_read = Instant::now();
        }
        let pair = std::fs::read(&files.cert)
            .map_err(|e| ConfigError::io(&files.cert, e))
            .and_then(|cert| {
                let key = std::fs::read(&files.key).map_err(|e| ConfigError::io(&files.key, e))?;
                certified_key(&cert, &key)
            });
        match pair {
            Ok(pair) => self.set(pair),
            Err(e) => tracing::warn!(
                error = %e,
                "cannot read the client certificate files again; the current pair stays in use"
            ),
        }
    }

    #[cfg(test)]
    pub(crate) fn set_file_check_period(&self, period: Duration) {
        if let Some(files) = &self.files {
            *files.period.lock() = period;
        }
    }
}

impl fmt::Debug for ClientCertSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientCertSlot")
            .field("set", &self.is_set())
            .finish()
    }
}

impl ResolvesClientCert for ClientCertSlot {
    fn resolve(
        &self,
        _hints: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        let key = self.current.read().clone()?;
        key.key.choose_scheme(sigschemes).is_some().then_some(key)
    }

    fn has_certs(&self) -> bool {
        self.is_set()
    }
}

/// Verifies against a fixed name (`tls-server-name`) instead of the URL's host.
#[derive(Debug)]
struct FixedNameVerifier {
    inner: Arc<WebPkiServerVerifier>,
    name: ServerName<'static>,
}

impl ServerCertVerifier for FixedNameVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.inner
            .verify_server_cert(end_entity, intermediates, &self.name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// Accepts any certificate (`insecure-skip-tls-verify`) but still checks handshake signatures.
#[derive(Debug)]
struct InsecureVerifier {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for InsecureVerifier {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The rustls config for a client, and the slot holding its client certificate.
pub(crate) fn build_tls(
    tls: &TlsClientConfig,
) -> Result<(rustls::ClientConfig, Arc<ClientCertSlot>), ConfigError> {
    let provider = provider()?;
    let ca = data_or_file(
        tls.ca_data.as_deref(),
        tls.ca_file.as_deref(),
        "certificate-authority",
    )?;
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::invalid("tls setup").with_source(e))?;
    let builder = if tls.insecure {
        if ca.is_some() {
            return Err(ConfigError::invalid(
                "specifying a root certificates file with the insecure flag is not allowed",
            ));
        }
        tracing::warn!("insecure-skip-tls-verify is set: the server's certificate is not verified");
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(InsecureVerifier {
                provider: provider.clone(),
            }))
    } else {
        let mut roots = RootCertStore::empty();
        match &ca {
            Some(pem) => {
                for cert in parse_certs(pem, "certificate-authority")? {
                    roots.add(cert).map_err(|e| {
                        ConfigError::new(
                            Kind::Parse,
                            "certificate-authority: unusable CA certificate",
                        )
                        .with_source(e)
                    })?;
                }
            }
            None => {
                let native = rustls_native_certs::load_native_certs();
                for e in &native.errors {
                    tracing::debug!(error = %e, "skipping unreadable system certificate");
                }
                let (added, ignored) = roots.add_parsable_certificates(native.certs);
                tracing::debug!(added, ignored, "loaded system trust roots");
                if roots.is_empty() {
                    return Err(ConfigError::invalid(
                        "no certificate-authority given and no system trust roots found",
                    ));
                }
            }
        }
        let verifier =
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                .build()
                .map_err(|e| ConfigError::invalid("tls verifier setup").with_source(e))?;
        match tls.server_name.as_deref().filter(|n| !n.is_empty()) {
            Some(name) => {
                let name = ServerName::try_from(name.to_string()).map_err(|e| {
                    ConfigError::invalid(format!("invalid tls-server-name {name:?}")).with_source(e)
                })?;
                builder
                    .dangerous()
                    .with_custom_certificate_verifier(Arc::new(FixedNameVerifier {
                        inner: verifier,
                        name,
                    }))
            }
            None => builder.with_webpki_verifier(verifier),
        }
    };
    let mut slot = ClientCertSlot::default();
    let cert = data_or_file(
        tls.cert_data.as_deref(),
        tls.cert_file.as_deref(),
        "client-certificate",
    )?;
    let key = data_or_file(
        tls.key_data.as_ref().map(|k| k.expose().as_slice()),
        tls.key_file.as_deref(),
        "client-key",
    )?;
    match (cert, key) {
        (Some(cert), Some(key)) => slot.set(certified_key(&cert, &key)?),
        (None, None) => {}
        _ => {
            return Err(ConfigError::invalid(
                "client certificate and key must be given together",
            ));
        }
    }
    // As client-go's `loadTLSFiles`: a pair read from files alone is read again later.
    let no_data = |d: Option<&[u8]>| d.is_none_or(<[u8]>::is_empty);
    if let (Some(cert), Some(key)) = (&tls.cert_file, &tls.key_file)
        && no_data(tls.cert_data.as_deref())
        && no_data(tls.key_data.as_ref().map(|k| k.expose().as_slice()))
        && slot.is_set()
    {
        slot.files = Some(CertFiles {
            cert: cert.clone(),
            key: key.clone(),
            period: Mutex::new(CERT_FILE_PERIOD),
            last_read: Mutex::new(Instant::now()),
        });
    }
    let slot = Arc::new(slot);
    let mut config = builder.with_client_cert_resolver(slot.clone());
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    // A `tls-server-name` that is an IP address: Go sends no SNI (an IP address is never one),
    // while rustls would send the URL's host. A DNS name is sent as SNI by the transport.
    if tls
        .server_name
        .as_deref()
        .is_some_and(|n| n.parse::<std::net::IpAddr>().is_ok())
    {
        config.enable_sni = false;
    }
    Ok((config, slot))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The names of a provider's cipher suites, to tell providers apart.
    fn suites(provider: &CryptoProvider) -> Vec<String> {
        provider
            .cipher_suites
            .iter()
            .map(|s| format!("{:?}", s.suite()))
            .collect()
    }

    #[cfg(feature = "rustls-aws-lc")]
    #[test]
    fn aws_lc_is_the_provider_when_its_feature_is_on() {
        let ours = provider().expect("a provider");
        assert_eq!(
            suites(&ours),
            suites(&rustls::crypto::aws_lc_rs::default_provider())
        );
        // aws-lc-rs offers post-quantum key exchange; ring does not have it.
        assert!(
            ours.kx_groups
                .iter()
                .any(|g| format!("{:?}", g.name()).contains("MLKEM")),
            "{:?}",
            ours.kx_groups.iter().map(|g| g.name()).collect::<Vec<_>>()
        );
    }

    #[cfg(all(feature = "rustls-ring", not(feature = "rustls-aws-lc")))]
    #[test]
    fn ring_is_the_default_provider() {
        let ours = provider().expect("a provider");
        assert_eq!(
            suites(&ours),
            suites(&rustls::crypto::ring::default_provider())
        );
        assert!(
            ours.kx_groups
                .iter()
                .all(|g| !format!("{:?}", g.name()).contains("MLKEM")),
            "ring has no post-quantum key exchange"
        );
    }

    #[cfg(not(any(feature = "rustls-ring", feature = "rustls-aws-lc")))]
    #[test]
    fn without_a_provider_a_client_is_refused_with_the_feature_to_turn_on() {
        let err = build_tls(&TlsClientConfig::default()).unwrap_err();
        assert!(err.to_string().contains("rustls-ring"), "{err}");
        assert!(err.to_string().contains("install_default"), "{err}");
    }

    /// A self-signed EC certificate and its PKCS#8 key, for parsing tests only.
    pub(crate) const TEST_CERT: &str = include_str!("testdata/cert.pem");
    pub(crate) const TEST_KEY: &str = include_str!("testdata/key.pem");

    #[test]
    fn ca_and_client_cert_parse() {
        let tls = TlsClientConfig {
            ca_data: Some(format!("{TEST_CERT}{TEST_CERT}").into_bytes()),
            cert_data: Some(TEST_CERT.as_bytes().to_vec()),
            key_data: Some(TEST_KEY.as_bytes().to_vec().into()),
            ..Default::default()
        };
        let (config, slot) = build_tls(&tls).unwrap();
        assert!(slot.is_set());
        let generation = slot.generation();
        slot.set(certified_key(TEST_CERT.as_bytes(), TEST_KEY.as_bytes()).unwrap());
        assert_eq!(
            slot.generation(),
            generation,
            "the same certificate is no rotation"
        );
        assert_eq!(config.alpn_protocols[0], b"h2");
    }

    #[test]
    fn key_formats_pkcs8_pkcs1_sec1() {
        let pairs: [(&[u8], &[u8]); 4] = [
            (TEST_CERT.as_bytes(), TEST_KEY.as_bytes()),
            (
                TEST_CERT.as_bytes(),
                include_bytes!("testdata/key-sec1.pem"),
            ),
            (
                include_bytes!("testdata/cert2.pem"),
                include_bytes!("testdata/key2.pem"),
            ),
            (
                include_bytes!("testdata/cert2.pem"),
                include_bytes!("testdata/key2-pkcs1.pem"),
            ),
        ];
        for (cert, key) in pairs {
            certified_key(cert, key).unwrap();
        }
        // A key that belongs to another certificate is refused.
        let err = certified_key(TEST_CERT.as_bytes(), include_bytes!("testdata/key2.pem"))
            .err()
            .unwrap();
        assert!(err.to_string().contains("cannot be used together"), "{err}");
    }

    #[test]
    fn bad_material_is_an_error_not_a_panic() {
        let cases: Vec<(TlsClientConfig, &str)> = vec![
            (
                TlsClientConfig {
                    ca_data: Some(b"not pem".to_vec()),
                    ..Default::default()
                },
                "certificate-authority",
            ),
            (
                TlsClientConfig {
                    ca_data: Some(
                        b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n".to_vec(),
                    ),
                    ..Default::default()
                },
                "certificate-authority",
            ),
            (
                TlsClientConfig {
                    ca_data: Some(TEST_CERT.as_bytes().to_vec()),
                    cert_data: Some(TEST_CERT.as_bytes().to_vec()),
                    ..Default::default()
                },
                "together",
            ),
            (
                TlsClientConfig {
                    ca_data: Some(TEST_CERT.as_bytes().to_vec()),
                    cert_data: Some(TEST_CERT.as_bytes().to_vec()),
                    key_data: Some(b"garbage".to_vec().into()),
                    ..Default::default()
                },
                "client key",
            ),
            (
                TlsClientConfig {
                    ca_file: Some("/nonexistent/ca.crt".into()),
                    ..Default::default()
                },
                "/nonexistent/ca.crt",
            ),
            (
                TlsClientConfig {
                    insecure: true,
                    ca_data: Some(TEST_CERT.as_bytes().to_vec()),
                    ..Default::default()
                },
                "insecure",
            ),
        ];
        for (tls, needle) in cases {
            let err = build_tls(&tls).unwrap_err();
            assert!(err.to_string().contains(needle), "{err} / {needle}");
        }
    }

    /// A private key that does not parse is reported without any of its text, in `Display`,
    /// `Debug` and the `source()` chain: the PEM parser's errors quote the line they stopped
    /// at, and a key whose line breaks were lost (pasted as one line) is all on that line.
    #[test]
    fn a_malformed_private_key_is_not_echoed() {
        const KEY_MATERIAL: &str = "kclientSecretKeyMaterial4d9eMIIEvQIBADANBgkqhkiG9w0";
        let keys = [
            // One line: the BEGIN line holds the whole key and no END line follows.
            format!("-----BEGIN PRIVATE KEY----- {KEY_MATERIAL} -----END PRIVATE KEY-----\n"),
            // A BEGIN line with the key run onto it.
            format!("-----BEGIN PRIVATE KEY-----{KEY_MATERIAL}\n-----END PRIVATE KEY-----\n"),
        ];
        for key in keys {
            let tls = TlsClientConfig {
                cert_data: Some(TEST_CERT.as_bytes().to_vec()),
                key_data: Some(key.clone().into_bytes().into()),
                ..Default::default()
            };
            let err = build_tls(&tls).unwrap_err();
            let mut shown = format!("{err} {err:?}");
            let mut source = std::error::Error::source(&err);
            while let Some(e) = source {
                shown.push_str(&format!(" / {e} {e:?}"));
                source = e.source();
            }
            assert!(err.is_parse(), "{shown}");
            assert!(shown.contains("client key"), "{shown}");
            // The parser's errors print the line as a list of byte values.
            let as_bytes = format!("{:?}", KEY_MATERIAL.as_bytes());
            let as_bytes = as_bytes.trim_start_matches('[').trim_end_matches(']');
            for echoed in [KEY_MATERIAL, as_bytes] {
                assert!(
                    !shown.contains(echoed),
                    "the key's text is echoed for {key:?}:\n{shown}"
                );
            }
        }
    }

    #[test]
    fn system_roots_when_no_ca() {
        // The machine has a system store; the config must build from it.
        let (_config, slot) = build_tls(&TlsClientConfig::default()).unwrap();
        assert!(!slot.is_set());
    }
}
