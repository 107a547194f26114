//! The user-facing envtest API against real apiservers: a server this test binary starts
//! itself (shared by the tests here, as a user's suite would), CRDs installed from
//! `CustomResource::crd()` and from YAML (conversion webhooks pointed at the test), namespace
//! isolation, an explicit stop, the existing cluster mode against the workspace's testenv, and
//! the errors a user can run into.

use std::path::PathBuf;

use kclient_apimachinery::meta::ByteString;
use kclient_apimachinery::meta::v1::ObjectMeta;
use kclient_apimachinery::{CreateOptions, GetOptions, ListOptions};
use kclient_clientset::{Api, CustomResource, custom_resource};
use kclient_testenv::{Identity, TestEnv, TestEnvError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A custom resource as a user would declare it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Gadget {
    metadata: ObjectMeta,
    spec: GadgetSpec,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct GadgetSpec {
    size: i64,
}

custom_resource!(Gadget {
    group: "envtest.kclient.dev",
    version: "v1",
    kind: "Gadget",
    plural: "gadgets",
    singular: "gadget",
    scope: Namespaced,
});

fn gadget_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 0}}}
        }
    })
}

/// The server this test binary starts itself, once, for all tests here (never the
/// workspace's shared testenv). Prints how it was started: the figures for the report.
async fn own_env() -> TestEnv {
    let env = TestEnv::builder()
        .start_shared()
        .await
        .unwrap_or_else(|e| panic!("starting this test binary's own apiserver: {e}"));
    let report = env
        .start_report()
        .expect("a started server has a start report");
    eprintln!(
        "own apiserver: binary {} ({:?}), ready in {:?}",
        report.binary.display(),
        report.binary_source,
        report.ready_in
    );
    env
}

/// The admin kubeconfig of the workspace's testenv (`KCLIENT_TESTENV_DIR`).
fn workspace_kubeconfig() -> PathBuf {
    TestEnv::locate().kubeconfig_path(Identity::Admin)
}

