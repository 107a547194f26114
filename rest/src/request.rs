//! `Request`: client-go's `rest.Request` builder and its execution (throttling, auth,
//! retries, error mapping, warnings).
//!
//! URL layout (client-go's): `{host}{prefix}/namespaces/{ns}/{resource}/{name}/{subresource}/{suffix}`
//! where the prefix is `/api/v1` for the core group and `/apis/{group}/{version}` otherwise; an
//! empty namespace is left out. Namespace, resource and name must be valid path segments (not
//! empty, `.` or `..`, no `/` or `%`); every segment is percent-escaped.
//!
//! Execution of one request:
//! 1. wait on the client's rate limiter (skipped for the first try of a watch, and for
//!    WebSocket upgrades as client-go's stream executors skip it); the request's timeout
//!    starts after this first wait, as client-go's, and from then on is a deadline over
//!    everything else: credentials, every attempt, the waits between retries and their waits
//!    on the rate limiter (a retry whose token would come after the deadline fails at once),
//!    the body of a non-streaming request and any error body;
//! 2. send with auth, `User-Agent`, impersonation and `Accept: application/json` (or
//!    protobuf first, for `Request::send_protobuf` and `Request::watch_protobuf`, feature
//!    `protobuf`);
//! 3. on a 401 let the exec plugin refresh its credentials (the 401 is still returned);
//! 4. retry per [`crate::retry`], never past the request's deadline (a wait that would pass
//!    it ends there in a timeout error); a [`BackoffManager`](crate::BackoffManager) (set on
//!    the request, or from the environment) backs off the first attempt and stretches a
//!    retry's wait, and hears every outcome;
//! 5. hand the `Warning` headers of the answer the request ends with (not of one it
//!    retries) to the warning handler, as client-go does;
//! 6. turn a non-2xx response into the API [`Error`]: the server's `Status` when the body is
//!    one, else a generic error carrying at most 2048 bytes of a text body. That body is read
//!    within [`Config::read_idle_timeout`](crate::Config::read_idle_timeout) and the request's
//!    timeout, for streams and watches too (see [`crate::body`]): one that stalls is a timeout
//!    error naming the status, never a hang. A 2xx body that [`Request::send`] decodes and
//!    that is a `Status` other than `Success` is the error it describes too (client-go's
//!    `Result.Into`); [`Request::bytes`] hands it over as it is (client-go's `DoRaw`).

use std::error::Error as StdError;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_core::Stream;
use futures_util::TryStreamExt as _;
use http::{HeaderName, HeaderValue, StatusCode};
use kclient_apimachinery::{Error, ServerResponse, Status, TransportErrorKind, decode_json};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tracing::Instrument as _;

use crate::body::{Deadline, ReadLimits, check_json_content_type, next_chunk, read_body};
use crate::byte_stream::ByteStream;
use crate::client::{Backend, Client};
use crate::metrics;
use crate::rate_limiter::throttle;
use crate::retry::{DEFAULT_MAX_RETRIES, WithRetry, clamp_max_retries};
use crate::transport::{LongRunningGuard, ServerNameRoute, transport_error};
use crate::url_backoff::{BackoffManager, UrlBackoff};
use crate::warning::{Warning, parse_warnings};
use crate::watch::{RawWatchStream, WatchStream};

/// What a request that negotiates protobuf accepts: protobuf first, JSON as a fallback
/// (client-go's clientset sends the same).
#[cfg(feature = "protobuf")]
const ACCEPT_PROTOBUF: &str = "application/vnd.kubernetes.protobuf, application/json";

/// Refuses a watch whose response says it is not JSON (`what` names the watch), before any
/// event is read: an HTML page from a proxy would otherwise fail as an event that does not
/// decode, with no word of its content type.
fn check_watch_json(content_type: Option<&str>, what: &str) -> Result<(), Error> {
    check_json_content_type(content_type).map_err(|e| Error::decode(what, e))
}

/// Whether a `Content-Type` is Kubernetes protobuf (with or without parameters such as
/// `;stream=watch`).
#[cfg(feature = "protobuf")]
fn is_protobuf(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| {
        ct.split(';').next().is_some_and(|media| {
            media
                .trim()
                .eq_ignore_ascii_case(kclient_apimachinery::protobuf::CONTENT_TYPE_PROTOBUF)
        })
    })
}

/// The largest error body read to look for a `Status`.
const MAX_ERROR_BODY: usize = 1 << 20;

/// An HTTP verb of the Kubernetes API.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verb {
    /// GET: get, list, watch, logs, discovery.
    Get,
    /// POST: create.
    Post,
    /// PUT: update.
    Put,
    /// PATCH: patch and server-side apply.
    Patch,
    /// DELETE: delete and delete-collection.
    Delete,
}

impl Verb {
    /// The method name (`GET`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "GET",
            Verb::Post => "POST",
            Verb::Put => "PUT",
            Verb::Patch => "PATCH",
            Verb::Delete => "DELETE",
        }
    }

    fn method(self) -> reqwest::Method {
        match self {
            Verb::Get => reqwest::Method::GET,
            Verb::Post => reqwest::Method::POST,
            Verb::Put => reqwest::Method::PUT,
            Verb::Patch => reqwest::Method::PATCH,
            Verb::Delete => reqwest::Method::DELETE,
        }
    }
}

/// A streamed request body, wrapped into the transport's body type when sent.
type BodyStream = std::pin::Pin<
    Box<dyn Stream<Item = Result<Bytes, Box<dyn StdError + Send + Sync>>> + Send + 'static>,
>;

enum Body {
    Empty,
    Bytes(Bytes),
    // In a mutex only so that `Request` stays `Sync` (the stream is taken out whole).
    Stream(Option<parking_lot::Mutex<BodyStream>>),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Normal,
    Watch,
    Stream,
    /// A WebSocket upgrade (see [`crate::upgrade`]): sent over an HTTP/1.1 connection of its
    /// own, and a `101 Switching Protocols` is its success.
    Upgrade,
}

/// A request being built; finish it with [`Request::send`], [`Request::bytes`],
/// [`Request::stream`] or [`Request::watch`].
///
/// Builder errors (a bad name, an unserializable body) are kept and returned when the
/// request is sent, as client-go does.
#[must_use = "a request does nothing until it is sent"]
pub struct Request {
    client: Client,
    verb: Verb,
    prefix: Vec<String>,
    abs_path: Option<String>,
    namespace: Option<String>,
    resource: Option<String>,
    name: Option<String>,
    subresource: Vec<String>,
    suffix: Vec<String>,
    params: Vec<(String, String)>,
    headers: Vec<(HeaderName, HeaderValue)>,
    content_type: Option<&'static str>,
    body: Body,
    timeout: Option<Duration>,
    max_retries: u32,
    backoff: Option<Arc<dyn BackoffManager>>,
    error: Option<Error>,
}

/// What a path segment escapes: control characters (tab, line breaks), space, `"`, `#`, `%`,
/// `/`, `<`, `>`, `?`, `\`, the backtick, `{` and `}` (what the `url` crate escapes in a
/// segment), and every non-ASCII byte; the rest is kept as written (`system:node:n1` stays
/// readable). The server unescapes every escape alike.
const PATH_SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'/')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'\\')
    .add(b'`')
    .add(b'{')
    .add(b'}');

/// Rejects what client-go's `IsValidPathSegmentName` rejects.
fn check_segment(what: &str, value: &str) -> Result<(), Error> {
    if value.is_empty() {
        return Err(Error::invalid_request(format!("{what} may not be empty")));
    }
    if value == "." || value == ".." {
        return Err(Error::invalid_request(format!(
            "invalid {what} {value:?}: may not be '.' or '..'"
        )));
    }
    if value.contains('/') || value.contains('%') {
        return Err(Error::invalid_request(format!(
            "invalid {what} {value:?}: may not contain '/' or '%'"
        )));
    }
    Ok(())
}

impl Request {
    pub(crate) fn new(client: Client, verb: Verb) -> Request {
        Request {
            client,
            verb,
            prefix: Vec::new(),
            abs_path: None,
            namespace: None,
            resource: None,
            name: None,
            subresource: Vec::new(),
            suffix: Vec::new(),
            params: Vec::new(),
            headers: Vec::new(),
            content_type: None,
            body: Body::Empty,
            timeout: None,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff: None,
            error: None,
        }
    }

    fn fail(&mut self, err: Error) {
        if self.error.is_none() {
            self.error = Some(err);
        }
    }

    /// Targets an API group and version: `/api/v1` for the core group (`""`), else
    /// `/apis/{group}/{version}`.
    pub fn group_version(mut self, group: &str, version: &str) -> Self {
        if let Err(e) = check_segment("version", version) {
            self.fail(e);
            return self;
        }
        self.prefix = if group.is_empty() {
            vec!["api".into(), version.into()]
        } else {
            if let Err(e) = check_segment("group", group) {
                self.fail(e);
                return self;
            }
            vec!["apis".into(), group.into(), version.into()]
        };
        self
    }

    /// Uses an absolute path below the server URL (`/version`, `/apis`, `/openapi/v3`),
    /// client-go's `AbsPath`. Namespace, resource and name still append to it.
    pub fn abs_path(mut self, path: &str) -> Self {
        self.abs_path = Some(path.to_string());
        self
    }

    /// The namespace; an empty one is left out of the URL.
    pub fn namespace(mut self, namespace: &str) -> Self {
        if namespace.is_empty() {
            self.namespace = None;
        } else if let Err(e) = check_segment("namespace", namespace) {
            self.fail(e);
        } else {
            self.namespace = Some(namespace.to_string());
        }
        self
    }

    /// The resource (plural, lowercased as client-go does).
    pub fn resource(mut self, resource: &str) -> Self {
        match check_segment("resource", resource) {
            Ok(()) => self.resource = Some(resource.to_ascii_lowercase()),
            Err(e) => self.fail(e),
        }
        self
    }

    /// The object's name.
    pub fn name(mut self, name: &str) -> Self {
        match check_segment("resource name", name) {
            Ok(()) => self.name = Some(name.to_string()),
            Err(e) => self.fail(e),
        }
        self
    }

    /// A subresource such as `status`, `scale` or `log` (one or more segments).
    pub fn subresource(mut self, subresource: &str) -> Self {
        for part in subresource.split('/').filter(|p| !p.is_empty()) {
            if let Err(e) = check_segment("subresource", part) {
                self.fail(e);
                return self;
            }
            self.subresource.push(part.to_string());
        }
        self
    }

    /// Extra path segments after everything else, client-go's `Suffix`.
    pub fn suffix(mut self, path: &str) -> Self {
        self.suffix.extend(
            path.split('/')
                .filter(|p| !p.is_empty())
                .map(str::to_string),
        );
        self
    }

    /// Adds a query parameter (repeatable).
    pub fn param(mut self, key: &str, value: impl Into<String>) -> Self {
        self.params.push((key.to_string(), value.into()));
        self
    }

    /// Adds query parameters, such as `ListOptions::to_query()`.
    pub fn params<K: AsRef<str>>(mut self, params: impl IntoIterator<Item = (K, String)>) -> Self {
        for (k, v) in params {
            self.params.push((k.as_ref().to_string(), v));
        }
        self
    }

