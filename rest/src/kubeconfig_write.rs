//! Writing kubeconfig files back: client-go's `clientcmd.PathOptions` and `ModifyConfig`, what
//! `kubectl config use-context / set-context / set-cluster / set-credentials` run.
//!
//! [`PathOptions`] says which files make up the kubeconfig and which one new entries go to.
//! [`modify_config`] takes the edited merged [`Kubeconfig`] (read it with
//! [`PathOptions::starting_config`], change it, hand it back) and writes each difference to the
//! file it belongs in, as client-go does:
//!
//! - a cluster, context or user that changed is written to the file that defined it (its
//!   `location_of_origin`); a new one goes to [`PathOptions::default_filename`]: the explicit
//!   file, else the only `KUBECONFIG` file, else the first `KUBECONFIG` file that exists, else
//!   the last one listed, else `~/.kube/config`;
//! - a removed entry is removed from the file that defined it;
//! - a new non-empty `current-context` goes to the default file; clearing it clears it in the
//!   first file that sets one;
//! - changed `preferences` go to the explicit file, else to the first file of the loading
//!   precedence whose own preferences differ from the new ones. The file's top-level
//!   `extensions` are never written, as in client-go.
//!
//! Unlike client-go, which re-encodes each file from its typed structs, the files are edited as
//! YAML documents: only the keys whose typed value changed are set or removed, so unknown fields,
//! the `extensions` of users and contexts, an `auth-provider`'s config and the order of keys and
//! entries are kept (YAML comments are not, as with kubectl). A cluster's `extensions` are
//! typed ([`Cluster::extensions`]) and written when they change. A written file without `apiVersion` and `kind` gets
//! `apiVersion: v1` and `kind: Config`, as kubectl writes them. Each write is atomic (a temporary file in the same folder renamed over
//! the original; a symlink is followed and its target replaced) and keeps the file's permission
//! bits; a new file is created with mode 0600, as kubectl creates it. While writing, each file of
//! the loading precedence is locked with client-go's `<file>.lock` convention, so `kubectl` and
//! kclient never edit the same files at once.
//!
//! Changed path fields (`certificate-authority`, `client-certificate`, `client-key`,
//! `tokenFile`) are written relative to their file's folder when that needs no `../`, as kubectl
//! does (`relativize_paths`). Errors name files and entries, never a credential.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine as _;
use serde_yaml_ng::{Mapping, Value};

use crate::config_error::{ConfigError, Kind};
use crate::kubeconfig::{
    AuthInfo, ClientConfigLoadingRules, Cluster, Context, ExecConfig, Kubeconfig, NamedExtension,
    Preferences, absolute_dir, yaml_error,
};

/// Which kubeconfig files are read and written, client-go's `clientcmd.PathOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PathOptions {
    /// `~/.kube/config`, used when neither an explicit file nor `KUBECONFIG` is given.
    pub global_file: PathBuf,
    /// The `KUBECONFIG` path list, deduplicated (empty when unset).
    pub env_var_files: Vec<PathBuf>,
    /// The `--kubeconfig` file, used alone when set.
    pub explicit_file: Option<PathBuf>,
}

impl PathOptions {
    /// client-go's `NewDefaultPathOptions`: `KUBECONFIG`, else `$HOME/.kube/config`.
    pub fn from_env() -> Self {
        let env = std::env::var_os("KUBECONFIG").unwrap_or_default();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        PathOptions {
            global_file: home.unwrap_or_default().join(".kube").join("config"),
            env_var_files: dedup(std::env::split_paths(&env)),
            explicit_file: None,
        }
    }

    /// Options for a `KUBECONFIG`-style list of files (deduplicated, in precedence order).
    pub fn with_env_var_files(files: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        PathOptions {
            env_var_files: dedup(files.into_iter().map(Into::into)),
            ..PathOptions::default()
        }
    }

