//! [`Object`] for [`ObjectMeta`], [`ObjectMetaAccessor`] (the metadata itself, to change what
//! [`Object`] has no setter for), and [`impl_object!`](crate::impl_object) to implement both for
//! any type with a `metadata: ObjectMeta` field (every generated resource type, and custom
//! resource types written by hand).

use crate::meta::IStr;
use crate::meta::v1::ObjectMeta;
use crate::{EmptyStringMap, Object, OwnerRef, StringMap};

/// An object whose metadata is an [`ObjectMeta`] (client-go's `metav1.ObjectMetaAccessor`),
/// handed out to read and to change in place: what helpers that edit metadata [`Object`] has
/// no setter for (owner references, finalizers, labels) take.
///
/// [`impl_object!`](crate::impl_object) implements it for every generated resource type and
/// custom resource type; [`Unstructured`](crate::Unstructured) holds its metadata as JSON and
/// does not implement it.
///
/// ```
/// use kclient_apimachinery::ObjectMetaAccessor;
/// use kclient_apimachinery::meta::PartialObjectMetadata;
///
/// let mut object = PartialObjectMetadata::default();
/// object.object_meta_mut().generate_name = Some("web-".into());
/// assert_eq!(object.object_meta().generate_name.as_deref(), Some("web-"));
/// ```
pub trait ObjectMetaAccessor: Object {
    /// The object's metadata.
    fn object_meta(&self) -> &ObjectMeta;
    /// The object's metadata, to change in place.
    fn object_meta_mut(&mut self) -> &mut ObjectMeta;
}

impl ObjectMetaAccessor for ObjectMeta {
    fn object_meta(&self) -> &ObjectMeta {
        self
    }
    fn object_meta_mut(&mut self) -> &mut ObjectMeta {
        self
    }
}

impl Object for ObjectMeta {
    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
    fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }
    fn resource_version(&self) -> &str {
        self.resource_version.as_deref().unwrap_or("")
    }
    fn uid(&self) -> &str {
        self.uid.as_deref().unwrap_or("")
    }
    fn generation(&self) -> i64 {
        self.generation.unwrap_or(0)
    }
    fn labels(&self) -> &dyn StringMap {
        match &self.labels {
            Some(m) => m,
            None => &EmptyStringMap,
        }
    }
    fn annotations(&self) -> &dyn StringMap {
        match &self.annotations {
            Some(m) => m,
            None => &EmptyStringMap,
        }
    }
    fn finalizers(&self) -> Vec<&str> {
        self.finalizers
            .iter()
            .flat_map(|list| list.iter())
            .map(|f| &**f)
            .collect()
    }
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        self.owner_references
            .iter()
            .flat_map(|list| list.iter())
            .map(|o| OwnerRef {
                api_version: &o.api_version,
                kind: &o.kind,
                name: &o.name,
                uid: &o.uid,
                controller: o.controller.unwrap_or(false),
                block_owner_deletion: o.block_owner_deletion.unwrap_or(false),
            })
            .collect()
    }
    fn is_being_deleted(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
    fn set_name(&mut self, name: &str) {
        self.name = Some(name.into());
    }
    fn set_namespace(&mut self, namespace: &str) {
        self.namespace = Some(namespace.into());
    }
    fn set_resource_version(&mut self, resource_version: &str) {
        self.resource_version = if resource_version.is_empty() {
            None
        } else {
            Some(resource_version.into())
        };
    }
    fn set_finalizers(&mut self, finalizers: Vec<String>) {
        self.finalizers = if finalizers.is_empty() {
            None
        } else {
            Some(finalizers.into_iter().map(IStr::from).collect())
        };
    }
    fn clear_managed_fields(&mut self) {
        self.managed_fields = None;
    }
}

