//! [`DiscoveryRESTMapper`]: maps between kinds and resources using a snapshot of discovery,
//! the combination client-go builds from `restmapper.NewDiscoveryRESTMapper` (a
//! `PriorityRESTMapper` over a `MultiRESTMapper` of `DefaultRESTMapper`s, one per group
//! version) wrapped in `restmapper.NewShortcutExpander`.
//!
//! What it answers:
//! - resource to kind and back: `deployments` and `deployment` (or `Deployment`, lowercased)
//!   to `apps/v1, Kind=Deployment`; `Deployment` to `deployments`;
//! - short names (`deploy`, `po`) through the shortcut expansion;
//! - the preferred version when none is given: the core group's `v1` first, then each group's
//!   preferred version in discovery order, then its other versions, then any version of each
//!   group (client-go's priority patterns);
//! - whether a resource is namespaced ([`RESTMapping::scope`]);
//! - kubectl-style arguments such as `deployments.v1.apps` or `deployment.apps`
//!   ([`DiscoveryRESTMapper::mapping_for`]) and categories such as `all`.
//!
//! The snapshot never changes; [`DeferredDiscoveryRESTMapper`](crate::DeferredDiscoveryRESTMapper)
//! rebuilds it from discovery when a lookup misses.

use std::collections::{BTreeMap, HashSet};

use crate::error::Error;
use crate::types::{APIGroup, APIResource};
use kclient_apimachinery::{GroupKind, GroupVersion, GroupVersionKind, GroupVersionResource};

/// One group's discovery result, the input of the RESTMapper (client-go's
/// `restmapper.APIGroupResources`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct APIGroupResources {
    /// The group, with its versions in preference order.
    pub group: APIGroup,
    /// The resources of each version that could be discovered, by version.
    pub versioned_resources: BTreeMap<String, Vec<APIResource>>,
}

/// Whether objects of a mapped resource live in namespaces (client-go's `RESTScope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RESTScope {
    /// Namespaced: URLs carry `/namespaces/{ns}`.
    Namespace,
    /// Cluster-wide (client-go's `RESTScopeRoot`).
    Root,
}

impl RESTScope {
    /// Whether the scope is [`RESTScope::Namespace`].
    pub fn is_namespaced(self) -> bool {
        self == RESTScope::Namespace
    }
}

/// The answer of a kind lookup: the resource that serves the kind, and its scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RESTMapping {
    /// The resource (plural) serving the kind.
    pub resource: GroupVersionResource,
    /// The kind, with the version chosen.
    pub group_version_kind: GroupVersionKind,
    /// Namespaced or cluster-wide.
    pub scope: RESTScope,
}

#[derive(Debug, Clone)]
struct Mapping {
    kind: GroupVersionKind,
    plural: GroupVersionResource,
    singular: GroupVersionResource,
    scope: RESTScope,
}

/// A priority pattern: `None` matches any value (client-go's `AnyGroup`, `AnyVersion`).
#[derive(Debug, Clone)]
struct Pattern {
    group: Option<String>,
    version: Option<String>,
}

impl Pattern {
    fn new(group: Option<&str>, version: Option<&str>) -> Self {
        Pattern {
            group: group.map(str::to_owned),
            version: version.map(str::to_owned),
        }
    }

    fn matches(&self, group: &str, version: &str) -> bool {
        self.group.as_deref().is_none_or(|g| g == group)
            && self.version.as_deref().is_none_or(|v| v == version)
    }
}

/// A short name and the resource it stands for, within one group.
#[derive(Debug, Clone)]
struct Shortcut {
    group: String,
    short: String,
    long: String,
}

