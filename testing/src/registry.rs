//! `ResourceRegistry`: what the fake API server knows about each resource (kind, scope,
//! status subresource, whether it keeps `metadata.generation`, its strategic-merge-patch
//! table): every generated built-in type of kclient-api, plus custom resources registered by
//! hand or by creating their CustomResourceDefinition through the fake.

use std::collections::BTreeMap;
use std::sync::Arc;

use kclient_apimachinery::meta::{FieldMeta, PatchMeta};
use kclient_apimachinery::{ApiResource, GroupVersionResource, Resource, ResourceScope};

use serde_json::Value;

use crate::schema::{Schema, StructuralSchema};

/// What the fake serves for one resource.
#[derive(Debug, Clone)]
pub struct ResourceInfo {
    /// Group, version, kind, plural, scope and verbs.
    pub api_resource: ApiResource,
    /// Whether a `status` subresource is served (and the main endpoint ignores status).
    pub has_status: bool,
    /// Whether the server keeps `metadata.generation` (set to 1 on create, bumped on every
    /// change outside metadata and status).
    pub keeps_generation: bool,
    /// The strategic merge patch table; `None` for custom resources, which refuse strategic
    /// merge patches as the server does (415).
    pub patch_fields: Option<&'static [FieldMeta]>,
    /// Whether an update without `metadata.resourceVersion` is allowed (most built-ins: yes,
    /// but not Leases, PodDisruptionBudgets, webhook configurations, ...; custom resources:
    /// no).
    pub allow_unconditional_update: bool,
    /// Where the `scale` subresource reads and writes replicas, when it is served.
    pub scale: Option<ScalePaths>,
    /// Whether a PUT to a missing object creates it (201), as the kind's registry strategy
    /// says with `AllowCreateOnUpdate` (Leases, Endpoints, Events, RBAC, ...; custom
    /// resources: no); otherwise it is 404.
    pub allow_create_on_update: bool,
    /// The field selectors a custom resource supports besides `metadata.name` and
    /// `metadata.namespace` (its CRD version's `selectableFields`, as `spec.color`).
    pub selectable_fields: Vec<String>,
    /// The categories discovery lists the resource under (`all` for workloads and Services,
    /// `api-extensions` for webhook configurations and CRDs; a CRD's `names.categories`).
    pub categories: Vec<String>,
    /// A custom resource's structural schema (its CRD version's `openAPIV3Schema`), which
    /// prunes and defaults every object written, says which fields an applied
    /// configuration may set and how server-side apply keys its lists; `None` for
    /// built-ins, whose patch table says the last, and for a custom resource registered
    /// without one (stored as written, its lists atomic: merged and owned whole).
    pub schema: Option<Arc<StructuralSchema>>,
    /// The version a custom resource's objects are stored in, when its served versions
    /// read and write the same objects (a CRD whose conversion strategy is `None`); `None`
    /// when each version is a store of its own (built-ins, a conversion webhook).
    pub storage: Option<StorageVersion>,
}

/// The storage version of a custom resource whose versions share their objects, converted
/// between versions by `apiVersion` alone, as the server converts a CRD's versions with
/// conversion strategy `None`: a write through any version is pruned and defaulted by that
/// version's schema, then stored as this version (pruned and defaulted by its schema); a
/// read through any version is defaulted by this version's schema, then pruned by the
/// version read through.
#[derive(Debug, Clone)]
pub struct StorageVersion {
    /// The stored objects' `apiVersion` (`group/version`).
    pub api_version: String,
    /// The storage version's schema.
    pub schema: Option<Arc<StructuralSchema>>,
}

/// The fields behind a `scale` subresource (a CRD's `subresources.scale`; for built-ins,
/// `.spec.replicas`, `.status.replicas` and the `spec.selector` label selector).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    /// The path of the desired replicas, such as `.spec.replicas`.
    pub spec_replicas: String,
    /// The path of the observed replicas, such as `.status.replicas`.
    pub status_replicas: String,
    /// The path of the selector string (a CRD's `labelSelectorPath`); `None` for built-ins,
    /// whose `spec.selector` is turned into one.
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// The scale of Deployments, ReplicaSets, StatefulSets and ReplicationControllers.
    pub fn builtin() -> Self {
        ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: None,
        }
    }
}

/// The built-in kinds with a `scale` subresource.
const SCALABLE: &[(&str, &str)] = &[
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("", "ReplicationController"),
];

