//! Server-side apply and the subresources of the typed client: `status` and `scale` for the
//! kinds that serve them (the generated [`HasStatus`] and [`HasScale`] impls say which), pod
//! `log`, `eviction`, `binding` and `proxy`, service `proxy`, namespace `finalize` (client-go's
//! `*_expansion.go` methods), and any other subresource by name. client-go's generated
//! subresource methods (`create_token`, `update_ephemeral_containers`, `update_resize`,
//! `update_approval`) are in `generated.rs`, on the helpers here.
//!
//! The typed subresources need the cargo features of the API groups whose types they use:
//! `scale` needs `autoscaling` (its `Scale` type), pod `log` and `binding` need `core`,
//! `eviction` needs `core` and `policy`, and service account `token` needs `core` and
//! `authentication`. `status`, `apply` and the by-name calls need none; `apply_scale` takes
//! a Scale apply configuration, so it needs `apply` too.

#[cfg(all(feature = "autoscaling", feature = "apply"))]
use kclient_api::applyconfigurations::autoscaling::v1::ScaleApplyConfiguration;
#[cfg(feature = "autoscaling")]
use kclient_api::autoscaling::v1::Scale;
#[cfg(feature = "core")]
use kclient_api::core::v1::{Binding, Namespace, Pod, Service};
#[cfg(all(feature = "core", feature = "policy"))]
use kclient_api::policy::v1::Eviction;
#[cfg(feature = "core")]
use kclient_apimachinery::Object;
use kclient_apimachinery::{
    Apply, CreateOptions, Error, GetOptions, PatchOptions, Resource, UpdateOptions,
};
#[cfg(feature = "core")]
use kclient_rest::ByteStream;
#[cfg(feature = "core")]
use kclient_rest::Request;
use kclient_rest::Verb;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::api::{Api, send_object, with_object};
#[cfg(feature = "core")]
use crate::log_options::LogOptions;
use crate::patch::Patch;

/// Kinds whose resource serves the `status` subresource (implemented by the generated code
/// for built-in kinds, and by [`custom_resource!`](crate::custom_resource) with
/// `status: true`).
pub trait HasStatus: Resource {}

/// Kinds whose resource serves the `scale` subresource. Its methods (`get_scale`,
/// `update_scale`, `patch_scale`, and `apply_scale` with the `apply` feature) read and write
/// an `autoscaling/v1` `Scale`, so they need the `autoscaling` cargo feature as well as the
/// kind's own group.
pub trait HasScale: Resource {}

/// Sets `apiVersion` and `kind` of the object `value` where it has none.
fn fill_type_meta(value: &mut serde_json::Value, api_version: &str, kind: &str) {
    if let serde_json::Value::Object(map) = value {
        map.entry("apiVersion")
            .or_insert_with(|| api_version.into());
        map.entry("kind").or_insert_with(|| kind.into());
    }
}

/// The body of an object sent to a subresource: `apiVersion`, `kind` and `metadata.name`
/// filled in when absent.
#[cfg_attr(
    not(any(feature = "autoscaling", feature = "core", feature = "policy")),
    allow(
        dead_code,
        reason = "only the typed subresources of those groups send named bodies"
    )
)]
pub(crate) fn named_body<T: Serialize + ?Sized>(
    value: &T,
    api_version: &str,
    kind: &str,
    name: &str,
) -> Result<Vec<u8>, Error> {
    let mut v = serde_json::to_value(value)
        .map_err(|e| Error::invalid_request(format!("cannot serialize the {kind}: {e}")))?;
    fill_type_meta(&mut v, api_version, kind);
    if let serde_json::Value::Object(map) = &mut v {
        let meta = map
            .entry("metadata")
            .or_insert_with(|| serde_json::Value::Object(Default::default()));
        if let serde_json::Value::Object(meta) = meta {
            let unset = meta
                .get("name")
                .and_then(|n| n.as_str())
                .is_none_or(str::is_empty);
            if unset {
                meta.insert("name".into(), name.into());
            }
        }
    }
    serde_json::to_vec(&v)
        .map_err(|e| Error::invalid_request(format!("cannot serialize the {kind}: {e}")))
}

