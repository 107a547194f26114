//! The `api-resources` example against `kubectl api-resources` on the local apiserver: for
//! every flag combination both print exactly the same bytes, with a CRD of this test installed
//! (two served versions, short names and categories) so that custom resource rows are
//! compared too. `-o json` (which the installed kubectl does not offer) is checked against
//! kubectl's `-o name` rows and the CRD's definition.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use kclient::discovery::APIResourceList;
use kclient::envtest::{Identity, TestEnv};
use kclient::rest::Client;
use serde_json::{Value, json};

/// How many times a comparison is repeated when the cluster's resources changed while it ran
/// (other tests create and delete CRDs concurrently).
const ATTEMPTS: usize = 8;

/// A CRD `gizmos.<group>` (kind `Gizmo`, short name `gzm`, categories `all` and
/// `kclient-ar-test`) serving `v1beta1` and `v1`, deleted by [`Gizmos::delete`].
struct Gizmos {
    client: Client,
    group: String,
}

impl Gizmos {
    async fn create(client: &Client) -> Gizmos {
        let group = format!(
            "ar{}x{:04x}.examples.kclient.dev",
            std::process::id(),
            rand_suffix()
        );
        let schema = json!({"openAPIV3Schema": {"type": "object",
            "x-kubernetes-preserve-unknown-fields": true}});
        let body = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("gizmos.{group}")},
            "spec": {
                "group": group,
                "names": {"kind": "Gizmo", "listKind": "GizmoList", "plural": "gizmos",
                          "singular": "gizmo", "shortNames": ["gzm"],
                          "categories": ["all", "kclient-ar-test"]},
                "scope": "Namespaced",
                "versions": [
                    {"name": "v1beta1", "served": true, "storage": false, "schema": schema},
                    {"name": "v1", "served": true, "storage": true, "schema": schema},
                ],
            }
        });
        let _: Value = client
            .post()
            .group_version("apiextensions.k8s.io", "v1")
            .resource("customresourcedefinitions")
            .json(&body)
            .send()
            .await
            .expect("create the test CRD");
        Gizmos {
            client: client.clone(),
            group,
        }
    }

    async fn delete(self) {
        let _ = self
            .client
            .delete()
            .group_version("apiextensions.k8s.io", "v1")
            .resource("customresourcedefinitions")
            .name(&format!("gizmos.{}", self.group))
            .bytes()
            .await;
    }
}

fn rand_suffix() -> u16 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    (nanos >> 8) as u16
}

/// Runs kubectl and the example with the same arguments against the same kubeconfig.
struct Runner {
    kubeconfig: PathBuf,
    cache_dir: tempfile::TempDir,
}

impl Runner {
    fn kubectl(&self, args: &[&str]) -> Output {
        Command::new("kubectl")
            .arg("api-resources")
            .args(args)
            .arg(format!("--kubeconfig={}", self.kubeconfig.display()))
            .arg(format!("--cache-dir={}", self.cache_dir.path().display()))
            .output()
            .unwrap_or_else(|e| panic!("running kubectl (is it installed and on PATH?): {e}"))
    }

    fn ours(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_api-resources"))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .output()
            .unwrap_or_else(|e| panic!("running the api-resources example: {e}"))
    }

    /// kubectl's output and ours for `args`, taken while kubectl's answer did not change
    /// (kubectl before and after ours print the same).
    fn compare(&self, args: &[&str]) -> (String, String) {
        for _ in 0..ATTEMPTS {
            let before = self.kubectl(args);
            let ours = self.ours(args);
            let after = self.kubectl(args);
            if before.stdout != after.stdout {
                continue;
            }
            assert!(
                before.status.success(),
                "kubectl api-resources {args:?} failed: {}",
                String::from_utf8_lossy(&before.stderr)
            );
            assert!(
                ours.status.success(),
                "api-resources {args:?} failed: {}",
                String::from_utf8_lossy(&ours.stderr)
            );
            return (text(before.stdout), text(ours.stdout));
        }
        panic!("the cluster's resources kept changing during {ATTEMPTS} runs of {args:?}");
    }
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("output is UTF-8")
}

