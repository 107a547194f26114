//! Unit tests of [`PriorityQueue`]: controller-runtime's `priorityqueue_test.go` and
//! `metrics_test.go` cases, plus delays on a fake clock, shutdown and drain, and waking.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::*;
use crate::metrics::{CounterMetric, GaugeMetric, HistogramMetric, SettableGaugeMetric};
use crate::{FakeClock, ItemExponentialFailureRateLimiter, MetricsProvider};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(priority: i32) -> AddOpts {
    AddOpts {
        priority,
        ..AddOpts::default()
    }
}

fn after(delay: Duration) -> AddOpts {
    AddOpts {
        after: delay,
        ..AddOpts::default()
    }
}

/// A queue on a fake clock.
fn fake_queue() -> (PriorityQueue<&'static str>, FakeClock) {
    let clock = FakeClock::new();
    let queue = PriorityQueue::with_config(QueueConfig::new().clock(clock.clone()));
    (queue, clock)
}

/// Steps the clock and waits until the timer thread has run a pass that read the new time.
fn step_and_settle<T>(queue: &PriorityQueue<T>, clock: &FakeClock, by: Duration)
where
    T: Clone + Eq + Hash + Send + 'static,
{
    clock.step(by);
    let stepped_to = clock.now();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !queue.timer_settled(stepped_to) {
        assert!(
            Instant::now() < deadline,
            "the timer thread did not run after a step"
        );
        thread::sleep(Duration::from_micros(200));
    }
}

/// Gets every ready item without blocking forever: stops when none is ready.
fn drain_ready<T>(queue: &PriorityQueue<T>) -> Vec<(T, i32)>
where
    T: Clone + Eq + Hash + Send + 'static,
{
    let mut out = Vec::new();
    while queue.shared.state.lock().items.takeable() > 0 {
        let (item, priority) = queue.get_blocking().unwrap();
        queue.done(&item);
        out.push((item, priority));
    }
    out
}

#[test]
fn higher_priorities_go_first_and_fifo_within_a_priority() {
    let (queue, _clock) = fake_queue();
    queue.add_with_opts("low-1", at(-100));
    queue.add_with_opts("mid-1", at(0));
    queue.add_with_opts("high-1", at(10));
    queue.add_with_opts("low-2", at(-100));
    queue.add_with_opts("mid-2", at(0));
    queue.add_with_opts("high-2", at(10));
    assert_eq!(queue.len(), 6);
    assert_eq!(
        drain_ready(&queue),
        [
            ("high-1", 10),
            ("high-2", 10),
            ("mid-1", 0),
            ("mid-2", 0),
            ("low-1", -100),
            ("low-2", -100),
        ]
    );
    assert_eq!(queue.shared.state.lock().items.entries(), 0);
}

#[test]
fn duplicates_are_one_entry() {
    let (queue, _clock) = fake_queue();
    queue.add("foo");
    queue.add("foo");
    queue.add("bar");
    queue.add("foo");
    assert_eq!(queue.len(), 2);
    assert_eq!(drain_ready(&queue), [("foo", 0), ("bar", 0)]);
}

#[test]
fn a_re_add_keeps_the_highest_priority() {
    let (queue, _clock) = fake_queue();
    queue.add_with_opts("foo", at(1));
    queue.add_with_opts("foo", at(2));
    queue.add_with_opts("bar", at(2));
    queue.add_with_opts("bar", at(1));
    assert_eq!(queue.len(), 2);
    assert_eq!(drain_ready(&queue), [("foo", 2), ("bar", 2)]);
}

