//! kclient-webhook against the local kube-apiserver (`scripts/testenv up`): the API server
//! calls a validating and a mutating webhook served by `WebhookServer` for the ConfigMaps of
//! the test's namespace (the server serves the certificate of testenv's `webhook_serving`, and
//! `install_webhooks_yaml` points controller-gen-style manifests at it); a conversion webhook
//! that `install_crds_with_conversion_webhook` points a CRD at; and the server's
//! answers to calls it cannot
//! read, which the API server does not make, sent to it directly.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kclient_api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use kclient_api::core::v1::ConfigMap;
use kclient_apimachinery::{CreateOptions, DeleteOptions, GetOptions, Object, PatchOptions};
use kclient_clientset::{Api, Patch};
use kclient_rest::{Client, Config, Verb, WarningHandler};
use kclient_testenv::{Identity, TestEnv};
use kclient_webhook::{
    AdmissionRequest, AdmissionResponse, AdmissionReview, BoundWebhookServer, CONVERT_PATH, Denial,
    Validation, WebhookServer,
};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Stops the server when the test ends, however it ends.
struct Running(CancellationToken);

impl Drop for Running {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

fn start(server: BoundWebhookServer) -> (u16, Running) {
    let port = server.local_addr().port();
    let shutdown = CancellationToken::new();
    tokio::spawn(server.run(shutdown.clone()));
    (port, Running(shutdown))
}

fn pki(env: &TestEnv, file: &str) -> std::path::PathBuf {
    env.data_dir().join("pki").join(file)
}

/// A server on a free port of 127.0.0.1 with the certificate testenv gives webhook servers
/// (issued for 127.0.0.1 by testenv's CA, which the installed configurations' `caBundle`
/// names).
fn local_server(env: &TestEnv) -> WebhookServer {
    let serving = env.webhook_serving().expect("a local testenv");
    WebhookServer::new(serving.cert_file, serving.key_file).address(([127, 0, 0, 1], 0).into())
}

/// Collects the warnings of the client's requests.
#[derive(Default)]
struct Warnings(Mutex<Vec<String>>);

impl WarningHandler for Warnings {
    fn handle_warning(&self, _code: u16, _agent: &str, text: &str) {
        self.0.lock().push(text.to_owned());
    }
}

fn has_key(cm: &ConfigMap, key: &str) -> bool {
    cm.data.as_ref().is_some_and(|d| d.get(key).is_some())
}

fn config_map(name: &str, data: Value) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": data})).unwrap()
}

