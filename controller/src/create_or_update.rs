//! [`create_or_update`] and [`create_or_patch`]: controller-runtime's
//! `controllerutil.CreateOrUpdate` and `CreateOrPatch`.

use std::fmt;

use kclient_apimachinery::{Error, Resource, ResourceScope, create_merge_patch, semantic_eq};
use kclient_rest::{Client, Request, Verb};
use serde_json::Value;

/// What [`create_or_update`] or [`create_or_patch`] did (controller-runtime's
/// `controllerutil.OperationResult`; [`as_str`](OperationResult::as_str) gives its strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum OperationResult {
    /// Nothing was written: the object was as `mutate` wants it (Go's `OperationResultNone`).
    Unchanged,
    /// The object did not exist and was created.
    Created,
    /// The object was updated (or patched; with `create_or_patch`, its status was unchanged).
    Updated,
    /// `create_or_patch` patched the object and its status.
    UpdatedStatus,
    /// `create_or_patch` patched only the status.
    UpdatedStatusOnly,
}

impl OperationResult {
    /// controller-runtime's string for it: `unchanged`, `created`, `updated`,
    /// `updatedStatus`, `updatedStatusOnly`.
    pub fn as_str(&self) -> &'static str {
        match self {
            OperationResult::Unchanged => "unchanged",
            OperationResult::Created => "created",
            OperationResult::Updated => "updated",
            OperationResult::UpdatedStatus => "updatedStatus",
            OperationResult::UpdatedStatusOnly => "updatedStatusOnly",
        }
    }
}

impl fmt::Display for OperationResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why [`create_or_update`] or [`create_or_patch`] failed. Nothing was written unless the
/// error is [`Api`](CreateOrUpdateError::Api) from the second request of `create_or_patch`
/// (the status patch after the object's).
#[derive(Debug)]
pub enum CreateOrUpdateError<E> {
    /// `mutate` failed.
    Mutate(E),
    /// `mutate` changed the object's name or namespace (controller-runtime: "MutateFn cannot
    /// mutate object name and/or object namespace").
    KeyChanged {
        /// The object's kind.
        kind: &'static str,
        /// `namespace/name` (or `name`) before `mutate`.
        before: String,
        /// The same after it.
        after: String,
    },
    /// Reading, creating, updating or patching the object failed, or it could not be
    /// encoded; the `is_*()` answers of the request's error are kept (a Conflict, say).
    Api(Error),
}

impl<E: fmt::Display> fmt::Display for CreateOrUpdateError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CreateOrUpdateError::Mutate(e) => write!(f, "mutating the object: {e}"),
            CreateOrUpdateError::KeyChanged {
                kind,
                before,
                after,
            } => write!(
                f,
                "the mutate function cannot change the name or namespace of {kind} {before} \
                 (it made it {after})"
            ),
            CreateOrUpdateError::Api(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for CreateOrUpdateError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CreateOrUpdateError::Mutate(e) => Some(e),
            CreateOrUpdateError::KeyChanged { .. } => None,
            CreateOrUpdateError::Api(e) => Some(e),
        }
    }
}

impl<E> From<Error> for CreateOrUpdateError<E> {
    fn from(e: Error) -> Self {
        CreateOrUpdateError::Api(e)
    }
}

/// Makes the object named by `obj` look as `mutate` wants it, creating or updating it
/// (controller-runtime's `controllerutil.CreateOrUpdate`): the read-mutate-write step of a
/// reconcile that makes an object (a child, usually) look as it should.
///
/// It reads the object named by `obj`'s name and namespace into `obj`, lets `mutate` set what
/// the controller owns, and writes only when that changed something:
///
/// - the object does not exist: `mutate` runs on `obj` as given, which is then created
///   ([`OperationResult::Created`]);
/// - `mutate` changed nothing: no request ([`OperationResult::Unchanged`]);
/// - otherwise the object is replaced ([`OperationResult::Updated`]) by an update carrying the
///   resourceVersion it read, so a concurrent change fails it with a Conflict for the
///   reconcile to retry. [`create_or_patch`] sends merge patches instead.
///
/// In every case `obj` ends as the server returned it. `mutate` must not change the name or
/// namespace ([`CreateOrUpdateError::KeyChanged`]).
///
/// "Changed" compares the object before and after `mutate` with
/// [`semantic_eq`](kclient_apimachinery::semantic_eq), as `CreateOrUpdate` compares with
/// `equality.Semantic`: a [`Quantity`](kclient_apimachinery::meta::Quantity) of the same amount
/// written differently (`0.5` where the server stored `500m`) is no change, nor is an empty
/// list or map where the server left none. So a reconcile that writes quantities as people
/// write them sends no update once the object is as it wants. (A field set to its zero value
/// where the server leaves it out, `Some(0)` read back as `None`, still counts as a change:
/// see `semantic_eq`.)
///
/// ```no_run
/// # async fn run(client: kclient_rest::Client, owner: kclient_api::core::v1::ConfigMap)
/// #     -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_api::core::v1::Secret;
/// use kclient_apimachinery::Object;
/// use kclient_controller::{create_or_update, set_controller_reference};
///
/// let mut secret = Secret::default();
/// secret.set_namespace(owner.namespace());
/// secret.set_name(&format!("{}-copy", owner.name()));
/// let result = create_or_update(&client, &mut secret, |secret| {
///     secret
///         .string_data
///         .get_or_insert_with(Default::default)
///         .insert("copied", "yes".into());
///     set_controller_reference(&owner, secret)
/// })
/// .await?;
/// println!("secret {}: {result}", secret.name());
/// # Ok(()) }
/// ```
pub async fn create_or_update<K, E>(
    client: &Client,
    obj: &mut K,
    mutate: impl FnOnce(&mut K) -> Result<(), E>,
) -> Result<OperationResult, CreateOrUpdateError<E>>
where
    K: Resource,
{
    let key = Key::of(obj)?;
    let Some(mutate) = read_or_create(client, &key, obj, mutate).await? else {
        return Ok(OperationResult::Created);
    };
    let before = obj.clone();
    key.mutate(obj, mutate)?;
    if semantic_eq(&before, obj) {
        return Ok(OperationResult::Unchanged);
    }
    *obj = send(request::<K>(client, Verb::Put, &key, true), obj).await?;
    Ok(OperationResult::Updated)
}

