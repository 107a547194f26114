//! Testing controllers without a cluster: an in-process fake API server under kclient's own
//! clients, the counterpart of client-go's `k8s.io/client-go/testing` and
//! `kubernetes/fake`, without their known gaps (field selectors, server-side apply, the
//! server's errors, watches that drop events).
//!
//! - [`Fake`]: build one, seed its [`ObjectTracker`], and hand [`Fake::client`] (a
//!   [`kclient_rest::Client`] whose [`RoundTripper`](kclient_rest::RoundTripper) is the fake)
//!   to the code under test. `Clientset`, `Api<K, S>`, `DynamicClient`, `MetadataClient`,
//!   `DiscoveryClient`, the RESTMapper, informers and listers run on it unchanged.
//! - [`ObjectTracker`]: the objects, as JSON keyed by group/version/resource, with the
//!   server's semantics; seeded from typed objects ([`ObjectTracker::add`]), JSON or
//!   `Unstructured` values ([`ObjectTracker::add_value`]) or YAML
//!   ([`ObjectTracker::add_yaml`]); seeding creates the namespaces objects live in, while a
//!   create through the API into a namespace that does not exist is a 404, as on a server.
//! - Reactors ([`Fake::prepend_reactor`], [`Fake::append_reactor`]) answer chosen requests
//!   with an object or an error (a 409, a 500, a 429 with `Retry-After`), and every request is
//!   recorded as an [`Action`] ([`Fake::actions`]).
//! - Fake discovery: `/api`, `/apis` and the group version documents come from kclient-api's
//!   generated types plus the custom resources registered ([`Fake::register`]) or created as
//!   CustomResourceDefinitions through the fake; `/api` and `/apis` are served in the
//!   aggregated `apidiscovery.k8s.io/v2` format to a client that asks for it, as
//!   `DiscoveryClient` does; resources carry the server's categories (`all` for workloads,
//!   Services and HorizontalPodAutoscalers, `api-extensions` for webhook configurations,
//!   admission policies, APIServices and CRDs) and a CRD's `names.categories`.
//! - A CustomResourceDefinition created through the fake serves its resource at once, each
//!   version with its schema, which prunes, defaults and validates the objects, keys their
//!   lists for server-side apply ([`StructuralSchema`]), and, without a conversion webhook,
//!   the same objects through every version ([`StorageVersion`]).
//!
//! # Features
//!
//! - `cel`: the fake evaluates custom resources' CEL rules (`x-kubernetes-validations`) on
//!   every write, transition rules (`oldSelf`) on updates, with the `cel` crate; about 14 s
//!   more of a clean dev build on 2 cores. Without it the rules are not evaluated. The facade's
//!   `testing-cel` feature turns it on.
//!
//! # What the fake does as kube-apiserver does
//!
//! - **create**: `generateName` (5 characters from the server's alphabet), `uid`,
//!   `creationTimestamp`, a resourceVersion that increases across all resources, `generation`
//!   1 for the kinds whose strategy keeps it (workloads, Pods, custom resources, ...),
//!   a body that carries a resourceVersion refused (500, as the storage refuses it; objects
//!   seeded into the tracker may carry one; `0` and one the storage's `ParseUint` does not
//!   read, such as `+5` or `abc`, are ignored), AlreadyExists (409), the namespace of the body
//!   against the URL's (400), a namespace that does not exist (404) or is terminating (403),
//!   a missing or invalid name (422), labels, annotation keys or finalizers that are not
//!   valid (422, on every write), a body of the wrong kind or apiVersion (400); status is
//!   dropped on create for kinds with a status subresource.
//! - **get / list**: NotFound (404); a get's `resourceVersion` as the watch cache reads it
//!   (the latest state, 500 for one that is not a number, 504 for one not reached yet); label selectors parsed by kclient's own parser (400 when
//!   they do not parse); the field selectors the kind supports (`metadata.name`,
//!   `metadata.namespace`, and per kind such as Pods' `spec.nodeName` and `status.phase`,
//!   Secrets' `type`, events.k8s.io Events' `regarding.*` and `reportingController`, a CRD
//!   version's `selectableFields`; 400 for others), with the values the server computes
//!   (a Job's `status.successful` from `status.succeeded`, `"0"` when unset; a core Event's
//!   `source` from `source.component`, else `reportingComponent`); `limit` and `continue` in the server's etcd key order
//!   (`<namespace>/<name>` byte by byte: `team-a/y` before `team/x`), with
//!   `remainingItemCount` when no selector is set, later pages cut from the first page's
//!   snapshot; list items without `apiVersion`/`kind`
//!   for built-ins, with them for custom resources.
//! - **lists at a resourceVersion**: `resourceVersionMatch=Exact` (and a version with a
//!   `limit` and no match) reads the objects as they were at that version, rebuilt from the
//!   history, with later pages at the same version, and 410 Expired ("too old") once the
//!   history no longer reaches back to it; `NotOlderThan` (and a version with neither) reads
//!   the latest state; `"0"` reads the latest state and ignores `limit`, as the server's
//!   watch cache does; a version the tracker has not reached is 504 Timeout with a
//!   `ResourceVersionTooLarge` cause (the server waits 3 seconds for it first; the fake,
//!   which nobody else writes to, answers at once); the server's `ListOptions` validation
//!   (422, with the causes' types and the option each names, `sendInitialEvents` on a list
//!   too) and "resource version with continue" (400) errors; a `limit` or `timeoutSeconds`
//!   that is not a number, a resourceVersion that is not one (a sign too), and an invalid
//!   continue token are 400.
//! - **update**: the body's name against the URL's (400), resourceVersion conflicts (409),
//!   a `metadata.uid` in the body as a precondition (409 when it names another object, with
//!   or without a resourceVersion; in a patch, a changed uid is 422), an update without
//!   resourceVersion allowed for most built-ins and refused for custom resources, Leases,
//!   PodDisruptionBudgets and others whose strategy says so (422); a PUT to a missing object
//!   creating it (201) for the kinds whose strategy allows create on update (Leases,
//!   Endpoints, Events, LimitRanges, Services, the RBAC kinds, RuntimeClasses), 404 for the
//!   others; identity and deletion fields kept from the stored object (a
//!   `deletionTimestamp` the object does not have, or another `deletionGracePeriodSeconds`,
//!   refused with 422: only a delete sets them); status kept
//!   from the stored object when the kind has a status subresource; `generation` bumped only
//!   when something outside metadata and status changed (outside metadata alone for a custom
//!   resource without a status subresource); a write that changes nothing keeps
//!   the resourceVersion and sends no event.
//! - **defaults** on every write, for Deployments (replicas, strategy, revisionHistoryLimit,
//!   progressDeadlineSeconds, the pod template), ReplicaSets, StatefulSets, DaemonSets, Pods (the PodSpec's and its
//!   containers' defaults, requests from limits, `enableServiceLinks`, the Priority and
//!   DefaultTolerationSeconds admission plugins' fields, status `Pending` with its QoS
//!   class), Services (type, session affinity, ports' protocol and target port, a cluster
//!   IP from 10.96.0.0/12, IP families, traffic policy) and Secrets (type Opaque,
//!   `stringData` moved into `data`); a new Deployment, ReplicaSet, StatefulSet, DaemonSet
//!   and Service get the server's initial status.
//! - **status subresource**: `status` is taken from the body, and so is the metadata the
//!   kind's status strategy lets through: for most built-ins (Services, Jobs, ReplicaSets,
//!   Nodes, ...) labels, annotations, finalizers and owner references, for Pods all but owner
//!   references, for Deployments all but labels; custom resources and the newer built-ins
//!   (FlowSchemas, APIServices, ResourceClaims, ...) keep all their stored metadata. A
//!   Pod's `qosClass`, `observedGeneration` and conditions' `observedGeneration` left out
//!   are kept (a condition's by type); a changed `qosClass` or a negative generation is 422.
//! - **scale subresource** (Deployments, ReplicaSets, StatefulSets, ReplicationControllers,
//!   and custom resources whose CRD declares `subresources.scale`): get, update and patch
//!   an `autoscaling/v1` Scale (the selector string from `spec.selector` or the CRD's
//!   `labelSelectorPath`), replicas written to the object with the generation bumped, a
//!   stale resourceVersion 409, negative replicas 422; server-side apply of a Scale
//!   configuration too (`fieldManager` required, 422; another type than `autoscaling/v1`
//!   Scale 400), answered with the Scale and recorded on the object as the manager's
//!   `Apply` entry through `scale`, owning the replicas.
//! - **pods/binding**: sets `spec.nodeName` and the `PodScheduled` condition (201 `Status`),
//!   409 for a Pod already bound or being deleted, without bumping the generation.
//! - **pods/eviction**: checks the `deleteOptions` preconditions (409 before any write), adds
//!   the `DisruptionTarget` condition (to a finished Pod too) and deletes the Pod with the
//!   eviction's `deleteOptions` (graceful on a node; a resourceVersion precondition moves on
//!   to the condition's write), 201 `Status`. Conditions are set as
//!   the server's `UpdatePodCondition` sets them: in place, keeping `lastTransitionTime` while
//!   the status stays, so evicting a terminating Pod again writes nothing. A Pod that is not
//!   Pending, finished or terminating answers to the PodDisruptionBudget selecting it (more
//!   than one: 500), by the status a test wrote: a Ready Pod only if the budget is observed
//!   at its generation (429, retry in 10 s) and allows a disruption (429 with a
//!   `DisruptionBudget` cause saying why not; 403 for a negative count or over 2000
//!   evictions not yet seen), which is then spent (`disruptionsAllowed`, `disruptedPods`,
//!   and at 0 the `DisruptionAllowed` condition); an unready Pod without a disruption when
//!   the budget's `unhealthyPodEvictionPolicy` is `AlwaysAllow` or the budget is healthy
//!   (`currentHealthy >= desiredHealthy > 0`), on the version read (a conflict then reads as
//!   429 unless the caller named a version). A dry run (`dryRun=All` or
//!   `deleteOptions.dryRun`) checks all this and writes nothing;
//!   `ignoreStoreReadErrorWithClusterBreakingPotential` is refused (422).
//! - **serviceaccounts/token**: a TokenRequest with the ServiceAccount's identity, default
//!   audience and expiry (3600 s), `expirationSeconds` under 600 refused (422).
//! - A Binding, Eviction or TokenRequest whose `metadata.namespace` is set and is not the
//!   URL's is refused (400) before anything else, as the server's create handler refuses it.
//! - **pods/log**: 204 with no content.
//! - **graceful deletion of Pods**: a Pod on a node gets `deletionTimestamp` now + its grace
//!   period (`gracePeriodSeconds` of the request, else `spec.terminationGracePeriodSeconds`,
//!   else 30), `deletionGracePeriodSeconds` and a new `generation`, and stays; a later delete
//!   may only shorten the period; with 0, or for an unscheduled or finished Pod, it is marked
//!   and removed at once (MODIFIED then DELETED). A Pod in its grace period stays when a write
//!   removes its last finalizer: only an object whose deletion waits on finalizers alone
//!   (`deletionGracePeriodSeconds` 0 or unset) goes then. Pods, Services, ServiceAccounts and
//!   StorageClasses answer a delete with the object rather than a `Status`.
//! - **delete**: NotFound, uid and resourceVersion preconditions (409), finalizers
//!   (`deletionTimestamp` set and a kept `generation` bumped, removal when the last finalizer goes, no new finalizers on an
//!   object being deleted), `propagationPolicy` Orphan/Foreground adding the `orphan` and
//!   `foregroundDeletion` finalizers (a later delete's policy replacing them; without a
//!   policy, batch/v1 Jobs and v1 ReplicationControllers orphan their dependents, as the
//!   server keeps them doing for backward compatibility; Events take neither finalizer),
//!   `delete_collection` with selectors and its list
//!   options checked as a list checks them (an invalid one deletes nothing).
//! - **garbage collection** by `ownerReferences`: background (the default) deletes the
//!   dependents of a removed owner (a dependent with another owner left only loses the
//!   reference), Orphan removes the references to the owner, Foreground deletes the
//!   dependents and removes the owner once no `blockOwnerDeletion` dependent is left.
//! - **patches**: JSON patches as the server's json-patch library (evanphx/json-patch v4)
//!   applies them, through apimachinery's `apply_json_patch`, where it departs from RFC 6902
//!   too (a `replace` of a missing object member adds it, a `test` of a missing member
//!   against `null` holds, a `test` compares scalars by their JSON text (`3.0` is not `3`), a
//!   `copy` from a missing member copies `null`, an operation without `value` writes `null`,
//!   negative array indexes count from the end; a `remove` or `move` of a missing path, an
//!   index past the end, `-` outside an `add`, an unknown `op` and `copy` operations adding
//!   more than 3 MiB are 422, more than 10000 operations 413, a body that is not a list of
//!   objects 400); JSON merge patch and strategic merge patch through kclient's own patch
//!   code and the generated patch tables; strategic merge patches on custom resources
//!   are refused (415) as the server refuses them; a patch carrying a stale resourceVersion
//!   conflicts (409); one that changes the name or namespace is refused (400).
//! - **server-side apply**: creates the object or merges the applied configuration into it
//!   as structured-merge-diff does, by the kind's schema (a built-in's generated patch
//!   metadata, a custom resource's CRD `openAPIV3Schema`): objects field by field, the items
//!   of a `listType=map` list (containers, env, ports, a custom resource's conditions) by
//!   their keys and of a `listType=set` list (finalizers) by value, in the server's order,
//!   other lists and atomic maps whole; removes the fields its manager stops applying that
//!   no one else owns (a container dropped from the configuration goes unless another
//!   manager applies it too; a custom resource's map the configuration names as `{}` and
//!   the apply empties is left `null`, which its schema refuses unless nullable or
//!   defaulted, as on the server); refuses a change to a field another manager owns with the
//!   server's 409 conflict (its message and one `FieldManagerConflict` cause per field),
//!   unless `force`, which takes the field (through `scale` too); refuses a configuration
//!   whose keyed lists cannot be keyed (a null item, an item without any of its keys or
//!   their defaults, two items with one key), or that sets a field a custom resource's
//!   schema does not declare, with the server's 500 and message; records the manager's `Apply`
//!   entry in `managedFields` as the server writes it (`tests/it/apply.rs` compares each
//!   with the server's); requires `fieldManager` (422) and a configuration that names its
//!   `apiVersion` and `kind` (400) and the URL's name and namespace (400); a resourceVersion
//!   in the configuration is a precondition (409 when stale).
//! - **watch**: from a resourceVersion (the changes after it, in commit order; for a version
//!   the tracker has not reached, only the changes after that version), from `""`/`"0"`
//!   (the current objects as ADDED, then changes), `sendInitialEvents=true` (the current
//!   objects whatever the version, a 504 ERROR event for a version not reached yet), the
//!   `k8s.io/initial-events-end` bookmark after the current objects when
//!   `allowWatchBookmarks` is set (for `sendInitialEvents` and for a watch from `""`/`"0"`,
//!   as the server's watch cache sends it), `sendInitialEvents=false` (from no version: the
//!   changes from now on, without the current objects), bookmarks on
//!   [`ObjectTracker::send_bookmarks`], `timeoutSeconds` (a negative one ends the watch at
//!   once, with an ERROR event), objects moving in or out of a selector seen as ADDED/DELETED, and an
//!   ERROR event with 410 Expired for a resourceVersion older than the history window
//!   ([`ObjectTracker::with_history_window`], [`ObjectTracker::compact`]); the server's
//!   validation of a watch's options (422: `resourceVersionMatch` only `NotOlderThan` and
//!   only with `sendInitialEvents`, which requires it, and no `continue`), 400 for a `limit`
//!   or `timeoutSeconds` that is not a number, 500 for a resourceVersion that is not one (as
//!   the watch cache answers it); boolean options read as the server reads them (true unless
//!   `false` or `0`, the empty value too, `watch` included); the deprecated paths under
//!   `/watch/` (`/api/v1/watch/namespaces/{ns}/configmaps[/{name}]`,
//!   `/apis/{group}/{version}/watch/...`) served as watches, one with a name watching that
//!   object (a `fieldSelector` must then require that `metadata.name`, 400 otherwise), GET
//!   only (405) and without subresources (404).
//! - **dryRun=All**: the write runs against a copy and answers as it would (a created object
//!   without resourceVersion, an updated one with the stored resourceVersion); nothing is
//!   stored and no event is sent.
//! - **numbers**: a custom resource's numbers are stored as the server stores them, an
//!   int64 where the text is an integer that fits and a float64 otherwise, written as Go's
//!   `encoding/json` writes them and read back (`3.0`, `1e3` and `-0.0` come back as `3`,
//!   `1000` and `0`, `18446744073709551615` as `18446744073709552000`), so a JSON patch's
//!   `test` sees `3`; every response writes floats in Go's format (`1e+21`, `0.000001`).
//! - Errors are `Status` bodies with the server's code and reason, so
//!   `Error::is_not_found()`, `is_conflict()`, `is_already_exists()`, `is_invalid()`,
//!   `is_resource_expired()` answer as against a server.
//!
//! Each of these is checked by `tests/it/differential.rs`: 237 scripted cases (234 without
//! the `cel` feature) run against the
//! fake and against the real kube-apiserver of `kclient-testenv`, whose responses and watch
//! events must be equal once uids, timestamps, generated name suffixes and continue tokens are
//! masked and resourceVersions replaced by their order.
//!
//! # Where the fake deliberately differs (each pinned by a test in `tests/it/differences.rs`)
//!
//! 1. **Defaulting for some kinds, no validation beyond names and metadata**: the server
//!    fills defaults for every kind and validates specs; the fake validates only names and
//!    every kind's labels, annotations and finalizers (422, on every write and on seeding),
//!    and fills defaults for Deployments, ReplicaSets,
//!    StatefulSets (not their volume claim templates), DaemonSets, Jobs (with the selector
//!    and template labels their strategy generates), CronJobs, Pods, Services and Secrets
//!    (and a Namespace's finalizer and phase), as testenv's server does (it runs without
//!    the ServiceAccount admission plugin, so neither sets a Pod's ServiceAccount and token
//!    volume), and stores every other kind as written (a PersistentVolumeClaim gets no
//!    `volumeMode`, an Ingress no `pathType` default, ...). A custom
//!    resource is pruned and defaulted by its CRD's schema as on the server (fields the
//!    schema does not declare dropped, unless a node keeps unknown fields, a `null` where a
//!    field is neither nullable nor defaulted dropped, defaults filled): on every write by
//!    the version written through and by the storage version, on every read by the storage
//!    version's defaults and the read version's pruning. Every write is validated by the
//!    schema of the version written through, as the server validates it (422 with the server's
//!    causes and words; a write through `status` by the status schema): each value's `type`,
//!    `enum`, bounds (`minimum`, `maximum`, `multipleOf`, an `int32` format), lengths,
//!    `pattern` and string format, the sizes of lists and objects, `required` fields, and
//!    the items of `set` lists and keys of `map` lists once each. CEL rules
//!    (`x-kubernetes-validations`) are evaluated with the `cel` feature, then as the server
//!    evaluates them (messages, reasons, field paths, transition rules against the same
//!    field, map key or list item before the write), with the Kubernetes CEL libraries
//!    for lists, sets, regex, URLs, quantities, IP addresses, CIDRs and versions (Go's URL
//!    and address parsing with its errors, and Go's way of holding a quantity, which
//!    decides `isInteger()`), timestamps and durations (a `date-time`, `date` or
//!    `duration` string is one, and a `byte` string is bytes, as on the server), named
//!    formats and the two-variable comprehensions, but without the cost limits and the
//!    server's checks of the rules when the CRD is written (it type-checks them); a write other checks refuse gets
//!    the server's note that the rules were not checked, with the feature or without. An update
//!    ratchets as on the server: a value it leaves as it was passes whatever the schema now
//!    says (found by field name, map key or a `map` list's key), and no list
//!    is checked for repeats when the object repeated one before. What it leaves out: the
//!    formats `uri`, `email`, `creditcard` and `isbn` (unchecked). Several faults
//!    are listed in name order where the server's order varies. No `Warning` names the
//!    fields pruned.
//! 2. **A built-in kind's update entry marks fewer nodes**: an update's `managedFields`
//!    entry keeps what its manager owned and gains the fields its write changed (a create:
//!    every field), which the other entries lose, and entries left owning nothing go, as on
//!    the server, with keyed lists owned item by item, and each object, list and map the
//!    write created marked as owned itself (`".":{}` beside its fields). In a built-in kind
//!    the server marks only maps and optional (pointer) structs, not the structs Go always
//!    holds, which the fake cannot tell apart: it marks only ObjectMeta's labels and
//!    annotations there. (Apply entries, and a custom resource's update entries, are the
//!    server's.)
//! 3. **Continue tokens** page over the first page's snapshot, as on the server, but the
//!    tracker keeps only the last 256 unfinished paged lists: an older token gets 410
//!    Expired (on the server a token lasts until etcd is compacted past it).
//! 4. **Controllers' work is synchronous, and only some of it is done**: the garbage
//!    collector's cascade runs inside the delete (dependents deleted or orphaned, the
//!    `orphan` and `foregroundDeletion` finalizers removed, the owner gone unless it is a
//!    Pod in its grace period) instead of
//!    shortly after it, and only deletions trigger it (an object seeded with an owner that
//!    never existed stays); deleting a Namespace deletes its content at once as the
//!    namespace controller does (content that finalizers or a Pod's grace period hold is
//!    marked and stays, and keeps the namespace Terminating, with `spec.finalizers`, until it
//!    goes), and the namespace as soon as its content and its own finalizers are gone (the
//!    controller's `NamespaceContentRemaining` and other status conditions are not written);
//!    a CRD is Established as soon as it is
//!    created, and deleting one deletes its objects at once (an event each, their own
//!    finalizers not waited for) and ends their watches.
//!    No other controller runs (no ReplicaSets for Deployments, no Pods for ReplicaSets, no
//!    scheduler, no kubelet, no disruption controller).
//! 5. **Bookmarks** come only when the test calls [`ObjectTracker::send_bookmarks`] (and at
//!    the end of the current objects a watch starts with), not on a timer.
//! 6. **Subresources**: `pods/log` is always empty (no container runs; the server too answers 204 for
//!    a Pod no kubelet ran); a TokenRequest's token is an opaque string, not a signed JWT,
//!    and its default audience is [`DEFAULT_TOKEN_AUDIENCE`]; an eviction checks
//!    PodDisruptionBudgets against the status a test wrote (no disruption controller runs);
//!    the subresources it does not serve answer 405 MethodNotAllowed with a message naming
//!    them (script them with a reactor): a Pod's `exec`, `attach`, `portforward`, `proxy`,
//!    `ephemeralcontainers` and `resize`, a Service's and a Node's `proxy`, a Namespace's
//!    `finalize` and a CertificateSigningRequest's `approval`.
//! 7. **Error messages** of bad requests (a wrong kind, a patch that does not apply, a
//!    selector that does not parse) carry the server's code and reason but their own
//!    wording, and an invalid value is one cause of an Invalid error where the server may
//!    give several (one per rule the value breaks, naming the same field).
//! 8. **No kubelet**: a Pod on a node deleted with a grace period keeps its
//!    `deletionTimestamp` (as on the server) until a delete with `gracePeriodSeconds: 0`
//!    removes it; no kubelet stops it, so nothing else does.
//! 9. **No conversion between versions of a built-in kind or through a webhook**: each
//!    group version of a built-in kind (autoscaling/v1 and v2 HorizontalPodAutoscalers) is
//!    a separate store, and so is each version of a CRD whose conversion strategy is
//!    `Webhook`. (A CRD's versions without a webhook serve the same objects, as on the
//!    server: stored as the storage version, each read and written with its own
//!    `apiVersion`; see [`StorageVersion`].)
//! 10. **`null` where a built-in kind has a string** (a ConfigMap's data value written by a
//!     JSON patch's `copy` from a missing member or an `add` without `value`) is stored as
//!     `null`; the server decodes it into the type's zero value, `""`. Custom resources keep
//!     the `null` on both.
//! 11. **Built-in objects are stored as written, not decoded into Go's types**: a field the
//!     kind does not have is kept (the server drops it with a `Warning`, or refuses the
//!     write with `fieldValidation=Strict`; `fieldValidation` is not read), and the fields
//!     Go writes as `null` when unset (a Pod condition's `lastProbeTime`, see
//!     `api/gen/go-nulls.txt`) are left out. Typed clients decode both forms alike.
//! 12. **Quantities are stored as written**: the server writes them in canonical form
//!     (`1000m` as `1`, `1024Mi` as `1Gi`). A Pod's `qosClass` compares amounts, as the
//!     server's does, but reads only its containers' resources, not pod-level
//!     `spec.resources`. Compare quantities by amount
//!     ([`semantic_eq`](kclient_apimachinery::semantic_eq), as `create_or_update` does).
//!
//! # Example
//!
//! ```
//! use kclient_testing::Fake;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let fake = Fake::new();
//! let client = fake.client();
//! let created: serde_json::Value = client
//!     .post()
//!     .group_version("", "v1")
//!     .namespace("default")
//!     .resource("configmaps")
//!     .json(&serde_json::json!({"metadata": {"generateName": "cm-"}, "data": {"a": "1"}}))
//!     .send()
//!     .await?;
//! assert!(created["metadata"]["name"].as_str().unwrap().starts_with("cm-"));
//! let creates = fake.actions_matching("create", "configmaps");
//! assert_eq!(creates.len(), 1);
//! # Ok(()) }
//! ```

mod action;
mod defaults;
mod discovery;
mod fake;
mod managed_fields;
mod merge;
mod names;
mod numbers;
mod patch;
mod reactor;
mod registry;
mod schema;
mod selection;
mod subresource;
mod tracker;

pub use action::Action;
pub use fake::Fake;
pub use kclient_apimachinery::Error;
pub use reactor::{Reaction, ReactionFn};
pub use registry::{ResourceInfo, ResourceRegistry, ScalePaths, StorageVersion};
pub use schema::StructuralSchema;
pub use subresource::DEFAULT_TOKEN_AUDIENCE;
pub use tracker::{DEFAULT_HISTORY_WINDOW, ObjectTracker};
