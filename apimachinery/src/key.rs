//! Object keys: how caches, stores and workqueues name an object, `namespace/name` for
//! namespaced objects and `name` for cluster-scoped ones (client-go's
//! `MetaNamespaceKeyFunc` and `SplitMetaNamespaceKey`).

use std::fmt;

use crate::object::{AsObject, Object};

/// The key of an object: `namespace/name`, or `name` when the namespace is empty.
///
/// ```
/// # use kclient_apimachinery::split_meta_namespace_key;
/// assert_eq!(split_meta_namespace_key("default/web").unwrap(), (Some("default"), "web"));
/// ```
pub fn meta_namespace_key<O: AsObject + ?Sized>(object: &O) -> String {
    let object = object.as_object();
    namespace_key(object.namespace(), object.name())
}

/// The key for a namespace and name: `namespace/name`, or `name` when `namespace` is empty.
pub fn namespace_key(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_owned()
    } else {
        let mut key = String::with_capacity(namespace.len() + 1 + name.len());
        key.push_str(namespace);
        key.push('/');
        key.push_str(name);
        key
    }
}

/// Splits a key made by [`meta_namespace_key`] into its namespace (`None` when empty) and
/// name. A key with more than one `/` is an error.
pub fn split_meta_namespace_key(key: &str) -> Result<(Option<&str>, &str), InvalidKeyError> {
    let mut parts = key.split('/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(name), None, None) => Ok((None, name)),
        (Some(namespace), Some(name), None) => {
            Ok((Some(namespace).filter(|ns| !ns.is_empty()), name))
        }
        _ => Err(InvalidKeyError {
            key: key.to_owned(),
        }),
    }
}

/// A key that is not `name` or `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidKeyError {
    key: String,
}

impl InvalidKeyError {
    /// The key that was rejected.
    pub fn key(&self) -> &str {
        &self.key
    }
}

impl fmt::Display for InvalidKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unexpected key format: {:?}", self.key)
    }
}

impl std::error::Error for InvalidKeyError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{EmptyStringMap, OwnerRef, StringMap};

    struct Obj {
        ns: &'static str,
        name: &'static str,
    }

    impl Object for Obj {
        fn name(&self) -> &str {
            self.name
        }
        fn namespace(&self) -> &str {
            self.ns
        }
        fn resource_version(&self) -> &str {
            ""
        }
        fn uid(&self) -> &str {
            ""
        }
        fn generation(&self) -> i64 {
            0
        }
        fn labels(&self) -> &dyn StringMap {
            &EmptyStringMap
        }
        fn annotations(&self) -> &dyn StringMap {
            &EmptyStringMap
        }
        fn finalizers(&self) -> Vec<&str> {
            Vec::new()
        }
        fn owner_references(&self) -> Vec<OwnerRef<'_>> {
            Vec::new()
        }
        fn is_being_deleted(&self) -> bool {
            false
        }
        fn set_name(&mut self, _: &str) {}
        fn set_namespace(&mut self, _: &str) {}
        fn set_resource_version(&mut self, _: &str) {}
        fn set_finalizers(&mut self, _: Vec<String>) {}
        fn clear_managed_fields(&mut self) {}
    }

    #[test]
    fn keys_of_namespaced_and_cluster_objects() {
        assert_eq!(
            meta_namespace_key(&Obj {
                ns: "default",
                name: "web"
            }),
            "default/web"
        );
        assert_eq!(
            meta_namespace_key(&Obj {
                ns: "",
                name: "node-1"
            }),
            "node-1"
        );
        let dynamic: &dyn Object = &Obj { ns: "a", name: "b" };
        assert_eq!(meta_namespace_key(dynamic), "a/b");
    }

    #[test]
    fn splitting_keys() {
        type Split<'a> = Option<(Option<&'a str>, &'a str)>;
        let cases: &[(&str, Split<'_>)] = &[
            ("ns/name", Some((Some("ns"), "name"))),
            ("name", Some((None, "name"))),
            ("/name", Some((None, "name"))),
            ("", Some((None, ""))),
            ("a/b/c", None),
            ("a//", None),
        ];
        for (key, expected) in cases {
            let got = split_meta_namespace_key(key).ok();
            assert_eq!(got, *expected, "key {key:?}");
        }
        let err = split_meta_namespace_key("a/b/c").unwrap_err();
        assert_eq!(err.key(), "a/b/c");
        assert_eq!(err.to_string(), "unexpected key format: \"a/b/c\"");
    }

    #[test]
    fn keys_round_trip() {
        for (ns, name) in [("kube-system", "coredns"), ("", "cluster-admin")] {
            let key = namespace_key(ns, name);
            let (got_ns, got_name) = split_meta_namespace_key(&key).unwrap();
            assert_eq!(got_ns.unwrap_or(""), ns);
            assert_eq!(got_name, name);
        }
    }
}
