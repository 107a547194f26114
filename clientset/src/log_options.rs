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

    /// The query parameters, leaving out unset values.
    pub fn to_query(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        if let Some(c) = self.container.as_deref().filter(|c| !c.is_empty()) {
            q.push(("container", c.to_owned()));
        }
        if let Some(t) = self.since_time {
            q.push(("sinceTime", t.to_string()));
        }
        let flags = [
            ("follow", self.follow),
            ("previous", self.previous),
            ("timestamps", self.timestamps),
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
