//! Targets that reach kclient through HTTP, as a client does: a loopback server inside the
//! runner answers the requests of a real `kclient_rest::Client` with the fuzzed bytes.
//!
//! - `watch_stream`: the input is a watch response body. The server sends it as a chunked
//!   200 response, cut into chunks at points that follow from the input, and sometimes drops
//!   the connection instead of ending the body; the client opens the watch with
//!   `Request::watch::<Pod>`, `watch::<Unstructured>` or `watch_raw` and reads every event.
//!   This is the only public way into rest's frame reader (`Frames`/`LineBuffer` in
//!   `rest/src/watch.rs` are crate-private).
//! - `http_response`: the input is a whole HTTP/1.1 response (status line, headers, body),
//!   written as is before the server closes the connection; the client sends a LIST, a GET or
//!   opens a watch, with retries off. This covers status mapping, error bodies (`Status` or
//!   not), content types, `Retry-After`, gzip and the transport's framing.
//!
//! Every request must finish within 10 s; a request that does not is reported as a panic.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt as _;
use kclient_api::core::v1::Pod;
use kclient_apimachinery::{ObjectList, Unstructured, WatchEvent};
use kclient_rest::{Client, Config};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

use super::{Target, err, mix, ok};
use crate::mutate::InputKind;
use crate::rng::fnv1a;

/// How long one request may take before the target reports it.
const REQUEST_LIMIT: Duration = Duration::from_secs(10);

/// The HTTP targets.
pub(super) fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "watch_stream",
            about: "a watch response body sent in random chunks to Request::watch::<Pod>, \
                    watch::<Unstructured> and watch_raw (rest's line framing and event decoding)",
            kind: InputKind::JsonLines,
            max_len: 256 << 10,
            dict: &[
                "\n",
                "\r\n",
                "{\"type\":\"ADDED\",\"object\":",
                "{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410}}",
                "{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"1\"}}}",
            ],
            run: watch_stream,
        },
        Target {
            name: "http_response",
            about: "a raw HTTP/1.1 response to a LIST (ObjectList<Pod>), a GET (Unstructured) or \
                    a watch, retries off: status codes, Status and non-Status error bodies, \
                    content types, Retry-After, gzip, chunked and length framing",
            kind: InputKind::Bytes,
            max_len: 64 << 10,
            dict: &[
                "HTTP/1.1 200 OK\r\n",
                "HTTP/1.1 410 Gone\r\n",
                "HTTP/1.1 429 Too Many Requests\r\n",
                "HTTP/1.0 ",
                "\r\n",
                "\r\n\r\n",
                "Content-Type: application/json\r\n",
                "Content-Type: text/html\r\n",
                "Content-Length: ",
                "Content-Length: 18446744073709551615\r\n",
                "Transfer-Encoding: chunked\r\n",
                "Content-Encoding: gzip\r\n",
                "Retry-After: 1\r\n",
                "Retry-After: 4294967296\r\n",
                "Warning: 299 - \"deprecated\"\r\n",
                "ffffffffffffffff\r\n",
                "0\r\n\r\n",
                "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"reason\":\"NotFound\",\"code\":404}",
            ],
            run: http_response,
        },
    ]
}

/// What the server sends to the next request.
#[derive(Clone, Default)]
struct Reply {
    /// Chunked body (watch) or raw response (written as is, then the connection closes).
    raw: bool,
    bytes: Vec<u8>,
    /// Chunk sizes for a chunked body (cycled).
    chunks: Vec<usize>,
    /// End a chunked body by dropping the connection instead of the last chunk.
    cut: bool,
}

/// The runtime, the server and the client of this thread.
struct Harness {
    rt: tokio::runtime::Runtime,
    client: Client,
    reply: Arc<Mutex<Reply>>,
}

thread_local! {
    static HARNESS: RefCell<Option<Harness>> = const { RefCell::new(None) };
}

impl Harness {
    fn start() -> Harness {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let reply = Arc::new(Mutex::new(Reply::default()));
        let listener = rt
            .block_on(TcpListener::bind("127.0.0.1:0"))
            .expect("a loopback port for the fuzz server");
        let addr: SocketAddr = listener.local_addr().expect("the server's address");
        let served = reply.clone();
        rt.spawn(async move {
            while let Ok((conn, _)) = listener.accept().await {
                tokio::spawn(serve(conn, served.clone()));
            }
        });
        let mut config = Config::new(format!("http://{addr}"));
        config.qps = -1.0;
        config.timeout = Some(REQUEST_LIMIT);
        let client = Client::new(config).expect("a client for the fuzz server");
        Harness { rt, client, reply }
    }
}

