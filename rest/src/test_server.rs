//! A scripted HTTP/1.1 server on loopback for unit tests of the request loop (retries,
//! throttling, error bodies, stalls). It is not an API server: each connection gets the next
//! scripted reply, and the requests it saw are recorded. [`TlsTestServer`] answers over TLS
//! with a given certificate, for the tests of TLS failures; [`ClientCertTestServer`] says
//! which client certificate each request came with, for the tests of rotation.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpListener;

/// One scripted reply.
#[derive(Clone, Debug)]
pub(crate) enum Reply {
    /// Status, extra header lines, body.
    Http(u16, Vec<(&'static str, String)>, String),
    /// Close the connection without answering.
    Close,
    /// Send the head (this status, JSON, the full body's `Content-Length`) and the first
    /// bytes of the body, then stall: keep the connection open and send nothing more.
    StallBody(u16, String, usize),
    /// Send the head and this body in chunks of the given size with no pause, then close.
    Chunked(Vec<u8>, usize),
}

/// A request the server received.
#[derive(Clone, Debug)]
pub(crate) struct Seen {
    pub(crate) head: String,
    pub(crate) body: Vec<u8>,
}

pub(crate) struct TestServer {
    pub(crate) url: String,
    pub(crate) seen: Arc<Mutex<Vec<Seen>>>,
}

impl TestServer {
    /// Serves `replies` in order, one per connection; the last one repeats.
    pub(crate) async fn start(replies: Vec<Reply>) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let log = seen.clone();
        tokio::spawn(async move {
            let mut n = 0;
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let reply = replies[n.min(replies.len() - 1)].clone();
                n += 1;
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head, mut body) = loop {
                    let Ok(read) = sock.read(&mut chunk).await else {
                        break (String::new(), Vec::new());
                    };
                    if read == 0 {
                        break (String::new(), Vec::new());
                    }
                    buf.extend_from_slice(&chunk[..read]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
                        break (head, buf[end + 4..].to_vec());
                    }
                };
                let len = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                while body.len() < len {
                    let Ok(read) = sock.read(&mut chunk).await else {
                        break;
                    };
                    if read == 0 {
                        break;
                    }
                    body.extend_from_slice(&chunk[..read]);
                }
                log.lock().push(Seen { head, body });
                match reply {
                    Reply::Close => drop(sock),
                    Reply::StallBody(code, body, sent) => {
                        let head = format!(
                            "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
                            body.len()
                        );
                        let _ = sock.write_all(head.as_bytes()).await;
                        let _ = sock.write_all(&body.as_bytes()[..sent]).await;
                        // Keep the connection open, silent, until the client goes away.
                        tokio::spawn(async move {
                            let mut rest = [0u8; 64];
                            while matches!(sock.read(&mut rest).await, Ok(n) if n > 0) {}
                        });
                    }
                    Reply::Chunked(body, chunk) => {
                        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n";
                        let _ = sock.write_all(head.as_bytes()).await;
                        for part in body.chunks(chunk.max(1)) {
                            let mut framed = format!("{:x}\r\n", part.len()).into_bytes();
                            framed.extend_from_slice(part);
                            framed.extend_from_slice(b"\r\n");
                            if sock.write_all(&framed).await.is_err() {
                                break;
                            }
                        }
                        let _ = sock.write_all(b"0\r\n\r\n").await;
                        let _ = sock.shutdown().await;
                    }
                    Reply::Http(code, headers, body) => {
                        let mut out = format!(
                            "HTTP/1.1 {code} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                            body.len()
                        );
                        for (k, v) in headers {
                            out.push_str(&format!("{k}: {v}\r\n"));
                        }
                        out.push_str("\r\n");
                        out.push_str(&body);
                        let _ = sock.write_all(out.as_bytes()).await;
                        let _ = sock.shutdown().await;
                    }
                }
            }
        });
        TestServer { url, seen }
    }

    pub(crate) fn count(&self) -> usize {
        self.seen.lock().len()
    }
}

/// A TLS server on loopback that completes handshakes with the given certificate and answers
/// every request with `200 {}` (HTTP/1.1), one connection at a time, on a thread.
pub(crate) struct TlsTestServer {
    pub(crate) port: u16,
}

impl TlsTestServer {
    pub(crate) fn start(cert_pem: &[u8], key_pem: &[u8]) -> TlsTestServer {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};

        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<_, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_slice(key_pem).unwrap();
        let provider = crate::tls::provider().unwrap();
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let port = serve_ok_per_connection(Arc::new(config), |_| {});
        TlsTestServer { port }
    }
}

/// Serves TLS on a loopback port (returned) on a thread, one connection at a time: reads a
/// request's head, hands it to `on_request`, answers `200 {}` and closes the connection.
fn serve_ok_per_connection(
    config: Arc<rustls::ServerConfig>,
    on_request: impl Fn(&[u8]) + Send + 'static,
) -> u16 {
    use std::io::{Read as _, Write as _};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for sock in listener.incoming() {
            let Ok(sock) = sock else { return };
            let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
                return;
            };
            let mut tls = rustls::StreamOwned::new(conn, sock);
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            // A failed handshake ends here: the client gave up on the certificate.
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match tls.read(&mut buf) {
                    Ok(n) if n > 0 => head.extend_from_slice(&buf[..n]),
                    _ => break,
                }
            }
            on_request(&head);
            let _ = tls.write_all(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}",
            );
            tls.conn.send_close_notify();
            let _ = tls.flush();
        }
    });
    port
}

