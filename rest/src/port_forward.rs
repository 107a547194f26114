//! Port-forward over WebSocket: one bidirectional byte stream per pod port, and a listener
//! that forwards local ports as `kubectl port-forward` does (client-go's `tools/portforward`).
//!
//! Protocol (the kubelet's `v4.channel.k8s.io` port-forward, which kube-apiserver passes
//! through to the node): the request names its ports (`?ports=8080&ports=9090`); port `i` has
//! data channel `2i` (both ways) and error channel `2i+1` (from the server), and the server
//! starts both with the port number as two little-endian bytes, which are dropped here. When
//! the connection to the pod's port fails, the server writes the reason on the error channel;
//! the [`PortStream`] then ends with that error instead of a plain end of file.
//!
//! One WebSocket carries one connection per port: the protocol has no way to open another or
//! to end one direction only, so [`PortForwardListener`] opens a WebSocket per accepted local
//! connection and closes it when the pod's side ends, or when the local side fails. A local
//! client that only shuts down its writing end (a request sent, the answer awaited) still gets
//! the answer, as with client-go, though the pod sees no end of its input. (client-go's
//! tunnelled SPDY can half-close; see ARCHITECTURE.md for why SPDY is left out.)

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use futures_core::future::BoxFuture;
use kclient_apimachinery::Error;
use kclient_flowcontrol::AcceptBackoff;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::channel::{ChannelMux, ChannelReader, ChannelWriter};
use crate::request::Request;

/// The port-forward subprotocol.
pub const PORT_FORWARD_PROTOCOL_V4: &str = "v4.channel.k8s.io";

/// The most bytes of a port's error message kept.
const MAX_ERROR: usize = 64 * 1024;

impl Request {
    /// Upgrades a `pods/{name}/portforward` request to a WebSocket with one stream per port
    /// (see the [module docs](crate::port_forward)).
    pub async fn port_forward(self, ports: &[u16]) -> Result<PortForwarder, Error> {
        if ports.is_empty() {
            return Err(Error::invalid_request(
                "port-forward needs at least one port",
            ));
        }
        if ports.contains(&0) {
            return Err(Error::invalid_request("port 0 cannot be forwarded"));
        }
        if ports.len() > 127 {
            return Err(Error::invalid_request(
                "at most 127 ports fit in one port-forward connection (two channels each)",
            ));
        }
        let mut request = self;
        for port in ports {
            request = request.param("ports", port.to_string());
        }
        let ws = request
            .upgrade_websocket(&[PORT_FORWARD_PROTOCOL_V4])
            .await?;
        let channels: Vec<u8> = (0..ports.len() * 2)
            .filter_map(|c| u8::try_from(c).ok())
            .collect();
        let mux = ChannelMux::start(ws, &channels, 2);
        let streams = ports
            .iter()
            .enumerate()
            .map(|(i, &port)| {
                let data = u8::try_from(2 * i).unwrap_or(u8::MAX);
                Some(PortStream {
                    port,
                    reader: mux.take_reader(data),
                    writer: mux.writer(data, None),
                    errors: mux.take_reader(data.saturating_add(1)),
                    error_text: Vec::new(),
                })
            })
            .collect();
        Ok(PortForwarder {
            ports: ports.to_vec(),
            streams,
            _mux: mux,
        })
    }
}

/// An open port-forward connection: one [`PortStream`] per port asked for. The connection has
/// one reader, and each port queues at most 16 messages: take every port's stream and read it
/// (or drop it, which discards its data), or a port whose data nobody reads holds up the
/// others.
pub struct PortForwarder {
    ports: Vec<u16>,
    streams: Vec<Option<PortStream>>,
    _mux: ChannelMux,
}

impl PortForwarder {
    /// The stream to `port` (once). The connection stays open while any stream or the
    /// forwarder lives.
    pub fn take_stream(&mut self, port: u16) -> Option<PortStream> {
        let i = self.ports.iter().position(|p| *p == port)?;
        self.streams.get_mut(i)?.take()
    }
}

