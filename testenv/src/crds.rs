//! Installing CustomResourceDefinitions into a test environment, like envtest's
//! `CRDInstallOptions`: each CRD is server-side applied (so installing the same CRD again, from
//! another test or a rerun against a kept cluster, updates it instead of failing), then awaited
//! until the apiserver reports it `Established` and discovery serves its resource in every
//! served version, since only then do clients, RESTMappers and informers find it.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::apply::apply_cluster_object;
use crate::webhooks::LocalWebhook;
use crate::{Identity, TestEnv, TestEnvError};

impl TestEnv {
    /// Installs one CustomResourceDefinition: anything that serialises to one, such as
    /// `CustomResource::crd()` of `kclient-clientset` (feature `apiextensions`), its
    /// `crd_json()`, or a `serde_json::Value`. Returns once it is Established and served.
    ///
    /// # Errors
    ///
    /// [`TestEnvError::InvalidCrd`] when it is not a `apiextensions.k8s.io/v1`
    /// CustomResourceDefinition with a name, [`TestEnvError::Api`] when the apiserver rejects it,
    /// [`TestEnvError::CrdNotReady`] when it is not ready within the builder's
    /// [`crd_install_timeout`](crate::TestEnvBuilder::crd_install_timeout) or its names are
    /// not accepted.
    pub async fn install_crd<T: Serialize + ?Sized>(&self, crd: &T) -> Result<(), TestEnvError> {
        self.install_crd_values(vec![crd_value(crd)?], None).await
    }

    /// Installs several CustomResourceDefinitions (see [`TestEnv::install_crd`]): all are
    /// applied first, then each is awaited.
    pub async fn install_crds<T: Serialize>(&self, crds: &[T]) -> Result<(), TestEnvError> {
        self.install_crd_values(crd_values(crds)?, None).await
    }

    /// Installs the CustomResourceDefinitions in `text`: JSON, or YAML with one or more
    /// documents separated by `---` (empty documents are skipped), as in a `crds/` directory
    /// of a controller project (`std::fs::read_to_string` it first).
    pub async fn install_crds_yaml(&self, text: &str) -> Result<(), TestEnvError> {
        let values = documents(text, "the text", TestEnvError::InvalidCrd)?;
        self.install_crd_values(values, None).await
    }

    /// Installs CustomResourceDefinitions as [`install_crds`](Self::install_crds) does, each
    /// conversion webhook pointed at the test's webhook server on `port` of this machine, as
    /// envtest points the CRDs it installs at its local webhook server: in a CRD whose
    /// `spec.conversion.strategy` is `Webhook`, a `service` in `webhook.clientConfig` becomes
    /// the URL `https://127.0.0.1:<port><service.path>` (the path `/convert`, envtest's and
    /// kclient-webhook's [`CONVERT_PATH`], when it has none), a `url` is kept, the `caBundle`
    /// becomes testenv's CA, and `conversionReviewVersions` is `["v1"]` when it is missing. A
    /// project's CRDs with its kustomize conversion patch applied (the `webhook_in_*.yaml`
    /// that names `webhook-service` and `/convert`) install as they are. CRDs of other
    /// strategies are installed unchanged. Serve with [`webhook_serving`](Self::webhook_serving)'s
    /// certificate.
    ///
    /// [`CONVERT_PATH`]: https://docs.rs/kclient-webhook/latest/kclient_webhook/constant.CONVERT_PATH.html
    ///
    /// # Errors
    ///
    /// As [`install_crd`](Self::install_crd), and [`TestEnvError::InvalidCrd`] for a
    /// `Webhook` strategy without a `webhook.clientConfig` that names a service or a URL;
    /// [`TestEnvError::ExistingCluster`] on an existing cluster, whose API server cannot call
    /// back into this machine.
    pub async fn install_crds_with_conversion_webhook<T: Serialize>(
        &self,
        crds: &[T],
        port: u16,
    ) -> Result<(), TestEnvError> {
        let values = crd_values(crds)?;
        let local = self.local_webhook(port)?;
        self.install_crd_values(values, Some(&local)).await
    }