    /// Options for exactly one file (`--kubeconfig`), which need not exist yet.
    pub fn explicit(path: impl Into<PathBuf>) -> Self {
        PathOptions {
            explicit_file: Some(path.into()),
            ..PathOptions::default()
        }
    }

    /// True when one explicit file is used.
    pub fn is_explicit_file(&self) -> bool {
        self.explicit_file.is_some()
    }

    /// The files merged into the starting config, in precedence order.
    pub fn loading_precedence(&self) -> Vec<PathBuf> {
        if let Some(path) = &self.explicit_file {
            return vec![path.clone()];
        }
        if !self.env_var_files.is_empty() {
            return self.env_var_files.clone();
        }
        vec![self.global_file.clone()]
    }

    /// The file new entries and a new current context are written to: the explicit file, else
    /// the only `KUBECONFIG` file, else the first `KUBECONFIG` file that exists, else the last
    /// one, else the global file.
    pub fn default_filename(&self) -> PathBuf {
        if let Some(path) = &self.explicit_file {
            return path.clone();
        }
        match self.env_var_files.as_slice() {
            [] => self.global_file.clone(),
            [only] => only.clone(),
            files => files
                .iter()
                .find(|f| f.exists())
                .or(files.last())
                .cloned()
                .unwrap_or_default(),
        }
    }

    /// The merged kubeconfig of [`PathOptions::loading_precedence`], each entry recording its
    /// file; a missing file reads as empty (so the first edit creates it).
    pub fn starting_config(&self) -> Result<Kubeconfig, ConfigError> {
        let files: Vec<PathBuf> = self
            .loading_precedence()
            .into_iter()
            .filter(|p| p.exists())
            .collect();
        ClientConfigLoadingRules::with_precedence(files).load()
    }
}