/// An apply body: a typed object or an apply configuration, with `apiVersion` and `kind`
/// (filled from `K` when a configuration was built without its constructor), which must carry
/// a name.
fn apply_body<K: Resource, A: Apply<Kind = K> + ?Sized>(obj: &A) -> Result<Patch, Error> {
    if obj.apply_name().is_empty() {
        return Err(Error::invalid_request("obj.Name must be provided to Apply"));
    }
    let mut value = obj
        .apply_body()
        .map_err(|e| Error::invalid_request(format!("cannot serialize the {}: {e}", K::KIND)))?;
    fill_type_meta(&mut value, K::API_VERSION, K::KIND);
    Ok(Patch::Apply(value))
}

impl<K: Resource> Api<K> {
    /// Server-side apply (client-go's `Apply`): sends `obj` as the fields `opts.field_manager`
    /// owns; `opts.force` takes fields other managers own instead of failing with a
    /// Conflict. Fails before sending if `obj` has no name or `opts` no field manager.
    ///
    /// `obj` is either a whole typed object (all of whose required fields are sent, and so
    /// owned; its unset optional fields are not, not even those its plain JSON writes as
    /// `null`, as Go does) or, with `kclient-api`'s `apply` feature, its kind's apply configuration
    /// (`kclient_api::applyconfigurations`), which sends only the fields that are set:
    ///
    /// ```no_run
    /// # #[cfg(feature = "apps")]
    /// # async fn run(client: kclient_rest::Client) -> Result<(), kclient_apimachinery::Error> {
    /// use kclient_api::applyconfigurations::apps::v1::{deployment, DeploymentSpecApplyConfiguration};
    /// use kclient_api::apps::v1::Deployment;
    /// use kclient_apimachinery::PatchOptions;
    /// use kclient_clientset::Api;
    ///
    /// let deployments: Api<Deployment> = Api::namespaced(client, "default");
    /// // Owns spec.replicas only: the selector, template and everything else stay with
    /// // whoever set them.
    /// let scale = deployment("web", "default")
    ///     .with_spec(DeploymentSpecApplyConfiguration::default().with_replicas(5));
    /// let applied = deployments.apply(&scale, &PatchOptions::apply("autoscaler")).await?;
    /// assert_eq!(applied.spec.and_then(|s| s.replicas), Some(5));
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// A configuration applies only through its own kind's client:
    ///
    /// ```compile_fail
    /// use kclient_api::applyconfigurations::apps::v1::deployment;
    /// use kclient_api::core::v1::ConfigMap;
    /// use kclient_apimachinery::PatchOptions;
    ///
    /// async fn wrong(config_maps: kclient_clientset::Api<ConfigMap>) {
    ///     // error: expected `ConfigMap`, found `Deployment` (the configuration's `Kind`)
    ///     let _ = config_maps.apply(&deployment("web", "default"), &PatchOptions::apply("me")).await;
    /// }
    /// ```
    pub async fn apply<A: Apply<Kind = K> + ?Sized>(
        &self,
        obj: &A,
        opts: &PatchOptions,
    ) -> Result<K, Error> {
        let patch = apply_body(obj)?;
        self.patch(obj.apply_name(), &patch, opts).await
    }