/// Answers requests on one connection until it closes.
async fn serve(mut conn: TcpStream, reply: Arc<Mutex<Reply>>) {
    // Each chunk leaves at once (no Nagle delay waiting for the client's ACK).
    let _ = conn.set_nodelay(true);
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        // Read one request head (GETs have no body).
        while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
            match conn.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let end = buf.windows(4).position(|w| w == b"\r\n\r\n").unwrap_or(0) + 4;
        buf.drain(..end);
        let r = reply.lock().expect("reply lock").clone();
        if r.raw {
            let _ = conn.write_all(&r.bytes).await;
            let _ = conn.shutdown().await;
            return;
        }
        let head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
        if conn.write_all(head).await.is_err() {
            return;
        }
        let mut rest = r.bytes.as_slice();
        let mut sizes = r.chunks.iter().cycle();
        while !rest.is_empty() {
            let n = (*sizes.next().unwrap_or(&4096)).clamp(1, rest.len());
            let (now, later) = rest.split_at(n);
            rest = later;
            let mut frame = format!("{n:x}\r\n").into_bytes();
            frame.extend_from_slice(now);
            frame.extend_from_slice(b"\r\n");
            if conn.write_all(&frame).await.is_err() || conn.flush().await.is_err() {
                return;
            }
        }
        if r.cut {
            return;
        }
        if conn.write_all(b"0\r\n\r\n").await.is_err() {
            return;
        }
    }
}

/// Runs `f` with this thread's harness, setting the reply first.
fn with_harness<T>(reply: Reply, f: impl AsyncFnOnce(&Client) -> T) -> T {
    HARNESS.with(|h| {
        let mut h = h.borrow_mut();
        let h = h.get_or_insert_with(Harness::start);
        *h.reply.lock().expect("reply lock") = reply;
        let client = h.client.clone();
        h.rt.block_on(async move {
            tokio::time::timeout(REQUEST_LIMIT, f(&client))
                .await
                .unwrap_or_else(|_| panic!("the request did not finish within {REQUEST_LIMIT:?}"))
        })
    })
}

/// The signature of a watch's events: which outcomes occurred (not how often).
fn events_signature(mut sigs: Vec<u64>) -> u64 {
    sigs.sort_unstable();
    sigs.dedup();
    mix(&sigs)
}

fn watch_stream(input: &[u8]) -> u64 {
    let h = fnv1a(input);
    // Chunk sizes; at least 1/200 of the body, so that one input stays a few hundred writes.
    let least = input.len() / 200;
    let chunks: Vec<usize> = match h % 4 {
        0 => vec![input.len()],
        1 => vec![1],
        2 => vec![1 + (h >> 8) as usize % 64, 1 + (h >> 16) as usize % 7, 4096],
        _ => vec![1 + (h >> 8) as usize % 8192],
    }
    .into_iter()
    .map(|n| n.max(least).max(1))
    .collect();
    let reply = Reply {
        raw: false,
        bytes: input.to_vec(),
        chunks,
        cut: (h >> 24).is_multiple_of(4),
    };
    let which = (h >> 32) % 3;
    with_harness(reply, async move |client: &Client| {
        let req = client.get().abs_path("/api/v1/pods").max_retries(0);
        let mut sigs = Vec::new();
        match which {
            0 => match req.watch::<Pod>().await {
                Ok(mut stream) => {
                    while let Some(event) = stream.next().await {
                        sigs.push(match event {
                            Ok(WatchEvent::Bookmark(b)) => ok(if b.is_initial_events_end() {
                                "end"
                            } else {
                                "bookmark"
                            }),
                            Ok(e) => ok(e.event_type().as_str()),
                            Err(e) => err("watch Pod", &e),
                        });
                    }
                }
                Err(e) => sigs.push(err("open", &e)),
            },
            1 => match req.watch::<Unstructured>().await {
                Ok(mut stream) => {
                    while let Some(event) = stream.next().await {
                        sigs.push(match event {
                            Ok(e) => ok(e.event_type().as_str()),
                            Err(e) => err("watch Unstructured", &e),
                        });
                    }
                }
                Err(e) => sigs.push(err("open", &e)),
            },
            _ => match req.watch_raw().await {
                Ok(mut stream) => {
                    while let Some(event) = stream.next().await {
                        sigs.push(match event {
                            Ok(e) => ok(e.event_type.as_str()),
                            Err(e) => err("watch raw", &e),
                        });
                    }
                }
                Err(e) => sigs.push(err("open", &e)),
            },
        }
        events_signature(sigs)
    })
}

fn http_response(input: &[u8]) -> u64 {
    let reply = Reply {
        raw: true,
        bytes: input.to_vec(),
        ..Reply::default()
    };
    let which = fnv1a(input) % 3;
    with_harness(reply, async move |client: &Client| {
        let req = client
            .get()
            .abs_path("/api/v1/namespaces/default/pods")
            .header("Connection", "close")
            .max_retries(0);
        match which {
            0 => match req.send::<ObjectList<Pod>>().await {
                Ok(list) => ok(if list.items.is_empty() {
                    "empty list"
                } else {
                    "list"
                }),
                Err(e) => err("list", &e),
            },
            1 => match req.send_with_warnings::<Unstructured>().await {
                Ok((_, warnings)) => ok(if warnings.is_empty() {
                    "object"
                } else {
                    "object+warnings"
                }),
                Err(e) => err("get", &e),
            },
            _ => match req.watch::<Pod>().await {
                Ok(mut stream) => {
                    let mut sigs = Vec::new();
                    while let Some(event) = stream.next().await {
                        sigs.push(match event {
                            Ok(e) => ok(e.event_type().as_str()),
                            Err(e) => err("watch", &e),
                        });
                    }
                    events_signature(sigs)
                }
                Err(e) => err("open watch", &e),
            },
        }
    })
}