    /// Adds a header. An `Authorization` header replaces the client's credentials, an
    /// `Accept` header the default `application/json`, and a non-empty `Impersonate-User`
    /// the config's whole impersonation (its user, UID, groups and extras), as in client-go.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        match (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            (Ok(n), Ok(v)) => self.headers.push((n, v)),
            _ => self.fail(Error::invalid_request(format!("invalid header {name:?}"))),
        }
        self
    }

    /// The body's content type (`application/json` by default).
    pub fn content_type(mut self, content_type: &'static str) -> Self {
        self.content_type = Some(content_type);
        self
    }

    /// A body of bytes (replayable, so the request may be retried).
    pub fn body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = Body::Bytes(body.into());
        self
    }

    /// A JSON body serialized from `value`.
    pub fn json<T: Serialize + ?Sized>(mut self, value: &T) -> Self {
        match serde_json::to_vec(value) {
            Ok(v) => self.body = Body::Bytes(v.into()),
            Err(e) => self.fail(Error::invalid_request(format!(
                "cannot serialize the request body: {e}"
            ))),
        }
        self
    }

    /// A streamed body. It cannot be replayed, so the request is never retried.
    pub fn body_stream<S, E>(mut self, stream: S) -> Self
    where
        S: Stream<Item = Result<Bytes, E>> + Send + 'static,
        E: Into<Box<dyn StdError + Send + Sync>> + 'static,
    {
        use futures_util::StreamExt as _;
        self.body = Body::Stream(Some(parking_lot::Mutex::new(Box::pin(
            stream.map(|r| r.map_err(Into::into)),
        ))));
        self
    }

    /// The timeout of this whole request (client-go's `Request.Timeout`), also sent as
    /// `?timeout=` so the server stops too. Unset, it is the
    /// [`Config::timeout`](crate::Config::timeout) (sent too); zero is no timeout, even when
    /// the config has one.
    ///
    /// It is a deadline, as client-go's request context is: it starts once the request has
    /// first waited on the client's rate limiter and covers everything after, its retries
    /// included: getting credentials (an exec plugin run), every attempt, the `Retry-After`
    /// waits and each retry's wait on the rate limiter, and reading the body of
    /// [`Request::send`] and [`Request::bytes`] or of an error response. Once it has passed
    /// no further attempt starts: a retry whose wait (a 503's `Retry-After`, say) would end
    /// past it waits until it and then fails with a timeout error that names the 503 as the
    /// previous attempt's, as client-go's request does (`context deadline exceeded`). For
    /// streams and watches it bounds the wait for the response headers (retries included),
    /// not the stream.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How many times to retry (default 10; negative means 0).
    pub fn max_retries(mut self, n: i32) -> Self {
        self.max_retries = clamp_max_retries(n);
        self
    }

    /// Backs off with `manager` before the first attempt and each retry (client-go's
    /// `BackOffWithContext`): a retry waits for the longer of its backoff and the server's
    /// `Retry-After`, and a backoff that would pass the request's timeout fails the request
    /// with a timeout error when the timeout passes. Without it, each request gets a fresh
    /// [`UrlBackoff`](crate::UrlBackoff) when the environment asks for one, and no backoff
    /// otherwise (see [`BackoffManager`]).
    pub fn backoff(mut self, manager: Arc<dyn BackoffManager>) -> Self {
        self.backoff = Some(manager);
        self
    }

    /// The URL this request goes to, for a log line or a message: a password in the server
    /// URL's user info shows as `xxxxx` (see [`Client::base_url`](crate::Client::base_url)).
    pub fn url(&self) -> Result<String, Error> {
        self.build_url()
            .map(|url| crate::secret::redact_url_password(url.as_str()).into_owned())
    }

    /// The request's own timeout, else the config's; zero is none, as in client-go.
    fn effective_timeout(&self) -> Option<Duration> {
        self.timeout
            .or(self.client.inner.timeout)
            .filter(|t| !t.is_zero())
    }

    fn build_url(&self) -> Result<url::Url, Error> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let mut url = self.client.inner.base.clone();
        if url.cannot_be_a_base() {
            return Err(Error::invalid_request("the server url cannot have a path"));
        }
        // The path is escaped here and handed to the URL whole: the `url` crate's segment
        // setter drops tabs and line breaks, which would send a request for `a\tb` to `ab`,
        // another object.
        let base_path = url.path();
        let mut path = base_path.strip_suffix('/').unwrap_or(base_path).to_owned();
        let mut push = |segment: &str| {
            path.push('/');
            path.extend(utf8_percent_encode(segment, PATH_SEGMENT));
        };
        // `.` and `..` in an absolute path or a suffix are left out, never resolved.
        let plain = |s: &&str| !s.is_empty() && *s != "." && *s != "..";
        match &self.abs_path {
            Some(p) => p.split('/').filter(plain).for_each(&mut push),
            None if self.prefix.is_empty() => {
                return Err(Error::invalid_request(
                    "request has neither a group/version nor an absolute path",
                ));
            }
            None => self.prefix.iter().for_each(|s| push(s)),
        }
        if let Some(ns) = &self.namespace {
            push("namespaces");
            push(ns);
        }
        if let Some(r) = &self.resource {
            push(r);
        }
        if let Some(n) = &self.name {
            if self.resource.is_none() && self.namespace.is_none() && self.abs_path.is_none() {
                return Err(Error::invalid_request("a resource name needs a resource"));
            }
            push(n);
        }
        self.subresource.iter().for_each(|s| push(s));
        self.suffix
            .iter()
            .map(String::as_str)
            .filter(plain)
            .for_each(push);
        url.set_path(&path);
        let mut params = self.params.clone();
        if let Some(t) = self.effective_timeout() {
            params.push((
                "timeout".into(),
                kclient_apimachinery::meta::Duration::from(t).to_string(),
            ));
        }
        if !params.is_empty() {
            let mut q = url.query_pairs_mut();
            for (k, v) in &params {
                q.append_pair(k, v);
            }
        }
        Ok(url)
    }

    /// Sends and decodes a 2xx JSON body into `T` (a typed object, a list, `serde_json::Value`
    /// or an Unstructured type).
    pub async fn send<T: DeserializeOwned>(self) -> Result<T, Error> {
        Ok(self.send_with_warnings().await?.0)
    }

    /// Like [`Request::send`], also returning the response's `Warning` headers.
    ///
    /// The body must be JSON: a `Content-Type` that says otherwise (an HTML page from a proxy)
    /// is an error naming it. A body that is a `Status` other than `Success` (in protobuf
    /// too, for `Request::send_protobuf`, feature `protobuf`) is the error it describes, as client-go's
    /// `Result.Into` returns it. Each object in it is held to
    /// [`Config::max_object_size`](crate::Config::max_object_size) and the body to
    /// [`Config::read_idle_timeout`](crate::Config::read_idle_timeout).
    pub async fn send_with_warnings<T: DeserializeOwned>(self) -> Result<(T, Vec<Warning>), Error> {
        let what = format!("{} {} response", self.verb.as_str(), self.path_for_errors());
        let max_object = self.client.inner.max_object_size;
        let sent = self.execute(Mode::Normal).await?;
        let content_type = sent.content_type();
        sent.read_json(content_type.as_deref(), max_object, what)
            .await
    }

    /// Like [`Request::send`], asking for protobuf first: `Accept:
    /// application/vnd.kubernetes.protobuf, application/json`, as client-go's clientset does for
    /// built-in kinds. The body is decoded by its own `Content-Type`: protobuf with `decode`
    /// (such as [`ProtobufCodec::decode_object`](kclient_apimachinery::protobuf::ProtobufCodec::decode_object)),
    /// JSON as [`Request::send`] does, so a server that answers JSON still works.
    ///
    /// Plain [`Request::send`] when the client's [`Config::content_type`](crate::Config::content_type)
    /// is [`ContentType::Json`](crate::ContentType::Json). An `Accept` header set on the request
    /// is kept (a metadata-only request asks for `;as=PartialObjectMetadata` in protobuf or
    /// JSON), and the answer is still decoded by its `Content-Type`. A protobuf body is held to
    /// [`Config::max_object_size`](crate::Config::max_object_size) as a JSON body is (a single
    /// object whole, each of a list's items apart), once read and before it is decoded; the
    /// protobuf decoder refuses lengths past the end of the body.
    #[cfg(feature = "protobuf")]
    pub async fn send_protobuf<T: DeserializeOwned>(
        self,
        decode: impl FnOnce(&[u8]) -> Result<T, kclient_apimachinery::protobuf::ProtoError>,
    ) -> Result<T, Error> {
        if !self.prefers_protobuf() {
            return self.send().await;
        }
        let what = format!("{} {} response", self.verb.as_str(), self.path_for_errors());
        let max_object = self.client.inner.max_object_size;
        let sent = self.accept_protobuf().execute(Mode::Normal).await?;
        let content_type = sent.content_type();
        if is_protobuf(content_type.as_deref()) {
            let (body, _warnings) = sent.read(None, &what).await?;
            crate::body::check_protobuf_sizes(&body, max_object)
                .map_err(|e| Error::decode(what.clone(), e))?;
            // A `Status` other than `Success` in place of the object is the error it
            // describes, as in JSON (see `failure_status`).
            if let Some(Ok(status)) = kclient_apimachinery::protobuf::decode_status(&body)
                && !status.is_success()
            {
                return Err(Error::from_status(status));
            }
            return decode(&body).map_err(|e| Error::decode(what, e));
        }
        Ok(sent
            .read_json(content_type.as_deref(), max_object, what)
            .await?
            .0)
    }

    /// Like [`Request::watch`], asking for protobuf first (as [`Request::send_protobuf`]
    /// does): the events are decoded with `codec` when the server answers with a protobuf
    /// stream, as JSON otherwise.
    #[cfg(feature = "protobuf")]
    pub async fn watch_protobuf<T: DeserializeOwned>(
        self,
        codec: kclient_apimachinery::protobuf::ProtobufCodec<T>,
    ) -> Result<WatchStream<T>, Error> {
        if !self.prefers_protobuf() {
            return self.watch().await;
        }
        let (body, content_type, max_frame, what) = self.accept_protobuf().open_watch().await?;
        Ok(if is_protobuf(content_type.as_deref()) {
            WatchStream::protobuf(body, max_frame, what, codec)
        } else {
            check_watch_json(content_type.as_deref(), &what)?;
            WatchStream::new(body, max_frame, what)
        })
    }

    /// A protobuf body (an enveloped object, such as
    /// [`ProtobufCodec::encode`](kclient_apimachinery::protobuf::ProtobufCodec::encode) makes),
    /// sent as `application/vnd.kubernetes.protobuf`.
    #[cfg(feature = "protobuf")]
    pub fn protobuf_body(self, body: impl Into<Bytes>) -> Self {
        self.content_type(kclient_apimachinery::protobuf::CONTENT_TYPE_PROTOBUF)
            .body(body)
    }

    /// Whether the client prefers protobuf ([`Config::content_type`](crate::Config::content_type)).
    #[cfg(feature = "protobuf")]
    fn prefers_protobuf(&self) -> bool {
        self.client.inner.content_type == crate::ContentType::Protobuf
    }

    /// Asks for protobuf first, unless the caller set an `Accept` header of its own.
    #[cfg(feature = "protobuf")]
    fn accept_protobuf(self) -> Self {
        if self.headers.iter().any(|(n, _)| n == http::header::ACCEPT) {
            self
        } else {
            self.header("Accept", ACCEPT_PROTOBUF)
        }
    }

    /// Sends and returns the 2xx body as bytes (client-go's `DoRaw`), held to
    /// [`Config::read_idle_timeout`](crate::Config::read_idle_timeout) but not to the object
    /// size limit.
    pub async fn bytes(self) -> Result<Bytes, Error> {
        let what = format!("{} {} response", self.verb.as_str(), self.path_for_errors());
        let sent = self.execute(Mode::Normal).await?;
        Ok(sent.read(None, &what).await?.0)
    }

    /// Sends and returns the 2xx body as a stream of chunks (pod logs, client-go's `Stream`).
    ///
    /// As client-go's `Stream`, it is retried after a 429 or 5xx answer with a `Retry-After`,
    /// but not after a connection reset, even for a GET.
    pub async fn stream(self) -> Result<ByteStream, Error> {
        Ok(self.execute(Mode::Stream).await?.into_stream())
    }

    /// Opens a watch (adding `watch=true` when absent) and decodes events as they arrive.
    ///
    /// A non-2xx response is the API error; a 2xx response whose `Content-Type` is present and
    /// not JSON (an HTML page from a proxy) is a decode error naming it, before any event is
    /// read (client-go's watch refuses a content type it has no stream decoder for). A
    /// connection reset or cut before the response headers is retried as any GET is (see
    /// [`Request::max_retries`]); when the retries are spent, the transport error is returned.
    /// (client-go returns an empty watch there instead, which hides the failure from the
    /// reflector's watch error handler; an error lets the caller report it and back off.) A
    /// connection refused, or a timeout before the headers, is returned at once, as for any
    /// GET (client-go's watch retries a timeout too, then returns an empty watch).
    pub async fn watch<T: DeserializeOwned>(self) -> Result<WatchStream<T>, Error> {
        let (body, content_type, max_line, what) = self.open_watch().await?;
        check_watch_json(content_type.as_deref(), &what)?;
        Ok(WatchStream::new(body, max_line, what))
    }

    /// Opens a watch whose objects are left undecoded (same rules as [`Request::watch`]).
    pub async fn watch_raw(self) -> Result<RawWatchStream, Error> {
        let (body, content_type, max_line, what) = self.open_watch().await?;
        check_watch_json(content_type.as_deref(), &what)?;
        Ok(RawWatchStream::new(body, max_line, what))
    }

    /// Opens a watch: its body, the response's `Content-Type`, the event size limit and the
    /// request's name for errors.
    async fn open_watch(self) -> Result<(ByteStream, Option<String>, usize, String), Error> {
        let what = format!("watch event of {}", self.path_for_errors());
        let max_line = self.client.inner.max_object_size;
        let sent = self.with_watch_param().execute(Mode::Watch).await?;
        let content_type = sent.content_type();
        Ok((sent.into_stream(), content_type, max_line, what))
    }

    /// The request's path, to name it in errors.
    fn path_for_errors(&self) -> String {
        self.build_url()
            .map(|u| u.path().to_string())
            .unwrap_or_else(|_| "(invalid request)".to_string())
    }

    fn with_watch_param(mut self) -> Self {
        if !self.params.iter().any(|(k, _)| k == "watch") {
            self.params.push(("watch".into(), "true".into()));
        }
        self
    }

    /// Sends the request (with its retries) until a 2xx response's headers, inside the
    /// request's span, and records its metrics.
    pub(crate) async fn execute(self, mode: Mode) -> Result<Sent, Error> {
        let url = self.build_url()?;
        let labels = Arc::new(RequestLabels::new(
            self.verb,
            &url,
            self.client.inner.base.path(),
            &self.client.inner.host_label,
        ));
        let span = tracing::info_span!(
            "HTTP request",
            otel.name = %format_args!("{} {}", labels.verb, labels.template),
            otel.kind = "client",
            http.request.method = labels.verb,
            url.path = %labels.template,
            server.address = url.host_str().unwrap_or_default(),
            server.port = url.port_or_known_default(),
            http.response.status_code = tracing::field::Empty,
            http.request.resend_count = tracing::field::Empty,
        );
        let start = Instant::now();
        let result = self
            .attempts(mode, url, &labels)
            .instrument(span.clone())
            .await;
        let provider = metrics::provider();
        match result {
            Ok(mut sent) => {
                if mode == Mode::Normal {
                    // The latency includes reading the body, as client-go's does.
                    sent.observed = provider.map(|_| Observed { labels, start });
                } else if let Some(p) = provider {
                    p.request_latency(labels.verb, &labels.template, &labels.host, start.elapsed());
                }
                sent.span = span;
                Ok(sent)
            }
            Err(e) => {
                if let Some(p) = provider {
                    p.request_latency(labels.verb, &labels.template, &labels.host, start.elapsed());
                }
                Err(e)
            }
        }
    }

    /// The tries of one request, per [`crate::retry`].
    async fn attempts(
        mut self,
        mode: Mode,
        url: url::Url,
        labels: &RequestLabels,
    ) -> Result<Sent, Error> {
        let provider = metrics::provider();
        let inner = self.client.inner.clone();
        let replayable = !matches!(self.body, Body::Stream(_));
        // client-go's exec, attach and port-forward executors make one attempt: the command
        // may already run, and they do not go through the RESTClient's retries.
        let max_retries = if mode == Mode::Upgrade {
            0
        } else {
            self.max_retries
        };
        let mut retry = WithRetry::new(max_retries, replayable);
        let what = format!("{} {}", self.verb.as_str(), url.path());
        let has_auth_header = self
            .headers
            .iter()
            .any(|(n, _)| n == http::header::AUTHORIZATION);
        // client-go's impersonating round tripper leaves a request that names a user to
        // impersonate (a non-empty first `Impersonate-User`) alone: the config's impersonation
        // headers are then not sent, so that the server does not read the config's user first.
        let own_impersonation = self
            .headers
            .iter()
            .find(|(n, _)| n == "impersonate-user")
            .is_some_and(|(_, v)| !v.is_empty());
        let default_headers: &[(HeaderName, HeaderValue)] = if own_impersonation {
            &[]
        } else {
            &inner.default_headers
        };
        let timeout = self.effective_timeout();
        // client-go's exec, attach and port-forward executors do not back off either.
        let backoff = match (&self.backoff, inner.env_backoff) {
            _ if mode == Mode::Upgrade => None,
            (Some(manager), _) => Some(Arc::clone(manager)),
            (None, Some((initial, max))) => {
                Some(Arc::new(UrlBackoff::new(initial, max)) as Arc<dyn BackoffManager>)
            }
            (None, None) => None,
        };
        if let (Backend::Custom(_), Mode::Upgrade) = (&inner.backend, mode) {
            return Err(Error::invalid_request(format!(
                "{what} needs a WebSocket connection (exec, attach, port-forward), which a \
                 client built with a RoundTripper cannot open"
            )));
        }
        loop {
            // WebSocket upgrades are never throttled: client-go's exec, attach and
            // port-forward executors dial with the config's transport, not through the
            // RESTClient's rate limiter.
            if let Some(limiter) = &inner.limiter
                && !(mode == Mode::Watch && retry.attempts() == 0)
                && mode != Mode::Upgrade
            {
                let waited = Instant::now();
                // A retry's wait counts against the request's deadline (the first try's comes
                // before it starts).
                let in_time = throttle(
                    limiter.as_ref(),
                    &inner.long_wait_log,
                    &what,
                    retry.deadline().map(|d| d.at),
                )
                .await;
                if let Some(p) = provider {
                    p.rate_limiter_latency(
                        labels.verb,
                        &labels.template,
                        &labels.host,
                        waited.elapsed(),
                    );
                }
                if let (false, Some(d)) = (in_time, retry.deadline()) {
                    return Err(retry.wrap_previous(Error::transport(
                        TransportErrorKind::Timeout,
                        format!(
                            "the client-side rate limiter would hold a retry of {what} past \
                             the request's timeout of {:?}",
                            d.timeout
                        ),
                    )));
                }
            }
            // The request's deadline starts after its first wait on the rate limiter.
            let deadline = retry.start_deadline(timeout);
            if retry.attempts() == 0
                && let Some(manager) = &backoff
            {
                back_off(manager.calculate_backoff(&url), deadline, &what)
                    .await
                    .map_err(|e| retry.wrap_previous(e))?;
            }
            if let Some(p) = provider {
                match &self.body {
                    Body::Empty => p.request_size(labels.verb, &labels.host, 0),
                    Body::Bytes(b) => p.request_size(labels.verb, &labels.host, b.len() as u64),
                    Body::Stream(_) => {}
                }
            }
            let credentials = if has_auth_header {
                Ok((None, crate::auth::UsedCredentials::Other))
            } else if let Some(d) = deadline {
                // The request's timeout covers getting its credentials (an exec plugin run),
                // as the round trip in client-go does.
                match tokio::time::timeout_at(d.at, inner.auth.authorization()).await {
                    Ok(credentials) => credentials,
                    Err(_) => Err(retry.wrap_previous(Error::transport(
                        TransportErrorKind::Timeout,
                        format!(
                            "request timed out: no credentials within the request's timeout \
                             of {:?} (the exec plugin is still running)",
                            d.timeout
                        ),
                    ))),
                }
            } else {
                inner.auth.authorization().await
            };
            let (auth, used) = match credentials {
                Ok(credentials) => credentials,
                Err(e) => {
                    // An attempt that got no response: client-go gets the credentials inside
                    // the round trip, whose error is counted as a `<error>` result.
                    labels.record_attempt(provider, metrics::NO_RESPONSE_CODE, retry.attempts());
                    return Err(e);
                }
            };
            // The connection is picked once the credentials are in hand: an exec plugin that
            // has just rotated the client certificate has the transport drop the connections
            // made with the old one, and this request must present the new one (client-go
            // closes the connections on rotation, before its round trip picks one).
            let (conn, guard) = connection(&inner.backend, mode)?;
            // An `Accept` set on the request (a metadata-only `as=PartialObjectMetadata`
            // request) replaces the default; two headers would leave the server reading the
            // first.
            let default_accept = !self.headers.iter().any(|(n, _)| n == http::header::ACCEPT);
            let content_type = self.content_type.unwrap_or("application/json");
            let content_type = HeaderValue::from_str(content_type).map_err(|_| {
                Error::invalid_request(format!("invalid content type {content_type:?}"))
            })?;
            // What bounds an error body (and the body of a request read whole).
            let limits = ReadLimits {
                idle: inner.read_idle_timeout,
                deadline,
            };
            let sent = match &conn {
                Conn::Http(http, route) => {
                    let wire = match route {
                        Some(route) => route.wire_url(&url).into_owned(),
                        None => url.clone(),
                    };
                    // An error names the server URL, not the one the handshake's name is in,
                    // without the user info (reqwest sends it as basic auth and leaves it out
                    // of its own errors).
                    let transport_error = |e: reqwest::Error| {
                        let mut shown = url.clone();
                        // Fails only for URLs that cannot have user info.
                        let _ = shown.set_password(None);
                        let _ = shown.set_username("");
                        transport_error(e.with_url(shown))
                    };
                    let mut rb = http
                        .request(self.verb.method(), wire)
                        .header(http::header::USER_AGENT, inner.user_agent.clone());
                    if default_accept {
                        rb = rb.header(http::header::ACCEPT, "application/json");
                    }
                    if let Some(auth) = auth {
                        rb = rb.header(http::header::AUTHORIZATION, auth);
                    }
                    for (n, v) in default_headers.iter().chain(&self.headers) {
                        rb = rb.header(n, v);
                    }
                    match &mut self.body {
                        Body::Empty => {}
                        Body::Bytes(b) => {
                            rb = rb
                                .header(http::header::CONTENT_TYPE, content_type)
                                .body(b.clone());
                        }
                        Body::Stream(s) => {
                            let Some(body) = s.take() else {
                                return Err(Error::invalid_request(
                                    "a streamed body cannot be sent twice",
                                ));
                            };
                            rb = rb
                                .header(http::header::CONTENT_TYPE, content_type)
                                .body(reqwest::Body::wrap_stream(body.into_inner()));
                        }
                    }
                    let sent = match (mode, deadline) {
                        // reqwest's timeout also bounds the body, which `limits` does too.
                        (Mode::Normal, Some(d)) => rb
                            .timeout(d.remaining())
                            .send()
                            .await
                            .map_err(transport_error),
                        (_, Some(d)) => match tokio::time::timeout_at(d.at, rb.send()).await {
                            Ok(r) => r.map_err(transport_error),
                            Err(_) => Err(no_headers(d)),
                        },
                        (_, None) => rb.send().await.map_err(transport_error),
                    };
                    sent.map(Response::Http)
                }
                Conn::Custom(rt) => {
                    let mut req = http::Request::builder()
                        .method(self.verb.as_str())
                        .uri(url.as_str())
                        .header(http::header::USER_AGENT, inner.user_agent.clone());
                    if default_accept {
                        req = req.header(http::header::ACCEPT, "application/json");
                    }
                    if let Some(auth) = auth {
                        req = req.header(http::header::AUTHORIZATION, auth);
                    }
                    for (n, v) in default_headers.iter().chain(&self.headers) {
                        req = req.header(n, v);
                    }
                    let body = match &mut self.body {
                        Body::Empty => Bytes::new(),
                        Body::Bytes(b) => {
                            req = req.header(http::header::CONTENT_TYPE, content_type);
                            b.clone()
                        }
                        Body::Stream(s) => {
                            let Some(body) = s.take() else {
                                return Err(Error::invalid_request(
                                    "a streamed body cannot be sent twice",
                                ));
                            };
                            req = req.header(http::header::CONTENT_TYPE, content_type);
                            collect_body(body.into_inner()).await?
                        }
                    };
                    let req = req.body(body).map_err(|e| {
                        Error::invalid_request(format!("cannot build the request {what}: {e}"))
                    })?;
                    let call = rt.round_trip(req);
                    let sent = match deadline {
                        Some(d) => match tokio::time::timeout_at(d.at, call).await {
                            Ok(r) => r,
                            Err(_) => Err(no_headers(d)),
                        },
                        None => call.await,
                    };
                    sent.map(Response::Custom)
                }
            };
            match sent {
                Ok(resp) => {
                    let status = resp.status();
                    tracing::Span::current().record("http.response.status_code", status.as_u16());
                    labels.record_attempt(provider, status.as_str(), retry.attempts());
                    if let Some(manager) = &backoff {
                        manager.update_backoff(&url, Some(status));
                    }
                    if status == StatusCode::UNAUTHORIZED {
                        inner.auth.unauthorized(&used);
                    }
                    if let Some(wait) = retry.after_response(status, resp.headers()) {
                        tracing::debug!(request = %what, status = status.as_u16(), ?wait, attempt = retry.attempts(), "retrying");
                        drop(resp);
                        retry_wait(wait, backoff.as_deref(), &url, deadline, &what)
                            .await
                            .map_err(|e| retry.wrap_previous(e))?;
                        tracing::Span::current()
                            .record("http.request.resend_count", retry.attempts());
                        continue;
                    }
                    // Only the answer the request ends with hands its warnings over (client-go's
                    // `transformResponse`): a retried answer's would repeat the final one's.
                    let warnings = parse_warnings(resp.headers());
                    for w in &warnings {
                        inner
                            .warning_handler
                            .handle_warning(w.code, &w.agent, &w.text);
                    }
                    let upgraded =
                        mode == Mode::Upgrade && status == StatusCode::SWITCHING_PROTOCOLS;
                    if status.is_success() || upgraded {
                        return Ok(Sent {
                            resp,
                            warnings,
                            guard,
                            limits,
                            observed: None,
                            span: tracing::Span::none(),
                        });
                    }
                    let (error, body_len) = self.error_from_response(resp, limits).await;
                    // The body of an error answer to a request read whole is a response too
                    // (client-go's `Do` records any result with a body).
                    if let (Mode::Normal, Some(p), Some(len @ 1..)) = (mode, provider, body_len) {
                        p.response_size(labels.verb, &labels.host, len as u64);
                    }
                    return Err(error);
                }
                Err(err) => {
                    labels.record_attempt(provider, metrics::NO_RESPONSE_CODE, retry.attempts());
                    if let Some(manager) = &backoff {
                        manager.update_backoff(&url, None);
                    }
                    let reset = err.is_connection_reset();
                    let text = err.to_string();
                    // client-go's `Stream` retries no transport error, and its exec and
                    // port-forward executors retry nothing: only a GET read whole or a
                    // watch is tried again after a reset.
                    let retries_resets =
                        self.verb == Verb::Get && matches!(mode, Mode::Normal | Mode::Watch);
                    if let Some(wait) = retry.after_error(retries_resets, reset, &text) {
                        tracing::debug!(request = %what, error = %text, ?wait, attempt = retry.attempts(), "retrying");
                        retry_wait(wait, backoff.as_deref(), &url, deadline, &what)
                            .await
                            .map_err(|e| retry.wrap_previous(e))?;
                        tracing::Span::current()
                            .record("http.request.resend_count", retry.attempts());
                        continue;
                    }
                    return Err(retry.wrap_previous(err));
                }
            }
        }
    }

    /// The error a non-2xx response stands for, its body read within `limits` (a body that
    /// stalls is a timeout error naming the status), and the length of the body read.
    async fn error_from_response(
        &self,
        resp: Response,
        limits: ReadLimits,
    ) -> (Error, Option<usize>) {
        let code = resp.status().as_u16();
        let content_type = resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let retry_after = resp
            .headers()
            .get(http::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(0);
        let what = format!(
            "the status {code} error response to {} {}",
            self.verb.as_str(),
            self.path_for_errors()
        );
        let body = match read_capped(resp, MAX_ERROR_BODY, limits, &what).await {
            Ok(body) => body,
            Err(e) => return (e, None),
        };
        let error = self.error_from_body(code, content_type.as_deref(), retry_after, &body);
        (error, Some(body.len()))
    }

    /// The error that a non-2xx response with this status `code`, `Content-Type`, `Retry-After`
    /// and `body` stands for.
    fn error_from_body(
        &self,
        code: u16,
        content_type: Option<&str>,
        retry_after: u32,
        body: &[u8],
    ) -> Error {
        if let Ok(status) = decode_json::<Status>(body)
            && status.kind == "Status"
        {
            return Error::from_response_status(code, status);
        }
        // A protobuf `Status` (the answer to `Accept: application/vnd.kubernetes.protobuf`).
        #[cfg(feature = "protobuf")]
        if body.starts_with(&kclient_apimachinery::protobuf::MAGIC)
            && let Some(Ok(status)) = kclient_apimachinery::protobuf::decode_status(body)
        {
            return Error::from_response_status(code, status);
        }
        let group = match self.prefix.as_slice() {
            [apis, group, _] if apis == "apis" => group.as_str(),
            _ => "",
        };
        Error::from_server_response(ServerResponse {
            code,
            verb: self.verb.as_str(),
            body,
            // client-go's isTextResponse: a missing Content-Type counts as text.
            content_type: Some(content_type.unwrap_or("text/plain")),
            retry_after_seconds: retry_after,
            group,
            resource: self.resource.as_deref().unwrap_or(""),
            name: self.name.as_deref().unwrap_or(""),
        })
    }
}

