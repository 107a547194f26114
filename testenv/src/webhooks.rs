//! Admission webhooks served by the test itself, like controller-runtime envtest's
//! `WebhookInstallOptions`: a serving certificate the API server trusts
//! ([`TestEnv::webhook_serving`]), and the installation of webhook configurations
//! ([`TestEnv::install_webhooks_yaml`], [`TestEnv::install_webhooks`]) rewritten to call a
//! server on this machine; CRD conversion webhooks are rewritten alike by
//! [`TestEnv::install_crds_with_conversion_webhook`].
//!
//! A project's webhook manifests (controller-gen's `config/webhook/manifests.yaml`) name the
//! Service that fronts the webhook in a cluster. Each webhook's `clientConfig` is rewritten as
//! envtest rewrites it: a `service` becomes the URL `https://127.0.0.1:<port><service.path>`
//! (the path `/` when it has none, which envtest leaves as a Service), a `url` is kept, and the `caBundle` becomes testenv's CA in
//! both cases. The configurations are server-side applied, so installing them again (another
//! test, a rerun against a kept server) updates them.
//!
//! The API server takes up a new configuration a moment after it is stored (its webhook
//! informer), so a test's first admission requests may pass without the webhook; retry the
//! first request until the webhook answers, as `kclient-webhook`'s tests do.

use std::path::PathBuf;

use kclient_apimachinery::meta::ByteString;
use serde::Serialize;
use serde_json::{Value, json};

use crate::apply::apply_cluster_object;
use crate::crds::documents;
use crate::{Identity, TestEnv, TestEnvError};

/// Where a webhook server run by a test finds the certificate the API server trusts (envtest's
/// `LocalServingCertDir` and `LocalServingCAData`): the API server's own serving certificate,
/// issued by testenv's CA for `127.0.0.1`, `::1` and `localhost`. Give the files to the
/// server (`kclient_webhook::WebhookServer::new(serving.cert_file, serving.key_file)`) and
/// let it listen on `127.0.0.1`.
#[derive(Clone, Debug)]
pub struct WebhookServing {
    /// The certificate chain, PEM.
    pub cert_file: PathBuf,
    /// Its private key, PEM.
    pub key_file: PathBuf,
    /// testenv's CA certificate, PEM: what the webhook configurations' `caBundle` holds.
    pub ca_file: PathBuf,
}

impl TestEnv {
    /// The serving certificate for a webhook server on this machine that the API server
    /// trusts (see [`WebhookServing`]).
    ///
    /// # Errors
    ///
    /// [`TestEnvError::ExistingCluster`] on an existing cluster (`use_existing_cluster`): its
    /// API server runs elsewhere, cannot reach a server on this machine's loopback, and does
    /// not trust testenv's CA.
    pub fn webhook_serving(&self) -> Result<WebhookServing, TestEnvError> {
        let pki = self
            .data_dir_opt()
            .ok_or_else(|| TestEnvError::ExistingCluster {
                message: "webhooks served by the test need the local API server started by \
                          testenv; an existing cluster cannot call back into this machine's \
                          loopback"
                    .to_owned(),
            })?
            .join("pki");
        Ok(WebhookServing {
            cert_file: pki.join("apiserver.crt"),
            key_file: pki.join("apiserver.key"),
            ca_file: pki.join("ca.crt"),
        })
    }

    /// Installs the ValidatingWebhookConfigurations and MutatingWebhookConfigurations in
    /// `text` (JSON, or YAML with one or more documents separated by `---`, such as
    /// controller-gen's `config/webhook/manifests.yaml`), each webhook rewritten to call the
    /// test's server: a `service` reference becomes the URL
    /// `https://127.0.0.1:<port><service.path>` (path `/` when it has none), a `url` is kept,
    /// and the `caBundle` becomes testenv's CA in both cases, as envtest rewrites them, except
    /// that envtest leaves a `service` without a path alone (`service.port` plays no part:
    /// `port` is where the test's webhook server listens).
    /// Documents of other kinds are skipped, as envtest skips them. The configurations are
    /// server-side applied, so installing them again updates them. The API server takes a
    /// configuration up a moment after it is stored: retry the first request the webhook
    /// should see. CRDs in the text are skipped too: install them, their conversion webhooks
    /// pointed at the same server, with
    /// [`install_crds_yaml_with_conversion_webhook`](Self::install_crds_yaml_with_conversion_webhook),
    /// which skips the webhook configurations in turn.
    ///
    /// # Errors
    ///
    /// [`TestEnvError::InvalidWebhook`] when the text holds no webhook configuration, or one
    /// is not `admissionregistration.k8s.io/v1` or lacks a name or a list of webhooks, each
    /// with a `clientConfig` naming a service or a URL; [`TestEnvError::ExistingCluster`] as for
    /// [`webhook_serving`](Self::webhook_serving); [`TestEnvError::Io`] when testenv's CA
    /// cannot be read; [`TestEnvError::Api`] when the API server refuses a configuration.
    pub async fn install_webhooks_yaml(&self, text: &str, port: u16) -> Result<(), TestEnvError> {
        let mut values = documents(text, "the text", TestEnvError::InvalidWebhook)?;
        // Other kinds beside them (a Service, a Certificate of a rendered bundle) are skipped,
        // as envtest skips them.
        values.retain(|value| {
            matches!(
                value["kind"].as_str(),
                Some("ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration")
            )
        });
        if values.is_empty() {
            return Err(TestEnvError::InvalidWebhook(
                "the text holds no ValidatingWebhookConfiguration or MutatingWebhookConfiguration"
                    .to_owned(),
            ));
        }
        self.install_webhook_values(values, port).await
    }