/// The webhook configurations of the admission test, as controller-gen writes them (with
/// `$CONFIG` and `$NAMESPACE` for the test's names), beside the Service a rendered bundle has
/// (skipped by the install).
const MANIFESTS: &str = r#"
apiVersion: v1
kind: Service
metadata: {name: webhook-service, namespace: system}
spec:
  ports: [{port: 443, targetPort: 9443}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $CONFIG
webhooks:
- name: validate.kclient.test
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /validate--v1-configmap}
  rules:
  - {apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE, UPDATE, DELETE]}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $NAMESPACE}}
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Fail
  timeoutSeconds: 10
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $CONFIG
webhooks:
- name: mutate.kclient.test
  clientConfig:
    service: {name: webhook-service, namespace: system, path: /mutate--v1-configmap}
  rules:
  - {apiGroups: [""], apiVersions: [v1], resources: [configmaps], operations: [CREATE]}
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $NAMESPACE}}
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Fail
  timeoutSeconds: 10
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_admits_through_a_validating_and_a_mutating_webhook() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    // Served at controller-runtime's paths for ConfigMaps (`/validate--v1-configmap`,
    // `/mutate--v1-configmap`), which the manifests below name.
    let server = local_server(&env)
        .with_validator(|v: Validation<ConfigMap>| async move {
            match v {
                Validation::Create(cm) | Validation::Update { new: cm, .. } => {
                    if has_key(&cm, "forbidden") {
                        Err(Denial::new("the key forbidden is not allowed").warn("denied here"))
                    } else if has_key(&cm, "warn") {
                        Ok(vec!["careful with warn".to_owned()])
                    } else {
                        Ok(vec![])
                    }
                }
                Validation::Delete(cm) if cm.labels().get("keep").is_some() => {
                    Err(Denial::new("this ConfigMap is kept"))
                }
                Validation::Delete(_) => Ok(vec![]),
            }
        })
        .with_defaulter(|cm: ConfigMap| async move {
            let mut value = serde_json::to_value(&cm).unwrap();
            value["metadata"]["labels"]["defaulted"] = json!("yes");
            Ok(serde_json::from_value(value).unwrap())
        })
        .bind()
        .await
        .expect("the webhook server starts");
    let (port, _running) = start(server);

    // The project's manifests, as controller-gen writes them: each webhook names the Service
    // in front of the server in a cluster; testenv points it at the local server instead.
    let config_name = format!("kclient-webhook-test-{}", ns.name());
    let manifests = MANIFESTS
        .replace("$CONFIG", &config_name)
        .replace("$NAMESPACE", ns.name());
    env.install_webhooks_yaml(&manifests, port)
        .await
        .expect("installing the webhook configurations");
    let admin = env.client(Identity::Admin);
    let validating_configs: Api<ValidatingWebhookConfiguration> = Api::cluster(admin.clone());
    let mutating_configs: Api<MutatingWebhookConfiguration> = Api::cluster(admin.clone());
    let installed = validating_configs
        .get(&config_name, &GetOptions::default())
        .await
        .unwrap();
    let client_config = &installed.webhooks.as_ref().unwrap()[0].client_config;
    assert_eq!(
        client_config.url.as_deref(),
        Some(format!("https://127.0.0.1:{port}/validate--v1-configmap").as_str())
    );
    assert!(client_config.service.is_none());

    let warnings = Arc::new(Warnings::default());
    let mut config = env.config(Identity::Admin);
    config.warning_handler = Some(warnings.clone());
    let config_maps: Api<ConfigMap> =
        Api::namespaced(Client::new(config).expect("a client"), ns.name());

    // The API server picks up new webhook configurations a moment after they are created.
    let deadline = Instant::now() + Duration::from_secs(60);
    for probe in 0.. {
        let name = format!("probe-{probe}");
        match config_maps
            .create(
                &config_map(&name, json!({"k": "v"})),
                &CreateOptions::default(),
            )
            .await
        {
            Ok(cm) if cm.labels().get("defaulted").is_some() => {
                let refused = config_maps
                    .create(
                        &config_map(&format!("{name}-f"), json!({"forbidden": "x"})),
                        &CreateOptions::default(),
                    )
                    .await;
                if refused.is_err() {
                    break;
                }
            }
            Ok(_) => {}
            Err(e) => panic!("creating {name}: {e}"),
        }
        assert!(Instant::now() < deadline, "the webhooks never took effect");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Refused on create and on update, with the handler's message and warnings.
    warnings.0.lock().clear();
    let error = config_maps
        .create(
            &config_map("bad", json!({"forbidden": "x"})),
            &CreateOptions::default(),
        )
        .await
        .expect_err("a forbidden key");
    assert!(error.is_forbidden(), "{error}");
    let text = error.to_string();
    assert!(
        text.contains(r#"admission webhook "validate.kclient.test" denied the request: the key forbidden is not allowed"#),
        "{text}"
    );
    assert!(
        warnings.0.lock().iter().any(|w| w == "denied here"),
        "{:?}",
        warnings.0.lock()
    );

    // Admitted with a warning, and defaulted by the mutating webhook.
    warnings.0.lock().clear();
    let created = config_maps
        .create(
            &config_map("fine", json!({"warn": "1"})),
            &CreateOptions::default(),
        )
        .await
        .expect("admitted");
    assert_eq!(created.labels().get("defaulted"), Some("yes"));
    assert!(has_key(&created, "warn"), "the patch keeps the rest");
    assert!(
        warnings.0.lock().iter().any(|w| w == "careful with warn"),
        "{:?}",
        warnings.0.lock()
    );

    let error = config_maps
        .patch(
            "fine",
            &Patch::Merge(json!({"data": {"forbidden": "now"}})),
            &PatchOptions::default(),
        )
        .await
        .expect_err("an update adding the forbidden key");
    assert!(error.is_forbidden(), "{error}");

    // A delete is validated on the object as it is.
    config_maps
        .patch(
            "fine",
            &Patch::Merge(json!({"metadata": {"labels": {"keep": "yes"}}})),
            &PatchOptions::default(),
        )
        .await
        .expect("label it");
    let error = config_maps
        .delete("fine", &DeleteOptions::default())
        .await
        .expect_err("a kept ConfigMap");
    assert!(
        error.to_string().contains("this ConfigMap is kept"),
        "{error}"
    );
    config_maps
        .get("fine", &GetOptions::default())
        .await
        .expect("still there");

    validating_configs
        .delete(&config_name, &DeleteOptions::default())
        .await
        .expect("unregister the validating webhook");
    mutating_configs
        .delete(&config_name, &DeleteOptions::default())
        .await
        .expect("unregister the mutating webhook");
}

/// A client of the webhook server itself, trusting testenv's CA.
fn direct_client(env: &TestEnv, port: u16) -> Client {
    let mut config = Config::new(format!("https://127.0.0.1:{port}"));
    config.tls.ca_file = Some(pki(env, "ca.crt"));
    Client::new(config).expect("a client of the webhook server")
}

/// POSTs `body` to `path` with `content_type` and returns the review answered.
async fn post(client: &Client, path: &str, content_type: &str, body: Vec<u8>) -> AdmissionReview {
    let answer = client
        .verb(Verb::Post)
        .abs_path(path)
        .header("Content-Type", content_type)
        .body(body)
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("POST {path}: {e}"));
    serde_json::from_slice(&answer).expect("an AdmissionReview")
}