fn dedup(paths: impl Iterator<Item = PathBuf>) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for p in paths {
        if !p.as_os_str().is_empty() && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// Writes the differences between `options`' starting config and `new_config` back to the files
/// they belong in, client-go's `clientcmd.ModifyConfig` (see the module docs for where each
/// change goes). With `relativize_paths`, changed file paths are written relative to their
/// file's folder where that needs no `../` (kubectl passes `true`).
///
/// ```no_run
/// use kclient_rest::{PathOptions, modify_config};
/// # fn run() -> Result<(), kclient_rest::ConfigError> {
/// let options = PathOptions::from_env();
/// let mut config = options.starting_config()?;
/// config.current_context = Some("staging".to_string()); // kubectl config use-context staging
/// if let Some(context) = config.context_mut("staging") {
///     context.namespace = Some("web".to_string()); // kubectl config set-context staging --namespace web
/// }
/// modify_config(&options, &config, true)?;
/// # Ok(()) }
/// ```
pub fn modify_config(
    options: &PathOptions,
    new_config: &Kubeconfig,
    relativize_paths: bool,
) -> Result<(), ConfigError> {
    let mut precedence = options.loading_precedence();
    precedence.sort();
    let mut locks = Vec::new();
    for file in &precedence {
        locks.push(FileLock::acquire(file)?);
    }
    let starting = options.starting_config()?;
    if &starting == new_config {
        return Ok(());
    }
    let mut edits = Edits::default();

    let old_current = starting.current_context.clone().unwrap_or_default();
    let new_current = new_config.current_context.clone().unwrap_or_default();
    if old_current != new_current {
        write_current_context(options, &mut edits, &new_current)?;
    }

    if starting.preferences != new_config.preferences {
        write_preferences(options, &mut edits, &new_config.preferences)?;
    }

    let default_file = options.default_filename();
    let destination = |origin: &Option<PathBuf>| origin.clone().unwrap_or(default_file.clone());

    for named in &new_config.clusters {
        let old = starting.cluster(&named.name);
        if old != Some(&named.cluster) {
            let file = destination(&named.cluster.location_of_origin);
            let base = relativize_paths.then(|| absolute_dir(&file)).transpose();
            let base = base.map_err(|e| ConfigError::io(&file, e))?;
            let in_cluster = |e: ConfigError| e.context(&format!("cluster {:?}", named.name));
            let old = old
                .map(|c| cluster_fields(c, base.as_deref()))
                .transpose()
                .map_err(in_cluster)?;
            let new = cluster_fields(&named.cluster, base.as_deref()).map_err(in_cluster)?;
            edits
                .document(&file)?
                .upsert(Section::Clusters, &named.name, old, new)?;
        }
    }
    for named in &new_config.contexts {
        let old = starting.context(&named.name);
        if old != Some(&named.context) {
            let file = destination(&named.context.location_of_origin);
            edits.document(&file)?.upsert(
                Section::Contexts,
                &named.name,
                old.map(context_fields),
                context_fields(&named.context),
            )?;
        }
    }
    for named in &new_config.auth_infos {
        let old = starting.auth_info(&named.name);
        if old != Some(&named.user) {
            let file = destination(&named.user.location_of_origin);
            let base = relativize_paths.then(|| absolute_dir(&file)).transpose();
            let base = base.map_err(|e| ConfigError::io(&file, e))?;
            edits.document(&file)?.upsert(
                Section::Users,
                &named.name,
                old.map(|u| auth_info_fields(u, base.as_deref())),
                auth_info_fields(&named.user, base.as_deref()),
            )?;
        }
    }

    for named in &starting.clusters {
        if new_config.cluster(&named.name).is_none() {
            let file = destination(&named.cluster.location_of_origin);
            edits
                .document(&file)?
                .remove(Section::Clusters, &named.name);
        }
    }
    for named in &starting.contexts {
        if new_config.context(&named.name).is_none() {
            let file = destination(&named.context.location_of_origin);
            edits
                .document(&file)?
                .remove(Section::Contexts, &named.name);
        }
    }
    for named in &starting.auth_infos {
        if new_config.auth_info(&named.name).is_none() {
            let file = destination(&named.user.location_of_origin);
            edits.document(&file)?.remove(Section::Users, &named.name);
        }
    }

    let result = edits.write_all();
    drop(locks);
    result
}

/// client-go's `writeCurrentContext`: a new context goes to the explicit or default file; an
/// empty one clears the first file that sets one.
fn write_current_context(
    options: &PathOptions,
    edits: &mut Edits,
    new_current: &str,
) -> Result<(), ConfigError> {
    if let Some(file) = &options.explicit_file {
        edits.document(file)?.set_current_context(new_current);
        return Ok(());
    }
    if !new_current.is_empty() {
        let file = options.default_filename();
        edits.document(&file)?.set_current_context(new_current);
        return Ok(());
    }
    for file in options.loading_precedence() {
        if !file.exists() {
            continue;
        }
        let document = edits.document(&file)?;
        let set = document
            .root
            .get("current-context")
            .and_then(Value::as_str)
            .is_some_and(|c| !c.is_empty());
        if set {
            document.set_current_context("");
            return Ok(());
        }
    }
    Err(ConfigError::new(
        Kind::NotFound,
        "no kubeconfig file sets a current context to clear",
    ))
}

/// client-go's `writePreferences`: to the explicit file, else to the first file of the loading
/// precedence whose own preferences differ from the new ones.
fn write_preferences(
    options: &PathOptions,
    edits: &mut Edits,
    preferences: &Preferences,
) -> Result<(), ConfigError> {
    if let Some(file) = &options.explicit_file {
        return edits.document(file)?.set_preferences(preferences);
    }
    for file in options.loading_precedence() {
        let own = if file.exists() {
            Kubeconfig::read_from(&file)?.preferences
        } else {
            Preferences::default()
        };
        if &own != preferences {
            return edits.document(&file)?.set_preferences(preferences);
        }
    }
    Err(ConfigError::new(
        Kind::NotFound,
        "no kubeconfig file to write the preferences to",
    ))
}

/// A `<file>.lock` held while files are edited (client-go's `lockFile`); removed on drop.
struct FileLock {
    path: PathBuf,
}

impl FileLock {
    fn acquire(file: &Path) -> Result<FileLock, ConfigError> {
        let mut name = file.as_os_str().to_owned();
        name.push(".lock");
        let path = PathBuf::from(name);
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| write_error(dir, e))?;
        }
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(_) => Ok(FileLock { path }),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(ConfigError::new(
                Kind::Io,
                format!(
                    "kubeconfig {} is being edited by another process ({} exists; remove it if no kubectl or kclient is editing it)",
                    file.display(),
                    path.display()
                ),
            )),
            Err(e) => Err(write_error(&path, e)),
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The documents being edited, by file, each read once and written once.
#[derive(Default)]
struct Edits {
    documents: BTreeMap<PathBuf, Document>,
}

impl Edits {
    fn document(&mut self, file: &Path) -> Result<&mut Document, ConfigError> {
        if !self.documents.contains_key(file) {
            let document = Document::read(file)?;
            self.documents.insert(file.to_path_buf(), document);
        }
        // Just inserted when missing.
        self.documents
            .get_mut(file)
            .ok_or_else(|| ConfigError::new(Kind::Io, format!("{} vanished", file.display())))
    }

    fn write_all(self) -> Result<(), ConfigError> {
        for (file, document) in self.documents {
            if document.changed {
                document.write(&file)?;
            }
        }
        Ok(())
    }
}

/// One kubeconfig file as a YAML document: every key is kept, known or not.
struct Document {
    root: Mapping,
    changed: bool,
}

#[derive(Clone, Copy)]
enum Section {
    Clusters,
    Contexts,
    Users,
}

impl Section {
    /// The list's key and the entry's settings key.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            Section::Clusters => ("clusters", "cluster"),
            Section::Contexts => ("contexts", "context"),
            Section::Users => ("users", "user"),
        }
    }
}

