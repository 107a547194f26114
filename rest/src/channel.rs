//! The channel multiplexer of Kubernetes' WebSocket stream protocols (`v4.channel.k8s.io`,
//! `v5.channel.k8s.io`): many byte streams over one WebSocket, each binary message carrying
//! its channel number in its first byte.
//!
//! [`ChannelMux::start`] splits an upgraded connection into two tasks, so the two directions
//! never wait on each other (a process whose output is not read yet can still be written to):
//! - the reader task reads messages and hands each channel's data to its [`ChannelReader`]
//!   through a bounded queue of [`CHANNEL_QUEUE`] messages: a slow reader slows the whole
//!   connection (TCP flow control then reaches the server) instead of growing memory. Data on
//!   a channel whose reader was dropped, or that no reader asked for, is discarded; empty
//!   messages (servers send one per channel when they open it), text messages and messages
//!   on unknown channels are skipped, so garbage from a server is never a panic.
//! - the writer task sends the messages queued by [`ChannelWriter`]s and control messages,
//!   and a ping every 5 seconds (client-go's heartbeat). When every writer is gone only the
//!   pings go on: the connection stays open for the readers still held, as a TCP connection
//!   whose write side is shut down still reads.
//!
//! How the connection ended is seen by everyone: a close frame of a normal closure (code 1000,
//! or no code) is a clean end (readers see end of file); a close frame with any other code, an
//! I/O error, or the peer closing the TCP connection without a close frame, is a cut, and
//! every reader's next read then fails with `ConnectionReset` and a message saying so, rather
//! than a silent end of file or a hang. So is a connection on which nothing arrived for 61
//! seconds, not even a pong to the pings (a dead node, a connection dropped by a NAT or a
//! firewall without a reset): as client-go does, it is taken as dead, and writers waiting on
//! it fail too.
//!
//! The tasks end when the connection ends, or as soon as every handle (readers, writers and
//! the owner's [`ChannelMux`]) is dropped, which closes the connection.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use futures_util::{SinkExt as _, StreamExt as _};
use parking_lot::Mutex;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::{mpsc, watch};
use tokio::task::AbortHandle;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_util::sync::PollSender;

use crate::upgrade::WebSocket;

/// Messages queued per channel between the connection and a slow reader.
pub(crate) const CHANNEL_QUEUE: usize = 16;

/// The most bytes of a write sent in one message.
pub(crate) const MAX_WRITE: usize = 32 * 1024;

/// The keep-alive of a connection, client-go's WebSocket heartbeat: a ping every `period`,
/// and a connection on which nothing (no message, not even a pong) arrived for `deadline`
/// counts as cut.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Heartbeat {
    pub(crate) period: Duration,
    pub(crate) deadline: Duration,
}

impl Heartbeat {
    /// client-go's (`pingPeriod`, `pingReadDeadline`): a ping every 5 s, and a cut after 61 s
    /// of silence, twelve pings unanswered.
    pub(crate) const CLIENT_GO: Heartbeat = Heartbeat {
        period: Duration::from_secs(5),
        deadline: Duration::from_secs(61),
    };
}

/// How the connection ended, once it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Still open.
    Open,
    /// The server closed it with a close frame of a normal closure.
    Closed,
    /// Cut: an I/O or protocol error, a close frame with an error code, or no close frame.
    /// The text says what happened.
    Cut(String),
}