impl std::fmt::Debug for PortForwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortForwarder")
            .field("ports", &self.ports)
            .finish_non_exhaustive()
    }
}

/// A byte stream to one port of a pod: [`AsyncRead`] and [`AsyncWrite`], like a TCP
/// connection to it. It ends when the pod's side closes; an error the server reports for the
/// port (nothing listens there) is a read error as soon as it arrives, even while other ports
/// of the connection are still in use, and so is a cut connection.
pub struct PortStream {
    port: u16,
    reader: Option<ChannelReader>,
    writer: ChannelWriter,
    errors: Option<ChannelReader>,
    error_text: Vec<u8>,
}

impl PortStream {
    /// The pod's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// While the data has not ended: the server's error for this port if it has arrived,
    /// which ends the stream; else `Pending` (the error channel's waker is registered too).
    fn poll_early_error(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(errors) = self.errors.as_mut() else {
            return Poll::Pending;
        };
        loop {
            let mut buf = [0u8; 4096];
            let mut read = ReadBuf::new(&mut buf);
            match Pin::new(&mut *errors).poll_read(cx, &mut read) {
                Poll::Ready(Ok(())) if !read.filled().is_empty() => {
                    let room = MAX_ERROR.saturating_sub(self.error_text.len());
                    let n = read.filled().len().min(room);
                    self.error_text.extend_from_slice(&read.filled()[..n]);
                }
                // The error channel ended or broke: so does the data, which says how.
                Poll::Ready(_) => {
                    self.errors = None;
                    break;
                }
                Poll::Pending => break,
            }
        }
        if self.error_text.is_empty() {
            return Poll::Pending;
        }
        self.reader = None;
        self.errors = None;
        Poll::Ready(Err(self.port_error()))
    }

    /// The error the server reported for this port.
    fn port_error(&self) -> io::Error {
        io::Error::other(format!(
            "port-forward to port {}: {}",
            self.port,
            String::from_utf8_lossy(&self.error_text)
        ))
    }

    /// After the data ended: the server's error for this port, if it sent one.
    fn poll_error(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let Some(errors) = self.errors.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        loop {
            let mut buf = [0u8; 4096];
            let mut read = ReadBuf::new(&mut buf);
            match ready!(Pin::new(&mut *errors).poll_read(cx, &mut read)) {
                Ok(()) if read.filled().is_empty() => break,
                Ok(()) => {
                    let room = MAX_ERROR.saturating_sub(self.error_text.len());
                    let n = read.filled().len().min(room);
                    self.error_text.extend_from_slice(&read.filled()[..n]);
                }
                Err(e) => {
                    self.errors = None;
                    return Poll::Ready(Err(e));
                }
            }
        }
        self.errors = None;
        if self.error_text.is_empty() {
            return Poll::Ready(Ok(()));
        }
        Poll::Ready(Err(self.port_error()))
    }
}

impl AsyncRead for PortStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        // No room: nothing to read (a reader that filled no byte below means its end).
        if buf.remaining() == 0 {
            return Poll::Ready(Ok(()));
        }
        if let Some(reader) = this.reader.as_mut() {
            let before = buf.filled().len();
            match Pin::new(reader).poll_read(cx, buf) {
                Poll::Ready(Ok(())) if buf.filled().len() > before => return Poll::Ready(Ok(())),
                Poll::Ready(Ok(())) => this.reader = None,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                // No data yet, but the server may have reported this port's failure already:
                // it ends the data channels only when every port of the connection has ended.
                Poll::Pending => return this.poll_early_error(cx),
            }
        }
        this.poll_error(cx)
    }
}

impl AsyncWrite for PortStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.writer).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.writer).poll_flush(cx)
    }

    /// Stops writing; the protocol cannot tell the pod, so its side stays open.
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.writer).poll_shutdown(cx)
    }
}

impl std::fmt::Debug for PortStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortStream")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