    /// Reads a subresource of an object (`get_subresource::<Scale>("web", "scale")`).
    pub async fn get_subresource<T: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
    ) -> Result<T, Error> {
        self.request(Verb::Get)?
            .name(name)
            .subresource(subresource)
            .send()
            .await
    }

    /// POSTs `body` to a subresource of an object (eviction, binding, token, ...).
    pub async fn create_subresource<B: Serialize, T: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &CreateOptions,
    ) -> Result<T, Error> {
        let body = serde_json::to_vec(body)
            .map_err(|e| Error::invalid_request(format!("cannot serialize the body: {e}")))?;
        self.request(Verb::Post)?
            .name(name)
            .subresource(subresource)
            .params(opts.to_query())
            .body(body)
            .send()
            .await
    }

    /// PUTs `obj`, an object of this client's kind, to one of its subresources and reads the
    /// object back (the generated `update_ephemeral_containers`, `update_resize`,
    /// `update_approval`): protobuf when the client prefers it, as `update` (client-go's
    /// generated subresource updates use protobuf too).
    #[cfg_attr(
        not(any(feature = "core", feature = "certificates")),
        allow(dead_code, reason = "only methods of those groups' kinds call it")
    )]
    pub(crate) async fn update_subresource_object(
        &self,
        name: &str,
        subresource: &str,
        obj: &K,
        opts: &UpdateOptions,
    ) -> Result<K, Error> {
        let req = self
            .request(Verb::Put)?
            .name(name)
            .subresource(subresource)
            .params(opts.to_query());
        send_object(with_object(req, self.rest_client(), obj)?).await
    }

    /// POSTs `body`, an object of the kind `api_version`/`kind` with `metadata.name` filled in
    /// from `name` when unset, to a subresource and reads the same kind back (the generated
    /// `create_token`).
    #[cfg_attr(
        not(all(feature = "core", feature = "authentication")),
        allow(dead_code, reason = "only the generated create_token calls it")
    )]
    pub(crate) async fn create_subresource_named<B: Serialize, T: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        api_version: &str,
        kind: &str,
        opts: &CreateOptions,
    ) -> Result<T, Error> {
        self.request(Verb::Post)?
            .name(name)
            .subresource(subresource)
            .params(opts.to_query())
            .body(named_body(body, api_version, kind, name)?)
            .send()
            .await
    }

    /// PUTs `body` to a subresource of an object.
    pub async fn update_subresource<B: Serialize, T: DeserializeOwned>(
        &self,
        name: &str,
        subresource: &str,
        body: &B,
        opts: &UpdateOptions,
    ) -> Result<T, Error> {
        let body = serde_json::to_vec(body)
            .map_err(|e| Error::invalid_request(format!("cannot serialize the body: {e}")))?;
        self.request(Verb::Put)?
            .name(name)
            .subresource(subresource)
            .params(opts.to_query())
            .body(body)
            .send()
            .await
    }
}

impl<K: HasStatus> Api<K> {
    /// Reads an object through its `status` subresource.
    pub async fn get_status(&self, name: &str, opts: &GetOptions) -> Result<K, Error> {
        let req = self
            .request(Verb::Get)?
            .name(name)
            .subresource("status")
            .params(opts.to_query());
        send_object(req).await
    }

    /// Replaces an object's status (client-go's `UpdateStatus`); changes outside `status`
    /// are ignored by the server.
    pub async fn update_status(&self, obj: &K, opts: &UpdateOptions) -> Result<K, Error> {
        let req = self
            .request(Verb::Put)?
            .name(obj.name())
            .subresource("status")
            .params(opts.to_query());
        send_object(with_object(req, self.rest_client(), obj)?).await
    }

    /// Patches an object's status.
    pub async fn patch_status(
        &self,
        name: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<K, Error> {
        self.patch_subresource(name, "status", patch, opts).await
    }

    /// Server-side apply of the status (client-go's `ApplyStatus`): `obj` is a typed object
    /// or its kind's apply configuration (see [`Api::apply`]); only its `status` is applied,
    /// and the fields are owned by `opts.field_manager` on the `status` subresource
    /// (`extract_<kind>_status` reads them back).
    pub async fn apply_status<A: Apply<Kind = K> + ?Sized>(
        &self,
        obj: &A,
        opts: &PatchOptions,
    ) -> Result<K, Error> {
        let patch = apply_body(obj)?;
        self.patch_subresource(obj.apply_name(), "status", &patch, opts)
            .await
    }
}

#[cfg(feature = "autoscaling")]
impl<K: HasScale> Api<K> {
    /// Reads the `scale` subresource (client-go's `GetScale`).
    pub async fn get_scale(&self, name: &str, opts: &GetOptions) -> Result<Scale, Error> {
        self.request(Verb::Get)?
            .name(name)
            .subresource("scale")
            .params(opts.to_query())
            .send()
            .await
    }

    /// Replaces the `scale` subresource (client-go's `UpdateScale`).
    pub async fn update_scale(
        &self,
        name: &str,
        scale: &Scale,
        opts: &UpdateOptions,
    ) -> Result<Scale, Error> {
        self.request(Verb::Put)?
            .name(name)
            .subresource("scale")
            .params(opts.to_query())
            .body(named_body(scale, "autoscaling/v1", "Scale", name)?)
            .send()
            .await
    }

    /// Patches the `scale` subresource.
    pub async fn patch_scale(
        &self,
        name: &str,
        patch: &Patch,
        opts: &PatchOptions,
    ) -> Result<Scale, Error> {
        self.patch_subresource(name, "scale", patch, opts).await
    }

