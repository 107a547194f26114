//! Object names as kube-apiserver validates them on create: each kind's `ValidateNameFunc`
//! (most kinds an RFC 1123 subdomain; Namespaces, Services and StatefulSets an RFC 1123
//! label; the RBAC kinds, core Events and PodDisruptionBudgets a path segment; CronJobs a
//! subdomain of at most 52 characters; a CustomResourceDefinition `<plural>.<group>`), and
//! `generateName` as the server's name generator extends it. Its RFC 1123 checks, which say
//! every problem in apimachinery's words, also serve the CEL `format` library
//! (`schema/rules/format.rs`).
//!
//! The rules were read from the pinned version by creating an object of every served kind
//! under names that each rule tells apart (`a:b`, `a.b`, `1a`, 63, 72 and 253 characters,
//! `%`, `.`, `..`, capitals, a space, a leading `-`).

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use crate::registry::ResourceInfo;

/// The longest name an RFC 1123 subdomain may be.
pub(crate) const SUBDOMAIN_MAX: usize = 253;
/// The longest name an RFC 1123 label may be.
const LABEL_MAX: usize = 63;
/// The longest CronJob name (its Jobs' names add 11 characters and must stay labels).
const CRON_JOB_MAX: usize = 52;
/// How much of a `generateName` the server keeps before its 5 random characters
/// (`names.SimpleNameGenerator`: 63 - 5).
const GENERATE_NAME_MAX: usize = 58;

/// The rule a kind's names follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    Subdomain(usize),
    Label,
    PathSegment,
}

fn rule(info: &ResourceInfo) -> Rule {
    let r = &info.api_resource;
    match (r.group.as_str(), r.kind.as_str()) {
        ("", "Namespace" | "Service") | ("apps", "StatefulSet") => Rule::Label,
        (
            "rbac.authorization.k8s.io",
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
        )
        | ("", "Event")
        | ("policy", "PodDisruptionBudget") => Rule::PathSegment,
        ("batch", "CronJob") => Rule::Subdomain(CRON_JOB_MAX),
        _ => Rule::Subdomain(SUBDOMAIN_MAX),
    }
}

/// The name a `generateName` prefix gives: the prefix cut to 58 bytes, then `suffix`.
pub(crate) fn generate(prefix: &str, suffix: &str) -> String {
    let mut end = prefix.len().min(GENERATE_NAME_MAX);
    while !prefix.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{suffix}", &prefix[..end])
}

/// What is wrong with `name` for the kind of `info` (the server's message after
/// `Invalid value: "<name>": `), or `None` when it is valid. `object` is the object being
/// created (a CustomResourceDefinition's name must match its spec).
pub(crate) fn problem(info: &ResourceInfo, name: &str, object: &Value) -> Option<String> {
    let found = match rule(info) {
        Rule::Subdomain(max) => subdomain_problem(name, max),
        Rule::Label => label_problem(name),
        Rule::PathSegment => path_segment_problem(name),
    };
    if found.is_some() {
        return found;
    }
    let r = &info.api_resource;
    if r.group == "apiextensions.k8s.io" && r.kind == "CustomResourceDefinition" {
        let spec = &object["spec"];
        let wanted = format!(
            "{}.{}",
            spec["names"]["plural"].as_str().unwrap_or(""),
            spec["group"].as_str().unwrap_or("")
        );
        if name != wanted {
            return Some("must be spec.names.plural+\".\"+spec.group".into());
        }
    }
    None
}

fn subdomain_problem(name: &str, max: usize) -> Option<String> {
    dns1123_subdomain(name, max, "characters")
        .into_iter()
        .next()
}

