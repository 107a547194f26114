//! Request options (`metav1.ListOptions`, `GetOptions`, `CreateOptions`, `UpdateOptions`,
//! `PatchOptions`, `DeleteOptions`) as plain structs with `Default` and chainable setters.
//!
//! All but [`DeleteOptions`] travel as URL query parameters: [`ListOptions::to_query`] and its
//! siblings give the `(name, value)` pairs exactly as the API server reads them, leaving out
//! unset values as Go's `omitempty` does. [`DeleteOptions`] travels as the JSON request body
//! (`kind: DeleteOptions`, `apiVersion: v1`), as client-go sends it.

use std::fmt;

use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

/// Query parameters: `(name, value)` pairs, repeated names allowed (`dryRun`).
pub type QueryParams = Vec<(&'static str, String)>;

/// How `resourceVersion` is interpreted by a list (`metav1.ResourceVersionMatch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceVersionMatch {
    /// Any data at least as new as the given version (`NotOlderThan`).
    NotOlderThan,
    /// Exactly the given version (`Exact`).
    Exact,
}

impl ResourceVersionMatch {
    /// The wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceVersionMatch::NotOlderThan => "NotOlderThan",
            ResourceVersionMatch::Exact => "Exact",
        }
    }
}

impl fmt::Display for ResourceVersionMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the server does with unknown or duplicate fields in a write (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and return a warning header (the server's default).
    Warn,
    /// Fail the request.
    Strict,
}

impl FieldValidation {
    /// The wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            FieldValidation::Ignore => "Ignore",
            FieldValidation::Warn => "Warn",
            FieldValidation::Strict => "Strict",
        }
    }
}

impl fmt::Display for FieldValidation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Options of a list or watch (`metav1.ListOptions`).
///
/// ```
/// use kclient_apimachinery::{ListOptions, ResourceVersionMatch};
///
/// let opts = ListOptions::default()
///     .label_selector("app=web")
///     .limit(500)
///     .resource_version("0")
///     .resource_version_match(ResourceVersionMatch::NotOlderThan);
/// assert_eq!(
///     opts.to_query(),
///     [
///         ("labelSelector", "app=web".to_owned()),
///         ("resourceVersion", "0".to_owned()),
///         ("resourceVersionMatch", "NotOlderThan".to_owned()),
///         ("limit", "500".to_owned()),
///     ]
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ListOptions {
    /// A label selector such as `app=web,tier!=db`; `None` selects everything.
    pub label_selector: Option<String>,
    /// A field selector such as `metadata.name=x`; `None` selects everything.
    pub field_selector: Option<String>,
    /// Open a watch instead of listing (`watch=true`).
    pub watch: bool,
    /// Ask the server to send `BOOKMARK` events on a watch.
    pub allow_watch_bookmarks: bool,
    /// The resource version to list or watch from; see the Kubernetes docs on its semantics
    /// (`"0"` means any cached version).
    pub resource_version: Option<String>,
    /// How [`ListOptions::resource_version`] is read by a list.
    pub resource_version_match: Option<ResourceVersionMatch>,
    /// Server-side timeout of a list or watch, in seconds.
    pub timeout_seconds: Option<i64>,
    /// Page size of a list; `0` for no pagination.
    pub limit: i64,
    /// The continue token of the previous page.
    pub continue_token: Option<String>,
    /// On a watch, first send the current state as `ADDED` events, then a bookmark annotated
    /// `k8s.io/initial-events-end` (the WatchList protocol).
    pub send_initial_events: Option<bool>,
}

impl ListOptions {
    /// Sets [`ListOptions::label_selector`].
    pub fn label_selector(mut self, selector: impl Into<String>) -> Self {
        self.label_selector = Some(selector.into());
        self
    }

    /// Sets [`ListOptions::field_selector`].
    pub fn field_selector(mut self, selector: impl Into<String>) -> Self {
        self.field_selector = Some(selector.into());
        self
    }

    /// Sets [`ListOptions::watch`].
    pub fn watch(mut self, watch: bool) -> Self {
        self.watch = watch;
        self
    }

    /// Sets [`ListOptions::allow_watch_bookmarks`].
    pub fn allow_watch_bookmarks(mut self, allow: bool) -> Self {
        self.allow_watch_bookmarks = allow;
        self
    }

    /// Sets [`ListOptions::resource_version`].
    pub fn resource_version(mut self, resource_version: impl Into<String>) -> Self {
        self.resource_version = Some(resource_version.into());
        self
    }

