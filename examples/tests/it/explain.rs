//! The `explain` example against `kubectl explain` on the local apiserver: for built-in
//! resources (scalars, enums, arrays, maps, `$ref` cycles, `--api-version`) and for a CRD of
//! this test with a structural schema, both print exactly the same bytes.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use kclient::envtest::{Identity, TestEnv};
use kclient::rest::Client;
use serde_json::{Value, json};

/// A CRD `sprockets.<group>` with a described structural schema, deleted by
/// [`Sprockets::delete`].
struct Sprockets {
    client: Client,
    group: String,
}

impl Sprockets {
    async fn create(client: &Client) -> Sprockets {
        let group = format!("ex{}.examples.kclient.dev", std::process::id());
        let body = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("sprockets.{group}")},
            "spec": {
                "group": group,
                "names": {"kind": "Sprocket", "listKind": "SprocketList",
                          "plural": "sprockets", "singular": "sprocket"},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "description": "A Sprocket turns chains in the explain test.",
                        "properties": {"spec": {
                            "type": "object",
                            // A description that ends in a newline keeps it (kubectl then
                            // prints a blank line more).
                            "description": "What the sprocket should be.\n",
                            "required": ["teeth"],
                            "properties": {
                                "teeth": {"type": "integer",
                                    "description": "How many teeth the sprocket has."},
                                "finish": {"type": "string", "enum": ["matte", "gloss"],
                                    "description": "The surface finish."},
                                // Numbers in an enum print as Go prints a float64.
                                "size": {"type": "integer",
                                    "enum": [1, 100000, 1000000, 123456789012_i64]},
                                "ratio": {"type": "number", "enum": [1.5, 0.0001, 0.00001]},
                                "labels": {"type": "object",
                                    "additionalProperties": {"type": "string"}},
                                "spokes": {"type": "array", "items": {"type": "object",
                                    "description": "One spoke.",
                                    "properties": {"length": {"type": "number",
                                        "description": "Its length.\n\n"}}}},
                            }}}}}}],
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
        Sprockets {
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
            .name(&format!("sprockets.{}", self.group))
            .bytes()
            .await;
    }
}

/// The kubeconfig both programs use, and kubectl's own discovery cache: kubectl trusts its
/// disk cache, which may still hold another run's deleted CRD.
struct Paths {
    kubeconfig: PathBuf,
    cache: tempfile::TempDir,
}

fn kubectl(paths: &Paths, args: &[&str]) -> Output {
    Command::new("kubectl")
        .arg("explain")
        .args(args)
        .arg(format!("--kubeconfig={}", paths.kubeconfig.display()))
        .arg(format!("--cache-dir={}", paths.cache.path().display()))
        .output()
        .unwrap_or_else(|e| panic!("running kubectl (is it installed and on PATH?): {e}"))
}

fn ours(paths: &Paths, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_explain"))
        .args(args)
        .env("KUBECONFIG", &paths.kubeconfig)
        .output()
        .unwrap_or_else(|e| panic!("running the explain example: {e}"))
}

