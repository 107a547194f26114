//! What a Network controller reports after each reconcile ([`SyncEvent`], [`SyncOutcome`]):
//! both implementations report the same, so the demo and the tests read either.

/// What one reconcile of a key did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SyncOutcome {
    /// The ConfigMap was missing and has been created.
    Created,
    /// The ConfigMap differed from the spec (the spec changed, or someone edited the
    /// ConfigMap) and has been patched to match it.
    Updated,
    /// The ConfigMap already matched; at most the status was written.
    UpToDate,
    /// The spec is invalid; the message is in the status.
    Invalid(String),
    /// A ConfigMap of the same name belongs to someone else; the message is in the status.
    Conflict(String),
    /// The Network no longer exists (or is being deleted); the garbage collector removes its
    /// ConfigMap.
    Gone,
    /// The reconcile failed; `will_retry` says whether the key went back on the queue.
    Failed {
        /// The error, with its causes.
        error: String,
        /// Whether the key was requeued with backoff (false once `max_retries` is reached).
        will_retry: bool,
    },
}

/// One reconcile, as reported to the controller's subscribers (`subscribe()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncEvent {
    /// The Network's `namespace/name`.
    pub key: String,
    /// What happened.
    pub outcome: SyncOutcome,
}

/// An error and its causes on one line: `patching ConfigMap ns/x: conflict: ...`.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}