/// Where one attempt of a request in `mode` is sent, and the slot a watch or stream holds on
/// its connection.
fn connection(backend: &Backend, mode: Mode) -> Result<(Conn, Option<LongRunningGuard>), Error> {
    Ok(match backend {
        Backend::Custom(rt) => (Conn::Custom(rt.clone()), None),
        Backend::Http(transport) if mode == Mode::Upgrade => {
            let http = transport
                .for_upgrade()
                .map_err(|e| Error::transport(TransportErrorKind::Other, e))?;
            (Conn::Http(http, transport.route().cloned()), None)
        }
        Backend::Http(transport) if mode == Mode::Normal => (
            Conn::Http(transport.for_request(), transport.route().cloned()),
            None,
        ),
        Backend::Http(transport) => {
            let (http, guard) = transport
                .for_long_running()
                .map_err(|e| Error::transport(TransportErrorKind::Other, e))?;
            (Conn::Http(http, transport.route().cloned()), Some(guard))
        }
    })
}

/// The wait before a retry: the server's `wait`, or the backoff `manager` gives `url` when
/// that is longer, within the request's deadline ([`sleep_within`]).
async fn retry_wait(
    wait: Duration,
    manager: Option<&dyn BackoffManager>,
    url: &url::Url,
    deadline: Option<Deadline>,
    what: &str,
) -> Result<(), Error> {
    let backoff = manager.map_or(Duration::ZERO, |m| m.calculate_backoff(url));
    let delay = wait.max(backoff);
    sleep_within(delay, deadline, || {
        format!("waiting {delay:?} to retry {what}")
    })
    .await
}

