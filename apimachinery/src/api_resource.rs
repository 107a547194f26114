//! [`ApiResource`]: the run-time description of a resource (what client-go's discovery
//! `metav1.APIResource` plus its group version carry), used where the type is not known at
//! compile time: the dynamic client, dynamic informers, the RESTMapper.
//!
//! Typed code gets the same data from [`Resource`](crate::Resource) through
//! [`ApiResource::of`].

use crate::gvk::{GroupVersion, GroupVersionKind, GroupVersionResource};
use crate::object::ResourceScope;

/// The run-time identity of a resource: its group, version, kind, URL name and scope.
///
/// ```
/// use kclient_apimachinery::{ApiResource, GroupVersionKind};
///
/// let deployments = ApiResource::new(&GroupVersionKind::new("apps", "v1", "Deployment"), "deployments", true);
/// assert_eq!(
///     deployments.collection_path(Some("prod")),
///     "/apis/apps/v1/namespaces/prod/deployments"
/// );
/// let nodes = ApiResource::new(&GroupVersionKind::new("", "v1", "Node"), "nodes", false);
/// assert_eq!(nodes.object_path(None, "n1"), "/api/v1/nodes/n1");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ApiResource {
    /// The API group, `""` for the core group.
    pub group: String,
    /// The version, such as `v1`.
    pub version: String,
    /// `apiVersion` as objects carry it: `v1` or `apps/v1`.
    pub api_version: String,
    /// The kind, such as `Deployment`.
    pub kind: String,
    /// The plural resource name used in URLs, such as `deployments`.
    pub plural: String,
    /// The singular name, such as `deployment` (the lowercase kind unless discovery says
    /// otherwise).
    pub singular: String,
    /// Whether objects live in a namespace.
    pub namespaced: bool,
    /// The verbs the server supports (`get`, `list`, `watch`, ...), empty when unknown.
    pub verbs: Vec<String>,
    /// Short names, such as `deploy`, empty when unknown.
    pub short_names: Vec<String>,
}

impl ApiResource {
    /// The descriptor of a [`Resource`](crate::Resource) type (verbs and short names are
    /// unknown at compile time and left empty).
    pub fn of<K: crate::Resource>() -> Self {
        ApiResource {
            group: K::GROUP.to_owned(),
            version: K::VERSION.to_owned(),
            api_version: K::API_VERSION.to_owned(),
            kind: K::KIND.to_owned(),
            plural: K::PLURAL.to_owned(),
            singular: K::KIND.to_ascii_lowercase(),
            namespaced: <K::Scope as ResourceScope>::NAMESPACED,
            verbs: Vec::new(),
            short_names: Vec::new(),
        }
    }

    /// A descriptor from a kind and its plural, for dynamic use.
    pub fn new(gvk: &GroupVersionKind, plural: impl Into<String>, namespaced: bool) -> Self {
        ApiResource {
            group: gvk.group.clone(),
            version: gvk.version.clone(),
            api_version: gvk.api_version(),
            kind: gvk.kind.clone(),
            plural: plural.into(),
            singular: gvk.kind.to_ascii_lowercase(),
            namespaced,
            verbs: Vec::new(),
            short_names: Vec::new(),
        }
    }

    /// A descriptor from a resource and its kind, for dynamic use.
    pub fn from_gvr(gvr: &GroupVersionResource, kind: impl Into<String>, namespaced: bool) -> Self {
        let kind = kind.into();
        ApiResource {
            group: gvr.group.clone(),
            version: gvr.version.clone(),
            api_version: gvr.group_version().to_string(),
            singular: kind.to_ascii_lowercase(),
            kind,
            plural: gvr.resource.clone(),
            namespaced,
            verbs: Vec::new(),
            short_names: Vec::new(),
        }
    }

    /// Sets the verbs.
    pub fn with_verbs<I, S>(mut self, verbs: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.verbs = verbs.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the short names.
    pub fn with_short_names<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.short_names = names.into_iter().map(Into::into).collect();
        self
    }