fn compare(paths: &Paths, args: &[&str]) {
    let theirs = kubectl(paths, args);
    assert!(
        theirs.status.success(),
        "kubectl explain {args:?} failed: {}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    let mine = ours(paths, args);
    assert!(
        mine.status.success(),
        "explain {args:?} failed: {}",
        String::from_utf8_lossy(&mine.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&mine.stdout),
        String::from_utf8_lossy(&theirs.stdout),
        "explain {args:?} differs from kubectl's output"
    );
}

/// `--api-version` given last without its value fails, as kubectl's flag parsing does (it
/// used to be ignored, and the preferred version explained instead). Both fail before they
/// read the kubeconfig, which does not exist here.
#[test]
fn a_flag_without_its_value_fails_as_kubectls_does() {
    let paths = Paths {
        kubeconfig: PathBuf::from("/nonexistent/kubeconfig"),
        cache: tempfile::tempdir().expect("a temporary kubectl cache dir"),
    };
    let args = ["deployment", "--api-version"];
    // Not through `kubectl()`, which puts its own flags last.
    let theirs = Command::new("kubectl")
        .args(["explain", "--kubeconfig=/nonexistent/kubeconfig"])
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("running kubectl (is it installed and on PATH?): {e}"));
    assert!(!theirs.status.success());
    assert!(
        String::from_utf8_lossy(&theirs.stderr).contains("flag needs an argument"),
        "{}",
        String::from_utf8_lossy(&theirs.stderr)
    );
    let mine = ours(&paths, &args);
    assert_eq!(theirs.status.code(), Some(1));
    assert_eq!(mine.status.code(), theirs.status.code());
    let stderr = String::from_utf8_lossy(&mine.stderr);
    assert!(
        stderr.contains("flag needs an argument: --api-version"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_prints_what_kubectl_prints() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let paths = Paths {
        kubeconfig: env.kubeconfig_path(Identity::Admin),
        cache: tempfile::tempdir().expect("a temporary kubectl cache dir"),
    };
    let crd = Sprockets::create(&client).await;
    let group = crd.group.clone();

    let result = tokio::task::spawn_blocking(move || {
        for args in [
            vec!["deployment"],
            vec!["deployment.spec.replicas"],
            vec!["deployment.spec.selector"],
            vec!["pod.spec.containers"],
            vec!["pods.spec.containers.ports"],
            vec!["service.spec.type"],
            vec!["svc.spec.ports"],
            vec!["configmap"],
            vec!["pod.metadata.labels"],
            vec!["node.status.capacity"],
            vec!["pod.spec.volumes.hostPath.type"],
            vec!["crd.spec.versions.schema.openAPIV3Schema"],
            vec!["cronjob.spec.jobTemplate.spec"],
            vec!["hpa.spec", "--api-version=autoscaling/v1"],
            // A resource named with its group, as `kubectl explain` takes it: the longest
            // `resource.group` that the input starts with, the rest being the field path.
            vec!["deployments.apps"],
            vec!["deployments.apps.spec.replicas"],
            vec!["statefulsets.apps.spec.updateStrategy.type"],
            vec!["leases.coordination.k8s.io.spec"],
            vec!["horizontalpodautoscalers.autoscaling.spec.metrics"],
            // --recursive: every field under the one explained, a line each; a type that
            // refers back to one it is nested in (a CRD's schema) stops there.
            vec!["deployment", "--recursive"],
            vec!["pod.spec", "--recursive"],
            vec!["--recursive", "svc.spec.ports"],
            vec!["configmap.data", "--recursive"],
            vec!["crd.spec.versions.schema.openAPIV3Schema", "--recursive"],
            vec!["crd", "--recursive=true"],
            vec!["node.status", "--recursive=false"],
        ] {
            compare(&paths, &args);
        }

        // The CRD's schema is published to OpenAPI a moment after it is created. Its group is
        // named, since another suite's CRD on the same server may have the plural `sprockets`.
        let api_version = format!("--api-version={group}/v1");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let probe = kubectl(&paths, &["sprockets.spec", &api_version]);
            if probe.status.success() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "kubectl explain never found the test CRD sprockets.{group}: {}",
                String::from_utf8_lossy(&probe.stderr)
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        // A field that does not exist: both print the header, then fail naming the field.
        for args in [
            &["deployment.spec.nosuch"][..],
            &["pods.spec.containers.nosuch"],
        ] {
            let theirs = kubectl(&paths, args);
            let mine = ours(&paths, args);
            assert_eq!(theirs.status.code(), Some(1), "{theirs:?}");
            assert_eq!(mine.status.code(), theirs.status.code(), "{mine:?}");
            assert_eq!(
                String::from_utf8_lossy(&mine.stdout),
                String::from_utf8_lossy(&theirs.stdout),
                "explain {args:?}: the header"
            );
            for out in [&theirs, &mine] {
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    stderr.contains(r#"field "nosuch" does not exist"#),
                    "{stderr}"
                );
            }
        }

        for field in [
            "",
            ".spec",
            ".spec.teeth",
            ".spec.finish",
            ".spec.labels",
            ".spec.spokes",
            ".spec.spokes.length",
            ".spec.size",
            ".spec.ratio",
        ] {
            compare(&paths, &[&format!("sprockets{field}"), &api_version]);
            compare(
                &paths,
                &[&format!("sprockets{field}"), &api_version, "--recursive"],
            );
        }
        let spec =
            String::from_utf8(ours(&paths, &["sprockets.spec", &api_version]).stdout).unwrap();
        assert!(
            spec.contains("  teeth\t<integer> -required-\n    How many teeth"),
            "{spec}"
        );
    })
    .await;
    crd.delete().await;
    if let Err(panic) = result {
        std::panic::resume_unwind(panic.into_panic());
    }
}