    /// [`install_crds_with_conversion_webhook`](Self::install_crds_with_conversion_webhook)
    /// for the CRDs in `text`, JSON or YAML as [`install_crds_yaml`](Self::install_crds_yaml)
    /// reads it. Documents of other kinds are skipped, as
    /// [`install_webhooks_yaml`](Self::install_webhooks_yaml) skips them, so that one rendered
    /// bundle can be given to both.
    ///
    /// # Errors
    ///
    /// As [`install_crds_with_conversion_webhook`](Self::install_crds_with_conversion_webhook),
    /// and [`TestEnvError::InvalidCrd`] when the text holds no CustomResourceDefinition.
    pub async fn install_crds_yaml_with_conversion_webhook(
        &self,
        text: &str,
        port: u16,
    ) -> Result<(), TestEnvError> {
        let mut values = documents(text, "the text", TestEnvError::InvalidCrd)?;
        values.retain(|value| value["kind"] == "CustomResourceDefinition");
        if values.is_empty() {
            return Err(TestEnvError::InvalidCrd(
                "no document of the text is one".to_owned(),
            ));
        }
        let local = self.local_webhook(port)?;
        self.install_crd_values(values, Some(&local)).await
    }

    /// Installs the CRDs in these files and directories (see
    /// [`TestEnvBuilder::crd_path`](crate::TestEnvBuilder::crd_path)).
    pub(crate) async fn install_crd_paths(&self, paths: &[PathBuf]) -> Result<(), TestEnvError> {
        let mut values = Vec::new();
        for file in crd_files(paths)? {
            let text = std::fs::read_to_string(&file).map_err(|e| {
                TestEnvError::io(format!("reading CRDs from {}", file.display()), e)
            })?;
            let source = file.display().to_string();
            values.extend(documents(&text, &source, TestEnvError::InvalidCrd)?);
        }
        if values.is_empty() {
            return Ok(());
        }
        self.install_crd_values(values, None).await
    }

    /// Applies `crds`, their conversion webhooks pointed at `local` when it is given, and
    /// waits until each is ready.
    async fn install_crd_values(
        &self,
        mut crds: Vec<Value>,
        local: Option<&LocalWebhook>,
    ) -> Result<(), TestEnvError> {
        let client = self.client(Identity::Admin);
        let mut names = Vec::new();
        for crd in &mut crds {
            let name = check_crd(crd)?;
            if let Some(local) = local {
                rewrite_conversion_webhook(crd, &name, local)?;
            }
            let what = format!("the CustomResourceDefinition {name}");
            let group_resource = ("apiextensions.k8s.io", "customresourcedefinitions");
            apply_cluster_object(&client, group_resource, &name, crd, &what).await?;
            names.push(name);
        }
        // A timeout past what the clock can represent waits without one.
        let deadline = Instant::now().checked_add(self.crd_install_timeout());
        for name in &names {
            self.wait_crd_ready(&client, name, deadline).await?;
        }
        Ok(())
    }