/// Sleeps the backoff of a request's first attempt, within its deadline ([`sleep_within`]).
async fn back_off(delay: Duration, deadline: Option<Deadline>, what: &str) -> Result<(), Error> {
    if delay.is_zero() {
        return Ok(());
    }
    tracing::debug!(request = %what, ?delay, "backing off");
    sleep_within(delay, deadline, || {
        format!("backing off {what} for {delay:?}")
    })
    .await
}

/// Sleeps `delay` before an attempt. A delay that would end at or past the request's
/// deadline sleeps until the deadline and then fails with a timeout error (`doing` says what
/// was waited for), as client-go's: its backoff sleeps with the request's context, which ends
/// the sleep at the deadline, and the next step (the rate limiter's wait, or the attempt)
/// then fails with `context deadline exceeded`.
async fn sleep_within(
    delay: Duration,
    deadline: Option<Deadline>,
    doing: impl FnOnce() -> String,
) -> Result<(), Error> {
    if let Some(d) = deadline
        && tokio::time::Instant::now()
            .checked_add(delay)
            .is_none_or(|end| end >= d.at)
    {
        tokio::time::sleep_until(d.at).await;
        return Err(Error::transport(
            TransportErrorKind::Timeout,
            format!(
                "request timed out: the request's timeout of {:?} passed while {}",
                d.timeout,
                doing()
            ),
        ));
    }
    tokio::time::sleep(delay).await;
    Ok(())
}

/// The error of an attempt that got no response headers before the request's deadline.
fn no_headers(deadline: Deadline) -> Error {
    Error::transport(
        TransportErrorKind::Timeout,
        format!(
            "no response headers within the request's timeout of {:?}",
            deadline.timeout
        ),
    )
}

/// Reads at most `cap` bytes of an error body within `limits`. A timeout is the error; a
/// connection cut in the middle leaves what was read (the status code still answers).
async fn read_capped(
    resp: Response,
    cap: usize,
    limits: ReadLimits,
    what: &str,
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    let mut chunks = resp.into_chunks();
    loop {
        match next_chunk(&mut chunks, limits, what).await {
            Ok(Some(chunk)) => {
                let room = cap.saturating_sub(out.len());
                out.extend_from_slice(&chunk[..chunk.len().min(room)]);
                if out.len() >= cap {
                    return Ok(out);
                }
            }
            Ok(None) => return Ok(out),
            Err(e) if e.is_transport_timeout() => return Err(e),
            Err(_) => return Ok(out),
        }
    }
}

/// Collects a streamed request body for a [`RoundTripper`](crate::RoundTripper), which takes
/// the body as bytes.
async fn collect_body(mut body: BodyStream) -> Result<Bytes, Error> {
    use futures_util::StreamExt as _;
    let mut out = bytes::BytesMut::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(|e| {
            Error::invalid_request(format!("cannot read the streamed request body: {e}"))
        })?;
        out.extend_from_slice(&chunk);
    }
    Ok(out.freeze())
}

/// The `Status` a 2xx JSON body holds instead of the object asked for, when its `status` is
/// not `Success`: client-go's `Result.Into` and `Result.Get` return such a body as the error
/// it describes (a 200 that says NotFound is not found), where decoding it as the object
/// would give one built from the Status's fields. The body counts as a `Status` when its
/// leading members say so (`kind` first, or after `apiVersion`, as every Kubernetes server
/// writes them), which costs a look at its first bytes; only then is it decoded as one.
fn failure_status(body: &[u8]) -> Option<Status> {
    if leading_kind(body)? != b"Status" {
        return None;
    }
    let status: Status = decode_json(body).ok()?;
    (!status.is_success()).then_some(status)
}

