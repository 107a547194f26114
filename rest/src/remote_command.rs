//! Exec and attach: a remote process over WebSocket, client-go's `tools/remotecommand` with
//! the channel protocols `v5.channel.k8s.io` and `v4.channel.k8s.io`.
//!
//! [`Request::remote_command`] upgrades a `pods/{name}/exec` or `pods/{name}/attach` request
//! (built by the typed client with its command and container) and returns an
//! [`AttachedProcess`]: stdin as an [`AsyncWrite`], stdout and stderr as [`AsyncRead`]s,
//! terminal resizes, and the exit status from the error channel.
//!
//! Channels (as in `k8s.io/apimachinery/pkg/util/remotecommand`): 0 stdin, 1 stdout,
//! 2 stderr, 3 error (a `Status` when the process ends), 4 resize (a JSON `{"Width","Height"}`).
//! v5 adds the close signal, the message `[255, channel]`, with which the client ends stdin
//! so that a command reading it (`cat`) sees end of file; v4 cannot end stdin except by
//! closing the whole connection.
//!
//! The exit status ([`AttachedProcess::join`]): `Ok` when the error channel says `Success`;
//! an [`Error`] whose [`Error::exit_code`] is the code when the process exited non-zero; the
//! server's `Status` error when the command could not run (an executable that does not exist);
//! a `ConnectionReset` transport error when the connection was cut before the status arrived.
//!
//! Reading: stdout and stderr each queue at most 16 messages (a slow reader slows the whole
//! connection rather than growing memory), so read every stream asked for, concurrently, as
//! with a local child process; a stream that is not needed should not be asked for, or its
//! reader dropped (its data is then discarded).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use kclient_apimachinery::{Error, Status, TransportErrorKind, decode_json};
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

use crate::channel::{ChannelMux, ChannelReader, ChannelWriter, Ended};
use crate::request::Request;

/// The subprotocol with the close signal.
pub const STREAM_PROTOCOL_V5: &str = "v5.channel.k8s.io";
/// The subprotocol with the resize channel and a `Status` on the error channel.
pub const STREAM_PROTOCOL_V4: &str = "v4.channel.k8s.io";

const STDIN: u8 = 0;
const STDOUT: u8 = 1;
const STDERR: u8 = 2;
const ERROR: u8 = 3;
const RESIZE: u8 = 4;
/// v5's close signal: `[CLOSE, channel]`.
const CLOSE: u8 = 255;

/// The most bytes of the error channel kept; a `Status` is far smaller.
const MAX_STATUS: usize = 64 * 1024;

/// Which streams of a remote process to open, client-go's `remotecommand.StreamOptions` (and
/// the `stdin`, `stdout`, `stderr` and `tty` query parameters of exec and attach).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StreamOptions {
    /// Open the process's standard input.
    pub stdin: bool,
    /// Read its standard output.
    pub stdout: bool,
    /// Read its standard error (not with `tty`: a terminal has one output).
    pub stderr: bool,
    /// Give it a terminal; resizes are then sent with [`TerminalResizer`].
    pub tty: bool,
}

impl StreamOptions {
    /// Open the process's standard input.
    pub fn stdin(mut self, stdin: bool) -> Self {
        self.stdin = stdin;
        self
    }

    /// Read its standard output.
    pub fn stdout(mut self, stdout: bool) -> Self {
        self.stdout = stdout;
        self
    }

    /// Read its standard error (not with `tty`: a terminal has one output).
    pub fn stderr(mut self, stderr: bool) -> Self {
        self.stderr = stderr;
        self
    }

    /// Give it a terminal; resizes are then sent with [`TerminalResizer`].
    pub fn tty(mut self, tty: bool) -> Self {
        self.tty = tty;
        self
    }
}

/// The size of a terminal in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct TerminalSize {
    /// Columns.
    #[serde(rename = "Width")]
    pub width: u16,
    /// Rows.
    #[serde(rename = "Height")]
    pub height: u16,
}

