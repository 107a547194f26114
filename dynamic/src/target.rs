//! [`Target`]: the resource (and namespace) a dynamic or metadata client reaches, with the
//! requests and verbs both clients share.

use std::time::Duration;

use kclient_apimachinery::{DeleteOptions, Error, GroupVersionResource, ListOptions};
use kclient_rest::{Client, Request, Verb};

/// A resource, optionally in a namespace, on one REST client.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub(crate) client: Client,
    pub(crate) gvr: GroupVersionResource,
    pub(crate) namespace: String,
}

impl Target {
    /// The same resource in `namespace`.
    pub(crate) fn in_namespace(&self, namespace: &str) -> Target {
        Target {
            namespace: namespace.to_owned(),
            ..self.clone()
        }
    }

    /// A request for the resource collection.
    pub(crate) fn request(&self, verb: Verb) -> Request {
        self.client
            .verb(verb)
            .group_version(&self.gvr.group, &self.gvr.version)
            .namespace(&self.namespace)
            .resource(&self.gvr.resource)
    }

    /// A request for one object (or one of its subresources); an empty name fails the
    /// request before it is sent.
    pub(crate) fn object(&self, verb: Verb, name: &str, subresource: &str) -> Request {
        self.request(verb).name(name).subresource(subresource)
    }

    /// Deletes an object (or a subresource of it).
    pub(crate) async fn delete(
        &self,
        name: &str,
        opts: &DeleteOptions,
        subresource: &str,
    ) -> Result<(), Error> {
        self.object(Verb::Delete, name, subresource)
            .body(opts.to_body())
            .bytes()
            .await
            .map(drop)
    }

    /// Deletes every object the list options select.
    pub(crate) async fn delete_collection(
        &self,
        opts: &DeleteOptions,
        list_opts: &ListOptions,
    ) -> Result<(), Error> {
        let mut req = self
            .request(Verb::Delete)
            .params(list_opts.to_query())
            .body(opts.to_body());
        if let Some(t) = timeout_of(list_opts) {
            req = req.timeout(t);
        }
        req.bytes().await.map(drop)
    }
}

/// The methods the dynamic and the metadata resource clients share, written once for both:
/// each is a [`Target`] in a field named `target`.
macro_rules! shared_resource_methods {
    () => {
        /// The same resource in `namespace` (`""` for every namespace, or for a
        /// cluster-scoped resource).
        pub fn namespace(&self, namespace: &str) -> Self {
            Self {
                target: self.target.in_namespace(namespace),
            }
        }

        /// The group/version/resource this client reaches.
        pub fn gvr(&self) -> &kclient_apimachinery::GroupVersionResource {
            &self.target.gvr
        }

        fn object(
            &self,
            verb: kclient_rest::Verb,
            name: &str,
            subresource: &str,
        ) -> kclient_rest::Request {
            self.target.object(verb, name, subresource)
        }

        /// Deletes an object (or a subresource of it).
        pub async fn delete(
            &self,
            name: &str,
            opts: &kclient_apimachinery::DeleteOptions,
            subresource: &str,
        ) -> Result<(), kclient_apimachinery::Error> {
            self.target.delete(name, opts, subresource).await
        }

        /// Deletes every object the list options select.
        pub async fn delete_collection(
            &self,
            opts: &kclient_apimachinery::DeleteOptions,
            list_opts: &kclient_apimachinery::ListOptions,
        ) -> Result<(), kclient_apimachinery::Error> {
            self.target.delete_collection(opts, list_opts).await
        }
    };
}
pub(crate) use shared_resource_methods;

/// `timeoutSeconds` of list options as a request deadline, as client-go's clients use it.
pub(crate) fn timeout_of(opts: &ListOptions) -> Option<Duration> {
    opts.timeout_seconds
        .filter(|s| *s > 0)
        .map(|s| Duration::from_secs(s.unsigned_abs()))
}