/// Maps kinds to resources and back over a snapshot of discovery: plural, singular and short
/// names and lowercase kinds resolve; with no version given, the core group's `v1` wins,
/// then each group's preferred version, in discovery order.
///
/// ```
/// use std::collections::BTreeMap;
/// use kclient_discovery::{APIGroup, APIGroupResources, APIResource, DiscoveryRESTMapper};
///
/// let apps = APIGroupResources {
///     group: APIGroup::new("apps", &["v1"]),
///     versioned_resources: BTreeMap::from([(
///         "v1".to_owned(),
///         vec![APIResource {
///             name: "deployments".into(),
///             singular_name: "deployment".into(),
///             namespaced: true,
///             kind: "Deployment".into(),
///             short_names: vec!["deploy".into()],
///             ..Default::default()
///         }],
///     )]),
/// };
/// let mapper = DiscoveryRESTMapper::new(&[apps]);
/// for arg in ["deploy", "deployments", "Deployment", "deployment.apps", "deployments.v1.apps"] {
///     let mapping = mapper.mapping_for(arg)?;
///     assert_eq!(mapping.resource.resource, "deployments");
///     assert_eq!(mapping.group_version_kind.kind, "Deployment");
///     assert!(mapping.scope.is_namespaced());
/// }
/// # Ok::<(), kclient_discovery::Error>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct DiscoveryRESTMapper {
    /// In discovery order: groups as the server lists them, versions in preference order.
    mappings: Vec<Mapping>,
    /// Every group version with resources, in the same order.
    group_versions: Vec<GroupVersion>,
    resource_priority: Vec<Pattern>,
    /// Resource names and singular names by group, for the shortcut expansion.
    names: Vec<(String, String)>,
    shortcuts: Vec<Shortcut>,
    /// `(group, category, plural)` in discovery order, each once, from every version.
    categories: Vec<(String, String, String)>,
}

impl DiscoveryRESTMapper {
    /// Builds the mapper from discovery results, in the server's group order.
    pub fn new(groups: &[APIGroupResources]) -> Self {
        let mut m = DiscoveryRESTMapper {
            resource_priority: vec![Pattern::new(Some(""), Some("v1"))],
            ..DiscoveryRESTMapper::default()
        };
        let mut group_patterns = Vec::new();
        for g in groups {
            let name = g.group.name.as_str();
            group_patterns.push(Pattern::new(Some(name), None));
            let preferred = g.group.preferred_version_name();
            if !preferred.is_empty() && g.versioned_resources.contains_key(preferred) {
                m.resource_priority
                    .push(Pattern::new(Some(name), Some(preferred)));
            }
            for v in &g.group.versions {
                let Some(resources) = g.versioned_resources.get(&v.version) else {
                    continue;
                };
                if v.version != preferred {
                    m.resource_priority
                        .push(Pattern::new(Some(name), Some(&v.version)));
                }
                let gv = GroupVersion::new(name, &v.version);
                m.add_version(&gv, resources);
                m.group_versions.push(gv);
            }
        }
        m.resource_priority.extend(group_patterns);
        let mut seen = HashSet::new();
        m.categories.retain(|entry| seen.insert(entry.clone()));
        m
    }

    fn add_version(&mut self, gv: &GroupVersion, resources: &[APIResource]) {
        for r in resources {
            for short in &r.short_names {
                self.shortcuts.push(Shortcut {
                    group: gv.group.clone(),
                    short: short.clone(),
                    long: r.name.clone(),
                });
            }
            self.names.push((gv.group.clone(), r.name.clone()));
            if !r.singular_name.is_empty() {
                self.names.push((gv.group.clone(), r.singular_name.clone()));
            }
            if r.is_subresource() {
                continue;
            }
            // Every version's categories, as client-go's discovery category expander reads
            // them: a resource served only in a version other than the group's preferred one
            // is still in its categories. A resource listed by several versions is listed
            // once (the versions add nothing to a group and resource).
            for c in &r.categories {
                self.categories
                    .push((gv.group.clone(), c.clone(), r.name.clone()));
            }
            let singular = if r.singular_name.is_empty() {
                r.kind.to_lowercase()
            } else {
                r.singular_name.clone()
            };
            self.mappings.push(Mapping {
                kind: GroupVersionKind::new(&gv.group, &gv.version, &r.kind),
                plural: GroupVersionResource::new(&gv.group, &gv.version, &r.name),
                singular: GroupVersionResource::new(&gv.group, &gv.version, &singular),
                scope: if r.namespaced {
                    RESTScope::Namespace
                } else {
                    RESTScope::Root
                },
            });
        }
    }

    /// Every group version the mapper knows, in discovery order.
    pub fn group_versions(&self) -> &[GroupVersion] {
        &self.group_versions
    }