#[test]
fn a_raised_item_goes_behind_the_items_of_its_new_priority() {
    let (queue, _clock) = fake_queue();
    queue.add("foo");
    queue.add("bar");
    queue.add("baz");
    queue.add_with_opts("baz", at(1));
    assert_eq!(queue.get_blocking(), Some(("baz", 1)));
    assert_eq!(queue.len(), 2);

    // controller-runtime's "follows FIFO order in the new priority queue when item priority
    // changes": foo joins priority 1 after bar, which was there first.
    let (queue, _clock) = fake_queue();
    queue.add_with_opts("foo", at(0));
    queue.add_with_opts("bar", at(1));
    queue.add_with_opts("foo", at(1));
    assert_eq!(drain_ready(&queue), [("bar", 1), ("foo", 1)]);

    // A re-add at the same priority keeps the item's place.
    let (queue, _clock) = fake_queue();
    queue.add("a");
    queue.add("b");
    queue.add("a");
    assert_eq!(drain_ready(&queue), [("a", 0), ("b", 0)]);
}

#[test]
fn delayed_items_are_ready_at_their_time_and_not_counted_before() {
    let (queue, clock) = fake_queue();
    queue.add_with_opts("foo", after(Duration::from_secs(60)));
    queue.add("baz");
    queue.add_with_opts("bar", after(Duration::from_secs(60)));
    queue.add("bal");
    assert_eq!(queue.len(), 2);
    assert_eq!(queue.waiting_len(), 2);
    step_and_settle(&queue, &clock, Duration::from_secs(59));
    assert_eq!(queue.len(), 2);
    step_and_settle(&queue, &clock, Duration::from_secs(1));
    assert_eq!(queue.len(), 4);
    assert_eq!(queue.waiting_len(), 0);
    // Items that became ready go behind those ready before, in the order they came due.
    assert_eq!(
        drain_ready(&queue),
        [("baz", 0), ("bal", 0), ("foo", 0), ("bar", 0)]
    );
}

#[test]
fn a_delayed_item_that_comes_due_goes_by_its_priority() {
    let (queue, clock) = fake_queue();
    queue.add("ready");
    queue.add_with_opts(
        "urgent-later",
        AddOpts {
            priority: 5,
            after: ms(10),
            rate_limited: false,
        },
    );
    step_and_settle(&queue, &clock, ms(10));
    assert_eq!(drain_ready(&queue), [("urgent-later", 5), ("ready", 0)]);
}

#[test]
fn the_earliest_ready_time_wins() {
    let (queue, clock) = fake_queue();
    // Ready now, then asked for in an hour: stays ready.
    queue.add("now");
    queue.add_after("now", Duration::from_secs(3600));
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.waiting_len(), 0);
    // In an hour, then in a second: a second.
    queue.add_after("soon", Duration::from_secs(3600));
    queue.add_after("soon", Duration::from_secs(1));
    // In a second, then in an hour: still a second.
    queue.add_after("also-soon", Duration::from_secs(1));
    queue.add_after("also-soon", Duration::from_secs(3600));
    assert_eq!(queue.waiting_len(), 2);
    step_and_settle(&queue, &clock, Duration::from_secs(1));
    assert_eq!(queue.waiting_len(), 0);
    assert_eq!(
        drain_ready(&queue),
        [("now", 0), ("soon", 0), ("also-soon", 0)]
    );
    // Delayed, then added without delay: ready now.
    queue.add_after("later", Duration::from_secs(3600));
    queue.add("later");
    assert_eq!((queue.len(), queue.waiting_len()), (1, 0));
    assert_eq!(queue.shared.state.lock().items.entries(), 1);
}

#[test]
fn a_zero_delay_adds_at_once_and_an_endless_one_is_dropped() {
    let (queue, _clock) = fake_queue();
    queue.add_after("now", Duration::ZERO);
    assert_eq!(queue.len(), 1);
    queue.add_after("never", Duration::MAX);
    assert_eq!((queue.len(), queue.waiting_len()), (1, 0));
}

