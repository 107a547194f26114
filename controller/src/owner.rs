//! Children and their owner: [`owner_reference`], the reference a child carries to the object
//! that controls it (controller-runtime's `SetControllerReference`), which
//! [`owns`](crate::ControllerBuilder::owns) follows back and the garbage collector uses to
//! delete the child with its owner; and [`apply_owned`], a server-side apply of a child with
//! that reference.

use kclient_apimachinery::meta::v1::OwnerReference;
use kclient_apimachinery::{Error, PatchOptions, Resource, ResourceScope};
use kclient_rest::{Client, Verb};
use serde_json::Value;

/// A controller owner reference to `owner`: `controller: true` and `blockOwnerDeletion: true`,
/// so a foreground deletion of the owner waits for the child. Put it in the child's
/// `metadata.ownerReferences` (at most one reference of an object may be a controller).
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

/// Server-side applies `child`, an apply configuration of a `C` as JSON, as `field_manager`
/// (forcing conflicts: this controller owns the fields it sets), with `owner` as its controller
/// owner; returns the child as the server stored it.
///
/// The child's `apiVersion` and `kind` are set from `C`, and `ownerReferences` to
/// [`owner_reference`]`(owner)`. Its namespace is checked as controller-runtime's
/// `SetControllerReference` checks it: the child of a namespaced owner goes in the owner's
/// namespace (set when `child` names none); the namespaced child of a cluster-scoped owner
/// goes in the namespace `child` names. Only the fields in `child` are claimed by
/// `field_manager`; fields set by others stay.
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
    let namespace = child_namespace::<C, K>(owner, metadata.get("namespace"), &name)?;
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

/// The namespace of a child `name` of `owner`, from the namespace its apply configuration names
/// (`given`), as controller-runtime's `SetControllerReference` checks it: a namespaced owner's
/// children live in its namespace (the garbage collector deletes a child whose namespaced owner
/// is not in its namespace, and cannot collect a cluster-scoped child of a namespaced owner); a
/// cluster-scoped owner's namespaced children live where they say.
fn child_namespace<C: Resource, K: Resource>(
    owner: &K,
    given: Option<&Value>,
    name: &str,
) -> Result<String, Error> {
    let given = match given {
        None | Some(Value::Null) => "",
        Some(Value::String(namespace)) => namespace.as_str(),
        Some(_) => {
            return Err(Error::invalid_request(format!(
                "the metadata.namespace of the apply configuration of {} {name} must be a string",
                C::KIND
            )));
        }
    };
    let owner_namespace = owner.namespace();
    if !<C::Scope as ResourceScope>::NAMESPACED {
        if !owner_namespace.is_empty() {
            return Err(Error::invalid_request(format!(
                "{} {name} is cluster-scoped and cannot be owned by {} {} of namespace \
                 {owner_namespace}",
                C::KIND,
                K::KIND,
                owner.name()
            )));
        }
        return Ok(String::new());
    }
    match (owner_namespace, given) {
        ("", "") => Err(Error::invalid_request(format!(
            "the apply configuration of {} {name}, owned by the cluster-scoped {} {}, has no \
             metadata.namespace",
            C::KIND,
            K::KIND,
            owner.name()
        ))),
        ("", given) => Ok(given.to_owned()),
        (owner_namespace, given) if given.is_empty() || given == owner_namespace => {
            Ok(owner_namespace.to_owned())
        }
        (owner_namespace, given) => Err(Error::invalid_request(format!(
            "{} {name} of namespace {given} cannot be owned by {} {} of namespace \
             {owner_namespace}: owner references do not cross namespaces",
            C::KIND,
            K::KIND,
            owner.name()
        ))),
    }
}
