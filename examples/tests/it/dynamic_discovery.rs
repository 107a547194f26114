//! The `dynamic-discovery` example: a name the server does not serve is an error on stderr
//! with exit status 1, as `kubectl get` reports it, and the names that resolve are still
//! listed.

use std::process::Command;

use kclient::envtest::{Identity, TestEnv};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_name_fails_and_the_others_are_listed() {
    let env = TestEnv::connect().await;
    let kubeconfig = env.kubeconfig_path(Identity::Admin);
    let out = tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_dynamic-discovery"))
            .args(["no-such-thing-kclient", "ns"])
            .env("KUBECONFIG", &kubeconfig)
            .output()
            .expect("running the dynamic-discovery example")
    })
    .await
    .expect("the program ran");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("no-such-thing-kclient") && stderr.ends_with("1 name failed\n"),
        "{stderr}"
    );
    assert!(!stdout.contains("no-such-thing-kclient"), "{stdout}");
    // The namespaces are listed: `default` always exists.
    assert!(
        stdout.contains("ns -> kind Namespace, resource namespaces in core/v1"),
        "{stdout}"
    );
    assert!(
        stdout.lines().any(|l| l.starts_with("  default ")),
        "{stdout}"
    );
}
