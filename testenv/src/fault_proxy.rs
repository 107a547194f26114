//! [`FaultProxy`]: a loopback TCP proxy in front of the local apiserver that injects network
//! faults on command, for tests of how clients and informers survive them.

use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use kclient_rest::{Client, Config};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;

use crate::{Identity, TestEnv};

/// How long [`FaultProxy::cut_all`] waits for the connections it closes to be gone.
const CUT_TIMEOUT: Duration = Duration::from_secs(10);

/// `Shared::cut_after` when no cut is armed.
const CUT_AFTER_OFF: u64 = u64::MAX;

/// The size of the TLS record header: content type (1), version (2), payload length (2).
const TLS_RECORD_HEADER: usize = 5;

impl TestEnv {
    /// Starts a [`FaultProxy`] in front of this apiserver.
    ///
    /// # Panics
    ///
    /// As [`FaultProxy::start`].
    pub async fn fault_proxy(&self) -> FaultProxy {
        FaultProxy::start(self).await
    }
}

/// A loopback TCP proxy in front of the testenv apiserver that cuts, refuses, stalls or
/// corrupts connections on command.
///
/// The proxy forwards raw bytes: TLS stays end to end between the client and the apiserver
/// (the serving certificate covers `127.0.0.1`, so a client pointed at the proxy's port on
/// `127.0.0.1` verifies the real server). The faults:
///
/// - [`FaultProxy::cut_all`]: every open connection is closed on both sides at once, as when a
///   network path or a load balancer fails;
/// - [`FaultProxy::refuse`]: while set, new connections are accepted and closed at once;
/// - [`FaultProxy::stall`]: while set, no byte is forwarded in either direction, and
///   connections stay open (a black hole);
/// - [`FaultProxy::corrupt_next_server_bytes`]: bytes the server sends are flipped, which
///   breaks the TLS record they belong to;
/// - [`FaultProxy::cut_after_server_bytes`]: the connection that carries the `n`-th next byte
///   from the server is closed right after it, wherever that falls (inside a TLS record, a
///   response, a watch's initial events).
///
/// Counters ([`FaultProxy::connections_accepted`], [`FaultProxy::open_connections`], ...) let
/// a test prove that a fault actually hit a connection.
///
/// The proxy runs on tasks of the runtime it was started on and stops when dropped: its
/// listener closes and every connection it holds is closed.
///
/// ```no_run
/// # async fn example() {
/// use kclient_testenv::{Identity, TestEnv};
///
/// let env = TestEnv::connect().await;
/// let proxy = env.fault_proxy().await;
/// let client = proxy.client(Identity::Admin);
/// client.get_raw("/readyz").await.expect("through the proxy");
/// assert_eq!(proxy.cut_all().await, 1, "the client's one connection");
/// proxy.refuse(true);
/// let err = client.get().abs_path("/readyz").max_retries(0).bytes().await.unwrap_err();
/// assert!(err.is_transport(), "{err}");
/// # }
/// ```
pub struct FaultProxy {
    env: TestEnv,
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_task: JoinHandle<()>,
}

/// What the accept loop, the connection tasks and the handle share.
struct Shared {
    upstream: SocketAddr,
    /// Set when the handle is dropped.
    stopped: AtomicBool,
    refuse: AtomicBool,
    stall: watch::Sender<bool>,
    /// Server bytes still to flip.
    corrupt: AtomicUsize,
    /// Server bytes still to forward before a connection is cut; `u64::MAX` when off.
    cut_after: AtomicU64,
    /// The open connections: the switch that closes each, and its task.
    conns: Mutex<HashMap<u64, Connection>>,
    next_id: AtomicU64,
    accepted: AtomicU64,
    refused: AtomicU64,
    open: AtomicUsize,
    cut: AtomicU64,
    upstream_failures: AtomicU64,
    bytes_to_server: AtomicU64,
    bytes_to_client: AtomicU64,
    corrupted: AtomicU64,
}