impl Document {
    fn read(file: &Path) -> Result<Document, ConfigError> {
        let text = match std::fs::read_to_string(file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Document::new_file()),
            Err(e) => return Err(ConfigError::io(file, e)),
        };
        if text.trim().is_empty() {
            return Ok(Document::new_file());
        }
        let value: Value =
            serde_yaml_ng::from_str(&text).map_err(|e| yaml_error(e).in_file(file))?;
        match value {
            Value::Null => Ok(Document::new_file()),
            Value::Mapping(root) => Ok(Document {
                root,
                changed: false,
            }),
            _ => Err(
                ConfigError::new(Kind::Parse, "a kubeconfig must be a YAML mapping").in_file(file),
            ),
        }
    }

    /// What client-go writes for an empty config (keys in its order).
    fn new_file() -> Document {
        let mut root = Mapping::new();
        root.insert("apiVersion".into(), "v1".into());
        root.insert("clusters".into(), Value::Sequence(Vec::new()));
        root.insert("contexts".into(), Value::Sequence(Vec::new()));
        root.insert("current-context".into(), "".into());
        root.insert("kind".into(), "Config".into());
        root.insert("preferences".into(), Value::Mapping(Mapping::new()));
        root.insert("users".into(), Value::Sequence(Vec::new()));
        Document {
            root,
            changed: true,
        }
    }

    fn set_current_context(&mut self, name: &str) {
        self.root.insert("current-context".into(), name.into());
        self.changed = true;
    }

    /// Sets `colors` and `extensions` of the file's `preferences`, keeping any other key there.
    fn set_preferences(&mut self, preferences: &Preferences) -> Result<(), ConfigError> {
        if !self.root.get("preferences").is_some_and(Value::is_mapping) {
            // Replacing a key's value keeps its place among the file's keys.
            self.root
                .insert("preferences".into(), Value::Mapping(Mapping::new()));
        }
        let Some(Value::Mapping(section)) = self.root.get_mut("preferences") else {
            return Err(ConfigError::new(
                Kind::Parse,
                "preferences is not a mapping",
            ));
        };
        if preferences.colors {
            section.insert("colors".into(), true.into());
        } else {
            section.remove("colors");
        }
        if preferences.extensions.is_empty() {
            section.remove("extensions");
        } else {
            let extensions =
                extensions_value(&preferences.extensions).map_err(|e| e.context("preferences"))?;
            section.insert("extensions".into(), extensions);
        }
        self.changed = true;
        Ok(())
    }

    /// Sets `name`'s settings in `section`: only the keys that differ between `old` and `new`
    /// are written (so keys the typed model does not know stay); a new entry is appended.
    fn upsert(
        &mut self,
        section: Section,
        name: &str,
        old: Option<Mapping>,
        new: Mapping,
    ) -> Result<(), ConfigError> {
        let (list_key, item_key) = section.keys();
        let list = self
            .root
            .entry(list_key.into())
            .or_insert(Value::Sequence(Vec::new()));
        if list.is_null() {
            *list = Value::Sequence(Vec::new());
        }
        let Value::Sequence(items) = list else {
            return Err(ConfigError::new(
                Kind::Parse,
                format!("{list_key} is not a list"),
            ));
        };
        self.changed = true;
        let existing = items
            .iter_mut()
            .find(|item| item.get("name").and_then(Value::as_str) == Some(name));
        match existing {
            Some(Value::Mapping(item)) => {
                let settings = item
                    .entry(item_key.into())
                    .or_insert(Value::Mapping(Mapping::new()));
                match (settings, old) {
                    (Value::Mapping(settings), Some(old)) => apply_diff(settings, &old, &new),
                    (settings, _) => *settings = Value::Mapping(new),
                }
            }
            _ => {
                // client-go's key order: `cluster`/`context` before `name`, `name` before `user`.
                let mut item = Mapping::new();
                if matches!(section, Section::Users) {
                    item.insert("name".into(), name.into());
                    item.insert(item_key.into(), Value::Mapping(new));
                } else {
                    item.insert(item_key.into(), Value::Mapping(new));
                    item.insert("name".into(), name.into());
                }
                items.push(Value::Mapping(item));
            }
        }
        Ok(())
    }

    fn remove(&mut self, section: Section, name: &str) {
        let (list_key, _) = section.keys();
        if let Some(Value::Sequence(items)) = self.root.get_mut(list_key) {
            let before = items.len();
            items.retain(|item| item.get("name").and_then(Value::as_str) != Some(name));
            self.changed |= items.len() != before;
        }
    }

    fn write(self, file: &Path) -> Result<(), ConfigError> {
        // Every file kubectl writes names its kind; a file without them gets them in front.
        let mut root = Mapping::new();
        if !self.root.contains_key("apiVersion") {
            root.insert("apiVersion".into(), "v1".into());
        }
        if !self.root.contains_key("kind") {
            root.insert("kind".into(), "Config".into());
        }
        root.extend(self.root);
        let text = serde_yaml_ng::to_string(&Value::Mapping(root)).map_err(|e| {
            ConfigError::new(Kind::Invalid, format!("encoding {}: {e}", file.display()))
        })?;
        write_atomically(file, text.as_bytes())
    }
}