#[test]
fn rate_limited_adds_back_off_and_forget_resets() {
    let clock = FakeClock::new();
    let queue = PriorityQueue::with_config(QueueConfig::new().clock(clock.clone()).rate_limiter(
        ItemExponentialFailureRateLimiter::new(ms(1), Duration::from_secs(1)),
    ));
    queue.add_rate_limited("one");
    queue.add_rate_limited("one");
    queue.add_rate_limited("two");
    assert_eq!(queue.num_requeues(&"one"), 2);
    assert_eq!(queue.num_requeues(&"two"), 1);
    assert_eq!(queue.waiting_len(), 2, "duplicates wait once");
    // Both wait 1 ms (the earlier of 1 and 2 ms for "one").
    step_and_settle(&queue, &clock, ms(1));
    assert_eq!(queue.len(), 2);
    queue.forget(&"one");
    assert_eq!(queue.num_requeues(&"one"), 0);
    assert_eq!(queue.num_requeues(&"two"), 1);

    // Both were ready: taking them leaves nothing queued.
    assert_eq!(drain_ready(&queue).len(), 2);
    // With `after` too, the shorter delay: 4 ms from the limiter (third failure) against 100,
    // and the 2 ms of the add before it, the earliest, wins.
    queue.add_rate_limited("two");
    queue.add_with_opts(
        "two",
        AddOpts {
            after: ms(100),
            rate_limited: true,
            priority: 0,
        },
    );
    assert_eq!(queue.num_requeues(&"two"), 3);
    step_and_settle(&queue, &clock, ms(1));
    assert_eq!(queue.len(), 0);
    step_and_settle(&queue, &clock, ms(1));
    assert_eq!(queue.len(), 1, "the 2 ms backoff of the second failure won");
}

#[test]
fn a_processed_item_is_not_handed_out_but_others_are() {
    let (queue, _clock) = fake_queue();
    queue.add_with_opts("foo", at(1));
    let (foo, _) = queue.get_blocking().unwrap();
    // Added again while processed, at a higher priority than bar: bar still goes first.
    queue.add_with_opts("foo", at(5));
    queue.add("bar");
    assert_eq!(queue.len(), 2, "the processed item's re-add counts");
    assert_eq!(queue.get_blocking(), Some(("bar", 0)));
    queue.done(&"bar");
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.shared.state.lock().items.takeable(), 0);
    // After done, it comes back with the priority it was added at.
    queue.done(&foo);
    assert_eq!(queue.get_blocking(), Some(("foo", 5)));
    queue.done(&"foo");
    assert_eq!(queue.len(), 0);
    assert_eq!(queue.shared.state.lock().items.entries(), 0);
}

#[test]
fn a_re_added_processed_item_keeps_its_place_among_its_priority() {
    let (queue, _clock) = fake_queue();
    queue.add("foo");
    let (foo, _) = queue.get_blocking().unwrap();
    queue.add("foo"); // first
    queue.add("bar"); // second
    queue.done(&foo);
    assert_eq!(drain_ready(&queue), [("foo", 0), ("bar", 0)]);
}

#[test]
fn a_processed_item_whose_delay_ends_waits_for_done() {
    let (queue, clock) = fake_queue();
    queue.add("foo");
    let (foo, _) = queue.get_blocking().unwrap();
    queue.add_with_opts(
        "foo",
        AddOpts {
            priority: 3,
            after: ms(5),
            rate_limited: false,
        },
    );
    step_and_settle(&queue, &clock, ms(5));
    assert_eq!(queue.len(), 1);
    assert_eq!(queue.shared.state.lock().items.takeable(), 0);
    queue.done(&foo);
    assert_eq!(queue.get_blocking(), Some(("foo", 3)));
}

#[test]
fn done_for_an_item_not_got_does_nothing() {
    let (queue, _clock) = fake_queue();
    queue.add("foo");
    queue.done(&"foo");
    queue.done(&"never-added");
    assert_eq!(drain_ready(&queue), [("foo", 0)]);
}