/// Implements [`Object`](crate::Object) and [`ObjectMetaAccessor`](crate::ObjectMetaAccessor)
/// for types with a `metadata: `[`ObjectMeta`](crate::meta::v1::ObjectMeta) field by delegating
/// to it.
///
/// ```
/// use kclient_apimachinery::meta::v1::ObjectMeta;
///
/// #[derive(Default)]
/// struct MyResource {
///     metadata: ObjectMeta,
/// }
/// kclient_apimachinery::impl_object!(MyResource);
///
/// use kclient_apimachinery::Object;
/// let mut r = MyResource::default();
/// r.set_name("a");
/// assert_eq!(r.name(), "a");
/// ```
#[macro_export]
macro_rules! impl_object {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::Object for $ty {
            fn name(&self) -> &str {
                $crate::Object::name(&self.metadata)
            }
            fn namespace(&self) -> &str {
                $crate::Object::namespace(&self.metadata)
            }
            fn resource_version(&self) -> &str {
                $crate::Object::resource_version(&self.metadata)
            }
            fn uid(&self) -> &str {
                $crate::Object::uid(&self.metadata)
            }
            fn generation(&self) -> i64 {
                $crate::Object::generation(&self.metadata)
            }
            fn labels(&self) -> &dyn $crate::StringMap {
                $crate::Object::labels(&self.metadata)
            }
            fn annotations(&self) -> &dyn $crate::StringMap {
                $crate::Object::annotations(&self.metadata)
            }
            fn finalizers(&self) -> ::std::vec::Vec<&str> {
                $crate::Object::finalizers(&self.metadata)
            }
            fn owner_references(&self) -> ::std::vec::Vec<$crate::OwnerRef<'_>> {
                $crate::Object::owner_references(&self.metadata)
            }
            fn is_being_deleted(&self) -> bool {
                $crate::Object::is_being_deleted(&self.metadata)
            }
            fn set_name(&mut self, name: &str) {
                $crate::Object::set_name(&mut self.metadata, name)
            }
            fn set_namespace(&mut self, namespace: &str) {
                $crate::Object::set_namespace(&mut self.metadata, namespace)
            }
            fn set_resource_version(&mut self, resource_version: &str) {
                $crate::Object::set_resource_version(&mut self.metadata, resource_version)
            }
            fn set_finalizers(&mut self, finalizers: ::std::vec::Vec<::std::string::String>) {
                $crate::Object::set_finalizers(&mut self.metadata, finalizers)
            }
            fn clear_managed_fields(&mut self) {
                $crate::Object::clear_managed_fields(&mut self.metadata)
            }
        }

        impl $crate::ObjectMetaAccessor for $ty {
            fn object_meta(&self) -> &$crate::meta::v1::ObjectMeta {
                &self.metadata
            }
            fn object_meta_mut(&mut self) -> &mut $crate::meta::v1::ObjectMeta {
                &mut self.metadata
            }
        }
    )*};
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::v1::OwnerReference;

    #[test]
    fn accessors_default_to_empty() {
        let m = ObjectMeta::default();
        assert_eq!(m.name(), "");
        assert_eq!(m.namespace(), "");
        assert_eq!(m.generation(), 0);
        assert!(m.labels().is_empty());
        assert!(m.finalizers().is_empty());
        assert!(!m.is_being_deleted());
    }

    #[test]
    fn accessors_read_decoded_metadata() {
        let m: ObjectMeta = serde_json::from_str(
            r#"{"name":"web-1","namespace":"prod","uid":"2b6e1a52-8d1c-4b4c-9c1e-1a2b3c4d5e6f",
                "resourceVersion":"42","generation":3,"labels":{"app":"web"},
                "annotations":{"a.example.com/very-long-annotation-key":"v"},
                "finalizers":["example.com/cleanup"],
                "deletionTimestamp":"2024-01-01T00:00:00Z",
                "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web",
                    "uid":"u1","controller":true}],
                "managedFields":[{"manager":"kubectl","operation":"Apply"}],
                "someFutureField":{"ignored":true}}"#,
        )
        .unwrap();
        assert_eq!(m.name(), "web-1");
        assert_eq!(m.namespace(), "prod");
        assert_eq!(m.resource_version(), "42");
        assert_eq!(m.generation(), 3);
        assert_eq!(m.labels().get("app"), Some("web"));
        assert_eq!(
            m.annotations()
                .get("a.example.com/very-long-annotation-key"),
            Some("v")
        );
        assert_eq!(m.finalizers(), vec!["example.com/cleanup"]);
        assert!(m.is_being_deleted());
        let owners = m.owner_references();
        assert_eq!(owners[0].kind, "ReplicaSet");
        assert!(owners[0].controller);
        assert!(!owners[0].block_owner_deletion);
        let managed = m.managed_fields.as_ref().unwrap();
        assert_eq!(managed[0].manager.as_deref(), Some("kubectl"));
    }

    #[test]
    fn setters() {
        let mut m = ObjectMeta {
            owner_references: Some(vec![OwnerReference::default()].into()),
            ..Default::default()
        };
        m.set_name("a");
        m.set_namespace("b");
        m.set_resource_version("7");
        assert_eq!(
            (m.name(), m.namespace(), m.resource_version()),
            ("a", "b", "7")
        );
        m.set_resource_version("");
        assert_eq!(m.resource_version, None);
    }
}