/// Makes the object named by `obj` look as `mutate` wants it, creating it or patching what
/// changed, its status through the `status` subresource (controller-runtime's
/// `controllerutil.CreateOrPatch`). As [`create_or_update`] but for the write: when `mutate`
/// changed the object but for its status, a patch to the object
/// ([`OperationResult::Updated`]); when it changed the status, a patch to the `status`
/// subresource ([`UpdatedStatusOnly`](OperationResult::UpdatedStatusOnly), or
/// [`UpdatedStatus`](OperationResult::UpdatedStatus) after a patch to the object).
///
/// What changed, the object but for its status and the status, is told with
/// [`semantic_eq`](kclient_apimachinery::semantic_eq): where `mutate` left a part semantically
/// equal to what it read, nothing is sent for it, and when it left both,
/// [`OperationResult::Unchanged`]. controller-runtime compares the JSON there, and patches a
/// quantity written `0.5` that the server stored as `500m` on every reconcile.
///
/// Each patch is a JSON merge patch from the object as read to the object as mutated, with no
/// resourceVersion precondition: it changes only the fields `mutate` changed, and a concurrent
/// change to other fields stands. The status patch that follows an object patch carries the
/// resourceVersion that patch returned, so it fails with a Conflict if the object changed
/// between the two.
pub async fn create_or_patch<K, E>(
    client: &Client,
    obj: &mut K,
    mutate: impl FnOnce(&mut K) -> Result<(), E>,
) -> Result<OperationResult, CreateOrUpdateError<E>>
where
    K: Resource,
{
    let key = Key::of(obj)?;
    let Some(mutate) = read_or_create(client, &key, obj, mutate).await? else {
        return Ok(OperationResult::Created);
    };
    let read = obj.clone();
    key.mutate(obj, mutate)?;
    if semantic_eq(&read, obj) {
        return Ok(OperationResult::Unchanged);
    }
    let (original, mutated) = (json(&read)?, json(obj)?);
    let (before_status, after_status) = (original.get("status"), mutated.get("status"));
    // Each part is compared as the whole was: the object as read with only that part of the
    // mutated one put in. JSON decides when that object does not decode.
    let object_changed = with_status::<K>(&mutated, before_status).map_or_else(
        || but_status(&original) != but_status(&mutated),
        |other| !semantic_eq(&read, &other),
    );
    let status_changed = with_status::<K>(&original, after_status)
        .map_or(before_status != after_status, |other| {
            !semantic_eq(&read, &other)
        });
    let mut result = OperationResult::Unchanged;
    if object_changed {
        let patch = create_merge_patch(&original, &mutated);
        let patched: K = request::<K>(client, Verb::Patch, &key, true)
            .content_type("application/merge-patch+json")
            .json(&patch)
            .send()
            .await?;
        *obj = patched;
        result = OperationResult::Updated;
    }
    if status_changed {
        if result == OperationResult::Updated {
            // The patch's answer carries the status as stored: put the mutated one back.
            let mut patched = json(obj)?;
            if let Value::Object(fields) = &mut patched {
                fields.insert(
                    "status".into(),
                    after_status.cloned().unwrap_or(Value::Null),
                );
            }
            *obj = serde_json::from_value(patched).map_err(|e| {
                Error::invalid_request(format!("decoding the {} to patch: {e}", K::KIND))
            })?;
        }
        let patch = create_merge_patch(&original, &json(obj)?);
        let patched: K = request::<K>(client, Verb::Patch, &key, true)
            .subresource("status")
            .content_type("application/merge-patch+json")
            .json(&patch)
            .send()
            .await?;
        *obj = patched;
        result = if result == OperationResult::Updated {
            OperationResult::UpdatedStatus
        } else {
            OperationResult::UpdatedStatusOnly
        };
    }
    Ok(result)
}