/// Aborts the connection's tasks when the last handle is dropped.
struct AbortOnDrop(Vec<AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

/// The shared state every handle keeps: how the connection ended, and the tasks' lifetime.
#[derive(Clone)]
pub(crate) struct Connection {
    ended: watch::Receiver<Ended>,
    _tasks: Arc<AbortOnDrop>,
}

impl Connection {
    /// How the connection ended so far.
    pub(crate) fn ended(&self) -> Ended {
        self.ended.borrow().clone()
    }

    /// Waits until the connection has ended, and says how.
    pub(crate) async fn wait_ended(&mut self) -> Ended {
        match self.ended.wait_for(|e| *e != Ended::Open).await {
            Ok(e) => e.clone(),
            Err(_) => Ended::Cut("the connection's reader task stopped".into()),
        }
    }
}

/// A started multiplexer: the readers of the channels asked for, a way to queue messages, and
/// the connection's state.
pub(crate) struct ChannelMux {
    /// The subprotocol the server chose.
    pub(crate) protocol: String,
    readers: Mutex<Vec<(u8, ChannelReader)>>,
    sender: mpsc::Sender<Message>,
    pub(crate) connection: Connection,
}

impl ChannelMux {
    /// Starts the tasks on `ws`, with a reader for each of `channels` whose first
    /// `skip_prefix` bytes are dropped (the port number port-forward puts first).
    pub(crate) fn start(ws: WebSocket, channels: &[u8], skip_prefix: usize) -> ChannelMux {
        Self::start_with(ws, channels, skip_prefix, Heartbeat::CLIENT_GO)
    }

    /// [`ChannelMux::start`] with the given heartbeat.
    pub(crate) fn start_with(
        ws: WebSocket,
        channels: &[u8],
        skip_prefix: usize,
        heartbeat: Heartbeat,
    ) -> ChannelMux {
        let (mut sink, mut stream) = ws.stream.split();
        let (ended_tx, ended_rx) = watch::channel(Ended::Open);
        let (out_tx, mut out_rx) = mpsc::channel::<Message>(CHANNEL_QUEUE);
        let mut routes: Vec<(u8, mpsc::Sender<Bytes>)> = Vec::new();
        let mut pending = Vec::new();
        for &id in channels {
            let (tx, rx) = mpsc::channel(CHANNEL_QUEUE);
            routes.push((id, tx));
            pending.push((id, rx));
        }
        let reader = tokio::spawn(async move {
            let end = loop {
                // Any message (a pong to the writer's pings included) shows the connection
                // alive; none for the deadline is a dead one.
                let Ok(next) = tokio::time::timeout(heartbeat.deadline, stream.next()).await else {
                    break Ended::Cut(format!(
                        "nothing arrived from the server for {:?}, not even a pong to the pings \
                         sent every {:?}: the connection is taken as dead",
                        heartbeat.deadline, heartbeat.period
                    ));
                };
                match next {
                    Some(Ok(Message::Binary(data))) => {
                        let Some((&id, _)) = data.split_first() else {
                            continue;
                        };
                        let Some(pos) = routes.iter().position(|(c, _)| *c == id) else {
                            tracing::debug!(channel = id, "data on a channel not asked for");
                            continue;
                        };
                        if data.len() > 1 && routes[pos].1.send(data.slice(1..)).await.is_err() {
                            // The reader was dropped: discard what follows on its channel.
                            routes.swap_remove(pos);
                        }
                    }
                    Some(Ok(Message::Close(frame))) => break closed_by(frame),
                    Some(Ok(Message::Text(_))) => {
                        tracing::debug!("skipping a text message on a binary channel protocol");
                    }
                    Some(Ok(_)) => {}
                    Some(Err(e)) => break Ended::Cut(cut_reason(&e)),
                    None => {
                        break Ended::Cut(
                            "the server closed the connection without a WebSocket close frame"
                                .into(),
                        );
                    }
                }
            };
            // Readers see the end only after the state is set, so they can tell a cut.
            let _ = ended_tx.send(end);
            drop(routes);
        });
        let mut ended = ended_rx.clone();
        let writer = tokio::spawn(async move {
            let start = tokio::time::Instant::now() + heartbeat.period;
            let mut ping = tokio::time::interval_at(start, heartbeat.period);
            ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut writers = true;
            loop {
                // A connection that ended ends this task even while a send waits on a full
                // connection, so that writers waiting on the queue fail instead of hanging.
                let message = tokio::select! {
                    message = out_rx.recv(), if writers => match message {
                        Some(message) => message,
                        // Every writer is gone: nothing more goes out but pings. The
                        // connection stays open for the readers still held (a port stream
                        // whose write side was shut down still reads the pod's answer); it
                        // ends when the server ends it or every handle is dropped.
                        None => {
                            writers = false;
                            continue;
                        }
                    },
                    _ = ping.tick() => Message::Ping(Bytes::new()),
                    () = over(&mut ended) => break,
                };
                tokio::select! {
                    sent = sink.send(message) => if sent.is_err() {
                        return;
                    },
                    () = over(&mut ended) => break,
                }
            }
            if matches!(*ended.borrow(), Ended::Cut(_)) {
                return;
            }
            // The server closed the connection: answer its close frame (which tungstenite
            // queued as it read it).
            let _ = tokio::time::timeout(heartbeat.deadline, sink.close()).await;
        });
        let connection = Connection {
            ended: ended_rx,
            _tasks: Arc::new(AbortOnDrop(vec![
                reader.abort_handle(),
                writer.abort_handle(),
            ])),
        };
        let readers = pending
            .into_iter()
            .map(|(id, rx)| {
                (
                    id,
                    ChannelReader {
                        rx,
                        chunk: Bytes::new(),
                        skip: skip_prefix,
                        connection: connection.clone(),
                    },
                )
            })
            .collect();
        ChannelMux {
            protocol: ws.protocol,
            readers: Mutex::new(readers),
            sender: out_tx,
            connection,
        }
    }

    /// Takes the reader of channel `id` (once).
    pub(crate) fn take_reader(&self, id: u8) -> Option<ChannelReader> {
        let mut readers = self.readers.lock();
        let pos = readers.iter().position(|(c, _)| *c == id)?;
        Some(readers.swap_remove(pos).1)
    }

    /// A writer of data on channel `id`; `close_signal` is the message that ends the channel
    /// on shutdown or drop (v5's close signal), if the protocol has one.
    pub(crate) fn writer(&self, id: u8, close_signal: Option<Bytes>) -> ChannelWriter {
        ChannelWriter {
            id,
            sender: PollSender::new(self.sender.clone()),
            close_signal,
            connection: self.connection.clone(),
        }
    }

    /// A sender for control messages that outlives `&self`.
    pub(crate) fn sender(&self) -> mpsc::Sender<Message> {
        self.sender.clone()
    }
}

/// Waits until the connection has ended (closed by the server or cut), or its reader task
/// has ended.
async fn over(ended: &mut watch::Receiver<Ended>) {
    let _ = ended.wait_for(|e| *e != Ended::Open).await;
}

/// How a close frame ends the connection: as in client-go, a normal closure (code 1000, or a
/// frame without a code) is a clean end; any other code (a server or proxy giving up: going
/// away, an internal error) is a cut, with the server's code and reason.
fn closed_by(frame: Option<CloseFrame>) -> Ended {
    match frame {
        Some(frame) if frame.code != CloseCode::Normal => {
            let reason = if frame.reason.is_empty() {
                String::new()
            } else {
                format!(": {}", frame.reason.as_str())
            };
            Ended::Cut(format!(
                "the server closed the connection with WebSocket close code {}{reason}",
                frame.code
            ))
        }
        _ => Ended::Closed,
    }
}

/// The text of a read error, for the readers' errors.
fn cut_reason(e: &tokio_tungstenite::tungstenite::Error) -> String {
    use tokio_tungstenite::tungstenite::Error as E;
    match e {
        E::Protocol(p) => format!("the WebSocket connection broke: {p}"),
        E::Capacity(c) => format!("the server sent a message over the size limit: {c}"),
        other => format!("the connection to the server was cut: {other}"),
    }
}

/// The data of one channel as an [`AsyncRead`]. It ends (reads 0 bytes) when the server
/// closes the connection; a cut connection is an error of kind `ConnectionReset`.
pub(crate) struct ChannelReader {
    rx: mpsc::Receiver<Bytes>,
    chunk: Bytes,
    skip: usize,
    connection: Connection,
}

impl ChannelReader {
    /// The next message's data, `None` at the end (an error when the connection was cut).
    pub(crate) async fn next_chunk(&mut self) -> io::Result<Option<Bytes>> {
        if !self.chunk.is_empty() {
            return Ok(Some(std::mem::take(&mut self.chunk)));
        }
        std::future::poll_fn(|cx| self.poll_chunk(cx)).await
    }

    fn poll_chunk(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<Option<Bytes>>> {
        loop {
            match ready!(self.rx.poll_recv(cx)) {
                Some(mut data) => {
                    if self.skip > 0 {
                        let n = self.skip.min(data.len());
                        self.skip -= n;
                        data = data.slice(n..);
                    }
                    if !data.is_empty() {
                        return Poll::Ready(Ok(Some(data)));
                    }
                }
                None => {
                    return Poll::Ready(match self.connection.ended() {
                        Ended::Cut(why) => Err(io::Error::new(io::ErrorKind::ConnectionReset, why)),
                        _ => Ok(None),
                    });
                }
            }
        }
    }
}

impl AsyncRead for ChannelReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.chunk.is_empty() {
            match ready!(self.poll_chunk(cx))? {
                Some(data) => self.chunk = data,
                None => return Poll::Ready(Ok(())),
            }
        }
        let n = self.chunk.len().min(buf.remaining());
        buf.put_slice(&self.chunk.split_to(n));
        Poll::Ready(Ok(()))
    }
}