    /// Polls the CRD until it is Established and discovery lists its resource in every served
    /// version.
    async fn wait_crd_ready(
        &self,
        client: &kclient_rest::Client,
        name: &str,
        deadline: Option<Instant>,
    ) -> Result<(), TestEnvError> {
        let timeout = self.crd_install_timeout();
        let not_ready = |detail: String| TestEnvError::CrdNotReady {
            name: name.to_string(),
            timeout,
            detail,
        };
        loop {
            let detail = match crd_state(client, name).await? {
                CrdState::Ready => return Ok(()),
                CrdState::NamesRejected(message) => {
                    return Err(not_ready(format!("names not accepted: {message}")));
                }
                CrdState::Waiting(detail) => detail,
            };
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return Err(not_ready(detail));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// `crd` as JSON, to check and install.
fn crd_value<T: Serialize + ?Sized>(crd: &T) -> Result<Value, TestEnvError> {
    serde_json::to_value(crd)
        .map_err(|e| TestEnvError::InvalidCrd(format!("it does not serialise: {e}")))
}

fn crd_values<T: Serialize>(crds: &[T]) -> Result<Vec<Value>, TestEnvError> {
    crds.iter().map(crd_value).collect()
}

/// The non-empty YAML (or JSON) documents of `text`, from `source` (for messages); `invalid`
/// makes the error of what the documents should be (`TestEnvError::InvalidCrd`, ...).
pub(crate) fn documents(
    text: &str,
    source: &str,
    invalid: fn(String) -> TestEnvError,
) -> Result<Vec<Value>, TestEnvError> {
    let mut values = Vec::new();
    for (i, document) in serde_yaml_ng::Deserializer::from_str(text).enumerate() {
        let value = Value::deserialize(document).map_err(|e| {
            invalid(format!(
                "document {} of {source} is not valid YAML: {e}",
                i + 1
            ))
        })?;
        if !value.is_null() {
            values.push(value);
        }
    }
    if values.is_empty() {
        return Err(invalid(format!("{source} holds no document")));
    }
    Ok(values)
}

/// The files behind `paths`: a file as is, a directory's `.yaml`, `.yml` and `.json` files in
/// name order.
fn crd_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, TestEnvError> {
    let mut files = Vec::new();
    for path in paths {
        let context = || format!("reading the CRD path {}", path.display());
        let meta = std::fs::metadata(path).map_err(|e| TestEnvError::io(context(), e))?;
        if !meta.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut found = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| TestEnvError::io(context(), e))? {
            let file = entry.map_err(|e| TestEnvError::io(context(), e))?.path();
            let manifest = file
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"));
            if manifest && file.is_file() {
                found.push(file);
            }
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// Points the conversion webhook of `crd` (named `name`) at `local`, if it converts through a
/// webhook, as [`TestEnv::install_crds_with_conversion_webhook`] says.
fn rewrite_conversion_webhook(
    crd: &mut Value,
    name: &str,
    local: &LocalWebhook,
) -> Result<(), TestEnvError> {
    // Read first: indexing a `Value` mutably inserts what is missing.
    if crd["spec"]["conversion"]["strategy"] != "Webhook" {
        return Ok(());
    }
    let webhook = &mut crd["spec"]["conversion"]["webhook"];
    let Some(client_config) = local.client_config(&webhook["clientConfig"], "/convert") else {
        return Err(TestEnvError::InvalidCrd(format!(
            "the CustomResourceDefinition {name} converts through a webhook, but its \
             spec.conversion.webhook.clientConfig names neither a service nor a url"
        )));
    };
    webhook["clientConfig"] = client_config;
    if webhook["conversionReviewVersions"].is_null() {
        webhook["conversionReviewVersions"] = json!(["v1"]);
    }
    Ok(())
}

/// Checks that `crd` looks like a v1 CRD and returns its name.
fn check_crd(crd: &Value) -> Result<String, TestEnvError> {
    let kind = crd["kind"].as_str().unwrap_or_default();
    let api_version = crd["apiVersion"].as_str().unwrap_or_default();
    if kind != "CustomResourceDefinition" || api_version != "apiextensions.k8s.io/v1" {
        return Err(TestEnvError::InvalidCrd(format!(
            "apiVersion {api_version:?} and kind {kind:?}; expected apiextensions.k8s.io/v1 \
             CustomResourceDefinition"
        )));
    }
    match crd["metadata"]["name"].as_str() {
        Some(name) if !name.is_empty() => Ok(name.to_string()),
        _ => Err(TestEnvError::InvalidCrd(
            "metadata.name is missing (it must be <plural>.<group>)".to_string(),
        )),
    }
}

enum CrdState {
    Ready,
    NamesRejected(String),
    Waiting(String),
}

async fn crd_state(client: &kclient_rest::Client, name: &str) -> Result<CrdState, TestEnvError> {
    let api = |source| TestEnvError::Api {
        context: format!("reading the CustomResourceDefinition {name}"),
        source,
    };
    let crd: Value = client
        .get()
        .group_version("apiextensions.k8s.io", "v1")
        .resource("customresourcedefinitions")
        .name(name)
        .send()
        .await
        .map_err(api)?;
    let condition = |kind: &str| {
        crd["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == kind))
            .cloned()
    };
    if let Some(names) = condition("NamesAccepted")
        && names["status"] == "False"
    {
        return Ok(CrdState::NamesRejected(
            names["message"].as_str().unwrap_or_default().to_string(),
        ));
    }
    if condition("Established").is_none_or(|c| c["status"] != "True") {
        return Ok(CrdState::Waiting("not yet Established".to_string()));
    }
    let group = crd["spec"]["group"].as_str().unwrap_or_default();
    let plural = crd["spec"]["names"]["plural"].as_str().unwrap_or_default();
    let versions = crd["spec"]["versions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for version in versions.iter().filter(|v| v["served"] == true) {
        let version = version["name"].as_str().unwrap_or_default();
        let path = format!("/apis/{group}/{version}");
        let served = match client.get_raw(&path).await {
            Ok(body) => serde_json::from_slice::<Value>(&body)
                .ok()
                .and_then(|list| list["resources"].as_array().cloned())
                .is_some_and(|resources| resources.iter().any(|r| r["name"] == plural)),
            // Discovery answers 404 for a group version it does not serve yet.
            Err(e) if e.is_not_found() => false,
            Err(e) => {
                return Err(TestEnvError::Api {
                    context: format!("discovery of {path}"),
                    source: e,
                });
            }
        };
        if !served {
            return Ok(CrdState::Waiting(format!(
                "Established, but discovery of {path} does not list {plural} yet"
            )));
        }
    }
    Ok(CrdState::Ready)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::webhooks::tests::local;

    fn crd(conversion: Value) -> Value {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "conversion": conversion}})
    }

    #[test]
    fn conversion_webhooks_are_pointed_at_the_local_server() {
        // controller-gen's CRD with kustomize's webhook_in_widgets.yaml applied.
        let mut service = crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"namespace": "system", "name": "webhook-service",
                "path": "/convert"}},
            "conversionReviewVersions": ["v1", "v1beta1"]}}));
        rewrite_conversion_webhook(&mut service, "w", &local(9443)).unwrap();
        assert_eq!(
            service["spec"]["conversion"],
            json!({"strategy": "Webhook", "webhook": {
                "clientConfig": {"url": "https://127.0.0.1:9443/convert", "caBundle": "Q0E="},
                "conversionReviewVersions": ["v1", "v1beta1"]}})
        );

        // No path: envtest's /convert. No review versions: v1.
        let mut bare = crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"namespace": "system", "name": "webhook-service"}}}}));
        rewrite_conversion_webhook(&mut bare, "w", &local(1)).unwrap();
        assert_eq!(
            bare["spec"]["conversion"]["webhook"],
            json!({"clientConfig": {"url": "https://127.0.0.1:1/convert", "caBundle": "Q0E="},
                "conversionReviewVersions": ["v1"]})
        );

        // A URL is kept, with testenv's CA.
        let mut url = crd(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://127.0.0.1:5/c", "caBundle": "old"},
            "conversionReviewVersions": ["v1"]}}));
        rewrite_conversion_webhook(&mut url, "w", &local(1)).unwrap();
        assert_eq!(
            url["spec"]["conversion"]["webhook"]["clientConfig"],
            json!({"url": "https://127.0.0.1:5/c", "caBundle": "Q0E="})
        );
    }

    #[test]
    fn other_crds_are_left_as_they_are() {
        for mut unchanged in [
            crd(json!({"strategy": "None"})),
            crd(Value::Null),
            json!({"kind": "CustomResourceDefinition", "spec": "not an object"}),
            json!({"kind": "CustomResourceDefinition"}),
        ] {
            let before = unchanged.clone();
            rewrite_conversion_webhook(&mut unchanged, "w", &local(1)).unwrap();
            assert_eq!(unchanged, before);
        }
    }

    #[test]
    fn a_webhook_strategy_without_a_client_config_is_named() {
        for conversion in [
            json!({"strategy": "Webhook"}),
            json!({"strategy": "Webhook", "webhook": "x"}),
            json!({"strategy": "Webhook", "webhook": {"clientConfig": {}}}),
        ] {
            let err =
                rewrite_conversion_webhook(&mut crd(conversion), "widgets.example.com", &local(1))
                    .unwrap_err()
                    .to_string();
            assert!(
                err.contains(
                    "the CustomResourceDefinition widgets.example.com converts through a webhook, \
                     but its spec.conversion.webhook.clientConfig names neither a service nor a url"
                ),
                "{err}"
            );
        }
    }
}
