//! The `cluster-info` example against kubectl: the group versions it lists (through the
//! `DiscoveryClient`) are exactly those of `kubectl api-versions`, and the version line
//! names the server's version as `kubectl version` does.

use std::collections::BTreeSet;
use std::process::Command;

use kclient::envtest::{Identity, TestEnv};

/// How many times the comparison is repeated when other tests' CRDs changed the groups
/// meanwhile.
const ATTEMPTS: usize = 8;

/// `group/version` (or `v1` for the core group) of every group line of cluster-info's output,
/// and the versions marked preferred.
fn group_versions(output: &str) -> (BTreeSet<String>, usize) {
    let mut all = BTreeSet::new();
    let mut preferred = 0;
    for line in output.lines().filter(|l| l.starts_with("  ")) {
        let line = line.trim_start();
        let (name, versions) = line.split_once(' ').expect("a group line has versions");
        for version in versions.trim().split(", ") {
            let (version, is_preferred) = match version.strip_suffix(" (preferred)") {
                Some(v) => (v, true),
                None => (version, false),
            };
            preferred += usize::from(is_preferred);
            all.insert(match name {
                "(core)" => version.to_owned(),
                group => format!("{group}/{version}"),
            });
        }
    }
    (all, preferred)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_info_lists_what_kubectl_api_versions_lists() {
    let env = TestEnv::connect().await;
    let kubeconfig = env.kubeconfig_path(Identity::Admin);
    let result = tokio::task::spawn_blocking(move || {
        let kubectl = |args: &[&str]| {
            let out = Command::new("kubectl")
                .args(args)
                .arg(format!("--kubeconfig={}", kubeconfig.display()))
                .output()
                .unwrap_or_else(|e| panic!("running kubectl (is it installed?): {e}"));
            assert!(out.status.success(), "kubectl {args:?} failed");
            String::from_utf8(out.stdout).expect("UTF-8")
        };
        for _ in 0..ATTEMPTS {
            let before = kubectl(&["api-versions"]);
            let ours = Command::new(env!("CARGO_BIN_EXE_cluster-info"))
                .env("KUBECONFIG", &kubeconfig)
                .output()
                .expect("running the cluster-info example");
            let after = kubectl(&["api-versions"]);
            if before != after {
                continue;
            }
            assert!(ours.status.success(), "cluster-info failed");
            let text = String::from_utf8(ours.stdout).expect("UTF-8");
            let (listed, preferred) = group_versions(&text);
            let expected: BTreeSet<String> = before.lines().map(str::to_owned).collect();
            assert_eq!(listed, expected, "cluster-info:\n{text}");
            let groups = text.lines().filter(|l| l.starts_with("  ")).count();
            assert_eq!(
                preferred, groups,
                "one preferred version per group:\n{text}"
            );
            assert!(text.contains(&format!("{groups} API groups:")), "{text}");

            let version = kubectl(&["version", "-o", "json"]);
            let version: serde_json::Value = serde_json::from_str(&version).expect("JSON");
            let server = version["serverVersion"]["gitVersion"]
                .as_str()
                .expect("gitVersion");
            assert!(text.contains(&format!("version: {server} ")), "{text}");
            return;
        }
        panic!("the server's groups kept changing during {ATTEMPTS} runs");
    })
    .await;
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}