impl std::fmt::Debug for ChannelReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelReader").finish_non_exhaustive()
    }
}

/// Data written to one channel as an [`AsyncWrite`]: each write becomes a message of at most
/// [`MAX_WRITE`] bytes, queued for the writer task (a full queue makes the write wait).
pub(crate) struct ChannelWriter {
    id: u8,
    sender: PollSender<Message>,
    close_signal: Option<Bytes>,
    connection: Connection,
}

impl ChannelWriter {
    fn closed_error(&self) -> io::Error {
        match self.connection.ended() {
            Ended::Cut(why) => io::Error::new(io::ErrorKind::ConnectionReset, why),
            _ => io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the connection is closed: the remote process has ended",
            ),
        }
    }
}

impl AsyncWrite for ChannelWriter {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        if self.sender.is_closed() || self.connection.ended() != Ended::Open {
            return Poll::Ready(Err(self.closed_error()));
        }
        if ready!(self.sender.poll_reserve(cx)).is_err() {
            return Poll::Ready(Err(self.closed_error()));
        }
        let n = buf.len().min(MAX_WRITE);
        let mut message = Vec::with_capacity(n + 1);
        message.push(self.id);
        message.extend_from_slice(&buf[..n]);
        if self
            .sender
            .send_item(Message::Binary(message.into()))
            .is_err()
        {
            return Poll::Ready(Err(self.closed_error()));
        }
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Messages are sent by the writer task in order; there is no buffer here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(signal) = self.close_signal.clone() else {
            self.sender.close();
            return Poll::Ready(Ok(()));
        };
        if ready!(self.sender.poll_reserve(cx)).is_ok() {
            let _ = self.sender.send_item(Message::Binary(signal));
        }
        self.close_signal = None;
        self.sender.close();
        Poll::Ready(Ok(()))
    }
}

