//! The Prometheus form of request metrics after real requests to the real kube-apiserver:
//! `rest_client_exec_plugin_call_total` (an exec credential plugin that hands out the testenv
//! admin's token, one that fails, one that does not exist), the `<error>` results of the
//! requests those two could not authenticate, and
//! `rest_client_rate_limiter_duration_seconds` (a client at 5 QPS with a burst of 1 sending
//! three requests at once).
//!
//! Its own test binary with one test, because the metrics providers are process-wide: the
//! counts below are exactly what this test did.

mod metrics_common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use kclient::api::core::v1::Namespace;
use kclient::envtest::{Identity, TestEnv};
use kclient::metrics::Registry;
use kclient::rest::{ConfigOverrides, ExecConfig, ExecEnvVar, Kubeconfig};
use kclient::{Client, Config};

use metrics_common::{scrape_registry, series, value};

const EXEC_API_VERSION: &str = "client.authentication.k8s.io/v1";

/// Writes an executable shell script.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("writing the plugin script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
        .expect("making the plugin script executable");
    path
}

/// The testenv admin's kubeconfig with its token replaced by the exec plugin `command`
/// (`env` passed to it), as a client config with the given QPS and burst.
fn exec_config(
    admin: &Kubeconfig,
    command: &Path,
    env: Vec<ExecEnvVar>,
    qps: f32,
    burst: i32,
) -> Config {
    let mut kubeconfig = admin.clone();
    let user = admin_user(admin);
    let auth = kubeconfig
        .auth_info_mut(&user)
        .expect("the admin kubeconfig's user");
    auth.token = None;
    let mut exec = ExecConfig::new(command.to_string_lossy(), EXEC_API_VERSION);
    exec.env = env;
    exec.interactive_mode = Some("Never".to_owned());
    auth.exec = Some(exec);
    let mut config = Config::from_kubeconfig(&kubeconfig, &ConfigOverrides::default())
        .expect("a client config from the exec kubeconfig");
    config.qps = qps;
    config.burst = burst;
    config
}

/// The user of the kubeconfig's current context.
fn admin_user(admin: &Kubeconfig) -> String {
    let context = admin
        .current_context
        .as_deref()
        .and_then(|name| admin.context(name))
        .expect("the admin kubeconfig's current context");
    context.user.clone()
}

/// `GET /api/v1/namespaces/{name}`.
async fn get_namespace(client: &Client, name: &str) -> Result<Namespace, kclient::Error> {
    client
        .get()
        .group_version("", "v1")
        .resource("namespaces")
        .name(name)
        .send()
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_plugin_calls_and_rate_limiter_waits_are_scraped() {
    let mut registry = Registry::default();
    assert!(kclient::metrics::register(&mut registry));

    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let admin = Kubeconfig::read_from(env.kubeconfig_path(Identity::Admin))
        .expect("reading the testenv admin kubeconfig");
    let token = {
        admin
            .auth_info(&admin_user(&admin))
            .and_then(|user| user.token.as_ref())
            .expect("the testenv admin authenticates with a bearer token")
            .expose()
            .clone()
    };
    let dir = tempfile::tempdir().expect("a temporary directory");

    // A plugin that hands out the admin's token (given to it in its environment, so it is in
    // no file), as an ExecCredential without expiry: one run serves every request.
    let good = script(
        dir.path(),
        "good-plugin",
        &format!(
            r#"printf '{{"kind":"ExecCredential","apiVersion":"{EXEC_API_VERSION}","status":{{"token":"%s"}}}}' "$KCLIENT_TEST_TOKEN""#
        ),
    );
    let limited = Client::new(exec_config(
        &admin,
        &good,
        vec![ExecEnvVar::new("KCLIENT_TEST_TOKEN", token)],
        5.0,
        1,
    ))
    .expect("a client with the exec plugin");
    // Three requests at once: all three reserve a token of the bucket (5 per second, 1 in
    // reserve) in the same poll, so they wait at least 0, 0.2 and 0.4 s; the first to need
    // credentials runs the plugin and the others share that run.
    let (a, b, c) = tokio::join!(
        get_namespace(&limited, ns.name()),
        get_namespace(&limited, ns.name()),
        get_namespace(&limited, ns.name()),
    );
    for got in [a, b, c] {
        let got = got.expect("the apiserver accepts the plugin's token");
        assert_eq!(got.metadata.name.as_deref(), Some(ns.name()));
    }

    // A plugin that fails, and one that does not exist; no rate limiter on these clients.
    let failing = script(
        dir.path(),
        "failing-plugin",
        "echo 'no credentials today' >&2; exit 3",
    );
    let missing = dir.path().join("no-such-plugin");
    for (command, what) in [(&failing, "failing"), (&missing, "missing")] {
        let client = Client::new(exec_config(&admin, command, Vec::new(), -1.0, 0))
            .expect("a client with the exec plugin");
        let error = get_namespace(&client, ns.name())
            .await
            .expect_err("a request whose credentials plugin fails");
        let text = error.to_string();
        assert!(
            text.contains(&command.display().to_string()),
            "the {what} plugin's error names it: {text}"
        );
    }

    let samples = scrape_registry(&registry);
    let exec = "rest_client_exec_plugin_call_total";
    assert_eq!(
        value(&samples, exec, &["code=\"0\"", "call_status=\"no_error\""]),
        1.0,
        "one run for the three requests"
    );
    assert_eq!(
        value(
            &samples,
            exec,
            &["code=\"3\"", "call_status=\"plugin_execution_error\""]
        ),
        1.0
    );
    assert_eq!(
        value(
            &samples,
            exec,
            &["code=\"1\"", "call_status=\"plugin_not_found_error\""]
        ),
        1.0
    );
    assert_eq!(
        series(&samples, exec, &[]).len(),
        3,
        "no other plugin outcome: {samples:?}"
    );

    // The two requests whose plugin gave no credentials got no response: `<error>` results,
    // as client-go counts a round trip whose credential plugin failed.
    assert_eq!(
        value(
            &samples,
            "rest_client_requests_total",
            &["code=\"<error>\"", "method=\"GET\""]
        ),
        2.0,
        "{samples:?}"
    );

    // Only the limited client has a rate limiter: its three GETs, and nothing else.
    let limiter = "rest_client_rate_limiter_duration_seconds";
    let get = "verb=\"GET\"";
    assert_eq!(
        value(&samples, &format!("{limiter}_count"), &[get]),
        3.0,
        "one wait per request"
    );
    assert_eq!(series(&samples, &format!("{limiter}_count"), &[]).len(), 1);
    // The waits are at least the reserved delays (a sleep never ends early): 0.2 + 0.4 s, less
    // what the bucket refilled between the three reservations of one poll (well under 10 ms).
    let waited = value(&samples, &format!("{limiter}_sum"), &[get]);
    assert!(waited >= 0.55, "waited {waited} s in all");
    // So at most one wait falls in the bucket up to 0.1 s, and at most two up to 0.25 s.
    let bucket = |le: &str| value(&samples, &format!("{limiter}_bucket"), &[get, le]);
    assert!(bucket("le=\"0.1\"") <= 1.0, "{samples:?}");
    assert!(bucket("le=\"0.25\"") <= 2.0, "{samples:?}");
    assert_eq!(bucket("le=\"+Inf\""), 3.0);
}
