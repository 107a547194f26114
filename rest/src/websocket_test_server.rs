//! A loopback WebSocket server for the channel protocol tests: it accepts one upgrade,
//! records the request, answers with the subprotocol the test chooses, and hands the
//! connection to the test's script.

use std::future::Future;
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::net::{TcpListener, TcpStream};
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_tungstenite::tungstenite::http::HeaderValue;

/// What the server saw of the upgrade request.
#[derive(Debug, Clone, Default)]
pub(crate) struct SeenRequest {
    pub(crate) path_and_query: String,
    pub(crate) headers: Vec<(String, String)>,
}

impl SeenRequest {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A server for one connection.
pub(crate) struct WebSocketTestServer {
    pub(crate) port: u16,
    pub(crate) seen: Arc<Mutex<Option<SeenRequest>>>,
    pub(crate) task: tokio::task::JoinHandle<()>,
}

impl WebSocketTestServer {
    /// Serves one upgrade, choosing `pick(offered)` as the subprotocol (none when it returns
    /// `None`), then runs `script` on the connection.
    pub(crate) async fn start<F, Fut>(
        pick: fn(&str) -> Option<&'static str>,
        script: F,
    ) -> WebSocketTestServer
    where
        F: FnOnce(WebSocketStream<TcpStream>) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(None));
        let seen2 = seen.clone();
        let task = tokio::spawn(async move {
            let (tcp, _) = listener.accept().await.unwrap();
            #[allow(
                clippy::result_large_err,
                reason = "tungstenite's callback signature returns its error response"
            )]
            let callback = move |req: &Request, mut resp: Response| {
                let offered = req
                    .headers()
                    .get("sec-websocket-protocol")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_string();
                *seen2.lock() = Some(SeenRequest {
                    path_and_query: req
                        .uri()
                        .path_and_query()
                        .map(|p| p.to_string())
                        .unwrap_or_default(),
                    headers: req
                        .headers()
                        .iter()
                        .map(|(n, v)| {
                            (
                                n.to_string(),
                                String::from_utf8_lossy(v.as_bytes()).into_owned(),
                            )
                        })
                        .collect(),
                });
                if let Some(p) = pick(&offered) {
                    resp.headers_mut()
                        .insert("sec-websocket-protocol", HeaderValue::from_static(p));
                }
                Ok(resp)
            };
            let ws = tokio_tungstenite::accept_hdr_async(tcp, callback)
                .await
                .unwrap();
            script(ws).await;
        });
        WebSocketTestServer { port, seen, task }
    }
}