/// Opens a new stream to a pod port, for [`PortForwardListener`]: called once per accepted
/// local connection with the pod port.
pub type PortStreamOpener =
    Arc<dyn Fn(u16) -> BoxFuture<'static, Result<PortStream, Error>> + Send + Sync>;

/// Local listeners forwarding to pod ports, as `kubectl port-forward` runs them: each
/// accepted connection gets its own port-forward connection, and bytes are copied both ways
/// until either side ends. A connection that fails is logged and closed; the listener goes on.
/// A listener whose accept fails (other than for one connection) is logged and stops, as
/// client-go's does. Dropping the listener stops it and every forwarded connection.
pub struct PortForwardListener {
    addresses: Vec<(SocketAddr, u16)>,
    tasks: JoinSet<()>,
}

impl PortForwardListener {
    /// Listens on `address:local` for each `(local, remote)` pair (`local` 0 picks a free
    /// port; see [`PortForwardListener::local_addresses`]) and forwards to the pod's
    /// `remote` port through `open`.
    pub async fn bind(
        address: std::net::IpAddr,
        ports: &[(u16, u16)],
        open: PortStreamOpener,
    ) -> Result<PortForwardListener, Error> {
        let mut tasks = JoinSet::new();
        let mut addresses = Vec::new();
        for &(local, remote) in ports {
            let listener = TcpListener::bind((address, local)).await.map_err(|e| {
                Error::invalid_request(format!("cannot listen on {address}:{local}: {e}"))
            })?;
            let bound = listener.local_addr().map_err(|e| {
                Error::invalid_request(format!("cannot listen on {address}:{local}: {e}"))
            })?;
            addresses.push((bound, remote));
            let open = open.clone();
            tasks.spawn(accept_loop(listener, remote, open));
        }
        Ok(PortForwardListener { addresses, tasks })
    }

    /// The local addresses listened on, each with the pod port it forwards to.
    pub fn local_addresses(&self) -> &[(SocketAddr, u16)] {
        &self.addresses
    }

    /// Runs until a listener fails (it does not otherwise end): its accept failed other than
    /// for one connection (no file descriptor left, for example), which is logged. The other
    /// listeners stop then too, as when the listener is dropped.
    pub async fn wait(mut self) {
        self.tasks.join_next().await;
    }
}

impl std::fmt::Debug for PortForwardListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PortForwardListener")
            .field("addresses", &self.addresses)
            .finish_non_exhaustive()
    }
}