    /// Replaces a short name with the resource it stands for, unless `input` already names a
    /// resource (client-go's `shortcutExpander.expandResourceShortcut`).
    ///
    /// Only the resource and the group change; the version asked for is kept, so
    /// `hpa.v1.autoscaling` means `autoscaling/v1` as `horizontalpodautoscalers.v1.autoscaling`
    /// does. client-go keeps it in its group-prefix branch; since 1.29 its exact-group branch
    /// builds a fresh result and drops it (and with it the version kubectl was given), which
    /// client-go up to 1.28 kept: here both branches keep it.
    fn expand_shortcut(&self, input: &GroupVersionResource) -> GroupVersionResource {
        let in_group = |g: &str| input.group.is_empty() || input.group == g;
        if self
            .names
            .iter()
            .any(|(g, n)| in_group(g) && *n == input.resource)
        {
            return input.clone();
        }
        if let Some(s) = self
            .shortcuts
            .iter()
            .find(|s| in_group(&s.group) && s.short == input.resource)
        {
            return GroupVersionResource::new(&s.group, &input.version, &s.long);
        }
        if input.group.is_empty() {
            return input.clone();
        }
        match self
            .shortcuts
            .iter()
            .find(|s| s.group.starts_with(&input.group) && s.short == input.resource)
        {
            Some(s) => GroupVersionResource::new(&s.group, &input.version, &s.long),
            None => input.clone(),
        }
    }

