//! A scripted HTTP/1.1 server on loopback for unit tests of the request loop (retries,
//! throttling, error bodies). It is not an API server: each connection gets the next scripted
//! reply, and the requests it saw are recorded.

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
