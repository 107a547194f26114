//! `Fake`: the in-process API server (client-go's `testing.Fake` with its tracker), served to
//! kclient's clients through [`kclient_rest::RoundTripper`]: it decodes each request as
//! kube-apiserver's request-info parser does, records it as an [`Action`], runs the
//! reactors, and lets the [`ObjectTracker`] answer.

use std::sync::Arc;

use bytes::Bytes;
use futures_util::stream;
use kclient_apimachinery::{
    ApiResource, Error, FieldSelector, PatchType, Status, StatusDetails, StatusReason,
};
use kclient_rest::{ByteStream, Client, Config, ConfigError, RoundTripFuture, RoundTripper};
use parking_lot::{Mutex, RwLock};
use serde_json::{Value, json};

use crate::action::Action;
use crate::discovery;
use crate::patch;
use crate::reactor::{Reaction, Reactor};
use crate::registry::ResourceInfo;
use crate::selection::Selection;
use crate::subresource::{self, Answer};
use crate::tracker::{
    DeleteRequest, ListRequest, ObjectTracker, WatchRequest, event_line, status_json,
};

/// An in-memory API server for tests: build one, seed its [`ObjectTracker`], hand
/// [`Fake::client`] to the code under test (typed `Clientset`/`Api`, `DynamicClient`,
/// `MetadataClient`, `DiscoveryClient`, informers), then assert on [`Fake::actions`] and on
/// the tracker's objects.
///
/// ```
/// use kclient_testing::{Fake, Reaction};
/// use kclient_apimachinery::Error;
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let fake = Fake::new();
/// fake.tracker().add_yaml("
/// apiVersion: v1
/// kind: ConfigMap
/// metadata: {name: settings, namespace: default}
/// ")?;
/// // The second update of any ConfigMap fails with a conflict.
/// fake.prepend_reactor("update", "configmaps", |_| {
///     Reaction::Error(Error::new_conflict("", "configmaps", "settings", "scripted"))
/// });
/// let client = fake.client();
/// let cm: serde_json::Value = client.get().group_version("", "v1").namespace("default")
///     .resource("configmaps").name("settings").send().await?;
/// assert_eq!(cm["metadata"]["name"], "settings");
/// let err = client.put().group_version("", "v1").namespace("default")
///     .resource("configmaps").name("settings").json(&cm).send::<serde_json::Value>().await
///     .unwrap_err();
/// assert!(err.is_conflict());
/// let verbs: Vec<String> = fake.actions().into_iter().map(|a| a.verb).collect();
/// assert_eq!(verbs, ["get", "update"]);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Fake {
    inner: Arc<Inner>,
}

struct Inner {
    tracker: ObjectTracker,
    reactors: RwLock<Vec<Reactor>>,
    actions: Mutex<Vec<Action>>,
}

impl Default for Fake {
    fn default() -> Self {
        Fake::new()
    }
}

impl std::fmt::Debug for Fake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fake")
            .field("tracker", &self.inner.tracker)
            .finish_non_exhaustive()
    }
}

impl Fake {
    /// A fake over a new [`ObjectTracker`].
    pub fn new() -> Self {
        Fake::with_tracker(ObjectTracker::new())
    }

