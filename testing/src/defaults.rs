//! The defaults kube-apiserver fills in on every write, for the kinds the fake defaults:
//! Deployments, ReplicaSets, StatefulSets (not their volume claim templates), DaemonSets,
//! Jobs (and the selector their strategy generates on create), CronJobs,
//! Pods (their scheme defaults, and the Priority and
//! DefaultTolerationSeconds admission plugins' fields), pod templates, Services (with a
//! cluster IP drawn from 10.96.0.0/12) and Secrets (whose `stringData` goes into `data`),
//! and custom resources, pruned and defaulted by their CRD's schema. Other kinds are stored
//! as written (see the crate docs).

use kclient_apimachinery::meta::Quantity;
use serde_json::{Value, json};

use crate::registry::ResourceInfo;

/// Sets `key` to `value` when it is missing or null.
fn or_insert(obj: &mut Value, key: &str, value: Value) {
    if let Some(map) = obj.as_object_mut() {
        let slot = map.entry(key).or_insert(Value::Null);
        if slot.is_null() {
            *slot = value;
        }
    }
}

/// The object at `key`, made an object when missing.
fn object_at<'a>(obj: &'a mut Value, key: &str) -> &'a mut Value {
    if !obj[key].is_object() {
        obj[key] = json!({});
    }
    &mut obj[key]
}

/// A container's image pull policy when it names none: `Always` for a `:latest` or untagged
/// image, `IfNotPresent` otherwise (a digest counts as a tag).
fn pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    match last.split_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

fn container(c: &mut Value) {
    if !c.is_object() {
        return;
    }
    let image = c["image"].as_str().unwrap_or("").to_string();
    or_insert(c, "resources", json!({}));
    or_insert(c, "terminationMessagePath", json!("/dev/termination-log"));
    or_insert(c, "terminationMessagePolicy", json!("File"));
    or_insert(c, "imagePullPolicy", json!(pull_policy(&image)));
    for port in c
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        or_insert(port, "protocol", json!("TCP"));
    }
}

/// A PodSpec's defaults (in a Pod or a template).
fn pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    for list in ["initContainers", "containers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            container(c);
        }
    }
    or_insert(spec, "restartPolicy", json!("Always"));
    or_insert(spec, "terminationGracePeriodSeconds", json!(30));
    or_insert(spec, "dnsPolicy", json!("ClusterFirst"));
    or_insert(spec, "securityContext", json!({}));
    or_insert(spec, "schedulerName", json!("default-scheduler"));
}

fn template(spec: &mut Value) {
    if spec["template"].is_object() {
        pod_spec(object_at(&mut spec["template"], "spec"));
    }
}

