//! Rust names of generated items: the group client method (`apps_v1`), the group client type
//! (`AppsV1Client`) and the resource accessor (`config_maps`, `network_policies`), following
//! client-go's Go names in Rust casing.

/// `ConfigMap` -> `config_map`, `APIService` -> `api_service`, `CSIDriver` -> `csi_driver`.
pub(crate) fn snake(camel: &str) -> String {
    let chars: Vec<char> = camel.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_ascii_lowercase() || chars[i - 1].is_ascii_digit());
            let acronym_end = i > 0
                && chars[i - 1].is_ascii_uppercase()
                && chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev_lower || acronym_end {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// The accessor of a resource: the kind in snake case, pluralized as the server's plural
/// resource name is (`NetworkPolicy` + `networkpolicies` -> `network_policies`,
/// `Endpoints` + `endpoints` -> `endpoints`).
pub(crate) fn accessor(kind: &str, plural: &str) -> String {
    let snake_kind = snake(kind);
    // Walk the snake form and the plural together while they agree (ignoring underscores).
    let plural_chars: Vec<char> = plural.chars().collect();
    let mut out = String::new();
    let mut j = 0;
    for c in snake_kind.chars() {
        if c == '_' {
            out.push('_');
            continue;
        }
        if j < plural_chars.len() && plural_chars[j] == c {
            out.push(c);
            j += 1;
        } else {
            break;
        }
    }
    if j == 0 {
        // Nothing in common: the plural is unrelated to the kind; use it as is.
        return plural.replace('-', "_");
    }
    let out = out.trim_end_matches('_').to_owned();
    let tail: String = plural_chars[j..].iter().collect();
    escape_keyword(out + &tail)
}

fn escape_keyword(name: String) -> String {
    match name.as_str() {
        "type" | "match" | "ref" | "self" | "crate" | "mod" | "use" | "impl" | "struct" => {
            format!("r#{name}")
        }
        _ => name,
    }
}

/// `core` + `v1` -> `core_v1`; `flowcontrol` + `v1beta1` -> `flowcontrol_v1beta1`.
pub(crate) fn group_method(package: &str, version: &str) -> String {
    format!("{}_{}", package.replace('-', "_"), version)
}

/// `core` + `v1` -> `CoreV1Client`.
pub(crate) fn group_client(package: &str, version: &str) -> String {
    let mut name = String::new();
    let mut upper = true;
    for c in package.chars().chain(version.chars()) {
        if c == '-' || c == '_' {
            upper = true;
            continue;
        }
        if upper {
            name.push(c.to_ascii_uppercase());
            upper = false;
        } else {
            name.push(c);
        }
    }
    // `Corev1` -> `CoreV1`: capitalise the version's leading `v`.
    let at = package.chars().filter(|c| *c != '-' && *c != '_').count();
    let (head, tail) = name.split_at(at);
    let mut tail = tail.to_owned();
    if let Some(first) = tail.get(0..1) {
        tail.replace_range(0..1, &first.to_ascii_uppercase());
    }
    format!("{head}{tail}Client")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_follow_client_go() {
        let cases = [
            ("Pod", "pods", "pods"),
            ("ConfigMap", "configmaps", "config_maps"),
            ("NetworkPolicy", "networkpolicies", "network_policies"),
            ("Endpoints", "endpoints", "endpoints"),
            ("ComponentStatus", "componentstatuses", "component_statuses"),
            ("APIService", "apiservices", "api_services"),
            (
                "CSIStorageCapacity",
                "csistoragecapacities",
                "csi_storage_capacities",
            ),
            ("IPAddress", "ipaddresses", "ip_addresses"),
            (
                "HorizontalPodAutoscaler",
                "horizontalpodautoscalers",
                "horizontal_pod_autoscalers",
            ),
            (
                "CustomResourceDefinition",
                "customresourcedefinitions",
                "custom_resource_definitions",
            ),
            (
                "ValidatingAdmissionPolicyBinding",
                "validatingadmissionpolicybindings",
                "validating_admission_policy_bindings",
            ),
            ("Lease", "leases", "leases"),
            ("IngressClass", "ingressclasses", "ingress_classes"),
        ];
        for (kind, plural, want) in cases {
            assert_eq!(accessor(kind, plural), want, "{kind}");
        }
    }

    #[test]
    fn group_names() {
        assert_eq!(group_method("core", "v1"), "core_v1");
        assert_eq!(group_client("core", "v1"), "CoreV1Client");
        assert_eq!(
            group_client("flowcontrol", "v1beta1"),
            "FlowcontrolV1beta1Client"
        );
        assert_eq!(group_client("apiextensions", "v1"), "ApiextensionsV1Client");
    }
}
