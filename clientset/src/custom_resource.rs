//! Custom resources: [`custom_resource!`](crate::custom_resource) gives a user-defined struct
//! with a `metadata: ObjectMeta` field the [`Object`](kclient_apimachinery::Object) and
//! [`Resource`](kclient_apimachinery::Resource) impls a typed client needs, and
//! `CustomResource::crd` (cargo feature `apiextensions`) produces the
//! CustomResourceDefinition that serves it; [`CustomResource::crd_json`], the same manifest as
//! JSON, needs no feature. Both take the version's `openAPIV3Schema`; with the `schema`
//! feature, `crd_from_type` and `crd_json_from_type` make it from the type's
//! `#[derive(JsonSchema)]` ([`structural_schema`](crate::structural_schema)).

#[cfg(feature = "apiextensions")]
use kclient_api::apiextensions::v1::CustomResourceDefinition;
#[cfg(feature = "apiextensions")]
use kclient_apimachinery::Error;
use kclient_apimachinery::{Resource, ResourceScope};
use serde_json::{Value, json};

/// What a CustomResourceDefinition needs beyond [`Resource`]: names and subresources.
/// Implemented by [`custom_resource!`](crate::custom_resource).
pub trait CustomResource: Resource {
    /// The singular name (`network`).
    const SINGULAR: &'static str;
    /// Short names (`net`).
    const SHORT_NAMES: &'static [&'static str];
    /// Categories (`all`).
    const CATEGORIES: &'static [&'static str];
    /// Whether the resource serves the `status` subresource.
    const STATUS_SUBRESOURCE: bool;

    /// The CustomResourceDefinition serving this type as its only (served, storage) version,
    /// with `schema` as the version's `openAPIV3Schema`. Groups the API server protects
    /// (`*.k8s.io`, `*.kubernetes.io`) get the `api-approved.kubernetes.io: "unapproved,
    /// experimental-only"` annotation it requires, as sample-controller's manifest has.
    /// Needs the `apiextensions` cargo feature; [`CustomResource::crd_json`] does not.
    #[cfg(feature = "apiextensions")]
    fn crd(schema: Value) -> Result<CustomResourceDefinition, Error> {
        serde_json::from_value(Self::crd_json(schema)).map_err(|e| {
            Error::invalid_request(format!(
                "the CustomResourceDefinition of {} does not decode: {e}",
                Self::KIND
            ))
        })
    }

    /// The CustomResourceDefinition of [`CustomResource::crd`] with the schema made from the
    /// type: [`structural_schema::<Self>()`](crate::structural_schema), which the type's
    /// `#[derive(JsonSchema)]` (and its fields') feeds. Needs the `schema` and
    /// `apiextensions` cargo features. A type whose schema cannot be structural is an
    /// [`Error::other`] holding the [`SchemaError`](crate::SchemaError)
    /// (`error.downcast_ref::<SchemaError>()`).
    ///
    /// ```
    /// use kclient_apimachinery::meta::v1::{Condition, ObjectMeta};
    /// use kclient_clientset::schemars::JsonSchema;
    /// use kclient_clientset::{CustomResource, custom_resource};
    /// use serde::{Deserialize, Serialize};
    ///
    /// #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    /// struct Database {
    ///     metadata: ObjectMeta,
    ///     spec: DatabaseSpec,
    ///     #[serde(default, skip_serializing_if = "Option::is_none")]
    ///     status: Option<DatabaseStatus>,
    /// }
    ///
    /// #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    /// #[serde(rename_all = "camelCase")]
    /// struct DatabaseSpec {
    ///     engine_version: String,
    ///     replicas: Option<i32>,
    /// }
    ///
    /// #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
    /// struct DatabaseStatus {
    ///     #[serde(default)]
    ///     conditions: Vec<Condition>,
    /// }
    ///
    /// custom_resource!(Database {
    ///     group: "example.com",
    ///     version: "v1",
    ///     kind: "Database",
    ///     plural: "databases",
    ///     singular: "database",
    ///     scope: Namespaced,
    ///     status: true,
    /// });
    ///
    /// let crd = Database::crd_from_type()?;
    /// let version = &crd.spec.versions[0];
    /// assert_eq!(version.name, "v1");
    /// let schema = serde_json::to_value(&version.schema)?;
    /// let spec = &schema["openAPIV3Schema"]["properties"]["spec"];
    /// assert_eq!(spec["required"], serde_json::json!(["engineVersion"]));
    /// assert_eq!(spec["properties"]["replicas"]["nullable"], true);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(all(feature = "schema", feature = "apiextensions"))]
    fn crd_from_type() -> Result<CustomResourceDefinition, Error>
    where
        Self: schemars::JsonSchema,
    {
        Self::crd(crate::structural_schema::<Self>().map_err(Error::other)?)
    }

    /// The CustomResourceDefinition of [`CustomResource::crd_json`] with the schema made from
    /// the type, as [`CustomResource::crd_from_type`] makes it; needs the `schema` cargo
    /// feature only.
    #[cfg(feature = "schema")]
    fn crd_json_from_type() -> Result<Value, crate::SchemaError>
    where
        Self: schemars::JsonSchema,
    {
        Ok(Self::crd_json(crate::structural_schema::<Self>()?))
    }

    /// The CustomResourceDefinition that `crd` returns, as JSON (no cargo feature needed).
    fn crd_json(schema: Value) -> Value {
        let mut names = json!({
            "kind": Self::KIND,
            "listKind": format!("{}List", Self::KIND),
            "plural": Self::PLURAL,
            "singular": Self::SINGULAR,
        });
        if !Self::SHORT_NAMES.is_empty() {
            names["shortNames"] = json!(Self::SHORT_NAMES);
        }
        if !Self::CATEGORIES.is_empty() {
            names["categories"] = json!(Self::CATEGORIES);
        }
        let mut version = json!({
            "name": Self::VERSION,
            "served": true,
            "storage": true,
            "schema": {"openAPIV3Schema": schema},
        });
        if Self::STATUS_SUBRESOURCE {
            version["subresources"] = json!({"status": {}});
        }
        let mut metadata = json!({"name": format!("{}.{}", Self::PLURAL, Self::GROUP)});
        if is_protected_group(Self::GROUP) {
            metadata["annotations"] =
                json!({"api-approved.kubernetes.io": "unapproved, experimental-only"});
        }
        json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": metadata,
            "spec": {
                "group": Self::GROUP,
                "names": names,
                "scope": if <Self::Scope as ResourceScope>::NAMESPACED { "Namespaced" } else { "Cluster" },
                "versions": [version],
            }
        })
    }
}