/// Sets in `doc` every key whose value differs between `old` and `new` and removes the keys
/// `new` dropped, descending into mappings present on all sides; other keys of `doc` stay.
fn apply_diff(doc: &mut Mapping, old: &Mapping, new: &Mapping) {
    for (key, value) in new {
        if old.get(key) == Some(value) {
            continue;
        }
        match (doc.get_mut(key), old.get(key), value) {
            (Some(Value::Mapping(d)), Some(Value::Mapping(o)), Value::Mapping(n)) => {
                apply_diff(d, o, n)
            }
            _ => {
                doc.insert(key.clone(), value.clone());
            }
        }
    }
    for key in old.keys() {
        if !new.contains_key(key) {
            doc.shift_remove(key);
        }
    }
}

/// Replaces `file` with `content` through a temporary file in the same folder, keeping the
/// permission bits (0600 for a new file). A symlink is followed: its target is replaced.
fn write_atomically(file: &Path, content: &[u8]) -> Result<(), ConfigError> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let target = match std::fs::symlink_metadata(file) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(file).map_err(|e| write_error(file, e))?
        }
        _ => file.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).map_err(|e| write_error(&dir, e))?;
    let existing = std::fs::metadata(&target).ok().map(|m| m.permissions());
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "kubeconfig".to_string());
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| -> std::io::Result<()> {
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let mut f = options.open(&tmp)?;
        f.write_all(content)?;
        if let Some(permissions) = existing {
            f.set_permissions(permissions)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, &target)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(write_error(&target, e));
    }
    Ok(())
}