/// The kinds whose registry strategy has `AllowCreateOnUpdate` in kube-apiserver: a PUT to a
/// missing object creates it (read from the pinned version by PUTting every served resource
/// that does not exist; the others answer 404).
const CREATE_ON_UPDATE: &[(&str, &str)] = &[
    ("", "Endpoints"),
    ("", "Event"),
    ("", "LimitRange"),
    ("", "Service"),
    ("events.k8s.io", "Event"),
    ("rbac.authorization.k8s.io", "Role"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("coordination.k8s.io", "Lease"),
    ("node.k8s.io", "RuntimeClass"),
];

/// The built-in kinds whose registry strategy refuses an update without a resourceVersion
/// (`AllowUnconditionalUpdate` false): those of the pinned version found so by creating an
/// object of each kind that can be created from its name alone and PUTting it back, and by
/// doing the same with a valid spec for the kinds with a status subresource.
const REQUIRES_RESOURCE_VERSION: &[(&str, &str)] = &[
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("storage.k8s.io", "VolumeAttachment"),
    ("coordination.k8s.io", "Lease"),
    ("policy", "PodDisruptionBudget"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
];

/// The categories kube-apiserver's discovery lists a built-in kind under (read from the
/// pinned version's discovery documents).
fn categories(group: &str, kind: &str) -> Vec<String> {
    let category = match (group, kind) {
        ("", "Pod" | "ReplicationController" | "Service")
        | ("apps", "DaemonSet" | "Deployment" | "ReplicaSet" | "StatefulSet")
        | ("autoscaling", "HorizontalPodAutoscaler")
        | ("batch", "CronJob" | "Job") => "all",
        ("apiregistration.k8s.io", "APIService")
        | ("apiextensions.k8s.io", "CustomResourceDefinition")
        | (
            "admissionregistration.k8s.io",
            "MutatingAdmissionPolicy"
            | "MutatingAdmissionPolicyBinding"
            | "MutatingWebhookConfiguration"
            | "ValidatingAdmissionPolicy"
            | "ValidatingAdmissionPolicyBinding"
            | "ValidatingWebhookConfiguration",
        ) => "api-extensions",
        _ => return Vec::new(),
    };
    vec![category.to_string()]
}

/// The kinds whose registry strategy keeps `metadata.generation` in kube-apiserver (the
/// generated types do not say; this list is read from the strategies of the pinned version).
const KEEPS_GENERATION: &[(&str, &str)] = &[
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("", "Pod"),
    ("", "ReplicationController"),
    ("policy", "PodDisruptionBudget"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "ValidatingAdmissionPolicyBinding",
    ),
    ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
    (
        "admissionregistration.k8s.io",
        "MutatingAdmissionPolicyBinding",
    ),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("resource.k8s.io", "ResourceClaim"),
];

impl ResourceInfo {
    /// The entry of a generated built-in type.
    pub fn of<K: Resource + PatchMeta>() -> Self {
        let fields = K::patch_fields();
        ResourceInfo {
            api_resource: ApiResource::of::<K>().with_verbs([
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ]),
            has_status: fields.iter().any(|f| f.name == "status"),
            keeps_generation: KEEPS_GENERATION.contains(&(K::GROUP, K::KIND)),
            patch_fields: Some(fields),
            allow_unconditional_update: !REQUIRES_RESOURCE_VERSION.contains(&(K::GROUP, K::KIND)),
            scale: SCALABLE
                .contains(&(K::GROUP, K::KIND))
                .then(ScalePaths::builtin),
            allow_create_on_update: CREATE_ON_UPDATE.contains(&(K::GROUP, K::KIND)),
            selectable_fields: Vec::new(),
            categories: categories(K::GROUP, K::KIND),
            schema: None,
            storage: None,
        }
        .scoped(<K::Scope as ResourceScope>::NAMESPACED)
    }

    fn scoped(mut self, namespaced: bool) -> Self {
        self.api_resource.namespaced = namespaced;
        self
    }

    /// The entry of a custom resource: a status subresource when `has_status`, generation
    /// kept, no strategic merge patch, updates need a resourceVersion.
    pub fn custom(api_resource: ApiResource, has_status: bool) -> Self {
        let mut api_resource = api_resource;
        if api_resource.verbs.is_empty() {
            api_resource = api_resource.with_verbs([
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ]);
        }
        ResourceInfo {
            api_resource,
            has_status,
            keeps_generation: true,
            patch_fields: None,
            allow_unconditional_update: false,
            scale: None,
            allow_create_on_update: false,
            selectable_fields: Vec::new(),
            categories: Vec::new(),
            schema: None,
            storage: None,
        }
    }

    /// The same entry with a custom resource's structural schema, which prunes and
    /// defaults its objects and says how server-side apply keys its lists (see
    /// [`StructuralSchema`]): it must declare every field the objects hold, as a CRD's
    /// schema must.
    pub fn with_schema(mut self, schema: StructuralSchema) -> Self {
        self.schema = Some(Arc::new(schema));
        self
    }

    /// A stored `object` as this version serves it, when the versions share their objects
    /// (see [`StorageVersion`]): defaulted by the storage version's schema, with this
    /// version's `apiVersion`, pruned by this version's schema. As stored otherwise.
    pub(crate) fn served(&self, mut object: Value) -> Value {
        let Some(storage) = &self.storage else {
            return object;
        };
        if let Some(schema) = &storage.schema {
            schema.fill_defaults(&mut object);
        }
        set_api_version(&mut object, &self.api_resource.api_version);
        if let Some(schema) = &self.schema {
            schema.prune(&mut object, true);
        }
        object
    }

    /// An object written through this version (pruned and defaulted by its schema) as it
    /// is stored, when the versions share their objects: with the storage version's
    /// `apiVersion`, pruned and defaulted by its schema.
    pub(crate) fn to_storage(&self, object: &mut Value) {
        if let Some(storage) = &self.storage {
            set_api_version(object, &storage.api_version);
            if let Some(schema) = &storage.schema {
                schema.prune_and_default(object);
            }
        }
    }

    /// The schema server-side apply reads: the patch table of a built-in, a custom
    /// resource's structural schema.
    pub(crate) fn apply_schema(&self) -> Schema<'_> {
        match (self.patch_fields, &self.schema) {
            (Some(table), _) => Schema::Struct(table),
            (None, Some(schema)) => Schema::Custom(schema),
            (None, None) => Schema::Unknown,
        }
    }

    /// The same entry with a `scale` subresource.
    pub fn with_scale(mut self, scale: ScalePaths) -> Self {
        self.scale = Some(scale);
        self
    }

    /// The resource's group/version/resource.
    pub fn gvr(&self) -> GroupVersionResource {
        self.api_resource.gvr()
    }
}

fn set_api_version(object: &mut Value, api_version: &str) {
    if let Some(m) = object.as_object_mut() {
        m.insert("apiVersion".into(), Value::String(api_version.to_owned()));
    }
}

/// The resources a fake serves, keyed by group/version/resource.
#[derive(Debug, Clone, Default)]
pub struct ResourceRegistry {
    by_gvr: BTreeMap<(String, String, String), Arc<ResourceInfo>>,
}

macro_rules! register_builtins {
    ($($feature:literal $group:ident :: $version:ident :: $ty:ident;)*) => {
        fn builtins(registry: &mut ResourceRegistry) {
            $( registry.register(ResourceInfo::of::<kclient_api::$group::$version::$ty>()); )*
        }
    };
}
kclient_api::watchable_resources!(register_builtins);

impl ResourceRegistry {
    /// Every generated built-in resource that can be listed and watched.
    pub fn builtin() -> Self {
        let mut registry = ResourceRegistry::default();
        builtins(&mut registry);
        registry
    }

    /// Adds or replaces a resource.
    pub fn register(&mut self, info: ResourceInfo) {
        let r = &info.api_resource;
        self.by_gvr.insert(
            (r.group.clone(), r.version.clone(), r.plural.clone()),
            Arc::new(info),
        );
    }

    /// Removes a resource (its CustomResourceDefinition was deleted).
    pub fn unregister(&mut self, group: &str, version: &str, plural: &str) {
        self.by_gvr
            .remove(&(group.to_string(), version.to_string(), plural.to_string()));
    }

    /// The entry of a resource.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceInfo>> {
        self.by_gvr
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// The entry serving `apiVersion`/`kind` (the first version that has the kind).
    pub fn for_kind(&self, api_version: &str, kind: &str) -> Option<Arc<ResourceInfo>> {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        self.by_gvr
            .values()
            .find(|i| {
                let r = &i.api_resource;
                r.group == group && r.version == version && r.kind == kind
            })
            .cloned()
    }

    /// Every entry, ordered by group, version and resource.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<ResourceInfo>> {
        self.by_gvr.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_know_scope_status_and_generation() {
        let r = ResourceRegistry::builtin();
        let cm = r.get("", "v1", "configmaps").expect("configmaps");
        assert!(cm.api_resource.namespaced);
        assert!(!cm.has_status);
        assert!(!cm.keeps_generation);
        let d = r.get("apps", "v1", "deployments").expect("deployments");
        assert!(d.has_status && d.keeps_generation);
        let ns = r.get("", "v1", "namespaces").expect("namespaces");
        assert!(!ns.api_resource.namespaced);
        assert_eq!(
            r.for_kind("apps/v1", "Deployment")
                .unwrap()
                .api_resource
                .plural,
            "deployments"
        );
    }
}
