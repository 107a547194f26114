//! The subresources the fake serves besides `status`, as kube-apiserver's registries do:
//! `scale` (Deployments, ReplicaSets, StatefulSets, ReplicationControllers and custom
//! resources whose CRD declares it), `pods/binding`, `pods/eviction`, `pods/log` and
//! `serviceaccounts/token`.

use kclient_apimachinery::{Error, PatchType, Selector, StatusReason};
use serde_json::{Value, json};

use crate::managed_fields;
use crate::patch;
use crate::registry::{ResourceInfo, ScalePaths};
use crate::schema::Schema;
use crate::tracker::{DeleteRequest, ObjectTracker, conflict, field_manager_required, now};

/// The audiences of a token when the request names none (kube-apiserver's default: its
/// service account issuer).
pub const DEFAULT_TOKEN_AUDIENCE: &str = "https://kubernetes.default.svc.cluster.local";

/// What a served subresource answers: a JSON body with its HTTP code, or an empty body.
pub(crate) enum Answer {
    /// A JSON body.
    Json(u16, Value),
    /// No content (204), as the server answers the log of a Pod that never ran.
    NoContent,
}

/// The value at a `.a.b` path of a CRD's scale subresource.
fn at_path<'a>(obj: &'a Value, path: &str) -> &'a Value {
    path.trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
        .fold(obj, |v, key| &v[key])
}

/// Sets the value at a `.a.b` path, creating the objects on the way.
fn set_path(obj: &mut Value, path: &str, value: Value) {
    let keys: Vec<&str> = path
        .trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
        .collect();
    let mut here = obj;
    for key in &keys[..keys.len().saturating_sub(1)] {
        if !here[*key].is_object() {
            here[*key] = json!({});
        }
        here = &mut here[*key];
    }
    if let Some(last) = keys.last() {
        here[*last] = value;
    }
}

/// The selector string of a Scale: a built-in's `spec.selector` (a LabelSelector, or a
/// ReplicationController's map), or the string at a CRD's `labelSelectorPath`.
fn scale_selector(paths: &ScalePaths, obj: &Value) -> Option<String> {
    if let Some(path) = &paths.label_selector {
        return at_path(obj, path).as_str().map(str::to_string);
    }
    let spec = &obj["spec"]["selector"];
    if spec.is_null() {
        return None;
    }
    let as_label_selector =
        if spec.get("matchLabels").is_some() || spec.get("matchExpressions").is_some() {
            spec.clone()
        } else {
            json!({"matchLabels": spec})
        };
    let selector: kclient_apimachinery::meta::v1::LabelSelector =
        serde_json::from_value(as_label_selector).ok()?;
    Selector::from_label_selector(Some(&selector))
        .ok()
        .map(|s| s.to_string())
        .filter(|s| !s.is_empty())
}

/// The `autoscaling/v1` Scale of an object.
pub(crate) fn scale_of(paths: &ScalePaths, obj: &Value) -> Value {
    let m = &obj["metadata"];
    let mut metadata = json!({"name": m["name"], "namespace": m["namespace"], "uid": m["uid"],
        "resourceVersion": m["resourceVersion"], "creationTimestamp": m["creationTimestamp"]});
    if let Some(map) = metadata.as_object_mut() {
        map.retain(|_, v| !v.is_null());
    }
    let mut spec = json!({});
    if let Some(r) = at_path(obj, &paths.spec_replicas)
        .as_i64()
        .filter(|r| *r != 0)
    {
        spec["replicas"] = json!(r);
    }
    let mut status =
        json!({"replicas": at_path(obj, &paths.status_replicas).as_i64().unwrap_or(0)});
    if let Some(selector) = scale_selector(paths, obj) {
        status["selector"] = json!(selector);
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": metadata,
        "spec": spec, "status": status})
}

