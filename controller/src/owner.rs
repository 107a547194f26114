//! Children and their owners: the owner references a child carries to the objects that own it,
//! which [`owns`](crate::ControllerBuilder::owns) follows back (to the controller) and the
//! garbage collector uses to delete the child with its owners.
//!
//! | function | controller-runtime's | what it does |
//! |---|---|---|
//! | [`owner_reference`] | | the controller reference to an owner |
//! | [`set_controller_reference`] | `SetControllerReference` | makes the owner the child's controller; refuses when another object controls it |
//! | [`set_owner_reference`] | `SetOwnerReference` | makes the owner an owner, not the controller |
//! | [`remove_owner_reference`] | `RemoveOwnerReference` | removes the reference to the owner |
//! | [`remove_controller_reference`] | `RemoveControllerReference` | removes it when it is the controller reference |
//! | [`has_owner_reference`] | `HasOwnerReference` | whether the child references the owner |
//! | [`has_controller_reference`] | `HasControllerReference` | whether the child has a controller |
//! | [`apply_owned`] | `SetControllerReference` + `Patch(client.Apply)` | server-side applies a child with its controller reference |
//!
//! The `set_*` and `remove_*` functions change the child in memory, as controller-runtime's
//! do; create or update it afterwards. They know an owner as controller-runtime does: a
//! reference names it when it has its API group (any version), kind and name; the UID is not
//! compared, so a reference to an owner deleted and created again is replaced, not added to.
//! They check namespaces as the garbage collector needs them: a namespaced owner's children
//! are namespaced and in its namespace (see [`set_controller_reference`]).

use std::fmt;

use kclient_apimachinery::meta::v1::OwnerReference;
use kclient_apimachinery::{
    ApiResource, AsObject, Error, GroupVersion, Object, ObjectMetaAccessor, OwnerRef, PatchOptions,
    Resource, ResourceScope, get_controller_of,
};
use kclient_rest::{Client, Verb};
use serde_json::Value;

