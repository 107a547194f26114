//! The WebSocket upgrade of a request: the connection that exec, attach and port-forward
//! speak their channel protocols on.
//!
//! The upgrade is an ordinary [`Request`] sent through [`Request::execute`], so it gets the
//! same credentials, impersonation headers, `User-Agent`, TLS settings and proxy as every
//! other request; only the connection differs, it is never retried (neither a `Retry-After`
//! answer nor a connection reset: as in client-go, whose executors make one attempt, since the
//! command may already run), and the client's rate limiter is not waited on (client-go's exec and port-forward
//! executors dial outside the RESTClient's throttling, and a port-forward listener opens one
//! upgrade per local connection). HTTP/2 cannot switch protocols (RFC
//! 8441's extended CONNECT is not served by kube-apiserver), so the transport's HTTP/1.1-only
//! client carries it ([`Transport::for_upgrade`](crate::transport::Transport::for_upgrade)).
//!
//! Subprotocols are negotiated as kubectl does: all are offered in order of preference in
//! `Sec-WebSocket-Protocol`, and the one the server names in its `101` answer is used. A
//! server that picks none of them (an old kubelet, a proxy that drops the header), answers
//! `2xx` without switching, or whose `Sec-WebSocket-Accept` is wrong, is an error saying so.
//!
//! The framing is `tokio-tungstenite`'s over reqwest's upgraded connection: it answers pings,
//! checks masking and frame lengths, and caps a message at [`MAX_MESSAGE_SIZE`].

use http::StatusCode;
use kclient_apimachinery::{Error, TransportErrorKind};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::client::generate_key;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::{Role, WebSocketConfig};

use crate::request::{Mode, Request, Response};
use crate::transport::transport_error;

/// The largest WebSocket message accepted from the server. kube-apiserver and the kubelet send
/// at most 32 KiB of a stream per message; this leaves room for any server without letting
/// one allocate without bound.
pub(crate) const MAX_MESSAGE_SIZE: usize = 16 << 20;

/// An upgraded connection and the subprotocol the server chose.
pub(crate) struct WebSocket {
    pub(crate) stream: WebSocketStream<reqwest::Upgraded>,
    pub(crate) protocol: String,
}

impl Request {
    /// Sends the request as a WebSocket upgrade (a GET) offering `protocols` in order of
    /// preference, and returns the connection once the server has switched.
    pub(crate) async fn upgrade_websocket(self, protocols: &[&str]) -> Result<WebSocket, Error> {
        let key = generate_key();
        // `url()` shows the server URL's password, if any, as `xxxxx` (Go's `URL.Redacted`).
        let what = format!("GET {}", self.url().unwrap_or_default());
        let sent = self
            .header("Connection", "Upgrade")
            .header("Upgrade", "websocket")
            .header("Sec-WebSocket-Version", "13")
            .header("Sec-WebSocket-Key", &key)
            .header("Sec-WebSocket-Protocol", &protocols.join(", "))
            .execute(Mode::Upgrade)
            .await?;
        let Response::Http(resp) = sent.resp else {
            return Err(Error::invalid_request(
                "a WebSocket upgrade needs the client's own HTTP transport",
            ));
        };
        if resp.status() != StatusCode::SWITCHING_PROTOCOLS {
            return Err(protocol_error(format!(
                "{what}: the server answered {} instead of switching to WebSocket; a proxy \
                 between client and server may not pass on upgrades",
                resp.status()
            )));
        }
        let accept = resp
            .headers()
            .get("sec-websocket-accept")
            .map(|v| v.as_bytes().to_vec());
        if accept.as_deref() != Some(derive_accept_key(key.as_bytes()).as_bytes()) {
            return Err(protocol_error(format!(
                "{what}: the server switched protocols without a valid Sec-WebSocket-Accept"
            )));
        }
        let protocol = resp
            .headers()
            .get("sec-websocket-protocol")
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim().to_string())
            .unwrap_or_default();
        if !protocols.contains(&protocol.as_str()) {
            return Err(protocol_error(format!(
                "{what}: the server chose the subprotocol {protocol:?}, none of those offered \
                 ({}); it may be too old for WebSocket streams (on by default from Kubernetes \
                 1.30 for exec and attach, 1.31 for port-forward)",
                protocols.join(", ")
            )));
        }
        let upgraded = resp.upgrade().await.map_err(transport_error)?;
        let mut config = WebSocketConfig::default();
        config.max_message_size = Some(MAX_MESSAGE_SIZE);
        config.max_frame_size = Some(MAX_MESSAGE_SIZE);
        let stream = WebSocketStream::from_raw_socket(upgraded, Role::Client, Some(config)).await;
        Ok(WebSocket { stream, protocol })
    }
}

/// A server that broke the upgrade or the channel protocol.
pub(crate) fn protocol_error(message: String) -> Error {
    Error::transport(TransportErrorKind::Other, message)
}