/// A TLS server on loopback (HTTP/1.1, keep-alive, a thread per connection) that asks every
/// client for a certificate, accepts any, and answers each request with a JSON object saying
/// which of the `known` certificates (PEM, by name) the connection's client presented:
/// `{"cert": NAME}`, `"none"` or `"other"`. A resumed TLS session reports the certificate of
/// the handshake it resumes, as a real server sees it.
pub(crate) struct ClientCertTestServer {
    pub(crate) port: u16,
}

impl ClientCertTestServer {
    pub(crate) fn start(known: &[(&'static str, &[u8])]) -> ClientCertTestServer {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        use std::io::{Read as _, Write as _};

        let known: Vec<(&'static str, Vec<u8>)> = known
            .iter()
            .map(|(name, pem)| {
                let der = CertificateDer::from_pem_slice(pem).unwrap();
                (*name, der.to_vec())
            })
            .collect();
        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(include_bytes!("testdata/tls-server.pem"))
                .collect::<Result<_, _>>()
                .unwrap();
        let key =
            PrivateKeyDer::from_pem_slice(include_bytes!("testdata/tls-server-key.pem")).unwrap();
        let provider = crate::tls::provider().unwrap();
        let mut config = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_client_cert_verifier(Arc::new(AnyClientCert(provider)))
            .with_single_cert(certs, key)
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        let known = Arc::new(known);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for sock in listener.incoming() {
                let Ok(sock) = sock else { return };
                let (config, known) = (config.clone(), known.clone());
                std::thread::spawn(move || {
                    let Ok(conn) = rustls::ServerConnection::new(config) else {
                        return;
                    };
                    let mut tls = rustls::StreamOwned::new(conn, sock);
                    let mut seen = Vec::new();
                    let mut buf = [0u8; 4096];
                    loop {
                        let end = loop {
                            if let Some(at) = seen.windows(4).position(|w| w == b"\r\n\r\n") {
                                break at + 4;
                            }
                            match tls.read(&mut buf) {
                                Ok(n) if n > 0 => seen.extend_from_slice(&buf[..n]),
                                _ => return,
                            }
                        };
                        seen.drain(..end);
                        let presented = tls.conn.peer_certificates().and_then(|c| c.first());
                        let name = match presented {
                            None => "none",
                            Some(der) => known
                                .iter()
                                .find(|(_, k)| k.as_slice() == der.as_ref())
                                .map_or("other", |(name, _)| *name),
                        };
                        let body = format!("{{\"cert\":\"{name}\"}}");
                        let reply = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if tls.write_all(reply.as_bytes()).is_err() || tls.flush().is_err() {
                            return;
                        }
                    }
                });
            }
        });
        ClientCertTestServer { port }
    }
}

/// Accepts any client certificate whose handshake signature verifies.
#[derive(Debug)]
struct AnyClientCert(Arc<rustls::crypto::CryptoProvider>);

impl rustls::server::danger::ClientCertVerifier for AnyClientCert {
    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _now: rustls::pki_types::UnixTime,
    ) -> Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        Ok(rustls::server::danger::ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

/// What a [`NameRecordingTlsServer`] saw of one connection: the SNI of its ClientHello
/// (`None` when it sent none) and the `Host` header of its request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SeenName {
    pub(crate) sni: Option<String>,
    pub(crate) host: Option<String>,
}

/// A TLS server on loopback (HTTP/1.1, one request per connection, on a thread) that presents
/// `testdata/sni-server.pem` (signed by `testdata/sni-ca.pem`, valid for the name
/// `apiserver.sni-test.invalid` alone, which no resolver knows), records the SNI and the
/// `Host` header of every connection, and answers `200 {}`.
pub(crate) struct NameRecordingTlsServer {
    pub(crate) port: u16,
    pub(crate) seen: Arc<Mutex<Vec<SeenName>>>,
}

/// Hands out the one certificate and notes the SNI it was asked for.
#[derive(Debug)]
struct RecordSni {
    key: Arc<rustls::sign::CertifiedKey>,
    sni: Arc<Mutex<Option<Option<String>>>>,
}

impl rustls::server::ResolvesServerCert for RecordSni {
    fn resolve(
        &self,
        hello: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        *self.sni.lock() = Some(hello.server_name().map(str::to_owned));
        Some(self.key.clone())
    }
}

impl NameRecordingTlsServer {
    pub(crate) fn start() -> NameRecordingTlsServer {
        use rustls::pki_types::pem::PemObject as _;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};

        let certs: Vec<CertificateDer<'static>> =
            CertificateDer::pem_slice_iter(include_bytes!("testdata/sni-server.pem"))
                .collect::<Result<_, _>>()
                .unwrap();
        let key =
            PrivateKeyDer::from_pem_slice(include_bytes!("testdata/sni-server-key.pem")).unwrap();
        let provider = crate::tls::provider().unwrap();
        let key = Arc::new(rustls::sign::CertifiedKey::from_der(certs, key, &provider).unwrap());
        let sni: Arc<Mutex<Option<Option<String>>>> = Arc::default();
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_cert_resolver(Arc::new(RecordSni {
                key,
                sni: sni.clone(),
            }));
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let seen: Arc<Mutex<Vec<SeenName>>> = Arc::default();
        let log = seen.clone();
        let port = serve_ok_per_connection(Arc::new(config), move |head| {
            let host = String::from_utf8_lossy(head).lines().find_map(|l| {
                let (name, value) = l.split_once(':')?;
                name.eq_ignore_ascii_case("host")
                    .then(|| value.trim().to_string())
            });
            log.lock().push(SeenName {
                sni: sni.lock().take().flatten(),
                host,
            });
        });
        NameRecordingTlsServer { port, seen }
    }
}
