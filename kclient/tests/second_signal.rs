//! A second signal, while the program shuts down after the first, exits the process at once
//! with status 1. The test runs itself again as a child process (the exit ends the process it
//! happens in) and signals the child twice.

#![cfg(unix)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

/// Set in the child: it installs the handler and then shuts down for ever.
const CHILD: &str = "KCLIENT_SECOND_SIGNAL_CHILD";

/// How long the child may take to reach a step before the test gives up on it. A guard
/// against a hang, not a timing assertion: each step takes milliseconds.
const STEP_GUARD: Duration = Duration::from_secs(60);

fn kill(signal: &str, pid: u32) {
    let status = Command::new("kill")
        .args([&format!("-{signal}"), &pid.to_string()])
        .status()
        .expect("running `kill` (procps) to signal the child");
    assert!(status.success(), "kill -{signal} {pid} failed: {status}");
}

/// Waits for the child to print a line ending with `marker`. libtest prints the test's name
/// without a newline before the test runs, so the child's first line starts with it.
fn wait_for(lines: &Receiver<String>, child: &mut Child, marker: &str) {
    loop {
        match lines.recv_timeout(STEP_GUARD) {
            Ok(line) if line.ends_with(marker) => return,
            Ok(_) => {}
            Err(RecvTimeoutError::Disconnected) => {
                let status = child.wait().expect("waiting for the child");
                panic!("the child ended ({status}) without printing {marker:?}");
            }
            Err(RecvTimeoutError::Timeout) => {
                let _ = child.kill();
                panic!("the child printed no {marker:?} within {STEP_GUARD:?}");
            }
        }
    }
}

#[tokio::test]
async fn a_second_signal_exits_with_status_1() {
    if std::env::var_os(CHILD).is_some() {
        let token = kclient::signal::shutdown_on_signal();
        println!("<ready>");
        token.cancelled().await;
        println!("<cancelled>");
        // A shutdown that takes its time; the second signal cuts it short.
        tokio::time::sleep(Duration::from_secs(120)).await;
        println!("<shut down gracefully>");
        return;
    }
    for (first, second) in [("TERM", "TERM"), ("INT", "TERM"), ("TERM", "INT")] {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args([
                "a_second_signal_exits_with_status_1",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("running this test binary again");
        let pid = child.id();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if send.send(line).is_err() {
                    return;
                }
            }
        });
        wait_for(&lines, &mut child, "<ready>");
        kill(first, pid);
        wait_for(&lines, &mut child, "<cancelled>");
        kill(second, pid);
        // The child exits within milliseconds, or after its 120 s graceful shutdown (printing
        // that it did) if the second signal did nothing.
        let status = tokio::task::spawn_blocking(move || child.wait())
            .await
            .unwrap()
            .expect("waiting for the child");
        let rest: Vec<String> = lines.try_iter().collect();
        assert_eq!(
            status.code(),
            Some(1),
            "SIG{first} then SIG{second}: the child ended with {status}, printing {rest:?}"
        );
    }
}
