//! `RunnableGroup`: runnables that start and stop together (controller-runtime's
//! `runnableGroup`): one cancellation token for all, each on its own task, whose error or
//! panic is reported to the manager as an [`Event::Failed`].

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use futures_util::future::BoxFuture;
use kclient_cache::CancellationToken;
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::error::Error;
use crate::manager::runnable::Runnable;

/// What the manager's tasks tell its main loop.
pub(crate) enum Event {
    /// A runnable (or server) returned an error or panicked.
    Failed(Error),
    /// The elector won the lease.
    Leading,
    /// The elector lost the lease it held.
    LeadershipLost,
}

/// Runnables started and stopped together.
pub(crate) struct RunnableGroup {
    token: CancellationToken,
    tasks: Vec<(String, JoinHandle<()>)>,
}

impl RunnableGroup {
    pub(crate) fn new() -> Self {
        RunnableGroup {
            token: CancellationToken::new(),
            tasks: Vec::new(),
        }
    }

    /// The token the group's runnables stop on.
    pub(crate) fn token(&self) -> CancellationToken {
        self.token.clone()
    }

    /// Starts `runnable` on its own task. A start function that panics before it returns
    /// its future fails as a future that panics does.
    pub(crate) fn start(&mut self, runnable: Runnable, events: &UnboundedSender<Event>) {
        let Runnable { name, start, .. } = runnable;
        let token = self.token.clone();
        let run = match std::panic::catch_unwind(AssertUnwindSafe(move || start(token))) {
            Ok(run) => {
                let described = name.clone();
                run.map(move |r| r.map_err(|e| Error::runnable(&described, e)))
                    .boxed()
            }
            Err(panic) => {
                let failure =
                    Error::runnable_panicked(&name, kclient_flowcontrol::panic_message(&*panic));
                async move { Err(failure) }.boxed()
            }
        };
        self.spawn(name, run, events);
    }

    /// Runs `run` as `name` on its own task; an error or a panic goes to `events`.
    pub(crate) fn spawn(
        &mut self,
        name: String,
        run: BoxFuture<'static, Result<(), Error>>,
        events: &UnboundedSender<Event>,
    ) {
        tracing::info!(runnable = %name, "starting");
        let events = events.clone();
        let task_name = name.clone();
        let handle = tokio::spawn(async move {
            let failure = match AssertUnwindSafe(run).catch_unwind().await {
                Ok(Ok(())) => {
                    tracing::debug!(runnable = %task_name, "ended");
                    return;
                }
                Ok(Err(e)) => e,
                Err(panic) => Error::runnable_panicked(
                    &task_name,
                    kclient_flowcontrol::panic_message(&*panic),
                ),
            };
            // The receiver is gone once the manager's run is over; nothing to tell then.
            let _ = events.send(Event::Failed(failure));
        });
        self.tasks.push((name, handle));
    }

    /// Cancels the group's token and waits for its runnables until `deadline`; those still
    /// running then are aborted (cancelled at their next `.await`) and returned by name.
    pub(crate) async fn stop_and_wait(&mut self, deadline: Instant) -> Vec<String> {
        self.token.cancel();
        let mut still_running = Vec::new();
        for (name, mut handle) in self.tasks.drain(..) {
            if tokio::time::timeout_at(deadline, &mut handle)
                .await
                .is_err()
            {
                tracing::warn!(runnable = %name, "did not stop within the graceful shutdown timeout; cancelling it");
                handle.abort();
                still_running.push(name);
            }
        }
        still_running
    }

    /// [`stop_and_wait`](Self::stop_and_wait), except that once `abort` completes, the
    /// runnables still running are aborted at once (cancelled at their next `.await`) rather
    /// than given the rest of their grace.
    pub(crate) async fn stop_and_wait_unless(
        &mut self,
        deadline: Instant,
        abort: impl Future<Output = ()>,
    ) -> Vec<String> {
        let handles: Vec<_> = self.tasks.iter().map(|(_, h)| h.abort_handle()).collect();
        let wait = self.stop_and_wait(deadline);
        tokio::pin!(wait, abort);
        tokio::select! {
            still_running = &mut wait => return still_running,
            () = &mut abort => {}
        }
        for handle in handles {
            handle.abort();
        }
        wait.await
    }

    /// Cancels the group's token and aborts its runnables at once (cancelled at their next
    /// `.await`), then waits for them until `deadline`; returns those that had not ended then.
    pub(crate) async fn abort_and_wait(&mut self, deadline: Instant) -> Vec<String> {
        self.token.cancel();
        for (_, handle) in &self.tasks {
            handle.abort();
        }
        self.stop_and_wait(deadline).await
    }
}

/// A group dropped with runnables still running (the manager's `run` future dropped) stops
/// them: nothing else could.
impl Drop for RunnableGroup {
    fn drop(&mut self) {
        self.token.cancel();
        for (_, handle) in &self.tasks {
            handle.abort();
        }
    }
}