impl Request {
    /// Upgrades an exec or attach request to a WebSocket and starts the remote process's
    /// streams (see the [module docs](crate::remote_command)). Adds the `stdin`, `stdout`,
    /// `stderr` and `tty` query parameters from `streams`; the caller adds `command` and
    /// `container`.
    pub async fn remote_command(self, streams: StreamOptions) -> Result<AttachedProcess, Error> {
        if streams.tty && streams.stderr {
            return Err(Error::invalid_request(
                "stderr cannot be read separately with a tty: a terminal merges it into stdout",
            ));
        }
        if !(streams.stdin || streams.stdout || streams.stderr) {
            return Err(Error::invalid_request(
                "at least one of stdin, stdout and stderr must be opened",
            ));
        }
        let mut request = self;
        for (name, on) in [
            ("stdin", streams.stdin),
            ("stdout", streams.stdout),
            ("stderr", streams.stderr),
            ("tty", streams.tty),
        ] {
            if on {
                request = request.param(name, "true");
            }
        }
        let ws = request
            .upgrade_websocket(&[STREAM_PROTOCOL_V5, STREAM_PROTOCOL_V4])
            .await?;
        let v5 = ws.protocol == STREAM_PROTOCOL_V5;
        let mut channels = vec![ERROR];
        if streams.stdout {
            channels.push(STDOUT);
        }
        if streams.stderr {
            channels.push(STDERR);
        }
        let mux = ChannelMux::start(ws, &channels, 0);
        let stdin = streams.stdin.then(|| ProcessStdin {
            inner: mux.writer(STDIN, v5.then(|| Bytes::from_static(&[CLOSE, STDIN]))),
        });
        Ok(AttachedProcess {
            stdin,
            stdout: mux.take_reader(STDOUT).map(|inner| ProcessOutput { inner }),
            stderr: mux.take_reader(STDERR).map(|inner| ProcessOutput { inner }),
            resizer: streams.tty.then(|| TerminalResizer {
                sender: mux.sender(),
            }),
            error: mux.take_reader(ERROR),
            mux,
        })
    }
}

/// A process running in a container, started by exec or attach.
///
/// Take its streams with [`take_stdin`](Self::take_stdin),
/// [`take_stdout`](Self::take_stdout) and [`take_stderr`](Self::take_stderr), use them
/// concurrently, then wait for the exit status with [`join`](Self::join). Dropping the handle
/// and every stream closes the connection.
///
/// Read every output stream that was asked for, or take it and drop it (its data is then
/// discarded): one left here until `join` fills its queue of 16 messages and then holds up the
/// others, a stdout read to its end included. Better, do not ask for a stream that is not
/// needed (client-go drains every stream given a writer; here a stream is a reader the caller
/// pulls).
pub struct AttachedProcess {
    stdin: Option<ProcessStdin>,
    stdout: Option<ProcessOutput>,
    stderr: Option<ProcessOutput>,
    resizer: Option<TerminalResizer>,
    error: Option<ChannelReader>,
    mux: ChannelMux,
}

impl AttachedProcess {
    /// The subprotocol the server chose (`v5.channel.k8s.io` or `v4.channel.k8s.io`).
    pub fn protocol(&self) -> &str {
        &self.mux.protocol
    }

    /// The process's standard input, if it was opened. Shutting it down (or dropping it)
    /// ends the process's input under v5; under v4 the process sees no end of file.
    pub fn take_stdin(&mut self) -> Option<ProcessStdin> {
        self.stdin.take()
    }

    /// The process's standard output (the terminal's output with a tty), if it was opened.
    pub fn take_stdout(&mut self) -> Option<ProcessOutput> {
        self.stdout.take()
    }

    /// The process's standard error, if it was opened.
    pub fn take_stderr(&mut self) -> Option<ProcessOutput> {
        self.stderr.take()
    }