impl Drop for ChannelWriter {
    fn drop(&mut self) {
        // Dropping the writer closes the channel as shutting it down does, as dropping a
        // child's stdin closes the pipe.
        let Some(signal) = self.close_signal.take() else {
            return;
        };
        let Some(sender) = self.sender.get_ref().cloned() else {
            return;
        };
        if let Err(mpsc::error::TrySendError::Full(message)) =
            sender.try_send(Message::Binary(signal))
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            runtime.spawn(async move {
                let _ = sender.send(message).await;
            });
        }
    }
}

impl std::fmt::Debug for ChannelWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChannelWriter")
            .field("channel", &self.id)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio_tungstenite::tungstenite::Message;

    use super::*;
    use crate::websocket_test_server::WebSocketTestServer;
    use crate::{Client, Config};

    const QUICK: Heartbeat = Heartbeat {
        period: Duration::from_millis(100),
        deadline: Duration::from_secs(1),
    };

    /// Bounds a wait that would otherwise hang the test.
    const LONG: Duration = Duration::from_secs(30);

    fn v5(_: &str) -> Option<&'static str> {
        Some("v5.channel.k8s.io")
    }

    async fn connect(port: u16) -> WebSocket {
        let mut config = Config::new(format!("http://127.0.0.1:{port}"));
        config.qps = -1.0;
        Client::new(config)
            .unwrap()
            .get()
            .abs_path("/stream")
            .upgrade_websocket(&["v5.channel.k8s.io"])
            .await
            .unwrap()
    }

    /// A server that stops answering (a dead node, a dropped NAT entry) is a cut once nothing
    /// arrived for the deadline, for a reader and for a writer waiting on the full connection
    /// alike, instead of a hang.
    #[tokio::test]
    async fn a_silent_connection_is_cut_after_the_read_deadline() {
        let server = WebSocketTestServer::start(v5, |ws| async move {
            // Holds the connection without reading or writing.
            std::future::pending::<()>().await;
            drop(ws);
        })
        .await;
        let mux = ChannelMux::start_with(connect(server.port).await, &[1], 0, QUICK);
        let mut reader = mux.take_reader(1).unwrap();
        let mut writer = mux.writer(0, None);
        let writing = tokio::spawn(async move {
            let chunk = vec![7u8; MAX_WRITE];
            loop {
                if let Err(e) = writer.write_all(&chunk).await {
                    return e;
                }
            }
        });
        let err = tokio::time::timeout(LONG, reader.read_to_end(&mut Vec::new()))
            .await
            .expect("the silent connection was never found out: the read hangs")
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset, "{err}");
        assert!(err.to_string().contains("nothing arrived"), "{err}");
        let err = tokio::time::timeout(LONG, writing)
            .await
            .expect("a write on the silent connection hangs")
            .unwrap();
        assert_eq!(err.kind(), io::ErrorKind::ConnectionReset, "{err}");
    }

    /// The server's close frame is answered with one (RFC 6455; gorilla's close handler does
    /// it for client-go), so its closing handshake completes while the client still holds
    /// its handles.
    #[tokio::test]
    async fn the_servers_close_frame_is_answered() {
        let server = WebSocketTestServer::start(v5, |mut ws| async move {
            ws.send(Message::Binary(b"\x01bye".to_vec().into()))
                .await
                .unwrap();
            ws.close(None).await.unwrap();
            let reply = tokio::time::timeout(LONG, ws.next()).await;
            assert!(
                matches!(reply, Ok(Some(Ok(Message::Close(_))))),
                "no close frame in reply: {reply:?}"
            );
        })
        .await;
        let mux = ChannelMux::start(connect(server.port).await, &[1], 0);
        let mut out = Vec::new();
        let mut reader = mux.take_reader(1).unwrap();
        reader.read_to_end(&mut out).await.unwrap();
        assert_eq!(out, b"bye");
        server.task.await.unwrap();
        drop((reader, mux));
    }

    /// Shutting down the last writer (a port stream's write side, stdin under v4, the owner's
    /// handle gone) stops writing only: the connection stays open for the readers still held,
    /// and what the server sends afterwards arrives. The server here answers only once it has
    /// seen what the client sends after its data: under the bug a close frame, which ended the
    /// readers' streams before the answer; else the first heartbeat ping.
    #[tokio::test]
    async fn the_last_writer_gone_leaves_the_readers_their_data() {
        let server = WebSocketTestServer::start(v5, |mut ws| async move {
            let Some(Ok(Message::Binary(data))) = ws.next().await else {
                panic!("no data");
            };
            assert_eq!(&data[..], b"\x00request");
            match ws.next().await {
                Some(Ok(Message::Ping(_))) => {}
                other => panic!("the client ended the connection: {other:?}"),
            }
            ws.send(Message::Binary(b"\x01answer".to_vec().into()))
                .await
                .unwrap();
            ws.close(None).await.unwrap();
            while let Some(Ok(_)) = ws.next().await {}
        })
        .await;
        let mux = ChannelMux::start_with(connect(server.port).await, &[1], 0, QUICK);
        let mut reader = mux.take_reader(1).unwrap();
        let mut writer = mux.writer(0, None);
        drop(mux);
        writer.write_all(b"request").await.unwrap();
        writer.shutdown().await.unwrap();
        drop(writer);
        let mut out = Vec::new();
        tokio::time::timeout(LONG, reader.read_to_end(&mut out))
            .await
            .expect("the connection ends")
            .expect("the server's answer, then a clean end");
        assert_eq!(out, b"answer");
        server.task.await.unwrap();
    }

    /// A server that answers pings keeps a quiet connection open past many deadlines; the
    /// pings go out every period.
    #[tokio::test]
    async fn pings_keep_a_quiet_connection_open() {
        let server = WebSocketTestServer::start(v5, |mut ws| async move {
            // Reads (tungstenite answers each ping as it reads) for three deadlines.
            let mut pings = 0;
            let until = tokio::time::Instant::now() + 3 * QUICK.deadline;
            while let Ok(Some(Ok(message))) = tokio::time::timeout_at(until, ws.next()).await {
                if matches!(message, Message::Ping(_)) {
                    pings += 1;
                }
            }
            let mut data = vec![1];
            data.extend_from_slice(format!("{pings}").as_bytes());
            ws.send(Message::Binary(data.into())).await.unwrap();
            ws.close(None).await.unwrap();
            // Reads on to the client's close reply: a ping left unread when the socket closes
            // would make the kernel reset the connection.
            while let Some(Ok(_)) = ws.next().await {}
        })
        .await;
        let mux = ChannelMux::start_with(connect(server.port).await, &[1], 0, QUICK);
        let mut out = String::new();
        tokio::time::timeout(LONG, mux.take_reader(1).unwrap().read_to_string(&mut out))
            .await
            .expect("the connection ends")
            .unwrap_or_else(|e| panic!("the quiet connection was cut: {e}"));
        let pings: u32 = out.parse().unwrap();
        assert!(pings >= 5, "{pings} pings in 3 s at a period of 100 ms");
        server.task.await.unwrap();
    }
}