    /// The matches of a partial resource, without shortcut expansion.
    fn matching<'a>(&'a self, input: &GroupVersionResource) -> Result<Vec<&'a Mapping>, Error> {
        let resource = input.resource.to_lowercase();
        if resource.is_empty() {
            return Err(Error::invalid(format!(
                "a resource must be present, got: {input}"
            )));
        }
        let names = |m: &Mapping| m.plural.resource == resource || m.singular.resource == resource;
        let mut found: Vec<&Mapping> = match (input.group.is_empty(), input.version.is_empty()) {
            (false, false) => self
                .mappings
                .iter()
                .filter(|m| {
                    m.plural.group == input.group && m.plural.version == input.version && names(m)
                })
                .collect(),
            (false, true) => {
                let exact: Vec<_> = self
                    .mappings
                    .iter()
                    .filter(|m| m.plural.group == input.group && names(m))
                    .collect();
                if exact.is_empty() {
                    self.mappings
                        .iter()
                        .filter(|m| m.plural.group.starts_with(&input.group) && names(m))
                        .collect()
                } else {
                    exact
                }
            }
            (true, false) => self
                .mappings
                .iter()
                .filter(|m| m.plural.version == input.version && names(m))
                .collect(),
            (true, true) => self.mappings.iter().filter(|m| names(m)).collect(),
        };
        // Discovery order across group versions, then by name within one (as each
        // DefaultRESTMapper sorts), without duplicates.
        let order = |m: &Mapping| {
            self.group_versions
                .iter()
                .position(|gv| gv.group == m.plural.group && gv.version == m.plural.version)
        };
        found.sort_by(|a, b| {
            order(a)
                .cmp(&order(b))
                .then_with(|| a.plural.resource.cmp(&b.plural.resource))
        });
        found.dedup_by(|a, b| a.plural == b.plural && a.kind == b.kind);
        Ok(found)
    }

    /// Picks one of several matches by the priority patterns (client-go's
    /// `PriorityRESTMapper`).
    fn prioritize<T: Clone>(
        &self,
        candidates: Vec<T>,
        group_version: impl Fn(&T) -> (&str, &str),
    ) -> Result<T, Vec<T>> {
        let candidates = match only(candidates) {
            Ok(one) => return Ok(one),
            Err(all) => all,
        };
        let mut remaining = candidates.clone();
        for pattern in &self.resource_priority {
            let matched: Vec<T> = remaining
                .iter()
                .filter(|c| {
                    let (g, v) = group_version(c);
                    pattern.matches(g, v)
                })
                .cloned()
                .collect();
            match matched.len() {
                0 => continue,
                1 => return only(matched).map_err(|_| candidates),
                _ => remaining = matched,
            }
        }
        Err(candidates)
    }

    /// Every resource matching a partial one, in preference order (client-go's
    /// `ResourcesFor`). Short names are expanded first.
    pub fn resources_for(
        &self,
        input: &GroupVersionResource,
    ) -> Result<Vec<GroupVersionResource>, Error> {
        let expanded = self.expand_shortcut(input);
        let mut out: Vec<GroupVersionResource> = Vec::new();
        for m in self.matching(&expanded)? {
            if !out.contains(&m.plural) {
                out.push(m.plural.clone());
            }
        }
        if out.is_empty() {
            return Err(Error::no_resource_match(lowercased(input)));
        }
        Ok(out)
    }

    /// The one resource a partial resource means, choosing by preferred version (client-go's
    /// `ResourceFor`).
    pub fn resource_for(
        &self,
        input: &GroupVersionResource,
    ) -> Result<GroupVersionResource, Error> {
        let all = self.resources_for(input)?;
        self.prioritize(all, |r| (r.group.as_str(), r.version.as_str()))
            .map_err(|all| Error::ambiguous_resource(input.clone(), all, Vec::new()))
    }

    /// Every kind a partial resource may mean (client-go's `KindsFor`).
    pub fn kinds_for(&self, input: &GroupVersionResource) -> Result<Vec<GroupVersionKind>, Error> {
        let expanded = self.expand_shortcut(input);
        let mut out: Vec<GroupVersionKind> = Vec::new();
        for m in self.matching(&expanded)? {
            if !out.contains(&m.kind) {
                out.push(m.kind.clone());
            }
        }
        if out.is_empty() {
            return Err(Error::no_resource_match(input.clone()));
        }
        Ok(out)
    }

    /// The kind a partial resource means, choosing by preferred version (client-go's
    /// `KindFor`).
    pub fn kind_for(&self, input: &GroupVersionResource) -> Result<GroupVersionKind, Error> {
        let all = self.kinds_for(input)?;
        self.prioritize(all, |k| (k.group.as_str(), k.version.as_str()))
            .map_err(|all| Error::ambiguous_resource(input.clone(), Vec::new(), all))
    }

    /// The mappings of a kind in every version of its group that serves it, or only in those
    /// of `versions` when it names some, in discovery order (client-go's `RESTMappings` of its
    /// discovery mapper, one `DefaultRESTMapper` per group version). The kind matches exactly
    /// or in lowercase.
    pub fn rest_mappings(
        &self,
        group_kind: &GroupKind,
        versions: &[&str],
    ) -> Result<Vec<RESTMapping>, Error> {
        let kind_matches = |m: &Mapping| {
            m.kind.group == group_kind.group
                && (m.kind.kind == group_kind.kind || m.kind.kind.to_lowercase() == group_kind.kind)
        };
        let versions: Vec<&str> = versions.iter().copied().filter(|v| !v.is_empty()).collect();
        let candidates: Vec<&str> = self
            .group_versions
            .iter()
            .filter(|gv| gv.group == group_kind.group)
            .map(|gv| gv.version.as_str())
            .filter(|v| versions.is_empty() || versions.contains(v))
            .collect();
        let mut out = Vec::new();
        for version in candidates {
            if let Some(m) = self
                .mappings
                .iter()
                .find(|m| kind_matches(m) && m.kind.version == version)
            {
                out.push(RESTMapping {
                    resource: m.plural.clone(),
                    group_version_kind: GroupVersionKind::new(
                        &group_kind.group,
                        version,
                        &group_kind.kind,
                    ),
                    scope: m.scope,
                });
            }
        }
        if out.is_empty() {
            // client-go's MultiRESTMapper: no group version maps the kind.
            return Err(Error::no_kind_match(group_kind.clone(), &versions));
        }
        Ok(out)
    }

    /// The mapping of a kind, preferring the given versions in order, then the mapper's
    /// priority (client-go's `RESTMapping`).
    pub fn rest_mapping(
        &self,
        group_kind: &GroupKind,
        versions: &[&str],
    ) -> Result<RESTMapping, Error> {
        let all = match only(self.rest_mappings(group_kind, versions)?) {
            Ok(one) => return Ok(one),
            Err(all) => all,
        };
        let mut remaining = all.clone();
        let requested = versions
            .iter()
            .map(|v| Pattern::new(Some(&group_kind.group), Some(v)));
        for pattern in requested.chain(self.resource_priority.iter().cloned()) {
            let matched: Vec<RESTMapping> = remaining
                .iter()
                .filter(|m| {
                    pattern.matches(&m.group_version_kind.group, &m.group_version_kind.version)
                })
                .cloned()
                .collect();
            if matched.is_empty() {
                continue;
            }
            remaining = matched;
            if remaining.len() == 1 {
                break;
            }
        }
        if let Ok(one) = only(remaining) {
            return Ok(one);
        }
        Err(Error::ambiguous_kind(
            group_kind.clone(),
            all.into_iter().map(|m| m.group_version_kind).collect(),
        ))
    }

    /// The singular name of a resource (client-go's `ResourceSingularizer`).
    pub fn resource_singularizer(&self, resource: &str) -> Result<String, Error> {
        let input = self.expand_shortcut(&GroupVersionResource::new("", "", resource));
        let mut singular: Option<&str> = None;
        for m in self.matching(&input)? {
            match singular {
                None => singular = Some(&m.singular.resource),
                Some(s) if s != m.singular.resource => {
                    return Err(Error::invalid(format!(
                        "multiple possible singular resources found for {resource}"
                    )));
                }
                Some(_) => {}
            }
        }
        // A resource nobody serves is a no match, as client-go's (its ResourcesFor fails
        // first), so that the deferred mapper rebuilds on it as on every other miss.
        singular
            .map(str::to_owned)
            .ok_or_else(|| Error::no_resource_match(lowercased(&input)))
    }

    /// The resources of a category such as `all` as `(group, resource)`, each once, in
    /// discovery order, from every version the group serves (client-go's
    /// `discoveryCategoryExpander`).
    pub fn expand_category(&self, category: &str) -> Vec<(String, String)> {
        self.categories
            .iter()
            .filter(|(_, c, _)| c == category)
            .map(|(g, _, r)| (g.clone(), r.clone()))
            .collect()
    }

    /// Resolves a kubectl-style argument: a resource (`deployments`, `deployment`, `deploy`),
    /// a kind (`Deployment`), with a group (`deployment.apps`, `Deployment.apps`) or a
    /// version and group (`deployments.v1.apps`), as kubectl's resource builder does
    /// (`mappingFor`).
    pub fn mapping_for(&self, arg: &str) -> Result<RESTMapping, Error> {
        let (full_gvr, group_resource) = parse_resource_arg(arg);
        let mut found: Option<GroupVersionKind> = None;
        if let Some(gvr) = &full_gvr {
            found = self.kind_for(gvr).ok();
        }
        if found.is_none() {
            found = self.kind_for(&group_resource).ok();
        }
        if let Some(gvk) = found {
            let gk = GroupKind::new(&gvk.group, &gvk.kind);
            return self.rest_mapping(&gk, &[&gvk.version]);
        }
        let (full_gvk, group_kind) = parse_kind_arg(arg);
        if let Some(gvk) = full_gvk {
            let gk = GroupKind::new(&gvk.group, &gvk.kind);
            if let Ok(mapping) = self.rest_mapping(&gk, &[&gvk.version]) {
                return Ok(mapping);
            }
        }
        self.rest_mapping(&group_kind, &[]).map_err(|err| {
            if err.is_no_match() {
                Error::no_resource_match(group_resource)
            } else {
                err
            }
        })
    }
}