#[tokio::test]
async fn started_server_is_a_separate_cluster_of_the_pinned_version() {
    let own = own_env().await;
    let workspace = TestEnv::connect().await;
    assert!(own.is_running());
    let own_url = own.client(Identity::Admin).base_url().to_string();
    assert_ne!(own_url, workspace.client(Identity::Admin).base_url());
    assert!(own_url.starts_with("https://127.0.0.1:"), "{own_url}");

    // A namespace made in the own server does not exist in the workspace's.
    let ns = own.namespace().await;
    let missing = workspace
        .client(Identity::Admin)
        .get()
        .group_version("", "v1")
        .resource("namespaces")
        .name(ns.name())
        .send::<Value>()
        .await
        .expect_err("the namespace exists only in the own server");
    assert!(missing.is_not_found(), "{missing}");

    let version: Value = serde_json::from_slice(
        &own.client(Identity::Admin)
            .get_raw("/version")
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(version["gitVersion"], kclient_testenv::kubernetes_version());

    // Every identity of the started server works as on the workspace's testenv.
    let forbidden = own
        .client(Identity::Restricted)
        .get()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .send::<Value>()
        .await
        .expect_err("the restricted identity has no grants");
    assert_eq!(forbidden.code(), Some(403), "{forbidden}");
    own.client(Identity::Cert)
        .get_raw("/api/v1/namespaces/default")
        .await
        .expect("the certificate identity is an admin");

    // compact_etcd signals the started process (not the workspace's): its marker counts up.
    let marker = own.data_dir().join("compaction");
    let count = || {
        std::fs::read_to_string(&marker)
            .unwrap_or_default()
            .split_whitespace()
            .next()
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let before = count();
    own.compact_etcd().await;
    assert!(count() > before);
}

#[tokio::test]
async fn start_shared_hands_out_one_server() {
    let a = own_env().await;
    let b = own_env().await;
    assert_eq!(
        a.client(Identity::Admin).base_url(),
        b.client(Identity::Admin).base_url()
    );
    assert_eq!(a.data_dir(), b.data_dir());
}

#[tokio::test]
async fn crd_from_custom_resource_is_served_and_takes_objects() {
    let env = own_env().await;
    let crd = Gadget::crd(gadget_schema()).expect("the CRD decodes");
    env.install_crd(&crd).await.expect("install the Gadget CRD");
    // Installing again (another test, a rerun) is an update, not an AlreadyExists error.
    env.install_crds(&[crd]).await.expect("install it again");

    let ns = env.namespace().await;
    let api: Api<Gadget> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let gadget = Gadget {
        metadata: ObjectMeta {
            name: Some("g1".into()),
            ..Default::default()
        },
        spec: GadgetSpec { size: 7 },
    };
    let created = api
        .create(&gadget, &CreateOptions::default())
        .await
        .expect("create a Gadget right after the install");
    assert_eq!(created.spec.size, 7);
    assert!(created.metadata.uid.is_some());
    let read = api.get("g1", &GetOptions::default()).await.unwrap();
    assert_eq!(read.spec.size, 7);

    // The schema is in force: a negative size is rejected by the server.
    let mut bad = gadget.clone();
    bad.metadata.name = Some("g2".into());
    bad.spec.size = -1;
    let err = api
        .create(&bad, &CreateOptions::default())
        .await
        .expect_err("the schema's minimum is enforced");
    assert_eq!(err.code(), Some(422), "{err}");
}

#[tokio::test]
async fn crds_from_multi_document_yaml_are_all_served() {
    let env = own_env().await;
    let yaml = r#"
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: sprockets.yaml.envtest.kclient.dev
spec:
  group: yaml.envtest.kclient.dev
  names: {kind: Sprocket, plural: sprockets, singular: sprocket}
  scope: Namespaced
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: cogs.yaml.envtest.kclient.dev
spec:
  group: yaml.envtest.kclient.dev
  names: {kind: Cog, plural: cogs, singular: cog}
  scope: Cluster
  versions:
    - name: v1alpha1
      served: true
      storage: false
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
"#;
    env.install_crds_yaml(yaml)
        .await
        .expect("install from YAML");
    let client = env.client(Identity::Admin);
    for path in [
        "/apis/yaml.envtest.kclient.dev/v1",
        "/apis/yaml.envtest.kclient.dev/v1alpha1",
    ] {
        let list: Value = serde_json::from_slice(&client.get_raw(path).await.unwrap()).unwrap();
        let names: Vec<&str> = list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        assert!(names.contains(&"cogs"), "{path}: {names:?}");
    }
    let cog: Value = client
        .post()
        .group_version("yaml.envtest.kclient.dev", "v1alpha1")
        .resource("cogs")
        .json(
            &json!({"apiVersion": "yaml.envtest.kclient.dev/v1alpha1", "kind": "Cog",
            "metadata": {"name": "c1"}, "teeth": 12}),
        )
        .send()
        .await
        .expect("create a Cog in the non-storage version");
    assert_eq!(cog["teeth"], 12);
}

#[tokio::test]
async fn invalid_webhook_configurations_are_refused_with_a_reason() {
    let env = TestEnv::connect().await;
    // Only other kinds: nothing to install.
    let none = env
        .install_webhooks_yaml("apiVersion: v1\nkind: Service\nmetadata: {name: s}\n", 9443)
        .await
        .expect_err("a Service alone");
    assert_eq!(
        none.to_string(),
        "not a webhook configuration: the text holds no ValidatingWebhookConfiguration or \
         MutatingWebhookConfiguration"
    );
    // Given as a value, another kind is an error, not skipped.
    let not_one = env
        .install_webhooks(&[json!({"apiVersion": "v1", "kind": "ConfigMap"})], 9443)
        .await
        .expect_err("a ConfigMap");
    assert!(
        matches!(not_one, TestEnvError::InvalidWebhook(_)),
        "{not_one}"
    );
    // A webhook with nowhere to send the review.
    let nowhere = env
        .install_webhooks_yaml(
            "apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n\
             metadata: {name: nowhere}\nwebhooks:\n- name: a.example.com\n  clientConfig: {}\n",
            9443,
        )
        .await
        .expect_err("no service or url");
    assert_eq!(
        nowhere.to_string(),
        "not a webhook configuration: webhook a.example.com of nowhere has neither a service \
         nor a url in its clientConfig"
    );
}

/// A CRD converted by the project's webhook Service is stored pointing at the test's server
/// instead, with testenv's CA; the rewrite's errors name what is wrong.
#[tokio::test]
async fn conversion_webhooks_are_pointed_at_the_test_server() {
    let env = TestEnv::connect().await;
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gears.conversion.envtest.kclient.dev"},
        "spec": {"group": "conversion.envtest.kclient.dev", "scope": "Namespaced",
            "names": {"kind": "Gear", "plural": "gears", "singular": "gear"},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
                {"name": "v2", "served": true, "storage": false,
                 "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "clientConfig": {"service": {"namespace": "system", "name": "webhook-service"}},
            }}},
    });
    env.install_crds_with_conversion_webhook(&[crd], 9443)
        .await
        .expect("install");
    let stored: Value = env
        .client(Identity::Admin)
        .get()
        .group_version("apiextensions.k8s.io", "v1")
        .resource("customresourcedefinitions")
        .name("gears.conversion.envtest.kclient.dev")
        .send()
        .await
        .expect("read the CRD back");
    let webhook = &stored["spec"]["conversion"]["webhook"];
    assert_eq!(
        webhook["clientConfig"]["url"],
        "https://127.0.0.1:9443/convert"
    );
    assert!(webhook["clientConfig"].get("service").is_none());
    let ca = std::fs::read(env.webhook_serving().unwrap().ca_file).unwrap();
    let ca_bundle: ByteString =
        serde_json::from_value(webhook["clientConfig"]["caBundle"].clone()).unwrap();
    assert_eq!(&*ca_bundle.0, &*ca);
    assert_eq!(webhook["conversionReviewVersions"], json!(["v1"]));

    let nothing = env
        .install_crds_yaml_with_conversion_webhook("apiVersion: v1\nkind: Service\n", 9443)
        .await
        .expect_err("a Service alone");
    assert_eq!(
        nothing.to_string(),
        "not a CustomResourceDefinition: no document of the text is one"
    );
}

#[tokio::test]
async fn invalid_crds_are_refused_with_a_reason() {
    let env = own_env().await;
    let not_a_crd = env
        .install_crd(&json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}))
        .await
        .expect_err("a ConfigMap is not a CRD");
    assert!(
        matches!(not_a_crd, TestEnvError::InvalidCrd(_)),
        "{not_a_crd}"
    );
    let empty = env
        .install_crds_yaml("---\n")
        .await
        .expect_err("no document");
    assert!(matches!(empty, TestEnvError::InvalidCrd(_)), "{empty}");
    // The name must be <plural>.<group>: the apiserver says so.
    let misnamed = env
        .install_crd(&json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "wrong.envtest.kclient.dev"},
            "spec": {"group": "envtest.kclient.dev", "scope": "Namespaced",
                "names": {"kind": "Thing", "plural": "things"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]},
        }))
        .await
        .expect_err("the name does not match the spec");
    match &misnamed {
        TestEnvError::Api { source, .. } => assert_eq!(source.code(), Some(422), "{misnamed}"),
        other => panic!("expected the apiserver's 422, got {other}"),
    }
}