/// A controller owner reference to `owner`: `controller: true` and `blockOwnerDeletion: true`,
/// so a foreground deletion of the owner waits for the child. [`set_controller_reference`]
/// puts it in a child, with the checks the server and the garbage collector need (at most one
/// reference of an object may be a controller; owners do not cross namespaces).
///
/// ```
/// use kclient_api::core::v1::ConfigMap;
///
/// let owner: ConfigMap = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "settings", "namespace": "apps", "uid": "u-1"}
/// })).unwrap();
/// let reference = kclient_controller::owner_reference(&owner);
/// assert_eq!((reference.kind.as_str(), reference.name.as_str()), ("ConfigMap", "settings"));
/// assert_eq!(reference.api_version.as_str(), "v1");
/// assert_eq!(reference.controller, Some(true));
/// ```
pub fn owner_reference<K: Resource>(owner: &K) -> OwnerReference {
    OwnerReference {
        api_version: K::API_VERSION.into(),
        kind: K::KIND.into(),
        name: owner.name().into(),
        uid: owner.uid().into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// [`owner_reference`] for an owner whose type is known only at run time (the primary of a
/// [`for_dynamic`](crate::ControllerBuilder::for_dynamic) controller, an `Unstructured`, or
/// a `PartialObjectMetadata`): `resource` gives its `apiVersion` and kind. Put it in a
/// child's `metadata.ownerReferences` before creating the child, so that
/// [`owns`](crate::ControllerBuilder::owns) finds the owner and the garbage collector
/// deletes the child with it.
///
/// ```
/// use kclient_apimachinery::{ApiResource, GroupVersionKind, Unstructured};
///
/// let widgets = ApiResource::new(&GroupVersionKind::new("example.com", "v1", "Widget"), "widgets", true);
/// let owner = Unstructured::from_value(serde_json::json!({
///     "apiVersion": "example.com/v1", "kind": "Widget",
///     "metadata": {"name": "w1", "namespace": "apps", "uid": "u-1"}
/// })).unwrap();
/// let reference = kclient_controller::owner_reference_for(&widgets, &owner);
/// assert_eq!(reference.api_version.as_str(), "example.com/v1");
/// assert_eq!((reference.kind.as_str(), reference.name.as_str()), ("Widget", "w1"));
/// assert_eq!(reference.controller, Some(true));
/// ```
pub fn owner_reference_for<O: Object + ?Sized>(
    resource: &ApiResource,
    owner: &O,
) -> OwnerReference {
    OwnerReference {
        api_version: resource.api_version.as_str().into(),
        kind: resource.kind.as_str().into(),
        name: owner.name().into(),
        uid: owner.uid().into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// Server-side applies `child`, an apply configuration of a `C` as JSON, as `field_manager`
/// (forcing conflicts: this controller owns the fields it sets), with `owner` as its controller
/// owner; returns the child as the server stored it.
///
/// The child's `apiVersion` and `kind` are set from `C`, and `ownerReferences` to
/// [`owner_reference`]`(owner)`. Its namespace is checked as controller-runtime's
/// `SetControllerReference` checks it: the child of a namespaced owner goes in the owner's
/// namespace (set when `child` names none); the namespaced child of a cluster-scoped owner
/// goes in the namespace `child` names. Only the fields in `child` are claimed by
/// `field_manager`; fields set by others stay. To apply a typed object or an apply
/// configuration, pass its [`Apply::apply_body`](kclient_apimachinery::Apply::apply_body):
/// `serde_json::to_value` of a typed object writes `null` for the unset fields Go writes as
/// `null` (a condition's `lastTransitionTime`), and a `null` in an apply body claims the field.
///
/// Fails with an invalid-request error, before sending anything, when `child` is not a JSON
/// object or has no `metadata.name`, when it names another namespace than its namespaced
/// owner's (owner references do not cross namespaces), when `C` is cluster-scoped and the
/// owner namespaced (the garbage collector could never collect it), or when `C` is
/// namespaced, the owner cluster-scoped and `child` names no namespace.
///
/// ```no_run
/// # async fn run(client: kclient_rest::Client, cm: std::sync::Arc<kclient_api::core::v1::ConfigMap>)
/// #     -> Result<(), kclient_apimachinery::Error> {
/// use kclient_api::core::v1::Secret;
/// use kclient_apimachinery::Object;
///
/// let secret: Secret = kclient_controller::apply_owned(&client, "mirror", &*cm, serde_json::json!({
///     "metadata": {"name": cm.name()},
///     "stringData": {"copied": "yes"},
/// }))
/// .await?;
/// # let _ = secret; Ok(()) }
/// ```
pub async fn apply_owned<C: Resource, K: Resource>(
    client: &Client,
    field_manager: &str,
    owner: &K,
    mut child: Value,
) -> Result<C, Error> {
    let Some(fields) = child.as_object_mut() else {
        return Err(Error::invalid_request(format!(
            "the apply configuration of a {} must be a JSON object",
            C::KIND
        )));
    };
    fields.insert("apiVersion".into(), C::API_VERSION.into());
    fields.insert("kind".into(), C::KIND.into());
    let metadata = fields
        .entry("metadata")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(metadata) = metadata.as_object_mut() else {
        return Err(Error::invalid_request(format!(
            "the metadata of the apply configuration of a {} must be a JSON object",
            C::KIND
        )));
    };
    let name = match metadata.get("name").and_then(Value::as_str) {
        Some(name) if !name.is_empty() => name.to_owned(),
        _ => {
            return Err(Error::invalid_request(format!(
                "the apply configuration of a {} owned by {} {} has no metadata.name",
                C::KIND,
                K::KIND,
                owner.name()
            )));
        }
    };
    let given = match metadata.get("namespace") {
        None | Some(Value::Null) => "",
        Some(Value::String(namespace)) => namespace.as_str(),
        Some(_) => {
            return Err(Error::invalid_request(format!(
                "the metadata.namespace of the apply configuration of {} {name} must be a string",
                C::KIND
            )));
        }
    };
    let namespace = child_namespace::<C, K>(owner, given, &name).map_err(Error::invalid_request)?;
    if namespace.is_empty() && <C::Scope as ResourceScope>::NAMESPACED {
        // Nothing to put in the URL: the request could only fail with a 404.
        return Err(Error::invalid_request(format!(
            "the apply configuration of {} {name}, owned by the cluster-scoped {} {}, has no \
             metadata.namespace",
            C::KIND,
            K::KIND,
            owner.name()
        )));
    }
    if !namespace.is_empty() {
        metadata.insert("namespace".into(), namespace.clone().into());
    }
    let reference = serde_json::to_value(owner_reference(owner))
        .map_err(|e| Error::invalid_request(format!("encoding the owner reference: {e}")))?;
    metadata.insert("ownerReferences".into(), Value::Array(vec![reference]));
    let options = PatchOptions::default()
        .field_manager(field_manager.to_owned())
        .force(true);
    client
        .verb(Verb::Patch)
        .group_version(C::GROUP, C::VERSION)
        .namespace(&namespace)
        .resource(C::PLURAL)
        .name(&name)
        .params(options.to_query())
        .content_type("application/apply-patch+yaml")
        .json(&child)
        .send()
        .await
}

/// Makes `owner` the controller of `child`, in `child`'s metadata (controller-runtime's
/// `SetControllerReference`); create or update `child` afterwards to store it.
///
/// The reference is [`owner_reference`]`(owner)` (`controller` and `blockOwnerDeletion` true).
/// It replaces a reference `child` already has to the same object — same API group (any
/// version), kind and name, as controller-runtime compares them, so a new UID or another
/// version of the owner's kind takes the old reference's place — and is appended otherwise.
///
/// The namespaces are checked as [`apply_owned`] checks them: a namespaced owner's child must
/// be namespaced and in the owner's namespace (a child with no namespace yet is put in it); a
/// cluster-scoped owner may own children of any namespace. On error `child` is unchanged.
///
/// # Errors
///
/// - [`is_already_owned`](OwnerReferenceError::is_already_owned): `child` already has a
///   controller reference to another object (an object has at most one controller;
///   controller-runtime's `AlreadyOwnedError`).
///   [`controller`](OwnerReferenceError::controller) is that reference.
/// - [`is_invalid_owner`](OwnerReferenceError::is_invalid_owner): `owner` is namespaced and
///   `child` is cluster-scoped or in another namespace.
///
/// ```
/// use kclient_api::core::v1::{ConfigMap, Secret};
/// use kclient_apimachinery::Object;
/// use kclient_controller::set_controller_reference;
///
/// let owner: ConfigMap = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "settings", "namespace": "apps", "uid": "u-1"}
/// })).unwrap();
/// let mut child: Secret = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "settings-copy"}
/// })).unwrap();
/// set_controller_reference(&owner, &mut child).unwrap();
/// assert_eq!(child.namespace(), "apps");
/// assert_eq!(child.owner_references()[0].uid, "u-1");
///
/// let other: ConfigMap = serde_json::from_value(serde_json::json!({
///     "metadata": {"name": "defaults", "namespace": "apps", "uid": "u-2"}
/// })).unwrap();
/// let error = set_controller_reference(&other, &mut child).unwrap_err();
/// assert!(error.is_already_owned());
/// assert_eq!(error.controller().map(|c| c.name.as_str()), Some("settings"));
/// ```
pub fn set_controller_reference<K, C>(owner: &K, child: &mut C) -> Result<(), OwnerReferenceError>
where
    K: Resource,
    C: Resource + ObjectMetaAccessor,
{
    let namespace = check_owner::<C, K>(owner, child)?;
    if let Some(controller) = child
        .object_meta()
        .owner_references
        .iter()
        .flat_map(|references| references.iter())
        .find(|reference| reference.controller == Some(true))
        && !refers_to(reference_parts(controller), owner)
    {
        return Err(OwnerReferenceError {
            kind: ErrorKind::AlreadyOwned(Box::new(controller.clone())),
            message: format!(
                "{} {} is already controlled by {} {}",
                C::KIND,
                object_key(child),
                controller.kind,
                controller.name
            ),
        });
    }
    set_namespace(child, &namespace);
    upsert(child, owner_reference(owner), owner);
    Ok(())
}

/// Makes `owner` an owner of `child` that does not control it, in `child`'s metadata
/// (controller-runtime's `SetOwnerReference`): the garbage collector deletes `child` once all
/// its owners are gone, and [`owns`](crate::ControllerBuilder::owns) does not follow the
/// reference. Create or update `child` afterwards to store it.
///
/// The reference has `apiVersion`, `kind`, `name` and `uid`, no `controller` or
/// `blockOwnerDeletion`. Like [`set_controller_reference`] it replaces a reference to the same
/// object (same group, kind and name), a controller reference included, which then no longer
/// controls; it is appended otherwise. The namespaces are checked as there.
///
/// # Errors
///
/// [`is_invalid_owner`](OwnerReferenceError::is_invalid_owner): `owner` is namespaced and
/// `child` is cluster-scoped or in another namespace. `child` is then unchanged.
pub fn set_owner_reference<K, C>(owner: &K, child: &mut C) -> Result<(), OwnerReferenceError>
where
    K: Resource,
    C: Resource + ObjectMetaAccessor,
{
    let namespace = check_owner::<C, K>(owner, child)?;
    set_namespace(child, &namespace);
    let reference = OwnerReference {
        controller: None,
        block_owner_deletion: None,
        ..owner_reference(owner)
    };
    upsert(child, reference, owner);
    Ok(())
}

/// Removes `child`'s reference to `owner` (the first one to the same group, kind and name),
/// controller or not, from its metadata (controller-runtime's `RemoveOwnerReference`).
///
/// # Errors
///
/// [`is_not_owned`](OwnerReferenceError::is_not_owned): `child` has no reference to `owner`.
pub fn remove_owner_reference<K, C>(owner: &K, child: &mut C) -> Result<(), OwnerReferenceError>
where
    K: Resource,
    C: Resource + ObjectMetaAccessor,
{
    let Some(index) = position(child, owner) else {
        return Err(not_owned(owner, child));
    };
    remove_at(child, index);
    Ok(())
}

/// Removes `child`'s controller reference to `owner` from its metadata (controller-runtime's
/// `RemoveControllerReference`), as a controller does before another takes over.
///
/// # Errors
///
/// - [`is_not_owned`](OwnerReferenceError::is_not_owned): `child` has no reference to `owner`.
/// - [`is_not_controller`](OwnerReferenceError::is_not_controller): its (first) reference to
///   `owner` is not a controller reference. [`remove_owner_reference`] removes that one.
pub fn remove_controller_reference<K, C>(
    owner: &K,
    child: &mut C,
) -> Result<(), OwnerReferenceError>
where
    K: Resource,
    C: Resource + ObjectMetaAccessor,
{
    let Some(index) = position(child, owner) else {
        return Err(not_owned(owner, child));
    };
    if child
        .object_meta()
        .owner_references
        .as_deref()
        .unwrap_or_default()[index]
        .controller
        != Some(true)
    {
        return Err(OwnerReferenceError {
            kind: ErrorKind::NotController,
            message: format!(
                "{} {} is not the controller of {} {}",
                K::KIND,
                owner.name(),
                C::KIND,
                object_key(child)
            ),
        });
    }
    remove_at(child, index);
    Ok(())
}

/// Whether `child` has a reference to `owner`, controller or not: one to the same API group
/// (any version), kind and name (controller-runtime's `HasOwnerReference`). To ask whether
/// `owner` is the controller, by UID, use
/// [`is_controlled_by`](kclient_apimachinery::is_controlled_by).
pub fn has_owner_reference<K: Resource, C: AsObject + ?Sized>(owner: &K, child: &C) -> bool {
    child
        .as_object()
        .owner_references()
        .iter()
        .any(|reference| refers_to(ref_parts(reference), owner))
}

/// Whether `child` has a controller reference, to any owner (controller-runtime's
/// `HasControllerReference`); [`get_controller_of`](kclient_apimachinery::get_controller_of)
/// says which.
pub fn has_controller_reference<C: AsObject + ?Sized>(child: &C) -> bool {
    get_controller_of(child).is_some()
}

/// Why an owner reference could not be set or removed; its `is_*` methods say which rule.
/// Converts into [`kclient_apimachinery::Error`] (as [`Error::other`]), so `?` works in a
/// reconcile that returns it.
#[derive(Debug, Clone)]
pub struct OwnerReferenceError {
    kind: ErrorKind,
    message: String,
}

#[derive(Debug, Clone)]
enum ErrorKind {
    AlreadyOwned(Box<OwnerReference>),
    InvalidOwner,
    NotOwned,
    NotController,
}

impl OwnerReferenceError {
    /// Whether the child already has a controller reference to another object
    /// (controller-runtime's `AlreadyOwnedError`).
    pub fn is_already_owned(&self) -> bool {
        matches!(self.kind, ErrorKind::AlreadyOwned(_))
    }

    /// For an [already-owned](Self::is_already_owned) error, the child's controller reference.
    pub fn controller(&self) -> Option<&OwnerReference> {
        match &self.kind {
            ErrorKind::AlreadyOwned(controller) => Some(controller),
            _ => None,
        }
    }

    /// Whether the owner may not own the child: owner references do not cross namespaces,
    /// and a namespaced owner cannot own a cluster-scoped child (the garbage collector could
    /// never resolve the reference).
    pub fn is_invalid_owner(&self) -> bool {
        matches!(self.kind, ErrorKind::InvalidOwner)
    }

    /// Whether the child has no reference to the owner to remove.
    pub fn is_not_owned(&self) -> bool {
        matches!(self.kind, ErrorKind::NotOwned)
    }

    /// Whether the child's reference to the owner is not a controller reference.
    pub fn is_not_controller(&self) -> bool {
        matches!(self.kind, ErrorKind::NotController)
    }
}

impl fmt::Display for OwnerReferenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for OwnerReferenceError {}

/// So that `?` works in a function returning the API error: the result is an
/// [`Error::other`] from which `downcast_ref::<OwnerReferenceError>()` gives this error back.
impl From<OwnerReferenceError> for Error {
    fn from(error: OwnerReferenceError) -> Self {
        Error::other(error)
    }
}

/// The namespace of a child `name` of `owner`, from the namespace the child names (`given`,
/// `""` for none), as controller-runtime's `SetControllerReference` checks it: a namespaced
/// owner's children live in its namespace (the garbage collector deletes a child whose
/// namespaced owner is not in its namespace, and cannot collect a cluster-scoped child of a
/// namespaced owner); a cluster-scoped owner's namespaced children live where they say (`""`
/// when they say nothing); cluster-scoped children have no namespace (`""`). The error is
/// the message saying which rule is broken.
fn child_namespace<C: Resource, K: Resource>(
    owner: &K,
    given: &str,
    name: &str,
) -> Result<String, String> {
    let owner_namespace = owner.namespace();
    if !<C::Scope as ResourceScope>::NAMESPACED {
        if !owner_namespace.is_empty() {
            return Err(format!(
                "{} {name} is cluster-scoped and cannot be owned by {} {} of namespace \
                 {owner_namespace}",
                C::KIND,
                K::KIND,
                owner.name()
            ));
        }
        return Ok(String::new());
    }
    if owner_namespace.is_empty() || given.is_empty() || given == owner_namespace {
        let namespace = if owner_namespace.is_empty() {
            given
        } else {
            owner_namespace
        };
        return Ok(namespace.to_owned());
    }
    Err(format!(
        "{} {name} of namespace {given} cannot be owned by {} {} of namespace \
         {owner_namespace}: owner references do not cross namespaces",
        C::KIND,
        K::KIND,
        owner.name()
    ))
}

/// [`child_namespace`] for a typed child, its error an invalid-owner one.
fn check_owner<C: Resource, K: Resource>(
    owner: &K,
    child: &C,
) -> Result<String, OwnerReferenceError> {
    child_namespace::<C, K>(owner, child.namespace(), child.name()).map_err(|message| {
        OwnerReferenceError {
            kind: ErrorKind::InvalidOwner,
            message,
        }
    })
}

/// Puts a child that names no namespace in `namespace` (the one [`child_namespace`] chose).
fn set_namespace<C: Object>(child: &mut C, namespace: &str) {
    if child.namespace().is_empty() && !namespace.is_empty() {
        child.set_namespace(namespace);
    }
}

/// Replaces `child`'s first reference to `owner` with `reference`, or appends it.
fn upsert<K: Resource, C: ObjectMetaAccessor>(child: &mut C, reference: OwnerReference, owner: &K) {
    let index = position(child, owner);
    let references = child
        .object_meta_mut()
        .owner_references
        .get_or_insert_with(Default::default);
    match index.and_then(|index| references.get_mut(index)) {
        Some(slot) => *slot = reference,
        None => references.push(reference),
    }
}

/// Removes `child`'s reference at `index`, leaving no list (as Go's `omitempty` writes
/// none) when it was the last.
fn remove_at<C: ObjectMetaAccessor>(child: &mut C, index: usize) {
    let metadata = child.object_meta_mut();
    if let Some(references) = metadata.owner_references.take() {
        let mut references = references.into_vec();
        if index < references.len() {
            references.remove(index);
        }
        if !references.is_empty() {
            metadata.owner_references = Some(references.into());
        }
    }
}

/// The index of `child`'s first reference to `owner`.
fn position<K: Resource, C: ObjectMetaAccessor>(child: &C, owner: &K) -> Option<usize> {
    child
        .object_meta()
        .owner_references
        .as_deref()
        .unwrap_or_default()
        .iter()
        .position(|reference| refers_to(reference_parts(reference), owner))
}

fn not_owned<K: Resource, C: Resource>(owner: &K, child: &C) -> OwnerReferenceError {
    OwnerReferenceError {
        kind: ErrorKind::NotOwned,
        message: format!(
            "{} {} has no owner reference to {} {}",
            C::KIND,
            object_key(child),
            K::KIND,
            owner.name()
        ),
    }
}

/// `namespace/name`, or `name` for an object without a namespace.
fn object_key<C: Object>(child: &C) -> String {
    match child.namespace() {
        "" => child.name().to_owned(),
        namespace => format!("{namespace}/{}", child.name()),
    }
}

/// A reference's `apiVersion`, `kind` and `name`.
type Parts<'a> = (&'a str, &'a str, &'a str);

fn reference_parts(reference: &OwnerReference) -> Parts<'_> {
    (&reference.api_version, &reference.kind, &reference.name)
}

fn ref_parts<'a>(reference: &OwnerRef<'a>) -> Parts<'a> {
    (reference.api_version, reference.kind, reference.name)
}

