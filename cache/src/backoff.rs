//! The reflector's retry delays: exponential with jitter, reset after a healthy stretch
//! (client-go's `wait.Backoff` with `DelayWithReset`, and its reflector defaults).

use std::time::Duration;

use tokio::time::Instant;

/// How a [`Reflector`](crate::Reflector) spaces its retries.
///
/// The n-th delay is `initial * factor^n`, capped at `max`, then stretched by a random
/// fraction up to `jitter` (so with the defaults a capped delay lies in [30 s, 60 s), as in
/// client-go). After `reset_after` without a failure the sequence starts again from
/// `initial`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    /// The first delay (client-go: 800 ms).
    pub initial: Duration,
    /// The cap of the un-jittered delay (client-go: 30 s).
    pub max: Duration,
    /// The growth factor (client-go: 2.0).
    pub factor: f64,
    /// The jitter fraction (client-go: 1.0, the delay is stretched by up to 100 %).
    pub jitter: f64,
    /// How long without failures restarts the sequence (client-go: 2 min).
    pub reset_after: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(800),
            max: Duration::from_secs(30),
            factor: 2.0,
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

/// The state of one backoff sequence.
#[derive(Debug)]
pub(crate) struct BackoffManager {
    config: Backoff,
    current: Duration,
    last_failure: Option<Instant>,
}

impl BackoffManager {
    pub(crate) fn new(config: Backoff) -> Self {
        BackoffManager {
            current: config.initial,
            config,
            last_failure: None,
        }
    }

    /// The delay before the next attempt.
    ///
    /// client-go's `backoffManager` resets once `reset_after` has passed since its last reset;
    /// this one resets once `reset_after` has passed since the last failure, which is what
    /// "healthy for two minutes" means and what client-go's older `BackoffManager` did.
    pub(crate) fn next_delay(&mut self) -> Duration {
        let now = Instant::now();
        if self
            .last_failure
            .is_some_and(|last| now.duration_since(last) > self.config.reset_after)
        {
            self.current = self.config.initial;
        }
        self.last_failure = Some(now);
        let base = self.current;
        let grown = base.mul_f64(self.config.factor.max(1.0));
        self.current = grown.min(self.config.max);
        if self.config.jitter > 0.0 {
            base + base.mul_f64(rand::random::<f64>() * self.config.jitter)
        } else {
            base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn grows_caps_jitters_and_resets_after_health() {
        let mut b = BackoffManager::new(Backoff::default());
        let bases = [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0];
        for base in bases {
            let d = b.next_delay().as_secs_f64();
            assert!(
                d >= base - 1e-9 && d < 2.0 * base,
                "{d} not in [{base}, {})",
                2.0 * base
            );
        }
        tokio::time::advance(Duration::from_secs(121)).await;
        let d = b.next_delay().as_secs_f64();
        assert!((0.8..1.6).contains(&d), "{d} after reset");

        let mut exact = BackoffManager::new(Backoff {
            jitter: 0.0,
            ..Backoff::default()
        });
        assert_eq!(exact.next_delay(), Duration::from_millis(800));
        assert_eq!(exact.next_delay(), Duration::from_millis(1600));
    }
}
