//! client-go's extra generated methods: the `+genclient:method=` tags of `k8s.io/api`'s
//! types, which client-gen turns into methods such as `PodInterface.UpdateEphemeralContainers`
//! and `ServiceAccountInterface.CreateToken`. The tags live in Go comments, not in the OpenAPI
//! documents, so they are listed here; each is checked against the documents (the subresource
//! must serve the verb with the kind the method sends) and written as an inherent method of
//! the kind's `Api<K>`, named after the Go method in snake case.
//!
//! Left out, because kclient serves them another way: the `scale` methods (`GetScale`,
//! `UpdateScale`, `ApplyScale`), written once for every kind that serves `scale` through the
//! generated `HasScale` impls; and the methods of client-go's hand-written `*_expansion.go`
//! files (`Bind`, `EvictV1`, `GetLogs`, `ProxyGet`, `Finalize`), which are hand-written here
//! too (`clientset/src/subresource.rs`), as is `PolicyV1().Evictions(ns)`, a client of no
//! resource of its own (`clientset/src/eviction.rs`, through the group client's `client`
//! field, which the generated code leaves visible to the crate for that).

use crate::collect::GroupVersion;

/// The verb of a method, as in its tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    /// `verb=update`: a PUT of the kind itself, answered with the kind.
    Update,
    /// `verb=create` with `input=` and `result=` another kind: a POST of that kind, answered
    /// with it.
    Create,
}

/// One `+genclient:method=` tag of a GA version.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tag {
    pub(crate) go_name: &'static str,
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) plural: &'static str,
    pub(crate) subresource: &'static str,
    pub(crate) verb: Verb,
    /// For [`Verb::Create`]: the body's and result's kind as `group/version/Kind` and its
    /// Rust path below `kclient_api`.
    pub(crate) input: Option<(&'static str, &'static str)>,
    /// What the method does, for its doc comment (one or more `///` lines' text).
    pub(crate) doc: &'static str,
}

/// The tags, in the order their methods are written.
pub(crate) const TAGS: &[Tag] = &[
    Tag {
        go_name: "UpdateEphemeralContainers",
        group: "",
        version: "v1",
        plural: "pods",
        subresource: "ephemeralcontainers",
        verb: Verb::Update,
        input: None,
        doc: "Replaces the pod's `spec.ephemeralContainers`, as `kubectl debug` does to add one: \
              the server takes only that field from `pod` (and the resourceVersion, when set, as \
              a precondition), and refuses to change or remove an ephemeral container that is \
              already there (422). The server serves `get` and `patch` on the subresource too \
              (`get_subresource`, `patch_subresource(name, \"ephemeralcontainers\", ...)`).",
    },
    Tag {
        go_name: "UpdateResize",
        group: "",
        version: "v1",
        plural: "pods",
        subresource: "resize",
        verb: Verb::Update,
        input: None,
        doc: "Resizes the pod's containers in place: the server takes only their `resources` \
              (and `resizePolicy`) from `pod`, and refuses a resize that would change the pod's \
              QoS class (422); the kubelet then applies it and reports it in the pod's status. \
              client-go has no patch form; the server serves `get` and `patch` on the \
              subresource too (`patch_subresource(name, \"resize\", ...)`, as \
              `kubectl patch --subresource=resize`).",
    },
    Tag {
        go_name: "UpdateApproval",
        group: "certificates.k8s.io",
        version: "v1",
        plural: "certificatesigningrequests",
        subresource: "approval",
        verb: Verb::Update,
        input: None,
        doc: "Approves or denies the request: the server takes only `status.conditions` from \
              the body (an `Approved` or `Denied` condition, never both), as \
              `kubectl certificate approve` does. The caller needs the `approve` verb on the \
              request's signer (`signers` of `certificates.k8s.io`).",
    },
    Tag {
        go_name: "CreateToken",
        group: "",
        version: "v1",
        plural: "serviceaccounts",
        subresource: "token",
        verb: Verb::Create,
        input: Some((
            "authentication.k8s.io/v1/TokenRequest",
            "authentication::v1::TokenRequest",
        )),
        doc: "Requests a token for the service account (its `metadata.name` filled in from \
              `name` when unset).",
    },
];

/// A tag checked against the documents, with what its method is written from.
#[derive(Debug, Clone)]
pub(crate) struct Method {
    pub(crate) tag: Tag,
    /// The Go interface the method belongs to (`PodInterface`).
    pub(crate) go_interface: String,
    /// The resource's Rust type below `kclient_api`.
    pub(crate) rust_type: String,
    /// `apiVersion` of the resource (`v1`, `certificates.k8s.io/v1`).
    pub(crate) api_version: String,
    /// The cargo features the method needs: its resource's, then its input's when different.
    pub(crate) features: Vec<String>,
}

/// Checks every tag against the documents: its group version and resource are served, and
/// its subresource serves the verb with the expected kind.
pub(crate) fn resolve(gvs: &[GroupVersion]) -> Result<Vec<Method>, String> {
    TAGS.iter().map(|tag| resolve_one(gvs, *tag)).collect()
}

fn resolve_one(gvs: &[GroupVersion], tag: Tag) -> Result<Method, String> {
    let what = format!(
        "client-go's {} on {}/{}",
        tag.go_name, tag.plural, tag.subresource
    );
    let gv = gvs
        .iter()
        .find(|gv| gv.group == tag.group && gv.version == tag.version)
        .ok_or_else(|| {
            format!(
                "{what}: group version {}/{} not served",
                tag.group, tag.version
            )
        })?;
    let resource = gv
        .resources
        .get(tag.plural)
        .ok_or_else(|| format!("{what}: resource not served"))?;
    let action = match tag.verb {
        Verb::Update => "put",
        Verb::Create => "post",
    };
    let own_kind = format!("{}/{}/{}", tag.group, tag.version, resource.kind);
    let expected = tag.input.map_or(own_kind.as_str(), |(gvk, _)| gvk);
    let served = resource
        .subresource_actions
        .get(tag.subresource)
        .and_then(|actions| actions.get(action));
    if served.map(String::as_str) != Some(expected) {
        return Err(format!(
            "{what}: the documents do not serve {action} with a {expected} (they serve {served:?})"
        ));
    }
    let mut features = vec![gv.feature()];
    if let Some((_, rust)) = tag.input {
        let mut parts = rust.split("::");
        let package = parts.next().unwrap_or("");
        let version = parts.next().unwrap_or("");
        let feature = crate::collect::feature(package, version);
        if !features.contains(&feature) {
            features.push(feature);
        }
    }
    Ok(Method {
        tag,
        go_interface: format!("{}Interface", resource.kind),
        rust_type: resource.rust_type.clone(),
        api_version: if gv.group.is_empty() {
            gv.version.clone()
        } else {
            format!("{}/{}", gv.group, gv.version)
        },
        features,
    })
}