    /// Sets [`ListOptions::resource_version_match`].
    pub fn resource_version_match(mut self, rv_match: ResourceVersionMatch) -> Self {
        self.resource_version_match = Some(rv_match);
        self
    }

    /// Sets [`ListOptions::timeout_seconds`].
    pub fn timeout_seconds(mut self, seconds: i64) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }

    /// Sets [`ListOptions::limit`].
    pub fn limit(mut self, limit: i64) -> Self {
        self.limit = limit;
        self
    }

    /// Sets [`ListOptions::continue_token`].
    pub fn continue_token(mut self, token: impl Into<String>) -> Self {
        self.continue_token = Some(token.into());
        self
    }

    /// Sets [`ListOptions::send_initial_events`].
    pub fn send_initial_events(mut self, send: bool) -> Self {
        self.send_initial_events = Some(send);
        self
    }

    /// The query parameters, leaving out unset and empty values (an empty selector means
    /// "everything" to the server, as does its absence).
    pub fn to_query(&self) -> QueryParams {
        let mut q = QueryParams::new();
        push_nonempty(&mut q, "labelSelector", self.label_selector.as_deref());
        push_nonempty(&mut q, "fieldSelector", self.field_selector.as_deref());
        if self.watch {
            q.push(("watch", "true".to_owned()));
        }
        if self.allow_watch_bookmarks {
            q.push(("allowWatchBookmarks", "true".to_owned()));
        }
        push_nonempty(&mut q, "resourceVersion", self.resource_version.as_deref());
        if let Some(m) = self.resource_version_match {
            q.push(("resourceVersionMatch", m.as_str().to_owned()));
        }
        if let Some(t) = self.timeout_seconds {
            q.push(("timeoutSeconds", t.to_string()));
        }
        if self.limit != 0 {
            q.push(("limit", self.limit.to_string()));
        }
        push_nonempty(&mut q, "continue", self.continue_token.as_deref());
        if let Some(send) = self.send_initial_events {
            q.push(("sendInitialEvents", send.to_string()));
        }
        q
    }
}

/// Options of a get (`metav1.GetOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GetOptions {
    /// `"0"` to accept any cached version; `None` for the latest.
    pub resource_version: Option<String>,
}

impl GetOptions {
    /// Sets [`GetOptions::resource_version`].
    pub fn resource_version(mut self, resource_version: impl Into<String>) -> Self {
        self.resource_version = Some(resource_version.into());
        self
    }

    /// The query parameters.
    pub fn to_query(&self) -> QueryParams {
        let mut q = QueryParams::new();
        push_nonempty(&mut q, "resourceVersion", self.resource_version.as_deref());
        q
    }
}

/// The fields shared by create, update and patch options.
fn write_query(
    dry_run: bool,
    field_manager: Option<&str>,
    field_validation: Option<FieldValidation>,
) -> QueryParams {
    let mut q = QueryParams::new();
    if dry_run {
        q.push(("dryRun", "All".to_owned()));
    }
    push_nonempty(&mut q, "fieldManager", field_manager);
    if let Some(v) = field_validation {
        q.push(("fieldValidation", v.as_str().to_owned()));
    }
    q
}

macro_rules! write_options {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Default, PartialEq, Eq)]
        #[non_exhaustive]
        pub struct $name {
            /// Validate and run admission, but persist nothing (`dryRun=All`).
            pub dry_run: bool,
            /// The name of the actor making the change, recorded in `managedFields`.
            pub field_manager: Option<String>,
            /// What the server does with unknown or duplicate fields.
            pub field_validation: Option<FieldValidation>,
        }

        impl $name {
            /// Sets `dry_run`.
            pub fn dry_run(mut self, dry_run: bool) -> Self {
                self.dry_run = dry_run;
                self
            }

            /// Sets `field_manager`.
            pub fn field_manager(mut self, manager: impl Into<String>) -> Self {
                self.field_manager = Some(manager.into());
                self
            }

            /// Sets `field_validation`.
            pub fn field_validation(mut self, validation: FieldValidation) -> Self {
                self.field_validation = Some(validation);
                self
            }

            /// The query parameters.
            pub fn to_query(&self) -> QueryParams {
                write_query(self.dry_run, self.field_manager.as_deref(), self.field_validation)
            }
        }
    };
}

write_options!(
    /// Options of a create (`metav1.CreateOptions`).
    CreateOptions
);
write_options!(
    /// Options of an update (`metav1.UpdateOptions`).
    UpdateOptions
);