/// A Scale written with a resourceVersion must name the object's current one (409 otherwise,
/// as the server's update precondition).
fn check_scale_version(
    info: &ResourceInfo,
    name: &str,
    asked_rv: &str,
    existing: &Value,
) -> Result<(), Error> {
    if !asked_rv.is_empty() && Some(asked_rv) != existing["metadata"]["resourceVersion"].as_str() {
        return Err(conflict(info, name));
    }
    Ok(())
}

/// Checks a Scale written by a client: its kind, its name against the URL's, and its
/// replicas.
fn check_scale(name: &str, scale: &Value) -> Result<i64, Error> {
    let kind = scale["kind"].as_str().unwrap_or("");
    if !kind.is_empty() && kind != "Scale" {
        return Err(Error::new_bad_request(format!(
            "the kind in the body ({kind}) is not Scale"
        )));
    }
    let body_name = scale["metadata"]["name"].as_str().unwrap_or("");
    if !body_name.is_empty() && body_name != name {
        return Err(Error::new_bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({name})"
        )));
    }
    let replicas = scale["spec"]["replicas"].as_i64().unwrap_or(0);
    if replicas < 0 {
        return Err(Error::new_invalid(
            "autoscaling",
            "Scale",
            name,
            &[(
                "spec.replicas",
                &format!("Invalid value: {replicas}: must be greater than or equal to 0"),
            )],
        ));
    }
    Ok(replicas)
}

/// GET, PUT and PATCH of `scale`.
pub(crate) fn scale(
    tracker: &ObjectTracker,
    info: &ResourceInfo,
    paths: &ScalePaths,
    (verb, namespace, name): (&str, &str, &str),
    patch_type: Option<PatchType>,
    body: &[u8],
    (manager, force): (&str, bool),
) -> Result<Answer, Error> {
    if verb == "patch" && patch_type == Some(PatchType::Apply) {
        return apply_scale(
            tracker,
            info,
            paths,
            (namespace, name),
            body,
            (manager, force),
        );
    }
    let current = tracker.get_object(info, namespace, name)?;
    let written: Value = match verb {
        "get" => return Ok(Answer::Json(200, scale_of(paths, &current))),
        "update" => body_json(body)?,
        "patch" => {
            let patch_type = patch_type.unwrap_or(PatchType::Merge);
            let scale_info = scale_patch_info(info);
            let decoded = patch::decode(&scale_info, patch_type, body)?;
            patch::apply(
                &scale_info,
                patch_type,
                &decoded,
                &scale_of(paths, &current),
            )?
        }
        _ => {
            return Err(Error::new_method_not_supported(
                &info.api_resource.group,
                &format!("{}/scale", info.api_resource.plural),
                verb,
            ));
        }
    };
    let replicas = check_scale(name, &written)?;
    let asked_rv = written["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let updated =
        tracker.write_subresource(info, namespace, name, (manager, "scale"), |existing| {
            check_scale_version(info, name, &asked_rv, existing)?;
            let mut new = existing.clone();
            set_path(&mut new, &paths.spec_replicas, json!(replicas));
            Ok(new)
        })?;
    Ok(Answer::Json(200, scale_of(paths, &updated)))
}

/// Server-side apply of an `autoscaling/v1` Scale configuration, as the server's scale
/// registries serve it: the configuration's `spec.replicas` is written to the object, whose
/// `managedFields` record the manager as an `Apply` through `scale` owning the replicas
/// field; a manager that stops applying replicas it alone owned sets them to 0 (the Scale's
/// zero value, as on the server). Replicas of another value that another manager owns are a
/// conflict unless `force`, which takes them. The answer is the Scale.
fn apply_scale(
    tracker: &ObjectTracker,
    info: &ResourceInfo,
    paths: &ScalePaths,
    (namespace, name): (&str, &str),
    body: &[u8],
    (manager, force): (&str, bool),
) -> Result<Answer, Error> {
    if manager.is_empty() {
        return Err(field_manager_required());
    }
    tracker.get_object(info, namespace, name)?;
    let config = patch::decode(info, PatchType::Apply, body)?;
    // The server decodes the configuration as the Scale it expects, by its own type.
    let api_version = config["apiVersion"].as_str().unwrap_or("");
    let kind = config["kind"].as_str().unwrap_or("");
    if (api_version, kind) != ("autoscaling/v1", "Scale") {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        return Err(Error::new_bad_request(format!(
            "invalid object type: {group}/{version}, Kind={kind}"
        )));
    }
    check_scale(name, &config)?;
    let applied_replicas = config["spec"]["replicas"].as_i64();
    let asked_rv = config["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let replicas_path: Vec<String> = paths
        .spec_replicas
        .trim_start_matches('.')
        .split('.')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    let updated =
        tracker.apply_subresource(info, namespace, name, (manager, "scale"), |existing| {
            check_scale_version(info, name, &asked_rv, existing)?;
            let replicas = match applied_replicas {
                Some(r) => Some(r),
                // Replicas this manager applied before, applies no more and nobody else
                // owns are removed from the Scale, which then asks for 0.
                None => managed_fields::removed_by_apply(
                    existing,
                    manager,
                    "scale",
                    &json!({}),
                    Schema::Unknown,
                )
                .contains(&replicas_path)
                .then_some(0),
            };
            let mut new = existing.clone();
            let mut applied = json!({});
            if let Some(r) = replicas {
                set_path(&mut new, &paths.spec_replicas, json!(r));
                set_path(&mut applied, &paths.spec_replicas, json!(r));
            }
            let conflicts = managed_fields::apply_conflicts(
                existing,
                manager,
                "scale",
                (&applied, &new),
                Schema::Unknown,
            );
            if !conflicts.is_empty() && !force {
                return Err(crate::tracker::apply_conflict(&conflicts));
            }
            managed_fields::force_ownership(&mut new, manager, "scale", &conflicts);
            Ok((new, applied))
        })?;
    Ok(Answer::Json(200, scale_of(paths, &updated)))
}

/// How a Scale is patched: as the built-in `autoscaling/v1` Scale.
fn scale_patch_info(parent: &ResourceInfo) -> ResourceInfo {
    use kclient_apimachinery::meta::PatchMeta as _;
    let mut info = parent.clone();
    info.patch_fields = Some(kclient_api::autoscaling::v1::Scale::patch_fields());
    info
}

/// A `Status` of success with `code`, as binding and eviction answer.
fn success(code: u16) -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code})
}

