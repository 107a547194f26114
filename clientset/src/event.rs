//! client-go's `EventExpansion`, the hand-written methods of `CoreV1().Events(ns)`, on
//! [`Api<Event>`](crate::Api) and on the all-namespaces `Api<Event, AllNamespaces>`:
//!
//! - [`get_field_selector`](Api::get_field_selector): the field selector of the events about
//!   one object (`involvedObject.name`, `.namespace`, `.kind`, `.uid`), for `list`, `watch`
//!   or an informer;
//! - [`search`](Api::search): the events about an object or an `ObjectReference`, listed with
//!   that selector (what `kubectl describe` shows);
//! - [`create_with_event_namespace`](Api::create_with_event_namespace),
//!   [`update_with_event_namespace`](Api::update_with_event_namespace) and
//!   [`patch_with_event_namespace`](Api::patch_with_event_namespace): writes that go to the
//!   event's own `metadata.namespace`, so that one all-namespaces client writes events of
//!   every namespace (kclient-tools' `ClientEventSink` writes with them, as client-go's
//!   `EventSinkImpl` does).
//!
//! Each refuses, before sending, an event or object of another namespace than a
//! namespace-bound client's, with client-go's messages.

use kclient_api::core::v1::Event;
use kclient_apimachinery::{
    CreateOptions, Error, FieldOperator, FieldRequirement, FieldSelector, ListOptions, Object,
    ObjectList, PatchOptions, UpdateOptions,
};
use serde_json::Value;

use crate::api::{Api, ApiScope};
use crate::patch::Patch;
use crate::reference::IntoObjectReference;

impl<S: ApiScope> Api<Event, S> {
    /// The field selector of the events about one object (client-go's
    /// `EventInterface.GetFieldSelector`): a term `involvedObject.name=`,
    /// `involvedObject.namespace=`, `involvedObject.kind=` or `involvedObject.uid=` for each
    /// argument given, none for `None`. `Some("")` is a term too, matching the events whose
    /// field is empty (`involvedObject.namespace=` for a cluster-scoped object). Values are
    /// escaped; all `None` gives the empty selector, which matches every event.
    ///
    /// ```no_run
    /// # async fn run(clientset: kclient_clientset::Clientset) -> Result<(), kclient_apimachinery::Error> {
    /// use kclient_apimachinery::ListOptions;
    ///
    /// let events = clientset.core_v1().events("shop");
    /// let selector = events.get_field_selector(Some("web-0"), Some("shop"), Some("Pod"), None);
    /// let about_web_0 = events
    ///     .list(&ListOptions::default().field_selector(selector.to_string()))
    ///     .await?;
    /// # let _ = about_web_0; Ok(())
    /// # }
    /// ```
    pub fn get_field_selector(
        &self,
        involved_object_name: Option<&str>,
        involved_object_namespace: Option<&str>,
        involved_object_kind: Option<&str>,
        involved_object_uid: Option<&str>,
    ) -> FieldSelector {
        // In the order of their printed form, as a parsed selector's terms are.
        [
            ("involvedObject.kind", involved_object_kind),
            ("involvedObject.name", involved_object_name),
            ("involvedObject.namespace", involved_object_namespace),
            ("involvedObject.uid", involved_object_uid),
        ]
        .into_iter()
        .filter_map(|(field, value)| Some((field, value?)))
        .fold(FieldSelector::everything(), |selector, (field, value)| {
            selector.and(FieldRequirement {
                field: field.to_owned(),
                operator: FieldOperator::Equals,
                value: value.to_owned(),
            })
        })
    }

    /// The events about `obj_or_ref` (client-go's `EventInterface.Search`): an object of any
    /// [`Resource`](kclient_apimachinery::Resource) type (by reference, `&pod`) or an
    /// `ObjectReference`. Lists this client's events with
    /// [`get_field_selector`](Self::get_field_selector) of the reference's name and
    /// namespace, and of its kind and uid when they are set (so a reference without a uid
    /// also finds the events about an earlier object of the same name).
    ///
    /// A namespace-bound client refuses, before sending, an object of another namespace: its
    /// events are in the object's namespace (those of a cluster-scoped object, such as a
    /// Node, in whichever namespace their recorder chose, usually `default`; search them with
    /// the all-namespaces client, `Api::<Event>::all`).
    pub async fn search(
        &self,
        obj_or_ref: impl IntoObjectReference,
    ) -> Result<ObjectList<Event>, Error> {
        let reference = obj_or_ref.into_object_reference();
        let namespace = reference.namespace.as_deref().unwrap_or("");
        if !self.namespace().is_empty() && namespace != self.namespace() {
            return Err(Error::invalid_request(format!(
                "won't be able to find any events of namespace '{namespace}' in namespace '{}'",
                self.namespace()
            )));
        }
        let selector = self.get_field_selector(
            Some(reference.name.as_deref().unwrap_or("")),
            Some(namespace),
            reference.kind.as_deref().filter(|kind| !kind.is_empty()),
            reference.uid.as_deref().filter(|uid| !uid.is_empty()),
        );
        self.list(&ListOptions::default().field_selector(selector.to_string()))
            .await
    }