fn result(review: &AdmissionReview) -> (bool, i32, String) {
    let response = review.response.as_ref().expect("a response");
    let status = response.result.clone().unwrap_or_default();
    (response.allowed, status.code, status.message)
}

fn request_review(api_version: &str, uid: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "apiVersion": api_version,
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "operation": "CREATE",
            "userInfo": {"username": "someone"},
            "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
        },
    }))
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_the_server_cannot_read_are_refused_as_controller_runtime_refuses_them() {
    let env = TestEnv::connect().await;
    let server = local_server(&env)
        .handle("/allow", |request: AdmissionRequest| async move {
            assert_eq!(request.user_info.username.as_deref(), Some("someone"));
            AdmissionResponse::allowed()
        })
        .handle("/panic", |_request: AdmissionRequest| async move {
            if true {
                panic!("boom");
            }
            AdmissionResponse::allowed()
        })
        // Panics before its future exists, as a validator's function that is not async does.
        .handle("/panic-at-once", |request: AdmissionRequest| {
            let object = request.old_object.expect("boom at once");
            async move {
                let _ = object;
                AdmissionResponse::allowed()
            }
        })
        .handle_conversion("/convert", |_: Value, _: &str| -> Result<Value, String> {
            panic!("no conversion")
        })
        .bind()
        .await
        .expect("the webhook server starts");
    let (port, _running) = start(server);
    let client = direct_client(&env, port);

    // A review of either version is answered in its version, with its uid.
    for version in ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"] {
        let review = post(
            &client,
            "/allow",
            "application/json",
            request_review(version, "u-1"),
        )
        .await;
        assert_eq!(review.api_version, version);
        assert_eq!(review.kind, "AdmissionReview");
        let response = review.response.as_ref().expect("a response");
        assert_eq!(response.uid, "u-1");
        assert!(response.allowed);
    }

    let cases: [(&str, &str, Vec<u8>, i32, &str); 5] = [
        (
            "/allow",
            "text/plain",
            request_review("admission.k8s.io/v1", "u"),
            400,
            "contentType=text/plain, expected application/json",
        ),
        (
            "/allow",
            "application/json",
            Vec::new(),
            400,
            "request body is empty",
        ),
        (
            "/allow",
            "application/json",
            b"{not json".to_vec(),
            400,
            "decoding the AdmissionReview",
        ),
        (
            "/allow",
            "application/json",
            br#"{"kind":"AdmissionReview"}"#.to_vec(),
            400,
            "the AdmissionReview has no request",
        ),
        (
            "/allow",
            "application/json",
            vec![b' '; kclient_webhook::MAX_REQUEST_SIZE + 1],
            413,
            "request entity is too large",
        ),
    ];
    for (path, content_type, body, code, message) in cases {
        let review = post(&client, path, content_type, body).await;
        let (allowed, got_code, got_message) = result(&review);
        assert!(!allowed, "{message}");
        assert_eq!(got_code, code, "{got_message}");
        assert!(got_message.contains(message), "{got_message}");
    }

    // A handler that panics is answered with 500, and the server goes on.
    let review = post(
        &client,
        "/panic",
        "application/json",
        request_review("admission.k8s.io/v1", "u-2"),
    )
    .await;
    let (allowed, code, message) = result(&review);
    assert!(!allowed);
    assert_eq!((code, message.as_str()), (500, "panic: boom [recovered]"));
    assert_eq!(review.response.unwrap().uid, "u-2");
    let review = post(
        &client,
        "/panic-at-once",
        "application/json",
        request_review("admission.k8s.io/v1", "u-2b"),
    )
    .await;
    let (allowed, code, message) = result(&review);
    assert!(!allowed);
    assert_eq!(
        (code, message.as_str()),
        (500, "panic: boom at once [recovered]")
    );
    assert_eq!(review.response.unwrap().uid, "u-2b");
    let review = post(
        &client,
        "/allow",
        "application/json",
        request_review("admission.k8s.io/v1", "u-3"),
    )
    .await;
    assert!(review.response.unwrap().allowed);

    // A conversion call that is not a review with a request is a 400, as controller-runtime's,
    // also past the admission limit (a conversion carries a whole list).
    let mut large = vec![b' '; kclient_webhook::MAX_REQUEST_SIZE + 1024];
    large.extend_from_slice(b"{not json");
    for body in [
        b"{not json".to_vec(),
        br#"{"kind":"ConversionReview"}"#.to_vec(),
        large,
    ] {
        let error = client
            .verb(Verb::Post)
            .abs_path("/convert")
            .header("Content-Type", "application/json")
            .body(body)
            .bytes()
            .await
            .expect_err("not a conversion");
        assert!(error.is_bad_request(), "{error}");
    }
    // A converter that panics fails the review, and the server goes on.
    let answer = client
        .verb(Verb::Post)
        .abs_path("/convert")
        .header("Content-Type", "application/json")
        .json(
            &json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "c-1", "desiredAPIVersion": "example.com/v2",
                "objects": [{"apiVersion": "example.com/v1", "kind": "Widget"}]}}),
        )
        .bytes()
        .await
        .expect("a review back");
    let answer: kclient_webhook::ConversionReview = serde_json::from_slice(&answer).unwrap();
    let response = answer.response.expect("a response");
    assert_eq!(response.uid, "c-1");
    assert_eq!(
        (
            response.result.status.as_str(),
            response.result.message.as_str()
        ),
        ("Failure", "internal error occurred during conversion")
    );

    // A path with no handler is a 404.
    let error = client
        .verb(Verb::Post)
        .abs_path("/nowhere")
        .header("Content-Type", "application/json")
        .body(request_review("admission.k8s.io/v1", "u"))
        .bytes()
        .await
        .expect_err("no handler");
    assert!(error.is_not_found(), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rotated_certificate_is_served_without_a_restart_and_a_broken_one_is_not() {
    let env = TestEnv::connect().await;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let install = |cert_from: &str, key_from: &str| {
        std::fs::copy(pki(&env, cert_from), &cert).expect("copy the certificate");
        std::fs::copy(pki(&env, key_from), &key).expect("copy the key");
    };
    install("apiserver.crt", "apiserver.key");
    let server = WebhookServer::new(&cert, &key)
        .address(([127, 0, 0, 1], 0).into())
        .cert_check_period(Duration::from_millis(50))
        .handle("/allow", |_request: AdmissionRequest| async move {
            AdmissionResponse::allowed()
        })
        .bind()
        .await
        .expect("the webhook server starts");
    let (port, _running) = start(server);
    let call = || async {
        // A new client each time: a new connection, so a new handshake.
        direct_client(&env, port)
            .verb(Verb::Post)
            .abs_path("/allow")
            .header("Content-Type", "application/json")
            .body(request_review("admission.k8s.io/v1", "u"))
            .bytes()
            .await
    };
    call().await.expect("served with the apiserver certificate");

    // The client certificate testenv made is signed by the same CA but names no 127.0.0.1: once
    // it is served, the handshake fails verification.
    install("cert-user.crt", "cert-user.key");
    let deadline = Instant::now() + Duration::from_secs(30);
    while call().await.is_ok() {
        assert!(
            Instant::now() < deadline,
            "the new certificate was never served"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // A key that does not load is not served: the pair before stays.
    install("apiserver.crt", "apiserver.key");
    while call().await.is_err() {
        assert!(
            Instant::now() < deadline,
            "the certificate was never served again"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    std::fs::write(
        &key,
        b"-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n",
    )
    .expect("break the key");
    for _ in 0..10 {
        tokio::time::sleep(Duration::from_millis(60)).await;
        call().await.expect("still served with the pair before");
    }

    // Files that do not load are refused at the start, naming the file but not its content.
    let error = WebhookServer::new(&cert, &key)
        .address(([127, 0, 0, 1], 0).into())
        .bind()
        .await
        .expect_err("a broken key");
    assert!(error.is_tls(), "{error}");
    assert!(error.to_string().contains("tls.key"), "{error}");
    assert!(!error.to_string().contains("broken"), "{error}");
}

/// Converts Widgets between v1 (`spec.size`, a string) and v2 (`spec.replicas`, an integer).
fn convert_widget(mut object: Value, to: &str) -> Result<Value, String> {
    let spec = object["spec"].take();
    object["spec"] = if to.ends_with("/v2") {
        let size = spec["size"].as_str().unwrap_or("0");
        let replicas: i64 = size
            .parse()
            .map_err(|_| format!("size {size:?} is not a number"))?;
        json!({"replicas": replicas})
    } else {
        json!({"size": spec["replicas"].as_i64().unwrap_or(0).to_string()})
    };
    object["apiVersion"] = json!(to);
    Ok(object)
}

/// A CRD served in v1 (stored) and v2, converted by the server's `/convert`: what is written in
/// one version reads in the other, and a conversion that fails fails the read with its reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_server_converts_custom_resources_through_the_conversion_webhook() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let server = local_server(&env)
        .handle_conversion(CONVERT_PATH, convert_widget)
        .bind()
        .await
        .expect("the webhook server starts");
    let (port, _running) = start(server);
    let group = format!("{}.conversion.kclient.test", ns.name());
    let version = |name: &str, storage: bool, spec: Value| {
        json!({"name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": spec}}}}})
    };
    let crd_name = format!("widgets.{group}");
    // As controller-gen writes it with kustomize's conversion patch applied: the webhook is a
    // Service, which testenv points at the server above, with its CA.
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": crd_name},
        "spec": {
            "group": group, "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                version("v1", true, json!({"size": {"type": "string"}})),
                version("v2", false, json!({"replicas": {"type": "integer"}})),
            ],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"service": {
                    "namespace": "system", "name": "webhook-service", "path": CONVERT_PATH,
                }},
            }},
        },
    });
    // In a rendered bundle, beside the Service the CRD names (which testenv skips); JSON is
    // YAML.
    let service = json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "system", "name": "webhook-service"},
        "spec": {"ports": [{"port": 443, "targetPort": 9443}]}});
    let bundle = format!("{service}\n---\n{crd}\n");
    env.install_crds_yaml_with_conversion_webhook(&bundle, port)
        .await
        .expect("install the CRD");
    let client = env.client(Identity::Admin);
    let widgets = |v: &str| {
        client
            .get()
            .group_version(&group, v)
            .namespace(ns.name())
            .resource("widgets")
    };
    let create = |v: &str, name: &str, spec: Value| {
        let body = json!({"apiVersion": format!("{group}/{v}"), "kind": "Widget",
            "metadata": {"name": name}, "spec": spec});
        client
            .post()
            .group_version(&group, v)
            .namespace(ns.name())
            .resource("widgets")
            .json(&body)
            .send::<Value>()
    };

    create("v1", "small", json!({"size": "3"}))
        .await
        .expect("create in v1");
    let read: Value = widgets("v2")
        .name("small")
        .send()
        .await
        .expect("read in v2");
    assert_eq!(read["apiVersion"], json!(format!("{group}/v2")));
    assert_eq!(read["spec"], json!({"replicas": 3}));

    // Written in v2, stored in v1 (converted), read back in either.
    create("v2", "big", json!({"replicas": 50}))
        .await
        .expect("create in v2");
    let read: Value = widgets("v1").name("big").send().await.expect("read in v1");
    assert_eq!(read["spec"], json!({"size": "50"}));
    let list: Value = widgets("v2").send().await.expect("list in v2");
    let mut replicas: Vec<i64> = list["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|w| w["spec"]["replicas"].as_i64().expect("converted"))
        .collect();
    replicas.sort_unstable();
    assert_eq!(replicas, [3, 50]);

    // A conversion that fails fails the read, with the converter's reason.
    create("v1", "odd", json!({"size": "many"}))
        .await
        .expect("create in v1");
    let error = widgets("v2")
        .name("odd")
        .send::<Value>()
        .await
        .expect_err("no v2 form");
    assert!(
        error
            .to_string()
            .contains(r#"size \"many\" is not a number"#)
            || error.to_string().contains(r#"size "many" is not a number"#),
        "{error}"
    );

    let _: Value = client
        .delete()
        .group_version("apiextensions.k8s.io", "v1")
        .resource("customresourcedefinitions")
        .name(&crd_name)
        .send()
        .await
        .expect("remove the CRD");
}

/// A client that connects and then sends nothing (no TLS handshake), or stops inside a
/// request's headers, is disconnected after the header timeout: it holds no connection for ever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stalls_is_disconnected() {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

    let env = TestEnv::connect().await;
    let server = local_server(&env)
        .header_timeout(Duration::from_millis(300))
        .handle("/allow", |_request: AdmissionRequest| async move {
            AdmissionResponse::allowed()
        })
        .bind()
        .await
        .expect("the webhook server starts");
    let (port, _running) = start(server);

    // No handshake at all: the server closes the connection (EOF or a reset). The clock
    // starts before the connect: the server's starts once it accepts, which may come first.
    let started = Instant::now();
    let mut silent = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let mut buf = [0u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(20), silent.read(&mut buf))
        .await
        .expect("the server closes a silent connection");
    assert!(matches!(read, Ok(0) | Err(_)), "{read:?}");
    assert!(started.elapsed() >= Duration::from_millis(300));

    // A request whose headers never end, over TLS: closed too.
    let mut tls = tls_connect(&env, port).await;
    tls.write_all(b"POST /allow HTTP/1.1\r\nHost: x\r\n")
        .await
        .expect("half the headers");
    let read = tokio::time::timeout(Duration::from_secs(20), tls.read(&mut buf))
        .await
        .expect("the server closes a connection whose headers stall");
    // hyper answers a header timeout by closing (some versions first send a 408).
    match read {
        Ok(0) | Err(_) => {}
        Ok(n) => assert!(
            String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 408"),
            "{:?}",
            String::from_utf8_lossy(&buf[..n])
        ),
    }
}

/// A TLS connection to the server on `port`, trusting testenv's CA, before any request.
async fn tls_connect(
    env: &TestEnv,
    port: u16,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls::pki_types::pem::PemObject as _;
    let ca = std::fs::read(pki(env, "ca.crt")).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(&ca) {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect("127.0.0.1".try_into().unwrap(), tcp)
        .await
        .expect("the handshake")
}

/// A client that stops halfway through its request body holds no shutdown past the shutdown
/// timeout: the server closes its connection and returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_never_ends_holds_shutdown_only_until_the_timeout() {
    use tokio::io::AsyncWriteExt as _;

    let env = TestEnv::connect().await;
    let server = local_server(&env)
        .shutdown_timeout(Duration::from_millis(500))
        .handle("/allow", |_request: AdmissionRequest| async move {
            AdmissionResponse::allowed()
        })
        .bind()
        .await
        .expect("the webhook server starts");
    let port = server.local_addr().port();
    let shutdown = CancellationToken::new();
    let running = tokio::spawn(server.run(shutdown.clone()));

    let mut tls = tls_connect(&env, port).await;
    tls.write_all(
        b"POST /allow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
          Content-Length: 1000\r\n\r\n{\"kind\":",
    )
    .await
    .expect("the headers and the start of the body");
    tls.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let stopping = Instant::now();
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("run returns after the shutdown timeout, not when the call ends")
        .unwrap();
    assert!(
        stopping.elapsed() >= Duration::from_millis(400),
        "returned before the shutdown timeout: {:?}",
        stopping.elapsed()
    );
    drop(tls);
}

/// The CPU time this process has used, in clock ticks, read again from `stat` (opened before
/// the descriptors ran out): utime + stime, fields 14 and 15 of /proc/self/stat.
fn cpu_ticks(stat: &mut std::fs::File) -> u64 {
    use std::io::{Read as _, Seek as _};
    let mut text = String::new();
    stat.seek(std::io::SeekFrom::Start(0)).expect("rewind stat");
    stat.read_to_string(&mut text).expect("read stat");
    // The command name (field 2) may hold spaces: count from its closing parenthesis.
    let after = &text[text.rfind(')').expect("a command name") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

/// With no file descriptor left, accepting fails for the listener itself, again and again: the
/// server waits between tries (as Go's http.Server does) instead of spinning on a core. Runs
/// itself again under `prlimit --nofile`, since the limit is the process's.
#[test]
fn an_accept_that_fails_for_want_of_descriptors_backs_off() {
    const CHILD: &str = "KCLIENT_WEBHOOK_TEST_FD_CHILD";
    if std::env::var_os(CHILD).is_none() {
        let output = std::process::Command::new("prlimit")
            .arg("--nofile=256:256")
            .arg("--")
            .arg(std::env::current_exe().expect("the test binary"))
            .args([
                "--exact",
                "an_accept_that_fails_for_want_of_descriptors_backs_off",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .output()
            .expect("run the test again under prlimit (util-linux)");
        assert!(
            output.status.success(),
            "the child failed: {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        return;
    }
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(async {
            let env = TestEnv::connect().await;
            let server = local_server(&env)
                .handle("/allow", |_request: AdmissionRequest| async move {
                    AdmissionResponse::allowed()
                })
                .bind()
                .await
                .expect("the webhook server starts");
            let (port, _running) = start(server);
            let mut stat = std::fs::File::open("/proc/self/stat").expect("open stat");
            // Connect until no descriptor is left: the server cannot accept what waits.
            let mut held = Vec::new();
            loop {
                match tokio::net::TcpStream::connect(("127.0.0.1", port)).await {
                    Ok(conn) => held.push(conn),
                    Err(_) => break,
                }
                assert!(held.len() < 1000, "the descriptor limit did not apply");
            }
            // Let whatever the server could accept settle, then measure a second of it failing.
            tokio::time::sleep(Duration::from_millis(200)).await;
            let before = cpu_ticks(&mut stat);
            tokio::time::sleep(Duration::from_secs(1)).await;
            let used = cpu_ticks(&mut stat) - before;
            // Spinning on accept would use the whole second (about 100 ticks).
            assert!(
                used < 30,
                "{used} ticks of CPU in a second of failing accepts"
            );
            drop(held);
        });
}