struct Connection {
    close: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Shared {
    fn conns(&self) -> MutexGuard<'_, HashMap<u64, Connection>> {
        // A panic while holding this lock leaves the map consistent: use it anyway.
        self.conns.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes every connection without waiting (for `Drop`).
    fn close_all(&self) {
        let conns: Vec<Connection> = self.conns().drain().map(|(_, c)| c).collect();
        for conn in conns {
            let _ = conn.close.send(());
            conn.task.abort();
        }
    }
}

/// Decrements the open-connection count when a connection task ends, however it ends.
struct OpenGuard(Arc<Shared>, u64);

impl Drop for OpenGuard {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::SeqCst);
        self.0.conns().remove(&self.1);
    }
}

impl FaultProxy {
    /// Starts a proxy on a free port of `127.0.0.1` forwarding to `env`'s apiserver, on the
    /// current tokio runtime.
    ///
    /// # Panics
    ///
    /// When the apiserver's address cannot be read from its kubeconfig or resolved, or no
    /// local port can be bound.
    pub async fn start(env: &TestEnv) -> FaultProxy {
        let host = env.config(Identity::Admin).host;
        let authority = authority_of(&host)
            .unwrap_or_else(|| panic!("cannot find host:port in the apiserver URL {host:?}"));
        let upstream = tokio::net::lookup_host(authority)
            .await
            .ok()
            .and_then(|mut addrs| addrs.next())
            .unwrap_or_else(|| panic!("cannot resolve the apiserver address {authority:?}"));
        FaultProxy::listen(env.clone(), upstream).await
    }

    async fn listen(env: TestEnv, upstream: SocketAddr) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .unwrap_or_else(|e| panic!("binding the fault proxy on 127.0.0.1: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("the fault proxy's local address: {e}"));
        let shared = Arc::new(Shared {
            upstream,
            stopped: AtomicBool::new(false),
            refuse: AtomicBool::new(false),
            stall: watch::Sender::new(false),
            corrupt: AtomicUsize::new(0),
            cut_after: AtomicU64::new(CUT_AFTER_OFF),
            conns: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(0),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            open: AtomicUsize::new(0),
            cut: AtomicU64::new(0),
            upstream_failures: AtomicU64::new(0),
            bytes_to_server: AtomicU64::new(0),
            bytes_to_client: AtomicU64::new(0),
            corrupted: AtomicU64::new(0),
        });
        let accept_task = tokio::spawn(accept_loop(listener, shared.clone()));
        FaultProxy {
            env,
            addr,
            shared,
            accept_task,
        }
    }

    /// The proxy's address on `127.0.0.1`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The apiserver's address the proxy forwards to.
    pub fn upstream_addr(&self) -> SocketAddr {
        self.shared.upstream
    }

    /// `identity`'s configuration with its host pointed at the proxy (scheme and any path
    /// prefix kept). When the apiserver was addressed by name, that name is kept as the TLS
    /// server name so its certificate still verifies.
    pub fn config(&self, identity: Identity) -> Config {
        let mut config = self.env.config(identity);
        if let Some(authority) = authority_of(&config.host).map(str::to_owned) {
            let authority = authority.as_str();
            let host_only = authority
                .rsplit_once(':')
                .map_or(authority, |(h, _)| h)
                .trim_start_matches('[')
                .trim_end_matches(']');
            if host_only.parse::<std::net::IpAddr>().is_err() && config.tls.server_name.is_none() {
                config.tls.server_name = Some(host_only.to_owned());
            }
            config.host = config.host.replacen(authority, &self.addr.to_string(), 1);
        }
        config
    }

    /// A REST client for `identity` whose every connection goes through the proxy.
    ///
    /// # Panics
    ///
    /// When the configuration cannot be turned into a client.
    pub fn client(&self, identity: Identity) -> Client {
        Client::new(self.config(identity))
            .unwrap_or_else(|e| panic!("building a client through the fault proxy: {e}"))
    }

    /// Closes every open connection on both sides at once and returns how many there were.
    /// When it returns, those connections are closed (new ones may already be open).
    ///
    /// # Panics
    ///
    /// When a connection task does not end within 10 s.
    pub async fn cut_all(&self) -> usize {
        let conns: Vec<Connection> = self.shared.conns().drain().map(|(_, c)| c).collect();
        let mut count = 0;
        let mut tasks = Vec::with_capacity(conns.len());
        for conn in conns {
            // A task that already ended dropped its receiver: nothing to close.
            if conn.close.send(()).is_ok() {
                count += 1;
            }
            tasks.push(conn.task);
        }
        for task in tasks {
            // A connection task never panics; a join error could only be a cancellation.
            let _ = tokio::time::timeout(CUT_TIMEOUT, task)
                .await
                .unwrap_or_else(|_| panic!("a proxied connection did not close within 10s"));
        }
        self.shared.cut.fetch_add(count as u64, Ordering::SeqCst);
        count
    }

    /// While `true`, new connections are accepted and closed at once (the client sees its TLS
    /// handshake end early). Open connections are not affected.
    pub fn refuse(&self, refuse: bool) {
        self.shared.refuse.store(refuse, Ordering::SeqCst);
    }

    /// While `true`, no byte is forwarded in either direction; connections stay open and new
    /// ones are accepted (and also stall). Bytes already read are held and forwarded, in
    /// order, once the stall ends.
    pub fn stall(&self, stall: bool) {
        self.shared.stall.send_replace(stall);
    }

    /// Flips (XOR `0xff`) the next `n` bytes the server sends, on whichever connections carry
    /// them, skipping TLS record headers: each corrupted record arrives whole but fails its
    /// integrity check (or, in the handshake, does not parse), so the client must report a
    /// TLS error rather than wait for bytes that never come.
    pub fn corrupt_next_server_bytes(&self, n: usize) {
        self.shared.corrupt.store(n, Ordering::SeqCst);
    }

    /// Forwards `n` more bytes from the server (over all connections), then closes the
    /// connection that carried the last of them on both sides, as [`FaultProxy::cut_all`]
    /// does; then disarms. `n` is counted in TLS bytes, so the cut can fall anywhere: in a
    /// record, in a response body, among a watch's events. Counted in
    /// [`FaultProxy::connections_cut`].
    pub fn cut_after_server_bytes(&self, n: u64) {
        self.shared
            .cut_after
            .store(n.min(CUT_AFTER_OFF - 1), Ordering::SeqCst);
    }

    /// Connections accepted so far, refused ones included.
    pub fn connections_accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }

    /// Connections closed at once because [`FaultProxy::refuse`] was set.
    pub fn connections_refused(&self) -> u64 {
        self.shared.refused.load(Ordering::SeqCst)
    }

    /// Connections currently open (forwarding, stalled, or connecting to the apiserver).
    pub fn open_connections(&self) -> usize {
        self.shared.open.load(Ordering::SeqCst)
    }

    /// Connections closed by [`FaultProxy::cut_all`] and [`FaultProxy::cut_after_server_bytes`]
    /// so far.
    pub fn connections_cut(&self) -> u64 {
        self.shared.cut.load(Ordering::SeqCst)
    }

    /// Connections closed because the apiserver could not be reached.
    pub fn upstream_failures(&self) -> u64 {
        self.shared.upstream_failures.load(Ordering::SeqCst)
    }

    /// Bytes forwarded from clients to the apiserver.
    pub fn bytes_to_server(&self) -> u64 {
        self.shared.bytes_to_server.load(Ordering::SeqCst)
    }

    /// Bytes forwarded from the apiserver to clients.
    pub fn bytes_to_client(&self) -> u64 {
        self.shared.bytes_to_client.load(Ordering::SeqCst)
    }

    /// Server bytes flipped by [`FaultProxy::corrupt_next_server_bytes`] so far.
    pub fn corrupted_bytes(&self) -> u64 {
        self.shared.corrupted.load(Ordering::SeqCst)
    }
}

impl fmt::Debug for FaultProxy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultProxy")
            .field("addr", &self.addr)
            .field("upstream", &self.shared.upstream)
            .field("refuse", &self.shared.refuse.load(Ordering::SeqCst))
            .field("stall", &*self.shared.stall.borrow())
            .field("accepted", &self.connections_accepted())
            .field("open", &self.open_connections())
            .finish_non_exhaustive()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.shared.stopped.store(true, Ordering::SeqCst);
        self.accept_task.abort();
        self.shared.close_all();
    }
}

