//! The body of the signal tests: install the handler, send one signal to this very process
//! with `kill`, and wait for the token.

use std::process::Command;
use std::time::Duration;

/// Calls `shutdown_on_signal` twice, sends `SIG<name>` to this process and checks that both
/// tokens are cancelled.
pub(crate) async fn signal_cancels_the_token(name: &str) {
    let token = kclient::signal::shutdown_on_signal();
    let second = kclient::signal::shutdown_on_signal();
    assert!(!token.is_cancelled(), "cancelled before any signal");

    let pid = std::process::id().to_string();
    let status = Command::new("kill")
        .args([&format!("-{name}"), &pid])
        .status()
        .expect("running `kill` (procps) to signal the test process");
    assert!(status.success(), "kill -{name} {pid} failed: {status}");

    // A guard against a hang, not a timing assertion: the handler runs within milliseconds.
    tokio::time::timeout(Duration::from_secs(60), token.cancelled())
        .await
        .unwrap_or_else(|_| panic!("SIG{name} did not cancel the token within 60 s"));
    // Every listener sees the same first signal.
    tokio::time::timeout(Duration::from_secs(60), second.cancelled())
        .await
        .unwrap_or_else(|_| panic!("SIG{name} did not cancel the second token within 60 s"));
}
