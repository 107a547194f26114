//! The testenv server binary: its Go sources (embedded in this crate, so a project outside the
//! kclient workspace builds the same server), the cache it is kept in, and the build.
//!
//! The cache is shared with `scripts/testenv`: a binary lives at
//! `<cache>/testenv-<key>/testenv`, where `<cache>` is `KCLIENT_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/kclient`, else `~/.cache/kclient`, and `<key>` is the first 16 hex digits of
//! the SHA-256 of `go.mod`, `go.sum`, the `*.go` files in byte order of their names, and the
//! Kubernetes version followed by a newline: exactly what the script feeds to `sha256sum`. A
//! test pins that both compute the same path. Processes that need the same missing binary at
//! once build it once: the first takes `build.lock` beside it, the others wait on that lock.
//! A build writes `testenv.tmp-<pid>` and moves it into place; one that a killed process (or
//! the `go` it ran, which finishes on its own) left there is removed by a later start.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::TestEnvError;

/// The server's sources: `go.mod`, `go.sum`, then the `.go` files sorted by name. A test checks
/// that this list matches `server/` on disk.
pub(crate) const SOURCES: &[(&str, &str)] = &[
    ("go.mod", include_str!("../server/go.mod")),
    ("go.sum", include_str!("../server/go.sum")),
    ("apiserver.go", include_str!("../server/apiserver.go")),
    ("compaction.go", include_str!("../server/compaction.go")),
    ("controllers.go", include_str!("../server/controllers.go")),
    ("etcd.go", include_str!("../server/etcd.go")),
    ("identities.go", include_str!("../server/identities.go")),
    ("kubelet.go", include_str!("../server/kubelet.go")),
    ("kwok.go", include_str!("../server/kwok.go")),
    ("main.go", include_str!("../server/main.go")),
    ("pki.go", include_str!("../server/pki.go")),
    ("reaper.go", include_str!("../server/reaper.go")),
    ("runtime.go", include_str!("../server/runtime.go")),
    ("scheduler.go", include_str!("../server/scheduler.go")),
    ("state.go", include_str!("../server/state.go")),
];

/// The environment variable naming a prebuilt binary (like envtest's `TEST_ASSET_KUBE_APISERVER`).
pub const BINARY_ENV: &str = "KCLIENT_TESTENV_BINARY";

/// The environment variable naming the binary cache directory.
pub const CACHE_DIR_ENV: &str = "KCLIENT_CACHE_DIR";

/// The Kubernetes version the server is built from: the `k8s.io/kubernetes` requirement in its
/// `go.mod` (the apiserver reports it at `/version`).
pub fn kubernetes_version() -> &'static str {
    go_mod_value(|line| line.strip_prefix("k8s.io/kubernetes ")).unwrap_or("unknown")
}

/// The Go version the server's `go.mod` declares (the oldest toolchain that builds it).
pub(crate) fn go_version() -> &'static str {
    go_mod_value(|line| line.strip_prefix("go ")).unwrap_or("1.26")
}

fn go_mod_value(pick: impl Fn(&'static str) -> Option<&'static str>) -> Option<&'static str> {
    SOURCES[0]
        .1
        .lines()
        .map(str::trim)
        .find_map(|line| pick(line).map(str::trim))
}

/// The cache key of the embedded sources (see the module docs).
pub(crate) fn cache_key() -> String {
    let mut hash = ring::digest::Context::new(&ring::digest::SHA256);
    for (_, text) in SOURCES {
        hash.update(text.as_bytes());
    }
    hash.update(kubernetes_version().as_bytes());
    hash.update(b"\n");
    let digest = hash.finish();
    digest.as_ref()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The default binary cache directory: `KCLIENT_CACHE_DIR`, else `$XDG_CACHE_HOME/kclient`,
/// else `$HOME/.cache/kclient`, else `kclient-cache` in the system's temporary directory.
pub fn default_cache_dir() -> PathBuf {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty(CACHE_DIR_ENV) {
        return PathBuf::from(dir);
    }
    if let Some(dir) = non_empty("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("kclient");
    }
    if let Some(home) = non_empty("HOME") {
        return PathBuf::from(home).join(".cache").join("kclient");
    }
    std::env::temp_dir().join("kclient-cache")
}

/// Where the binary built from this crate's sources is cached under `cache_dir`.
pub fn cached_binary_path(cache_dir: &Path) -> PathBuf {
    cache_dir
        .join(format!("testenv-{}", cache_key()))
        .join("testenv")
}

/// How the binary of a started environment was obtained.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BinarySource {
    /// Given explicitly (builder or `KCLIENT_TESTENV_BINARY`).
    Given,
    /// Found in the cache, built earlier (by this crate or `scripts/testenv`).
    Cached,
    /// Built now, taking this long.
    Built(Duration),
}

