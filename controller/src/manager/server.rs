//! The manager's plain-HTTP servers (controller-runtime's `manager.Server` under its health
//! probe and metrics servers): HTTP/1.1 on hyper, each request answered by a route function,
//! a listener bound when the manager is built (so an address in use fails `build`, as
//! controller-runtime's `New` fails) and served from the manager's start.
//!
//! At shutdown the listener closes at once and the requests in flight are answered before
//! their connections close. A connection that stalls in its request's headers for
//! [`HEADER_TIMEOUT`] is closed (Go's `ReadHeaderTimeout` as controller-runtime's
//! `httpserver.New` sets it).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use http_body_util::Full;
use hyper::body::{Bytes, Incoming};
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use kclient_cache::CancellationToken;
use kclient_flowcontrol::AcceptBackoff;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

use crate::error::Error;

/// How long a connection may take for a request's headers (controller-runtime's
/// `httpserver.New`: `ReadHeaderTimeout` of 32 seconds).
pub(crate) const HEADER_TIMEOUT: Duration = Duration::from_secs(32);

/// What a route answers: the status, the content type and the body.
pub(crate) struct Answer {
    pub(crate) status: u16,
    pub(crate) content_type: &'static str,
    pub(crate) body: String,
}

impl Answer {
    /// Go's `text/plain; charset=utf-8` answers, as pkg/healthz writes them.
    pub(crate) fn text(status: u16, body: String) -> Self {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body,
        }
    }
}

/// Answers a request from its path and raw query.
pub(crate) type Route =
    Arc<dyn Fn(String, Option<String>) -> BoxFuture<'static, Answer> + Send + Sync>;

/// A server bound to its address, to serve from the manager's start.
pub(crate) struct BoundServer {
    /// For logs and errors: `health probe`, `metrics`.
    pub(crate) name: &'static str,
    listener: std::net::TcpListener,
    pub(crate) local_addr: SocketAddr,
}

impl BoundServer {
    /// Listens on `address` (port 0: a free port).
    pub(crate) fn bind(name: &'static str, address: SocketAddr) -> Result<Self, Error> {
        let listener =
            std::net::TcpListener::bind(address).map_err(|e| Error::bind(name, address, e))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::bind(name, address, e))?;
        let local_addr = listener
            .local_addr()
            .map_err(|e| Error::bind(name, address, e))?;
        Ok(BoundServer {
            name,
            listener,
            local_addr,
        })
    }

    /// Serves until `shutdown`: then stops listening, answers the requests in flight and
    /// returns once their connections have closed. An error only if the listener cannot be
    /// handed to the runtime.
    pub(crate) async fn serve(
        self,
        route: Route,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let listener =
            TcpListener::from_std(self.listener).map_err(|e| Error::server(self.name, e))?;
        tracing::info!(server = self.name, addr = %self.local_addr, "starting server");
        let mut connections = JoinSet::new();
        let mut accept_backoff = AcceptBackoff::new();
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                accepted = listener.accept() => {
                    let tcp = match accepted {
                        Ok((tcp, _)) => {
                            accept_backoff.accepted();
                            tcp
                        }
                        Err(e) => {
                            // One connection's failure: at once; the listener's own: after a
                            // wait, not a spin.
                            let Some(wait) = accept_backoff.failed(&e) else { continue };
                            tracing::error!(server = self.name, error = %e, retry_in = ?wait, "accepting a connection failed");
                            tokio::select! {
                                () = tokio::time::sleep(wait) => {}
                                () = shutdown.cancelled() => break,
                            }
                            continue;
                        }
                    };
                    connections.spawn(serve_connection(tcp, Arc::clone(&route), shutdown.clone()));
                }
                Some(_) = connections.join_next(), if !connections.is_empty() => {}
            }
        }
        drop(listener);
        tracing::info!(server = self.name, addr = %self.local_addr, "shutting down server");
        while connections.join_next().await.is_some() {}
        Ok(())
    }
}

/// One connection's requests until the client closes it, or until shutdown, which lets the
/// request in flight finish.
async fn serve_connection(tcp: tokio::net::TcpStream, route: Route, shutdown: CancellationToken) {
    let service = service_fn(move |request: Request<Incoming>| {
        let route = Arc::clone(&route);
        async move {
            let path = request.uri().path().to_owned();
            let query = request.uri().query().map(str::to_owned);
            let answer = route(path, query).await;
            let mut response = Response::new(Full::new(Bytes::from(answer.body)));
            *response.status_mut() = hyper::StatusCode::from_u16(answer.status)
                .unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
            let headers = response.headers_mut();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static(answer.content_type));
            headers.insert(
                "x-content-type-options",
                HeaderValue::from_static("nosniff"),
            );
            Ok::<_, Infallible>(response)
        }
    });
    let connection = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(tcp), service);
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        result = connection.as_mut() => {
            if let Err(e) = result {
                tracing::debug!(error = %e, "manager server: connection ended with an error");
            }
        }
        () = shutdown.cancelled() => {
            connection.as_mut().graceful_shutdown();
            let _ = connection.await;
        }
    }
}
