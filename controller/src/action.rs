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
//! `Result{Requeue: true}` (`AddRateLimited`). As in controller-runtime, a zero delay is no
//! requeue: `requeue_after(Duration::ZERO)` is `done()` (a delay computed from an interval left
//! at zero, or from a deadline that has passed, does not spin the key through the queue with
//! no backoff). Ask for the next round at once with `requeue()`.
//!
//! On the [priority queue](crate::ControllerBuilder::priority_queue), a key comes back at the
//! priority [`with_priority`](Action::with_priority) names, else at the priority it was handed
//! out with (controller-runtime's `Result.Priority`): a key of the initial list stays behind
//! the real changes, and a key that must come back soon can jump ahead of them. The default
//! queue ignores priorities.

use std::time::Duration;

/// What the controller does with a key after its reconcile (or, for an error, after the error
/// policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action {
    pub(crate) kind: ActionKind,
    /// The priority of the requeue; `None`: the one the key was handed out with.
    pub(crate) priority: Option<i32>,
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
            priority: None,
        }
    }

    /// Reconcile the key again after `delay`, even if nothing changes; an event before then
    /// reconciles it earlier. A zero delay asks for nothing, as controller-runtime's
    /// `RequeueAfter: 0` does: it is [`done`](Self::done), so that a delay computed from an
    /// interval left at zero, or from a deadline that has passed, does not spin the key
    /// through the queue with no backoff. Ask for the next round at once with
    /// [`requeue`](Self::requeue).
    ///
    /// ```
    /// use std::time::Duration;
    /// use kclient_controller::Action;
    ///
    /// assert_eq!(Action::requeue_after(Duration::ZERO), Action::done());
    /// assert_eq!(Action::requeue_after(Duration::ZERO).requeue_delay(), None);
    /// ```
    pub fn requeue_after(delay: Duration) -> Self {
        if delay.is_zero() {
            return Action::done();
        }
        Action {
            kind: ActionKind::RequeueAfter(delay),
            priority: None,
        }
    }

    /// Reconcile the key again after the controller's rate limiter's delay for it, which grows
    /// with each such requeue (the default error handling).
    pub fn requeue() -> Self {
        Action {
            kind: ActionKind::RequeueRateLimited,
            priority: None,
        }
    }

    /// The delay asked for by [`requeue_after`](Self::requeue_after), if that is what this is.
    pub fn requeue_delay(&self) -> Option<Duration> {
        match self.kind {
            ActionKind::RequeueAfter(d) => Some(d),
            _ => None,
        }
    }

    /// The same action, its requeue at `priority` on the
    /// [priority queue](crate::ControllerBuilder::priority_queue): higher goes first, and
    /// [`LOW_PRIORITY`](crate::LOW_PRIORITY) (-100) is where the initial list's keys wait,
    /// 0 where changes go (controller-runtime's `Result.Priority`). Without it, the key comes
    /// back at the priority it was handed out with. From an
    /// [error policy](crate::Controller::error_policy), it sets the priority of the retry.
    /// Ignored by [`done`](Self::done), and by the default queue, which has no priorities.
    ///
    /// ```
    /// use std::time::Duration;
    /// use kclient_controller::Action;
    ///
    /// // Check again in 10 s, ahead of the keys waiting at priority 0.
    /// let soon = Action::requeue_after(Duration::from_secs(10)).with_priority(10);
    /// assert_eq!(soon.priority(), Some(10));
    /// assert_eq!(Action::requeue().priority(), None);
    /// ```
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = Some(priority);
        self
    }

    /// The priority set by [`with_priority`](Self::with_priority), if any.
    pub fn priority(&self) -> Option<i32> {
        self.priority
    }

    /// Whether this is [`done`](Self::done).
    pub fn is_done(&self) -> bool {
        self.kind == ActionKind::Done
    }
}