/// Serialises builds within one process: parallel tests starting their own servers build once.
static BUILD_LOCK: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The lock file, beside the binary, that serialises builds of one key across processes.
const BUILD_LOCK_FILE: &str = "build.lock";

/// The start of the name a build writes its output under, beside the binary, before it moves
/// it into place: `testenv.tmp-<pid>`.
const PARTIAL_PREFIX: &str = "testenv.tmp-";

/// Returns the cached binary, building it first with the `go` command when it is missing.
///
/// Builds of one key are serialised across processes too (parallel test processes, as
/// cargo-nextest runs them, or two projects on one machine) by a lock on a file beside the
/// binary: one process builds, the others wait for it and then take its binary from the cache,
/// rather than each running `go build` and rewriting the sources another one is compiling.
pub(crate) async fn ensure_built(
    cache_dir: &Path,
    go: &Path,
) -> Result<(PathBuf, BinarySource), TestEnvError> {
    let binary = cached_binary_path(cache_dir);
    let _guard = BUILD_LOCK.lock().await;
    if binary.is_file() {
        if let Some(key_dir) = binary.parent() {
            remove_partial_binaries_unless_building(key_dir);
        }
        return Ok((binary, BinarySource::Cached));
    }
    let started = Instant::now();
    let target = binary.clone();
    let go = go.to_path_buf();
    let built = tokio::task::spawn_blocking(move || build_once(&target, &go))
        .await
        .map_err(|e| TestEnvError::io("the build task", std::io::Error::other(e)))??;
    let source = if built {
        BinarySource::Built(started.elapsed())
    } else {
        BinarySource::Cached
    };
    Ok((binary, source))
}

/// Takes the key's lock file (waiting for another process's build), then builds `binary`
/// unless that build made it meanwhile. Returns whether it built.
fn build_once(binary: &Path, go: &Path) -> Result<bool, TestEnvError> {
    let key_dir = binary.parent().ok_or_else(|| {
        TestEnvError::io("the cache path", std::io::ErrorKind::InvalidInput.into())
    })?;
    std::fs::create_dir_all(key_dir)
        .map_err(|e| TestEnvError::io(format!("creating {}", key_dir.display()), e))?;
    let lock_path = key_dir.join(BUILD_LOCK_FILE);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .map_err(|e| TestEnvError::io(format!("opening {}", lock_path.display()), e))?;
    // Released when `lock` is closed, and by the system if this process dies.
    lock.lock()
        .map_err(|e| TestEnvError::io(format!("locking {}", lock_path.display()), e))?;
    if binary.is_file() {
        return Ok(false);
    }
    // No build of this key runs now but ours: whatever output is here is a dead one's.
    remove_partial_binaries(key_dir);
    build(binary, go).map(|()| true)
}

/// [`remove_partial_binaries`] of `key_dir`, if there are any and no build of the key runs
/// (its lock is free): a start that finds the binary cached cleans up after a build killed
/// earlier, whose `go` finished on its own after the start that ran it had died.
fn remove_partial_binaries_unless_building(key_dir: &Path) {
    if partial_binaries(key_dir).is_empty() {
        return;
    }
    let Ok(lock) = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(key_dir.join(BUILD_LOCK_FILE))
    else {
        return;
    };
    // Released when `lock` is closed. A build running elsewhere has it: leave its output be.
    if lock.try_lock().is_ok() {
        remove_partial_binaries(key_dir);
    }
}

/// Removes the outputs of builds that did not finish (`testenv.tmp-<pid>`, 120 MB each): a
/// process killed during `go build` leaves its output there, and so does its `go`, which runs
/// on and writes it after that process is gone. Called with the key's build lock held, when no
/// build of the key runs in a live process (within this one, [`BUILD_LOCK`] serialises them).
/// `scripts/testenv` builds to `testenv.tmp`, without the lock, and is left alone.
fn remove_partial_binaries(key_dir: &Path) {
    for path in partial_binaries(key_dir) {
        if let Err(e) = std::fs::remove_file(&path) {
            tracing::debug!(path = %path.display(), error = %e, "removing a partial build output");
        }
    }
}