fn write_error(path: &Path, err: std::io::Error) -> ConfigError {
    ConfigError::new(Kind::Io, format!("cannot write {}: {err}", path.display())).with_source(err)
}

// The typed entries as client-go encodes them: keys in its (sorted) order, empty optional
// fields left out, the few non-optional ones always present.

fn put(map: &mut Mapping, key: &str, value: impl Into<Value>) {
    map.insert(key.into(), value.into());
}

fn put_str(map: &mut Mapping, key: &str, value: Option<&str>) {
    if let Some(v) = value.filter(|v| !v.is_empty()) {
        put(map, key, v);
    }
}

fn put_path(map: &mut Mapping, key: &str, value: Option<&Path>, base: Option<&Path>) {
    if let Some(path) = value.filter(|p| !p.as_os_str().is_empty()) {
        put(
            map,
            key,
            relativize(path, base).to_string_lossy().into_owned(),
        );
    }
}

fn put_bytes(map: &mut Mapping, key: &str, value: Option<&[u8]>) {
    if let Some(bytes) = value.filter(|b| !b.is_empty()) {
        put(
            map,
            key,
            base64::engine::general_purpose::STANDARD.encode(bytes),
        );
    }
}

/// client-go's `RelativizePathWithNoBacksteps`: `path` relative to `base` when it lies under it.
fn relativize(path: &Path, base: Option<&Path>) -> PathBuf {
    let Some(base) = base else {
        return path.to_path_buf();
    };
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    match absolute.strip_prefix(base) {
        Ok(rel)
            if !rel.as_os_str().is_empty()
                && !rel
                    .components()
                    .any(|c| c == std::path::Component::ParentDir) =>
        {
            rel.to_path_buf()
        }
        _ => path.to_path_buf(),
    }
}

/// A list of named extensions as client-go writes it: `name` and `extension` of each.
fn extensions_value(extensions: &[NamedExtension]) -> Result<Value, ConfigError> {
    let entries = extensions
        .iter()
        .map(|e| {
            let mut entry = Mapping::new();
            entry.insert("name".into(), e.name.as_str().into());
            let value = serde_yaml_ng::to_value(&e.extension).map_err(|err| {
                ConfigError::new(
                    Kind::Parse,
                    format!("extension {:?} cannot be written as YAML", e.name),
                )
                .with_source(err)
            })?;
            entry.insert("extension".into(), value);
            Ok(Value::Mapping(entry))
        })
        .collect::<Result<Vec<_>, ConfigError>>()?;
    Ok(Value::Sequence(entries))
}

fn cluster_fields(c: &Cluster, base: Option<&Path>) -> Result<Mapping, ConfigError> {
    let mut m = Mapping::new();
    put_path(
        &mut m,
        "certificate-authority",
        c.certificate_authority.as_deref(),
        base,
    );
    put_bytes(
        &mut m,
        "certificate-authority-data",
        c.certificate_authority_data.as_deref(),
    );
    if c.disable_compression {
        put(&mut m, "disable-compression", true);
    }
    if !c.extensions.is_empty() {
        put(&mut m, "extensions", extensions_value(&c.extensions)?);
    }
    if c.insecure_skip_tls_verify {
        put(&mut m, "insecure-skip-tls-verify", true);
    }
    put_str(&mut m, "proxy-url", c.proxy_url.as_deref());
    put(&mut m, "server", c.server.as_str());
    put_str(&mut m, "tls-server-name", c.tls_server_name.as_deref());
    Ok(m)
}