    /// A client for the namespace of `event`, which must be this client's unless this client
    /// has none (all namespaces). `verb` names the write in the error.
    fn in_event_namespace(&self, event: &Event, verb: &str) -> Result<Api<Event>, Error> {
        let namespace = event.namespace();
        if !self.namespace().is_empty() && namespace != self.namespace() {
            return Err(Error::invalid_request(format!(
                "can't {verb} an event with namespace '{namespace}' in namespace '{}'",
                self.namespace()
            )));
        }
        if namespace.is_empty() {
            return Err(Error::invalid_request(format!(
                "can't {verb} an event without a namespace: set its metadata.namespace"
            )));
        }
        Ok(Api::namespaced(self.rest_client().clone(), namespace))
    }

    /// Creates `event` in its own `metadata.namespace` (client-go's
    /// `CreateWithEventNamespace`), which must be this client's unless this is the
    /// all-namespaces client (`Api::<Event>::all`). Fails before sending otherwise, or when
    /// the event has no namespace.
    pub async fn create_with_event_namespace(
        &self,
        event: &Event,
        opts: &CreateOptions,
    ) -> Result<Event, Error> {
        self.in_event_namespace(event, "create")?
            .create(event, opts)
            .await
    }

    /// Replaces `event` in its own `metadata.namespace` (client-go's
    /// `UpdateWithEventNamespace`); its resourceVersion, when set, is a precondition. The
    /// namespace must be this client's unless this is the all-namespaces client; fails before
    /// sending otherwise, or when the event has no namespace.
    pub async fn update_with_event_namespace(
        &self,
        event: &Event,
        opts: &UpdateOptions,
    ) -> Result<Event, Error> {
        self.in_event_namespace(event, "update")?
            .update(event, opts)
            .await
    }

    /// Applies the strategic merge patch `patch` to the event named like `incomplete_event`
    /// in its `metadata.namespace` (client-go's `PatchWithEventNamespace`, as the event
    /// recorder sends a repeat's new count and timestamps). Only the name and namespace of
    /// `incomplete_event` are read. The namespace must be this client's unless this is the
    /// all-namespaces client; fails before sending otherwise, or when the event has no
    /// namespace.
    pub async fn patch_with_event_namespace(
        &self,
        incomplete_event: &Event,
        patch: &Value,
        opts: &PatchOptions,
    ) -> Result<Event, Error> {
        self.in_event_namespace(incomplete_event, "patch")?
            .patch(
                incomplete_event.name(),
                &Patch::StrategicMerge(patch.clone()),
                opts,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use kclient_api::core::v1::ObjectReference;
    use kclient_rest::{Client, Config};

    use super::*;

    fn events(namespace: &str) -> Api<Event> {
        let client = Client::new(Config::new("https://127.0.0.1:1")).expect("a client");
        Api::namespaced(client, namespace)
    }

    #[test]
    fn the_field_selector_has_a_term_per_given_field() {
        let events = events("shop");
        assert_eq!(
            events
                .get_field_selector(Some("web-0"), Some("shop"), Some("Pod"), Some("u-1"))
                .to_string(),
            "involvedObject.kind=Pod,involvedObject.name=web-0,\
             involvedObject.namespace=shop,involvedObject.uid=u-1"
        );
        assert_eq!(
            events
                .get_field_selector(Some("a,b=c"), Some(""), None, None)
                .to_string(),
            r"involvedObject.name=a\,b\=c,involvedObject.namespace="
        );
        let none = events.get_field_selector(None, None, None, None);
        assert!(none.is_empty());
        assert_eq!(none.to_string(), "");
        // The printed form parses back to the same terms.
        let selector = events.get_field_selector(Some("x=y"), None, Some("Node"), None);
        assert_eq!(
            FieldSelector::parse(&selector.to_string()).unwrap(),
            selector
        );
    }

    #[tokio::test]
    async fn other_namespaces_are_refused_before_sending() {
        let events = events("shop");
        let reference = ObjectReference {
            name: Some("web-0".into()),
            namespace: Some("other".into()),
            ..Default::default()
        };
        let err = events.search(reference).await.unwrap_err();
        assert!(err.is_invalid_request(), "{err}");
        assert_eq!(
            err.to_string(),
            "won't be able to find any events of namespace 'other' in namespace 'shop'"
        );
        let mut event = Event::default();
        event.set_name("e");
        event.set_namespace("other");
        let err = events
            .create_with_event_namespace(&event, &CreateOptions::default())
            .await
            .unwrap_err();
        assert!(err.is_invalid_request(), "{err}");
        assert_eq!(
            err.to_string(),
            "can't create an event with namespace 'other' in namespace 'shop'"
        );
        event.set_namespace("");
        let all = Api::<Event>::all(events.rest_client().clone());
        let err = all
            .patch_with_event_namespace(&event, &Value::Null, &PatchOptions::default())
            .await
            .unwrap_err();
        assert!(err.is_invalid_request(), "{err}");
    }
}