/// Whether the API server requires the `api-approved.kubernetes.io` annotation for CRDs of
/// this group.
fn is_protected_group(group: &str) -> bool {
    ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|p| group == *p || group.ends_with(&format!(".{p}")))
}

/// Implements [`Object`](kclient_apimachinery::Object),
/// [`Resource`](kclient_apimachinery::Resource) and [`CustomResource`] (and
/// [`HasStatus`](crate::HasStatus) with `status: true`) for a struct with a
/// `metadata: ObjectMeta` field, so that `Api<T>` works for it.
///
/// To server-side apply the struct itself, give its optional fields
/// `#[serde(skip_serializing_if = "Option::is_none")]`, as the generated types have: the
/// whole struct is the apply body, and a `null` in it claims the field, which conflicts with
/// the manager that set it (checked against kube-apiserver with `kubectl apply
/// --server-side`).
///
/// ```
/// use kclient_apimachinery::meta::v1::ObjectMeta;
/// use kclient_clientset::{CustomResource, custom_resource};
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Debug, Clone, Default, Serialize, Deserialize)]
/// pub struct Network {
///     pub metadata: ObjectMeta,
///     pub spec: NetworkSpec,
/// }
///
/// #[derive(Debug, Clone, Default, Serialize, Deserialize)]
/// pub struct NetworkSpec {
///     pub cidr: String,
///     pub gateway: String,
/// }
///
/// custom_resource!(Network {
///     group: "samplecrd.k8s.io",
///     version: "v1",
///     kind: "Network",
///     plural: "networks",
///     singular: "network",
///     scope: Namespaced,
/// });
///
/// let crd = Network::crd_json(serde_json::json!({"type": "object"}));
/// assert_eq!(crd["metadata"]["name"], "networks.samplecrd.k8s.io");
/// assert_eq!(crd["spec"]["scope"], "Namespaced");
/// ```
#[macro_export]
macro_rules! custom_resource {
    (
        $ty:ident {
            group: $group:literal,
            version: $version:literal,
            kind: $kind:literal,
            plural: $plural:literal,
            singular: $singular:literal,
            scope: $scope:ident
            $(, short_names: [$($short:literal),* $(,)?])?
            $(, categories: [$($category:literal),* $(,)?])?
            $(, status: $status:tt)?
            $(,)?
        }
    ) => {
        $crate::__private::kclient_apimachinery::impl_object!($ty);

        impl $crate::__private::kclient_apimachinery::Resource for $ty {
            const GROUP: &'static str = $group;
            const VERSION: &'static str = $version;
            const API_VERSION: &'static str = concat!($group, "/", $version);
            const KIND: &'static str = $kind;
            const PLURAL: &'static str = $plural;
            type Scope = $crate::__custom_resource_scope!($scope);
        }

        impl $crate::CustomResource for $ty {
            const SINGULAR: &'static str = $singular;
            const SHORT_NAMES: &'static [&'static str] = &[$($($short),*)?];
            const CATEGORIES: &'static [&'static str] = &[$($($category),*)?];
            const STATUS_SUBRESOURCE: bool = $crate::__custom_resource_status!($($status)?);
        }

        $crate::__custom_resource_has_status!($ty $(, $status)?);
    };
}

