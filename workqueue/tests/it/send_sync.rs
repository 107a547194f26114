//! Compile-time checks that the public types can be shared across threads and that the async
//! methods' futures can be spawned on a multi-threaded runtime (tokio's `async_send_sync.rs`
//! habit). If one of these stops compiling, a public type lost Send or Sync.

use std::future::Future;
use std::sync::Arc;

use kclient_workqueue::{
    AddOpts, BucketRateLimiter, DelayingQueue, FakeClock, ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter, MaxOfRateLimiter, PriorityQueue, Queue, QueueConfig, RateLimiter,
    RateLimitingQueue, RealClock, TryGetError, WithMaxWaitRateLimiter, run_workers,
};

fn send_sync<T: Send + Sync>() {}

fn send_future<F: Future + Send>(_: F) {}

/// A key that is Send but not Sync: the queues need no more of their items.
struct NotSync(std::cell::Cell<u8>);
impl Clone for NotSync {
    fn clone(&self) -> Self {
        NotSync(self.0.clone())
    }
}
impl PartialEq for NotSync {
    fn eq(&self, other: &Self) -> bool {
        self.0.get() == other.0.get()
    }
}
impl Eq for NotSync {}
impl std::hash::Hash for NotSync {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.get().hash(state);
    }
}

#[test]
fn public_types_are_send_and_sync() {
    send_sync::<Queue<String>>();
    send_sync::<DelayingQueue<String>>();
    send_sync::<RateLimitingQueue<String>>();
    send_sync::<Queue<Arc<str>>>();
    send_sync::<Queue<NotSync>>();
    send_sync::<RateLimitingQueue<NotSync>>();
    send_sync::<PriorityQueue<String>>();
    send_sync::<PriorityQueue<NotSync>>();
    send_sync::<AddOpts>();
    send_sync::<QueueConfig<String>>();
    send_sync::<FakeClock>();
    send_sync::<RealClock>();
    send_sync::<TryGetError>();
    send_sync::<ItemExponentialFailureRateLimiter<String>>();
    send_sync::<ItemFastSlowRateLimiter<String>>();
    send_sync::<BucketRateLimiter>();
    send_sync::<MaxOfRateLimiter<String>>();
    send_sync::<WithMaxWaitRateLimiter<BucketRateLimiter>>();
    send_sync::<Box<dyn RateLimiter<String>>>();
}

#[test]
fn async_methods_return_send_futures() {
    let queue = RateLimitingQueue::<String>::with_config(QueueConfig::new());
    send_future(queue.get());
    send_future(queue.shut_down_with_drain());
    send_future(run_workers(&queue, 1, |_key: String| async {}));
    queue.shut_down();
    let priority_queue = PriorityQueue::<NotSync>::new();
    send_future(priority_queue.get());
    send_future(priority_queue.shut_down_with_drain());
    priority_queue.shut_down();
}