#[test]
fn shutdown_hands_out_what_is_ready_then_none_and_drops_delayed_items() {
    let logs = kclient_testenv::LogCapture::start(tracing::Level::INFO);
    let clock = FakeClock::new();
    let queue = PriorityQueue::with_config(QueueConfig::new().name("closing").clock(clock));
    queue.add_with_opts("low", at(-1));
    queue.add("high");
    queue.add_after("delayed", Duration::from_secs(1));
    queue.shut_down();
    assert!(queue.shutting_down());
    assert_eq!(queue.waiting_len(), 0);
    queue.add("ignored");
    assert_eq!(queue.get_blocking(), Some(("high", 0)));
    assert_eq!(queue.get_blocking(), Some(("low", -1)));
    assert_eq!(queue.get_blocking(), None);
    let text = logs.text();
    assert!(
        text.contains("queue=closing") && text.contains("dropped=1"),
        "no line about the dropped item in:\n{text}"
    );
}

#[test]
fn shutdown_wakes_blocked_getters() {
    let (queue, _clock) = fake_queue();
    let got = blocking_getters(&queue, 3);
    wait_for("three sleepers", || queue.shared.state.lock().sleepers == 3);
    queue.shut_down();
    for _ in 0..3 {
        assert_eq!(got.recv_timeout(Duration::from_secs(10)), Ok(None));
    }
}

#[test]
fn an_add_wakes_a_blocked_getter_and_a_batch_wakes_them_all() {
    let (queue, clock) = fake_queue();
    let got = blocking_getters(&queue, 4);
    wait_for("four sleepers", || queue.shared.state.lock().sleepers == 4);
    queue.add("first");
    for item in ["a", "b", "c"] {
        queue.add_after(item, ms(1));
    }
    // The three come due in one pass, which wakes one getter; each passes it on.
    step_and_settle(&queue, &clock, ms(1));
    let mut items: Vec<_> = (0..4)
        .map(|_| {
            got.recv_timeout(Duration::from_secs(10))
                .expect("a getter was not woken")
                .unwrap()
                .0
        })
        .collect();
    items.sort_unstable();
    assert_eq!(items, ["a", "b", "c", "first"]);
}

#[test]
fn drain_waits_for_done_and_shut_down_cuts_it_short() {
    let (queue, _clock) = fake_queue();
    queue.add("foo");
    let (foo, _) = queue.get_blocking().unwrap();
    let drain = {
        let queue = queue.clone();
        thread::spawn(move || queue.shut_down_with_drain_blocking())
    };
    wait_for("the drain to start", || queue.shared.state.lock().draining);
    assert!(queue.shutting_down());
    thread::sleep(ms(20));
    assert!(!drain.is_finished(), "the drain returned before done");
    queue.done(&foo);
    drain.join().unwrap();

    // A later shut_down ends a drain still waiting.
    let (queue, _clock) = fake_queue();
    queue.add("bar");
    let _bar = queue.get_blocking().unwrap();
    let drain = {
        let queue = queue.clone();
        thread::spawn(move || queue.shut_down_with_drain_blocking())
    };
    wait_for("the drain to start", || queue.shared.state.lock().draining);
    queue.shut_down();
    drain.join().unwrap();
}