/// Options of a patch, including server-side apply (`metav1.PatchOptions`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PatchOptions {
    /// Validate and run admission, but persist nothing (`dryRun=All`).
    pub dry_run: bool,
    /// The name of the actor making the change; required for apply patches.
    pub field_manager: Option<String>,
    /// What the server does with unknown or duplicate fields.
    pub field_validation: Option<FieldValidation>,
    /// For apply patches: take ownership of fields other managers own instead of failing
    /// with a conflict. Must be unset for other patch types.
    pub force: Option<bool>,
}

impl PatchOptions {
    /// Options for server-side apply as `field_manager`, optionally forcing conflicts.
    pub fn apply(field_manager: impl Into<String>) -> Self {
        PatchOptions {
            field_manager: Some(field_manager.into()),
            ..PatchOptions::default()
        }
    }

    /// Sets [`PatchOptions::dry_run`].
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// Sets [`PatchOptions::field_manager`].
    pub fn field_manager(mut self, manager: impl Into<String>) -> Self {
        self.field_manager = Some(manager.into());
        self
    }

    /// Sets [`PatchOptions::field_validation`].
    pub fn field_validation(mut self, validation: FieldValidation) -> Self {
        self.field_validation = Some(validation);
        self
    }

    /// Sets [`PatchOptions::force`].
    pub fn force(mut self, force: bool) -> Self {
        self.force = Some(force);
        self
    }

    /// The query parameters.
    pub fn to_query(&self) -> QueryParams {
        let mut q = write_query(
            self.dry_run,
            self.field_manager.as_deref(),
            self.field_validation,
        );
        if let Some(force) = self.force {
            q.push(("force", force.to_string()));
        }
        q
    }
}

/// Whether and how dependents are garbage-collected on delete (`metav1.DeletionPropagation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PropagationPolicy {
    /// Leave dependents in place (remove their owner reference).
    Orphan,
    /// Delete the object now and its dependents in the background.
    Background,
    /// Delete dependents first; the object stays (with a finalizer) until they are gone.
    Foreground,
}

impl PropagationPolicy {
    /// The wire form.
    pub fn as_str(self) -> &'static str {
        match self {
            PropagationPolicy::Orphan => "Orphan",
            PropagationPolicy::Background => "Background",
            PropagationPolicy::Foreground => "Foreground",
        }
    }
}

