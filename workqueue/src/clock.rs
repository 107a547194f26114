//! Time as the queues see it: the [`Clock`] trait, the [`RealClock`], and a [`FakeClock`] that
//! tests step by hand (client-go's `k8s.io/utils/clock` and its `testing.FakeClock`).
//!
//! The delaying queue and the metrics refresh run on the process's one timer thread, which sleeps
//! until the real time at which a queue's clock reaches its next deadline. A fake clock never moves
//! on its own, so it rings every [`Alarm`] it was asked to watch whenever it is stepped, and the
//! timer runs that queue's pass again.

use std::fmt;
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// A source of time for the queues and the rate limiters.
///
/// Implement it to drive the queues from a time of your own; most code uses [`RealClock`] (the
/// default everywhere) and tests use [`FakeClock`].
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// The current time on this clock.
    fn now(&self) -> Instant;

    /// How much real time must pass before this clock reads `deadline`; `None` when real time does
    /// not move this clock, so that only a jump (announced by ringing the watched alarms) can get
    /// there. The default is right for any clock that runs at the speed of real time.
    fn real_time_until(&self, deadline: Instant) -> Option<Duration> {
        Some(deadline.saturating_duration_since(self.now()))
    }

    /// Asks the clock to [`ring`](Alarm::ring) `alarm` whenever its time jumps forward without real
    /// time passing. The clock holds the alarm weakly. The default does nothing, which is right
    /// for any clock that runs at the speed of real time.
    fn watch(&self, alarm: &Arc<Alarm>) {
        let _ = alarm;
    }
}

/// The system's monotonic clock ([`Instant::now`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct RealClock;

impl Clock for RealClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that moves only when told to, for tests that must not sleep for real time.
///
/// Clones share one time. [`step`](FakeClock::step) moves it forward and wakes every queue that
/// waits on it, which then re-reads the time.
///
/// ```
/// use kclient_workqueue::{Clock, FakeClock};
/// use std::time::Duration;
///
/// let clock = FakeClock::new();
/// let start = clock.now();
/// clock.step(Duration::from_secs(5));
/// assert_eq!(clock.now() - start, Duration::from_secs(5));
/// ```
#[derive(Clone)]
pub struct FakeClock {
    inner: Arc<Mutex<FakeInner>>,
}

struct FakeInner {
    now: Instant,
    alarms: Vec<Weak<Alarm>>,
}

impl FakeClock {
    /// A fake clock that reads the real time of its creation until it is stepped.
    pub fn new() -> Self {
        FakeClock::at(Instant::now())
    }

    /// A fake clock that reads `now` until it is stepped.
    pub fn at(now: Instant) -> Self {
        FakeClock {
            inner: Arc::new(Mutex::new(FakeInner {
                now,
                alarms: Vec::new(),
            })),
        }
    }

    /// Moves the clock forward by `by` (at most to the furthest representable instant) and
    /// wakes everything waiting on it.
    pub fn step(&self, by: Duration) {
        let alarms = {
            let mut inner = self.inner.lock();
            // Instant + Duration panics on overflow: a step that far saturates at the furthest
            // representable instant instead, so that every deadline comes.
            inner.now = saturating_add(inner.now, by);
            inner.alarms.retain(|alarm| alarm.strong_count() > 0);
            inner.alarms.clone()
        };
        // Ring outside the lock: a woken sleeper reads the time at once.
        for alarm in alarms.iter().filter_map(Weak::upgrade) {
            alarm.ring();
        }
    }

    /// Whether anything (a delaying queue's timer, a metrics loop) still waits on this clock, the
    /// counterpart of client-go's `FakeClock.HasWaiters`.
    pub fn has_waiters(&self) -> bool {
        let mut inner = self.inner.lock();
        inner.alarms.retain(|alarm| alarm.strong_count() > 0);
        inner
            .alarms
            .iter()
            .filter_map(Weak::upgrade)
            .any(|alarm| !alarm.is_stopped())
    }
}

/// `now + by`, or the furthest instant representable after `now` when that does not exist
/// (`Instant` has no maximum to saturate at: found by bisecting the step, at most 128 tries).
fn saturating_add(now: Instant, by: Duration) -> Instant {
    if let Some(later) = now.checked_add(by) {
        return later;
    }
    // `now + fits` exists, `now + too_far` does not.
    let (mut fits, mut too_far) = (Duration::ZERO, by);
    while too_far - fits > Duration::from_nanos(1) {
        let middle = fits + (too_far - fits) / 2;
        if now.checked_add(middle).is_some() {
            fits = middle;
        } else {
            too_far = middle;
        }
    }
    now + fits
}