    /// The resizer of the process's terminal, if it has one (cheap to clone).
    pub fn terminal_resizer(&self) -> Option<TerminalResizer> {
        self.resizer.clone()
    }

    /// Waits for the process to end and returns its exit status (see the
    /// [module docs](crate::remote_command)): `Ok` for exit code 0, an error carrying the
    /// code ([`Error::exit_code`]) for another, the server's error when the command could not
    /// run, and a `ConnectionReset` transport error when the connection was cut first.
    ///
    /// Streams not yet taken are dropped, so their data does not hold up the end.
    pub async fn join(mut self) -> Result<(), Error> {
        self.stdin = None;
        self.stdout = None;
        self.stderr = None;
        let mut error = self.error.take();
        let mut status = Vec::new();
        if let Some(reader) = error.as_mut() {
            loop {
                match reader.next_chunk().await {
                    Ok(Some(data)) => {
                        let room = MAX_STATUS.saturating_sub(status.len());
                        status.extend_from_slice(&data[..data.len().min(room)]);
                    }
                    Ok(None) => break,
                    Err(e) => return Err(cut_error(e.to_string())),
                }
            }
        }
        if status.is_empty() {
            return match self.mux.connection.wait_ended().await {
                Ended::Cut(why) => Err(cut_error(why)),
                _ => Ok(()),
            };
        }
        status_result(&status)
    }
}

/// The exit status an error channel's bytes say.
fn status_result(bytes: &[u8]) -> Result<(), Error> {
    let status: Status = decode_json(bytes)
        .map_err(|e| Error::decode("the remote process's status (error channel)", e))?;
    if status.status == "Success" {
        return Ok(());
    }
    Err(Error::from_status(status))
}

fn cut_error(why: String) -> Error {
    Error::transport(
        TransportErrorKind::ConnectionReset,
        format!("the connection was cut before the remote process's exit status arrived: {why}"),
    )
}

impl std::fmt::Debug for AttachedProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AttachedProcess")
            .field("protocol", &self.mux.protocol)
            .finish_non_exhaustive()
    }
}

/// The standard input of an [`AttachedProcess`]. Writes wait when the connection's queue is
/// full; a write after the process ended fails with `BrokenPipe` (or `ConnectionReset` when
/// the connection was cut).
#[derive(Debug)]
pub struct ProcessStdin {
    inner: ChannelWriter,
}