/// The value of a JSON object's `kind` when it is the first member or follows `apiVersion`,
/// both plain strings; `None` otherwise (another member first, escapes, not an object).
fn leading_kind(body: &[u8]) -> Option<&[u8]> {
    fn skip_ws(s: &[u8]) -> &[u8] {
        let start = s
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .unwrap_or(s.len());
        &s[start..]
    }
    /// A short string without escapes, and what follows it.
    fn plain_string(s: &[u8]) -> Option<(&[u8], &[u8])> {
        let s = skip_ws(s).strip_prefix(b"\"")?;
        let end = memchr::memchr(b'"', &s[..s.len().min(256)])?;
        let value = &s[..end];
        (!value.contains(&b'\\')).then_some((value, &s[end + 1..]))
    }
    /// A member whose key and value are such strings, and what follows it.
    fn member(s: &[u8]) -> Option<(&[u8], &[u8], &[u8])> {
        let (key, after) = plain_string(s)?;
        let (value, after) = plain_string(skip_ws(after).strip_prefix(b":")?)?;
        Some((key, value, after))
    }
    let (key, value, after) = member(skip_ws(body).strip_prefix(b"{")?)?;
    if key == b"apiVersion" {
        let (key, value, _) = member(skip_ws(after).strip_prefix(b",")?)?;
        return (key == b"kind").then_some(value);
    }
    (key == b"kind").then_some(value)
}

/// Where a request is sent: one of the transport's HTTP clients (and the route that names
/// the handshake by `tls-server-name`), or a round tripper.
pub(crate) enum Conn {
    Http(reqwest::Client, Option<Arc<ServerNameRoute>>),
    Custom(Arc<dyn crate::RoundTripper>),
}

/// A response from either kind of [`Conn`].
pub(crate) enum Response {
    Http(reqwest::Response),
    Custom(http::Response<ByteStream>),
}

impl Response {
    pub(crate) fn status(&self) -> StatusCode {
        match self {
            Response::Http(r) => r.status(),
            Response::Custom(r) => r.status(),
        }
    }

    pub(crate) fn headers(&self) -> &http::HeaderMap {
        match self {
            Response::Http(r) => r.headers(),
            Response::Custom(r) => r.headers(),
        }
    }

    fn content_length(&self) -> Option<u64> {
        match self {
            Response::Http(r) => r.content_length(),
            Response::Custom(r) => r
                .headers()
                .get(http::header::CONTENT_LENGTH)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse().ok()),
        }
    }

    /// The body's chunks, transport errors mapped to [`Error`].
    fn into_chunks(self) -> ByteStream {
        match self {
            Response::Http(r) => ByteStream::new(r.bytes_stream().map_err(transport_error)),
            Response::Custom(r) => r.into_body(),
        }
    }
}

/// A 2xx response, its warnings, and the connection slot a stream holds.
pub(crate) struct Sent {
    pub(crate) resp: Response,
    warnings: Vec<Warning>,
    guard: Option<LongRunningGuard>,
    /// What bounds reading the body whole ([`Sent::read`]); a stream's body has no bound here.
    limits: ReadLimits,
    /// For a body read whole: what its latency and size are recorded under, when a metrics
    /// provider is set.
    observed: Option<Observed>,
    /// The request's span, entered again while the body is read.
    span: tracing::Span,
}

/// The labels of one request's metrics, computed once.
pub(crate) struct RequestLabels {
    verb: &'static str,
    template: String,
    host: Arc<str>,
}

impl RequestLabels {
    /// Records the result of an attempt, `code` (its status code, or `<error>` when no
    /// response came), and, for an attempt after the first (`retries_before` > 0), the retry
    /// it is, with its own code: a retry counts once made, as client-go's `withRetry.After`
    /// counts it, not when decided.
    fn record_attempt(
        &self,
        provider: Option<&dyn metrics::MetricsProvider>,
        code: &str,
        retries_before: u32,
    ) {
        if let Some(p) = provider {
            p.request_result(code, self.verb, &self.host);
            if retries_before > 0 {
                p.request_retry(code, self.verb, &self.host);
            }
        }
    }

    /// The labels of a request to `url` by a client whose server URL has the path `base_path`
    /// and whose requests are labelled `host` ([`metrics::host_label`]).
    fn new(verb: Verb, url: &url::Url, base_path: &str, host: &Arc<str>) -> Self {
        RequestLabels {
            verb: verb.as_str(),
            template: metrics::url_template_under(base_path, url.path()),
            host: host.clone(),
        }
    }
}

/// A request whose latency is recorded once its body is read.
struct Observed {
    labels: Arc<RequestLabels>,
    start: Instant,
}

impl Sent {
    /// Reads the whole body (see [`crate::body`]).
    async fn read(
        self,
        max_object: Option<usize>,
        what: &str,
    ) -> Result<(Bytes, Vec<Warning>), Error> {
        let size_hint = self.resp.content_length();
        let body = read_body(
            self.resp.into_chunks(),
            size_hint,
            self.limits,
            max_object,
            what,
        )
        .instrument(self.span)
        .await;
        if let (Some(observed), Some(p)) = (self.observed, metrics::provider()) {
            let labels = &observed.labels;
            if let Ok(body) = &body {
                p.response_size(labels.verb, &labels.host, body.len() as u64);
            }
            p.request_latency(
                labels.verb,
                &labels.template,
                &labels.host,
                observed.start.elapsed(),
            );
        }
        Ok((body?, self.warnings))
    }

    /// The response's `Content-Type`.
    fn content_type(&self) -> Option<String> {
        self.resp
            .headers()
            .get(http::header::CONTENT_TYPE)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }

    /// Reads the body as JSON into `T`: a `Content-Type` that says otherwise is an error, and
    /// each object is held to `max_object` bytes.
    async fn read_json<T: DeserializeOwned>(
        self,
        content_type: Option<&str>,
        max_object: usize,
        what: String,
    ) -> Result<(T, Vec<Warning>), Error> {
        check_json_content_type(content_type).map_err(|e| Error::decode(what.clone(), e))?;
        let (body, warnings) = self.read(Some(max_object), &what).await?;
        if let Some(status) = failure_status(&body) {
            return Err(Error::from_status(status));
        }
        let value = decode_json(&body).map_err(|e| Error::decode(what, e))?;
        Ok((value, warnings))
    }

