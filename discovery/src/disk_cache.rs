//! [`DiskCachedDiscoveryClient`]: discovery cached in files with a time to live (client-go's
//! `discovery/cached/disk`), as kubectl keeps it under
//! `~/.kube/cache/discovery/<host_port>/`.
//!
//! Layout: `servergroups.json` (the `APIGroupList`) and `<group>/<version>/serverresources.json`
//! (each `APIResourceList`; `v1/serverresources.json` for the core group). A file is used while
//! its modification time is younger than the TTL. After [`CachedDiscoveryInterface::invalidate`]
//! only files this client wrote since are used. Answers come from the delegate (usually a
//! [`MemCacheClient`](crate::MemCacheClient)) otherwise and are written back; write failures
//! are logged, never returned, as in client-go.
//!
//! [`CachedDiscoveryInterface::fresh`] stays true while every answer came from the server or
//! from files written by this client.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::discovery_client::DiscoveryClient;
use crate::error::Error;
use crate::interface::{CachedDiscoveryInterface, DiscoveryInterface};
use crate::memcache::MemCacheClient;
use crate::types::{APIGroupList, APIResourceList, ServerVersion};

/// kubectl's default time to live of the disk cache.
pub const DEFAULT_DISK_CACHE_TTL: Duration = Duration::from_secs(6 * 60 * 60);

/// The cache folder kubectl uses for `host` below `parent`: the host without its scheme,
/// with every character other than letters, digits, `_`, `/`, `.`, `(` and `)` replaced by `_`
/// (client-go's `computeDiscoverCacheDir`): `https://127.0.0.1:6443` -> `127.0.0.1_6443`.
pub fn discovery_cache_dir(parent: &Path, host: &str) -> PathBuf {
    let schemeless = host
        .strip_prefix("https://")
        .or_else(|| host.strip_prefix("http://"))
        .unwrap_or(host);
    let safe: String = schemeless
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.' | '(' | ')') {
                c
            } else {
                '_'
            }
        })
        .collect();
    parent.join(safe)
}

/// kubectl's default cache folder for `host`: `$HOME/.kube/cache/discovery/<host_port>`.
/// Reads `HOME` (as client-go's `homedir.HomeDir` does); `None` when it is unset.
pub fn default_discovery_cache_dir(host: &str) -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    Some(discovery_cache_dir(
        &Path::new(&home)
            .join(".kube")
            .join("cache")
            .join("discovery"),
        host,
    ))
}

/// Whether a file last modified at `modified` is past its time to live at `now`.
pub(crate) fn is_expired(modified: SystemTime, now: SystemTime, ttl: Duration) -> bool {
    match modified.checked_add(ttl) {
        Some(deadline) => now > deadline,
        None => false,
    }
}

/// Writes a cache file atomically (a temporary file in the same folder renamed into place),
/// mode 0660 as client-go's, creating its folders with mode 0750 as client-go's `MkdirAll`;
/// the discovery and OpenAPI disk caches both write through it.
pub(crate) fn write_cache_file(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path
        .parent()
        .ok_or_else(|| Error::cache(path, "no parent folder"))?;
    let mut folders = std::fs::DirBuilder::new();
    folders.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt as _;
        folders.mode(0o750);
    }
    folders.create(dir).map_err(|e| Error::cache(dir, e))?;
    // One name per write, as client-go's `os.CreateTemp`: two writers of one file (threads of
    // this process, or other processes) each fill their own and the last rename wins whole.
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("cache"),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        let mut options = std::fs::File::options();
        options.write(true).create(true).truncate(true);
        // Never readable by others, not even while it is written.
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt as _;
            options.mode(0o660);
        }
        let mut file = options.open(&tmp)?;
        file.write_all(bytes)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            file.set_permissions(std::fs::Permissions::from_mode(0o660))?;
        }
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(Error::cache(path, e));
    }
    Ok(())
}

struct State {
    /// Files this client wrote; after an invalidation only these are trusted.
    our_files: HashSet<PathBuf>,
    invalidated: bool,
    fresh: bool,
}