/// The `host:port` of an `https://host:port/prefix` URL.
fn authority_of(url: &str) -> Option<&str> {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split('/').next()?;
    (!authority.is_empty()).then_some(authority)
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        let client = match listener.accept().await {
            Ok((client, _)) => client,
            Err(e) => {
                // Out of file descriptors and the like: try again shortly.
                eprintln!("kclient-testenv: fault proxy accept: {e}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        shared.accepted.fetch_add(1, Ordering::SeqCst);
        if shared.refuse.load(Ordering::SeqCst) {
            shared.refused.fetch_add(1, Ordering::SeqCst);
            drop(client);
            continue;
        }
        let id = shared.next_id.fetch_add(1, Ordering::SeqCst);
        let (close, closed) = oneshot::channel();
        shared.open.fetch_add(1, Ordering::SeqCst);
        let guard = OpenGuard(shared.clone(), id);
        let task = tokio::spawn(serve(client, shared.clone(), closed, guard));
        // A task that ended before this insertion leaves an entry whose receiver is gone:
        // `cut_all` and `drop` skip it.
        shared.conns().insert(id, Connection { close, task });
        // The handle was dropped while this connection was being set up (the abort of this
        // task only takes effect at its next await): close it, as `drop` closed the others.
        if shared.stopped.load(Ordering::SeqCst) {
            shared.close_all();
            return;
        }
    }
}

/// Forwards one connection until either side ends it or it is closed by the proxy.
async fn serve(
    client: TcpStream,
    shared: Arc<Shared>,
    mut closed: oneshot::Receiver<()>,
    _guard: OpenGuard,
) {
    let upstream = tokio::select! {
        upstream = TcpStream::connect(shared.upstream) => upstream,
        _ = &mut closed => return,
    };
    let Ok(upstream) = upstream else {
        shared.upstream_failures.fetch_add(1, Ordering::SeqCst);
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = upstream.set_nodelay(true);
    let (client_read, client_write) = client.into_split();
    let (upstream_read, upstream_write) = upstream.into_split();
    let to_server = pump(client_read, upstream_write, &shared, Direction::ToServer);
    let to_client = pump(upstream_read, client_write, &shared, Direction::ToClient);
    tokio::pin!(to_server, to_client);
    let (mut server_done, mut client_done) = (false, false);
    while !(server_done && client_done) {
        tokio::select! {
            ended = &mut to_server, if !server_done => {
                if ended.is_err() { break; }
                server_done = true;
            }
            ended = &mut to_client, if !client_done => {
                if ended.is_err() { break; }
                client_done = true;
            }
            _ = &mut closed => break,
        }
    }
    // Returning drops all four halves: both sockets close.
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Direction {
    ToServer,
    ToClient,
}

/// Copies one direction. `Ok` on a clean end of input (passed on as a half-close), `Err` when
/// either socket failed.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    shared: &Shared,
    direction: Direction,
) -> Result<(), ()> {
    let mut stall = shared.stall.subscribe();
    let mut records = TlsRecords::default();
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        wait_unstalled(&mut stall).await;
        let n = from.read(&mut buf).await.map_err(drop)?;
        if n == 0 {
            let _ = to.shutdown().await;
            return Ok(());
        }
        let mut len = n;
        let mut cut = false;
        if direction == Direction::ToClient {
            let flipped = records.corrupt(&mut buf[..n], &shared.corrupt);
            shared.corrupted.fetch_add(flipped as u64, Ordering::SeqCst);
            if let Some(allowed) = take_before_cut(&shared.cut_after, n) {
                len = allowed;
                cut = true;
            }
        }
        let chunk = &buf[..len];
        wait_unstalled(&mut stall).await;
        to.write_all(chunk).await.map_err(drop)?;
        let counter = match direction {
            Direction::ToServer => &shared.bytes_to_server,
            Direction::ToClient => &shared.bytes_to_client,
        };
        counter.fetch_add(chunk.len() as u64, Ordering::SeqCst);
        if cut {
            shared.cut.fetch_add(1, Ordering::SeqCst);
            // Ends the connection: both sockets close.
            return Err(());
        }
    }
}

/// Counts `n` bytes against an armed cut: `Some(allowed)` when the cut falls in them (after
/// `allowed` bytes), which disarms it.
fn take_before_cut(cut_after: &AtomicU64, n: usize) -> Option<usize> {
    let n = n as u64;
    let mut allowed = None;
    let _ = cut_after.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
        if left == CUT_AFTER_OFF {
            allowed = None;
            None
        } else if left > n {
            allowed = None;
            Some(left - n)
        } else {
            allowed = Some(left);
            Some(CUT_AFTER_OFF)
        }
    });
    allowed.map(|a| usize::try_from(a).unwrap_or(usize::MAX))
}

