//! [`Elected`]: tells that a manager leads (controller-runtime's `Manager.Elected()`).

use kclient_cache::CancellationToken;

/// Resolves once its [`Manager`](super::Manager) has spawned the tasks of its leader election
/// runnables: because it won the election, or at once after its caches synced when it has no
/// election (controller-runtime's `Elected()` channel, closed at the same moments). Got from
/// [`Manager::elected`](super::Manager::elected) before [`run`](super::Manager::run); clone
/// it freely.
///
/// Unlike controller-runtime's channel, which stays open for ever when the manager never
/// leads, [`wait`](Self::wait) also returns when the manager stops without having led: its
/// `run` returned or was dropped, or the manager was dropped without running.
#[derive(Clone, Debug)]
pub struct Elected {
    elected: CancellationToken,
    stopped: CancellationToken,
}

impl Elected {
    /// A signal neither elected nor stopped.
    pub(crate) fn new() -> Self {
        Elected {
            elected: CancellationToken::new(),
            stopped: CancellationToken::new(),
        }
    }

    /// Waits until the manager leads (`true`) or stops without having led (`false`).
    pub async fn wait(&self) -> bool {
        tokio::select! {
            biased;
            () = self.elected.cancelled() => true,
            () = self.stopped.cancelled() => self.elected.is_cancelled(),
        }
    }

    /// Whether the manager has started its leader election runnables; it stays `true` once
    /// it is, even after the lease is lost (the manager then stops).
    pub fn is_elected(&self) -> bool {
        self.elected.is_cancelled()
    }

    /// Marks the manager elected.
    pub(crate) fn set_elected(&self) {
        self.elected.cancel();
    }

    /// A guard that marks the manager stopped when dropped: the manager holds it, and `run`
    /// until it returns or its future is dropped.
    pub(crate) fn stopped_on_drop(&self) -> StoppedOnDrop {
        StoppedOnDrop(self.stopped.clone())
    }
}

/// Marks its manager stopped when dropped.
pub(crate) struct StoppedOnDrop(CancellationToken);

impl Drop for StoppedOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}
