//! A throwaway CustomResourceDefinition per test, created with the raw REST client (discovery
//! does not depend on the generated API types), deleted at the end of the test.

use std::time::{Duration, Instant};

use kclient_apimachinery::PatchType;
use kclient_discovery::DiscoveryClient;
use kclient_rest::Client;
use serde_json::{Value, json};

/// A CRD `widgets.<group>` of kind `Widget`, namespaced.
pub(crate) struct TestCrd {
    client: Client,
    pub(crate) group: String,
    pub(crate) plural: String,
    /// The served version whose discovery [`TestCrd::create`] waits for.
    version: String,
}

impl TestCrd {
    /// Creates the CRD in a group unique to `seed` and waits until it is Established and
    /// listed by discovery: the apiserver adds an Established CRD to its discovery documents
    /// a moment later (a mapper test failed once in CI on that window).
    pub(crate) async fn create(client: &Client, seed: &str) -> TestCrd {
        let group = format!("{seed}.discovery.kclient.dev");
        let plural = "widgets";
        let names = json!({"kind": "Widget", "listKind": "WidgetList", "plural": plural,
                           "singular": "widget", "shortNames": ["wdg"]});
        TestCrd::create_with(client, &group, names, &[("v1", true, true)]).await
    }

    /// Creates the CRD of `names` in
    /// `group`, with `versions` as `(name, served, storage)`, and waits until it is
    /// Established and its first served version is listed by discovery.
    pub(crate) async fn create_with(
        client: &Client,
        group: &str,
        names: Value,
        versions: &[(&str, bool, bool)],
    ) -> TestCrd {
        let plural = names["plural"].as_str().expect("names.plural").to_owned();
        let schema = json!({"openAPIV3Schema": {"type": "object",
            "x-kubernetes-preserve-unknown-fields": true}});
        let spec_versions: Vec<Value> = versions
            .iter()
            .map(|(name, served, storage)| {
                json!({"name": name, "served": served, "storage": storage, "schema": schema})
            })
            .collect();
        let version = versions
            .iter()
            .find(|(_, served, _)| *served)
            .map(|(name, _, _)| (*name).to_owned())
            .expect("a served version");
        let body = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.{group}")},
            "spec": {
                "group": group,
                "names": names,
                "scope": "Namespaced",
                "versions": spec_versions,
            }
        });
        let _: Value = client
            .post()
            .group_version("apiextensions.k8s.io", "v1")
            .resource("customresourcedefinitions")
            .json(&body)
            .send()
            .await
            .expect("create the CRD");
        let crd = TestCrd {
            client: client.clone(),
            group: group.to_owned(),
            plural,
            version,
        };
        crd.wait_established().await;
        crd.wait_discovered().await;
        crd
    }

    fn name(&self) -> String {
        format!("{}.{}", self.plural, self.group)
    }

    async fn wait_established(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let crd: Value = self
                .client
                .get()
                .group_version("apiextensions.k8s.io", "v1")
                .resource("customresourcedefinitions")
                .name(&self.name())
                .send()
                .await
                .expect("read the CRD");
            let established = crd["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            if established {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "CRD {} never became Established",
                self.name()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl TestCrd {
    /// Waits until a fresh discovery client lists `widgets` in the CRD's group version.
    async fn wait_discovered(&self) {
        self.wait_listed("", |_| true).await;
    }

    /// Waits until a fresh discovery client lists the resource in the CRD's group version
    /// with `short_name` among its short names. The server lists a version as soon as the
    /// spec serves it, but a short name only once the CRD's naming controller has accepted
    /// it, a moment later.
    pub(crate) async fn wait_short_name(&self, short_name: &str) {
        self.wait_listed(short_name, |r| {
            r.short_names.iter().any(|s| s == short_name)
        })
        .await;
    }

    /// Waits until a fresh discovery client lists the resource in the CRD's group version,
    /// as `check` wants it (`what` names that in the failure).
    async fn wait_listed(
        &self,
        what: &str,
        check: impl Fn(&kclient_discovery::APIResource) -> bool,
    ) {
        let discovery = DiscoveryClient::new(self.client.clone());
        let group_version = format!("{}/{}", self.group, self.version);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let last = match discovery.server_groups_and_resources().await {
                Ok(found) => {
                    let listed = found.value.resources.iter().any(|list| {
                        list.group_version == group_version
                            && list
                                .api_resources
                                .iter()
                                .any(|r| r.name == self.plural && check(r))
                    });
                    if listed {
                        return;
                    }
                    format!("{group_version} not listed {what}")
                }
                Err(e) => e.to_string(),
            };
            assert!(
                Instant::now() < deadline,
                "CRD {} not in discovery within 30 s: {last}",
                self.name()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Merge-patches the CRD with `patch`, then waits until a fresh discovery client lists
    /// the resource in `group_version` (`<group>/<version>`).
    pub(crate) async fn patch_and_wait(&self, patch: Value, version: &str) {
        let _: Value = self
            .client
            .patch(PatchType::Merge)
            .group_version("apiextensions.k8s.io", "v1")
            .resource("customresourcedefinitions")
            .name(&self.name())
            .json(&patch)
            .send()
            .await
            .expect("patch the CRD");
        let served = TestCrd {
            client: self.client.clone(),
            group: self.group.clone(),
            plural: self.plural.clone(),
            version: version.to_owned(),
        };
        served.wait_discovered().await;
    }

    /// Deletes the CRD (called at the end of the test; a `Drop` could not await on the
    /// test's runtime, whose connections the client uses).
    pub(crate) async fn delete(self) {
        let _ = self
            .client
            .delete()
            .group_version("apiextensions.k8s.io", "v1")
            .resource("customresourcedefinitions")
            .name(&self.name())
            .bytes()
            .await;
    }
}