#[test]
fn an_item_added_while_processed_is_handed_out_after_done_during_a_drain() {
    let (queue, _clock) = fake_queue();
    queue.add("foo");
    let (foo, _) = queue.get_blocking().unwrap();
    queue.add_with_opts("foo", at(2));
    let drain = {
        let queue = queue.clone();
        thread::spawn(move || queue.shut_down_with_drain_blocking())
    };
    wait_for("the drain to start", || queue.shared.state.lock().draining);
    queue.done(&foo);
    drain.join().unwrap();
    assert_eq!(queue.get_blocking(), Some(("foo", 2)));
    assert_eq!(queue.get_blocking(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_get_and_drain() {
    let (queue, _clock) = fake_queue();
    let getter = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.get().await })
    };
    wait_for("an async waiter", || {
        queue.shared.state.lock().async_waiters == 1
    });
    queue.add_with_opts("foo", at(7));
    assert_eq!(getter.await.unwrap(), Some(("foo", 7)));

    let drain = {
        let queue = queue.clone();
        tokio::spawn(async move { queue.shut_down_with_drain().await })
    };
    tokio::time::sleep(ms(20)).await;
    assert!(!drain.is_finished(), "the drain returned before done");
    queue.done(&"foo");
    tokio::time::timeout(Duration::from_secs(10), drain)
        .await
        .expect("the drain ended after done")
        .unwrap();
    assert_eq!(queue.get().await, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_wakes_async_getters() {
    let (queue, _clock) = fake_queue();
    let getters: Vec<_> = (0..3)
        .map(|_| {
            let queue = queue.clone();
            tokio::spawn(async move { queue.get().await })
        })
        .collect();
    wait_for("three async waiters", || {
        queue.shared.state.lock().async_waiters == 3
    });
    queue.shut_down();
    for getter in getters {
        assert_eq!(getter.await.unwrap(), None);
    }
}

/// A cancelled `get` takes no item and leaves no count behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_get_loses_nothing() {
    let (queue, _clock) = fake_queue();
    assert!(tokio::time::timeout(ms(10), queue.get()).await.is_err());
    assert_eq!(queue.shared.state.lock().async_waiters, 0);
    queue.add("foo");
    assert_eq!(queue.get().await, Some(("foo", 0)));
}

/// Starts `n` threads that each get one item and send what they got.
fn blocking_getters(
    queue: &PriorityQueue<&'static str>,
    n: usize,
) -> std::sync::mpsc::Receiver<Option<(&'static str, i32)>> {
    let (send, receive) = std::sync::mpsc::channel();
    for _ in 0..n {
        let (queue, send) = (queue.clone(), send.clone());
        thread::spawn(move || send.send(queue.get_blocking()));
    }
    receive
}

/// Polls `condition` for up to 10 s.
fn wait_for(what: &str, condition: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// Records what the queue does to its metrics (controller-runtime's `fakeMetricsProvider`).
#[derive(Default)]
struct Recorded {
    depth: BTreeMap<i32, i64>,
    plain_depth: i64,
    adds: u64,
    retries: u64,
    dropped: u64,
    latency: Vec<f64>,
    work_duration: Vec<f64>,
    unfinished: Option<f64>,
    longest: Option<f64>,
}

#[derive(Clone, Default)]
struct TestProvider {
    recorded: Arc<Mutex<Recorded>>,
    by_priority: bool,
}

struct Metric {
    recorded: Arc<Mutex<Recorded>>,
    apply: fn(&mut Recorded, f64),
}

impl GaugeMetric for Metric {
    fn inc(&self) {
        (self.apply)(&mut self.recorded.lock(), 1.0);
    }
    fn dec(&self) {
        (self.apply)(&mut self.recorded.lock(), -1.0);
    }
}
impl CounterMetric for Metric {
    fn inc(&self) {
        (self.apply)(&mut self.recorded.lock(), 1.0);
    }
}
impl HistogramMetric for Metric {
    fn observe(&self, value: f64) {
        (self.apply)(&mut self.recorded.lock(), value);
    }
}
impl SettableGaugeMetric for Metric {
    fn set(&self, value: f64) {
        (self.apply)(&mut self.recorded.lock(), value);
    }
}

struct Depth(Arc<Mutex<Recorded>>);

impl DepthMetricWithPriority for Depth {
    fn inc(&self, priority: i32) {
        *self.0.lock().depth.entry(priority).or_default() += 1;
    }
    fn dec(&self, priority: i32) {
        *self.0.lock().depth.entry(priority).or_default() -= 1;
    }
}

use crate::DepthMetricWithPriority;

impl TestProvider {
    fn metric(&self, apply: fn(&mut Recorded, f64)) -> Box<Metric> {
        Box::new(Metric {
            recorded: self.recorded.clone(),
            apply,
        })
    }
}

impl MetricsProvider for TestProvider {
    fn new_depth_metric(&self, _: &str) -> Box<dyn GaugeMetric> {
        self.metric(|r, by| r.plain_depth += by as i64)
    }
    fn new_adds_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        self.metric(|r, _| r.adds += 1)
    }
    fn new_latency_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        self.metric(|r, value| r.latency.push(value))
    }
    fn new_work_duration_metric(&self, _: &str) -> Box<dyn HistogramMetric> {
        self.metric(|r, value| r.work_duration.push(value))
    }
    fn new_unfinished_work_seconds_metric(&self, _: &str) -> Box<dyn SettableGaugeMetric> {
        self.metric(|r, value| r.unfinished = Some(value))
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        _: &str,
    ) -> Box<dyn SettableGaugeMetric> {
        self.metric(|r, value| r.longest = Some(value))
    }
    fn new_retries_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        self.metric(|r, _| r.retries += 1)
    }
    fn new_dropped_delayed_metric(&self, _: &str) -> Box<dyn CounterMetric> {
        self.metric(|r, _| r.dropped += 1)
    }
    fn new_depth_metric_with_priority(&self, _: &str) -> Option<Box<dyn DepthMetricWithPriority>> {
        self.by_priority
            .then(|| Box::new(Depth(self.recorded.clone())) as Box<dyn DepthMetricWithPriority>)
    }
}