/// A discovery client caching answers in files under a folder (`servergroups.json`,
/// `<group>/<version>/serverresources.json`), used while younger than the TTL.
///
/// ```no_run
/// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
/// use kclient_discovery::{DiskCachedDiscoveryClient, default_discovery_cache_dir};
///
/// let config = kclient_rest::Config::infer()?;
/// let dir = default_discovery_cache_dir(&config.host).ok_or("HOME is not set")?;
/// let discovery = DiskCachedDiscoveryClient::for_config(config, dir, None)?;
/// let groups = discovery.server_groups().await?;
/// # let _ = groups; Ok(()) }
/// ```
pub struct DiskCachedDiscoveryClient<D> {
    delegate: D,
    dir: PathBuf,
    ttl: Duration,
    state: Mutex<State>,
}

impl<D> std::fmt::Debug for DiskCachedDiscoveryClient<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiskCachedDiscoveryClient")
            .field("dir", &self.dir)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl DiskCachedDiscoveryClient<MemCacheClient<DiscoveryClient>> {
    /// A disk-cached discovery client for `config`, caching in `dir` (see
    /// [`default_discovery_cache_dir`]) for `ttl` ([`DEFAULT_DISK_CACHE_TTL`] when `None`),
    /// over a memory cache (client-go's `NewCachedDiscoveryClientForConfig`).
    pub fn for_config(
        config: kclient_rest::Config,
        dir: impl Into<PathBuf>,
        ttl: Option<Duration>,
    ) -> Result<Self, kclient_rest::ConfigError> {
        let delegate = MemCacheClient::new(DiscoveryClient::for_config(config)?);
        Ok(DiskCachedDiscoveryClient::new(
            delegate,
            dir,
            ttl.unwrap_or(DEFAULT_DISK_CACHE_TTL),
        ))
    }
}

impl<D: CachedDiscoveryInterface> DiskCachedDiscoveryClient<D> {
    /// Caches `delegate`'s answers in `dir` for `ttl`.
    pub fn new(delegate: D, dir: impl Into<PathBuf>, ttl: Duration) -> Self {
        DiskCachedDiscoveryClient {
            delegate,
            dir: dir.into(),
            ttl,
            state: Mutex::new(State {
                our_files: HashSet::new(),
                invalidated: false,
                fresh: true,
            }),
        }
    }

    /// The folder holding the cache files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The time to live of a cache file.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    fn groups_file(&self) -> PathBuf {
        self.dir.join("servergroups.json")
    }

    fn resources_file(&self, group_version: &str) -> PathBuf {
        let mut path = self.dir.clone();
        path.extend(group_version.split('/'));
        path.join("serverresources.json")
    }

    /// Reads and decodes a cache file if it may be used (client-go's `getCachedFile`).
    fn read_cached<T: DeserializeOwned>(&self, path: &Path) -> Result<T, Error> {
        let ours = {
            let state = self.state.lock();
            let ours = state.our_files.contains(path);
            if state.invalidated && !ours {
                return Err(Error::cache(path, "cache invalidated"));
            }
            ours
        };
        let modified = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .map_err(|e| Error::cache(path, e))?;
        if is_expired(modified, SystemTime::now(), self.ttl) {
            return Err(Error::cache(path, "cache expired"));
        }
        let bytes = std::fs::read(path).map_err(|e| Error::cache(path, e))?;
        let value = kclient_apimachinery::decode_json(&bytes).map_err(|e| Error::cache(path, e))?;
        let mut state = self.state.lock();
        state.fresh = state.fresh && ours;
        Ok(value)
    }

    /// Writes a cache file ([`write_cache_file`]) and remembers it as this client's.
    fn write_cached<T: Serialize>(&self, path: &Path, value: &T) -> Result<(), Error> {
        let bytes = serde_json::to_vec(value).map_err(|e| Error::cache(path, e))?;
        write_cache_file(path, &bytes)?;
        self.state.lock().our_files.insert(path.to_owned());
        Ok(())
    }

    fn write_or_log<T: Serialize>(&self, path: &Path, value: &T) {
        if let Err(err) = self.write_cached(path, value) {
            tracing::debug!(error = %err, "failed to write the discovery cache");
        }
    }
}

