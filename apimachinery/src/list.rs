//! [`ObjectList<T>`]: the generic form of every `XxxList` response (`PodList`,
//! `DeploymentList`, ...): list metadata and the items. `kind` and `apiVersion` are ignored on
//! decode, so one type serves every list.

use serde::{Deserialize, Serialize};

use crate::de::null_as_default;
use crate::status::ListMeta;

/// A list response: `metadata` (resource version, continue token) and `items`.
///
/// `items: null`, which Go servers send for some empty lists, decodes as an empty list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct ObjectList<T> {
    /// The list's metadata.
    #[serde(default, deserialize_with = "null_as_default")]
    pub metadata: ListMeta,
    /// The objects.
    #[serde(default, deserialize_with = "null_as_default")]
    pub items: Vec<T>,
}

impl<T> Default for ObjectList<T> {
    fn default() -> Self {
        ObjectList {
            metadata: ListMeta::default(),
            items: Vec::new(),
        }
    }
}

impl<T> ObjectList<T> {
    /// The resource version the list was served at.
    pub fn resource_version(&self) -> &str {
        &self.metadata.resource_version
    }

    /// The token for the next page, if there is one.
    pub fn continue_token(&self) -> Option<&str> {
        Some(self.metadata.continue_token.as_str()).filter(|t| !t.is_empty())
    }
}

impl<T> IntoIterator for ObjectList<T> {
    type Item = T;
    type IntoIter = std::vec::IntoIter<T>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Deserialize, Serialize)]
    struct Item {
        name: String,
    }

    #[test]
    fn decodes_any_kind_of_list() {
        let list: ObjectList<Item> = serde_json::from_str(
            r#"{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"5","continue":"tok"},
                "items":[{"name":"a"},{"name":"b"}]}"#,
        )
        .unwrap();
        assert_eq!(list.resource_version(), "5");
        assert_eq!(list.continue_token(), Some("tok"));
        let names: Vec<_> = list.into_iter().map(|i| i.name).collect();
        assert_eq!(names, ["a", "b"]);
    }

    #[test]
    fn null_or_missing_items_are_empty() {
        let list: ObjectList<Item> =
            serde_json::from_str(r#"{"metadata":{"resourceVersion":"1"},"items":null}"#).unwrap();
        assert!(list.items.is_empty());
        assert_eq!(list.continue_token(), None);
        let list: ObjectList<Item> = serde_json::from_str(r#"{}"#).unwrap();
        assert_eq!(list, ObjectList::default());
    }

    #[test]
    fn a_bad_item_is_an_error() {
        let res = serde_json::from_str::<ObjectList<Item>>(r#"{"items":[{"nom":"a"}]}"#);
        assert!(res.is_err());
    }
}
