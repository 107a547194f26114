//! [`Moment`]: the time points the token bucket and the backoff do arithmetic on.

use std::time::{Duration, Instant, SystemTime};

/// A point in time that can say how long after another one it is.
///
/// Implemented for [`Instant`] (monotonic; `tokio::time::Instant::into_std` gives one that
/// follows tokio's paused clock in tests) and [`SystemTime`] (wall-clock, which can step
/// backwards: a moment before `earlier` is zero time after it).
pub trait Moment: Copy + Ord {
    /// How long after `earlier` this moment is; zero if it is not after it.
    fn since(self, earlier: Self) -> Duration;
}

impl Moment for Instant {
    fn since(self, earlier: Self) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl Moment for SystemTime {
    fn since(self, earlier: Self) -> Duration {
        self.duration_since(earlier).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_moments_are_zero_time_after() {
        let now = Instant::now();
        let later = now + Duration::from_secs(2);
        assert_eq!(later.since(now), Duration::from_secs(2));
        assert_eq!(now.since(later), Duration::ZERO);
        let wall = SystemTime::UNIX_EPOCH + Duration::from_secs(100);
        assert_eq!(wall.since(SystemTime::UNIX_EPOCH), Duration::from_secs(100));
        assert_eq!(SystemTime::UNIX_EPOCH.since(wall), Duration::ZERO);
    }
}
