//! `shutdown_on_signal` cancels its token on SIGTERM. Alone in its test binary (its own
//! process): the signal goes to the whole process, and only one may be sent, since a second
//! one exits the process.

#![cfg(unix)]

mod signal_common;

#[tokio::test]
async fn sigterm_cancels_the_token() {
    signal_common::signal_cancels_the_token("TERM").await;
}
