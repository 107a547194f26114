//! The built-in resource registry: which `kclient_api` type serves each
//! [`GroupVersionResource`], so that
//! [`SharedInformerFactory::for_resource`](crate::SharedInformerFactory::for_resource) makes
//! the same typed informer that `informer::<K>()` makes (client-go's generated
//! `ForResource` switch).
//!
//! The list comes from `kclient_api::watchable_resources!`, generated from the OpenAPI
//! documents: every type the API server can list and watch. It exists only with the
//! `registry` feature (a typed informer per built-in type is a large compile cost), and each
//! entry only when this crate's feature of the same name as its API group is on (`core`,
//! `apps`, ...; all by default), which turns on that `kclient-api` group.

#[cfg(feature = "registry")]
use std::collections::HashMap;
#[cfg(feature = "registry")]
use std::sync::OnceLock;

use kclient_apimachinery::GroupVersionResource;

use crate::factory::SharedInformerFactory;
use crate::generic::GenericInformer;

/// Makes (or finds) the factory's typed informer of one Rust type.
pub(crate) type MakeTyped = fn(&SharedInformerFactory) -> GenericInformer;

/// The `kclient_api` type of `gvr`, as the function that makes its shared informer; always
/// `None` without the `registry` feature.
pub(crate) fn builtin(gvr: &GroupVersionResource) -> Option<MakeTyped> {
    #[cfg(feature = "registry")]
    {
        static TABLE: OnceLock<HashMap<GroupVersionResource, MakeTyped>> = OnceLock::new();
        TABLE.get_or_init(table).get(gvr).copied()
    }
    #[cfg(not(feature = "registry"))]
    {
        let _ = gvr;
        None
    }
}

#[cfg(feature = "registry")]
#[allow(unused_mut)] // with every group feature off, nothing is inserted
fn table() -> HashMap<GroupVersionResource, MakeTyped> {
    let mut table: HashMap<GroupVersionResource, MakeTyped> = HashMap::new();
    macro_rules! register {
        ($($feature:literal $group:ident :: $version:ident :: $ty:ident;)*) => {
            $(
                #[cfg(feature = $feature)]
                {
                    type K = kclient_api::$group::$version::$ty;
                    table.insert(
                        GroupVersionResource::of::<K>(),
                        SharedInformerFactory::typed_generic::<K>,
                    );
                }
            )*
        };
    }
    kclient_api::watchable_resources!(register);
    table
}

#[cfg(test)]
mod tests {
    #[allow(unused_imports)] // without the registry, only the manifest test remains
    use super::*;

    /// Every group in the generated list has a feature here that turns on the same
    /// `kclient-api` feature; otherwise its entries would silently never be compiled.
    #[test]
    fn every_generated_group_has_a_forwarding_feature() {
        let manifest = include_str!("../Cargo.toml");
        macro_rules! groups {
            ($($feature:literal $group:ident :: $version:ident :: $ty:ident;)*) => {
                [$($feature),*]
            };
        }
        let groups = kclient_api::watchable_resources!(groups);
        assert!(groups.len() > 50, "{} generated entries", groups.len());
        for group in groups {
            let line = format!("{group} = [\"kclient-api?/{group}\"]");
            assert!(
                manifest.lines().any(|l| l.trim() == line),
                "informers/Cargo.toml lacks the feature line `{line}`"
            );
        }
    }

    #[test]
    #[cfg(all(
        feature = "registry",
        feature = "core",
        feature = "apps",
        feature = "apiextensions"
    ))]
    fn builtin_types_are_found_by_resource() {
        for gvr in [
            GroupVersionResource::new("", "v1", "pods"),
            GroupVersionResource::new("", "v1", "configmaps"),
            GroupVersionResource::new("apps", "v1", "deployments"),
            GroupVersionResource::new("apiextensions.k8s.io", "v1", "customresourcedefinitions"),
        ] {
            assert!(builtin(&gvr).is_some(), "{gvr} is not registered");
        }
        // Not watchable, or not built in.
        for gvr in [
            GroupVersionResource::new("", "v1", "componentstatuses"),
            GroupVersionResource::new("authentication.k8s.io", "v1", "tokenreviews"),
            GroupVersionResource::new("samplecrd.k8s.io", "v1", "networks"),
        ] {
            assert!(builtin(&gvr).is_none(), "{gvr} should not be registered");
        }
    }
}