async fn accept_loop(listener: TcpListener, remote: u16, open: PortStreamOpener) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (socket, peer) = match accepted {
                    Ok(a) => a,
                    // A connection that went away before it was accepted.
                    Err(e) if AcceptBackoff::is_per_connection(&e) => continue,
                    // A failure of the listener (no file descriptor left): trying again at once
                    // would only fail again, in a busy loop. Stop, as client-go's does.
                    Err(e) => {
                        tracing::error!(
                            address = ?listener.local_addr().ok(),
                            port = remote,
                            error = %e,
                            "port-forward: accepting a local connection failed; the listener stops"
                        );
                        return;
                    }
                };
                let open = open.clone();
                connections.spawn(async move {
                    if let Err(e) = forward(socket, remote, open).await {
                        tracing::warn!(%peer, port = remote, error = %e, "port-forward connection failed");
                    }
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

/// Copies between a local socket and a new stream to the pod until the pod's side ends or
/// either side fails. The local side ending its writes ends only that direction: the pod's
/// answer still goes back (client-go's `handleConnection` waits for the remote side too).
async fn forward(
    socket: tokio::net::TcpStream,
    remote: u16,
    open: PortStreamOpener,
) -> Result<(), Error> {
    use tokio::io::AsyncWriteExt as _;
    let _ = socket.set_nodelay(true);
    let stream = open(remote).await?;
    let (mut local_read, mut local_write) = socket.into_split();
    let (mut pod_read, mut pod_write) = tokio::io::split(stream);
    let to_pod = async {
        tokio::io::copy(&mut local_read, &mut pod_write).await?;
        let _ = pod_write.shutdown().await;
        // Done sending; the other direction decides when the connection ends.
        std::future::pending::<io::Result<()>>().await
    };
    let to_local = async {
        tokio::io::copy(&mut pod_read, &mut local_write).await?;
        local_write.shutdown().await
    };
    tokio::select! {
        r = to_pod => r,
        r = to_local => r,
    }
    .map_err(Error::other)
}

#[cfg(test)]
mod tests {
    use futures_util::{SinkExt as _, StreamExt as _};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    use tokio_tungstenite::tungstenite::Message;

    use super::*;
    use crate::websocket_test_server::WebSocketTestServer;
    use crate::{Client, Config};

    /// A client of the test server, without rate limits.
    fn client_of(server: &WebSocketTestServer) -> Client {
        let mut config = Config::new(format!("http://127.0.0.1:{}", server.port));
        config.qps = -1.0;
        Client::new(config).unwrap()
    }

    /// Port-forwards `ports` of pod `ns/p`.
    async fn forward_ports(client: &Client, ports: &[u16]) -> Result<PortForwarder, Error> {
        client
            .get()
            .group_version("", "v1")
            .namespace("ns")
            .resource("pods")
            .name("p")
            .subresource("portforward")
            .port_forward(ports)
            .await
    }

    fn frame(channel: u8, data: &[u8]) -> Message {
        let mut v = vec![channel];
        v.extend_from_slice(data);
        Message::Binary(v.into())
    }

    /// Port 80 echoes in upper case; port 81 has nothing listening, so the server reports an
    /// error on its error channel. The port prefixes arrive split across messages.
    async fn kubelet_like(mut ws: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>) {
        for (c, port) in [(0u8, 80u16), (1, 80), (2, 81), (3, 81)] {
            let b = port.to_le_bytes();
            ws.send(frame(c, &b[..1])).await.unwrap();
            ws.send(frame(c, &b[1..])).await.unwrap();
        }
        ws.send(frame(3, b"connection refused")).await.unwrap();
        while let Some(Ok(Message::Binary(data))) = ws.next().await {
            if data.first() == Some(&0) {
                ws.send(frame(0, &data[1..].to_ascii_uppercase()))
                    .await
                    .unwrap();
                if data.ends_with(b"bye") {
                    break;
                }
            }
        }
        ws.close(None).await.unwrap();
    }

    #[tokio::test]
    async fn one_stream_per_port_and_the_servers_error_for_a_port() {
        let server =
            WebSocketTestServer::start(|_| Some(PORT_FORWARD_PROTOCOL_V4), kubelet_like).await;
        let client = client_of(&server);
        let mut forwarder = forward_ports(&client, &[80, 81]).await.unwrap();
        let mut web = forwarder.take_stream(80).unwrap();
        let mut closed = forwarder.take_stream(81).unwrap();
        assert!(forwarder.take_stream(80).is_none());
        web.write_all(b"hello ").await.unwrap();
        let mut buf = [0u8; 6];
        web.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"HELLO ");
        web.write_all(b"bye").await.unwrap();
        let mut rest = Vec::new();
        web.read_to_end(&mut rest).await.unwrap();
        assert_eq!(rest, b"BYE");
        let err = closed.read_to_end(&mut Vec::new()).await.unwrap_err();
        assert!(
            err.to_string().contains("port 81: connection refused"),
            "{err}"
        );
        let seen = server.seen.lock().clone().unwrap();
        assert_eq!(
            seen.path_and_query,
            "/api/v1/namespaces/ns/pods/p/portforward?ports=80&ports=81"
        );
    }

    /// The server reports one port's failure while another port of the same connection is
    /// still in use (it ends the data channels only when every port has ended): reading the
    /// failed port's stream returns the error then, not only once the other port is done.
    #[tokio::test]
    async fn a_ports_error_arrives_while_another_port_is_in_use() {
        let server = WebSocketTestServer::start(
            |_| Some(PORT_FORWARD_PROTOCOL_V4),
            |mut ws| async move {
                for (c, port) in [(0u8, 80u16), (1, 80), (2, 81), (3, 81)] {
                    ws.send(frame(c, &port.to_le_bytes())).await.unwrap();
                }
                ws.send(frame(3, b"connection refused")).await.unwrap();
                // Port 80 stays in use until the client is done with it.
                while let Some(Ok(message)) = ws.next().await {
                    if let Message::Binary(data) = message
                        && data.first() == Some(&0)
                        && data.ends_with(b"bye")
                    {
                        break;
                    }
                }
                ws.close(None).await.unwrap();
            },
        )
        .await;
        let client = client_of(&server);
        let mut forwarder = client
            .get()
            .abs_path("/api/v1/namespaces/ns/pods/p/portforward")
            .port_forward(&[80, 81])
            .await
            .unwrap();
        let mut busy = forwarder.take_stream(80).unwrap();
        let mut refused = forwarder.take_stream(81).unwrap();
        let err = tokio::time::timeout(
            std::time::Duration::from_secs(30),
            refused.read_to_end(&mut Vec::new()),
        )
        .await
        .expect("the error for port 81 waits until port 80 is done")
        .unwrap_err();
        assert!(
            err.to_string().contains("port 81: connection refused"),
            "{err}"
        );
        // The stream has ended: later reads see end of file.
        assert_eq!(refused.read(&mut [0u8; 8]).await.unwrap(), 0);
        busy.write_all(b"bye").await.unwrap();
        busy.read_to_end(&mut Vec::new()).await.unwrap();
        server.task.await.unwrap();
    }

    /// A read into a full buffer (zero bytes of room) reads nothing and leaves the stream as it
    /// was, as on a TCP connection: it neither ends the stream nor loses the data that arrived.
    #[tokio::test]
    async fn a_read_with_no_room_loses_nothing() {
        let server = WebSocketTestServer::start(
            |_| Some(PORT_FORWARD_PROTOCOL_V4),
            |mut ws| async move {
                for c in [0u8, 1] {
                    ws.send(frame(c, &80u16.to_le_bytes())).await.unwrap();
                }
                ws.send(frame(0, b"kept")).await.unwrap();
                // Ends only once the client says it has read with no room.
                while let Some(Ok(message)) = ws.next().await {
                    if matches!(message, Message::Binary(ref d) if d[..] == *b"\x00go") {
                        break;
                    }
                }
                ws.send(frame(0, b" and more")).await.unwrap();
                ws.close(None).await.unwrap();
                while let Some(Ok(_)) = ws.next().await {}
            },
        )
        .await;
        let client = client_of(&server);
        let mut stream = client
            .get()
            .abs_path("/api/v1/namespaces/ns/pods/p/portforward")
            .port_forward(&[80])
            .await
            .unwrap()
            .take_stream(80)
            .unwrap();
        // Waits for the first data, so that the read with no room finds it there.
        let mut first = [0u8; 1];
        stream.read_exact(&mut first).await.unwrap();
        let read = tokio::time::timeout(std::time::Duration::from_secs(30), stream.read(&mut []))
            .await
            .expect("a read with no room waits for the end of the connection");
        assert_eq!(read.unwrap(), 0);
        stream.write_all(b"go").await.unwrap();
        let mut rest = Vec::new();
        tokio::time::timeout(
            std::time::Duration::from_secs(30),
            stream.read_to_end(&mut rest),
        )
        .await
        .expect("the stream ends")
        .unwrap();
        assert_eq!(String::from_utf8_lossy(&rest), "ept and more");
        server.task.await.unwrap();
    }

    /// A listener whose accept fails for good (no file descriptor left) ends, logged, as
    /// client-go's does, and `wait` returns, instead of retrying at once forever (a busy loop
    /// that floods the log). Runs itself in a child process with a low descriptor limit.
    #[test]
    fn an_accept_error_ends_the_listener_instead_of_spinning() {
        const CHILD: &str = "KCLIENT_TEST_ACCEPT_ERROR_CHILD";
        const NAME: &str =
            "port_forward::tests::an_accept_error_ends_the_listener_instead_of_spinning";
        if std::env::var_os(CHILD).is_none() {
            let exe = std::env::current_exe().unwrap();
            let out = std::process::Command::new("sh")
                .arg("-c")
                .arg(r#"ulimit -n 128 && exec "$0" "$@""#)
                .arg(exe)
                .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
                .env(CHILD, "1")
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && stdout.contains("1 passed"),
                "{stdout}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            return;
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let open: PortStreamOpener =
                Arc::new(|_| Box::pin(async { Err(Error::invalid_request("not reached")) }));
            let listener =
                PortForwardListener::bind("127.0.0.1".parse().unwrap(), &[(0, 80)], open)
                    .await
                    .unwrap();
            let address = listener.local_addresses()[0].0;
            // Every descriptor left goes to a connection waiting in the listener's backlog,
            // so its next accept finds none.
            let mut held = Vec::new();
            while let Ok(conn) = std::net::TcpStream::connect(address) {
                held.push(conn);
                assert!(held.len() < 1000, "the descriptor limit is not in force");
            }
            tokio::time::timeout(std::time::Duration::from_secs(20), listener.wait())
                .await
                .expect("the listener retries its failing accept forever");
        });
    }

    /// Answers the first data message on port 80 after a while, in upper case, then closes.
    async fn slow_answer(mut ws: tokio_tungstenite::WebSocketStream<tokio::net::TcpStream>) {
        for c in [0u8, 1] {
            ws.send(frame(c, &80u16.to_le_bytes())).await.unwrap();
        }
        while let Some(Ok(Message::Binary(data))) = ws.next().await {
            if data.first() == Some(&0) && data.len() > 1 {
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                ws.send(frame(0, &data[1..].to_ascii_uppercase()))
                    .await
                    .unwrap();
                break;
            }
        }
        ws.close(None).await.unwrap();
    }

    /// A local client that sends its request and shuts down its writing end (as `nc -N` or
    /// an HTTP/1.0 client does) still gets the pod's answer.
    #[tokio::test]
    async fn a_local_half_close_still_gets_the_answer() {
        let server =
            WebSocketTestServer::start(|_| Some(PORT_FORWARD_PROTOCOL_V4), slow_answer).await;
        let client = client_of(&server);
        let open: PortStreamOpener = Arc::new(move |port| {
            let client = client.clone();
            Box::pin(async move {
                let mut forwarder = forward_ports(&client, &[port]).await?;
                Ok(forwarder.take_stream(port).expect("the port's stream"))
            })
        });
        let listener = PortForwardListener::bind("127.0.0.1".parse().unwrap(), &[(0, 80)], open)
            .await
            .unwrap();
        let address = listener.local_addresses()[0].0;
        let mut local = tokio::net::TcpStream::connect(address).await.unwrap();
        local.write_all(b"get /").await.unwrap();
        local.shutdown().await.unwrap();
        let mut answer = Vec::new();
        tokio::time::timeout(
            std::time::Duration::from_secs(10),
            local.read_to_end(&mut answer),
        )
        .await
        .expect("the answer within 10 s")
        .unwrap();
        assert_eq!(answer, b"GET /");
    }

    #[tokio::test]
    async fn bad_port_lists_are_refused_before_sending() {
        let client = Client::new(Config::new("http://127.0.0.1:1")).unwrap();
        for ports in [&[][..], &[0][..]] {
            let err = client
                .get()
                .abs_path("/x")
                .port_forward(ports)
                .await
                .unwrap_err();
            assert!(err.is_invalid_request(), "{err:?}");
        }
    }
}