fn metered_queue(by_priority: bool) -> (PriorityQueue<&'static str>, FakeClock, TestProvider) {
    let provider = TestProvider {
        by_priority,
        ..TestProvider::default()
    };
    let clock = FakeClock::new();
    let queue = PriorityQueue::with_config(
        QueueConfig::new()
            .name("test")
            .clock(clock.clone())
            .metrics_provider(Arc::new(provider.clone()))
            .unfinished_work_update_period(ms(1)),
    );
    (queue, clock, provider)
}

fn depth(provider: &TestProvider) -> Vec<(i32, i64)> {
    provider
        .recorded
        .lock()
        .depth
        .iter()
        .map(|(p, d)| (*p, *d))
        .collect()
}

#[test]
fn metrics_of_a_re_added_processed_item() {
    let (queue, _clock, provider) = metered_queue(true);
    queue.add("foo");
    assert_eq!(queue.get_blocking(), Some(("foo", 0)));
    queue.add("foo");
    assert_eq!(queue.len(), 1);
    queue.done(&"foo");
    assert_eq!(queue.get_blocking(), Some(("foo", 0)));
    assert_eq!(depth(&provider), [(0, 0)]);
    assert_eq!(provider.recorded.lock().adds, 2);
}

#[test]
fn metrics_follow_a_raised_priority() {
    let (queue, _clock, provider) = metered_queue(true);
    queue.add_with_opts("foo", at(1));
    queue.add_with_opts("foo", at(2));
    assert_eq!(depth(&provider), [(1, 0), (2, 1)]);
    assert_eq!(queue.get_blocking(), Some(("foo", 2)));
    assert_eq!(depth(&provider), [(1, 0), (2, 0)]);
    assert_eq!(provider.recorded.lock().adds, 1);

    let (queue, _clock, provider) = metered_queue(true);
    queue.add("foo");
    queue.add("bar");
    queue.add("baz");
    queue.add_with_opts("baz", at(1));
    assert_eq!(queue.get_blocking(), Some(("baz", 1)));
    assert_eq!(depth(&provider), [(0, 2), (1, 0)]);
    assert_eq!(provider.recorded.lock().adds, 3);
}

