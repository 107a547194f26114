//! The one timer thread of the process: it serves every delaying queue (moving items whose
//! delay has passed into the queue), every queue's metrics refresh, and the end of every queue's
//! holds (the merge window, see `core.rs`), instead of one thread per queue.
//!
//! A queue registers a [`TimerTask`] (held weakly) with its [`Clock`] and [`Alarm`]. The thread
//! keeps, for each registered task, the real time of its next pass in a min-heap, and sleeps on
//! one condition variable until the earliest. A task is also run at once when its alarm is rung:
//! a new earliest delayed item, a stepped fake clock, a shutdown, a hold to end. Each pass
//! returns when the task wants to run next on its own clock, and also in real time (a hold's
//! end: holds are measured in real time whatever the queue's clock); the thread turns the first
//! into real time with [`Clock::real_time_until`] (a fake clock answers "never": such a task
//! runs again only when rung or at its real-time deadline), takes the earlier of the two, and
//! never waits longer than [`MAX_WAIT`], client-go's heartbeat. A task whose queue is gone, or
//! which says it is finished, is dropped.
//!
//! The thread starts with the first registration and then lives as long as the process, asleep
//! when no task is due. Passes run one after the other on this thread, outside the service's
//! lock, so a pass may take the queue's locks and ring alarms; nothing holds a queue lock while
//! taking the service's lock except [`Alarm::ring`], which takes only this lock.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::clock::{Alarm, Clock};

/// Runs `task`'s pass, containing a panic in it. A pass runs the caller's code (a custom
/// [`Clock`], a metrics provider, the item type's `Hash` and `Eq`); a panic there must not end
/// the one timer thread, which would stop the delayed items and holds of every queue in the
/// process without a word. The panic is logged, and the task comes back at the heartbeat
/// (or when rung), so a queue whose passes keep panicking says so every [`MAX_WAIT`].
fn contained_pass(id: u64, task: &dyn TimerTask) -> Next {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| task.pass())) {
        Ok(next) => next,
        Err(panic) => {
            tracing::error!(
                task = id,
                panic = kclient_flowcontrol::panic_message(&*panic),
                "a delaying queue's timer pass panicked; the queue's next pass is at the \
                 heartbeat"
            );
            Next::At {
                clock: None,
                real: None,
            }
        }
    }
}

/// The longest the thread leaves a task without a pass, client-go's `maxWait` heartbeat:
/// insurance against a clock that misbehaves.
pub(crate) const MAX_WAIT: Duration = Duration::from_secs(10);

/// What a pass returns.
pub(crate) enum Next {
    /// Run again when the task's clock reads `clock`, or when the real time reaches `real`,
    /// whichever comes first (or when rung); both `None`: only when rung (and at the heartbeat).
    At {
        clock: Option<Instant>,
        real: Option<Instant>,
    },
    /// The task is finished: forget it.
    Stop,
}

/// Work the timer thread runs: one queue's delayed items and metrics.
pub(crate) trait TimerTask: Send + Sync {
    /// Does what is due now and says when to come back.
    fn pass(&self) -> Next;
}

/// The process-wide service.
pub(crate) struct TimerService {
    state: Mutex<ServiceState>,
    wake: Condvar,
}

struct ServiceState {
    tasks: HashMap<u64, Registered>,
    /// (real time of the next pass, task id, generation): entries whose generation is not the
    /// task's current one are stale and skipped.
    schedule: BinaryHeap<Reverse<(Instant, u64, u64)>>,
    /// Tasks whose alarm was rung since their last pass.
    rung: Vec<u64>,
    next_id: u64,
    thread_started: bool,
}

struct Registered {
    task: Weak<dyn TimerTask>,
    clock: Arc<dyn Clock>,
    generation: u64,
}

static SERVICE: OnceLock<TimerService> = OnceLock::new();

/// The service, created on first use.
pub(crate) fn service() -> &'static TimerService {
    SERVICE.get_or_init(|| TimerService {
        state: Mutex::new(ServiceState {
            tasks: HashMap::new(),
            schedule: BinaryHeap::new(),
            rung: Vec::new(),
            next_id: 0,
            thread_started: false,
        }),
        wake: Condvar::new(),
    })
}

impl TimerService {
    /// Registers `task`, to be run at once and then when it asks, and connects `alarm` to it.
    /// Fails only if the timer thread cannot be started; the caller then has no timer.
    pub(crate) fn register(
        &'static self,
        task: Weak<dyn TimerTask>,
        clock: Arc<dyn Clock>,
        alarm: &Arc<Alarm>,
    ) -> std::io::Result<()> {
        let mut state = self.state.lock();
        if !state.thread_started {
            std::thread::Builder::new()
                .name("workqueue-timer".into())
                .spawn(move || self.run())?;
            state.thread_started = true;
        }
        let id = state.next_id;
        state.next_id += 1;
        // Connect, then watch, before the first pass can run: a step of a fake clock after the
        // first pass has read the time then always reaches the timer. (The alarm used to be
        // connected after the lock was released, and a step in between rang nobody: the queue
        // then waited for the timer's 10 s heartbeat.) Lock order: the service's, then the
        // alarm's; `ring` releases the alarm's before it takes the service's.
        alarm.connect(id);
        clock.watch(alarm);
        state.tasks.insert(
            id,
            Registered {
                task,
                clock,
                generation: 0,
            },
        );
        state.rung.push(id);
        drop(state);
        self.wake.notify_one();
        Ok(())
    }