    /// Server-side apply of the `scale` subresource (client-go's `ApplyScale`): sends `scale`,
    /// an `autoscaling/v1` Scale apply configuration
    /// (`kclient_api::applyconfigurations::autoscaling::v1::scale()`, its `apiVersion` and
    /// `kind` filled in when unset), as the fields `opts.field_manager` owns on the `scale`
    /// subresource: the server records them on the object as `spec.replicas`, in an `Apply`
    /// entry with `subresource: scale`. `opts.force` takes the replicas from another manager
    /// instead of failing with a Conflict. Fails before sending if `opts` has no field
    /// manager. Needs the `apply` cargo feature (the configuration's type) as well as
    /// `autoscaling`.
    ///
    /// ```no_run
    /// # #[cfg(feature = "apps")]
    /// # async fn run(client: kclient_rest::Client) -> Result<(), kclient_apimachinery::Error> {
    /// use kclient_api::applyconfigurations::autoscaling::v1::{scale, ScaleSpecApplyConfiguration};
    /// use kclient_api::apps::v1::Deployment;
    /// use kclient_apimachinery::PatchOptions;
    /// use kclient_clientset::Api;
    ///
    /// let deployments: Api<Deployment> = Api::namespaced(client, "default");
    /// let five = scale().with_spec(ScaleSpecApplyConfiguration::default().with_replicas(5));
    /// let applied = deployments
    ///     .apply_scale("web", &five, &PatchOptions::apply("autoscaler").force(true))
    ///     .await?;
    /// assert_eq!(applied.spec.and_then(|s| s.replicas), Some(5));
    /// # Ok(())
    /// # }
    /// ```
    #[cfg(feature = "apply")]
    pub async fn apply_scale(
        &self,
        name: &str,
        scale: &ScaleApplyConfiguration,
        opts: &PatchOptions,
    ) -> Result<Scale, Error> {
        let mut value = serde_json::to_value(scale)
            .map_err(|e| Error::invalid_request(format!("cannot serialize the Scale: {e}")))?;
        fill_type_meta(&mut value, "autoscaling/v1", "Scale");
        self.patch_subresource(name, "scale", &Patch::Apply(value), opts)
            .await
    }
}

#[cfg(feature = "core")]
impl Api<Pod> {
    /// Opens the pod's log (`pods/{name}/log`) as a byte stream; with `follow` it stays open
    /// while the container runs.
    pub async fn logs(&self, name: &str, opts: &LogOptions) -> Result<ByteStream, Error> {
        self.request(Verb::Get)?
            .name(name)
            .subresource("log")
            .params(opts.to_query())
            .stream()
            .await
    }

