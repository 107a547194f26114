//! Multi-file KUBECONFIG fixtures: kclient must resolve the same server, namespace and user
//! as `kubectl config view --minify --flatten`.

use std::path::{Path, PathBuf};
use std::process::Command;

use kclient_rest::{ClientConfigLoadingRules, Config, ConfigOverrides, Kubeconfig};

const ONE: &str = r#"
apiVersion: v1
kind: Config
current-context: ""
clusters:
- name: shared
  cluster: {server: "https://one.example:6443", insecure-skip-tls-verify: true}
contexts:
- name: alpha
  context: {cluster: shared, user: alice, namespace: alpha-ns}
users:
- name: alice
  user: {token: alice-from-one}
"#;

const TWO: &str = r#"
apiVersion: v1
kind: Config
current-context: beta
clusters:
- name: shared
  cluster: {server: "https://two.example:6443"}
- name: other
  cluster: {server: "https://other.example:8443", insecure-skip-tls-verify: true}
contexts:
- name: alpha
  context: {cluster: other, user: bob}
- name: beta
  context: {cluster: other, user: bob}
users:
- name: alice
  user: {token: alice-from-two}
- name: bob
  user: {token: bob-token}
"#;

const THREE: &str = r#"
apiVersion: v1
kind: Config
current-context: alpha
clusters: []
contexts:
- name: gamma
  context: {cluster: shared, user: bob, namespace: gamma-ns}
users: []
"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// What kubectl resolves: (server, namespace, user name, token).
fn kubectl_view(list: &str, args: &[String]) -> (String, String, String, String) {
    let out = Command::new("kubectl")
        .args(["config", "view", "--minify", "--flatten", "--raw"])
        .args(args)
        .env("KUBECONFIG", list)
        .env_remove("HOME")
        .output()
        .expect("kubectl at /usr/bin/kubectl");
    assert!(
        out.status.success(),
        "kubectl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let k = Kubeconfig::from_yaml(&String::from_utf8(out.stdout).unwrap()).unwrap();
    let ctx = &k.contexts[0].context;
    (
        k.clusters[0].cluster.server.clone(),
        ctx.namespace
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "default".into()),
        ctx.user.clone(),
        k.auth_infos[0]
            .user
            .token
            .as_ref()
            .map(|t| t.expose().clone())
            .unwrap_or_default(),
    )
}

#[test]
fn merged_kubeconfig_matches_kubectl() {
    let dir = tempfile::tempdir().unwrap();
    let one = write(dir.path(), "one.yaml", ONE);
    let two = write(dir.path(), "two.yaml", TWO);
    let three = write(dir.path(), "three.yaml", THREE);
    let missing = dir.path().join("missing.yaml");
    let orders: Vec<Vec<&PathBuf>> = vec![
        vec![&one, &two],
        vec![&two, &one],
        vec![&three, &one, &two],
        vec![&missing, &two, &one, &two],
        vec![&one, &three, &two],
    ];
    // `kubectl config view --minify` honours --context only (its --user/--cluster flags do not
    // change what it prints), so cluster/user overrides are covered by the unit tests.
    let overrides: Vec<(Vec<String>, ConfigOverrides)> =
        [None, Some("alpha"), Some("beta"), Some("gamma")]
            .into_iter()
            .map(|c| {
                let args = c
                    .map(|c| vec![format!("--context={c}")])
                    .unwrap_or_default();
                let o = ConfigOverrides {
                    context: c.map(Into::into),
                    ..Default::default()
                };
                (args, o)
            })
            .collect();
    let mut compared = 0;
    for order in &orders {
        let list = std::env::join_paths(order.iter().map(|p| p.as_path())).unwrap();
        let list = list.to_str().unwrap();
        let merged = ClientConfigLoadingRules::with_precedence(order.iter().map(|p| (*p).clone()))
            .load()
            .unwrap();
        for (args, o) in &overrides {
            let ours = merged.resolve(o);
            let Ok(ours) = ours else {
                // kubectl must fail too (a context missing from this merge).
                let out = Command::new("kubectl")
                    .args(["config", "view", "--minify"])
                    .args(args)
                    .env("KUBECONFIG", list)
                    .output()
                    .unwrap();
                assert!(
                    !out.status.success(),
                    "{list} {args:?}: kubectl succeeded, kclient did not"
                );
                continue;
            };
            let config = Config::from_kubeconfig(&merged, o).unwrap();
            let theirs = kubectl_view(list, args);
            let token = config
                .bearer_token
                .as_ref()
                .map(|t| t.expose().clone())
                .unwrap_or_default();
            assert_eq!(
                (
                    config.host.clone(),
                    config.namespace.clone(),
                    ours.user_name.clone(),
                    token
                ),
                theirs,
                "KUBECONFIG={list} {args:?}"
            );
            compared += 1;
        }
    }
    assert!(compared >= 12, "only {compared} combinations compared");
}