    /// Asks for a pass of task `id` as soon as possible.
    pub(crate) fn ring(&self, id: u64) {
        self.state.lock().rung.push(id);
        self.wake.notify_one();
    }

    /// The thread: waits for the next due task, runs its pass outside the lock, schedules it.
    fn run(&self) {
        let mut due: Vec<(u64, Weak<dyn TimerTask>)> = Vec::new();
        loop {
            let mut guard = self.state.lock();
            loop {
                let now = Instant::now();
                let state = &mut *guard;
                for id in state.rung.drain(..) {
                    if let Some(registered) = state.tasks.get_mut(&id)
                        && !due.iter().any(|(due_id, _)| *due_id == id)
                    {
                        // A pass now replaces the scheduled one.
                        registered.generation += 1;
                        due.push((id, registered.task.clone()));
                    }
                }
                while let Some(&Reverse((at, id, generation))) = state.schedule.peek() {
                    if at > now {
                        break;
                    }
                    state.schedule.pop();
                    if let Some(registered) = state.tasks.get(&id)
                        && registered.generation == generation
                    {
                        due.push((id, registered.task.clone()));
                    }
                }
                if !due.is_empty() {
                    break;
                }
                match state.schedule.peek() {
                    Some(&Reverse((at, _, _))) => {
                        self.wake.wait_until(&mut guard, at);
                    }
                    None => self.wake.wait(&mut guard),
                }
            }
            drop(guard);
            for (id, task) in due.drain(..) {
                let next = task
                    .upgrade()
                    .map_or(Next::Stop, |task| contained_pass(id, &*task));
                let mut state = self.state.lock();
                let state = &mut *state;
                match next {
                    Next::Stop => {
                        state.tasks.remove(&id);
                    }
                    Next::At { clock, real } => {
                        let Some(registered) = state.tasks.get_mut(&id) else {
                            continue;
                        };
                        let now = Instant::now();
                        let on_clock = clock.and_then(|at| registered.clock.real_time_until(at));
                        let in_real_time = real.map(|at| at.saturating_duration_since(now));
                        let wait = [on_clock, in_real_time]
                            .into_iter()
                            .flatten()
                            .min()
                            .map_or(MAX_WAIT, |wait| wait.min(MAX_WAIT));
                        registered.generation += 1;
                        let when = now + wait;
                        state
                            .schedule
                            .push(Reverse((when, id, registered.generation)));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::clock::RealClock;

    /// A task that counts its passes and panics on its first.
    struct Panicky {
        passes: AtomicUsize,
    }

    impl TimerTask for Panicky {
        fn pass(&self) -> Next {
            if self.passes.fetch_add(1, Ordering::SeqCst) == 0 {
                panic!("a custom clock that panics");
            }
            Next::At {
                clock: None,
                real: None,
            }
        }
    }

    /// A panic in one task's pass leaves the timer thread serving every task, that one too.
    #[test]
    fn a_panicking_pass_does_not_stop_the_timer_thread() {
        let panicky = Arc::new(Panicky {
            passes: AtomicUsize::new(0),
        });
        let panicky_alarm = Alarm::new();
        let as_task: Arc<dyn TimerTask> = panicky.clone();
        service()
            .register(
                Arc::downgrade(&as_task),
                Arc::new(RealClock),
                &panicky_alarm,
            )
            .unwrap();
        let wait_for = |what: &str, done: &dyn Fn() -> bool| {
            let deadline = Instant::now() + Duration::from_secs(20);
            while !done() {
                assert!(Instant::now() < deadline, "{what} never happened");
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        wait_for("the first pass", &|| {
            panicky.passes.load(Ordering::SeqCst) >= 1
        });

        // Another queue registered after the panic still gets its passes...
        let other = Arc::new(Panicky {
            passes: AtomicUsize::new(1),
        });
        let other_alarm = Alarm::new();
        let other_task: Arc<dyn TimerTask> = other.clone();
        service()
            .register(
                Arc::downgrade(&other_task),
                Arc::new(RealClock),
                &other_alarm,
            )
            .unwrap();
        wait_for("a pass of a task registered after the panic", &|| {
            other.passes.load(Ordering::SeqCst) >= 2
        });
        // ...and the task that panicked runs again when rung.
        panicky_alarm.ring();
        wait_for("a second pass of the task that panicked", &|| {
            panicky.passes.load(Ordering::SeqCst) >= 2
        });
    }

    /// The panic is logged with its message, and the task is due again at the heartbeat.
    #[test]
    fn a_contained_panic_is_logged_and_comes_back_at_the_heartbeat() {
        let logs = kclient_testenv::LogCapture::start(tracing::Level::ERROR);
        let panicky = Panicky {
            passes: AtomicUsize::new(0),
        };
        let next = contained_pass(7, &panicky);
        assert!(
            matches!(
                next,
                Next::At {
                    clock: None,
                    real: None
                }
            ),
            "a panicked pass is not due again before the heartbeat"
        );
        let text = logs.text();
        assert!(
            text.contains("a custom clock that panics") && text.contains("task=7"),
            "{text}"
        );
    }
}