    /// Reads the pod's log to the end (not for `follow`).
    pub async fn log_text(&self, name: &str, opts: &LogOptions) -> Result<String, Error> {
        let bytes = self
            .request(Verb::Get)?
            .name(name)
            .subresource("log")
            .params(opts.to_query())
            .bytes()
            .await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// Evicts the pod through the `eviction` subresource, honouring PodDisruptionBudgets
    /// (client-go's `EvictV1`). A budget that forbids it gives a 429 error. Needs the
    /// `policy` cargo feature (the `Eviction` type's group).
    ///
    /// The pod is `name` in this client's namespace; the eviction's `metadata.name`, when set,
    /// must be `name` too, and its `metadata.namespace` this client's, or the server refuses
    /// it (400). `clientset.policy_v1().evictions(ns).evict(&eviction)` sends the same request
    /// for the pod the eviction names (client-go's `EvictionInterface.Evict`).
    #[cfg(feature = "policy")]
    pub async fn evict(&self, name: &str, eviction: &Eviction) -> Result<(), Error> {
        crate::eviction::post_eviction(self.request(Verb::Post)?, name, eviction).await
    }

    /// Binds the pod to a node through the `binding` subresource (client-go's `Bind`), as a
    /// scheduler does.
    pub async fn bind(
        &self,
        name: &str,
        binding: &Binding,
        opts: &CreateOptions,
    ) -> Result<(), Error> {
        self.request(Verb::Post)?
            .name(name)
            .subresource("binding")
            .params(opts.to_query())
            .body(named_body(binding, "v1", "Binding", name)?)
            .bytes()
            .await
            .map(drop)
    }
}

/// client-go's `net.JoinSchemeNamePort`: the name segment of a `proxy` request,
/// `[scheme:]name[:port]`.
#[cfg(feature = "core")]
fn join_scheme_name_port(scheme: &str, name: &str, port: &str) -> String {
    if !scheme.is_empty() {
        // Three segments say which of them is the scheme.
        format!("{scheme}:{name}:{port}")
    } else if !port.is_empty() {
        format!("{name}:{port}")
    } else {
        name.to_owned()
    }
}

#[cfg(feature = "core")]
impl<K: Resource> Api<K> {
    /// A GET through the `proxy` subresource of a pod or service (client-go's `ProxyGet`).
    fn proxy_get_request(
        &self,
        scheme: &str,
        name: &str,
        port: &str,
        path: &str,
        params: &[(&str, &str)],
    ) -> Result<Request, Error> {
        if name.is_empty() {
            return Err(Error::invalid_request("resource name may not be empty"));
        }
        let mut req = self
            .request(Verb::Get)?
            .name(&join_scheme_name_port(scheme, name, port))
            .subresource("proxy")
            .suffix(path);
        for (key, value) in params {
            req = req.param(key, *value);
        }
        Ok(req)
    }
}

#[cfg(feature = "core")]
impl Api<Namespace> {
    /// Writes the namespace's `spec.finalizers` (client-go's `NamespaceInterface.Finalize`:
    /// `PUT namespaces/{name}/finalize`, a `Namespace` in and out), as the namespace
    /// controller does to remove its `kubernetes` finalizer once a terminating namespace is
    /// empty: the server writes the spec and metadata of `namespace` (its resourceVersion,
    /// when set, a precondition) and keeps the stored status. A terminating namespace left
    /// without spec and metadata finalizers is then deleted by the namespace controller.
    pub async fn finalize(
        &self,
        namespace: &Namespace,
        opts: &UpdateOptions,
    ) -> Result<Namespace, Error> {
        self.update_subresource_object(namespace.name(), "finalize", namespace, opts)
            .await
    }
}

#[cfg(feature = "core")]
impl Api<Pod> {
    /// A GET of `path` on a pod's port through the API server (client-go's
    /// `PodInterface.ProxyGet`): `GET pods/{[scheme:]name[:port]}/proxy/{path}` with `params`
    /// as the query. `scheme` (`http` or `https`) and `port` (a number or a port name) may be
    /// empty. Send the request with `bytes()` (client-go's `DoRaw`) or `stream()` (`Stream`);
    /// the answer is the pod's, passed through. Fails before sending when `name` is empty.
    pub fn proxy_get(
        &self,
        scheme: &str,
        name: &str,
        port: &str,
        path: &str,
        params: &[(&str, &str)],
    ) -> Result<Request, Error> {
        self.proxy_get_request(scheme, name, port, path, params)
    }
}

#[cfg(feature = "core")]
impl Api<Service> {
    /// A GET of `path` on a service's port through the API server (client-go's
    /// `ServiceInterface.ProxyGet`): `GET services/{[scheme:]name[:port]}/proxy/{path}` with
    /// `params` as the query; the server sends it to one of the service's endpoints. `scheme`
    /// (`http` or `https`) and `port` (a number or a port name) may be empty. Send the request
    /// with `bytes()` (client-go's `DoRaw`) or `stream()` (`Stream`). Fails before sending
    /// when `name` is empty.
    pub fn proxy_get(
        &self,
        scheme: &str,
        name: &str,
        port: &str,
        path: &str,
        params: &[(&str, &str)],
    ) -> Result<Request, Error> {
        self.proxy_get_request(scheme, name, port, path, params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn named_bodies_fill_in_identity_and_name() {
        let body = named_body(
            &serde_json::json!({"spec": {}}),
            "policy/v1",
            "Eviction",
            "web-0",
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["apiVersion"], "policy/v1");
        assert_eq!(v["kind"], "Eviction");
        assert_eq!(v["metadata"]["name"], "web-0");
        // A name already set is kept (the server then checks it against the URL).
        let body = named_body(
            &serde_json::json!({"metadata": {"name": "x"}}),
            "v1",
            "Binding",
            "y",
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["metadata"]["name"], "x");
    }
}