fn context_fields(c: &Context) -> Mapping {
    let mut m = Mapping::new();
    put(&mut m, "cluster", c.cluster.as_str());
    put_str(&mut m, "namespace", c.namespace.as_deref());
    put(&mut m, "user", c.user.as_str());
    m
}

fn auth_info_fields(u: &AuthInfo, base: Option<&Path>) -> Mapping {
    let mut m = Mapping::new();
    put_str(&mut m, "as", u.impersonate.as_deref());
    if !u.impersonate_groups.is_empty() {
        let groups = u.impersonate_groups.iter().map(|g| Value::from(g.as_str()));
        put(&mut m, "as-groups", Value::Sequence(groups.collect()));
    }
    put_str(&mut m, "as-uid", u.impersonate_uid.as_deref());
    if !u.impersonate_user_extra.is_empty() {
        let mut extra = Mapping::new();
        for (k, v) in &u.impersonate_user_extra {
            let values = v.iter().map(|s| Value::from(s.as_str())).collect();
            extra.insert(k.as_str().into(), Value::Sequence(values));
        }
        put(&mut m, "as-user-extra", Value::Mapping(extra));
    }
    if let Some(provider) = &u.auth_provider {
        let mut p = Mapping::new();
        put(&mut p, "name", provider.name.as_str());
        put(&mut m, "auth-provider", Value::Mapping(p));
    }
    put_path(
        &mut m,
        "client-certificate",
        u.client_certificate.as_deref(),
        base,
    );
    put_bytes(
        &mut m,
        "client-certificate-data",
        u.client_certificate_data.as_deref(),
    );
    put_path(&mut m, "client-key", u.client_key.as_deref(), base);
    put_bytes(
        &mut m,
        "client-key-data",
        u.client_key_data.as_ref().map(|k| k.expose().as_slice()),
    );
    if let Some(exec) = &u.exec {
        put(&mut m, "exec", Value::Mapping(exec_fields(exec)));
    }
    put_str(
        &mut m,
        "password",
        u.password.as_ref().map(|p| p.expose().as_str()),
    );
    put_str(
        &mut m,
        "token",
        u.token.as_ref().map(|t| t.expose().as_str()),
    );
    put_path(&mut m, "tokenFile", u.token_file.as_deref(), base);
    put_str(&mut m, "username", u.username.as_deref());
    m
}