#[test]
fn metrics_count_a_delayed_item_when_it_is_ready() {
    // controller-runtime's issue 3239: added with a delay, then without.
    let (queue, _clock, provider) = metered_queue(true);
    queue.add_after("foo", Duration::from_secs(3600));
    assert_eq!(depth(&provider), []);
    queue.add("foo");
    assert_eq!(depth(&provider), [(0, 1)]);
    assert_eq!(queue.get_blocking(), Some(("foo", 0)));
    assert_eq!(depth(&provider), [(0, 0)]);

    // ...and with a higher priority.
    let (queue, clock, provider) = metered_queue(true);
    queue.add_after("foo", Duration::from_secs(3600));
    queue.add_with_opts("foo", at(1));
    assert_eq!(depth(&provider), [(1, 1)]);
    assert_eq!(queue.get_blocking(), Some(("foo", 1)));
    assert_eq!(depth(&provider), [(1, 0)]);
    queue.done(&"foo");

    // One that comes due counts when it does, and its latency runs from then.
    queue.add_after("bar", ms(10));
    assert_eq!(provider.recorded.lock().retries, 2);
    step_and_settle(&queue, &clock, ms(10));
    assert_eq!(depth(&provider), [(0, 1), (1, 0)]);
    clock.step(ms(3));
    assert_eq!(queue.get_blocking(), Some(("bar", 0)));
    assert_eq!(provider.recorded.lock().latency.last(), Some(&0.003));
}

#[test]
fn metrics_without_depth_by_priority_use_the_plain_depth() {
    let (queue, clock, provider) = metered_queue(false);
    queue.add_with_opts("a", at(1));
    queue.add_with_opts("b", at(-1));
    queue.add_with_opts("b", at(5));
    assert_eq!(provider.recorded.lock().plain_depth, 2);
    let (a, _) = queue.get_blocking().unwrap();
    assert_eq!(a, "b");
    assert_eq!(provider.recorded.lock().plain_depth, 1);
    clock.step(ms(4));
    queue.done(&"b");
    assert_eq!(provider.recorded.lock().work_duration, [0.004]);
    assert!(depth(&provider).is_empty());
}

#[test]
fn metrics_refresh_unfinished_work_and_count_dropped_delayed_items() {
    let (queue, clock, provider) = metered_queue(true);
    queue.add("slow");
    let _slow = queue.get_blocking().unwrap();
    step_and_settle(&queue, &clock, ms(2));
    assert_eq!(provider.recorded.lock().unfinished, Some(0.002));
    assert_eq!(provider.recorded.lock().longest, Some(0.002));

    queue.add_after("a", Duration::from_secs(1));
    queue.add_rate_limited("b");
    queue.shut_down();
    assert_eq!(provider.recorded.lock().dropped, 2);
    // Refused after the shutdown: counted too, and the limiter was not asked.
    queue.add_rate_limited("c");
    assert_eq!(provider.recorded.lock().dropped, 3);
    assert_eq!(queue.num_requeues(&"c"), 0);
}

/// A key whose hash changes while it is queued cannot be found again: it is skipped, and the
/// queue goes on serving the others rather than panicking.
#[test]
fn an_item_whose_hash_changed_is_skipped() {
    use std::sync::atomic::{AtomicU64, Ordering};

    #[derive(Clone, Debug)]
    struct Shifty(Arc<AtomicU64>);
    impl PartialEq for Shifty {
        fn eq(&self, other: &Self) -> bool {
            self.0.load(Ordering::SeqCst) == other.0.load(Ordering::SeqCst)
        }
    }
    impl Eq for Shifty {}
    impl Hash for Shifty {
        fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
            self.0.load(Ordering::SeqCst).hash(state);
        }
    }

    let queue = PriorityQueue::new();
    let shifty = Shifty(Arc::new(AtomicU64::new(1)));
    queue.add_with_opts(shifty.clone(), at(5));
    queue.add(Shifty(Arc::new(AtomicU64::new(2))));
    shifty.0.store(1_000_000, Ordering::SeqCst);
    let (item, priority) = queue.get_blocking().unwrap();
    assert_eq!((item.0.load(Ordering::SeqCst), priority), (2, 0));
    queue.shut_down();
}