    /// [`install_webhooks_yaml`](Self::install_webhooks_yaml) for configurations given as
    /// values: anything that serialises to one, such as kclient-api's
    /// `ValidatingWebhookConfiguration` or a `serde_json::Value`. Unlike the YAML form, a
    /// value of another kind is an error.
    ///
    /// # Errors
    ///
    /// As [`install_webhooks_yaml`](Self::install_webhooks_yaml).
    pub async fn install_webhooks<T: Serialize>(
        &self,
        configs: &[T],
        port: u16,
    ) -> Result<(), TestEnvError> {
        let values = configs
            .iter()
            .map(|config| {
                serde_json::to_value(config).map_err(|e| {
                    TestEnvError::InvalidWebhook(format!("it does not serialise: {e}"))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.install_webhook_values(values, port).await
    }

    async fn install_webhook_values(
        &self,
        mut configs: Vec<Value>,
        port: u16,
    ) -> Result<(), TestEnvError> {
        let local = self.local_webhook(port)?;
        let mut checked = Vec::new();
        for config in &mut configs {
            let (resource, name) = check_webhook_config(config)?;
            rewrite_client_configs(config, &name, &local)?;
            checked.push((resource, name));
        }
        let client = self.client(Identity::Admin);
        for (config, (resource, name)) in configs.iter().zip(checked) {
            let what = format!("the webhook configuration {name}");
            let group_resource = ("admissionregistration.k8s.io", resource);
            apply_cluster_object(&client, group_resource, &name, config, &what).await?;
        }
        Ok(())
    }
}

/// Checks that `config` is a v1 webhook configuration; returns its resource and name.
fn check_webhook_config(config: &Value) -> Result<(&'static str, String), TestEnvError> {
    let kind = config["kind"].as_str().unwrap_or_default();
    let api_version = config["apiVersion"].as_str().unwrap_or_default();
    let resource = match (api_version, kind) {
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration") => {
            "validatingwebhookconfigurations"
        }
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration") => {
            "mutatingwebhookconfigurations"
        }
        _ => {
            return Err(TestEnvError::InvalidWebhook(format!(
                "apiVersion {api_version:?} and kind {kind:?}; expected \
                 admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration or \
                 MutatingWebhookConfiguration"
            )));
        }
    };
    match config["metadata"]["name"].as_str() {
        Some(name) if !name.is_empty() => Ok((resource, name.to_owned())),
        _ => Err(TestEnvError::InvalidWebhook(format!(
            "a {kind} without metadata.name"
        ))),
    }
}

/// The webhook server a test runs on this machine, as the webhook configurations and CRDs
/// installed for it are rewritten to call it.
pub(crate) struct LocalWebhook {
    /// The port it listens on, at `127.0.0.1`.
    port: u16,
    /// testenv's CA, base64 as a `caBundle` field holds it.
    ca_bundle: Value,
}

impl TestEnv {
    /// The server on `port` of this machine, serving with [`webhook_serving`](Self::webhook_serving)'s
    /// certificate.
    pub(crate) fn local_webhook(&self, port: u16) -> Result<LocalWebhook, TestEnvError> {
        let serving = self.webhook_serving()?;
        let ca = std::fs::read(&serving.ca_file).map_err(|e| {
            TestEnvError::io(
                format!("reading testenv's CA {}", serving.ca_file.display()),
                e,
            )
        })?;
        // Base64, as the `caBundle` field's bytes encode.
        let ca_bundle = serde_json::to_value(ByteString(ca.into_boxed_slice()))
            .map_err(|e| TestEnvError::InvalidWebhook(format!("encoding the caBundle: {e}")))?;
        Ok(LocalWebhook { port, ca_bundle })
    }
}

impl LocalWebhook {
    /// `client_config` (a webhook's or a CRD conversion's) pointed at this server: a `service`
    /// becomes the URL `https://127.0.0.1:<port><service.path>` (`default_path` when it has
    /// none), a `url` is kept, and the `caBundle` is testenv's CA. `None` when it names
    /// neither a service nor a URL.
    pub(crate) fn client_config(&self, client_config: &Value, default_path: &str) -> Option<Value> {
        let present = |field: &str| client_config.get(field).filter(|v| !v.is_null());
        let url = match (present("service"), present("url")) {
            (Some(service), _) => {
                let path = service["path"].as_str().unwrap_or(default_path);
                let slash = if path.starts_with('/') { "" } else { "/" };
                json!(format!("https://127.0.0.1:{}{slash}{path}", self.port))
            }
            (None, Some(url)) => url.clone(),
            (None, None) => return None,
        };
        Some(json!({"url": url, "caBundle": self.ca_bundle}))
    }
}

/// Points each webhook of `config` at the local server, as the module documentation says.
fn rewrite_client_configs(
    config: &mut Value,
    name: &str,
    local: &LocalWebhook,
) -> Result<(), TestEnvError> {
    let Some(webhooks) = config["webhooks"].as_array_mut() else {
        return Err(TestEnvError::InvalidWebhook(format!(
            "{name} has no list of webhooks"
        )));
    };
    for (i, webhook) in webhooks.iter_mut().enumerate() {
        let which = || {
            let hook = webhook_name(webhook, i);
            format!("webhook {hook} of {name}")
        };
        let Some(client_config) = webhook.get("clientConfig").filter(|c| c.is_object()) else {
            return Err(TestEnvError::InvalidWebhook(format!(
                "{} has no clientConfig",
                which()
            )));
        };
        let Some(rewritten) = local.client_config(client_config, "/") else {
            return Err(TestEnvError::InvalidWebhook(format!(
                "{} has neither a service nor a url in its clientConfig",
                which()
            )));
        };
        webhook["clientConfig"] = rewritten;
    }
    Ok(())
}

fn webhook_name(webhook: &Value, index: usize) -> String {
    webhook["name"]
        .as_str()
        .map_or_else(|| format!("#{}", index + 1), str::to_owned)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn local(port: u16) -> LocalWebhook {
        LocalWebhook {
            port,
            ca_bundle: json!("Q0E="),
        }
    }

    #[test]
    fn services_become_local_urls_and_urls_stay() {
        let mut config = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "v"},
            "webhooks": [
                {"name": "a", "clientConfig": {"service": {"name": "svc", "namespace": "system", "path": "/validate-a"}}},
                {"name": "b", "clientConfig": {"service": {"name": "svc", "namespace": "system"}}},
                {"name": "c", "clientConfig": {"url": "https://127.0.0.1:1/c", "caBundle": "old"}},
                {"name": "d", "clientConfig": {"service": null, "url": "https://127.0.0.1:2/d"}},
                {"name": "e", "clientConfig": {"service": {"name": "svc", "namespace": "system", "port": 8443, "path": "e"}}},
            ],
        });
        assert_eq!(
            check_webhook_config(&config).unwrap(),
            ("validatingwebhookconfigurations", "v".to_owned())
        );
        rewrite_client_configs(&mut config, "v", &local(9443)).unwrap();
        let urls: Vec<&str> = config["webhooks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["clientConfig"]["url"].as_str().unwrap())
            .collect();
        assert_eq!(
            urls,
            [
                "https://127.0.0.1:9443/validate-a",
                "https://127.0.0.1:9443/",
                "https://127.0.0.1:1/c",
                "https://127.0.0.1:2/d",
                "https://127.0.0.1:9443/e",
            ]
        );
        for webhook in config["webhooks"].as_array().unwrap() {
            assert_eq!(webhook["clientConfig"]["caBundle"], "Q0E=");
            assert!(webhook["clientConfig"].get("service").is_none());
        }
    }

    #[test]
    fn what_is_not_a_webhook_configuration_is_named() {
        let err = check_webhook_config(&json!({"apiVersion": "v1", "kind": "ConfigMap"}))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "not a webhook configuration: apiVersion \"v1\" and kind \"ConfigMap\"; expected \
             admissionregistration.k8s.io/v1 ValidatingWebhookConfiguration or \
             MutatingWebhookConfiguration"
        );
        let mut no_client = json!({"webhooks": [{"name": "x"}]});
        let err = rewrite_client_configs(&mut no_client, "m", &local(1))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "not a webhook configuration: webhook x of m has no clientConfig"
        );
        let mut neither = json!({"webhooks": [{"clientConfig": {}}]});
        let err = rewrite_client_configs(&mut neither, "m", &local(1))
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "not a webhook configuration: webhook #1 of m has neither a service nor a url in \
             its clientConfig"
        );
    }
}
