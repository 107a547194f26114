//! [`LogOptions`]: the query of a pod log request (`core/v1` `PodLogOptions`).

use kclient_apimachinery::meta::Time;

/// Options of a pod log request.
///
/// ```
/// use kclient_clientset::LogOptions;
///
/// let opts = LogOptions::default().container("app").follow(true).tail_lines(100);
/// assert_eq!(
///     opts.to_query(),
///     [("container", "app".to_owned()), ("follow", "true".to_owned()), ("tailLines", "100".to_owned())]
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LogOptions {
    /// The container; may be left out when the pod has one container.
    pub container: Option<String>,
    /// Keep the stream open and send new lines as they are written.
    pub follow: bool,
    /// The log of the previous, terminated container instance.
    pub previous: bool,
    /// Only lines newer than this many seconds.
    pub since_seconds: Option<i64>,
    /// Only lines written at or after this time (RFC 3339 on the wire, whole seconds); the
    /// server refuses it together with `since_seconds`.
    pub since_time: Option<Time>,
    /// Prefix every line with an RFC 3339 timestamp.
    pub timestamps: bool,
    /// Only the last this many lines.
    pub tail_lines: Option<i64>,
    /// Stop after this many bytes.
    pub limit_bytes: Option<i64>,
    /// Ask the API server not to verify the kubelet's serving certificate when it fetches the
    /// log (`kubectl logs --insecure-skip-tls-verify-backend`). It weakens only the server's
    /// connection to the node, never this client's TLS; meant for a node whose certificate
    /// has expired.
    pub insecure_skip_tls_verify_backend: bool,
    /// Only this stream of the container's output. The server accepts it only with its
    /// `PodLogsQuerySplitStreams` feature gate on (alpha from Kubernetes 1.32, off by
    /// default); with the gate off it answers 422.
    pub stream: Option<LogStream>,
}

/// Which output of a container a log request reads (`PodLogOptions.stream`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum LogStream {
    /// Standard output only.
    Stdout,
    /// Standard error only.
    Stderr,
    /// Both, interleaved as written: what the server sends when no stream is named.
    All,
}

impl LogStream {
    /// The value on the wire: `Stdout`, `Stderr` or `All`.
    pub fn as_str(self) -> &'static str {
        match self {
            LogStream::Stdout => "Stdout",
            LogStream::Stderr => "Stderr",
            LogStream::All => "All",
        }
    }
}

impl LogOptions {
    /// Sets [`LogOptions::container`].
    pub fn container(mut self, container: impl Into<String>) -> Self {
        self.container = Some(container.into());
        self
    }

    /// Sets [`LogOptions::follow`].
    pub fn follow(mut self, follow: bool) -> Self {
        self.follow = follow;
        self
    }

    /// Sets [`LogOptions::previous`].
    pub fn previous(mut self, previous: bool) -> Self {
        self.previous = previous;
        self
    }

    /// Sets [`LogOptions::since_seconds`].
    pub fn since_seconds(mut self, seconds: i64) -> Self {
        self.since_seconds = Some(seconds);
        self
    }

    /// Sets [`LogOptions::since_time`].
    pub fn since_time(mut self, time: Time) -> Self {
        self.since_time = Some(time);
        self
    }

    /// Sets [`LogOptions::timestamps`].
    pub fn timestamps(mut self, timestamps: bool) -> Self {
        self.timestamps = timestamps;
        self
    }

    /// Sets [`LogOptions::tail_lines`].
    pub fn tail_lines(mut self, lines: i64) -> Self {
        self.tail_lines = Some(lines);
        self
    }

    /// Sets [`LogOptions::limit_bytes`].
    pub fn limit_bytes(mut self, bytes: i64) -> Self {
        self.limit_bytes = Some(bytes);
        self
    }

    /// Sets [`LogOptions::insecure_skip_tls_verify_backend`].
    pub fn insecure_skip_tls_verify_backend(mut self, skip: bool) -> Self {
        self.insecure_skip_tls_verify_backend = skip;
        self
    }

    /// Sets [`LogOptions::stream`].
    pub fn stream(mut self, stream: LogStream) -> Self {
        self.stream = Some(stream);
        self
    }

    /// The query parameters, leaving out unset values.
    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        if let Some(c) = self.container.as_deref().filter(|c| !c.is_empty()) {
            q.push(("container", c.to_owned()));
        }
        if let Some(t) = self.since_time {
            q.push(("sinceTime", t.to_string()));
        }
        if let Some(stream) = self.stream {
            q.push(("stream", stream.as_str().to_owned()));
        }
        let flags = [
            ("follow", self.follow),
            ("previous", self.previous),
            ("timestamps", self.timestamps),
            (
                "insecureSkipTLSVerifyBackend",
                self.insecure_skip_tls_verify_backend,
            ),
        ];
        for (name, set) in flags {
            if set {
                q.push((name, "true".to_owned()));
            }
        }
        let numbers = [
            ("sinceSeconds", self.since_seconds),
            ("tailLines", self.tail_lines),
            ("limitBytes", self.limit_bytes),
        ];
        for (name, value) in numbers {
            if let Some(v) = value {
                q.push((name, v.to_string()));
            }
        }
        q
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_option_is_written_as_the_server_reads_it() {
        let opts = LogOptions::default()
            .container("app")
            .previous(true)
            .timestamps(true)
            .since_seconds(30)
            .limit_bytes(1024)
            .insecure_skip_tls_verify_backend(true)
            .stream(LogStream::Stderr);
        assert_eq!(
            opts.to_query(),
            [
                ("container", "app".to_owned()),
                ("stream", "Stderr".to_owned()),
                ("previous", "true".to_owned()),
                ("timestamps", "true".to_owned()),
                ("insecureSkipTLSVerifyBackend", "true".to_owned()),
                ("sinceSeconds", "30".to_owned()),
                ("limitBytes", "1024".to_owned()),
            ]
        );
        assert_eq!(
            [LogStream::Stdout, LogStream::Stderr, LogStream::All].map(LogStream::as_str),
            ["Stdout", "Stderr", "All"]
        );
        assert!(LogOptions::default().to_query().is_empty());
    }
}