/// A Pod's QoS class from its containers' requests and limits, as the server computes it
/// (`ComputePodQOS`): only positive CPU and memory amounts count, summed over the containers
/// and compared by amount (`1000m` is `1`). Guaranteed needs CPU and memory limits on every
/// container and the sums of requests equal to the sums of limits; with no amount at all the
/// Pod is BestEffort. Pod-level `spec.resources` are not read.
fn qos_class(spec: &Value) -> &'static str {
    /// The positive amount of `resource` in `list`, in thousandths.
    fn amount(list: &Value, resource: &str) -> Option<i128> {
        let text = list[resource].as_str()?;
        Quantity::from(text).to_milli().filter(|milli| *milli > 0)
    }
    const RESOURCES: [&str; 2] = ["cpu", "memory"];
    // Per resource: the sums of requests and of limits, where any container has one.
    let mut requests: [Option<i128>; 2] = [None; 2];
    let mut limits: [Option<i128>; 2] = [None; 2];
    let mut every_container_limited = true;
    let add = |sum: &mut Option<i128>, milli: i128| {
        *sum = Some(sum.unwrap_or(0).saturating_add(milli));
    };
    for container in ["containers", "initContainers"]
        .iter()
        .flat_map(|l| spec[*l].as_array().into_iter().flatten())
    {
        let resources = &container["resources"];
        for (i, resource) in RESOURCES.iter().enumerate() {
            if let Some(milli) = amount(&resources["requests"], resource) {
                add(&mut requests[i], milli);
            }
            match amount(&resources["limits"], resource) {
                Some(milli) => add(&mut limits[i], milli),
                None => every_container_limited = false,
            }
        }
    }
    if requests.iter().chain(&limits).all(Option::is_none) {
        return "BestEffort";
    }
    // Every request has its equal limit, and there are no more limits than requests.
    let matched = (0..RESOURCES.len()).all(|i| match (requests[i], limits[i]) {
        (Some(request), Some(limit)) => request == limit,
        (None, None) => true,
        _ => false,
    });
    if every_container_limited && matched {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

fn pod(obj: &mut Value, creating: bool) {
    let spec = object_at(obj, "spec");
    pod_spec(spec);
    // A Pod's container requests default to its limits.
    for list in ["initContainers", "containers"] {
        for c in spec
            .get_mut(list)
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            let Some(limits) = c["resources"]["limits"].as_object().cloned() else {
                continue;
            };
            let requests = object_at(object_at(c, "resources"), "requests");
            for (resource, quantity) in limits {
                or_insert(requests, &resource, quantity);
            }
        }
    }
    or_insert(spec, "enableServiceLinks", json!(true));
    // The Priority and DefaultTolerationSeconds admission plugins.
    or_insert(spec, "priority", json!(0));
    or_insert(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    let tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    let mut added = tolerations.clone();
    for key in [
        "node.kubernetes.io/not-ready",
        "node.kubernetes.io/unreachable",
    ] {
        let tolerated = tolerations.iter().any(|t| {
            (t["key"] == key || (t["key"].is_null() && t["operator"] == "Exists"))
                && (t["effect"].is_null() || t["effect"] == "NoExecute")
        });
        if !tolerated && creating {
            added.push(
                json!({"key": key, "operator": "Exists", "effect": "NoExecute",
                "tolerationSeconds": 300}),
            );
        }
    }
    if added.len() != tolerations.len() {
        spec["tolerations"] = json!(added);
    }
    let qos = qos_class(&obj["spec"]);
    if creating {
        obj["status"] = json!({"phase": "Pending", "qosClass": qos});
    }
}

fn deployment(obj: &mut Value, creating: bool) {
    let spec = object_at(obj, "spec");
    or_insert(spec, "replicas", json!(1));
    let strategy = object_at(spec, "strategy");
    or_insert(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        let rolling = object_at(strategy, "rollingUpdate");
        or_insert(rolling, "maxUnavailable", json!("25%"));
        or_insert(rolling, "maxSurge", json!("25%"));
    }
    or_insert(spec, "revisionHistoryLimit", json!(10));
    or_insert(spec, "progressDeadlineSeconds", json!(600));
    template(spec);
    if creating {
        or_insert(obj, "status", json!({}));
    }
}

fn replica_set(obj: &mut Value, creating: bool) {
    let spec = object_at(obj, "spec");
    or_insert(spec, "replicas", json!(1));
    template(spec);
    if creating {
        or_insert(obj, "status", json!({"replicas": 0}));
    }
}

fn stateful_set(obj: &mut Value, creating: bool) {
    let spec = object_at(obj, "spec");
    or_insert(spec, "replicas", json!(1));
    or_insert(spec, "podManagementPolicy", json!("OrderedReady"));
    let strategy = object_at(spec, "updateStrategy");
    or_insert(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        or_insert(object_at(strategy, "rollingUpdate"), "partition", json!(0));
    }
    or_insert(spec, "revisionHistoryLimit", json!(10));
    let retention = object_at(spec, "persistentVolumeClaimRetentionPolicy");
    or_insert(retention, "whenDeleted", json!("Retain"));
    or_insert(retention, "whenScaled", json!("Retain"));
    template(spec);
    if creating {
        or_insert(
            obj,
            "status",
            json!({"replicas": 0, "availableReplicas": 0}),
        );
    }
}

fn daemon_set(obj: &mut Value, creating: bool) {
    let spec = object_at(obj, "spec");
    let strategy = object_at(spec, "updateStrategy");
    or_insert(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        let rolling = object_at(strategy, "rollingUpdate");
        or_insert(rolling, "maxUnavailable", json!(1));
        or_insert(rolling, "maxSurge", json!(0));
    }
    or_insert(spec, "revisionHistoryLimit", json!(10));
    template(spec);
    if creating {
        set_daemon_set_template_generation(obj, 1);
        or_insert(
            obj,
            "status",
            json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
                "desiredNumberScheduled": 0, "numberReady": 0}),
        );
    }
}