fn label_problem(name: &str) -> Option<String> {
    dns1123_label(name).into_iter().next()
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, as apimachinery's messages quote it.
const LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
/// Dot-separated [`LABEL_FMT`]s.
const SUBDOMAIN_FMT: &str = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

static LABEL: LazyLock<Regex> = LazyLock::new(|| whole(LABEL_FMT));
static SUBDOMAIN: LazyLock<Regex> = LazyLock::new(|| whole(SUBDOMAIN_FMT));

/// The whole-string regex of one of apimachinery's fixed patterns.
pub(crate) fn whole(pattern: &str) -> Regex {
    Regex::new(&format!("^{pattern}$"))
        .unwrap_or_else(|e| panic!("the fixed pattern {pattern}: {e}"))
}

/// apimachinery's `RegexError`: `message`, the examples and the pattern.
pub(crate) fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    if examples.is_empty() {
        format!("{message} (regex used for validation is '{pattern}')")
    } else {
        format!(
            "{message} (e.g. {}regex used for validation is '{pattern}')",
            examples.join(" or ")
        )
    }
}

/// `util/validation`'s `IsDNS1123Label`: every problem, in its words. An object name takes
/// the first.
pub(crate) fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_MAX {
        errs.push(format!("must be no more than {LABEL_MAX} characters"));
    }
    if !LABEL.is_match(value) {
        errs.push(if SUBDOMAIN.is_match(value) {
            "must not contain dots".to_owned()
        } else {
            regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                LABEL_FMT,
                &["my-name", "123-abc"],
            )
        });
    }
    errs
}

/// `IsDNS1123Subdomain` with a longest length of `max` (253, or less for some kinds' names)
/// and the length unit of the package it comes from ("characters" in `util/validation`,
/// "bytes" in `api/validate/content`): every problem, in its words.
pub(crate) fn dns1123_subdomain(value: &str, max: usize, unit: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > max {
        errs.push(format!("must be no more than {max} {unit}"));
    }
    if !SUBDOMAIN.is_match(value) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

fn path_segment_problem(name: &str) -> Option<String> {
    match name {
        "." => return Some("may not be '.'".into()),
        ".." => return Some("may not be '..'".into()),
        _ => {}
    }
    for c in ['/', '%'] {
        if name.contains(c) {
            return Some(format!("may not contain '{c}'"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::ResourceRegistry;
    use serde_json::json;

    fn check(group: &str, version: &str, plural: &str, name: &str) -> Option<String> {
        let registry = ResourceRegistry::builtin();
        let info = registry.get(group, version, plural).expect("served");
        problem(&info, name, &json!({}))
    }

    /// The answers of testenv's server to the probe names, kind by kind.
    #[test]
    fn names_follow_each_kinds_rule() {
        let rbac = "rbac.authorization.k8s.io";
        for name in [
            "system:controller:replicaset-controller",
            "Upper Case",
            "-x",
        ] {
            assert_eq!(check(rbac, "v1", "clusterroles", name), None, "{name}");
            assert_eq!(check("", "v1", "events", name), None, "{name}");
        }
        assert!(check(rbac, "v1", "roles", "a%b").is_some());
        assert!(check(rbac, "v1", "roles", "..").is_some());
        assert!(check("", "v1", "configmaps", "a:b").is_some());
        assert_eq!(check("", "v1", "configmaps", "a.b"), None);
        assert_eq!(
            check("", "v1", "namespaces", "a.b").as_deref(),
            Some("must not contain dots")
        );
        assert_eq!(check("", "v1", "services", "1svc"), None);
        assert!(check("apps", "v1", "statefulsets", &"x".repeat(64)).is_some());
        assert!(check("batch", "v1", "cronjobs", &"x".repeat(53)).is_some());
        assert_eq!(check("batch", "v1", "jobs", &"x".repeat(253)), None);
        assert!(check("batch", "v1", "jobs", &"x".repeat(254)).is_some());
        assert!(check("", "v1", "configmaps", "a..b").is_some());
    }

    #[test]
    fn generate_name_keeps_58_bytes() {
        assert_eq!(generate(&"a".repeat(70), "bcdfg").len(), 63);
        assert_eq!(generate("web-", "bcdfg"), "web-bcdfg");
    }
}