    fn into_stream(self) -> ByteStream {
        match (self.resp, self.guard) {
            (resp, None) => resp.into_chunks(),
            (Response::Http(resp), Some(guard)) => {
                ByteStream::new(resp.bytes_stream().map_err(move |e| {
                    // The guard lives as long as the stream.
                    let _slot = &guard;
                    transport_error(e)
                }))
            }
            (resp @ Response::Custom(_), Some(_)) => resp.into_chunks(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    fn client() -> Client {
        Client::new(Config::new("https://h.example:6443/prefix")).unwrap()
    }

    #[test]
    fn url_layout_table() {
        let c = client();
        let cases: Vec<(Request, &str)> = vec![
            (
                c.get().group_version("", "v1").resource("Pods"),
                "https://h.example:6443/prefix/api/v1/pods",
            ),
            (
                c.get()
                    .group_version("", "v1")
                    .namespace("ns")
                    .resource("pods")
                    .name("p")
                    .subresource("log"),
                "https://h.example:6443/prefix/api/v1/namespaces/ns/pods/p/log",
            ),
            (
                c.get()
                    .group_version("apps", "v1")
                    .namespace("")
                    .resource("deployments"),
                "https://h.example:6443/prefix/apis/apps/v1/deployments",
            ),
            (
                c.put()
                    .group_version("apps", "v1")
                    .namespace("n")
                    .resource("deployments")
                    .name("d")
                    .subresource("scale"),
                "https://h.example:6443/prefix/apis/apps/v1/namespaces/n/deployments/d/scale",
            ),
            (
                c.get()
                    .group_version("", "v1")
                    .resource("namespaces")
                    .name("kube-system"),
                "https://h.example:6443/prefix/api/v1/namespaces/kube-system",
            ),
            (
                c.get()
                    .group_version("", "v1")
                    .namespace("n")
                    .resource("services")
                    .name("s:http")
                    .subresource("proxy")
                    .suffix("a b/c?d"),
                "https://h.example:6443/prefix/api/v1/namespaces/n/services/s:http/proxy/a%20b/c%3Fd",
            ),
            (
                c.get().abs_path("/version"),
                "https://h.example:6443/prefix/version",
            ),
            (
                c.get().abs_path("/openapi/v3/"),
                "https://h.example:6443/prefix/openapi/v3",
            ),
            (
                c.get()
                    .group_version("", "v1")
                    .resource("pods")
                    .params([
                        ("labelSelector", "app in (a, b)".to_string()),
                        ("limit", "5".to_string()),
                    ])
                    .timeout(Duration::from_secs(90)),
                "https://h.example:6443/prefix/api/v1/pods?labelSelector=app+in+%28a%2C+b%29&limit=5&timeout=1m30s",
            ),
            (
                c.get()
                    .group_version("", "v1")
                    .namespace("n")
                    .resource("configmaps")
                    .name("with space#hash"),
                "https://h.example:6443/prefix/api/v1/namespaces/n/configmaps/with%20space%23hash",
            ),
            (
                // Tabs and line breaks are kept, escaped: a ClusterRole (whose names are only
                // checked as path segments) may be named so, and must not become `ab`.
                c.get()
                    .group_version("rbac.authorization.k8s.io", "v1")
                    .resource("clusterroles")
                    .name("a\tb\nc\rd"),
                "https://h.example:6443/prefix/apis/rbac.authorization.k8s.io/v1/clusterroles/a%09b%0Ac%0Dd",
            ),
            (
                c.get()
                    .group_version("rbac.authorization.k8s.io", "v1")
                    .resource("clusterroles")
                    .name("système:a\\b|[c]@d")
                    .suffix("./x\ty/../z"),
                "https://h.example:6443/prefix/apis/rbac.authorization.k8s.io/v1/clusterroles/syst%C3%A8me:a%5Cb|[c]@d/x%09y/z",
            ),
        ];
        for (req, want) in cases {
            assert_eq!(req.url().unwrap(), want);
        }
    }

    /// As client-go's (whose requests start with the `http.Client`'s timeout): the config's
    /// timeout is sent as `?timeout=` unless the request sets its own; zero is no timeout.
    #[test]
    fn the_config_timeout_is_sent_unless_the_request_sets_one() {
        let mut config = Config::new("https://h.example:6443");
        config.timeout = Some(Duration::from_secs(30));
        let c = Client::new(config).unwrap();
        let pods = || c.get().group_version("", "v1").resource("pods");
        let cases = [
            (pods(), "https://h.example:6443/api/v1/pods?timeout=30s"),
            (
                pods().timeout(Duration::from_secs(5)),
                "https://h.example:6443/api/v1/pods?timeout=5s",
            ),
            (
                pods().timeout(Duration::ZERO),
                "https://h.example:6443/api/v1/pods",
            ),
        ];
        for (req, want) in cases {
            assert_eq!(req.url().unwrap(), want);
        }
        let mut config = Config::new("https://h.example:6443");
        config.timeout = Some(Duration::ZERO);
        let c = Client::new(config).unwrap();
        let req = c.get().group_version("", "v1").resource("pods");
        assert_eq!(req.url().unwrap(), "https://h.example:6443/api/v1/pods");
        assert_eq!(req.effective_timeout(), None);
    }

    /// Which bodies are looked at as a `Status`: `kind` first or right after `apiVersion`.
    #[test]
    fn the_leading_kind_of_a_body() {
        let cases: &[(&str, Option<&str>)] = &[
            (r#"{"kind":"Status","apiVersion":"v1"}"#, Some("Status")),
            (r#"{"apiVersion":"v1","kind":"Status"}"#, Some("Status")),
            (
                "\n { \"apiVersion\" :\t\"v1\" ,\r\n \"kind\" : \"PodList\" }",
                Some("PodList"),
            ),
            (r#"{"kind":"Status""#, Some("Status")),
            (r#"{"metadata":{},"kind":"Status"}"#, None),
            (r#"{"apiVersion":"v1","metadata":{},"kind":"Status"}"#, None),
            (
                r#"{"apiVersion":"v1","apiVersion":"v1","kind":"Status"}"#,
                None,
            ),
            (r#"{"kind":"St\u0061tus"}"#, None),
            (r#"{"kind":1}"#, None),
            (r#"["kind","Status"]"#, None),
            (r#"{"kind""#, None),
            ("", None),
        ];
        for &(body, want) in cases {
            assert_eq!(
                leading_kind(body.as_bytes()),
                want.map(str::as_bytes),
                "{body:?}"
            );
        }
        let long = format!(r#"{{"kind":"{}"}}"#, "x".repeat(300));
        assert_eq!(leading_kind(long.as_bytes()), None, "a kind of 300 bytes");
    }

    #[test]
    fn invalid_segments_are_request_errors() {
        let c = client();
        let bad = [
            c.get()
                .group_version("", "v1")
                .namespace("a/b")
                .resource("pods"),
            c.get().group_version("", "v1").resource("pods").name(""),
            c.get().group_version("", "v1").resource("pods").name(".."),
            c.get()
                .group_version("", "v1")
                .resource("pods")
                .name("x%2F"),
            c.get().group_version("", "v1").resource("po/ds"),
            c.get().group_version("a/b", "v1").resource("pods"),
            c.get().resource("pods"),
            c.get().group_version("", "v1").header("bad header", "v"),
        ];
        for req in bad {
            let err = req.url().unwrap_err();
            assert!(err.is_invalid_request(), "{err}");
        }
    }

    mod with_server {
        use std::time::Instant;

        use super::*;
        use crate::test_server::{Reply, TestServer};

        fn ok(body: &str) -> Reply {
            Reply::Http(
                200,
                vec![("Content-Type", "application/json".into())],
                body.into(),
            )
        }

        fn retry_after(code: u16, seconds: &str) -> Reply {
            Reply::Http(code, vec![("Retry-After", seconds.into())], "busy".into())
        }

        fn client_for(server: &TestServer) -> Client {
            let mut c = Config::new(server.url.clone());
            c.qps = -1.0;
            Client::new(c).unwrap()
        }

        #[tokio::test]
        async fn a_request_accept_header_replaces_the_default() {
            let s = TestServer::start(vec![ok("{}")]).await;
            let client = client_for(&s);
            let _: serde_json::Value = client
                .get()
                .abs_path("/api")
                .header(
                    "Accept",
                    "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
                )
                .send()
                .await
                .unwrap();
            let _: serde_json::Value = client.get().abs_path("/api").send().await.unwrap();
            let seen = s.seen.lock();
            let accepts = |i: usize| -> Vec<String> {
                seen[i]
                    .head
                    .lines()
                    .filter(|l| l.to_ascii_lowercase().starts_with("accept:"))
                    .map(|l| l[7..].trim().to_owned())
                    .collect()
            };
            assert_eq!(
                accepts(0),
                ["application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"]
            );
            assert_eq!(accepts(1), ["application/json"]);
        }

        #[tokio::test]
        async fn gzip_is_requested_unless_compression_is_disabled() {
            for disable in [false, true] {
                let s = TestServer::start(vec![ok("{}")]).await;
                let mut c = Config::new(s.url.clone());
                c.qps = -1.0;
                c.disable_compression = disable;
                let client = Client::new(c).unwrap();
                let _: serde_json::Value = client.get().abs_path("/api").send().await.unwrap();
                let head = s.seen.lock()[0].head.to_ascii_lowercase();
                assert_eq!(
                    head.contains("accept-encoding: gzip"),
                    !disable,
                    "disable_compression={disable}: {head}"
                );
            }
        }

        #[tokio::test]
        async fn retries_429_and_5xx_with_retry_after_and_replays_the_body() {
            let s = TestServer::start(vec![
                retry_after(429, "0"),
                retry_after(503, "0"),
                ok("{\"ok\":true}"),
            ])
            .await;
            let v: serde_json::Value = client_for(&s)
                .post()
                .abs_path("/x")
                .json(&serde_json::json!({"n": 1}))
                .send()
                .await
                .unwrap();
            assert_eq!(v["ok"], true);
            let seen = s.seen.lock().clone();
            assert_eq!(seen.len(), 3);
            assert!(
                seen.iter().all(|r| r.body == b"{\"n\":1}"),
                "the body is replayed"
            );
            assert!(seen[0].head.to_ascii_lowercase().contains(
                &format!("user-agent: {}", crate::default_user_agent()).to_ascii_lowercase()
            ));
        }

        /// Warnings go to the handler once per request, from the answer the request ends
        /// with, as client-go's `transformResponse` hands them over: a 503 with
        /// `Retry-After` that is retried carries the same deprecation warning as the answer
        /// after it, and logging it twice is noise.
        #[tokio::test]
        async fn only_the_final_answer_s_warnings_are_handled() {
            #[derive(Default)]
            struct Seen(parking_lot::Mutex<Vec<String>>);
            impl crate::WarningHandler for Seen {
                fn handle_warning(&self, _code: u16, _agent: &str, text: &str) {
                    self.0.lock().push(text.to_owned());
                }
            }
            let warning = |text: &str| ("Warning", format!("299 - \"{text}\""));
            let busy = |text: &str| {
                Reply::Http(
                    503,
                    vec![("Retry-After", "0".into()), warning(text)],
                    "busy".into(),
                )
            };
            let s = TestServer::start(vec![
                busy("first"),
                busy("second"),
                Reply::Http(
                    200,
                    vec![
                        ("Content-Type", "application/json".into()),
                        warning("final"),
                    ],
                    "{}".into(),
                ),
            ])
            .await;
            let seen = Arc::new(Seen::default());
            let mut c = Config::new(s.url.clone());
            c.qps = -1.0;
            c.warning_handler = Some(seen.clone());
            let client = Client::new(c).unwrap();
            let (_, warnings) = client
                .get()
                .abs_path("/x")
                .send_with_warnings::<serde_json::Value>()
                .await
                .unwrap();
            assert_eq!(s.count(), 3);
            assert_eq!(*seen.0.lock(), ["final"]);
            assert_eq!(warnings.len(), 1);

            // An error answer's warnings are handled too, once, when it is not retried.
            let s = TestServer::start(vec![busy("retried"), {
                let mut last = busy("last");
                if let Reply::Http(_, headers, _) = &mut last {
                    headers.retain(|(name, _)| *name != "Retry-After");
                }
                last
            }])
            .await;
            seen.0.lock().clear();
            let mut c = Config::new(s.url.clone());
            c.qps = -1.0;
            c.warning_handler = Some(seen.clone());
            let err = Client::new(c)
                .unwrap()
                .get()
                .abs_path("/x")
                .bytes()
                .await
                .unwrap_err();
            assert!(err.is_service_unavailable(), "{err:?}");
            assert_eq!(*seen.0.lock(), ["last"]);
        }

        #[tokio::test]
        async fn no_retry_without_retry_after_or_beyond_max() {
            // No Content-Type counts as text, as in client-go's isTextResponse.
            let s = TestServer::start(vec![Reply::Http(500, vec![], "plain failure".into())]).await;
            let err = client_for(&s)
                .get()
                .abs_path("/x")
                .bytes()
                .await
                .unwrap_err();
            assert!(err.is_internal_error(), "{err:?}");
            assert!(err.to_string().contains("plain failure"), "{err}");
            assert_eq!(s.count(), 1);

            let s = TestServer::start(vec![retry_after(503, "0")]).await;
            let err = client_for(&s)
                .get()
                .abs_path("/x")
                .max_retries(2)
                .bytes()
                .await
                .unwrap_err();
            assert!(err.is_service_unavailable(), "{err:?}");
            assert_eq!(s.count(), 3, "one try and two retries");

            let s = TestServer::start(vec![retry_after(503, "0")]).await;
            let _ = client_for(&s)
                .get()
                .abs_path("/x")
                .max_retries(-3)
                .bytes()
                .await;
            assert_eq!(s.count(), 1, "negative means no retries");

            let s = TestServer::start(vec![retry_after(429, "0")]).await;
            let err = client_for(&s)
                .get()
                .abs_path("/x")
                .bytes()
                .await
                .unwrap_err();
            assert!(err.is_too_many_requests(), "{err:?}");
            assert_eq!(s.count(), 11, "10 retries by default");
        }

        /// Any status from 500 up with `Retry-After` is retried, 600 to 999 too (HTTP/1.1 lets a
        /// server send them, and client-go's `checkWait` tests `code >= 500`).
        #[tokio::test]
        async fn statuses_past_599_with_retry_after_are_retried() {
            let s = TestServer::start(vec![
                retry_after(600, "0"),
                retry_after(999, "0"),
                ok("{\"ok\":true}"),
            ])
            .await;
            let v: serde_json::Value = client_for(&s).get().abs_path("/x").send().await.unwrap();
            assert_eq!(v["ok"], true);
            assert_eq!(s.count(), 3);
        }

        /// An exec, attach or port-forward upgrade is tried once, even when the server asks for
        /// a retry with `Retry-After`: client-go's executors (`tools/remotecommand`,
        /// `tools/portforward`) make one attempt and return the answer, since the command may
        /// already run.
        #[tokio::test]
        async fn upgrades_are_not_retried_after_retry_after() {
            for busy in [retry_after(429, "0"), retry_after(503, "0")] {
                let s = TestServer::start(vec![busy.clone()]).await;
                let pod = || {
                    client_for(&s)
                        .get()
                        .group_version("", "v1")
                        .namespace("ns")
                        .resource("pods")
                        .name("p")
                };
                let Err(err) = pod()
                    .subresource("exec")
                    .param("command", "true")
                    .remote_command(crate::StreamOptions::default().stdout(true))
                    .await
                else {
                    panic!("{busy:?}: an exec was upgraded");
                };
                assert!(
                    err.is_too_many_requests() || err.is_service_unavailable(),
                    "{busy:?}: {err:?}"
                );
                assert_eq!(s.count(), 1, "{busy:?}: the exec was retried");
                let Err(err) = pod().subresource("portforward").port_forward(&[80]).await else {
                    panic!("{busy:?}: a port-forward was upgraded");
                };
                assert!(
                    err.is_too_many_requests() || err.is_service_unavailable(),
                    "{busy:?}: {err:?}"
                );
                assert_eq!(s.count(), 2, "{busy:?}: the port-forward was retried");
            }
        }

        #[tokio::test]
        async fn streamed_bodies_are_not_retried() {
            let s = TestServer::start(vec![retry_after(503, "0"), ok("{}")]).await;
            let chunks = futures_util::stream::iter(vec![Ok::<_, std::io::Error>(
                Bytes::from_static(b"{}"),
            )]);
            let err = client_for(&s)
                .post()
                .abs_path("/x")
                .body_stream(chunks)
                .bytes()
                .await
                .unwrap_err();
            assert!(err.is_service_unavailable(), "{err:?}");
            assert_eq!(s.count(), 1);
        }

        #[tokio::test]
        async fn get_is_retried_after_a_closed_connection_post_is_not() {
            let s = TestServer::start(vec![Reply::Close, ok("{}")]).await;
            let start = Instant::now();
            let body = client_for(&s).get().abs_path("/x").bytes().await.unwrap();
            assert_eq!(&body[..], b"{}");
            assert_eq!(s.count(), 2);
            assert!(
                start.elapsed() >= Duration::from_secs(1),
                "synthetic Retry-After: 1"
            );

            let s = TestServer::start(vec![Reply::Close, ok("{}")]).await;
            let err = client_for(&s)
                .post()
                .abs_path("/x")
                .body("x")
                .bytes()
                .await
                .unwrap_err();
            assert!(err.is_connection_reset(), "{err:?}");
            assert_eq!(s.count(), 1);
        }

        #[tokio::test]
        async fn final_error_names_the_previous_attempt() {
            // Two 503s with Retry-After, then the connection closes with no retries left.
            let s = TestServer::start(vec![
                retry_after(503, "0"),
                retry_after(503, "0"),
                Reply::Close,
            ])
            .await;
            let err = client_for(&s)
                .get()
                .abs_path("/x")
                .max_retries(2)
                .bytes()
                .await
                .unwrap_err();
            // Display carries it (not only the source chain).
            let chain = err.to_string();
            assert!(
                chain.contains(
                    "error from a previous attempt: the server responded with status code 503"
                ),
                "{chain}"
            );
            assert!(err.is_connection_reset(), "{err:?}");
        }

        #[tokio::test]
        async fn status_bodies_become_api_errors() {
            let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}"#;
            let s = TestServer::start(vec![Reply::Http(
                404,
                vec![("Content-Type", "application/json".into())],
                status.into(),
            )])
            .await;
            let err = client_for(&s)
                .get()
                .group_version("", "v1")
                .namespace("n")
                .resource("configmaps")
                .name("x")
                .send::<serde_json::Value>()
                .await
                .unwrap_err();
            assert!(err.is_not_found());
            assert_eq!(err.to_string(), "configmaps \"x\" not found");

            // Garbage bodies: a generic error with the (capped) text, never a panic.
            let big = "x".repeat(10_000);
            let s = TestServer::start(vec![Reply::Http(
                418,
                vec![("Content-Type", "text/plain".into())],
                big,
            )])
            .await;
            let err = client_for(&s)
                .get()
                .abs_path("/x")
                .bytes()
                .await
                .unwrap_err();
            assert_eq!(err.code(), Some(418));
            assert!(err.to_string().len() < 2300, "{}", err.to_string().len());
            let s = TestServer::start(vec![ok("not json")]).await;
            let err = client_for(&s)
                .get()
                .abs_path("/x")
                .send::<serde_json::Value>()
                .await
                .unwrap_err();
            assert!(err.is_decode());
            assert!(
                err.to_string().contains("GET /x"),
                "the request is named: {err}"
            );
        }

        /// A 2xx answer whose body is a `Status` other than `Success` is the error it
        /// describes, as client-go's `Result.Into` and `Result.Get` return it, never an
        /// object decoded from the Status's fields (a ConfigMap asked for would come back
        /// empty).
        #[tokio::test]
        async fn a_2xx_status_that_is_not_success_is_the_error_it_describes() {
            let not_found = r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"configmaps"},"code":404}"#;
            // Pretty-printed, `apiVersion` first, no `status` at all (not `Success`).
            let conflict = "{\n  \"apiVersion\" : \"v1\",\n  \"kind\" : \"Status\",\n  \"reason\": \"Conflict\",\n  \"message\": \"stale\"\n}";
            for (body, check) in [
                (not_found, Error::is_not_found as fn(&Error) -> bool),
                (conflict, Error::is_conflict),
            ] {
                let s = TestServer::start(vec![ok(body)]).await;
                let err = client_for(&s)
                    .get()
                    .abs_path("/api/v1/namespaces/n/configmaps/x")
                    .send::<serde_json::Value>()
                    .await
                    .expect_err("a Failure Status is not an object");
                assert!(check(&err), "{err:?}");
                assert!(!err.status().unwrap().message.is_empty(), "{err:?}");
            }

            // A `Success` Status (what a delete answers), and an object of another kind whose
            // `status` says Failure, decode as asked.
            for body in [
                r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Success","code":200}"#,
                r#"{"kind":"Thing","apiVersion":"v1","status":"Failure"}"#,
            ] {
                let s = TestServer::start(vec![ok(body)]).await;
                let v: serde_json::Value = client_for(&s)
                    .get()
                    .abs_path("/x")
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("{body}: {e}"));
                assert_eq!(v, serde_json::from_str::<serde_json::Value>(body).unwrap());
            }
        }

        /// The request's timeout is a deadline over the whole request, as client-go's context:
        /// a retry whose wait would end past it waits until the deadline and then fails with a
        /// timeout, as client-go's retry sleeps with the request's context and its next step
        /// then fails with `context deadline exceeded`. The answer that asked for the retry
        /// is named as the previous attempt's. This holds for a `Retry-After` answer and for
        /// a GET whose connection was cut (a synthetic `Retry-After: 1`).
        #[tokio::test]
        async fn a_retry_wait_past_the_request_timeout_ends_in_a_timeout_at_the_deadline() {
            // (reply, timeout, attempts, the previous attempt as the error names it)
            let cases = [
                (
                    retry_after(503, "1"),
                    Duration::from_millis(1500),
                    2,
                    "error from a previous attempt: the server responded with status code 503",
                ),
                (
                    retry_after(429, "5"),
                    Duration::from_millis(500),
                    1,
                    "error from a previous attempt: the server responded with status code 429",
                ),
                (
                    Reply::Close,
                    Duration::from_millis(500),
                    1,
                    "error from a previous attempt: connection reset or closed early",
                ),
            ];
            for (reply, timeout, attempts, previous) in cases {
                let s = TestServer::start(vec![reply.clone()]).await;
                let start = Instant::now();
                let err = error_within(
                    "a request asked to retry past its timeout",
                    client_for(&s).get().abs_path("/x").timeout(timeout).bytes(),
                )
                .await;
                let took = start.elapsed();
                assert!(err.is_transport_timeout(), "{reply:?}: {err:?}");
                assert!(
                    took >= timeout,
                    "{reply:?}: the error came after {took:?}, before the timeout of {timeout:?}"
                );
                let text = err.to_string();
                assert!(
                    text.contains("the request's timeout") && text.contains(previous),
                    "{reply:?}: {text}"
                );
                assert_eq!(s.count(), attempts, "{reply:?}");
            }
        }

        /// A retry's wait on the rate limiter counts against the request's timeout (the first
        /// wait does not: the timeout starts after it, as in client-go). A retry whose token
        /// would come after the deadline fails at once, as client-go's limiter answers "would
        /// exceed context deadline" without waiting.
        #[tokio::test]
        async fn the_request_timeout_bounds_a_retry_s_wait_on_the_rate_limiter() {
            let s = TestServer::start(vec![retry_after(503, "0")]).await;
            let mut c = Config::new(s.url.clone());
            c.qps = 0.1;
            c.burst = 1;
            let client = Client::new(c).unwrap();
            let timeout = Duration::from_secs(5);
            let start = Instant::now();
            let err = error_within(
                "a retry held by the rate limiter",
                client.get().abs_path("/x").timeout(timeout).bytes(),
            )
            .await;
            let took = start.elapsed();
            assert!(
                took < timeout,
                "the error came after {took:?}, at the request's timeout rather than at once"
            );
            assert!(err.is_transport_timeout(), "{err:?}");
            let text = err.to_string();
            assert!(
                text.contains("the client-side rate limiter would hold a retry of GET /x past the request's timeout of 5s")
                    && text.contains("error from a previous attempt: the server responded with status code 503"),
                "{text}"
            );
            assert_eq!(s.count(), 1);

            // The first wait (2 s at 0.5 QPS, its token taken) is not part of a 1 s timeout.
            let s = TestServer::start(vec![ok("{}")]).await;
            let mut c = Config::new(s.url.clone());
            c.qps = 0.5;
            c.burst = 1;
            let client = Client::new(c).unwrap();
            client.get().abs_path("/x").bytes().await.unwrap();
            client
                .get()
                .abs_path("/x")
                .timeout(Duration::from_secs(1))
                .bytes()
                .await
                .unwrap();
        }

        /// A retry waits for the longer of the server's Retry-After and the backoff of its
        /// host, which each 5xx doubles (client-go's `BackOffWithContext` with a
        /// `URLBackoff`); a success forgets the host's backoff.
        #[tokio::test]
        async fn retries_back_off_per_host() {
            let s = TestServer::start(vec![retry_after(503, "0"), retry_after(429, "0"), ok("{}")])
                .await;
            let client = client_for(&s);
            let manager = Arc::new(crate::UrlBackoff::new(
                Duration::from_millis(200),
                Duration::from_secs(5),
            ));
            let start = Instant::now();
            client
                .get()
                .abs_path("/x")
                .backoff(manager.clone())
                .bytes()
                .await
                .unwrap();
            // 200 ms after the 503, 400 ms after the 429.
            let e = start.elapsed();
            assert!(e >= Duration::from_millis(600), "{e:?}");
            assert_eq!(s.count(), 3);
            let url = url::Url::parse(&s.url).unwrap();
            assert_eq!(manager.calculate_backoff(&url), Duration::ZERO);
        }

        /// A manager shared by requests backs off a request's first attempt after another
        /// request's 5xx (one without Retry-After, so not retried).
        #[tokio::test]
        async fn a_shared_backoff_holds_the_next_request_to_the_host() {
            let s =
                TestServer::start(vec![Reply::Http(500, vec![], "down".into()), ok("{}")]).await;
            let client = client_for(&s);
            let manager: Arc<dyn BackoffManager> = Arc::new(crate::UrlBackoff::new(
                Duration::from_millis(300),
                Duration::from_secs(5),
            ));
            let err = client
                .get()
                .abs_path("/x")
                .backoff(manager.clone())
                .bytes()
                .await
                .unwrap_err();
            assert!(err.is_internal_error(), "{err:?}");
            let start = Instant::now();
            client
                .get()
                .abs_path("/y")
                .backoff(manager)
                .bytes()
                .await
                .unwrap();
            let e = start.elapsed();
            assert!(e >= Duration::from_millis(300), "{e:?}");
        }

        /// A backoff that would pass the request's timeout ends at the timeout in a timeout
        /// error, nothing sent (client-go's backoff sleeps with the request's context, and the
        /// attempt then fails with `context deadline exceeded`).
        #[tokio::test]
        async fn a_backoff_past_the_timeout_fails_at_the_timeout() {
            let s = TestServer::start(vec![ok("{}")]).await;
            let client = client_for(&s);
            let manager = Arc::new(crate::UrlBackoff::new(
                Duration::from_secs(60),
                Duration::from_secs(60),
            ));
            let url = url::Url::parse(&s.url).unwrap();
            manager.update_backoff(&url, Some(StatusCode::SERVICE_UNAVAILABLE));
            let timeout = Duration::from_secs(1);
            let start = Instant::now();
            let err = error_within(
                "a request backed off for a minute",
                client
                    .get()
                    .abs_path("/x")
                    .timeout(timeout)
                    .backoff(manager)
                    .bytes(),
            )
            .await;
            assert!(start.elapsed() >= timeout, "{:?}", start.elapsed());
            assert!(err.is_transport_timeout(), "{err:?}");
            assert!(
                err.to_string().contains(
                    "the request's timeout of 1s passed while backing off GET /x for 60s"
                ),
                "{err}"
            );
            assert_eq!(s.count(), 0, "nothing was sent");
        }

        /// With `KUBE_CLIENT_BACKOFF_BASE` and `_DURATION` set, each request backs off its
        /// retries with a fresh per-host backoff.
        #[tokio::test]
        async fn the_environment_s_backoff_applies_to_each_request() {
            let s = TestServer::start(vec![retry_after(503, "0"), retry_after(503, "0"), ok("{}")])
                .await;
            let mut client = client_for(&s);
            // What `Client::new` reads from the environment, which a test may not set.
            Arc::get_mut(&mut client.inner)
                .expect("a new client's only handle")
                .env_backoff = Some((Duration::from_millis(200), Duration::from_secs(5)));
            let start = Instant::now();
            client.get().abs_path("/x").bytes().await.unwrap();
            let e = start.elapsed();
            assert!(e >= Duration::from_millis(600), "{e:?}");
            assert_eq!(s.count(), 3);
        }

        #[tokio::test]
        async fn every_retry_waits_on_the_rate_limiter() {
            let s = TestServer::start(vec![retry_after(503, "0"), retry_after(503, "0"), ok("{}")])
                .await;
            let mut c = Config::new(s.url.clone());
            c.qps = 10.0;
            c.burst = 1;
            let client = Client::new(c).unwrap();
            let start = Instant::now();
            client.get().abs_path("/x").bytes().await.unwrap();
            // Three tries at 10 QPS with a burst of 1: two waits of 100ms.
            let e = start.elapsed();
            assert!(e >= Duration::from_millis(190), "{e:?}");
            assert_eq!(s.count(), 3);
        }

        #[tokio::test]
        async fn proxy_url_routes_requests_through_the_proxy() {
            // The scripted server plays an HTTP proxy: it receives the absolute-form request.
            let proxy = TestServer::start(vec![ok("{}")]).await;
            let mut c = Config::new("http://apiserver.invalid:8080");
            c.proxy_url = Some(proxy.url.clone());
            c.qps = -1.0;
            Client::new(c)
                .unwrap()
                .get()
                .abs_path("/version")
                .bytes()
                .await
                .unwrap();
            let head = proxy.seen.lock()[0].head.clone();
            assert!(
                head.starts_with("GET http://apiserver.invalid:8080/version "),
                "{head}"
            );

            for (url, ok) in [
                ("socks5://127.0.0.1:1080", true),
                ("https://proxy.example:3128", true),
                ("ftp://proxy.example", false),
                ("not a url", false),
            ] {
                let mut c = Config::new("https://h");
                c.proxy_url = Some(url.into());
                assert_eq!(Client::new(c).is_ok(), ok, "{url}");
            }
        }

        #[tokio::test]
        async fn a_watch_cut_or_refused_before_headers_is_an_error_after_the_retries() {
            // Cut before the headers: retried as any GET, then the error (not an empty watch).
            let s = TestServer::start(vec![Reply::Close]).await;
            let err = client_for(&s)
                .get()
                .abs_path("/w")
                .max_retries(1)
                .watch::<serde_json::Value>()
                .await
                .expect_err("a watch whose connection is cut must fail, not end empty");
            assert!(err.is_connection_reset(), "{err:?}");
            assert_eq!(s.count(), 2, "one try and one retry");
            let err = client_for(&s)
                .get()
                .abs_path("/w")
                .max_retries(0)
                .watch_raw()
                .await
                .expect_err("a raw watch whose connection is cut must fail");
            assert!(err.is_connection_reset(), "{err:?}");
            // Refused: nobody listens on the port. Not retried (as in client-go): a retry
            // would wait 1 s first, and the default allows 10.
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let mut c = Config::new(format!("http://127.0.0.1:{port}"));
            c.qps = -1.0;
            let start = Instant::now();
            let err = Client::new(c)
                .unwrap()
                .get()
                .abs_path("/w")
                .watch::<serde_json::Value>()
                .await
                .expect_err("a refused watch must fail");
            assert!(err.is_connection_refused(), "{err:?}");
            assert!(
                start.elapsed() < Duration::from_secs(1),
                "a refused watch is returned at once, not retried: {:?}",
                start.elapsed()
            );
            // A non-2xx answer stays the API error.
            let s = TestServer::start(vec![Reply::Http(403, vec![], "no".into())]).await;
            let err = client_for(&s)
                .get()
                .abs_path("/w")
                .watch::<serde_json::Value>()
                .await
                .unwrap_err();
            assert!(err.is_forbidden(), "{err:?}");
        }

        /// The HTTP/1.1 stall of issue 15: the server sends the headers and part of the body,
        /// then nothing, keeping the connection open. The read-idle timeout ends it.
        #[tokio::test]
        async fn a_body_that_stalls_hits_the_read_idle_timeout() {
            let body = r#"{"kind":"ConfigMapList","items":[]}"#.to_string();
            let s = TestServer::start(vec![Reply::StallBody(200, body, 10)]).await;
            let mut c = Config::new(s.url.clone());
            c.qps = -1.0;
            c.read_idle_timeout = Some(Duration::from_millis(300));
            let client = Client::new(c).unwrap();
            let err = tokio::time::timeout(
                Duration::from_secs(30),
                client
                    .get()
                    .abs_path("/api/v1/configmaps")
                    .send::<serde_json::Value>(),
            )
            .await
            .expect("the stalled body was not given up")
            .unwrap_err();
            assert!(err.is_transport_timeout(), "{err:?}");
            let text = err.to_string();
            assert!(
                text.contains("no data for 300ms while reading the body of GET /api/v1/configmaps response (Config::read_idle_timeout)"),
                "{text}"
            );
            // Raw bytes too.
            let err = tokio::time::timeout(
                Duration::from_secs(30),
                client.get().abs_path("/logs").bytes(),
            )
            .await
            .expect("the stalled body was not given up")
            .unwrap_err();
            assert!(err.is_transport_timeout(), "{err:?}");
            // On by default.
            assert_eq!(
                Config::new("https://h").read_idle_timeout,
                Some(crate::DEFAULT_READ_IDLE_TIMEOUT)
            );
        }

        /// What a request that must fail does within a generous bound: its error.
        async fn error_within<T>(
            what: &str,
            request: impl Future<Output = Result<T, Error>>,
        ) -> Error {
            match tokio::time::timeout(Duration::from_secs(30), request).await {
                Ok(result) => match result {
                    Ok(_) => panic!("{what} succeeded"),
                    Err(e) => e,
                },
                Err(_) => panic!("{what} did not end within 30 s"),
            }
        }

        /// An error body that stalls (a 500 whose `Content-Length` promises more than is sent,
        /// the connection kept open) ends on the read-idle timeout or on the request's own
        /// timeout, and the error says which, for whole bodies, streams and watches alike.
        #[tokio::test]
        async fn a_stalled_error_body_times_out_and_says_so() {
            let status = r#"{"kind":"Status","apiVersion":"v1","status":"Failure","message":"boom","code":500}"#;
            let s = TestServer::start(vec![Reply::StallBody(500, status.into(), 1)]).await;
            let client = |read_idle_timeout: Option<Duration>| {
                let mut c = Config::new(s.url.clone());
                c.qps = -1.0;
                c.read_idle_timeout = read_idle_timeout;
                Client::new(c).unwrap()
            };
            let what =
                "while reading the body of the status 500 error response to GET /api/v1/configmaps";
            let check = |err: Error, cause: &str| {
                assert!(err.is_transport_timeout(), "{err:?}");
                let text = err.to_string();
                assert!(text.contains(what) && text.contains(cause), "{text}");
            };
            // The read-idle timeout, with no request timeout or a longer one.
            let c = client(Some(Duration::from_millis(300)));
            let idle = "no data for 300ms";
            let get = || c.get().abs_path("/api/v1/configmaps");
            check(
                error_within("send", get().send::<serde_json::Value>()).await,
                idle,
            );
            check(error_within("bytes", get().bytes()).await, idle);
            check(error_within("stream", get().stream()).await, idle);
            let long = Duration::from_secs(60);
            check(
                error_within("watch", get().timeout(long).watch::<serde_json::Value>()).await,
                idle,
            );
            check(error_within("raw watch", get().watch_raw()).await, idle);
            // The request's timeout, with no read-idle timeout.
            let c = client(None);
            let deadline = "the request's timeout of 500ms passed";
            let get = || {
                c.get()
                    .abs_path("/api/v1/configmaps")
                    .timeout(Duration::from_millis(500))
            };
            check(
                error_within("send", get().send::<serde_json::Value>()).await,
                deadline,
            );
            check(error_within("stream", get().stream()).await, deadline);
            check(
                error_within("watch", get().watch::<serde_json::Value>()).await,
                deadline,
            );
        }

        #[tokio::test]
        async fn a_200_that_is_not_json_names_its_content_type() {
            let s = TestServer::start(vec![Reply::Http(
                200,
                vec![("Content-Type", "text/html; charset=utf-8".into())],
                "<html><body>Sign in to the corporate proxy</body></html>".into(),
            )])
            .await;
            let err = client_for(&s)
                .get()
                .abs_path("/api/v1/pods")
                .send::<serde_json::Value>()
                .await
                .unwrap_err();
            assert!(err.is_decode(), "{err:?}");
            let text = err.to_string();
            assert!(
                text.contains(r#"GET /api/v1/pods response: the response has Content-Type "text/html; charset=utf-8", not JSON"#),
                "{text}"
            );
        }

        /// A list of 50,000 Pods is read whole, though the body is far above the per-object
        /// limit; one item over the limit is refused by index, typed or Unstructured.
        #[tokio::test]
        async fn list_items_are_capped_one_by_one_and_the_list_never_as_a_whole() {
            use kclient_apimachinery::UnstructuredList;
            let pod = |i: usize, pad: usize| {
                format!(
                    r#"{{"apiVersion":"v1","kind":"Pod","metadata":{{"name":"pod-{i}","namespace":"default","resourceVersion":"{i}","labels":{{"app":"web"}}}},"spec":{{"containers":[{{"name":"c","image":"registry.example/app:1.0{}"}}]}}}}"#,
                    "0".repeat(pad)
                )
            };
            let list = |big: Option<usize>| {
                let items: Vec<String> = (0..50_000)
                    .map(|i| pod(i, if Some(i) == big { 5000 } else { 0 }))
                    .collect();
                format!(
                    r#"{{"apiVersion":"v1","kind":"PodList","metadata":{{"resourceVersion":"50000"}},"items":[{}]}}"#,
                    items.join(",")
                )
                .into_bytes()
            };
            let limit = 4096;
            let ok = list(None);
            assert!(ok.len() > 1000 * limit, "{}", ok.len());
            let bad = list(Some(31_337));
            let s = TestServer::start(vec![
                Reply::Chunked(ok.clone(), 16 << 10),
                Reply::Chunked(ok, 16 << 10),
                Reply::Chunked(bad.clone(), 16 << 10),
                Reply::Chunked(bad, 16 << 10),
            ])
            .await;
            let mut c = Config::new(s.url.clone());
            c.qps = -1.0;
            c.max_object_size = limit;
            let client = Client::new(c).unwrap();
            #[derive(serde::Deserialize)]
            struct PodList {
                items: Vec<serde::de::IgnoredAny>,
            }
            let typed: PodList = client.get().abs_path("/api/v1/pods").send().await.unwrap();
            assert_eq!(typed.items.len(), 50_000);
            let dynamic: UnstructuredList =
                client.get().abs_path("/api/v1/pods").send().await.unwrap();
            assert_eq!(dynamic.items.len(), 50_000);
            let typed = client
                .get()
                .abs_path("/api/v1/pods")
                .send::<PodList>()
                .await
                .err()
                .unwrap();
            let dynamic = client
                .get()
                .abs_path("/api/v1/pods")
                .send::<UnstructuredList>()
                .await
                .unwrap_err();
            for err in [typed, dynamic] {
                assert!(err.is_decode(), "{err:?}");
                assert!(
                    err.to_string().contains(
                        "item 31337 of the list's items is larger than 4096 bytes, the limit set by Config::max_object_size"
                    ),
                    "{err}"
                );
            }
            assert_eq!(
                Config::new("https://h").max_object_size,
                crate::DEFAULT_MAX_OBJECT_SIZE
            );
        }

        #[tokio::test]
        async fn watches_skip_the_limiter_on_their_first_try() {
            let s = TestServer::start(vec![ok("")]).await;
            let mut c = Config::new(s.url.clone());
            // The next token comes in 10 s: a watch that waited for it would take that long.
            c.qps = 0.1;
            c.burst = 1;
            let client = Client::new(c).unwrap();
            client.get().abs_path("/x").bytes().await.unwrap(); // takes the only token
            let start = Instant::now();
            let w = client
                .get()
                .abs_path("/w")
                .watch::<serde_json::Value>()
                .await
                .unwrap();
            drop(w);
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "{:?}",
                start.elapsed()
            );
            assert!(s.seen.lock()[1].head.contains("watch=true"));
        }
    }

    #[test]
    fn json_body_and_verbs() {
        let c = client();
        assert_eq!(Verb::Patch.as_str(), "PATCH");
        let r = c
            .patch(kclient_apimachinery::PatchType::Merge)
            .json(&serde_json::json!({"a": 1}));
        assert_eq!(r.content_type, Some("application/merge-patch+json"));
        assert!(matches!(r.body, Body::Bytes(ref b) if b.as_ref() == b"{\"a\":1}"));
    }
}