/// A Job's defaults (`SetDefaults_Job`), and on create its strategy's generated selector:
/// without `manualSelector`, the selector matches the Job's uid, and the template carries
/// the uid and the Job's name as labels.
fn job(obj: &mut Value, creating: bool) {
    let spec = object_at(obj, "spec");
    if spec["completions"].is_null() && spec["parallelism"].is_null() {
        spec["completions"] = json!(1);
    }
    or_insert(spec, "parallelism", json!(1));
    let backoff = if spec["backoffLimitPerIndex"].is_null() {
        json!(6)
    } else {
        json!(i32::MAX)
    };
    or_insert(spec, "backoffLimit", backoff);
    or_insert(spec, "completionMode", json!("NonIndexed"));
    or_insert(spec, "suspend", json!(false));
    let replacement = if spec["podFailurePolicy"].is_null() {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    or_insert(spec, "podReplacementPolicy", json!(replacement));
    template(spec);
    if creating && obj["spec"]["manualSelector"] != json!(true) {
        let uid = obj["metadata"]["uid"].clone();
        let name = obj["metadata"]["name"].clone();
        obj["spec"]["manualSelector"] = json!(false);
        obj["spec"]["selector"] =
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid.clone()}});
        let labels = object_at(
            object_at(object_at(object_at(obj, "spec"), "template"), "metadata"),
            "labels",
        );
        for (key, value) in [
            ("batch.kubernetes.io/controller-uid", &uid),
            ("batch.kubernetes.io/job-name", &name),
            ("controller-uid", &uid),
            ("job-name", &name),
        ] {
            labels[key] = value.clone();
        }
    }
    // A Job without labels takes its template's, the generated ones too.
    let template_labels = obj["spec"]["template"]["metadata"]["labels"].clone();
    let meta = object_at(obj, "metadata");
    if template_labels.as_object().is_some_and(|l| !l.is_empty())
        && meta["labels"].as_object().is_none_or(|l| l.is_empty())
    {
        meta["labels"] = template_labels;
    }
    if creating {
        or_insert(obj, "status", json!({}));
    }
}

/// A CronJob's defaults (`SetDefaults_CronJob`), and its job template's pod template's.
fn cron_job(obj: &mut Value, creating: bool) {
    let spec = object_at(obj, "spec");
    or_insert(spec, "concurrencyPolicy", json!("Allow"));
    or_insert(spec, "suspend", json!(false));
    or_insert(spec, "successfulJobsHistoryLimit", json!(3));
    or_insert(spec, "failedJobsHistoryLimit", json!(1));
    if spec["jobTemplate"]["spec"].is_object() {
        // Go writes the templates' ObjectMeta even when empty.
        or_insert(&mut spec["jobTemplate"], "metadata", json!({}));
        or_insert(
            &mut spec["jobTemplate"]["spec"]["template"],
            "metadata",
            json!({}),
        );
        template(&mut spec["jobTemplate"]["spec"]);
    }
    if creating {
        or_insert(obj, "status", json!({}));
    }
}

/// The annotation a DaemonSet's strategy keeps at the generation of its last template change.
pub(crate) fn set_daemon_set_template_generation(obj: &mut Value, generation: i64) {
    let annotations = object_at(object_at(obj, "metadata"), "annotations");
    annotations["deprecated.daemonset.template.generation"] = json!(generation.to_string());
}

/// A cluster IP from the server's default service range, 10.96.0.0/12 (the fake does not
/// track which are taken: two Services get the same one with a chance of one in a million).
fn cluster_ip() -> String {
    let n: u32 = rand::random_range(2..(1 << 20) - 1);
    format!("10.{}.{}.{}", 96 + (n >> 16), (n >> 8) & 0xff, n & 0xff)
}