impl fmt::Display for PropagationPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Conditions a delete must meet, or it fails with a Conflict (`metav1.Preconditions`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Preconditions {
    /// The object's UID must be this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
    /// The object's resource version must be this.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
}

/// Options of a delete (`metav1.DeleteOptions`), sent as the JSON request body.
///
/// ```
/// use kclient_apimachinery::{DeleteOptions, PropagationPolicy};
///
/// let opts = DeleteOptions::default()
///     .propagation_policy(PropagationPolicy::Foreground)
///     .grace_period_seconds(0);
/// assert_eq!(
///     serde_json::to_string(&opts).unwrap(),
///     r#"{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"propagationPolicy":"Foreground"}"#
/// );
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeleteOptions {
    /// Seconds the object has to shut down; `0` deletes immediately; `None` uses the
    /// object's default.
    pub grace_period_seconds: Option<i64>,
    /// Conditions the object must meet.
    pub preconditions: Option<Preconditions>,
    /// What happens to dependents; `None` uses the resource's default.
    pub propagation_policy: Option<PropagationPolicy>,
    /// Validate and run admission, but delete nothing (`dryRun: ["All"]`).
    pub dry_run: bool,
}

impl DeleteOptions {
    /// Sets [`DeleteOptions::grace_period_seconds`].
    pub fn grace_period_seconds(mut self, seconds: i64) -> Self {
        self.grace_period_seconds = Some(seconds);
        self
    }

    /// Sets [`DeleteOptions::propagation_policy`].
    pub fn propagation_policy(mut self, policy: PropagationPolicy) -> Self {
        self.propagation_policy = Some(policy);
        self
    }

    /// Requires the object to have this UID.
    pub fn precondition_uid(mut self, uid: impl Into<String>) -> Self {
        self.preconditions
            .get_or_insert_with(Preconditions::default)
            .uid = Some(uid.into());
        self
    }

    /// Requires the object to be at this resource version.
    pub fn precondition_resource_version(mut self, resource_version: impl Into<String>) -> Self {
        self.preconditions
            .get_or_insert_with(Preconditions::default)
            .resource_version = Some(resource_version.into());
        self
    }

    /// Sets [`DeleteOptions::dry_run`].
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = dry_run;
        self
    }

    /// The JSON request body.
    pub fn to_body(&self) -> Vec<u8> {
        // Serializing plain strings and integers into a Vec cannot fail.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

impl Serialize for DeleteOptions {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("kind", "DeleteOptions")?;
        map.serialize_entry("apiVersion", "v1")?;
        if let Some(g) = self.grace_period_seconds {
            map.serialize_entry("gracePeriodSeconds", &g)?;
        }
        if let Some(p) = &self.preconditions {
            map.serialize_entry("preconditions", p)?;
        }
        if let Some(p) = self.propagation_policy {
            map.serialize_entry("propagationPolicy", p.as_str())?;
        }
        if self.dry_run {
            map.serialize_entry("dryRun", &["All"])?;
        }
        map.end()
    }
}

fn push_nonempty(q: &mut QueryParams, name: &'static str, value: Option<&str>) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        q.push((name, v.to_owned()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&'static str, &str)]) -> QueryParams {
        pairs.iter().map(|(k, v)| (*k, (*v).to_owned())).collect()
    }

    #[test]
    fn default_options_have_no_query() {
        assert!(ListOptions::default().to_query().is_empty());
        assert!(GetOptions::default().to_query().is_empty());
        assert!(CreateOptions::default().to_query().is_empty());
        assert!(UpdateOptions::default().to_query().is_empty());
        assert!(PatchOptions::default().to_query().is_empty());
    }

    #[test]
    fn list_options_give_every_parameter() {
        let opts = ListOptions::default()
            .label_selector("app in (a,b)")
            .field_selector("metadata.name=x")
            .watch(true)
            .allow_watch_bookmarks(true)
            .resource_version("123")
            .resource_version_match(ResourceVersionMatch::Exact)
            .timeout_seconds(300)
            .limit(500)
            .continue_token("c")
            .send_initial_events(true);
        assert_eq!(
            opts.to_query(),
            q(&[
                ("labelSelector", "app in (a,b)"),
                ("fieldSelector", "metadata.name=x"),
                ("watch", "true"),
                ("allowWatchBookmarks", "true"),
                ("resourceVersion", "123"),
                ("resourceVersionMatch", "Exact"),
                ("timeoutSeconds", "300"),
                ("limit", "500"),
                ("continue", "c"),
                ("sendInitialEvents", "true"),
            ])
        );
    }

    #[test]
    fn empty_strings_are_left_out_but_explicit_zero_timeouts_and_false_are_kept() {
        let opts = ListOptions::default()
            .label_selector("")
            .resource_version("")
            .timeout_seconds(0)
            .send_initial_events(false);
        assert_eq!(
            opts.to_query(),
            q(&[("timeoutSeconds", "0"), ("sendInitialEvents", "false")])
        );
    }

    #[test]
    fn write_options_give_their_parameters() {
        let create = CreateOptions::default()
            .dry_run(true)
            .field_manager("me")
            .field_validation(FieldValidation::Strict);
        let expected = q(&[
            ("dryRun", "All"),
            ("fieldManager", "me"),
            ("fieldValidation", "Strict"),
        ]);
        assert_eq!(create.to_query(), expected);
        let update = UpdateOptions::default()
            .dry_run(true)
            .field_manager("me")
            .field_validation(FieldValidation::Strict);
        assert_eq!(update.to_query(), expected);
        let apply = PatchOptions::apply("ctl").force(true);
        assert_eq!(
            apply.to_query(),
            q(&[("fieldManager", "ctl"), ("force", "true")])
        );
        let get = GetOptions::default().resource_version("0");
        assert_eq!(get.to_query(), q(&[("resourceVersion", "0")]));
    }

    #[test]
    fn delete_options_serialize_as_a_body() {
        assert_eq!(
            String::from_utf8(DeleteOptions::default().to_body()).unwrap(),
            r#"{"kind":"DeleteOptions","apiVersion":"v1"}"#
        );
        let opts = DeleteOptions::default()
            .grace_period_seconds(30)
            .precondition_uid("u-1")
            .precondition_resource_version("7")
            .propagation_policy(PropagationPolicy::Background)
            .dry_run(true);
        assert_eq!(
            String::from_utf8(opts.to_body()).unwrap(),
            r#"{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":30,"preconditions":{"uid":"u-1","resourceVersion":"7"},"propagationPolicy":"Background","dryRun":["All"]}"#
        );
    }
}