impl Default for FakeClock {
    fn default() -> Self {
        FakeClock::new()
    }
}

impl fmt::Debug for FakeClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = self.inner.lock();
        f.debug_struct("FakeClock")
            .field("now", &inner.now)
            .field("watchers", &inner.alarms.len())
            .finish()
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        self.inner.lock().now
    }

    fn real_time_until(&self, deadline: Instant) -> Option<Duration> {
        (deadline <= self.now()).then_some(Duration::ZERO)
    }

    fn watch(&self, alarm: &Arc<Alarm>) {
        self.inner.lock().alarms.push(Arc::downgrade(alarm));
    }
}

/// How a queue's timer hears that it should look at the time again: when a delayed item became
/// the earliest, when the queue shuts down, or when its clock jumps (a [`Clock`] rings the alarms
/// it was asked to [`watch`](Clock::watch)).
///
/// Every queue's alarm is served by the one timer thread of the process, which runs the queue's
/// timer pass soon after a ring. A ring before the queue's timer is registered is not needed: the
/// registration runs a first pass anyway.
pub struct Alarm {
    state: Mutex<AlarmState>,
}

#[derive(Default)]
struct AlarmState {
    /// The timer task this alarm wakes, once registered.
    task: Option<u64>,
    rings: u64,
    stopped: bool,
}

impl Alarm {
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(Alarm {
            state: Mutex::new(AlarmState::default()),
        })
    }

    /// Asks the timer thread to run this alarm's queue pass soon.
    pub fn ring(&self) {
        let task = {
            let mut state = self.state.lock();
            state.rings += 1;
            state.task
        };
        if let Some(id) = task {
            crate::timer::service().ring(id);
        }
    }

    /// Marks the alarm stopped (its queue shut down or was dropped) and rings it, so that the
    /// timer forgets the queue. A stopped alarm no longer counts as waiting on a fake clock.
    pub(crate) fn stop(&self) {
        self.state.lock().stopped = true;
        self.ring();
    }

    /// Connects the alarm to the timer task it wakes.
    pub(crate) fn connect(&self, task: u64) {
        self.state.lock().task = Some(task);
    }

    fn is_stopped(&self) -> bool {
        self.state.lock().stopped
    }

    /// How many times the alarm was rung.
    #[cfg(test)]
    fn rings(&self) -> u64 {
        self.state.lock().rings
    }
}

impl fmt::Debug for Alarm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("Alarm")
            .field("rings", &state.rings)
            .field("stopped", &state.stopped)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn fake_clock_moves_only_when_stepped() {
        let clock = FakeClock::new();
        let t0 = clock.now();
        thread::sleep(Duration::from_millis(2));
        assert_eq!(clock.now(), t0);
        clock.step(Duration::from_millis(60));
        assert_eq!(clock.now() - t0, Duration::from_millis(60));
        assert_eq!(clock.real_time_until(t0), Some(Duration::ZERO));
        assert_eq!(clock.real_time_until(t0 + Duration::from_secs(1)), None);
    }

    #[test]
    fn real_clock_reports_real_time_until_deadline() {
        let clock = RealClock;
        let wait = clock
            .real_time_until(clock.now() + Duration::from_secs(10))
            .unwrap();
        assert!(wait <= Duration::from_secs(10) && wait > Duration::from_secs(9));
        assert_eq!(
            clock.real_time_until(clock.now() - Duration::from_secs(1)),
            Some(Duration::ZERO)
        );
    }

    /// A step past the end of representable time moves the clock to that end (so that every
    /// deadline comes), not nowhere.
    #[test]
    fn a_step_past_the_end_of_time_goes_as_far_as_time_goes() {
        let clock = FakeClock::new();
        let start = clock.now();
        let in_a_century = start + Duration::from_secs(100 * 365 * 24 * 3600);
        clock.step(Duration::MAX);
        let end = clock.now();
        assert!(end > in_a_century, "moved {:?}", end - start);
        assert_eq!(end.checked_add(Duration::from_nanos(1)), None);
        assert_eq!(clock.real_time_until(in_a_century), Some(Duration::ZERO));
    }

    #[test]
    fn stepping_a_fake_clock_rings_watched_alarms() {
        let clock = FakeClock::new();
        let alarm = Alarm::new();
        clock.watch(&alarm);
        assert!(clock.has_waiters());
        clock.step(Duration::from_secs(1));
        clock.step(Duration::from_secs(1));
        assert_eq!(alarm.rings(), 2);
        alarm.stop();
        assert!(
            !clock.has_waiters(),
            "a stopped alarm still counts as waiting"
        );
        drop(alarm);
        assert!(!clock.has_waiters());
    }
}