impl AsyncWrite for ProcessStdin {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Standard output or error of an [`AttachedProcess`]. It ends when the process's stream
/// ends; reading after a cut connection fails with `ConnectionReset`.
#[derive(Debug)]
pub struct ProcessOutput {
    inner: ChannelReader,
}

impl AsyncRead for ProcessOutput {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

/// Sends terminal sizes to a process started with `tty` (client-go's `TerminalSizeQueue`).
#[derive(Debug, Clone)]
pub struct TerminalResizer {
    sender: mpsc::Sender<Message>,
}

impl TerminalResizer {
    /// Tells the process its terminal's new size.
    pub async fn resize(&self, size: TerminalSize) -> Result<(), Error> {
        let mut message = vec![RESIZE];
        serde_json::to_writer(&mut message, &size)
            .map_err(|e| Error::invalid_request(format!("cannot encode a terminal size: {e}")))?;
        self.sender
            .send(Message::Binary(message.into()))
            .await
            .map_err(|_| {
                Error::transport(
                    TransportErrorKind::ConnectionReset,
                    "cannot resize the terminal: the connection is closed",
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_status_from_the_error_channel() {
        assert!(status_result(br#"{"metadata":{},"status":"Success"}"#).is_ok());
        let err = status_result(
            br#"{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: exit status 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}"#,
        )
        .unwrap_err();
        assert_eq!(err.exit_code(), Some(3));
        assert!(err.is_non_zero_exit_code());
        assert!(err.to_string().contains("exit status 3"), "{err}");
        let err = status_result(
            br#"{"metadata":{},"status":"Failure","message":"exec: \"nope\": executable file not found in $PATH","reason":"InternalError","code":500}"#,
        )
        .unwrap_err();
        assert_eq!(err.exit_code(), None);
        assert!(
            err.to_string().contains("executable file not found"),
            "{err}"
        );
        let err = status_result(b"\xff garbage").unwrap_err();
        assert!(err.is_decode(), "{err:?}");
    }

    #[test]
    fn terminal_size_wire_form() {
        let json = serde_json::to_string(&TerminalSize {
            width: 80,
            height: 24,
        })
        .unwrap();
        assert_eq!(json, r#"{"Width":80,"Height":24}"#);
    }

    mod loopback {
        use futures_util::{SinkExt as _, StreamExt as _};
        use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
        use tokio_tungstenite::tungstenite::Message;

        use crate::websocket_test_server::WebSocketTestServer;
        use crate::{Client, Config, StreamOptions};

        fn client(port: u16) -> Client {
            let mut config = Config::new(format!("http://127.0.0.1:{port}"));
            config.qps = -1.0;
            config.bearer_token = Some("s3cret".to_string().into());
            config.impersonate.user_name = Some("jane".into());
            Client::new(config).unwrap()
        }

        fn exec(client: &Client) -> crate::Request {
            client
                .get()
                .group_version("", "v1")
                .namespace("ns")
                .resource("pods")
                .name("p")
                .subresource("exec")
                .param("command", "cat")
        }

        fn frame(channel: u8, data: &[u8]) -> Message {
            let mut v = vec![channel];
            v.extend_from_slice(data);
            Message::Binary(v.into())
        }

        fn prefer_v5(offered: &str) -> Option<&'static str> {
            offered
                .contains("v5.channel.k8s.io")
                .then_some("v5.channel.k8s.io")
        }

        /// A `cat` that answers with exit code 3: stdin comes back on stdout until the close
        /// signal, with garbage in between that the client must skip.
        #[tokio::test]
        async fn v5_cat_stdin_close_signal_and_exit_code() {
            let server = WebSocketTestServer::start(prefer_v5, |mut ws| async move {
                // Servers open every channel with an empty message.
                for c in 0..5 {
                    ws.send(Message::Binary(vec![c].into())).await.unwrap();
                }
                ws.send(Message::Binary(Default::default())).await.unwrap();
                ws.send(Message::Text("garbage".into())).await.unwrap();
                ws.send(frame(9, b"unknown channel")).await.unwrap();
                ws.send(frame(2, b"to stderr")).await.unwrap();
                while let Some(Ok(msg)) = ws.next().await {
                    let Message::Binary(data) = msg else { continue };
                    match data.first() {
                        Some(0) => ws.send(frame(1, &data[1..])).await.unwrap(),
                        Some(255) => {
                            assert_eq!(&data[..], &[255, 0]);
                            break;
                        }
                        _ => panic!("unexpected message {data:?}"),
                    }
                }
                ws.send(frame(
                    3,
                    br#"{"metadata":{},"status":"Failure","message":"command terminated with non-zero exit code: exit status 3","reason":"NonZeroExitCode","details":{"causes":[{"reason":"ExitCode","message":"3"}]}}"#,
                ))
                .await
                .unwrap();
                ws.close(None).await.unwrap();
            })
            .await;
            let client = client(server.port);
            let mut process = exec(&client)
                .remote_command(StreamOptions {
                    stdin: true,
                    stdout: true,
                    stderr: true,
                    tty: false,
                })
                .await
                .unwrap();
            assert_eq!(process.protocol(), "v5.channel.k8s.io");
            let mut stdin = process.take_stdin().unwrap();
            let mut stdout = process.take_stdout().unwrap();
            let mut stderr = process.take_stderr().unwrap();
            let payload: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
            let sent = payload.clone();
            let writer = tokio::spawn(async move {
                stdin.write_all(&sent).await.unwrap();
                stdin.shutdown().await.unwrap();
            });
            let mut out = Vec::new();
            let mut err = Vec::new();
            let (a, b) = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
            a.unwrap();
            b.unwrap();
            writer.await.unwrap();
            assert_eq!(out, payload);
            assert_eq!(err, b"to stderr");
            let status = process.join().await.unwrap_err();
            assert_eq!(status.exit_code(), Some(3), "{status:?}");

            let seen = server.seen.lock().clone().unwrap();
            assert_eq!(
                seen.path_and_query,
                "/api/v1/namespaces/ns/pods/p/exec?command=cat&stdin=true&stdout=true&stderr=true"
            );
            assert_eq!(
                seen.header("sec-websocket-protocol"),
                Some("v5.channel.k8s.io, v4.channel.k8s.io")
            );
            assert_eq!(seen.header("authorization"), Some("Bearer s3cret"));
            assert_eq!(seen.header("impersonate-user"), Some("jane"));
            server.task.await.unwrap();
        }

        /// Dropping stdin ends the process's input as shutting it down does (v5), and the
        /// exit status of a process whose streams were never taken still arrives.
        #[tokio::test]
        async fn dropping_stdin_sends_the_close_signal() {
            let server = WebSocketTestServer::start(prefer_v5, |mut ws| async move {
                while let Some(Ok(msg)) = ws.next().await {
                    if let Message::Binary(data) = msg
                        && data[..] == [255, 0]
                    {
                        break;
                    }
                }
                ws.send(frame(1, b"output nobody reads")).await.unwrap();
                ws.send(frame(3, br#"{"metadata":{},"status":"Success"}"#))
                    .await
                    .unwrap();
                ws.close(None).await.unwrap();
            })
            .await;
            let client = client(server.port);
            let mut process = exec(&client)
                .remote_command(StreamOptions {
                    stdin: true,
                    stdout: true,
                    ..Default::default()
                })
                .await
                .unwrap();
            drop(process.take_stdin());
            process.join().await.unwrap();
            server.task.await.unwrap();
        }

        /// A server that picks v4: a `Success` status ends the process cleanly, and a
        /// terminal resize goes out on channel 4.
        #[tokio::test]
        async fn v4_success_and_resize() {
            let server = WebSocketTestServer::start(
                |_| Some("v4.channel.k8s.io"),
                |mut ws| async move {
                    let Some(Ok(Message::Binary(data))) = ws.next().await else {
                        panic!("no resize");
                    };
                    assert_eq!(&data[..], b"\x04{\"Width\":100,\"Height\":40}");
                    ws.send(frame(1, b"done\n")).await.unwrap();
                    ws.send(frame(3, br#"{"metadata":{},"status":"Success"}"#))
                        .await
                        .unwrap();
                    ws.close(None).await.unwrap();
                },
            )
            .await;
            let client = client(server.port);
            let mut process = exec(&client)
                .remote_command(StreamOptions {
                    stdin: true,
                    stdout: true,
                    stderr: false,
                    tty: true,
                })
                .await
                .unwrap();
            assert_eq!(process.protocol(), "v4.channel.k8s.io");
            process
                .terminal_resizer()
                .unwrap()
                .resize(super::super::TerminalSize {
                    width: 100,
                    height: 40,
                })
                .await
                .unwrap();
            let mut out = String::new();
            process
                .take_stdout()
                .unwrap()
                .read_to_string(&mut out)
                .await
                .unwrap();
            assert_eq!(out, "done\n");
            process.join().await.unwrap();
            server.task.await.unwrap();
        }

        /// The server goes away mid-stream without a close frame: reads fail with a reset,
        /// and so does the exit status; nothing hangs.
        #[tokio::test]
        async fn a_cut_connection_is_an_error_not_a_hang() {
            let (out, read, joined) = stdout_then_end(b"partial", None).await;
            assert_eq!(out, b"partial");
            let err = read.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}");
            let err = joined.unwrap_err();
            assert!(err.is_connection_reset(), "{err:?}");
            assert!(err.to_string().contains("cut"), "{err}");
        }

        /// Execs against a server that sends `data` on stdout and then ends: with a close frame
        /// of `close`'s code and reason, or (`None`) by closing the TCP connection without one.
        /// Returns what stdout read, how its read ended, and `join`'s result.
        async fn stdout_then_end(
            data: &'static [u8],
            close: Option<(
                tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode,
                &'static str,
            )>,
        ) -> (Vec<u8>, std::io::Result<usize>, Result<(), crate::Error>) {
            use tokio_tungstenite::tungstenite::protocol::CloseFrame;
            let server = WebSocketTestServer::start(prefer_v5, move |mut ws| async move {
                ws.send(frame(1, data)).await.unwrap();
                match close {
                    Some((code, reason)) => ws
                        .close(Some(CloseFrame {
                            code,
                            reason: reason.into(),
                        }))
                        .await
                        .unwrap(),
                    None => {
                        ws.flush().await.unwrap();
                        drop(ws);
                    }
                }
            })
            .await;
            let client = client(server.port);
            let mut process = exec(&client)
                .remote_command(StreamOptions {
                    stdout: true,
                    ..Default::default()
                })
                .await
                .unwrap();
            let mut out = Vec::new();
            let read = process.take_stdout().unwrap().read_to_end(&mut out).await;
            let joined = process.join().await;
            server.task.await.unwrap();
            (out, read, joined)
        }

        /// A close frame with an error code (a server or proxy giving up mid-stream) is a cut,
        /// not the process's clean end: as in client-go, only code 1000 (or a close frame
        /// without a code) ends the streams with end of file.
        #[tokio::test]
        async fn a_close_frame_with_an_error_code_is_a_cut_not_a_clean_end() {
            use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
            let (out, read, joined) = stdout_then_end(
                b"partial",
                Some((CloseCode::Error, "the backend went away")),
            )
            .await;
            assert_eq!(out, b"partial");
            let err = read.unwrap_err();
            assert_eq!(err.kind(), std::io::ErrorKind::ConnectionReset, "{err}");
            let text = err.to_string();
            assert!(
                text.contains("1011") && text.contains("the backend went away"),
                "{text}"
            );
            let err = joined.unwrap_err();
            assert!(err.is_connection_reset(), "{err:?}");
            assert!(err.to_string().contains("the backend went away"), "{err}");
        }

        /// A normal closure (code 1000) is the clean end it says it is.
        #[tokio::test]
        async fn a_normal_close_frame_is_a_clean_end() {
            use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
            let (out, read, joined) = stdout_then_end(b"all", Some((CloseCode::Normal, ""))).await;
            assert_eq!(out, b"all");
            read.unwrap();
            joined.unwrap();
        }

        /// A server that chooses none of the offered subprotocols is refused with a message
        /// saying so.
        #[tokio::test]
        async fn no_common_subprotocol_is_a_clear_error() {
            let server = WebSocketTestServer::start(|_| None, |_ws| async move {}).await;
            let err = exec(&client(server.port))
                .remote_command(StreamOptions {
                    stdout: true,
                    ..Default::default()
                })
                .await
                .unwrap_err();
            let text = err.to_string();
            assert!(text.contains("none of those offered"), "{text}");
        }

        #[tokio::test]
        async fn invalid_stream_choices_are_refused_before_sending() {
            let client = client(1);
            let err = exec(&client)
                .remote_command(StreamOptions {
                    stderr: true,
                    tty: true,
                    ..Default::default()
                })
                .await
                .unwrap_err();
            assert!(err.is_invalid_request(), "{err:?}");
            let err = exec(&client)
                .remote_command(StreamOptions::default())
                .await
                .unwrap_err();
            assert!(err.is_invalid_request(), "{err:?}");
        }
    }
}