fn exec_fields(e: &ExecConfig) -> Mapping {
    let mut m = Mapping::new();
    put_str(&mut m, "apiVersion", Some(&e.api_version));
    let args: Vec<Value> = e.args.iter().map(|a| Value::from(a.as_str())).collect();
    put(
        &mut m,
        "args",
        if args.is_empty() {
            Value::Null
        } else {
            Value::Sequence(args)
        },
    );
    put(&mut m, "command", e.command.as_str());
    let env: Vec<Value> = e
        .env
        .iter()
        .map(|v| {
            let mut var = Mapping::new();
            put(&mut var, "name", v.name.as_str());
            put(&mut var, "value", v.value.as_str());
            Value::Mapping(var)
        })
        .collect();
    put(
        &mut m,
        "env",
        if env.is_empty() {
            Value::Null
        } else {
            Value::Sequence(env)
        },
    );
    put_str(&mut m, "installHint", e.install_hint.as_deref());
    put_str(&mut m, "interactiveMode", e.interactive_mode.as_deref());
    put(&mut m, "provideClusterInfo", e.provide_cluster_info);
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(text: &str) -> Mapping {
        serde_yaml_ng::from_str(text).unwrap()
    }

    #[test]
    fn apply_diff_touches_only_changed_keys() {
        let mut doc = yaml("a: 1\nunknown: u\nnested: {x: 1, keep: k}\ngone: 1\n");
        let old = yaml("a: 1\nnested: {x: 1}\ngone: 1\n");
        let new = yaml("a: 1\nnested: {x: 2}\nadded: 3\n");
        apply_diff(&mut doc, &old, &new);
        assert_eq!(
            doc,
            yaml("a: 1\nunknown: u\nnested: {x: 2, keep: k}\nadded: 3\n")
        );
    }

    #[test]
    fn paths_are_made_relative_only_without_backsteps() {
        let base = Path::new("/home/u/.kube");
        let cases = [
            ("/home/u/.kube/certs/c.crt", "certs/c.crt"),
            ("/etc/ca.crt", "/etc/ca.crt"),
            ("certs/c.crt", "certs/c.crt"),
            ("../other/c.crt", "../other/c.crt"),
            ("/home/u/.kube/../x.crt", "/home/u/.kube/../x.crt"),
        ];
        for (path, want) in cases {
            assert_eq!(relativize(Path::new(path), Some(base)), Path::new(want));
        }
        assert_eq!(
            relativize(Path::new("/home/u/.kube/c"), None),
            Path::new("/home/u/.kube/c")
        );
    }

    /// A cluster's extensions are part of the typed model (the exec plugin reads one): an edit
    /// of them is written, an untouched one stays as it was, and a new cluster's are written.
    #[test]
    fn cluster_extensions_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config");
        std::fs::write(
            &file,
            "clusters:\n\
             - name: edited\n  cluster:\n    server: https://a\n    extensions:\n    \
               - {name: client.authentication.k8s.io/exec, extension: {audience: old}}\n\
             - name: kept\n  cluster:\n    server: https://b\n    extensions:\n    \
               - {name: tool, extension: [1, {deep: true}]}\n",
        )
        .unwrap();
        let options = PathOptions::explicit(&file);
        let mut config = options.starting_config().unwrap();
        assert_eq!(
            config.cluster("edited").unwrap().extensions,
            [NamedExtension::new(
                "client.authentication.k8s.io/exec",
                serde_json::json!({"audience": "old"})
            )]
        );
        config.cluster_mut("edited").unwrap().extensions[0].extension =
            serde_json::json!({"audience": "new", "list": [1, 2]});
        let added = Cluster {
            server: "https://c".into(),
            extensions: vec![NamedExtension::new("tool", serde_json::json!({"x": "y"}))],
            ..Cluster::default()
        };
        config.set_cluster("added", added);
        modify_config(&options, &config, true).unwrap();

        let reread = options.starting_config().unwrap();
        for name in ["edited", "kept", "added"] {
            assert_eq!(
                reread.cluster(name).unwrap().extensions,
                config.cluster(name).unwrap().extensions,
                "{name}"
            );
        }
        // Writing back what was read changes nothing.
        let before = std::fs::read_to_string(&file).unwrap();
        modify_config(&options, &reread, true).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
    }

    #[test]
    fn default_filename_follows_client_go() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a"),
            dir.path().join("b"),
            dir.path().join("c"),
        );
        std::fs::write(&b, "").unwrap();
        let options = PathOptions::with_env_var_files([&a, &b, &c]);
        assert_eq!(options.default_filename(), b);
        let options = PathOptions::with_env_var_files([&a, &c]);
        assert_eq!(options.default_filename(), c);
        let options = PathOptions::with_env_var_files([&a]);
        assert_eq!(options.default_filename(), a);
        let mut options = PathOptions::explicit(&c);
        options.env_var_files = vec![b.clone()];
        assert_eq!(options.default_filename(), c);
        assert_eq!(options.loading_precedence(), vec![c.clone()]);
    }
}