/// A request body as JSON; 400 when it is not JSON, as the server answers.
pub(crate) fn body_json(body: &[u8]) -> Result<Value, Error> {
    serde_json::from_slice(body).map_err(|e| {
        Error::new_bad_request(format!(
            "the body of the request was in an unknown format: {e}"
        ))
    })
}

/// The body of a POST to a subresource (a Binding, an Eviction, a TokenRequest): its JSON,
/// refused as the create handler refuses it, before the registry sees it, when its
/// `metadata.namespace` is set and is not the URL's.
fn subresource_body(body: &[u8], namespace: &str) -> Result<Value, Error> {
    let value = body_json(body)?;
    let body_ns = value["metadata"]["namespace"].as_str().unwrap_or("");
    if !body_ns.is_empty() && body_ns != namespace {
        return Err(Error::new_bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(value)
}

/// A conflict whose details name `pods/binding`, as the binding registry reports it.
fn binding_conflict(name: &str, message: &str) -> Error {
    let mut status = kclient_apimachinery::Status::failure(
        409,
        StatusReason::Conflict,
        format!("Operation cannot be fulfilled on pods/binding \"{name}\": {message}"),
    );
    status.details = Some(kclient_apimachinery::StatusDetails {
        name: name.to_string(),
        kind: "pods/binding".into(),
        ..Default::default()
    });
    Error::from_status(status)
}

/// POST `pods/{name}/binding`: sets `spec.nodeName` and the PodScheduled condition of a Pod
/// that is not yet bound, as the scheduler's bind does.
pub(crate) fn bind(
    tracker: &ObjectTracker,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    body: &[u8],
    manager: &str,
) -> Result<Answer, Error> {
    let binding = subresource_body(body, namespace)?;
    let body_name = binding["metadata"]["name"].as_str().unwrap_or("");
    if body_name != name {
        return Err(Error::new_bad_request(
            "name in URL does not match name in Binding object",
        ));
    }
    let node = binding["target"]["name"].as_str().unwrap_or("");
    let kind = binding["target"]["kind"].as_str().unwrap_or("");
    if node.is_empty() || !(kind.is_empty() || kind == "Node") {
        let problem = if node.is_empty() {
            ("target.name", "Required value".to_string())
        } else {
            (
                "target.kind",
                format!("Invalid value: {kind:?}: must be empty or 'Node'"),
            )
        };
        return Err(Error::new_invalid(
            "",
            "Binding",
            name,
            &[(problem.0, problem.1.as_str())],
        ));
    }
    tracker.write_subresource(info, namespace, name, (manager, "binding"), |pod| {
        if !pod["metadata"]["deletionTimestamp"].is_null() {
            return Err(binding_conflict(
                name,
                &format!("pod {name} is being deleted, cannot be assigned to a host"),
            ));
        }
        if let Some(bound) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
            return Err(binding_conflict(
                name,
                &format!("pod {name} is already assigned to node {bound:?}"),
            ));
        }
        let mut new = pod.clone();
        new["spec"]["nodeName"] = json!(node);
        if let Some(annotations) = binding["metadata"]["annotations"].as_object() {
            let m = &mut new["metadata"];
            if !m["annotations"].is_object() {
                m["annotations"] = json!({});
            }
            for (k, v) in annotations {
                m["annotations"][k] = v.clone();
            }
        }
        update_pod_condition(&mut new, json!({"type": "PodScheduled", "status": "True"}));
        Ok(new)
    })?;
    Ok(Answer::Json(201, success(201)))
}

/// POST `pods/{name}/eviction`, as the server's eviction registry serves it: a Pending,
/// finished or terminating Pod is deleted as a delete with the eviction's `deleteOptions`
/// would delete it; any other Pod only if the PodDisruptionBudget selecting it lets it go
/// (see [`check_disruption_budgets`]). `dry_run` is the request's `dryRun=All`; the
/// eviction's `deleteOptions.dryRun` makes it a dry run too, which checks everything and
/// writes nothing.
pub(crate) fn evict(
    tracker: &ObjectTracker,
    info: &ResourceInfo,
    (namespace, name): (&str, &str),
    body: &[u8],
    dry_run: bool,
) -> Result<Answer, Error> {
    let eviction = subresource_body(body, namespace)?;
    let body_name = eviction["metadata"]["name"].as_str().unwrap_or("");
    if body_name != name {
        return Err(Error::new_bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let options = &eviction["deleteOptions"];
    if options["ignoreStoreReadErrorWithClusterBreakingPotential"] == json!(true) {
        return Err(Error::new_invalid(
            "policy",
            "Eviction",
            name,
            &[(
                "deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential",
                "Invalid value: true: can not be set for pod eviction, try after removing the option",
            )],
        ));
    }
    let body_dry_run: Vec<&str> = options["dryRun"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    if dry_run && !body_dry_run.is_empty() && body_dry_run != ["All"] {
        return Err(Error::from_status(kclient_apimachinery::Status::failure(
            500,
            StatusReason::Unknown,
            format!(
                "Non-matching dry-run options in request and content: [All] and [{}]",
                body_dry_run.join(" ")
            ),
        )));
    }
    // A dry run asked for in the body runs on a copy, as one asked for in the query does.
    let copy;
    let (tracker, dry_run) = if !dry_run && !body_dry_run.is_empty() {
        copy = tracker.dry_run_copy();
        (&copy, true)
    } else {
        (tracker, dry_run)
    };
    let mut request = DeleteRequest {
        uid: options["preconditions"]["uid"].as_str().map(str::to_string),
        resource_version: options["preconditions"]["resourceVersion"]
            .as_str()
            .map(str::to_string),
        propagation: options["propagationPolicy"].as_str().map(str::to_string),
        grace_period: options["gracePeriodSeconds"].as_i64(),
    };
    let pod = tracker.get_object(info, namespace, name)?;
    if let Some(budget) = check_disruption_budgets(tracker, namespace, &pod, dry_run)? {
        // An unready Pod goes without a disruption, on the version the budget was weighed
        // against (whatever version the caller named): a conflict then reads as the
        // budget's refusal, unless the caller named a version.
        let asked_version = request.resource_version.is_some();
        request.resource_version = Some(str_of(&pod, "resourceVersion").to_string());
        return match delete_evicted(tracker, info, (namespace, name), request, dry_run) {
            Err(e) if e.is_conflict() && !asked_version => Err(budget_in_progress(&budget)),
            other => other,
        };
    }
    delete_evicted(tracker, info, (namespace, name), request, dry_run)
}

/// The registry's addConditionAndDeletePod: the preconditions are checked against the
/// stored Pod, then the Pod, whatever its phase, is told why it goes (a DisruptionTarget
/// condition), then it is deleted. A resourceVersion precondition moves on to the version
/// that write made, so the eviction's own write does not fail it. A dry run writes no
/// condition: only the delete's own checks run.
fn delete_evicted(
    tracker: &ObjectTracker,
    info: &ResourceInfo,
    (namespace, name): (&str, &str),
    mut request: DeleteRequest,
    dry_run: bool,
) -> Result<Answer, Error> {
    if !dry_run {
        let written =
            tracker.write_subresource(info, namespace, name, ("", "status"), |stored| {
                check_eviction_preconditions(name, stored, &request)?;
                let mut new = stored.clone();
                update_pod_condition(
                    &mut new,
                    json!({"type": "DisruptionTarget", "status": "True",
                    "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}),
                );
                Ok(new)
            })?;
        if request.resource_version.is_some() {
            request.resource_version = Some(str_of(&written, "resourceVersion").to_string());
        }
    }
    tracker.delete(info, namespace, name, &request)?;
    Ok(Answer::Json(201, success(201)))
}

/// A field of an object's metadata, or "".
fn str_of<'a>(obj: &'a Value, field: &str) -> &'a str {
    obj["metadata"][field].as_str().unwrap_or("")
}

/// The preconditions of an eviction against the stored Pod, worded as the eviction's own
/// read of the Pod words a mismatch (a Conflict on `Pod`).
fn check_eviction_preconditions(
    name: &str,
    stored: &Value,
    request: &DeleteRequest,
) -> Result<(), Error> {
    let checks = [
        (
            &request.uid,
            "uid",
            "UID",
            "The object might have been deleted and then recreated",
        ),
        (
            &request.resource_version,
            "resourceVersion",
            "ResourceVersion",
            "The object might have been modified",
        ),
    ];
    for (wanted, field, label, hint) in checks {
        let stored = str_of(stored, field);
        if let Some(wanted) = wanted.as_deref().filter(|w| !w.is_empty() && *w != stored) {
            return Err(Error::new_conflict(
                "",
                "Pod",
                name,
                &format!(
                    "the {label} in the precondition ({wanted}) does not match the {label} in record ({stored}). {hint}"
                ),
            ));
        }
    }
    Ok(())
}

/// Sets a condition of `pod` as the server's `UpdatePodCondition` does: a condition of a new
/// type is appended; one of a known type is replaced in place, and keeps its
/// `lastTransitionTime` when its status stays the same. So evicting a terminating Pod again
/// writes nothing new.
fn update_pod_condition(pod: &mut Value, mut condition: Value) {
    condition["lastProbeTime"] = Value::Null;
    condition["lastTransitionTime"] = json!(now());
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else {
        return;
    };
    match conditions
        .iter_mut()
        .find(|c| c["type"] == condition["type"])
    {
        Some(old) => {
            if old["status"] == condition["status"] {
                condition["lastTransitionTime"] = old["lastTransitionTime"].clone();
            }
            // The server compares these fields; an absent one reads as empty (null).
            let field = |c: &Value, f: &str| c.get(f).cloned().unwrap_or(Value::Null);
            let same = [
                "status",
                "reason",
                "message",
                "lastProbeTime",
                "lastTransitionTime",
            ]
            .iter()
            .all(|f| field(old, f) == field(&condition, f));
            if !same {
                *old = condition;
            }
        }
        None => conditions.push(condition),
    }
}

/// The refusal of an eviction (429) with its cause, of type `DisruptionBudget`, as the
/// eviction registry words it.
fn budget_refusal(cause: String, retry_after_seconds: u32) -> Error {
    let error = Error::new_too_many_requests(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        retry_after_seconds,
    );
    let Some(mut status) = error.status().cloned() else {
        return error;
    };
    if let Some(details) = status.details.as_mut() {
        details.causes.push(kclient_apimachinery::StatusCause {
            cause_type: "DisruptionBudget".into(),
            message: cause,
            ..Default::default()
        });
    }
    Error::from_status(status)
}

/// The refusal while a budget's status is not up to date (or a Pod the budget let go
/// changed meanwhile): retry in 10 s.
fn budget_in_progress(pdb_name: &str) -> Error {
    budget_refusal(
        format!("The disruption budget {pdb_name} is still being processed by the server."),
        10,
    )
}

/// The budget's DisruptionAllowed condition, if any.
fn disruption_allowed_condition(pdb: &Value) -> Option<&Value> {
    pdb["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "DisruptionAllowed")
}

/// Why a budget with no disruption left refuses, as the registry says it: a failed sync
/// first (then the counts are not to be trusted), then the counts when there are too few
/// healthy Pods, else the reason of the DisruptionAllowed condition.
fn disruption_denied(pdb_name: &str, pdb: &Value) -> String {
    let status = &pdb["status"];
    let current = status["currentHealthy"].as_i64().unwrap_or(0);
    let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
    let failed = disruption_allowed_condition(pdb)
        .filter(|c| c["status"] == "False" && c["message"].as_str().is_some_and(|m| !m.is_empty()));
    let text = |c: &Value, f: &str| c[f].as_str().unwrap_or("").to_string();
    match failed {
        Some(c) if c["reason"] == "SyncFailed" => format!(
            "The disruption budget {pdb_name} does not allow evicting pods currently because it failed sync: {}",
            text(c, "message")
        ),
        _ if current <= desired => format!(
            "The disruption budget {pdb_name} needs {desired} healthy pods and has {current} currently"
        ),
        Some(c) => format!(
            "The disruption budget {pdb_name} does not allow evicting pods currently ({}): {}",
            text(c, "reason"),
            text(c, "message")
        ),
        None => format!("The disruption budget {pdb_name} does not allow evicting pods currently"),
    }
}

/// The most evictions a budget may hold that the disruption controller has not yet seen
/// (the registry's `MaxDisruptedPodSize`).
const MAX_DISRUPTED_PODS: usize = 2000;

/// The field manager of the eviction registry's writes to a budget's status (the API
/// server's own client).
const EVICTION_BUDGET_MANAGER: &str = "kube-apiserver";

/// The eviction registry's budget check, for a Pod that is not Pending, finished or
/// terminating (those go whatever their budgets). The budgets selecting the Pod are those of
/// its namespace whose selector matches its labels (an empty selector matches every Pod, a
/// missing one none); more than one refuses (500). A Pod that is not Ready goes without a
/// disruption when its budget's `unhealthyPodEvictionPolicy` is `AlwaysAllow`, or while the
/// budget is healthy (`currentHealthy >= desiredHealthy > 0`): then the budget's name is
/// returned, and the Pod is deleted on the version read. Otherwise the budget's status, as
/// the disruption controller wrote it (none runs in the fake: a test writes it), must be
/// observed at the budget's generation (429, retry in 10 s), hold no negative count nor
/// over 2000 evictions not yet seen (403) and allow a disruption (429), which is spent:
/// `disruptionsAllowed` less one, the Pod added to `disruptedPods`, and at 0 the
/// `DisruptionAllowed` condition set to False. A dry run checks it all and writes nothing.
fn check_disruption_budgets(
    tracker: &ObjectTracker,
    namespace: &str,
    pod: &Value,
    dry_run: bool,
) -> Result<Option<String>, Error> {
    let phase = pod["status"]["phase"].as_str().unwrap_or("");
    if matches!(phase, "Pending" | "Succeeded" | "Failed")
        || !pod["metadata"]["deletionTimestamp"].is_null()
    {
        return Ok(None);
    }
    let Ok(pdb_info) = tracker.info("policy", "v1", "poddisruptionbudgets") else {
        return Ok(None);
    };
    let labels: std::collections::BTreeMap<String, String> =
        serde_json::from_value(pod["metadata"]["labels"].clone()).unwrap_or_default();
    let matching: Vec<Value> = tracker
        .list_values("policy", "v1", "poddisruptionbudgets", namespace)
        .into_iter()
        .filter(|pdb| {
            let selector: Option<kclient_apimachinery::meta::v1::LabelSelector> =
                serde_json::from_value(pdb["spec"]["selector"].clone()).ok();
            let Ok(selector) = Selector::from_label_selector(selector.as_ref()) else {
                return false;
            };
            selector.matches(&labels)
        })
        .collect();
    let pdb = match matching.as_slice() {
        [] => return Ok(None),
        [one] => one,
        _ => {
            return Err(Error::from_status(kclient_apimachinery::Status::failure(
                500,
                StatusReason::Unknown,
                "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
            )));
        }
    };
    let pdb_name = str_of(pdb, "name").to_string();
    let status = &pdb["status"];
    let count = |field: &str| status[field].as_i64().unwrap_or(0);
    let ready = pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    if !ready {
        let always_allow = pdb["spec"]["unhealthyPodEvictionPolicy"] == "AlwaysAllow";
        let healthy =
            count("currentHealthy") >= count("desiredHealthy") && count("desiredHealthy") > 0;
        if always_allow || healthy {
            return Ok(Some(pdb_name));
        }
    }
    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(0);
    if count("observedGeneration") < generation {
        return Err(budget_in_progress(&pdb_name));
    }
    let forbidden =
        |reason: &str| Error::new_forbidden("policy", "poddisruptionbudget", &pdb_name, reason);
    let allowed = count("disruptionsAllowed");
    if allowed < 0 {
        return Err(forbidden("pdb disruptions allowed is negative"));
    }
    let disrupted = status["disruptedPods"].as_object().map_or(0, |m| m.len());
    if disrupted > MAX_DISRUPTED_PODS {
        return Err(forbidden(
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        return Err(budget_refusal(disruption_denied(&pdb_name, pdb), 0));
    }
    if dry_run {
        return Ok(None);
    }
    let pod_name = str_of(pod, "name").to_string();
    tracker.write_subresource(
        &pdb_info,
        namespace,
        &pdb_name,
        (EVICTION_BUDGET_MANAGER, "status"),
        |stored| {
            let mut new = stored.clone();
            new["status"]["disruptionsAllowed"] = json!(allowed - 1);
            if allowed == 1 {
                set_disruption_not_allowed(&mut new);
            }
            if !new["status"]["disruptedPods"].is_object() {
                new["status"]["disruptedPods"] = json!({});
            }
            new["status"]["disruptedPods"][&pod_name] = json!(now());
            Ok(new)
        },
    )?;
    Ok(None)
}

/// Sets a budget's DisruptionAllowed condition to False (reason InsufficientPods), as
/// `SetStatusCondition` sets a condition: its transition time changes only with its status.
fn set_disruption_not_allowed(pdb: &mut Value) {
    let observed = pdb["status"]["observedGeneration"].clone();
    let condition = json!({"type": "DisruptionAllowed", "status": "False",
        "reason": "InsufficientPods", "message": "", "observedGeneration": observed,
        "lastTransitionTime": now()});
    if !pdb["status"]["conditions"].is_array() {
        pdb["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pdb["status"]["conditions"].as_array_mut() else {
        return;
    };
    match conditions
        .iter_mut()
        .find(|c| c["type"] == "DisruptionAllowed")
    {
        Some(old) => {
            if old["status"] == "False" {
                let since = old["lastTransitionTime"].clone();
                *old = condition;
                old["lastTransitionTime"] = since;
            } else {
                *old = condition;
            }
        }
        None => conditions.push(condition),
    }
}

/// POST `serviceaccounts/{name}/token`: a TokenRequest answered with a token (not a signed
/// JWT: nothing verifies it in the fake) and its expiration.
pub(crate) fn token(
    tracker: &ObjectTracker,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
    body: &[u8],
    manager: &str,
) -> Result<Answer, Error> {
    let request = subresource_body(body, namespace)?;
    let account = tracker.get_object(info, namespace, name)?;
    let spec = &request["spec"];
    let expiration = spec["expirationSeconds"].as_i64().unwrap_or(3600);
    if expiration < 600 {
        return Err(Error::new_invalid(
            "authentication.k8s.io",
            "TokenRequest",
            "",
            &[(
                "spec.expirationSeconds",
                &format!(
                    "Invalid value: {expiration}: may not specify a duration less than 10 minutes"
                ),
            )],
        ));
    }
    if expiration > 1 << 32 {
        return Err(Error::new_invalid(
            "authentication.k8s.io",
            "TokenRequest",
            "",
            &[(
                "spec.expirationSeconds",
                &format!(
                    "Invalid value: {expiration}: may not specify a duration larger than 2^32 seconds"
                ),
            )],
        ));
    }
    let audiences = match spec["audiences"].as_array() {
        Some(a) if !a.is_empty() => json!(a),
        _ => json!([DEFAULT_TOKEN_AUDIENCE]),
    };
    let time = now();
    let mut fields = serde_json::Map::new();
    for key in ["audiences", "expirationSeconds", "boundObjectRef"] {
        if !spec[key].is_null() {
            fields.insert(format!("f:{key}"), json!({}));
        }
    }
    let mut metadata = json!({
        "name": name,
        "namespace": namespace,
        "uid": account["metadata"]["uid"],
        "creationTimestamp": time,
    });
    if !manager.is_empty() {
        metadata["managedFields"] = json!([{
            "manager": manager, "operation": "Update", "apiVersion": "authentication.k8s.io/v1",
            "time": time, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": fields},
            "subresource": "token",
        }]);
    }
    let expires =
        kclient_apimachinery::meta::Time(kclient_apimachinery::meta::Time::now().0 + expiration);
    let token = format!(
        "kclient-fake-token.{namespace}.{name}.{:016x}",
        rand::random::<u64>()
    );
    Ok(Answer::Json(
        201,
        json!({
            "kind": "TokenRequest",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": metadata,
            "spec": {"audiences": audiences, "expirationSeconds": expiration,
                "boundObjectRef": spec["boundObjectRef"]},
            "status": {"token": token, "expirationTimestamp": expires.to_string()},
        }),
    ))
}

/// GET `pods/{name}/log`: no container runs in the fake, so there is nothing to show; the
/// server answers so (204) for a Pod no kubelet has run.
pub(crate) fn log(
    tracker: &ObjectTracker,
    info: &ResourceInfo,
    namespace: &str,
    name: &str,
) -> Result<Answer, Error> {
    tracker.get_object(info, namespace, name)?;
    Ok(Answer::NoContent)
}