fn service(obj: &mut Value, creating: bool) {
    let spec = object_at(obj, "spec");
    or_insert(spec, "type", json!("ClusterIP"));
    or_insert(spec, "sessionAffinity", json!("None"));
    for port in spec
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        or_insert(port, "protocol", json!("TCP"));
        let number = port["port"].clone();
        or_insert(port, "targetPort", number);
    }
    if spec["type"] != "ExternalName" {
        if creating {
            or_insert(spec, "clusterIP", json!(cluster_ip()));
        }
        if let Some(ip) = spec["clusterIP"].as_str().map(str::to_string) {
            or_insert(spec, "clusterIPs", json!([ip]));
        }
        or_insert(spec, "ipFamilies", json!(["IPv4"]));
        or_insert(spec, "ipFamilyPolicy", json!("SingleStack"));
        or_insert(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if creating {
        or_insert(obj, "status", json!({"loadBalancer": {}}));
    }
}

/// A Secret's `type` (Opaque) and its `stringData` moved into `data`, base64-encoded, as
/// the server stores it.
fn secret(obj: &mut Value) {
    use base64::Engine as _;
    or_insert(obj, "type", json!("Opaque"));
    let Some(Value::Object(strings)) = obj.as_object_mut().and_then(|m| m.remove("stringData"))
    else {
        return;
    };
    let data = object_at(obj, "data");
    for (k, v) in strings {
        let text = v.as_str().unwrap_or("").to_string();
        data[k.as_str()] = json!(base64::engine::general_purpose::STANDARD.encode(text));
    }
}

/// Fills the defaults of `obj` (of the resource `info`) as the server does on a write;
/// `creating` for a create, where the server also sets the initial status.
pub(crate) fn apply(info: &ResourceInfo, obj: &mut Value, creating: bool) {
    let r = &info.api_resource;
    match (r.group.as_str(), r.kind.as_str()) {
        ("apps", "Deployment") => deployment(obj, creating),
        ("apps", "ReplicaSet") => replica_set(obj, creating),
        ("apps", "StatefulSet") => stateful_set(obj, creating),
        ("apps", "DaemonSet") => daemon_set(obj, creating),
        ("", "Pod") => pod(obj, creating),
        ("", "Service") => service(obj, creating),
        ("", "Secret") => secret(obj),
        ("batch", "Job") => job(obj, creating),
        ("batch", "CronJob") => cron_job(obj, creating),
        _ => {
            if let Some(schema) = &info.schema {
                schema.prune_and_default(obj);
            }
        }
    }
}

/// [`apply`] for the object a server-side apply made from an existing one: a custom
/// resource keeps the `null`s the apply left (`StructuralSchema::default_applied`).
pub(crate) fn apply_result(info: &ResourceInfo, obj: &mut Value) {
    match &info.schema {
        Some(schema) if info.patch_fields.is_none() => schema.default_applied(obj),
        _ => apply(info, obj, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_without_a_tag_or_latest_are_always_pulled() {
        assert_eq!(pull_policy("app"), "Always");
        assert_eq!(pull_policy("app:latest"), "Always");
        assert_eq!(pull_policy("registry:5000/app"), "Always");
        assert_eq!(pull_policy("registry:5000/app:1"), "IfNotPresent");
        assert_eq!(pull_policy("app@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn qos_classes() {
        let spec =
            |resources: Value| json!({"containers": [{"name": "a", "resources": resources}]});
        assert_eq!(qos_class(&spec(json!({}))), "BestEffort");
        // Requests default to limits before the class is computed (`pod`).
        let limited = |limits: Value| json!({"limits": limits.clone(), "requests": limits});
        assert_eq!(
            qos_class(&spec(limited(json!({"cpu": "1", "memory": "1Gi"})))),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&spec(json!({"limits": {"cpu": "1", "memory": "1Gi"}}))),
            "Burstable"
        );
        assert_eq!(
            qos_class(&spec(json!({"requests": {"cpu": "1"}}))),
            "Burstable"
        );
        // Amounts, not texts; only positive CPU and memory count.
        assert_eq!(
            qos_class(&spec(
                json!({"limits": {"cpu": "1000m", "memory": "1024Mi"},
                "requests": {"cpu": "1", "memory": "1Gi"}})
            )),
            "Guaranteed"
        );
        assert_eq!(
            qos_class(&spec(
                json!({"requests": {"cpu": "0", "ephemeral-storage": "1Gi"}})
            )),
            "BestEffort"
        );
        // Summed over the containers: every one needs both limits.
        let two = |second: Value| {
            json!({"containers": [
                {"name": "a", "resources": limited(json!({"cpu": "1", "memory": "1Gi"}))},
                {"name": "b", "resources": second}]})
        };
        assert_eq!(
            qos_class(&two(limited(json!({"cpu": "500m", "memory": "1Gi"})))),
            "Guaranteed"
        );
        assert_eq!(qos_class(&two(json!({}))), "Burstable");
    }

    #[test]
    fn service_ips_are_in_the_default_range() {
        for _ in 0..100 {
            let ip = cluster_ip();
            let octets: Vec<u32> = ip.split('.').map(|o| o.parse().unwrap()).collect();
            assert_eq!(octets[0], 10);
            assert!((96..112).contains(&octets[1]), "{ip}");
        }
    }
}
