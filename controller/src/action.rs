//! [`Action`]: what a reconcile asks the controller to do with its key next.
//!
//! | returned                         | the key's failure history | the key comes back                      |
//! |----------------------------------|---------------------------|-----------------------------------------|
//! | `Ok(Action::done())`             | forgotten                 | at its next event                       |
//! | `Ok(Action::requeue_after(d))`   | forgotten                 | after `d` (or at an earlier event)      |
//! | `Ok(Action::requeue())`          | kept                      | after the rate limiter's delay          |
//! | `Err(e)`                         | kept                      | what the error policy says; by default after the rate limiter's delay |
//!
//! `done` and `requeue_after` on success are controller-runtime's `Result{}` and
//! `Result{RequeueAfter: d}` (a success `Forget`s the key, then `AddAfter`); `requeue` is its
//! `Result{Requeue: true}` (`AddRateLimited`).

use std::time::Duration;

/// What the controller does with a key after its reconcile (or, for an error, after the error
/// policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action {
    pub(crate) kind: ActionKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ActionKind {
    Done,
    RequeueAfter(Duration),
    RequeueRateLimited,
}

impl Action {
    /// Nothing more to do until the object (or something mapped to it) changes.
    pub fn done() -> Self {
        Action {
            kind: ActionKind::Done,
        }
    }

    /// Reconcile the key again after `delay`, even if nothing changes; an event before then
    /// reconciles it earlier. A zero delay requeues at once.
    pub fn requeue_after(delay: Duration) -> Self {
        Action {
            kind: ActionKind::RequeueAfter(delay),
        }
    }

    /// Reconcile the key again after the controller's rate limiter's delay for it, which grows
    /// with each such requeue (the default error handling).
    pub fn requeue() -> Self {
        Action {
            kind: ActionKind::RequeueRateLimited,
        }
    }

    /// The delay asked for by [`requeue_after`](Self::requeue_after), if that is what this is.
    pub fn requeue_delay(&self) -> Option<Duration> {
        match self.kind {
            ActionKind::RequeueAfter(d) => Some(d),
            _ => None,
        }
    }

    /// Whether this is [`done`](Self::done).
    pub fn is_done(&self) -> bool {
        self.kind == ActionKind::Done
    }
}