/// Waits until kubectl's discovery lists the CRD's resource.
fn wait_discoverable(runner: &Runner, group: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let out = runner.kubectl(&["-o", "name", &format!("--api-group={group}")]);
        if text(out.stdout).contains("gizmos.") {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the test CRD's group {group} never appeared in discovery"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn kubeconfig(env: &TestEnv) -> PathBuf {
    let path = env.kubeconfig_path(Identity::Admin);
    assert!(Path::new(&path).is_file(), "{} is missing", path.display());
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_resources_prints_what_kubectl_prints() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let crd = Gizmos::create(&client).await;
    let runner = Runner {
        kubeconfig: kubeconfig(&env),
        cache_dir: tempfile::tempdir().expect("a temporary kubectl cache dir"),
    };
    let group = crd.group.clone();
    let crd_group_flag = format!("--api-group={group}");

    let result = tokio::task::spawn_blocking(move || {
        wait_discoverable(&runner, &group);
        let combinations: Vec<Vec<&str>> = vec![
            vec![],
            vec!["-o", "wide"],
            vec!["-o", "name"],
            vec!["--namespaced=true"],
            vec!["--namespaced=false", "-o", "wide"],
            vec!["--api-group="],
            vec![&crd_group_flag, "-o", "wide"],
            vec!["--api-group=apps", "--verbs=get"],
            vec!["--verbs=list,watch"],
            vec!["--verbs=create", "--namespaced=false", "-o", "name"],
            vec!["--categories=kclient-ar-test"],
            vec!["--categories=all", "-o", "wide"],
            vec!["--sort-by=name"],
            vec!["--sort-by=kind", "-o", "wide"],
            vec!["--no-headers", "-o", "wide"],
            vec!["--api-group=no.such.group"],
        ];
        for args in &combinations {
            let (kubectl, ours) = runner.compare(args);
            assert_eq!(
                ours, kubectl,
                "api-resources {args:?} differs from kubectl's output"
            );
        }

        // The CRD's row, in its preferred version, in both.
        let (kubectl, _) = runner.compare(&[&crd_group_flag, "-o", "wide"]);
        let row: Vec<&str> = kubectl
            .lines()
            .nth(1)
            .expect("a row for the test CRD")
            .split_whitespace()
            .collect();
        assert_eq!(
            row,
            [
                "gizmos",
                "gzm",
                &format!("{group}/v1"),
                "true",
                "Gizmo",
                "delete,deletecollection,get,list,patch,create,update,watch",
                "all,kclient-ar-test"
            ]
        );

        // -o json: the rows of -o name, with group and version set, as one list.
        for _ in 0..ATTEMPTS {
            let before = text(runner.kubectl(&["-o", "name"]).stdout);
            let json = runner.ours(&["-o", "json"]);
            let after = text(runner.kubectl(&["-o", "name"]).stdout);
            if before != after {
                continue;
            }
            assert!(json.status.success(), "api-resources -o json failed");
            let list: APIResourceList =
                serde_json::from_slice(&json.stdout).expect("-o json is an APIResourceList");
            assert_eq!(
                (list.kind.as_str(), list.api_version.as_str()),
                ("APIResourceList", "v1")
            );
            let names: String = list
                .api_resources
                .iter()
                .map(|r| match r.group.as_str() {
                    "" => format!("{}\n", r.name),
                    g => format!("{}.{g}\n", r.name),
                })
                .collect();
            assert_eq!(names, before, "-o json lists what kubectl -o name lists");
            let gizmos = list
                .api_resources
                .iter()
                .find(|r| r.group == group)
                .expect("the CRD in -o json");
            assert_eq!(
                (
                    gizmos.version.as_str(),
                    gizmos.kind.as_str(),
                    gizmos.singular_name.as_str()
                ),
                ("v1", "Gizmo", "gizmo")
            );
            assert_eq!(gizmos.categories, ["all", "kclient-ar-test"]);
            return;
        }
        panic!("the cluster's resources kept changing during {ATTEMPTS} -o json runs");
    })
    .await;
    crd.delete().await;
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}