    /// Whether discovery listed this verb.
    pub fn supports(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Group and version.
    pub fn group_version(&self) -> GroupVersion {
        GroupVersion::new(self.group.clone(), self.version.clone())
    }

    /// Group, version and kind.
    pub fn gvk(&self) -> GroupVersionKind {
        GroupVersionKind::new(self.group.clone(), self.version.clone(), self.kind.clone())
    }

    /// Group, version and resource.
    pub fn gvr(&self) -> GroupVersionResource {
        GroupVersionResource::new(
            self.group.clone(),
            self.version.clone(),
            self.plural.clone(),
        )
    }

    /// The URL path of the collection: `/api/v1/namespaces/{ns}/pods`,
    /// `/apis/apps/v1/deployments` (all namespaces, or a cluster-scoped resource). The
    /// namespace is ignored for cluster-scoped resources and when empty.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let mut path = self.group_version().api_path();
        if let Some(ns) = namespace.filter(|ns| self.namespaced && !ns.is_empty()) {
            path.push_str("/namespaces/");
            path.push_str(ns);
        }
        path.push('/');
        path.push_str(&self.plural);
        path
    }

    /// The URL path of one object: the collection path then `/{name}`.
    pub fn object_path(&self, namespace: Option<&str>, name: &str) -> String {
        let mut path = self.collection_path(namespace);
        path.push('/');
        path.push_str(name);
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_for_core_and_named_groups() {
        let pods = ApiResource::new(&GroupVersionKind::new("", "v1", "Pod"), "pods", true);
        assert_eq!(pods.api_version, "v1");
        assert_eq!(pods.singular, "pod");
        assert_eq!(pods.collection_path(None), "/api/v1/pods");
        assert_eq!(pods.collection_path(Some("")), "/api/v1/pods");
        assert_eq!(
            pods.collection_path(Some("kube-system")),
            "/api/v1/namespaces/kube-system/pods"
        );
        assert_eq!(
            pods.object_path(Some("default"), "web-0"),
            "/api/v1/namespaces/default/pods/web-0"
        );

        let gvr = GroupVersionResource::new("rbac.authorization.k8s.io", "v1", "clusterroles");
        let roles = ApiResource::from_gvr(&gvr, "ClusterRole", false)
            .with_verbs(["get", "list"])
            .with_short_names(Vec::<String>::new());
        assert_eq!(roles.api_version, "rbac.authorization.k8s.io/v1");
        assert_eq!(
            roles.collection_path(Some("ignored")),
            "/apis/rbac.authorization.k8s.io/v1/clusterroles"
        );
        assert!(roles.supports("list") && !roles.supports("watch"));
        assert_eq!(roles.gvr(), gvr);
        assert_eq!(roles.gvk().kind, "ClusterRole");
    }

    #[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
    struct Widget {
        metadata: crate::meta::v1::ObjectMeta,
    }
    crate::impl_object!(Widget);
    impl crate::Resource for Widget {
        const GROUP: &'static str = "example.com";
        const VERSION: &'static str = "v1alpha1";
        const API_VERSION: &'static str = "example.com/v1alpha1";
        const KIND: &'static str = "Widget";
        const PLURAL: &'static str = "widgets";
        type Scope = crate::NamespaceResourceScope;
    }

    #[test]
    fn descriptor_of_a_static_resource() {
        let widgets = ApiResource::of::<Widget>();
        assert_eq!(widgets.api_version, "example.com/v1alpha1");
        assert_eq!(widgets.singular, "widget");
        assert!(widgets.namespaced);
        assert_eq!(widgets.gvk(), GroupVersionKind::of::<Widget>());
        assert_eq!(widgets.gvr(), GroupVersionResource::of::<Widget>());
        assert_eq!(
            widgets.object_path(Some("ns"), "w"),
            "/apis/example.com/v1alpha1/namespaces/ns/widgets/w"
        );
        assert!(widgets.verbs.is_empty() && widgets.short_names.is_empty());
    }
}