/// The build outputs under a temporary name in `key_dir`.
fn partial_binaries(key_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(key_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.starts_with(PARTIAL_PREFIX))
        })
        .map(|entry| entry.path())
        .collect()
}

/// Writes the sources next to `binary` and runs `go build` there, as `scripts/testenv build` does.
fn build(binary: &Path, go: &Path) -> Result<(), TestEnvError> {
    let key_dir = binary.parent().ok_or_else(|| {
        TestEnvError::io("the cache path", std::io::ErrorKind::InvalidInput.into())
    })?;
    let src = key_dir.join("src");
    std::fs::create_dir_all(&src)
        .map_err(|e| TestEnvError::io(format!("creating {}", src.display()), e))?;
    for (name, text) in SOURCES {
        let path = src.join(name);
        std::fs::write(&path, text)
            .map_err(|e| TestEnvError::io(format!("writing {}", path.display()), e))?;
    }
    let version = kubernetes_version();
    let minor = version.split('.').nth(1).unwrap_or("0");
    let v = "k8s.io/component-base/version";
    let ldflags = format!(
        "-s -w -X {v}.gitVersion={version} -X {v}.gitMajor=1 -X {v}.gitMinor={minor} -X {v}.gitTreeState=clean"
    );
    // A name of our own: another process may be building the same key at the same time.
    let tmp = key_dir.join(format!("{PARTIAL_PREFIX}{}", std::process::id()));
    let command_line = format!(
        "CGO_ENABLED=0 GOWORK=off {} build -trimpath -ldflags='{ldflags}' -o {} .",
        go.display(),
        tmp.display()
    );
    eprintln!(
        "kclient-testenv: building kube-apiserver {version} into {} (first build: 10-20 minutes on 2 cores; later starts reuse it)",
        binary.display()
    );
    let output = Command::new(go)
        .current_dir(&src)
        .env("CGO_ENABLED", "0")
        // A go.work of the user's project must not take over this module.
        .env("GOWORK", "off")
        .args(["build", "-trimpath", "-ldflags", &ldflags, "-o"])
        .arg(&tmp)
        .arg(".")
        .output()
        .map_err(|source| match source.kind() {
            std::io::ErrorKind::NotFound => TestEnvError::GoNotFound {
                go: go.to_path_buf(),
                go_version: go_version().to_string(),
                source,
            },
            _ => TestEnvError::io("running `go build`", source),
        })?;
    if !output.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&output.stderr));
        return Err(TestEnvError::BuildFailed {
            go_version: go_version().to_string(),
            command: command_line,
            dir: src,
            status: output.status.to_string(),
            output: last_lines(&text, 30),
        });
    }
    std::fs::rename(&tmp, binary).map_err(|e| {
        TestEnvError::io(
            format!("moving {} to {}", tmp.display(), binary.display()),
            e,
        )
    })
}

/// The last `n` lines of `text`.
pub(crate) fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_sources_are_the_server_directory() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("server");
        let mut go_files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".go"))
            .collect();
        go_files.sort();
        let mut expected = vec!["go.mod".to_string(), "go.sum".to_string()];
        expected.extend(go_files);
        let embedded: Vec<&str> = SOURCES.iter().map(|(name, _)| *name).collect();
        assert_eq!(embedded, expected, "update SOURCES to match server/");
        for (name, text) in SOURCES {
            assert_eq!(
                std::fs::read_to_string(dir.join(name)).unwrap(),
                *text,
                "{name}"
            );
        }
    }

    #[test]
    fn versions_come_from_go_mod() {
        assert!(
            kubernetes_version().starts_with("v1."),
            "{}",
            kubernetes_version()
        );
        assert!(go_version().starts_with("1."), "{}", go_version());
    }

    #[test]
    fn the_cache_path_is_keyed_by_the_sources() {
        let path = cached_binary_path(Path::new("/cache"));
        let key = cache_key();
        assert_eq!(key.len(), 16);
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(
            path,
            Path::new("/cache")
                .join(format!("testenv-{key}"))
                .join("testenv")
        );
    }
}
