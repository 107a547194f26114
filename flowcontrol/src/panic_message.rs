//! [`panic_message`]: what a caught panic said, for the places that contain a panic of the
//! caller's code and log it (the workqueue's timer thread, the cache's handler pool, the
//! controller's workers).

use std::any::Any;

/// The message of a caught panic's payload: the `&str` or `String` that `panic!` makes, else
/// a placeholder saying there was none.
///
/// ```
/// let caught = std::panic::catch_unwind(|| panic!("index {} out of range", 7)).unwrap_err();
/// assert_eq!(kclient_flowcontrol::panic_message(&*caught), "index 7 out of range");
/// let caught = std::panic::catch_unwind(|| std::panic::panic_any(7u8)).unwrap_err();
/// assert_eq!(kclient_flowcontrol::panic_message(&*caught), "a panic without a message");
/// ```
pub fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}