#[tokio::test]
async fn namespaces_isolate_tests() {
    let env = own_env().await;
    let (a, b) = (env.namespace().await, env.namespace().await);
    assert_ne!(a.name(), b.name());
    let client = env.client(Identity::Admin);
    for ns in [&a, &b] {
        let _: Value = client
            .post()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .json(&json!({"metadata": {"name": "same-name"}, "data": {"ns": ns.name()}}))
            .send()
            .await
            .expect("the same name in two namespaces");
    }
    for ns in [&a, &b] {
        let list: Value = client
            .get()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("configmaps")
            .param("fieldSelector", "metadata.name=same-name")
            .send()
            .await
            .unwrap();
        let items = list["items"].as_array().unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0]["data"]["ns"], ns.name());
    }
    let name = a.name().to_string();
    drop(a);
    match client
        .get()
        .group_version("", "v1")
        .resource("namespaces")
        .name(&name)
        .send::<Value>()
        .await
    {
        Ok(ns) => assert!(
            ns["metadata"]["deletionTimestamp"].is_string(),
            "a dropped namespace is being deleted: {ns}"
        ),
        Err(e) => assert!(e.is_not_found(), "{e}"),
    }
}

#[tokio::test]
async fn an_independent_start_stops_and_removes_its_data() {
    // With CRDs from a directory, as envtest's CRDDirectoryPaths.
    let crds = empty_cache("crd-dir");
    std::fs::create_dir_all(&crds).unwrap();
    let crd = |plural: &str, kind: &str| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.dir.envtest.kclient.dev")},
            "spec": {"group": "dir.envtest.kclient.dev", "scope": "Namespaced",
                "names": {"kind": kind, "plural": plural},
                "versions": [{"name": "v1", "served": true, "storage": true, "schema":
                    {"openAPIV3Schema": {"type": "object",
                        "x-kubernetes-preserve-unknown-fields": true}}}]}})
    };
    std::fs::write(crds.join("a.json"), crd("alphas", "Alpha").to_string()).unwrap();
    std::fs::write(
        crds.join("b.yaml"),
        serde_yaml_ng::to_string(&crd("betas", "Beta")).unwrap(),
    )
    .unwrap();
    std::fs::write(crds.join("notes.txt"), "not a manifest").unwrap();
    let env = TestEnv::builder()
        .crd_path(&crds)
        .start()
        .await
        .unwrap_or_else(|e| panic!("starting a second own apiserver: {e}"));
    std::fs::remove_dir_all(&crds).unwrap();
    let discovery: Value = serde_json::from_slice(
        &env.client(Identity::Admin)
            .get_raw("/apis/dir.envtest.kclient.dev/v1")
            .await
            .unwrap(),
    )
    .unwrap();
    let mut served: Vec<&str> = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    served.sort();
    assert_eq!(served, ["alphas", "betas"]);
    let report = env.start_report().unwrap().clone();
    eprintln!(
        "independent apiserver: {:?}, ready in {:?}",
        report.binary_source, report.ready_in
    );
    let data_dir = env.data_dir().to_path_buf();
    let log = env.server_log().unwrap().to_path_buf();
    assert!(data_dir.join("admin.kubeconfig").is_file());
    env.client(Identity::Admin)
        .get_raw("/readyz")
        .await
        .unwrap();
    let client = env.client(Identity::Admin);
    let probe = env.clone();
    let stopped = std::time::Instant::now();
    env.stop().await;
    eprintln!("independent apiserver: stopped in {:?}", stopped.elapsed());
    assert!(!probe.is_running());
    assert!(!data_dir.exists(), "{} is removed", data_dir.display());
    assert!(!log.exists(), "{} is removed", log.display());
    let err = client
        .get_raw("/readyz")
        .await
        .expect_err("nothing answers");
    assert!(
        err.code().is_none(),
        "a transport error, not a response: {err}"
    );
}