/// The name and namespace of the object worked on.
struct Key {
    kind: &'static str,
    namespace: String,
    name: String,
}

impl Key {
    /// `obj`'s key; refused when it cannot name an object of `K`.
    fn of<K: Resource>(obj: &K) -> Result<Key, Error> {
        let (namespace, name) = (obj.namespace(), obj.name());
        if name.is_empty() {
            return Err(Error::invalid_request(format!(
                "create or update of a {} needs metadata.name",
                K::KIND
            )));
        }
        if namespace.is_empty() && <K::Scope as ResourceScope>::NAMESPACED {
            return Err(Error::invalid_request(format!(
                "create or update of the namespaced {} {name} needs metadata.namespace",
                K::KIND
            )));
        }
        Ok(Key {
            kind: K::KIND,
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        })
    }

    /// Runs `mutate` on `obj` and checks that it kept the key.
    fn mutate<K: Resource, E>(
        &self,
        obj: &mut K,
        mutate: impl FnOnce(&mut K) -> Result<(), E>,
    ) -> Result<(), CreateOrUpdateError<E>> {
        mutate(obj).map_err(CreateOrUpdateError::Mutate)?;
        if obj.namespace() != self.namespace || obj.name() != self.name {
            return Err(CreateOrUpdateError::KeyChanged {
                kind: self.kind,
                before: self.to_string(),
                after: join(obj.namespace(), obj.name()),
            });
        }
        Ok(())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&join(&self.namespace, &self.name))
    }
}

fn join(namespace: &str, name: &str) -> String {
    if namespace.is_empty() {
        name.to_owned()
    } else {
        format!("{namespace}/{name}")
    }
}

/// A request for the object of `key` (`named`), or for its collection.
fn request<K: Resource>(client: &Client, verb: Verb, key: &Key, named: bool) -> Request {
    let request = client
        .verb(verb)
        .group_version(K::GROUP, K::VERSION)
        .namespace(&key.namespace)
        .resource(K::PLURAL);
    if named {
        request.name(&key.name)
    } else {
        request
    }
}

/// Reads the object of `key` into `obj` and gives `mutate` back for the caller to run; or,
/// when there is none, runs `mutate` on `obj` as given, creates it (`obj` becomes the object
/// created) and returns `None`.
async fn read_or_create<K, E, F>(
    client: &Client,
    key: &Key,
    obj: &mut K,
    mutate: F,
) -> Result<Option<F>, CreateOrUpdateError<E>>
where
    K: Resource,
    F: FnOnce(&mut K) -> Result<(), E>,
{
    match request::<K>(client, Verb::Get, key, true).send().await {
        Ok(current) => {
            *obj = current;
            Ok(Some(mutate))
        }
        Err(e) if e.is_not_found() => {
            key.mutate(obj, mutate)?;
            *obj = send(request::<K>(client, Verb::Post, key, false), obj).await?;
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// Sends `obj` (with its `apiVersion` and `kind`, which custom resource types may not
/// serialize) as the body of `request` and returns the object the server answers with.
async fn send<K: Resource>(request: Request, obj: &K) -> Result<K, Error> {
    let mut body = json(obj)?;
    if let Value::Object(fields) = &mut body {
        fields
            .entry("apiVersion")
            .or_insert_with(|| K::API_VERSION.into());
        fields.entry("kind").or_insert_with(|| K::KIND.into());
    }
    request.json(&body).send().await
}

/// `obj` as JSON.
fn json<K: Resource>(obj: &K) -> Result<Value, Error> {
    serde_json::to_value(obj)
        .map_err(|e| Error::invalid_request(format!("encoding the {}: {e}", K::KIND)))
}

/// `object` with `status` as its status (none for `None`), decoded; `None` if it does not
/// decode.
fn with_status<K: Resource>(object: &Value, status: Option<&Value>) -> Option<K> {
    let mut object = object.clone();
    let fields = object.as_object_mut()?;
    match status {
        Some(status) => fields.insert("status".to_owned(), status.clone()),
        None => fields.remove("status"),
    };
    serde_json::from_value(object).ok()
}

/// The members of `object` but its `status`, to compare two objects apart from it.
fn but_status(object: &Value) -> Vec<(&String, &Value)> {
    object
        .as_object()
        .map(|fields| fields.iter().filter(|(k, _)| *k != "status").collect())
        .unwrap_or_default()
}