async fn wait_unstalled(stall: &mut watch::Receiver<bool>) {
    // The sender lives in `Shared`, which outlives every pump.
    let _ = stall.wait_for(|stalled| !*stalled).await;
}

/// Follows TLS record framing in one direction so corruption hits record payloads only.
#[derive(Debug, Default)]
struct TlsRecords {
    header: [u8; TLS_RECORD_HEADER],
    header_len: usize,
    /// Payload bytes of the current record still to come; 0 while reading a header.
    payload_left: usize,
}

impl TlsRecords {
    /// Walks `chunk`, flipping payload bytes while `pending` is positive; returns how many
    /// were flipped.
    fn corrupt(&mut self, chunk: &mut [u8], pending: &AtomicUsize) -> usize {
        let mut flipped = 0;
        let mut i = 0;
        while i < chunk.len() {
            if self.payload_left == 0 {
                self.header[self.header_len] = chunk[i];
                self.header_len += 1;
                i += 1;
                if self.header_len == TLS_RECORD_HEADER {
                    self.payload_left =
                        usize::from(u16::from_be_bytes([self.header[3], self.header[4]]));
                    self.header_len = 0;
                }
                continue;
            }
            let take = self.payload_left.min(chunk.len() - i);
            if pending.load(Ordering::SeqCst) > 0 {
                let before = pending
                    .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |p| {
                        Some(p - p.min(take))
                    })
                    .unwrap_or(0);
                let n = before.min(take);
                for byte in &mut chunk[i..i + n] {
                    *byte ^= 0xff;
                }
                flipped += n;
            }
            i += take;
            self.payload_left -= take;
        }
        flipped
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A proxy in front of a plain TCP server (no apiserver needed for the proxy's mechanics).
    async fn proxy_to(upstream: SocketAddr) -> FaultProxy {
        let env = TestEnv::with_data_dir(PathBuf::from("unused"));
        FaultProxy::listen(env, upstream).await
    }

    /// A TCP server that accepts connections and hands them to the test.
    async fn upstream() -> (SocketAddr, tokio::sync::mpsc::UnboundedReceiver<TcpStream>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((s, _)) = listener.accept().await {
                if tx.send(s).is_err() {
                    break;
                }
            }
        });
        (addr, rx)
    }

    async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(10), f)
            .await
            .unwrap_or_else(|_| panic!("{what}: not within 10s"))
    }

    /// Connects through the proxy and returns both ends.
    async fn pair(
        proxy: &FaultProxy,
        accepted: &mut tokio::sync::mpsc::UnboundedReceiver<TcpStream>,
    ) -> (TcpStream, TcpStream) {
        let client = TcpStream::connect(proxy.addr()).await.unwrap();
        let server = within("upstream accept", accepted.recv()).await.unwrap();
        (client, server)
    }

    async fn read_exact(s: &mut TcpStream, n: usize) -> Vec<u8> {
        let mut buf = vec![0; n];
        within("read", s.read_exact(&mut buf)).await.unwrap();
        buf
    }

    /// Reads until the peer closes: `true` for a clean or reset close.
    async fn closed(s: &mut TcpStream) -> bool {
        let mut buf = [0u8; 64];
        loop {
            match within("close", s.read(&mut buf)).await {
                Ok(0) | Err(_) => return true,
                Ok(_) => {}
            }
        }
    }

    #[tokio::test]
    async fn forwards_both_ways_and_passes_half_closes_on() {
        let (addr, mut accepted) = upstream().await;
        let proxy = proxy_to(addr).await;
        let (mut client, mut server) = pair(&proxy, &mut accepted).await;
        client.write_all(b"ping").await.unwrap();
        assert_eq!(read_exact(&mut server, 4).await, b"ping");
        server.write_all(b"pong!").await.unwrap();
        assert_eq!(read_exact(&mut client, 5).await, b"pong!");
        assert_eq!(proxy.bytes_to_server(), 4);
        assert_eq!(proxy.bytes_to_client(), 5);
        assert_eq!(proxy.connections_accepted(), 1);
        assert_eq!(proxy.open_connections(), 1);

        // The client half-closes: the server sees EOF and can still answer.
        client.shutdown().await.unwrap();
        assert!(closed(&mut server).await);
        server.write_all(b"late").await.unwrap();
        assert_eq!(read_exact(&mut client, 4).await, b"late");
        drop(server);
        assert!(closed(&mut client).await);
        within("the connection to end", async {
            while proxy.open_connections() != 0 {
                tokio::task::yield_now().await;
            }
        })
        .await;
    }

    #[tokio::test]
    async fn cut_all_closes_both_sides_of_every_connection() {
        let (addr, mut accepted) = upstream().await;
        let proxy = proxy_to(addr).await;
        let (mut c1, mut s1) = pair(&proxy, &mut accepted).await;
        let (mut c2, mut s2) = pair(&proxy, &mut accepted).await;
        c1.write_all(b"x").await.unwrap();
        assert_eq!(read_exact(&mut s1, 1).await, b"x");
        assert_eq!(proxy.cut_all().await, 2);
        assert_eq!(proxy.open_connections(), 0);
        assert_eq!(proxy.connections_cut(), 2);
        for s in [&mut c1, &mut s1, &mut c2, &mut s2] {
            assert!(closed(s).await);
        }
        // The proxy keeps accepting.
        let (mut c3, mut s3) = pair(&proxy, &mut accepted).await;
        c3.write_all(b"again").await.unwrap();
        assert_eq!(read_exact(&mut s3, 5).await, b"again");
        assert_eq!(proxy.connections_accepted(), 3);
    }

    #[tokio::test]
    async fn dropping_the_proxy_closes_its_connections() {
        let (addr, mut accepted) = upstream().await;
        let proxy = proxy_to(addr).await;
        let (mut client, mut server) = pair(&proxy, &mut accepted).await;
        drop(proxy);
        assert!(closed(&mut client).await);
        assert!(closed(&mut server).await);
    }

    #[tokio::test]
    async fn refuse_closes_new_connections_only_while_set() {
        let (addr, mut accepted) = upstream().await;
        let proxy = proxy_to(addr).await;
        let (mut old_client, mut old_server) = pair(&proxy, &mut accepted).await;
        proxy.refuse(true);
        let mut refused = TcpStream::connect(proxy.addr()).await.unwrap();
        assert!(closed(&mut refused).await);
        assert_eq!(proxy.connections_refused(), 1);
        // The connection opened before still works.
        old_client.write_all(b"still").await.unwrap();
        assert_eq!(read_exact(&mut old_server, 5).await, b"still");
        proxy.refuse(false);
        let (mut client, mut server) = pair(&proxy, &mut accepted).await;
        server.write_all(b"ok").await.unwrap();
        assert_eq!(read_exact(&mut client, 2).await, b"ok");
        assert_eq!(proxy.connections_accepted(), 3);
        assert_eq!(proxy.connections_refused(), 1);
    }

    #[tokio::test]
    async fn stall_holds_bytes_until_lifted() {
        let (addr, mut accepted) = upstream().await;
        let proxy = proxy_to(addr).await;
        let (mut client, mut server) = pair(&proxy, &mut accepted).await;
        proxy.stall(true);
        server.write_all(b"held").await.unwrap();
        client.write_all(b"also").await.unwrap();
        let mut buf = [0u8; 4];
        assert!(
            tokio::time::timeout(Duration::from_millis(300), client.read(&mut buf))
                .await
                .is_err(),
            "bytes arrived during the stall"
        );
        assert_eq!(proxy.bytes_to_client(), 0);
        assert_eq!(proxy.bytes_to_server(), 0);
        assert_eq!(proxy.open_connections(), 1, "a stall keeps the connection");
        proxy.stall(false);
        assert_eq!(read_exact(&mut client, 4).await, b"held");
        assert_eq!(read_exact(&mut server, 4).await, b"also");
    }

    #[tokio::test]
    async fn corruption_flips_record_payloads_never_headers() {
        let (addr, mut accepted) = upstream().await;
        let proxy = proxy_to(addr).await;
        let (mut client, mut server) = pair(&proxy, &mut accepted).await;
        // Two records: a 3-byte and a 4-byte payload; 5 bytes to flip span both.
        let records = [
            &[23u8, 3, 3, 0, 3, 1, 2, 3][..],
            &[23u8, 3, 3, 0, 4, 4, 5, 6, 7][..],
        ]
        .concat();
        proxy.corrupt_next_server_bytes(5);
        server.write_all(&records).await.unwrap();
        let got = read_exact(&mut client, records.len()).await;
        assert_eq!(
            got,
            [
                &[23u8, 3, 3, 0, 3, !1, !2, !3][..],
                &[23u8, 3, 3, 0, 4, !4, !5, 6, 7][..]
            ]
            .concat()
        );
        assert_eq!(proxy.corrupted_bytes(), 5);
    }

    #[tokio::test]
    async fn cut_after_server_bytes_forwards_exactly_that_many_then_closes() {
        let (addr, mut accepted) = upstream().await;
        let proxy = proxy_to(addr).await;
        let (mut client, mut server) = pair(&proxy, &mut accepted).await;
        proxy.cut_after_server_bytes(6);
        server.write_all(b"abc").await.unwrap();
        assert_eq!(read_exact(&mut client, 3).await, b"abc");
        server.write_all(b"defghij").await.unwrap();
        assert_eq!(read_exact(&mut client, 3).await, b"def");
        assert!(closed(&mut client).await);
        assert!(closed(&mut server).await);
        assert_eq!(proxy.connections_cut(), 1);
        assert_eq!(proxy.bytes_to_client(), 6);
        // Disarmed: the next connection is not cut.
        let (mut client, mut server) = pair(&proxy, &mut accepted).await;
        server.write_all(b"0123456789").await.unwrap();
        assert_eq!(read_exact(&mut client, 10).await, b"0123456789");
        assert_eq!(proxy.connections_cut(), 1);
    }

    #[test]
    fn record_framing_survives_any_chunking() {
        // An empty record, then records of 1, 300 and 2 bytes.
        let mut stream = vec![21u8, 3, 3, 0, 0];
        for len in [1usize, 300, 2] {
            stream.extend_from_slice(&[23, 3, 3]);
            stream.extend_from_slice(&u16::try_from(len).unwrap().to_be_bytes());
            stream.extend(std::iter::repeat_n(0xaa, len));
        }
        for chunk_size in [1, 2, 5, 7, 64, stream.len()] {
            let mut data = stream.clone();
            let mut records = TlsRecords::default();
            let pending = AtomicUsize::new(usize::MAX);
            let flipped: usize = data
                .chunks_mut(chunk_size)
                .map(|c| records.corrupt(c, &pending))
                .sum();
            assert_eq!(flipped, 303, "chunks of {chunk_size}");
            let headers = [0usize, 5, 11, 316];
            for (i, (got, want)) in data.iter().zip(&stream).enumerate() {
                let in_header = headers.iter().any(|h| (*h..h + 5).contains(&i));
                if in_header {
                    assert_eq!(got, want, "header byte {i} (chunks of {chunk_size})");
                } else {
                    assert_eq!(*got, !want, "payload byte {i} (chunks of {chunk_size})");
                }
            }
        }
    }

    #[test]
    fn authority_is_found_in_urls() {
        assert_eq!(
            authority_of("https://127.0.0.1:6443"),
            Some("127.0.0.1:6443")
        );
        assert_eq!(
            authority_of("https://localhost:1/prefix/x"),
            Some("localhost:1")
        );
        assert_eq!(authority_of("https://"), None);
    }
}