#[tokio::test]
async fn a_kept_data_dir_restarts_the_same_cluster() {
    let dir = std::env::temp_dir().join(format!("kclient-testenv-kept-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // A free port, asked for explicitly.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let first = TestEnv::builder()
        .data_dir(&dir)
        .port(port)
        .start()
        .await
        .unwrap();
    assert_eq!(
        first
            .client(Identity::Admin)
            .base_url()
            .trim_end_matches('/'),
        format!("https://127.0.0.1:{port}")
    );
    let ns = first.namespace().await;
    let _: Value = first
        .client(Identity::Admin)
        .post()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("configmaps")
        .json(&json!({"metadata": {"name": "survivor"}}))
        .send()
        .await
        .unwrap();
    let name = ns.name().to_string();
    std::mem::forget(ns); // the server stops before it could be deleted
    first.stop().await;
    assert!(
        dir.join("admin.kubeconfig").is_file(),
        "a given data dir is kept"
    );

    let second = TestEnv::builder().data_dir(&dir).start().await.unwrap();
    let survivor: Value = second
        .client(Identity::Admin)
        .get()
        .group_version("", "v1")
        .namespace(&name)
        .resource("configmaps")
        .name("survivor")
        .send()
        .await
        .expect("the object survives the restart");
    assert_eq!(survivor["metadata"]["name"], "survivor");
    second.stop().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn existing_cluster_mode_uses_the_kubeconfig() {
    let kubeconfig = workspace_kubeconfig();
    let env = TestEnv::builder()
        .use_existing_cluster(true)
        .kubeconfig(&kubeconfig)
        .start()
        .await
        .expect("the workspace's testenv through its admin kubeconfig");
    assert!(env.start_report().is_none());
    assert!(!env.is_running(), "nothing was started");
    assert_eq!(env.kubeconfig_path(Identity::Admin), kubeconfig);
    let ns = env.namespace().await;
    let workspace = TestEnv::connect().await;
    assert_eq!(
        env.client(Identity::Admin).base_url(),
        workspace.client(Identity::Admin).base_url()
    );
    let seen: Value = workspace
        .client(Identity::Admin)
        .get()
        .group_version("", "v1")
        .resource("namespaces")
        .name(ns.name())
        .send()
        .await
        .expect("the namespace exists in the existing cluster");
    assert_eq!(seen["metadata"]["labels"]["kclient.dev/test"], "true");
    let api: Api<Gadget> = Api::namespaced(env.client(Identity::Admin), ns.name());
    let err = api
        .list(&ListOptions::default())
        .await
        .expect_err("the Gadget CRD exists only in this binary's own server");
    assert!(err.is_not_found(), "{err}");
    // A webhook served by the test needs the local API server: said, not a panic.
    let err = env
        .webhook_serving()
        .expect_err("an existing cluster has no testenv PKI");
    assert!(
        matches!(err, kclient_testenv::TestEnvError::ExistingCluster { .. }),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("webhooks served by the test need the local API server")
    );
    // stop() never stops a cluster it did not start.
    env.stop().await;
    workspace
        .client(Identity::Admin)
        .get_raw("/readyz")
        .await
        .unwrap();
}

#[tokio::test]
async fn existing_cluster_errors_name_the_kubeconfig() {
    let err = TestEnv::builder()
        .use_existing_cluster(true)
        .kubeconfig("/nonexistent/kubeconfig")
        .start()
        .await
        .expect_err("no such kubeconfig");
    let text = err.to_string();
    assert!(
        matches!(err, TestEnvError::ExistingCluster { .. }),
        "{text}"
    );
    assert!(text.contains("/nonexistent/kubeconfig"), "{text}");
    assert!(text.contains("KUBECONFIG"), "{text}");
}

#[tokio::test]
async fn a_missing_binary_is_a_clear_error() {
    let err = TestEnv::builder()
        .binary("/nonexistent/testenv")
        .start()
        .await
        .expect_err("no such binary");
    let text = err.to_string();
    assert!(matches!(err, TestEnvError::BinaryNotFound { .. }), "{text}");
    assert!(text.contains("/nonexistent/testenv"), "{text}");
    assert!(text.contains("TestEnvBuilder::binary"), "{text}");
}

#[tokio::test]
async fn a_port_in_use_is_a_clear_error() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let err = TestEnv::builder()
        .port(port)
        .start()
        .await
        .expect_err("the port is taken");
    assert!(
        matches!(err, TestEnvError::PortInUse { port: p } if p == port),
        "{err}"
    );
    assert!(err.to_string().contains(&port.to_string()));
}

#[tokio::test]
async fn a_missing_crd_path_fails_the_start() {
    // An existing cluster, so that nothing is started for this error.
    let err = TestEnv::builder()
        .use_existing_cluster(true)
        .kubeconfig(workspace_kubeconfig())
        .crd_path("/nonexistent/crds")
        .start()
        .await
        .expect_err("no such path");
    let text = err.to_string();
    assert!(matches!(err, TestEnvError::Io { .. }), "{text}");
    assert!(text.contains("/nonexistent/crds"), "{text}");
}

#[tokio::test]
async fn a_server_not_ready_in_time_is_stopped_and_reported() {
    use std::os::unix::fs::PermissionsExt;
    // A stand-in server that logs a line and never gets ready (it ends with its stdin).
    let dir = empty_cache("never-ready");
    std::fs::create_dir_all(&dir).unwrap();
    let binary = dir.join("never-ready");
    std::fs::write(&binary, "#!/bin/sh\necho still starting\ncat >/dev/null\n").unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = TestEnv::builder()
        .binary(&binary)
        .start_timeout(std::time::Duration::from_secs(1))
        .start()
        .await
        .expect_err("never ready");
    let text = err.to_string();
    assert!(matches!(err, TestEnvError::NotReady { .. }), "{text}");
    assert!(text.contains("start_timeout"), "{text}");
    assert!(text.contains("still starting"), "the log tail: {text}");
    let TestEnvError::NotReady { log, .. } = err else {
        unreachable!()
    };
    std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a_binary_that_exits_reports_its_output() {
    // `false` exits at once with status 1 whatever its arguments.
    let err = TestEnv::builder()
        .binary("/bin/false")
        .start()
        .await
        .expect_err("the server exits");
    let text = err.to_string();
    assert!(text.contains("exit status: 1"), "{text}");
    let TestEnvError::Exited { log, .. } = err else {
        panic!("expected Exited, got {text}");
    };
    // A failed start keeps its temporary data directory, with the log, for inspection.
    assert!(log.is_file(), "{} is kept", log.display());
    std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
}

/// Set in the child process of [`a_binary_that_cannot_run_leaves_no_temporary_directory`]:
/// the binary it starts.
const SPAWN_CHILD_BINARY: &str = "KCLIENT_TESTENV_IT_SPAWN_CHILD_BINARY";

/// A start whose binary cannot even be run (not executable, or for another machine) is an
/// error naming it, and takes its temporary data directory along: it would hold nothing but an
/// empty log the error does not name, and every failed run would leave one behind.
#[tokio::test]
async fn a_binary_that_cannot_run_leaves_no_temporary_directory() {
    if let Some(binary) = std::env::var_os(SPAWN_CHILD_BINARY) {
        // The child process, whose temporary directory is the parent's to inspect.
        let err = TestEnv::builder()
            .binary(PathBuf::from(&binary))
            .start()
            .await
            .expect_err("the binary cannot be run");
        let text = err.to_string();
        assert!(matches!(err, TestEnvError::Io { .. }), "{text}");
        assert!(text.contains(&*binary.to_string_lossy()), "{text}");
        return;
    }
    let dir = empty_cache("cannot-run");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // Not executable.
    let binary = dir.join("testenv");
    std::fs::write(&binary, "not a program").unwrap();
    let output =
        crate::child_test("envtest::a_binary_that_cannot_run_leaves_no_temporary_directory")
            .env(SPAWN_CHILD_BINARY, &binary)
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
    assert!(
        output.status.success(),
        "the test process failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let left: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An empty cache directory of this test's own, so that a build is attempted.
fn empty_cache(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kclient-testenv-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

#[tokio::test]
async fn no_go_toolchain_is_a_clear_error() {
    let cache = empty_cache("no-go");
    let err = TestEnv::builder()
        .cache_dir(&cache)
        .go("/nonexistent/go")
        .start()
        .await
        .expect_err("no Go to build with");
    let text = err.to_string();
    assert!(matches!(err, TestEnvError::GoNotFound { .. }), "{text}");
    assert!(text.contains("https://go.dev/dl"), "{text}");
    assert!(text.contains("KCLIENT_TESTENV_BINARY"), "{text}");
    std::fs::remove_dir_all(&cache).unwrap();
}

#[tokio::test]
async fn a_failed_build_is_a_clear_error() {
    // `false` stands in for a Go toolchain whose build fails.
    let cache = empty_cache("failed-build");
    let err = TestEnv::builder()
        .cache_dir(&cache)
        .go("/bin/false")
        .start()
        .await
        .expect_err("the build fails");
    let text = err.to_string();
    let TestEnvError::BuildFailed { dir, .. } = &err else {
        panic!("expected BuildFailed, got {text}");
    };
    assert!(dir.join("main.go").is_file(), "the sources are written out");
    assert!(text.contains("/bin/false build -trimpath"), "{text}");
    assert!(
        !kclient_testenv::cached_binary_path(&cache).exists(),
        "no binary is cached"
    );
    std::fs::remove_dir_all(&cache).unwrap();
}

/// Set in the child processes of
/// [`parallel_test_processes_share_one_build`]: the cache directory they build into.
const BUILD_CHILD_CACHE: &str = "KCLIENT_TESTENV_IT_BUILD_CHILD_CACHE";
/// ... and the stand-in Go command they build with.
const BUILD_CHILD_GO: &str = "KCLIENT_TESTENV_IT_BUILD_CHILD_GO";

/// Test binaries run in parallel processes (cargo-nextest runs each test in its own process,
/// and two projects' suites may run at once on a CI machine) and share the binary cache: with
/// an empty cache, only one of them may build (a real build takes minutes and gigabytes of
/// memory) and none may rewrite the sources another one is compiling; the others wait for that
/// build and take its binary from the cache.
#[tokio::test]
async fn parallel_test_processes_share_one_build() {
    use std::os::unix::fs::PermissionsExt;
    if let (Some(cache), Some(go)) = (
        std::env::var_os(BUILD_CHILD_CACHE),
        std::env::var_os(BUILD_CHILD_GO),
    ) {
        // A child process: start an environment with an empty cache, as a test would. The
        // stand-in binary exits at once, so the start fails after the build.
        let err = TestEnv::builder()
            .cache_dir(PathBuf::from(cache))
            .go(PathBuf::from(go))
            .start()
            .await
            .expect_err("the stand-in server exits");
        let TestEnvError::Exited { log, .. } = &err else {
            panic!("expected the built stand-in to run and exit, got {err}");
        };
        std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
        return;
    }
    let dir = empty_cache("parallel-build");
    let cache = dir.join("cache");
    std::fs::create_dir_all(&dir).unwrap();
    let runs = dir.join("go-runs");
    // A stand-in Go that takes a second, fails if the sources change while it "compiles", and
    // writes a server that exits at once.
    let go = dir.join("go");
    std::fs::write(
        &go,
        format!(
            "#!/bin/sh\n\
             echo run >> '{runs}'\n\
             before=$(cat go.mod main.go | cksum)\n\
             sleep 1\n\
             [ \"$before\" = \"$(cat go.mod main.go | cksum)\" ] || {{ echo sources changed >&2; exit 1; }}\n\
             while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n\
             printf '#!/bin/sh\\nexit 3\\n' > \"$out\" && chmod +x \"$out\"\n",
            runs = runs.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&go, std::fs::Permissions::from_mode(0o755)).unwrap();
    let children: Vec<_> = (0..3)
        .map(|_| {
            crate::child_test("envtest::parallel_test_processes_share_one_build")
                .env(BUILD_CHILD_CACHE, &cache)
                .env(BUILD_CHILD_GO, &go)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "a test process failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let builds = std::fs::read_to_string(&runs).unwrap().lines().count();
    assert_eq!(
        builds, 1,
        "three parallel test processes ran `go build` {builds} times"
    );
    assert!(kclient_testenv::cached_binary_path(&cache).is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_script_and_the_crate_share_the_cache_path() {
    let cache = std::env::temp_dir().join("kclient-testenv-cache-check");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/testenv");
    let output = std::process::Command::new("bash")
        .arg(script)
        .arg("binary-path")
        .env("KCLIENT_CACHE_DIR", &cache)
        .output()
        .expect("running scripts/testenv");
    assert!(output.status.success(), "{output:?}");
    let path = String::from_utf8(output.stdout).unwrap();
    assert_eq!(
        PathBuf::from(path.trim()),
        kclient_testenv::cached_binary_path(&cache)
    );
}

/// A second start on the data directory of a running server (two test processes given the same
/// `data_dir`, as cargo-nextest runs every test in its own process) is refused at once, naming
/// the directory, and leaves the running server alone: its state, kubeconfigs and log are not
/// rewritten under it. The binary itself refuses too (for `scripts/testenv up` on a directory a
/// test's server uses).
#[tokio::test]
async fn a_data_dir_in_use_is_refused_and_the_running_server_keeps_working() {
    let dir = std::env::temp_dir().join(format!("kclient-testenv-in-use-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let first = TestEnv::builder()
        .data_dir(&dir)
        .controllers(false)
        .start()
        .await
        .unwrap_or_else(|e| panic!("starting the first server: {e}"));
    let log = first.server_log().unwrap().to_path_buf();
    let log_before = std::fs::read_to_string(&log).unwrap();
    let kubeconfig_before =
        std::fs::read_to_string(first.kubeconfig_path(Identity::Admin)).unwrap();

    let err = TestEnv::builder()
        .data_dir(&dir)
        .controllers(false)
        .start_timeout(std::time::Duration::from_secs(30))
        .start()
        .await
        .expect_err("the data directory is in use");
    let text = err.to_string();
    assert!(
        matches!(err, TestEnvError::DataDirInUse { .. }),
        "expected DataDirInUse, got {text}"
    );
    assert!(text.contains(&dir.display().to_string()), "{text}");

    // The binary run directly, as `scripts/testenv up` runs it, refuses as well.
    let binary = first.start_report().unwrap().binary.clone();
    let output = tokio::process::Command::new(&binary)
        .arg("--data-dir")
        .arg(&dir)
        .arg("--controllers=false")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(std::time::Duration::from_secs(30), output)
        .await
        .expect("the binary refuses at once instead of waiting for the directory")
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(stderr.contains(&dir.display().to_string()), "{stderr}");

    assert_eq!(
        std::fs::read_to_string(first.kubeconfig_path(Identity::Admin)).unwrap(),
        kubeconfig_before,
        "the running server's kubeconfig is not rewritten"
    );
    first
        .client(Identity::Admin)
        .get_raw("/readyz")
        .await
        .expect("the first server's kubeconfig still reaches it");
    assert!(
        std::fs::read_to_string(&log)
            .unwrap()
            .starts_with(&log_before),
        "the running server's log is not truncated"
    );
    first.stop().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two starts on one data directory at the same time (two test processes given the same
/// `data_dir`, or two tests of one process): the first claims the directory before it writes
/// anything there, so the second fails at once with `DataDirInUse` instead of truncating the
/// first one's log and failing with `Exited` when its server finds the lock taken. A stand-in
/// server that never takes the server's lock (nor gets ready) stretches the moment between the
/// first start's spawn and its server's lock: the second start must not rely on that lock.
#[tokio::test]
async fn concurrent_starts_on_one_data_dir_leave_the_first_one_alone() {
    use std::os::unix::fs::PermissionsExt;
    let dir = empty_cache("concurrent-stand-in");
    let data_dir = dir.join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    let binary = dir.join("stand-in");
    std::fs::write(&binary, "#!/bin/sh\necho \"stand-in $$\"\ncat >/dev/null\n").unwrap();
    std::fs::set_permissions(&binary, std::fs::Permissions::from_mode(0o755)).unwrap();
    let start = || {
        TestEnv::builder()
            .binary(&binary)
            .data_dir(&data_dir)
            .start_timeout(std::time::Duration::from_secs(1))
            .start()
    };
    // Both run on this thread: the second runs once the first waits for its server.
    let (a, b) = tokio::join!(start(), start());
    let (a, b) = (a.expect_err("never ready"), b.expect_err("never ready"));
    let (first, second) = match (&a, &b) {
        (TestEnvError::DataDirInUse { .. }, _) => (&b, &a),
        _ => (&a, &b),
    };
    assert!(
        matches!(second, TestEnvError::DataDirInUse { .. }),
        "expected one DataDirInUse, got {a}\n\nand {b}"
    );
    assert!(
        second.to_string().contains(&data_dir.display().to_string()),
        "{second}"
    );
    let TestEnvError::NotReady { log, .. } = first else {
        panic!("expected the first start to time out, got {first}");
    };
    let log = std::fs::read_to_string(log).unwrap();
    assert_eq!(
        log.lines().filter(|l| l.starts_with("stand-in ")).count(),
        1,
        "only the first start's server wrote its log: {log}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The same with the real server: of two starts on one data directory at the same time, one
/// is ready and the other fails with `DataDirInUse`, and the running server's log is whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_real_starts_on_one_data_dir_start_one_server() {
    let dir = empty_cache("concurrent-real");
    let start = || TestEnv::builder().data_dir(&dir).controllers(false).start();
    let (a, b) = tokio::join!(start(), start());
    let (winner, err) = match (a, b) {
        (Ok(env), Err(err)) | (Err(err), Ok(env)) => (env, err),
        (Ok(_), Ok(_)) => panic!("both started"),
        (Err(a), Err(b)) => panic!("both failed: {a}\n\n{b}"),
    };
    assert!(
        matches!(err, TestEnvError::DataDirInUse { .. }),
        "expected DataDirInUse, got {err}"
    );
    winner
        .client(Identity::Admin)
        .get_raw("/readyz")
        .await
        .expect("the started server answers");
    let log = std::fs::read_to_string(winner.server_log().unwrap()).unwrap();
    assert!(
        log.lines().any(|l| l.starts_with("READY ")),
        "the running server's log is whole: {log}"
    );
    winner.stop().await;
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Set in the child process of
/// [`a_test_process_killed_while_its_server_starts_leaves_no_temporary_directory`].
const KILLED_CHILD: &str = "KCLIENT_TESTENV_IT_KILLED_CHILD";

/// Whether a running process has `needle` in its command line.
fn a_process_mentions(needle: &str) -> bool {
    std::fs::read_dir("/proc").unwrap().any(|entry| {
        let Ok(entry) = entry else { return false };
        std::fs::read(entry.path().join("cmdline"))
            .map(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
            .unwrap_or(false)
    })
}

/// A test process that ends while its server is still starting (Ctrl-C, a harness's timeout,
/// `kill -9`) stops the server through its stdin, and the server's temporary data directory
/// (etcd's preallocated files: tens of MB) goes with it, as it does after a stop once ready.
#[tokio::test]
async fn a_test_process_killed_while_its_server_starts_leaves_no_temporary_directory() {
    if std::env::var_os(KILLED_CHILD).is_some() {
        // The child: start a server; the parent kills this process before it is ready.
        let _env = TestEnv::builder().controllers(false).start().await;
        std::future::pending::<()>().await;
        return;
    }
    let dir = empty_cache("killed-start");
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = crate::child_test(
        "envtest::a_test_process_killed_while_its_server_starts_leaves_no_temporary_directory",
    )
    .env(KILLED_CHILD, "1")
    .env("TMPDIR", &tmp)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    // Once the server has written its state, it is past its flags and starting etcd.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let data_dir = loop {
        let started = std::fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|path| path.join("state.json").is_file());
        if let Some(path) = started {
            break path;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the child's server did not start"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    };
    let log = std::fs::read_to_string(data_dir.join("testenv.log")).unwrap_or_default();
    assert!(
        !log.lines().any(|line| line.starts_with("READY ")),
        "the server was ready before the child could be killed"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    // The server notices the end of its stdin and exits.
    let needle = data_dir.display().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    while a_process_mentions(&needle) {
        assert!(
            std::time::Instant::now() < deadline,
            "the server of the killed test process is still running"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let left: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A real server that is not ready within the start timeout is stopped, and its temporary data
/// directory is kept with the log the error names.
#[tokio::test]
async fn a_real_server_not_ready_in_time_keeps_its_log() {
    let err = TestEnv::builder()
        .controllers(false)
        .start_timeout(std::time::Duration::from_millis(1))
        .start()
        .await
        .expect_err("not ready within a millisecond");
    let text = err.to_string();
    let TestEnvError::NotReady { log, .. } = err else {
        panic!("expected NotReady, got {text}");
    };
    assert!(log.is_file(), "{} is kept: {text}", log.display());
    std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
}

/// `scripts/testenv` takes the process of its pid file for its server only if it is one: after
/// a crash and a restart of the machine or container (or plain pid reuse) that pid can belong
/// to any process, which `status` and `up` must not take for the server and `down` must not
/// signal.
#[test]
fn the_script_ignores_a_pid_file_naming_another_process() {
    let dir =
        std::env::temp_dir().join(format!("kclient-testenv-stale-pid-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut other = std::process::Command::new("sleep")
        .arg("300")
        .spawn()
        .unwrap();
    std::fs::write(dir.join("testenv.pid"), format!("{}\n", other.id())).unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/testenv");
    let run = |command: &str| {
        std::process::Command::new("bash")
            .arg(script)
            .arg(command)
            .env("KCLIENT_TESTENV_DIR", &dir)
            .output()
            .expect("running scripts/testenv")
    };
    let status = run("status");
    let text = String::from_utf8_lossy(&status.stderr);
    assert!(!status.status.success(), "{text}");
    assert!(text.contains("not running"), "{text}");
    let down = run("down");
    let text = String::from_utf8_lossy(&down.stderr);
    assert!(text.contains("not running"), "{text}");
    assert!(
        other.try_wait().unwrap().is_none(),
        "`scripts/testenv down` signalled a process that is not its server: {text}"
    );
    assert!(!dir.join("testenv.pid").exists(), "the stale pid file goes");
    other.kill().unwrap();
    other.wait().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two `scripts/testenv up` at once on one directory (two `scripts/test` runs started
/// together) end with one server, which the pid file names and `down` stops; neither start
/// fails, and neither takes the other's pid file or log.
#[test]
fn concurrent_script_ups_start_one_server() {
    let dir = std::env::temp_dir().join(format!(
        "kclient-testenv-script-race-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/testenv");
    let command = |what: &str| {
        let mut command = std::process::Command::new("bash");
        command
            .arg(script)
            .arg(what)
            .env("KCLIENT_TESTENV_DIR", &dir)
            .env("TESTENV_NODES", "0")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        command
    };
    let ups: Vec<_> = (0..2).map(|_| command("up").spawn().unwrap()).collect();
    let outputs: Vec<_> = ups
        .into_iter()
        .map(|up| up.wait_with_output().unwrap())
        .collect();
    let status = command("status").output().unwrap();
    let pid = std::fs::read_to_string(dir.join("testenv.pid")).unwrap_or_default();
    let servers = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
        .filter(|cmdline| {
            String::from_utf8_lossy(cmdline).contains(&format!("{}/data", dir.display()))
        })
        .count();
    let down = command("down").output().unwrap();
    let left = a_process_mentions(&format!("{}/data", dir.display()));
    let _ = std::fs::remove_dir_all(&dir);
    for output in &outputs {
        assert!(
            output.status.success(),
            "an up failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    assert!(
        status.status.success(),
        "status after both ups: {}",
        String::from_utf8_lossy(&status.stderr)
    );
    assert!(!pid.trim().is_empty(), "the pid file names the server");
    assert_eq!(servers, 1, "one server runs");
    assert!(down.status.success());
    assert!(!left, "down stopped the server");
}

/// Set in the child process of [`a_port_taken_between_its_pick_and_its_use_is_replaced`]:
/// it starts a server that runs the server's test hook taking the ports it picked.
const TAKE_PORTS_CHILD: &str = "KCLIENT_TESTENV_IT_TAKE_PORTS_CHILD";

/// The server's test hook that binds every port the server picked, between the pick and the
/// use, as another process could (parallel servers picking ports at once, an outgoing
/// connection given one as its ephemeral port).
const TAKE_PICKED_PORTS: &str = "KCLIENT_TESTENV_TEST_TAKE_PICKED_PORTS";

/// A server's free ports may be taken by another process between their pick and their use
/// (parallel test processes each starting a server): the server still starts. It holds the
/// ports it can be handed a listener for (the apiserver's and the kubelet's) from their pick
/// on, and starts etcd again on fresh ports when its ports were taken.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_port_taken_between_its_pick_and_its_use_is_replaced() {
    if std::env::var_os(TAKE_PORTS_CHILD).is_some() {
        // The child, whose server (it inherits the environment) runs the hook.
        let env = TestEnv::builder()
            .start()
            .await
            .unwrap_or_else(|e| panic!("starting with the picked ports taken: {e}"));
        env.client(Identity::Admin)
            .get_raw("/readyz")
            .await
            .expect("the server answers");
        let log = std::fs::read_to_string(env.server_log().unwrap()).unwrap();
        for port in ["etcd client", "etcd peer"] {
            assert!(
                log.contains(&format!("test hook: took the {port} port ")),
                "the hook took the {port} port: {log}"
            );
        }
        for port in ["apiserver", "kubelet"] {
            assert!(
                log.contains(&format!("test hook: could not take the {port} port ")),
                "the {port} port is held from its pick: {log}"
            );
        }
        env.stop().await;
        return;
    }
    let output =
        crate::child_test("envtest::a_port_taken_between_its_pick_and_its_use_is_replaced")
            .env(TAKE_PORTS_CHILD, "1")
            .env(TAKE_PICKED_PORTS, "1")
            .output()
            .unwrap();
    assert!(
        output.status.success(),
        "the test process failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `scripts/testenv up` runs the binary directly. On a data directory that a start of this
/// crate has claimed (`testenv.start.lock`) but whose server does not hold `testenv.lock` yet,
/// the binary refuses at once, naming the directory and the claiming process, rather than take
/// the directory from under that start (whose own server then failed with `Exited`).
#[tokio::test]
async fn the_binary_run_directly_refuses_a_data_dir_a_start_has_claimed() {
    use std::io::Write as _;
    use tokio::io::AsyncBufReadExt as _;
    let binary = own_env().await.start_report().unwrap().binary.clone();
    let dir = empty_cache("claimed");
    let data_dir = dir.join("data");
    std::fs::create_dir_all(&data_dir).unwrap();
    // A start's claim, as `TestEnvBuilder::start` holds it until its server is ready.
    let mut claim = std::fs::File::create(data_dir.join("testenv.start.lock")).unwrap();
    claim.lock().unwrap();
    writeln!(claim, "{}", std::process::id()).unwrap();
    let stderr = dir.join("stderr");
    let mut child = tokio::process::Command::new(&binary)
        .arg("--data-dir")
        .arg(&data_dir)
        .arg("--controllers=false")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    // Until it exits (the end of its output), or says it is ready.
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        assert!(
            !line.starts_with("READY "),
            "the binary started on a claimed data directory: {line}"
        );
    }
    let status = child.wait().await.unwrap();
    let stderr = std::fs::read_to_string(&stderr).unwrap();
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("in use"), "{stderr}");
    assert!(stderr.contains(&data_dir.display().to_string()), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {}", std::process::id())),
        "{stderr}"
    );
    assert!(
        !data_dir.join("state.json").exists(),
        "the binary wrote in the claimed directory"
    );
    drop(claim);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A port free when the start checks it but taken before its server binds it (the build, of
/// minutes the first time, comes in between) is the same `PortInUse` as a port taken before,
/// not an `Exited` with the server's log. A stand-in binary stops between the check and the
/// real server until the test has taken the port.
#[tokio::test]
async fn a_port_taken_after_the_check_is_port_in_use() {
    use std::os::unix::fs::PermissionsExt;
    let binary = own_env().await.start_report().unwrap().binary.clone();
    let dir = empty_cache("port-taken-later");
    std::fs::create_dir_all(&dir).unwrap();
    let (started, taken) = (dir.join("started"), dir.join("taken"));
    let wrapper = dir.join("testenv");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\n: > '{}'\nwhile [ ! -e '{}' ]; do sleep 0.05; done\nexec '{}' \"$@\"\n",
            started.display(),
            taken.display(),
            binary.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let start = tokio::spawn(
        TestEnv::builder()
            .binary(&wrapper)
            .port(port)
            .controllers(false)
            .start(),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the stand-in did not start"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let _taken = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    std::fs::write(&taken, "").unwrap();
    let err = start.await.unwrap().expect_err("the port is taken");
    assert!(
        matches!(err, TestEnvError::PortInUse { port: p } if p == port),
        "expected PortInUse, got {err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
