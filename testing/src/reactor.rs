//! Reactors: functions that see each [`Action`] before the tracker does and may answer it
//! (client-go's `testing.Reactor` chain), to script an error, a fixed object, or to observe.

use std::sync::Arc;

use kclient_apimachinery::Error;
use serde_json::Value;

use crate::action::Action;

/// What a reactor does with an action.
#[derive(Debug)]
#[non_exhaustive]
pub enum Reaction {
    /// Not handled: the next reactor, and finally the tracker, sees the action.
    Continue,
    /// Answer with this object (200).
    Object(Value),
    /// Answer with this error: its `Status` becomes the response, with the status code, and
    /// a `Retry-After` header when the status carries `retryAfterSeconds`
    /// ([`Error::new_too_many_requests`] does). Watches take only errors and `Continue`.
    Error(Error),
}

/// The function behind a reactor.
pub type ReactionFn = dyn Fn(&Action) -> Reaction + Send + Sync;

/// A reactor registered for a verb and resource (`*` matches any).
#[derive(Clone)]
pub(crate) struct Reactor {
    pub(crate) verb: String,
    pub(crate) resource: String,
    pub(crate) react: Arc<ReactionFn>,
}

impl Reactor {
    pub(crate) fn handles(&self, action: &Action) -> bool {
        action.matches(&self.verb, &self.resource)
    }
}