impl<D: CachedDiscoveryInterface> DiscoveryInterface for DiskCachedDiscoveryClient<D> {
    async fn server_version(&self) -> Result<ServerVersion, Error> {
        self.delegate.server_version().await
    }

    fn invalidate_if_cached(&self) {
        CachedDiscoveryInterface::invalidate(self);
    }

    async fn server_groups(&self) -> Result<APIGroupList, Error> {
        let path = self.groups_file();
        if let Ok(groups) = self.read_cached::<APIGroupList>(&path) {
            return Ok(groups);
        }
        let live = self.delegate.server_groups().await?;
        if !live.groups.is_empty() {
            self.write_or_log(&path, &live);
        }
        Ok(live)
    }

    async fn server_resources_for_group_version(
        &self,
        group_version: &str,
    ) -> Result<APIResourceList, Error> {
        let path = self.resources_file(group_version);
        if let Ok(list) = self.read_cached::<APIResourceList>(&path) {
            return Ok(list);
        }
        let live = self
            .delegate
            .server_resources_for_group_version(group_version)
            .await?;
        if !live.api_resources.is_empty() {
            self.write_or_log(&path, &live);
        }
        Ok(live)
    }
}

impl<D: CachedDiscoveryInterface> CachedDiscoveryInterface for DiskCachedDiscoveryClient<D> {
    fn fresh(&self) -> bool {
        self.state.lock().fresh
    }

    fn invalidate(&self) {
        {
            let mut state = self.state.lock();
            state.our_files.clear();
            state.fresh = true;
            state.invalidated = true;
        }
        self.delegate.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::FakeDiscovery;

    /// As client-go's memcache client, an invalidate reaches a delegate that caches too (a
    /// disk cache under the memory cache), so the next call asks the server.
    #[tokio::test]
    async fn invalidate_reaches_a_cached_delegate() {
        let dir = tempfile::tempdir().unwrap();
        let disk = DiskCachedDiscoveryClient::new(
            MemCacheClient::new(FakeDiscovery::new(false)),
            dir.path(),
            std::time::Duration::from_secs(600),
        );
        let cache = MemCacheClient::new(disk);
        let fake = cache.delegate().delegate.delegate();
        assert_eq!(cache.server_groups().await.unwrap().groups.len(), 2);
        assert_eq!(fake.group_requests.load(Ordering::SeqCst), 1);

        fake.add("batch", "v1", "jobs", "Job", &[]);
        cache.invalidate();
        assert!(!cache.fresh());
        let groups = cache.server_groups().await.unwrap();
        assert_eq!(fake.group_requests.load(Ordering::SeqCst), 2);
        assert_eq!(groups.groups.len(), 3, "the new group is seen");
        assert!(cache.delegate().fresh());
    }

    #[test]
    fn cache_dir_follows_kubectl() {
        let parent = Path::new("/home/u/.kube/cache/discovery");
        assert_eq!(
            discovery_cache_dir(parent, "https://127.0.0.1:6443"),
            parent.join("127.0.0.1_6443")
        );
        assert_eq!(
            discovery_cache_dir(parent, "http://my-cluster.example.com:443/prefix"),
            parent.join("my_cluster.example.com_443/prefix")
        );
        assert_eq!(
            discovery_cache_dir(parent, "[::1]:6443"),
            parent.join("___1__6443")
        );
    }

    #[test]
    fn ttl_is_measured_from_the_modification_time() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let ttl = Duration::from_secs(600);
        assert!(!is_expired(t0, t0, ttl));
        assert!(!is_expired(t0, t0 + ttl, ttl));
        assert!(is_expired(t0, t0 + ttl + Duration::from_secs(1), ttl));
        // A file from the future (clock skew) is not expired.
        assert!(!is_expired(t0 + ttl, t0, ttl));
        assert!(!is_expired(t0, t0 + Duration::from_secs(1), Duration::MAX));
    }