/// Whether a reference names `owner`: the same API group (the version may differ), kind and
/// name, as controller-runtime's `referSameObject`; an `apiVersion` that does not parse
/// names nothing.
fn refers_to<K: Resource>((api_version, kind, name): Parts<'_>, owner: &K) -> bool {
    kind == K::KIND
        && name == owner.name()
        && GroupVersion::parse(api_version).is_ok_and(|version| version.group == K::GROUP)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use kclient_api::core::v1::{ConfigMap, Namespace, Secret};
    use serde_json::{Value, json};

    use super::*;

    fn config_map(name: &str, namespace: &str, uid: &str) -> ConfigMap {
        serde_json::from_value(json!({
            "metadata": {"name": name, "namespace": namespace, "uid": uid}
        }))
        .unwrap()
    }

    fn namespace(name: &str, uid: &str) -> Namespace {
        serde_json::from_value(json!({"metadata": {"name": name, "uid": uid}})).unwrap()
    }

    /// A Secret `child` in `namespace` (none when `""`) with `references` as its owners.
    fn secret(namespace: &str, references: Value) -> Secret {
        let mut metadata = json!({"name": "child", "ownerReferences": references});
        if !namespace.is_empty() {
            metadata["namespace"] = namespace.into();
        }
        serde_json::from_value(json!({ "metadata": metadata })).unwrap()
    }

    fn reference(api_version: &str, kind: &str, name: &str, uid: &str, controller: bool) -> Value {
        json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
            "controller": controller})
    }

    /// The child's references as `(apiVersion, kind, name, uid, controller, blockOwnerDeletion)`.
    fn references(child: &Secret) -> Vec<(String, String, String, String, bool, bool)> {
        child
            .owner_references()
            .iter()
            .map(|r| {
                (
                    r.api_version.to_owned(),
                    r.kind.to_owned(),
                    r.name.to_owned(),
                    r.uid.to_owned(),
                    r.controller,
                    r.block_owner_deletion,
                )
            })
            .collect()
    }

    fn row(
        api_version: &str,
        kind: &str,
        name: &str,
        uid: &str,
        controller: bool,
        block: bool,
    ) -> (String, String, String, String, bool, bool) {
        (
            api_version.into(),
            kind.into(),
            name.into(),
            uid.into(),
            controller,
            block,
        )
    }

    #[test]
    fn set_controller_reference_appends_beside_other_owners_and_fills_the_namespace() {
        let owner = config_map("settings", "apps", "u-1");
        let mut child = secret(
            "",
            json!([reference("v1", "Namespace", "apps", "n-1", false)]),
        );
        set_controller_reference(&owner, &mut child).unwrap();
        assert_eq!(child.namespace(), "apps");
        assert_eq!(
            references(&child),
            [
                row("v1", "Namespace", "apps", "n-1", false, false),
                row("v1", "ConfigMap", "settings", "u-1", true, true),
            ]
        );
        // Setting it again changes nothing.
        let before = child.clone();
        set_controller_reference(&owner, &mut child).unwrap();
        assert_eq!(child.metadata, before.metadata);
    }

    #[test]
    fn set_controller_reference_replaces_a_reference_to_the_same_group_kind_and_name() {
        // Another version of the kind, an old UID (the owner was created again), and a
        // reference that did not control: all name the same owner, and are replaced in place.
        for existing in [
            reference("v1beta1", "ConfigMap", "settings", "old", true),
            reference("v1", "ConfigMap", "settings", "old", false),
        ] {
            let owner = config_map("settings", "apps", "u-1");
            let other = reference("v1", "Secret", "x", "s-1", false);
            let mut child = secret("apps", json!([existing, other]));
            set_controller_reference(&owner, &mut child).unwrap();
            assert_eq!(
                references(&child),
                [
                    row("v1", "ConfigMap", "settings", "u-1", true, true),
                    row("v1", "Secret", "x", "s-1", false, false),
                ]
            );
        }
    }

    #[test]
    fn set_controller_reference_refuses_a_child_another_object_controls() {
        let owner = config_map("settings", "apps", "u-1");
        // Another name, another kind, and the same kind and name in another group: each is
        // another object.
        for controller in [
            reference("v1", "ConfigMap", "defaults", "u-2", true),
            reference("v1", "Secret", "settings", "u-3", true),
            reference("example.com/v1", "ConfigMap", "settings", "u-4", true),
        ] {
            let mut child = secret("", json!([controller.clone()]));
            let before = child.clone();
            let error = set_controller_reference(&owner, &mut child).unwrap_err();
            assert!(error.is_already_owned(), "{error}");
            assert!(!error.is_invalid_owner() && !error.is_not_owned());
            let current = error.controller().expect("the current controller");
            assert_eq!(serde_json::to_value(current).unwrap(), controller);
            assert!(error.to_string().contains("already controlled"), "{error}");
            // Nothing changed, not even the namespace.
            assert_eq!(child.metadata, before.metadata);
        }
        // A plain reference to another object is no controller: the owner is added.
        let mut child = secret(
            "",
            json!([reference("v1", "ConfigMap", "defaults", "u-2", false)]),
        );
        set_controller_reference(&owner, &mut child).unwrap();
        assert_eq!(child.owner_references().len(), 2);
    }

    #[test]
    fn owner_references_do_not_cross_namespaces() {
        let owner = config_map("settings", "apps", "u-1");
        let mut elsewhere = secret("other", json!([]));
        let before = elsewhere.clone();
        let error = set_controller_reference(&owner, &mut elsewhere).unwrap_err();
        assert!(error.is_invalid_owner(), "{error}");
        assert!(error.controller().is_none());
        let error = set_owner_reference(&owner, &mut elsewhere).unwrap_err();
        assert!(error.is_invalid_owner(), "{error}");
        assert_eq!(elsewhere.metadata, before.metadata);

        // A namespaced owner cannot own a cluster-scoped child.
        let mut cluster_scoped = namespace("child", "n-2");
        let error = set_controller_reference(&owner, &mut cluster_scoped).unwrap_err();
        assert!(error.is_invalid_owner(), "{error}");
        assert!(cluster_scoped.owner_references().is_empty());

        // A cluster-scoped owner may own children in any namespace, or none yet, and
        // cluster-scoped ones.
        let cluster_owner = namespace("apps", "n-1");
        for namespace in ["other", ""] {
            let mut child = secret(namespace, json!([]));
            set_controller_reference(&cluster_owner, &mut child).unwrap();
            assert_eq!(child.namespace(), namespace);
            assert_eq!(
                references(&child),
                [row("v1", "Namespace", "apps", "n-1", true, true)]
            );
        }
        set_owner_reference(&cluster_owner, &mut cluster_scoped).unwrap();
        assert_eq!(cluster_scoped.owner_references().len(), 1);
    }

    #[test]
    fn set_owner_reference_adds_an_owner_that_does_not_control() {
        let owner = config_map("settings", "apps", "u-1");
        // Another object controls the child: a plain owner may still be added.
        let controller = reference("v1", "ConfigMap", "defaults", "u-2", true);
        let mut child = secret("", json!([controller]));
        set_owner_reference(&owner, &mut child).unwrap();
        assert_eq!(child.namespace(), "apps");
        assert_eq!(
            references(&child),
            [
                row("v1", "ConfigMap", "defaults", "u-2", true, false),
                row("v1", "ConfigMap", "settings", "u-1", false, false),
            ]
        );
        let written = serde_json::to_value(&child.metadata.owner_references).unwrap();
        assert_eq!(
            written[1],
            json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "settings", "uid": "u-1"})
        );
        assert!(has_controller_reference(&child));

        // Over a controller reference to the same owner it takes its place: the owner no
        // longer controls the child.
        let mut child = secret("apps", json!([]));
        set_controller_reference(&owner, &mut child).unwrap();
        set_owner_reference(&owner, &mut child).unwrap();
        assert_eq!(
            references(&child),
            [row("v1", "ConfigMap", "settings", "u-1", false, false)]
        );
        assert!(!has_controller_reference(&child));
    }

    #[test]
    fn remove_owner_reference_removes_only_the_owners_reference() {
        let owner = config_map("settings", "apps", "u-1");
        let mut child = secret(
            "apps",
            json!([
                reference("v1", "Secret", "x", "s-1", false),
                reference("v1beta1", "ConfigMap", "settings", "old", true),
            ]),
        );
        remove_owner_reference(&owner, &mut child).unwrap();
        assert_eq!(
            references(&child),
            [row("v1", "Secret", "x", "s-1", false, false)]
        );
        let error = remove_owner_reference(&owner, &mut child).unwrap_err();
        assert!(error.is_not_owned(), "{error}");
        assert_eq!(child.owner_references().len(), 1);

        // The last reference gone, no list is left.
        let mut child = secret(
            "apps",
            json!([reference("v1", "ConfigMap", "settings", "u", false)]),
        );
        remove_owner_reference(&owner, &mut child).unwrap();
        assert!(child.metadata.owner_references.is_none());
        let mut bare = secret("apps", Value::Null);
        assert!(
            remove_owner_reference(&owner, &mut bare)
                .unwrap_err()
                .is_not_owned()
        );
    }

    #[test]
    fn remove_controller_reference_removes_only_a_controller_reference() {
        let owner = config_map("settings", "apps", "u-1");
        let plain = reference("v1", "ConfigMap", "settings", "u-1", false);
        let mut child = secret("apps", json!([plain]));
        let error = remove_controller_reference(&owner, &mut child).unwrap_err();
        assert!(error.is_not_controller(), "{error}");
        assert_eq!(child.owner_references().len(), 1);

        // Another object's controller reference is not the owner's.
        let other = reference("v1", "ConfigMap", "defaults", "u-2", true);
        let mut child = secret("apps", json!([other]));
        let error = remove_controller_reference(&owner, &mut child).unwrap_err();
        assert!(error.is_not_owned(), "{error}");
        assert_eq!(child.owner_references().len(), 1);

        let mut child = secret(
            "apps",
            json!([reference("v1", "Secret", "x", "s-1", false)]),
        );
        set_controller_reference(&owner, &mut child).unwrap();
        remove_controller_reference(&owner, &mut child).unwrap();
        assert_eq!(
            references(&child),
            [row("v1", "Secret", "x", "s-1", false, false)]
        );
        assert!(!has_owner_reference(&owner, &child));
    }

    #[test]
    fn has_owner_reference_compares_group_kind_and_name() {
        let owner = config_map("settings", "apps", "u-1");
        let has = |api_version: &str, kind: &str, name: &str| {
            let child = Arc::new(secret(
                "apps",
                json!([reference(api_version, kind, name, "any", false)]),
            ));
            has_owner_reference(&owner, &child)
        };
        assert!(has("v1", "ConfigMap", "settings"));
        assert!(
            has("v2", "ConfigMap", "settings"),
            "the version does not matter"
        );
        assert!(
            !has("example.com/v1", "ConfigMap", "settings"),
            "the group does"
        );
        assert!(!has("v1", "Secret", "settings"));
        assert!(!has("v1", "ConfigMap", "defaults"));
        assert!(
            !has("a/b/v1", "ConfigMap", "settings"),
            "an apiVersion that does not parse"
        );

        let orphan = secret("apps", Value::Null);
        assert!(!has_owner_reference(&owner, &orphan) && !has_controller_reference(&orphan));
    }

    #[test]
    fn the_error_goes_through_question_marks_into_the_api_error() {
        fn reconcile(owner: &ConfigMap, child: &mut Secret) -> Result<(), Error> {
            set_controller_reference(owner, child)?;
            Ok(())
        }
        let mut child = secret("other", json!([]));
        let error = reconcile(&config_map("settings", "apps", "u-1"), &mut child).unwrap_err();
        let original = error
            .downcast_ref::<OwnerReferenceError>()
            .expect("the owner reference error");
        assert!(original.is_invalid_owner());
        assert_eq!(error.to_string(), original.to_string());
    }
}