    /// A fake over an existing tracker.
    pub fn with_tracker(tracker: ObjectTracker) -> Self {
        Fake {
            inner: Arc::new(Inner {
                tracker,
                reactors: RwLock::new(Vec::new()),
                actions: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The store behind the fake.
    pub fn tracker(&self) -> &ObjectTracker {
        &self.inner.tracker
    }

    /// A REST client whose requests this fake answers, without client-side rate limiting.
    /// Build `Clientset::new(client)`, `Api::namespaced(client, ..)`, `DynamicClient::new(..)`
    /// or a `DiscoveryClient` from it as from any client.
    pub fn client(&self) -> Client {
        let mut config = Config::new("https://kclient-fake.invalid");
        config.qps = -1.0;
        self.client_with_config(config)
            .expect("a client from a plain https URL always builds")
    }

    /// A client built from `config` (its host only forms URLs), for tests that need a rate
    /// limiter, a user agent or a default namespace of their own.
    ///
    /// The fake speaks JSON only: the client's `content_type` is set to
    /// [`ContentType::Json`](kclient_rest::ContentType::Json), so that typed clients built
    /// with the `protobuf` feature send JSON bodies to it (their reads would take its JSON
    /// answers anyway).
    pub fn client_with_config(&self, mut config: Config) -> Result<Client, ConfigError> {
        config.content_type = kclient_rest::ContentType::Json;
        Client::with_round_tripper(config, Arc::new(self.clone()))
    }

    /// Runs `react` before the reactors already registered, for actions with `verb` on
    /// `resource` (`*` matches any; `pods/status` names a subresource).
    pub fn prepend_reactor(
        &self,
        verb: &str,
        resource: &str,
        react: impl Fn(&Action) -> Reaction + Send + Sync + 'static,
    ) {
        self.inner.reactors.write().insert(
            0,
            Reactor {
                verb: verb.into(),
                resource: resource.into(),
                react: Arc::new(react),
            },
        );
    }

    /// Runs `react` after the reactors already registered (still before the tracker).
    pub fn append_reactor(
        &self,
        verb: &str,
        resource: &str,
        react: impl Fn(&Action) -> Reaction + Send + Sync + 'static,
    ) {
        self.inner.reactors.write().push(Reactor {
            verb: verb.into(),
            resource: resource.into(),
            react: Arc::new(react),
        });
    }

    /// Every action received so far, in order.
    pub fn actions(&self) -> Vec<Action> {
        self.inner.actions.lock().clone()
    }

    /// The actions with `verb` on `resource` (as [`Action::matches`]).
    pub fn actions_matching(&self, verb: &str, resource: &str) -> Vec<Action> {
        self.inner
            .actions
            .lock()
            .iter()
            .filter(|a| a.matches(verb, resource))
            .cloned()
            .collect()
    }

    /// Forgets the recorded actions.
    pub fn clear_actions(&self) {
        self.inner.actions.lock().clear();
    }

    /// Serves a custom resource without creating its CRD.
    pub fn register(&self, api_resource: ApiResource, has_status: bool) {
        self.inner
            .tracker
            .register(ResourceInfo::custom(api_resource, has_status));
    }

    fn handle(&self, request: http::Request<Bytes>) -> Response {
        let (parts, body) = request.into_parts();
        let path = parts.uri.path().to_string();
        let query: Vec<(String, String)> = parts
            .uri
            .query()
            .map(|q| {
                url::form_urlencoded::parse(q.as_bytes())
                    .into_owned()
                    .collect()
            })
            .unwrap_or_default();
        let header = |name: http::HeaderName| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let content_type = header(http::header::CONTENT_TYPE);
        let user_agent = header(http::header::USER_AGENT);
        let method = parts.method.as_str().to_string();
        let Some(target) = parse_path(&path) else {
            if method == "GET" {
                let registry = self.inner.tracker.registry();
                let accept = header(http::header::ACCEPT);
                if accept.contains("as=APIGroupDiscoveryList")
                    && let Some(doc) = discovery::aggregated(&registry, &path)
                {
                    let mut response = Response::json(200, doc);
                    response.content_type = Some(discovery::AGGREGATED_CONTENT_TYPE);
                    return response;
                }
                if let Some(doc) = discovery::document(&registry, &path) {
                    return Response::json(200, doc);
                }
            }
            return Response::error(&Error::new_not_found("", "", &path)).with_code(404);
        };
        if target.legacy_watch
            && let Err(e) = self.route_legacy_watch(&target, &method)
        {
            return Response::error(&e);
        }
        let param = |key: &str| {
            query
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        let is_watch = query_bool(param("watch")) == Some(true);
        // As the server's request info decides: `watch` turns a list into a watch; a get of a
        // named object stays a get; a GET under the `/watch/` prefix is a watch.
        let verb = match (method.as_str(), target.name.is_empty(), is_watch) {
            ("GET", _, _) if target.legacy_watch => "watch",
            ("GET", true, true) => "watch",
            ("GET", true, false) => "list",
            ("GET", false, _) => "get",
            ("POST", _, _) => "create",
            ("PUT", _, _) => "update",
            ("PATCH", _, _) => "patch",
            ("DELETE", true, _) => "delete-collection",
            ("DELETE", false, _) => "delete",
            _ => {
                return Response::error(&Error::new_method_not_supported(
                    &target.group,
                    &target.resource,
                    &method,
                ));
            }
        };
        let patch_type = if verb == "patch" {
            match patch::patch_type(&content_type) {
                Ok(t) => Some(t),
                Err(e) => return Response::error(&e),
            }
        } else {
            None
        };
        let decoded_body: Option<Value> = if body.is_empty() {
            None
        } else if patch_type == Some(PatchType::Apply) {
            serde_yaml_ng::from_slice(&body).ok()
        } else {
            serde_json::from_slice(&body).ok()
        };
        let action = Action {
            verb: verb.into(),
            group: target.group.clone(),
            version: target.version.clone(),
            resource: target.resource.clone(),
            subresource: target.subresource.clone(),
            namespace: target.namespace.clone(),
            name: target.name.clone(),
            patch_type,
            body: decoded_body,
            query: query.clone(),
        };
        self.inner.actions.lock().push(action.clone());
        let reactors: Vec<Reactor> = self.inner.reactors.read().clone();
        for reactor in reactors.iter().filter(|r| r.handles(&action)) {
            match (reactor.react)(&action) {
                Reaction::Continue => {}
                Reaction::Object(obj) if verb != "watch" => return Response::json(200, obj),
                Reaction::Object(_) => {
                    return Response::error(&Error::new_internal_error(
                        "a reactor answered a watch with an object; watch reactors return an error or Continue",
                    ));
                }
                Reaction::Error(e) => return Response::error(&e),
            }
        }
        let manager = param("fieldManager")
            .map(str::to_string)
            .unwrap_or_else(|| {
                if verb == "patch" && patch_type == Some(PatchType::Apply) {
                    String::new()
                } else {
                    user_agent.split('/').next().unwrap_or("").to_string()
                }
            });
        let accept = header(http::header::ACCEPT);
        let as_metadata = accept.contains("as=PartialObjectMetadata");
        match self.serve(&target, verb, patch_type, &body, &query, &manager) {
            Ok(r) if as_metadata => r.into_partial_metadata(),
            Ok(r) => r,
            Err(e) => Response::error(&e),
        }
    }

    /// Whether the server has a route for a path under the `/watch/` prefix: a resource's
    /// collection or one object, no subresource (404), and GET only (405).
    fn route_legacy_watch(&self, target: &Target, method: &str) -> Result<(), Error> {
        let Ok(info) = self
            .inner
            .tracker
            .info(&target.group, &target.version, &target.resource)
        else {
            return Err(page_not_found());
        };
        let namespaced = info.api_resource.namespaced;
        let routed = target.subresource.is_empty()
            && if namespaced {
                // `watch/{resource}` across namespaces, `watch/namespaces/{ns}/{resource}[/{name}]`.
                !target.namespace.is_empty() || target.name.is_empty()
            } else {
                target.namespace.is_empty()
            };
        if !routed {
            return Err(page_not_found());
        }
        if method != "GET" {
            let mut status = kclient_apimachinery::Status::failure(
                405,
                StatusReason::MethodNotAllowed,
                "the server does not allow this method on the requested resource",
            );
            status.details = Some(kclient_apimachinery::StatusDetails::default());
            return Err(Error::from_status(status));
        }
        Ok(())
    }

    fn serve(
        &self,
        target: &Target,
        verb: &str,
        patch_type: Option<PatchType>,
        body: &[u8],
        query: &[(String, String)],
        manager: &str,
    ) -> Result<Response, Error> {
        let param = |key: &str| {
            query
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        // An apply's `force`, in Go's `strconv.ParseBool` spellings of true.
        let force = matches!(
            param("force"),
            Some("1" | "t" | "T" | "true" | "TRUE" | "True")
        );
        // A dry run writes to a copy, so it answers as the write would and changes nothing.
        let dry_run_copy;
        let dry_run = param("dryRun") == Some("All")
            && matches!(
                verb,
                "create" | "update" | "patch" | "delete" | "delete-collection"
            );
        let tracker = if dry_run {
            dry_run_copy = self.inner.tracker.dry_run_copy();
            &dry_run_copy
        } else {
            &self.inner.tracker
        };
        let info = tracker
            .info(&target.group, &target.version, &target.resource)
            .map_err(|_| Error::new_not_found(&target.group, &target.resource, &target.name))?;
        let namespaced = info.api_resource.namespaced;
        if !namespaced && !target.namespace.is_empty() {
            return Err(Error::new_not_found(
                &target.group,
                &target.resource,
                &target.name,
            ));
        }
        if namespaced
            && target.namespace.is_empty()
            && matches!(verb, "delete-collection" | "create")
        {
            // The server serves a namespaced collection across namespaces for reading only:
            // its router has no DELETE or POST there.
            let mut status = Status::failure(
                405,
                StatusReason::MethodNotAllowed,
                "the server does not allow this method on the requested resource",
            );
            status.details = Some(StatusDetails::default());
            return Err(Error::from_status(status));
        }
        if namespaced && target.namespace.is_empty() && !matches!(verb, "list" | "watch") {
            return Err(Error::new_not_found(
                &target.group,
                &target.resource,
                &target.name,
            ));
        }
        let pods = info.api_resource.group.is_empty() && info.api_resource.kind == "Pod";
        let accounts =
            info.api_resource.group.is_empty() && info.api_resource.kind == "ServiceAccount";
        let (ns, name) = (target.namespace.as_str(), target.name.as_str());
        let answer = match (target.subresource.as_str(), verb) {
            ("scale", "get" | "update" | "patch") if info.scale.is_some() => {
                let paths = info.scale.as_ref().expect("checked by the guard");
                Some(subresource::scale(
                    tracker,
                    &info,
                    paths,
                    (verb, ns, name),
                    patch_type,
                    body,
                    (manager, force),
                )?)
            }
            ("binding", "create") if pods => {
                Some(subresource::bind(tracker, &info, ns, name, body, manager)?)
            }
            ("eviction", "create") if pods => Some(subresource::evict(
                tracker,
                &info,
                (ns, name),
                body,
                dry_run,
            )?),
            ("log", "get") if pods => Some(subresource::log(tracker, &info, ns, name)?),
            ("token", "create") if accounts => {
                Some(subresource::token(tracker, &info, ns, name, body, manager)?)
            }
            _ => None,
        };
        match answer {
            Some(Answer::Json(code, value)) => return Ok(Response::json(code, value)),
            Some(Answer::NoContent) => {
                return Ok(Response {
                    code: 204,
                    retry_after: None,
                    content_type: None,
                    body: Body::Empty,
                });
            }
            None => {}
        }
        let status_only = match target.subresource.as_str() {
            "" => false,
            "status" if info.has_status => true,
            // The custom resource handler answers as for a missing object.
            _ if info.patch_fields.is_none() => {
                return Err(Error::new_not_found(
                    &info.api_resource.group,
                    &info.api_resource.plural,
                    name,
                ));
            }
            sub if served_elsewhere(&info.api_resource.group, &info.api_resource.kind, sub) => {
                return Err(not_served_by_the_fake(&info.api_resource.plural, sub));
            }
            _ => return Err(page_not_found()),
        };
        let body_json = || subresource::body_json(body);
        match verb {
            "get" => {
                tracker.check_get_resource_version(param("resourceVersion"))?;
                Ok(Response::json(200, tracker.get_object(&info, ns, name)?))
            }
            "list" => {
                let selection = Selection::parse(
                    &info,
                    Some(ns),
                    param("labelSelector"),
                    param("fieldSelector"),
                )?;
                let limit = query_int(param("limit"))?.unwrap_or(0);
                query_int(param("timeoutSeconds"))?;
                let request = ListRequest {
                    limit: usize::try_from(limit.max(0)).unwrap_or(0),
                    continue_token: param("continue").map(str::to_string),
                    resource_version: param("resourceVersion").map(str::to_string),
                    resource_version_match: param("resourceVersionMatch").map(str::to_string),
                    send_initial_events: param("sendInitialEvents").is_some(),
                };
                Ok(Response::json(
                    200,
                    tracker.list(&info, &selection, &request)?,
                ))
            }
            "watch" => {
                query_int(param("limit"))?;
                let timeout = query_int(param("timeoutSeconds"))?;
                // A watch of one object (under the `/watch/` prefix) selects it by name, as the
                // server's list handler does; a field selector must then require that name.
                let named_selector;
                let mut field_selector = param("fieldSelector").filter(|s| !s.is_empty());
                if !name.is_empty() {
                    if let Some(given) = field_selector {
                        Selection::parse(&info, Some(ns), None, Some(given))?;
                        let selected = FieldSelector::parse(given).ok();
                        let selected = selected
                            .as_ref()
                            .and_then(|f| f.requires_exact_match("metadata.name"));
                        if selected != Some(name) {
                            return Err(Error::new_bad_request(
                                "fieldSelector metadata.name doesn't match requested name",
                            ));
                        }
                    } else {
                        named_selector = format!(
                            "metadata.name={}",
                            kclient_apimachinery::escape_field_value(name)
                        );
                        field_selector = Some(&named_selector);
                    }
                }
                let selection =
                    Selection::parse(&info, Some(ns), param("labelSelector"), field_selector)?;
                let request = WatchRequest {
                    resource_version: param("resourceVersion").map(str::to_string),
                    resource_version_match: param("resourceVersionMatch").map(str::to_string),
                    has_continue: param("continue").is_some_and(|c| !c.is_empty()),
                    bookmarks: query_bool(param("allowWatchBookmarks")) == Some(true),
                    send_initial_events: query_bool(param("sendInitialEvents")),
                };
                let rx = tracker.watch(&info, selection, &request)?;
                match timeout {
                    // The server's deadline has passed before the watch starts.
                    Some(t) if t < 0 => {
                        drop(rx);
                        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
                        let expired = Error::new_internal_error("context deadline exceeded");
                        let _sent = tx.send(event_line("ERROR", &status_json(&expired)));
                        Ok(Response::watch(rx, None))
                    }
                    t => Ok(Response::watch(
                        rx,
                        t.and_then(|t| u64::try_from(t).ok())
                            .filter(|t| *t > 0)
                            .map(std::time::Duration::from_secs),
                    )),
                }
            }
            "create" => {
                if !name.is_empty() {
                    return Err(Error::new_method_not_supported(
                        &target.group,
                        &target.resource,
                        "create",
                    ));
                }
                let mut created = tracker.create(&info, Some(ns), body_json()?, manager)?;
                if dry_run {
                    // Nothing was stored, so there is no resourceVersion.
                    if let Some(m) = created["metadata"].as_object_mut() {
                        m.remove("resourceVersion");
                    }
                } else {
                    self.after_write(&info, &created);
                }
                Ok(Response::json(201, info.served(created)))
            }
            "update" => {
                let (mut updated, created) = tracker.update_or_create(
                    &info,
                    ns,
                    name,
                    body_json()?,
                    manager,
                    status_only,
                )?;
                if dry_run && created {
                    // Nothing was stored, so there is no resourceVersion.
                    if let Some(m) = updated["metadata"].as_object_mut() {
                        m.remove("resourceVersion");
                    }
                } else if dry_run {
                    self.keep_stored_resource_version(&info, ns, name, &mut updated);
                } else {
                    self.after_write(&info, &updated);
                }
                Ok(Response::json(
                    if created { 201 } else { 200 },
                    info.served(updated),
                ))
            }
            "patch" => {
                let patch_type = patch_type.unwrap_or(PatchType::Merge);
                let decoded = patch::decode(&info, patch_type, body)?;
                let patched = if patch_type == PatchType::Apply {
                    tracker.apply(&info, ns, name, manager, status_only, force, decoded)?
                } else {
                    tracker.patch(&info, ns, name, manager, status_only, |existing| {
                        patch::apply(&info, patch_type, &decoded, existing)
                    })?
                };
                let mut patched = patched;
                if dry_run {
                    self.keep_stored_resource_version(&info, ns, name, &mut patched);
                } else {
                    self.after_write(&info, &patched);
                }
                Ok(Response::json(200, info.served(patched)))
            }
            "delete" | "delete-collection" => {
                let options: Value = if body.is_empty() {
                    json!({})
                } else {
                    body_json()?
                };
                let policy = options["propagationPolicy"]
                    .as_str()
                    .or(param("propagationPolicy"));
                let orphan = options["orphanDependents"]
                    .as_bool()
                    .or(param("orphanDependents").map(|v| v == "true"));
                check_delete_options(policy, orphan)?;
                let request = DeleteRequest {
                    uid: options["preconditions"]["uid"].as_str().map(str::to_string),
                    resource_version: options["preconditions"]["resourceVersion"]
                        .as_str()
                        .map(str::to_string),
                    // `orphanDependents` (deprecated) is the Orphan or Background policy.
                    propagation: policy
                        .map(str::to_string)
                        .or_else(|| orphan.map(|o| if o { "Orphan" } else { "Background" }.into())),
                    grace_period: options["gracePeriodSeconds"].as_i64().or_else(|| {
                        param("gracePeriodSeconds").and_then(|g| g.parse::<i64>().ok())
                    }),
                };
                if verb == "delete" {
                    let (obj, gone) = tracker.delete(&info, ns, name, &request)?;
                    let obj = info.served(obj);
                    if gone {
                        if !dry_run {
                            self.after_delete(&info, &obj);
                        }
                        let r = &info.api_resource;
                        if returns_deleted_object(info.as_ref()) {
                            return Ok(Response::json(200, obj));
                        }
                        return Ok(Response::json(
                            200,
                            json!({
                                "kind": "Status",
                                "apiVersion": "v1",
                                "metadata": {},
                                "status": "Success",
                                "details": delete_details(&r.group, &r.plural, name, &obj),
                            }),
                        ));
                    }
                    return Ok(Response::json(200, obj));
                }
                let limit = query_int(param("limit"))?.unwrap_or(0);
                query_int(param("timeoutSeconds"))?;
                tracker.check_list_options(&ListRequest {
                    limit: usize::try_from(limit.max(0)).unwrap_or(0),
                    continue_token: param("continue").map(str::to_string),
                    resource_version: param("resourceVersion").map(str::to_string),
                    resource_version_match: param("resourceVersionMatch").map(str::to_string),
                    send_initial_events: param("sendInitialEvents").is_some(),
                })?;
                let selection = Selection::parse(
                    &info,
                    Some(ns),
                    param("labelSelector"),
                    param("fieldSelector"),
                )?;
                let items = tracker.delete_collection(&info, &selection, &request)?;
                Ok(Response::json(
                    200,
                    json!({
                        "kind": format!("{}List", info.api_resource.kind),
                        "apiVersion": info.api_resource.api_version,
                        "metadata": {"resourceVersion": tracker.resource_version().to_string()},
                        "items": items,
                    }),
                ))
            }
            _ => Err(Error::new_method_not_supported(
                &target.group,
                &target.resource,
                verb,
            )),
        }
    }

    /// A dry-run write answers with the stored object's resourceVersion (nothing changed).
    fn keep_stored_resource_version(
        &self,
        info: &ResourceInfo,
        namespace: &str,
        name: &str,
        object: &mut Value,
    ) {
        let stored = self.inner.tracker.get_object(info, namespace, name);
        if let (Ok(stored), Some(m)) = (stored, object["metadata"].as_object_mut()) {
            m.insert(
                "resourceVersion".into(),
                stored["metadata"]["resourceVersion"].clone(),
            );
        }
    }

    /// A CustomResourceDefinition written through the fake serves its resource at once and
    /// is reported Established, as the apiextensions controllers would do.
    fn after_write(&self, info: &ResourceInfo, object: &Value) {
        let r = &info.api_resource;
        if r.group != "apiextensions.k8s.io" || r.kind != "CustomResourceDefinition" {
            return;
        }
        let spec = &object["spec"];
        let names = &spec["names"];
        let (Some(group), Some(kind), Some(plural)) = (
            spec["group"].as_str(),
            names["kind"].as_str(),
            names["plural"].as_str(),
        ) else {
            return;
        };
        let namespaced = spec["scope"].as_str() != Some("Cluster");
        let versions = spec["versions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        // Each version's schema, read once: the storage version's serves every version.
        let schema_of = |version: &Value| {
            let schema = &version["schema"]["openAPIV3Schema"];
            schema
                .is_object()
                .then(|| Arc::new(crate::StructuralSchema::from_openapi_v3(schema)))
        };
        let schemas: Vec<Option<Arc<crate::StructuralSchema>>> =
            versions.iter().map(schema_of).collect();
        // Without a conversion webhook the server converts between versions by `apiVersion`
        // alone: they serve the same objects.
        let storage = versions
            .iter()
            .zip(&schemas)
            .find(|(v, _)| v["storage"].as_bool() == Some(true))
            .filter(|_| matches!(spec["conversion"]["strategy"].as_str(), None | Some("None")))
            .map(|(v, schema)| crate::registry::StorageVersion {
                api_version: format!("{group}/{}", v["name"].as_str().unwrap_or("")),
                schema: schema.clone(),
            });
        for (version, schema) in versions.iter().zip(&schemas) {
            if version["served"].as_bool() == Some(false) {
                continue;
            }
            let Some(v) = version["name"].as_str() else {
                continue;
            };
            let gvk = kclient_apimachinery::GroupVersionKind::new(group, v, kind);
            let mut api_resource = ApiResource::new(&gvk, plural, namespaced);
            if let Some(s) = names["singular"].as_str() {
                api_resource.singular = s.to_string();
            }
            if let Some(short) = names["shortNames"].as_array() {
                api_resource.short_names = short
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect();
            }
            let has_status = !version["subresources"]["status"].is_null();
            let mut custom = ResourceInfo::custom(api_resource, has_status);
            custom.schema = schema.clone();
            custom.storage = storage.clone();
            custom.categories = names["categories"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c.as_str().map(str::to_string))
                .collect();
            custom.selectable_fields = version["selectableFields"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|f| f["jsonPath"].as_str())
                .map(|p| p.trim_start_matches('.').to_string())
                .collect();
            let scale = &version["subresources"]["scale"];
            if let (Some(spec), Some(status)) = (
                scale["specReplicasPath"].as_str(),
                scale["statusReplicasPath"].as_str(),
            ) {
                custom = custom.with_scale(crate::registry::ScalePaths {
                    spec_replicas: spec.to_string(),
                    status_replicas: status.to_string(),
                    label_selector: scale["labelSelectorPath"].as_str().map(str::to_string),
                });
            }
            self.inner.tracker.register(custom);
        }
        let established = object["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Established"));
        if !established && let Some(name) = object["metadata"]["name"].as_str() {
            let now = crate::tracker::now();
            let condition = |t: &str, reason: &str| json!({"type": t, "status": "True", "reason": reason, "message": "", "lastTransitionTime": now});
            let mut with_status = object.clone();
            with_status["status"] = json!({
                "conditions": [
                    condition("NamesAccepted", "NoConflicts"),
                    condition("Established", "InitialNamesAccepted"),
                ],
                "acceptedNames": names,
                "storedVersions": spec["versions"].as_array().into_iter().flatten()
                    .filter(|v| v["storage"].as_bool() == Some(true))
                    .filter_map(|v| v["name"].as_str())
                    .collect::<Vec<_>>(),
            });
            if let Err(e) = self
                .inner
                .tracker
                .update(info, "", name, with_status, "", true)
            {
                tracing::warn!(error = %e, crd = name, "cannot mark the CRD Established");
            }
        }
    }

    /// A deleted CustomResourceDefinition stops serving its resource.
    fn after_delete(&self, info: &ResourceInfo, object: &Value) {
        let r = &info.api_resource;
        if r.group != "apiextensions.k8s.io" || r.kind != "CustomResourceDefinition" {
            return;
        }
        let spec = &object["spec"];
        let (Some(group), Some(plural)) =
            (spec["group"].as_str(), spec["names"]["plural"].as_str())
        else {
            return;
        };
        for version in spec["versions"].as_array().into_iter().flatten() {
            if let Some(v) = version["name"].as_str() {
                self.inner.tracker.unregister(group, v, plural);
            }
        }
    }
}

/// Whether a delete that removes the object answers with it rather than a `Status` (the
/// registries with `ReturnDeletedObject` in kube-apiserver).
fn returns_deleted_object(info: &ResourceInfo) -> bool {
    const KINDS: &[(&str, &str)] = &[
        ("", "Pod"),
        ("", "Service"),
        ("", "ServiceAccount"),
        ("storage.k8s.io", "StorageClass"),
    ];
    let r = &info.api_resource;
    KINDS.contains(&(r.group.as_str(), r.kind.as_str()))
}

/// The details of a successful delete's `Status`.
/// Refuses DeleteOptions that kube-apiserver refuses (apimachinery's `ValidateDeleteOptions`)
/// before it looks the object up: both `orphanDependents` and `propagationPolicy` given, or a
/// policy it does not know; a 422 on `DeleteOptions.meta.k8s.io`.
fn check_delete_options(policy: Option<&str>, orphan: Option<bool>) -> Result<(), Error> {
    let invalid = |message: String| {
        Err(Error::new_invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            &[("propagationPolicy", &message)],
        ))
    };
    match policy {
        Some(p) if orphan.is_some() => invalid(format!(
            "Invalid value: {p:?}: orphanDependents and deletionPropagation cannot be both set"
        )),
        Some(p) if !matches!(p, "Foreground" | "Background" | "Orphan") => invalid(format!(
            "Unsupported value: {p:?}: supported values: \"Foreground\", \"Background\", \"Orphan\""
        )),
        _ => Ok(()),
    }
}

fn delete_details(group: &str, plural: &str, name: &str, obj: &Value) -> Value {
    let mut details = json!({"name": name, "kind": plural, "uid": obj["metadata"]["uid"]});
    if !group.is_empty() {
        details["group"] = json!(group);
    }
    details
}

/// Whether kube-apiserver serves the subresource `sub` of the built-in `group`/`kind`
/// although the fake does not (streams, proxies, and writes of one part of an object that the
/// fake has no rules for).
fn served_elsewhere(group: &str, kind: &str, sub: &str) -> bool {
    matches!(
        (group, kind, sub),
        (
            "",
            "Pod",
            "exec" | "attach" | "portforward" | "proxy" | "ephemeralcontainers" | "resize"
        ) | ("", "Service" | "Node", "proxy")
            | ("", "Namespace", "finalize")
            | (
                "certificates.k8s.io",
                "CertificateSigningRequest",
                "approval"
            )
    )
}

/// The fake's answer to a subresource the server serves and it does not: a 405 that says
/// so, rather than the 404 of a path nothing serves (which `is_not_found` would read as a
/// missing object).
fn not_served_by_the_fake(plural: &str, sub: &str) -> Error {
    let mut status = kclient_apimachinery::Status::failure(
        405,
        kclient_apimachinery::StatusReason::MethodNotAllowed,
        format!(
            "the fake clientset does not serve {plural}/{sub} (kube-apiserver does): \
             script it with a reactor"
        ),
    );
    status.details = Some(kclient_apimachinery::StatusDetails::default());
    Error::from_status(status)
}

/// The server's answer to a path it does not serve: a 404 with empty details.
/// A boolean query parameter as the server converts it: `None` when absent; `0` and `false`
/// (in any case) are false, anything else (the empty string too) is true.
fn query_bool(value: Option<&str>) -> Option<bool> {
    value.map(|v| v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// An integer query parameter as the server converts it (Go's `strconv.ParseInt`): a value
/// that does not parse, the empty string too, is a 400.
fn query_int(value: Option<&str>) -> Result<Option<i64>, Error> {
    value
        .map(|v| {
            v.parse::<i64>().map_err(|_| {
                Error::new_bad_request(format!("strconv.ParseInt: parsing {v:?}: invalid syntax"))
            })
        })
        .transpose()
}

fn page_not_found() -> Error {
    let mut status = kclient_apimachinery::Status::failure(
        404,
        kclient_apimachinery::StatusReason::NotFound,
        "the server could not find the requested resource",
    );
    status.details = Some(kclient_apimachinery::StatusDetails::default());
    Error::from_status(status)
}

impl RoundTripper for Fake {
    fn round_trip(&self, request: http::Request<Bytes>) -> RoundTripFuture {
        let response = self.handle(request);
        Box::pin(async move { Ok(response.into_http()) })
    }
}

/// What a request targets, from its path (kube-apiserver's `RequestInfoFactory`).
#[derive(Debug, Default, PartialEq)]
struct Target {
    group: String,
    version: String,
    namespace: String,
    resource: String,
    name: String,
    subresource: String,
    /// Under the deprecated `/watch/` prefix (`/api/v1/watch/namespaces/a/configmaps[/b]`),
    /// which the server still serves as a watch, of one object when a name is given.
    legacy_watch: bool,
}

/// Parses a resource path; `None` for discovery and other non-resource paths.
fn parse_path(path: &str) -> Option<Target> {
    let parts: Vec<String> = path
        .split('/')
        .filter(|p| !p.is_empty())
        .map(|p| {
            url::form_urlencoded::parse(format!("x={}", p.replace('+', "%2B")).as_bytes())
                .next()
                .map(|(_, v)| v.into_owned())
                .unwrap_or_default()
        })
        .collect();
    let (group, version, rest) = match parts.first().map(String::as_str) {
        Some("api") if parts.len() >= 3 => (String::new(), parts[1].clone(), &parts[2..]),
        Some("apis") if parts.len() >= 4 => (parts[1].clone(), parts[2].clone(), &parts[3..]),
        _ => return None,
    };
    let mut rest: &[String] = rest;
    let legacy_watch = rest.first().map(String::as_str) == Some("watch");
    if legacy_watch {
        rest = &rest[1..];
    }
    let mut namespace = String::new();
    if rest.first().map(String::as_str) == Some("namespaces") && rest.len() > 1 {
        namespace = rest[1].clone();
        if rest.len() > 2 && rest[2] != "status" && rest[2] != "finalize" {
            rest = &rest[2..];
        } else {
            // The namespace object itself: /api/v1/namespaces/{name}[/status].
            return Some(Target {
                group,
                version,
                namespace: String::new(),
                resource: "namespaces".into(),
                name: namespace,
                subresource: rest.get(2).cloned().unwrap_or_default(),
                legacy_watch,
            });
        }
    }
    Some(Target {
        group,
        version,
        namespace,
        resource: rest.first().cloned().unwrap_or_default(),
        name: rest.get(1).cloned().unwrap_or_default(),
        subresource: rest.get(2..).map(|s| s.join("/")).unwrap_or_default(),
        legacy_watch,
    })
}

/// A response being built.
struct Response {
    code: u16,
    retry_after: Option<i32>,
    /// The `Content-Type` when not plain JSON.
    content_type: Option<&'static str>,
    body: Body,
}

enum Body {
    Json(Value),
    /// No content (204).
    Empty,
    /// Event lines, the watch's timeout, and whether objects are reduced to metadata.
    Watch(
        tokio::sync::mpsc::UnboundedReceiver<Bytes>,
        Option<std::time::Duration>,
        bool,
    ),
}

/// An object or list reduced to `PartialObjectMetadata[List]`; a `Status` is left alone.
fn partial_metadata(value: Value) -> Value {
    let kind = value["kind"].as_str().unwrap_or("");
    if kind == "Status" {
        return value;
    }
    let one = |v: &Value| {
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": v["metadata"]})
    };
    if kind.ends_with("List") && value["items"].is_array() {
        let items: Vec<Value> = value["items"]
            .as_array()
            .into_iter()
            .flatten()
            .map(one)
            .collect();
        let mut metadata = value["metadata"].clone();
        if let Some(m) = metadata.as_object_mut() {
            // A typed list: an empty `continue` is left out.
            m.retain(|k, v| k != "continue" || v.as_str() != Some(""));
        }
        return json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": metadata, "items": items});
    }
    one(&value)
}

/// A watch event line with its object reduced to metadata.
fn partial_metadata_line(line: &Bytes) -> Bytes {
    let Ok(mut event) = serde_json::from_slice::<Value>(line) else {
        return line.clone();
    };
    if event["type"] != "ERROR" && event["type"] != "BOOKMARK" {
        event["object"] = partial_metadata(event["object"].take());
    }
    let mut out = crate::numbers::to_vec(&event);
    out.push(b'\n');
    Bytes::from(out)
}

impl Response {
    fn json(code: u16, value: Value) -> Self {
        Response {
            code,
            retry_after: None,
            content_type: None,
            body: Body::Json(value),
        }
    }

    fn error(err: &Error) -> Self {
        let body = status_json(err);
        let code = body["code"]
            .as_u64()
            .and_then(|c| u16::try_from(c).ok())
            .filter(|c| *c >= 400)
            .unwrap_or(500);
        let retry_after = body["details"]["retryAfterSeconds"]
            .as_i64()
            .and_then(|s| i32::try_from(s).ok())
            .filter(|s| *s > 0);
        Response {
            code,
            retry_after,
            content_type: None,
            body: Body::Json(body),
        }
    }

    /// The response as the server sends it to a client asking for
    /// `as=PartialObjectMetadata[List]`: objects reduced to their metadata (kclient's
    /// `MetadataClient` and metadata informers ask so).
    fn into_partial_metadata(self) -> Self {
        let body = match self.body {
            Body::Json(v) if self.code < 300 => Body::Json(partial_metadata(v)),
            Body::Watch(rx, timeout, _) => Body::Watch(rx, timeout, true),
            other => other,
        };
        Response { body, ..self }
    }

    fn with_code(mut self, code: u16) -> Self {
        self.code = code;
        self
    }

    fn watch(
        rx: tokio::sync::mpsc::UnboundedReceiver<Bytes>,
        timeout: Option<std::time::Duration>,
    ) -> Self {
        Response {
            code: 200,
            retry_after: None,
            content_type: None,
            body: Body::Watch(rx, timeout, false),
        }
    }

    fn into_http(self) -> http::Response<ByteStream> {
        let mut builder = http::Response::builder().status(self.code).header(
            http::header::CONTENT_TYPE,
            self.content_type.unwrap_or("application/json"),
        );
        if let Some(s) = self.retry_after {
            builder = builder.header(http::header::RETRY_AFTER, s.to_string());
        }
        let body = match self.body {
            Body::Json(v) => {
                let bytes = Bytes::from(crate::numbers::to_vec(&v));
                ByteStream::new(stream::iter([Ok(bytes)]))
            }
            Body::Empty => ByteStream::new(stream::iter(Vec::<Result<Bytes, Error>>::new())),
            Body::Watch(rx, timeout, metadata_only) => {
                // A timeout past what the clock can represent means none.
                let deadline = timeout.and_then(|t| tokio::time::Instant::now().checked_add(t));
                ByteStream::new(stream::unfold(
                    (rx, deadline),
                    move |(mut rx, deadline)| async move {
                        let next = match deadline {
                            Some(d) => tokio::time::timeout_at(d, rx.recv()).await.ok().flatten(),
                            None => rx.recv().await,
                        };
                        next.map(|b| {
                            let b = if metadata_only {
                                partial_metadata_line(&b)
                            } else {
                                b
                            };
                            (Ok::<_, Error>(b), (rx, deadline))
                        })
                    },
                ))
            }
        };
        builder.body(body).unwrap_or_else(|_| {
            http::Response::new(ByteStream::new(stream::iter(
                Vec::<Result<Bytes, Error>>::new(),
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_as_the_server_parses_them() {
        let t = |g: &str, v: &str, ns: &str, r: &str, n: &str, s: &str| Target {
            group: g.into(),
            version: v.into(),
            namespace: ns.into(),
            resource: r.into(),
            name: n.into(),
            subresource: s.into(),
            legacy_watch: false,
        };
        let watch = |t: Target| Target {
            legacy_watch: true,
            ..t
        };
        assert_eq!(
            parse_path("/api/v1/watch/namespaces/a/configmaps/c"),
            Some(watch(t("", "v1", "a", "configmaps", "c", "")))
        );
        assert_eq!(
            parse_path("/apis/apps/v1/watch/deployments"),
            Some(watch(t("apps", "v1", "", "deployments", "", "")))
        );
        assert_eq!(
            parse_path("/api/v1/watch/namespaces/a"),
            Some(watch(t("", "v1", "", "namespaces", "a", "")))
        );
        assert_eq!(
            parse_path("/api/v1/pods"),
            Some(t("", "v1", "", "pods", "", ""))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/a/pods/p/status"),
            Some(t("", "v1", "a", "pods", "p", "status"))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces"),
            Some(t("", "v1", "", "namespaces", "", ""))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/a"),
            Some(t("", "v1", "", "namespaces", "a", ""))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/a/status"),
            Some(t("", "v1", "", "namespaces", "a", "status"))
        );
        assert_eq!(
            parse_path("/apis/apps/v1/namespaces/a/deployments/d/scale"),
            Some(t("apps", "v1", "a", "deployments", "d", "scale"))
        );
        assert_eq!(
            parse_path("/api/v1/namespaces/a/configmaps/with%20space"),
            Some(t("", "v1", "a", "configmaps", "with space", ""))
        );
        assert_eq!(parse_path("/apis"), None);
        assert_eq!(parse_path("/apis/apps/v1"), None);
        assert_eq!(parse_path("/version"), None);
    }
}