    #[test]
    fn threads_writing_one_cache_file_at_once_never_mix_their_contents() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("v1").join("serverresources.json");
        let writers: Vec<_> = [b'a', b'b']
            .into_iter()
            .map(|byte| {
                let path = path.clone();
                std::thread::spawn(move || {
                    let bytes = vec![byte; 256 * 1024];
                    for _ in 0..50 {
                        write_cache_file(&path, &bytes).unwrap();
                        let read = std::fs::read(&path).unwrap();
                        assert_eq!(read.len(), bytes.len(), "a partly written file was read");
                        assert!(
                            read.iter().all(|b| *b == read[0]),
                            "the file mixes two writes"
                        );
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().unwrap();
        }
        let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|entry| entry.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            ["serverresources.json"],
            "temporary files left behind"
        );
    }
}

#[cfg(test)]
mod cache_tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::fake::FakeDiscovery;

    fn client(
        dir: &Path,
        ttl: Duration,
    ) -> DiskCachedDiscoveryClient<MemCacheClient<FakeDiscovery>> {
        DiskCachedDiscoveryClient::new(MemCacheClient::new(FakeDiscovery::new(false)), dir, ttl)
    }

    fn requests(c: &DiskCachedDiscoveryClient<MemCacheClient<FakeDiscovery>>) -> usize {
        c.delegate.delegate().group_requests.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn files_are_written_and_reused_within_the_ttl() {
        let tmp = tempfile::tempdir().unwrap();
        let first = client(tmp.path(), Duration::from_secs(600));
        let all = first.server_groups_and_resources().await.unwrap();
        assert!(all.is_complete());
        assert!(tmp.path().join("servergroups.json").is_file());
        assert!(tmp.path().join("v1/serverresources.json").is_file());
        assert!(tmp.path().join("apps/v1/serverresources.json").is_file());
        assert!(first.fresh());

        // A second client (another process, say) reads the files and asks nothing.
        let second = client(tmp.path(), Duration::from_secs(600));
        let again = second.server_groups_and_resources().await.unwrap();
        assert_eq!(again.value, all.value);
        assert_eq!(requests(&second), 0);
        assert!(
            !second.fresh(),
            "data from files this client did not write is not fresh"
        );

        // Invalidation ignores the old files and rewrites them.
        second.invalidate();
        assert!(second.fresh());
        second.server_groups().await.unwrap();
        assert_eq!(requests(&second), 1);
        assert!(second.fresh());
    }

    /// client-go makes the folders 0750 and the files 0660: other users of the machine can
    /// neither read the files nor list which groups the cluster serves.
    #[cfg(unix)]
    #[tokio::test]
    async fn folders_and_files_are_closed_to_other_users() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("discovery").join("127.0.0.1_6443");
        let cache = client(&dir, Duration::from_secs(600));
        cache.server_groups_and_resources().await.unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        for folder in [tmp.path().join("discovery"), dir.clone(), dir.join("apps")] {
            assert_eq!(
                mode(&folder) & 0o007,
                0,
                "{} is {:o}",
                folder.display(),
                mode(&folder)
            );
        }
        for file in [
            dir.join("servergroups.json"),
            dir.join("apps/v1/serverresources.json"),
        ] {
            assert_eq!(mode(&file), 0o660, "{}", file.display());
        }
    }

    #[tokio::test]
    async fn expired_files_are_refetched() {
        let tmp = tempfile::tempdir().unwrap();
        let first = client(tmp.path(), Duration::from_secs(600));
        first.server_groups().await.unwrap();
        let old = SystemTime::now() - Duration::from_secs(601);
        std::fs::File::options()
            .write(true)
            .open(tmp.path().join("servergroups.json"))
            .unwrap()
            .set_modified(old)
            .unwrap();
        let second = client(tmp.path(), Duration::from_secs(600));
        second.server_groups().await.unwrap();
        assert_eq!(requests(&second), 1);
        // The refetched file is young again.
        let third = client(tmp.path(), Duration::from_secs(600));
        third.server_groups().await.unwrap();
        assert_eq!(requests(&third), 0);
    }
}