/// The scope type of `Namespaced` or `Cluster`.
#[doc(hidden)]
#[macro_export]
macro_rules! __custom_resource_scope {
    (Namespaced) => {
        $crate::__private::kclient_apimachinery::NamespaceResourceScope
    };
    (Cluster) => {
        $crate::__private::kclient_apimachinery::ClusterResourceScope
    };
}

/// `false` unless `status: true` was given.
#[doc(hidden)]
#[macro_export]
macro_rules! __custom_resource_status {
    () => {
        false
    };
    ($status:tt) => {
        $status
    };
}

/// `impl HasStatus` when `status: true` was given.
#[doc(hidden)]
#[macro_export]
macro_rules! __custom_resource_has_status {
    ($ty:ident) => {};
    ($ty:ident, false) => {};
    ($ty:ident, true) => {
        impl $crate::HasStatus for $ty {}
    };
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::meta::v1::ObjectMeta;
    use kclient_apimachinery::{NamespaceResourceScope, Object, Resource};
    use serde::{Deserialize, Serialize};

    use crate::{CustomResource, HasStatus};

    /// The sample-controller's `Network`.
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    pub(crate) struct Network {
        metadata: ObjectMeta,
        spec: NetworkSpec,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<NetworkStatus>,
    }

    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    struct NetworkSpec {
        cidr: String,
        gateway: String,
    }

    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    struct NetworkStatus {
        ready: bool,
    }

    crate::custom_resource!(Network {
        group: "samplecrd.k8s.io",
        version: "v1",
        kind: "Network",
        plural: "networks",
        singular: "network",
        scope: Namespaced,
        short_names: ["net"],
        categories: ["all"],
        status: true,
    });

    /// A cluster-scoped resource with no options.
    #[derive(Debug, Clone, Default, Serialize, Deserialize)]
    struct Realm {
        metadata: ObjectMeta,
    }

    crate::custom_resource!(Realm {
        group: "example.com",
        version: "v1alpha1",
        kind: "Realm",
        plural: "realms",
        singular: "realm",
        scope: Cluster,
    });

    fn has_status<K: HasStatus>() {}

    #[test]
    fn the_macro_implements_the_traits() {
        assert_eq!(Network::API_VERSION, "samplecrd.k8s.io/v1");
        assert_eq!(Network::PLURAL, "networks");
        let _: fn() -> Option<<Network as Resource>::Scope> = || None::<NamespaceResourceScope>;
        has_status::<Network>();
        const { assert!(Network::STATUS_SUBRESOURCE) };
        const { assert!(!Realm::STATUS_SUBRESOURCE) };
        let mut net = Network::default();
        net.set_name("net-a");
        net.set_namespace("ns");
        assert_eq!(net.name(), "net-a");
        assert_eq!(Object::namespace(&net), "ns");
        assert_eq!(Realm::API_VERSION, "example.com/v1alpha1");
    }

    #[test]
    fn the_crd_is_produced_from_the_type() {
        let schema = serde_json::json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"cidr": {"type": "string"}, "gateway": {"type": "string"}}}}});
        let crd = Network::crd_json(schema.clone());
        assert_eq!(crd["metadata"]["name"], "networks.samplecrd.k8s.io");
        assert_eq!(
            crd["metadata"]["annotations"]["api-approved.kubernetes.io"],
            "unapproved, experimental-only"
        );
        assert_eq!(crd["spec"]["group"], "samplecrd.k8s.io");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        assert_eq!(crd["spec"]["names"]["kind"], "Network");
        assert_eq!(crd["spec"]["names"]["listKind"], "NetworkList");
        assert_eq!(crd["spec"]["names"]["shortNames"][0], "net");
        assert_eq!(crd["spec"]["names"]["categories"][0], "all");
        let version = &crd["spec"]["versions"][0];
        assert_eq!(version["name"], "v1");
        assert_eq!(version["storage"], true);
        assert_eq!(version["schema"]["openAPIV3Schema"], schema);
        assert!(version["subresources"]["status"].is_object());

        let realm = Realm::crd_json(serde_json::json!({"type": "object"}));
        assert_eq!(realm["spec"]["scope"], "Cluster");
        assert!(realm["metadata"].get("annotations").is_none());
        assert!(realm["spec"]["names"].get("shortNames").is_none());
    }

    #[cfg(feature = "apiextensions")]
    #[test]
    fn the_typed_crd_serializes_back_to_the_same_manifest() {
        let schema = serde_json::json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"cidr": {"type": "string"}, "gateway": {"type": "string"}}}}});
        let typed = Network::crd(schema.clone()).unwrap();
        assert_eq!(
            typed.metadata.name.as_deref(),
            Some("networks.samplecrd.k8s.io")
        );
        assert_eq!(
            serde_json::to_value(&typed).unwrap()["spec"],
            Network::crd_json(schema)["spec"]
        );
    }

    #[cfg(feature = "schema")]
    mod from_type {
        use kclient_apimachinery::meta::v1::ObjectMeta;
        use schemars::JsonSchema;
        use serde::{Deserialize, Serialize};

        use crate::CustomResource;

        #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
        pub(crate) struct Gadget {
            metadata: ObjectMeta,
            spec: GadgetSpec,
        }

        #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "camelCase")]
        struct GadgetSpec {
            part_count: u16,
        }

        crate::custom_resource!(Gadget {
            group: "example.com",
            version: "v1",
            kind: "Gadget",
            plural: "gadgets",
            singular: "gadget",
            scope: Cluster,
        });

        /// A type the rewrite refuses: a tuple field.
        #[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
        pub(crate) struct Broken {
            metadata: ObjectMeta,
            spec: (i32, i32),
        }

        crate::custom_resource!(Broken {
            group: "example.com",
            version: "v1",
            kind: "Broken",
            plural: "brokens",
            singular: "broken",
            scope: Cluster,
        });

        #[test]
        fn the_crd_json_carries_the_structural_schema_of_the_type() {
            let crd = Gadget::crd_json_from_type().unwrap();
            let schema = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"];
            assert_eq!(schema, &crate::structural_schema::<Gadget>().unwrap());
            assert_eq!(
                schema["properties"]["spec"]["properties"]["partCount"]["format"],
                "int32"
            );
            assert_eq!(crd["spec"]["scope"], "Cluster");
        }

        #[test]
        fn a_type_that_cannot_be_structural_is_an_error_naming_the_field() {
            let e = Broken::crd_json_from_type().unwrap_err();
            assert_eq!(e.path(), ".spec");
            assert!(e.to_string().contains("Broken"), "{e}");
        }

        #[cfg(feature = "apiextensions")]
        #[test]
        fn the_typed_crd_holds_the_same_schema_and_errors_downcast() {
            let typed = Gadget::crd_from_type().unwrap();
            assert_eq!(
                serde_json::to_value(&typed).unwrap()["spec"],
                Gadget::crd_json_from_type().unwrap()["spec"]
            );
            let e = Broken::crd_from_type().unwrap_err();
            let schema_error = e.downcast_ref::<crate::SchemaError>().unwrap();
            assert_eq!(schema_error.path(), ".spec");
        }
    }

    #[test]
    fn bodies_carry_api_version_and_kind() {
        let mut net = Network::default();
        net.set_name("net-a");
        let body: serde_json::Value =
            serde_json::from_slice(&crate::api::object_body(&net).unwrap()).unwrap();
        assert_eq!(body["apiVersion"], "samplecrd.k8s.io/v1");
        assert_eq!(body["kind"], "Network");
        assert_eq!(body["metadata"]["name"], "net-a");
    }
}