fn lowercased(input: &GroupVersionResource) -> GroupVersionResource {
    GroupVersionResource::new(&input.group, &input.version, input.resource.to_lowercase())
}

/// The element of a one-element vector, or the vector back.
fn only<T>(v: Vec<T>) -> Result<T, Vec<T>> {
    <[T; 1]>::try_from(v).map(|[one]| one)
}

/// `resource.version.group` (three or more parts) and `resource.group`, as kubectl's
/// `schema.ParseResourceArg`.
fn parse_resource_arg(arg: &str) -> (Option<GroupVersionResource>, GroupVersionResource) {
    let (full, partial) = GroupVersionResource::parse_resource_arg(arg);
    (full, partial.with_version(""))
}

/// `Kind.version.group` and `Kind.group`, as kubectl's `schema.ParseKindArg`.
fn parse_kind_arg(arg: &str) -> (Option<GroupVersionKind>, GroupKind) {
    let (full, partial) = parse_resource_arg(arg);
    (
        full.map(|r| GroupVersionKind::new(&r.group, &r.version, &r.resource)),
        GroupKind::new(&partial.group, &partial.resource),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::GroupVersionForDiscovery;

    fn res(
        name: &str,
        singular: &str,
        kind: &str,
        namespaced: bool,
        short: &[&str],
    ) -> APIResource {
        APIResource {
            name: name.into(),
            singular_name: singular.into(),
            namespaced,
            kind: kind.into(),
            verbs: vec!["get".into(), "list".into()],
            short_names: short.iter().map(|s| (*s).to_owned()).collect(),
            categories: if namespaced {
                vec!["all".into()]
            } else {
                vec![]
            },
            ..APIResource::default()
        }
    }

    fn group(name: &str, versions: &[(&str, Vec<APIResource>)]) -> APIGroupResources {
        APIGroupResources {
            group: APIGroup {
                name: name.into(),
                versions: versions
                    .iter()
                    .map(|(v, _)| GroupVersionForDiscovery::new(name, v))
                    .collect(),
                preferred_version: versions
                    .first()
                    .map(|(v, _)| GroupVersionForDiscovery::new(name, v)),
                ..APIGroup::default()
            },
            versioned_resources: versions
                .iter()
                .map(|(v, r)| ((*v).to_owned(), r.clone()))
                .collect(),
        }
    }

    /// A small cluster: core/v1, apps/v1, autoscaling v2 (preferred) and v1, a group whose
    /// resource name collides with core (`events.k8s.io` events), and a CRD group.
    fn mapper() -> DiscoveryRESTMapper {
        let mut scale = res("deployments/scale", "", "Scale", true, &[]);
        scale.group = "autoscaling".into();
        scale.version = "v1".into();
        DiscoveryRESTMapper::new(&[
            group(
                "",
                &[(
                    "v1",
                    vec![
                        res("pods", "pod", "Pod", true, &["po"]),
                        res("pods/status", "pod", "Pod", true, &[]),
                        res("nodes", "node", "Node", false, &["no"]),
                        res("events", "event", "Event", true, &["ev"]),
                        res("endpoints", "endpoints", "Endpoints", true, &["ep"]),
                    ],
                )],
            ),
            group(
                "apps",
                &[(
                    "v1",
                    vec![
                        res("deployments", "deployment", "Deployment", true, &["deploy"]),
                        scale,
                    ],
                )],
            ),
            group(
                "autoscaling",
                &[
                    (
                        "v2",
                        vec![res(
                            "horizontalpodautoscalers",
                            "horizontalpodautoscaler",
                            "HorizontalPodAutoscaler",
                            true,
                            &["hpa"],
                        )],
                    ),
                    (
                        "v1",
                        vec![res(
                            "horizontalpodautoscalers",
                            "horizontalpodautoscaler",
                            "HorizontalPodAutoscaler",
                            true,
                            &["hpa"],
                        )],
                    ),
                ],
            ),
            group(
                "events.k8s.io",
                &[("v1", vec![res("events", "event", "Event", true, &["ev"])])],
            ),
            group(
                "samplecrd.k8s.io",
                &[("v1", vec![res("networks", "", "Network", true, &[])])],
            ),
        ])
    }

    fn gvr(g: &str, v: &str, r: &str) -> GroupVersionResource {
        GroupVersionResource::new(g, v, r)
    }

    #[test]
    fn resolves_every_spelling_of_deployments() {
        let m = mapper();
        for arg in [
            "deploy",
            "deployments",
            "deployment",
            "Deployment",
            "deployment.apps",
            "deployments.apps",
            "deployments.v1.apps",
            "Deployment.v1.apps",
            "Deployment.apps",
            "deploy.apps",
        ] {
            let mapping = m.mapping_for(arg).unwrap_or_else(|e| panic!("{arg}: {e}"));
            assert_eq!(mapping.resource, gvr("apps", "v1", "deployments"), "{arg}");
            assert_eq!(
                mapping.group_version_kind,
                GroupVersionKind::new("apps", "v1", "Deployment"),
                "{arg}"
            );
            assert_eq!(mapping.scope, RESTScope::Namespace);
        }
    }

    #[test]
    fn kind_and_resource_lookups() {
        let m = mapper();
        assert_eq!(
            m.kind_for(&gvr("", "", "pods")).unwrap(),
            GroupVersionKind::new("", "v1", "Pod")
        );
        assert_eq!(
            m.kind_for(&gvr("", "", "po")).unwrap(),
            GroupVersionKind::new("", "v1", "Pod")
        );
        assert_eq!(
            m.resource_for(&gvr("", "", "no")).unwrap(),
            gvr("", "v1", "nodes")
        );
        let node = m.rest_mapping(&GroupKind::new("", "Node"), &[]).unwrap();
        assert_eq!(node.scope, RESTScope::Root);
        assert!(!node.scope.is_namespaced());
        // A lowercase kind is accepted, as client-go registers it too.
        assert_eq!(
            m.rest_mapping(&GroupKind::new("apps", "deployment"), &[])
                .unwrap()
                .resource,
            gvr("apps", "v1", "deployments")
        );
        // Subresources are not resources of their own.
        assert!(
            m.resource_for(&gvr("", "", "pods/status"))
                .unwrap_err()
                .is_no_match()
        );
        // Endpoints is its own singular.
        assert_eq!(
            m.resource_for(&gvr("", "", "endpoints")).unwrap(),
            gvr("", "v1", "endpoints")
        );
    }

    #[test]
    fn preferred_version_wins_when_none_is_given() {
        let m = mapper();
        assert_eq!(
            m.resource_for(&gvr("", "", "hpa")).unwrap(),
            gvr("autoscaling", "v2", "horizontalpodautoscalers")
        );
        assert_eq!(
            m.resources_for(&gvr("autoscaling", "", "horizontalpodautoscalers"))
                .unwrap(),
            [
                gvr("autoscaling", "v2", "horizontalpodautoscalers"),
                gvr("autoscaling", "v1", "horizontalpodautoscalers")
            ]
        );
        assert_eq!(
            m.resource_for(&gvr("", "v1", "horizontalpodautoscalers"))
                .unwrap(),
            gvr("autoscaling", "v1", "horizontalpodautoscalers")
        );
        let mapping = m
            .rest_mapping(
                &GroupKind::new("autoscaling", "HorizontalPodAutoscaler"),
                &[],
            )
            .unwrap();
        assert_eq!(mapping.group_version_kind.version, "v2");
        let mapping = m
            .rest_mapping(
                &GroupKind::new("autoscaling", "HorizontalPodAutoscaler"),
                &["v1"],
            )
            .unwrap();
        assert_eq!(mapping.group_version_kind.version, "v1");
        assert_eq!(
            m.rest_mappings(
                &GroupKind::new("autoscaling", "HorizontalPodAutoscaler"),
                &[]
            )
            .unwrap()
            .len(),
            2
        );
    }

    #[test]
    fn a_short_name_keeps_the_version_asked_for() {
        let m = mapper();
        // (input, resource it maps to): the version asked for survives the expansion of a
        // short name, whether the group is exact, missing or a prefix.
        for (input, want) in [
            (
                gvr("autoscaling", "v1", "hpa"),
                gvr("autoscaling", "v1", "horizontalpodautoscalers"),
            ),
            (
                gvr("", "v1", "hpa"),
                gvr("autoscaling", "v1", "horizontalpodautoscalers"),
            ),
            (
                gvr("autosc", "v1", "hpa"),
                gvr("autoscaling", "v1", "horizontalpodautoscalers"),
            ),
            (
                gvr("autoscaling", "", "hpa"),
                gvr("autoscaling", "v2", "horizontalpodautoscalers"),
            ),
        ] {
            assert_eq!(m.resource_for(&input).unwrap(), want, "{input}");
            assert_eq!(m.resources_for(&input).unwrap()[0], want, "{input}");
            assert_eq!(m.kind_for(&input).unwrap().version, want.version, "{input}");
        }
        // kubectl's `get hpa.v1.autoscaling` reads autoscaling/v1, as the long name does.
        for arg in [
            "hpa.v1.autoscaling",
            "horizontalpodautoscalers.v1.autoscaling",
        ] {
            let mapping = m.mapping_for(arg).unwrap();
            assert_eq!(
                mapping.resource,
                gvr("autoscaling", "v1", "horizontalpodautoscalers"),
                "{arg}"
            );
            assert_eq!(mapping.group_version_kind.version, "v1", "{arg}");
        }
        // A version that the short name's resource does not have is no match, not another
        // version.
        assert!(
            m.resource_for(&gvr("autoscaling", "v9", "hpa"))
                .unwrap_err()
                .is_no_match()
        );
    }

    #[test]
    fn the_core_group_wins_a_name_collision() {
        let m = mapper();
        assert_eq!(m.resources_for(&gvr("", "", "events")).unwrap().len(), 2);
        assert_eq!(
            m.resource_for(&gvr("", "", "events")).unwrap(),
            gvr("", "v1", "events")
        );
        assert_eq!(
            m.resource_for(&gvr("events.k8s.io", "", "events")).unwrap(),
            gvr("events.k8s.io", "v1", "events")
        );
        // A group prefix is enough when nothing matches exactly.
        assert_eq!(
            m.resource_for(&gvr("events", "", "events")).unwrap(),
            gvr("events.k8s.io", "v1", "events")
        );
        assert_eq!(
            m.mapping_for("events.events.k8s.io")
                .unwrap()
                .resource
                .group,
            "events.k8s.io"
        );
    }

    #[test]
    fn a_missing_singular_name_is_guessed_from_the_kind() {
        let m = mapper();
        assert_eq!(
            m.resource_for(&gvr("", "", "network")).unwrap(),
            gvr("samplecrd.k8s.io", "v1", "networks")
        );
        assert_eq!(
            m.mapping_for("networks.samplecrd.k8s.io")
                .unwrap()
                .group_version_kind
                .kind,
            "Network"
        );
        assert_eq!(m.resource_singularizer("deploy").unwrap(), "deployment");
        assert!(
            m.resource_singularizer("widgets")
                .unwrap_err()
                .is_no_match()
        );
    }

    #[test]
    fn misses_are_no_match_errors() {
        let m = mapper();
        let err = m.resource_for(&gvr("", "", "widgets")).unwrap_err();
        assert!(err.is_no_match());
        assert_eq!(err.to_string(), "no matches for /, Resource=widgets");
        assert!(m.mapping_for("widgets").unwrap_err().is_no_match());
        assert!(
            m.rest_mapping(&GroupKind::new("apps", "Widget"), &[])
                .unwrap_err()
                .is_no_match()
        );
        assert!(
            m.rest_mapping(&GroupKind::new("apps", "Deployment"), &["v9"])
                .unwrap_err()
                .is_no_match()
        );
        assert!(!m.resource_for(&gvr("", "", "")).unwrap_err().is_no_match());
    }

    /// With versions asked for, `rest_mappings` answers every group version among them that
    /// serves the kind, in discovery order, as client-go's discovery mapper (one
    /// DefaultRESTMapper per group version under a MultiRESTMapper) does; `rest_mapping`
    /// picks the first version asked for.
    #[test]
    fn rest_mappings_of_several_versions_answer_each_served_one() {
        let m = mapper();
        let hpa = GroupKind::new("autoscaling", "HorizontalPodAutoscaler");
        let versions = |versions: &[&str]| -> Vec<String> {
            m.rest_mappings(&hpa, versions)
                .unwrap()
                .into_iter()
                .map(|m| m.group_version_kind.version)
                .collect()
        };
        assert_eq!(versions(&["v1", "v2"]), ["v2", "v1"]);
        assert_eq!(versions(&["v1", "v9", "v2"]), ["v2", "v1"]);
        assert_eq!(versions(&["v9", "v1"]), ["v1"]);
        assert_eq!(versions(&[]), ["v2", "v1"]);
        for (asked, want) in [(&["v1", "v2"], "v1"), (&["v2", "v1"], "v2")] {
            let mapping = m.rest_mapping(&hpa, asked).unwrap();
            assert_eq!(mapping.group_version_kind.version, want);
            assert_eq!(mapping.resource.version, want);
        }
    }

    /// A kind the mapper does not know is reported as client-go's `NoKindMatchError` words
    /// it, the message kubectl and controllers print for a missing CRD: by group when no
    /// version was asked for, else by the group versions searched.
    #[test]
    fn an_unknown_kind_reads_as_client_go_words_it() {
        let m = mapper();
        let message = |group: &str, kind: &str, versions: &[&str]| {
            let err = m
                .rest_mapping(&GroupKind::new(group, kind), versions)
                .unwrap_err();
            assert!(err.is_no_match(), "{err}");
            let all = m
                .rest_mappings(&GroupKind::new(group, kind), versions)
                .unwrap_err();
            assert_eq!(all.to_string(), err.to_string());
            err.to_string()
        };
        assert_eq!(
            message("apps", "Widget", &[]),
            r#"no matches for kind "Widget" in group "apps""#
        );
        assert_eq!(
            message("nosuch.example.com", "Widget", &[]),
            r#"no matches for kind "Widget" in group "nosuch.example.com""#
        );
        assert_eq!(
            message("apps", "Deployment", &["v9"]),
            r#"no matches for kind "Deployment" in version "apps/v9""#
        );
        assert_eq!(
            message("", "Widget", &["v1"]),
            r#"no matches for kind "Widget" in version "v1""#
        );
        assert_eq!(
            message("apps", "Widget", &["v9", "v1", "v9"]),
            r#"no matches for kind "Widget" in versions ["apps/v1" "apps/v9"]"#
        );
    }

    #[test]
    fn categories_expand_to_each_resource_once() {
        let m = mapper();
        let all: Vec<String> = m
            .expand_category("all")
            .into_iter()
            .map(|(g, r)| format!("{r}.{g}"))
            .collect();
        assert_eq!(
            all,
            [
                "pods.",
                "events.",
                "endpoints.",
                "deployments.apps",
                "horizontalpodautoscalers.autoscaling",
                "events.events.k8s.io",
                "networks.samplecrd.k8s.io"
            ]
        );
    }

    #[test]
    fn parses_resource_args() {
        assert_eq!(
            parse_resource_arg("deployments.v1.apps"),
            (
                Some(gvr("apps", "v1", "deployments")),
                gvr("v1.apps", "", "deployments")
            )
        );
        assert_eq!(
            parse_resource_arg("deployment.apps"),
            (None, gvr("apps", "", "deployment"))
        );
        assert_eq!(parse_resource_arg("pods"), (None, gvr("", "", "pods")));
    }
}
