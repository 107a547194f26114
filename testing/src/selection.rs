//! `Selection`: which objects a list, watch or delete-collection covers (namespace, label
//! selector, field selector), parsed and checked as kube-apiserver checks them, with the
//! field selectors each kind supports (a CRD's `selectableFields` among them).

use kclient_apimachinery::{Error, FieldSelector, Selector};
use serde_json::Value;

use crate::registry::ResourceInfo;

/// The field selectors a kind supports besides `metadata.name` and `metadata.namespace`
/// (kube-apiserver's `GetAttrs`/field label conversion functions of the pinned version).
fn extra_fields(group: &str, kind: &str) -> &'static [&'static str] {
    match (group, kind) {
        ("", "Pod") => &[
            "spec.nodeName",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.serviceAccountName",
            "spec.hostNetwork",
            "status.phase",
            "status.podIP",
            "status.podIPs",
            "status.nominatedNodeName",
        ],
        ("", "Secret") => &["type"],
        ("", "Namespace") => &["status.phase"],
        ("", "Node") => &["spec.unschedulable"],
        ("", "ReplicationController") => &["status.replicas"],
        ("apps", "ReplicaSet") => &["status.replicas"],
        ("batch", "Job") => &["status.successful"],
        ("events.k8s.io", "Event") => &[
            "regarding.kind",
            "regarding.namespace",
            "regarding.name",
            "regarding.uid",
            "regarding.apiVersion",
            "regarding.resourceVersion",
            "regarding.fieldPath",
            "reason",
            "reportingController",
            "type",
        ],
        ("certificates.k8s.io", "CertificateSigningRequest") => &["spec.signerName"],
        ("", "Event") => &[
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        ],
        _ => &[],
    }
}

/// The namespace and selectors of a collection request.
#[derive(Debug, Clone)]
pub(crate) struct Selection {
    pub(crate) namespace: Option<String>,
    pub(crate) labels: Selector,
    pub(crate) fields: FieldSelector,
    field_names: Vec<String>,
    /// The group and kind, for the fields the server computes rather than reads.
    group: String,
    kind: String,
}

impl Selection {
    /// Parses `labelSelector` and `fieldSelector` as the server does: a selector that does
    /// not parse, or a field the kind does not support, is a 400 BadRequest.
    pub(crate) fn parse(
        info: &ResourceInfo,
        namespace: Option<&str>,
        label_selector: Option<&str>,
        field_selector: Option<&str>,
    ) -> Result<Selection, Error> {
        let labels = match label_selector.filter(|s| !s.is_empty()) {
            None => Selector::everything(),
            Some(s) => Selector::parse(s)
                .map_err(|e| Error::new_bad_request(format!("unable to parse requirement: {e}")))?,
        };
        let fields = match field_selector.filter(|s| !s.is_empty()) {
            None => FieldSelector::everything(),
            Some(s) => FieldSelector::parse(s).map_err(|e| {
                Error::new_bad_request(format!("invalid field selector {s:?}: {e}"))
            })?,
        };
        let extra = extra_fields(&info.api_resource.group, &info.api_resource.kind);
        let mut field_names = Vec::new();
        for req in fields.requirements() {
            let field = req.field.as_str();
            if field != "metadata.name"
                && field != "metadata.namespace"
                && !extra.contains(&field)
                && !info.selectable_fields.iter().any(|f| f == field)
            {
                return Err(Error::new_bad_request(format!(
                    "field label not supported: {field}"
                )));
            }
            field_names.push(field.to_string());
        }
        Ok(Selection {
            namespace: namespace.filter(|n| !n.is_empty()).map(str::to_string),
            labels,
            fields,
            field_names,
            group: info.api_resource.group.clone(),
            kind: info.api_resource.kind.clone(),
        })
    }

    /// Whether the selectors are both empty (the server reports `remainingItemCount` only
    /// then).
    pub(crate) fn is_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }

    /// Whether `object` is selected.
    pub(crate) fn matches(&self, object: &Value) -> bool {
        let meta = &object["metadata"];
        if let Some(ns) = &self.namespace
            && meta["namespace"].as_str().unwrap_or("") != ns
        {
            return false;
        }
        if !self.labels.is_empty() {
            let empty = serde_json::Map::new();
            let labels = meta["labels"].as_object().unwrap_or(&empty);
            if !self.labels.matches(labels) {
                return false;
            }
        }
        if !self.fields.is_empty() {
            let values: Vec<(&str, String)> = self
                .field_names
                .iter()
                .map(|f| (f.as_str(), self.field_value(object, f)))
                .collect();
            return self.fields.matches_with(|name| {
                values
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, v)| v.as_str())
            });
        }
        true
    }
}

impl Selection {
    /// The value of a field in the server's field set for the kind: computed for a Job's
    /// `status.successful` (`status.succeeded` as text, `"0"` when unset) and a core Event's
    /// `source` (`source.component`, else `reportingComponent`), read from the object
    /// otherwise.
    fn field_value(&self, object: &Value, path: &str) -> String {
        match (self.group.as_str(), self.kind.as_str(), path) {
            ("batch", "Job", "status.successful") => object["status"]["succeeded"]
                .as_i64()
                .unwrap_or(0)
                .to_string(),
            ("", "Event", "source") => {
                match object["source"]["component"]
                    .as_str()
                    .filter(|c| !c.is_empty())
                {
                    Some(component) => component.to_string(),
                    None => field_value(object, "reportingComponent"),
                }
            }
            _ => field_value(object, path),
        }
    }
}

/// The text of a selectable field: strings as they are, booleans and numbers as text, a
/// missing field as `""` (the server's field sets hold every supported field).
fn field_value(object: &Value, path: &str) -> String {
    let mut current = object;
    for part in path.split('.') {
        current = &current[part];
    }
    match current {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        // Secrets with no type are Opaque on the server (defaulted on create).
        Value::Null if path == "type" => "Opaque".to_string(),
        Value::Null if path == "spec.unschedulable" || path == "spec.hostNetwork" => {
            "false".to_string()
        }
        _ => String::new(),
    }
}
