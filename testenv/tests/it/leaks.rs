//! What a server started by this crate leaves behind when it, or the test process that started
//! it, is killed (`kill -9`, the OOM killer, a harness's timeout, a stop that ran out of
//! grace): no process of its pods, however they were started.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

use crate::pods::ready_pod;

/// How long the processes of a killed server's pods may take to go (they go at once; this
/// bounds the test when they stay).
const GONE_WITHIN: Duration = Duration::from_secs(30);

/// The environment variable that marks every process of a pod under test: processes inherit
/// it, so the pod's command and what it starts (`sh -c 'sleep 3600'` runs `sleep` as a child)
/// all carry it.
const MARKER: &str = "KCLIENT_TESTENV_IT_POD_MARKER";

/// A marker value of this test's own.
fn marker(test: &str) -> String {
    format!(
        "{test}-{}-{:016x}",
        std::process::id(),
        rand::random::<u64>()
    )
}

/// The running processes whose environment holds `MARKER=<value>`, as `pid: command line`.
fn marked_processes(value: &str) -> Vec<String> {
    processes_with(&format!("{MARKER}={value}"))
}

/// The running processes whose environment holds the variable `needle` (`NAME=value`), as
/// `pid: command line`.
fn processes_with(needle: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|name| name.bytes().all(|b| b.is_ascii_digit()))
        })
        .filter_map(|entry| {
            let environ = std::fs::read(entry.path().join("environ")).ok()?;
            let marked = environ
                .split(|b| *b == 0)
                .any(|var| var == needle.as_bytes());
            if !marked {
                return None;
            }
            // A zombie has left everything but its entry; it runs nothing.
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let state = stat.rsplit_once(')')?.1.split_whitespace().next()?;
            if state == "Z" {
                return None;
            }
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            Some(format!(
                "{}: {}",
                entry.file_name().to_string_lossy(),
                String::from_utf8_lossy(&cmdline).replace('\0', " ")
            ))
        })
        .collect()
}

/// A container that runs `sh -c 'sleep 3600'` (two processes: `sh` and its child `sleep`),
/// marked with `value`.
fn marked_sleeper(value: &str) -> Value {
    json!({
        "name": "main",
        "image": "busybox",
        "command": ["sh", "-c", "sleep 3600"],
        "env": [{"name": MARKER, "value": value}],
    })
}

/// Waits until the pod's `sleep`, the child of its `sh`, runs.
async fn wait_for_sleep(value: &str) {
    wait_for_process(&format!("{MARKER}={value}"), "sleep 3600").await;
}

/// Waits until a process whose environment holds `needle` runs `command`.
async fn wait_for_process(needle: &str, command: &str) {
    let deadline = Instant::now() + GONE_WITHIN;
    let running = format!(": {command} ");
    while !processes_with(needle).iter().any(|p| p.contains(&running)) {
        assert!(
            Instant::now() < deadline,
            "{command} did not start: {:?}",
            processes_with(needle)
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until no process carries the marker, failing the test with those left.
async fn assert_all_gone(value: &str, what: &str) {
    assert_none_with(&format!("{MARKER}={value}"), what).await;
}

/// Waits until no process has `needle` in its environment, failing the test with those left.
async fn assert_none_with(needle: &str, what: &str) {
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let left = processes_with(needle);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: pod processes still run {GONE_WITHIN:?} later: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The pid of the server running on `data_dir`, from the lock it holds there.
fn server_pid(data_dir: &Path) -> u32 {
    std::fs::read_to_string(data_dir.join("testenv.lock"))
        .expect("the server's lock file")
        .trim()
        .parse()
        .expect("the server's pid in its lock file")
}

fn kill_9(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .expect("running kill");
    assert!(status.success(), "kill -KILL {pid}");
}

/// A server killed with SIGKILL runs no code on its way out; its pods' processes (the command
/// and what it started) must still end with it, rather than run on the machine for an hour.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_leaves_no_pod_process_behind() {
    let value = marker("killed-server");
    let env = TestEnv::builder()
        .start()
        .await
        .unwrap_or_else(|e| panic!("starting an apiserver of this test's own: {e}"));
    ready_pod(&env, "default", "sleeper", marked_sleeper(&value)).await;
    wait_for_sleep(&value).await;
    kill_9(server_pid(env.data_dir()));
    assert_all_gone(&value, "after kill -9 of the server").await;
    // Dropping `env` removes the temporary data directory of the dead server.
    let data_dir = env.data_dir().to_path_buf();
    drop(env);
    assert!(!data_dir.exists(), "{} is left", data_dir.display());
}

/// Set in the child process of
/// [`a_killed_test_process_leaves_no_server_and_no_pod_process_behind`]: its marker.
const KILLED_TEST_CHILD: &str = "KCLIENT_TESTENV_IT_KILLED_TEST_CHILD";

/// A test process killed while its server runs pods (a harness's timeout, `kill -9`): the
/// server ends (its stdin closes) and takes its pods' processes and its temporary data
/// directory along.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_test_process_leaves_no_server_and_no_pod_process_behind() {
    if let Some(value) = std::env::var_os(KILLED_TEST_CHILD) {
        // The child: a server with a running pod, until the parent kills this process.
        let value = value.to_string_lossy().into_owned();
        let env = TestEnv::builder()
            .start()
            .await
            .unwrap_or_else(|e| panic!("starting the child's apiserver: {e}"));
        ready_pod(&env, "default", "sleeper", marked_sleeper(&value)).await;
        std::future::pending::<()>().await;
        return;
    }
    let value = marker("killed-test");
    let dir = std::env::temp_dir().join(format!(
        "kclient-testenv-killed-test-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut child = crate::child_test(
        "leaks::a_killed_test_process_leaves_no_server_and_no_pod_process_behind",
    )
    .env(KILLED_TEST_CHILD, &value)
    .env("TMPDIR", &tmp)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let waited = tokio::time::timeout(
        Duration::from_secs(600),
        wait_for_sleep_or_exit(&value, &mut child),
    )
    .await;
    assert!(
        waited.is_ok(),
        "the child's pod did not start within 10 minutes"
    );
    let data_dirs: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(data_dirs.len(), 1, "{data_dirs:?}");
    let server = server_pid(&data_dirs[0]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_all_gone(&value, "after kill -9 of the test process").await;
    let deadline = Instant::now() + Duration::from_secs(90);
    while Path::new(&format!("/proc/{server}")).exists() {
        assert!(
            Instant::now() < deadline,
            "the server (pid {server}) of the killed test process still runs"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let left: Vec<PathBuf> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Waits for the marked pod's `sleep`, failing if the child test process exits first.
async fn wait_for_sleep_or_exit(value: &str, child: &mut std::process::Child) {
    while !marked_processes(value)
        .iter()
        .any(|p| p.contains(": sleep 3600"))
    {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the child test process exited ({status}) before its pod ran");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Set in the child process of
/// [`a_test_process_killed_during_the_build_leaves_no_partial_binary_behind`]: the cache
/// directory it builds into.
const KILLED_BUILD_CACHE: &str = "KCLIENT_TESTENV_IT_KILLED_BUILD_CACHE";
/// ... and the stand-in Go command it builds with.
const KILLED_BUILD_GO: &str = "KCLIENT_TESTENV_IT_KILLED_BUILD_GO";

/// Writes an executable shell script.
fn script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// The unfinished build outputs (`testenv.tmp-<pid>`) beside the cached binary.
fn partial_binaries(cache: &Path) -> Vec<PathBuf> {
    let key_dir = kclient_testenv::cached_binary_path(cache)
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::read_dir(key_dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().path())
                .filter(|path| {
                    path.file_name()
                        .and_then(|name| name.to_str())
                        .is_some_and(|name| name.starts_with("testenv.tmp"))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// A test process killed during the first `go build` (`kill -9`, a harness's timeout) leaves
/// the build's output under a temporary name in the binary cache: the `go` command it ran
/// finishes on its own and writes it after the test process is gone (120 MB per killed run).
/// The next start removes it, whether it then builds or finds the binary cached.
#[tokio::test]
async fn a_test_process_killed_during_the_build_leaves_no_partial_binary_behind() {
    if let (Some(cache), Some(go)) = (
        std::env::var_os(KILLED_BUILD_CACHE),
        std::env::var_os(KILLED_BUILD_GO),
    ) {
        // The child: build, until the parent kills this process during the build.
        let _ = TestEnv::builder()
            .cache_dir(PathBuf::from(cache))
            .go(PathBuf::from(go))
            .start()
            .await;
        std::future::pending::<()>().await;
        return;
    }
    let dir = std::env::temp_dir().join(format!(
        "kclient-testenv-killed-build-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cache = dir.join("cache");
    // A stand-in Go that says it started, waits to be released, then writes a server that
    // exits at once (as the real one finishes a build its parent no longer waits for).
    let (started, release, done) = (dir.join("started"), dir.join("release"), dir.join("done"));
    let orphan_go = dir.join("orphan-go");
    let write_output = "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n\
                        printf '#!/bin/sh\\nexit 3\\n' > \"$out\" && chmod +x \"$out\"\n";
    script(
        &orphan_go,
        &format!(
            "#!/bin/sh\n: > '{started}'\n\
             while [ ! -e '{release}' ]; do sleep 0.05; done\n\
             {write_output}: > '{done}'\n",
            started = started.display(),
            release = release.display(),
            done = done.display(),
        ),
    );
    let go = dir.join("go");
    script(&go, &format!("#!/bin/sh\n{write_output}"));
    let mut child = crate::child_test(
        "leaks::a_test_process_killed_during_the_build_leaves_no_partial_binary_behind",
    )
    .env(KILLED_BUILD_CACHE, &cache)
    .env(KILLED_BUILD_GO, &orphan_go)
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::null())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !started.exists() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the child test process exited ({status}) before its build");
        }
        assert!(Instant::now() < deadline, "the child's build did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap();
    child.wait().unwrap();
    std::fs::write(&release, "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !done.exists() {
        assert!(
            Instant::now() < deadline,
            "the orphaned build did not finish"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        partial_binaries(&cache).len(),
        1,
        "the orphaned build wrote its output"
    );

    // The next start builds, and takes the killed run's output away.
    let err = TestEnv::builder()
        .cache_dir(&cache)
        .go(&go)
        .start()
        .await
        .expect_err("the stand-in server exits");
    let kclient_testenv::TestEnvError::Exited { log, .. } = &err else {
        panic!("expected the built stand-in to run and exit, got {err}");
    };
    std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
    assert!(kclient_testenv::cached_binary_path(&cache).is_file());
    assert_eq!(
        partial_binaries(&cache),
        Vec::<PathBuf>::new(),
        "after a build"
    );

    // An orphaned build that finishes after that is removed by a start that finds the binary.
    let dead = {
        let mut exited = std::process::Command::new("true").spawn().unwrap();
        exited.wait().unwrap();
        exited.id()
    };
    let key_dir = kclient_testenv::cached_binary_path(&cache)
        .parent()
        .unwrap()
        .to_path_buf();
    std::fs::write(key_dir.join(format!("testenv.tmp-{dead}")), "partial").unwrap();
    let err = TestEnv::builder()
        .cache_dir(&cache)
        .go(&go)
        .start()
        .await
        .expect_err("the stand-in server exits");
    if let kclient_testenv::TestEnvError::Exited { log, .. } = &err {
        std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
    }
    assert_eq!(
        partial_binaries(&cache),
        Vec::<PathBuf>::new(),
        "after a start with the binary cached"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The server this test binary starts for the tests that need one but do not kill it.
async fn own_env() -> TestEnv {
    TestEnv::builder()
        .start_shared()
        .await
        .unwrap_or_else(|e| panic!("starting this test binary's own apiserver: {e}"))
}

/// A command exec'd in a pod (`kubectl exec POD -- sh -c 'sleep 3601'`) whose client went away
/// runs on, as on a kubelet, but not past its pod: deleting the pod stops its container and
/// everything running in it, as a container runtime does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_pod_leaves_no_exec_d_process_behind() {
    let env = own_env().await;
    let ns = env.namespace().await;
    let pod = ready_pod(&env, ns.name(), "exec", marked_sleeper("unused")).await;
    let uid = pod["metadata"]["uid"].as_str().expect("the pod's uid");
    // Every process of the pod, exec'd ones too, has the container's directory as HOME.
    let home = container_home(&env, uid);
    let mut kubectl = tokio::process::Command::new("kubectl")
        .env("KUBECONFIG", env.kubeconfig_path(Identity::Admin))
        .args(["--namespace", ns.name(), "exec", "exec", "--"])
        .args(["sh", "-c", "sleep 3601"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("kubectl is installed and on PATH");
    wait_for_process(&home, "sleep 3601").await;
    kubectl.kill().await.expect("stopping kubectl");
    let _: Value = env
        .client(Identity::Admin)
        .delete()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("pods")
        .name("exec")
        .send()
        .await
        .expect("delete the pod");
    assert_none_with(&home, "after the pod was deleted").await;
}

/// The pids of the running processes whose environment holds `needle` and whose command line
/// is `command`.
fn pids_running(needle: &str, command: &str) -> Vec<u32> {
    let running = format!(": {command} ");
    processes_with(needle)
        .iter()
        .filter(|p| p.contains(&running))
        .filter_map(|p| p.split_once(':')?.0.parse().ok())
        .collect()
}

/// The session id of process `pid` (the sixth field of its stat).
fn session_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()
}

/// Whether process `pid` still runs `command` (not gone, not a zombie, not another process
/// under a reused id).
fn still_runs(pid: u32, command: &str) -> bool {
    let dir = PathBuf::from(format!("/proc/{pid}"));
    let Ok(stat) = std::fs::read_to_string(dir.join("stat")) else {
        return false;
    };
    let zombie = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().next())
        == Some("Z");
    let cmdline = std::fs::read(dir.join("cmdline")).unwrap_or_default();
    !zombie
        && String::from_utf8_lossy(&cmdline)
            .replace('\0', " ")
            .trim_end()
            == command
}

/// What an exec'd command leaves running after it exits (`sh -c 'sleep 1000 &'`: a child in
/// its process group), and a process that left its group for a session of its own (`setsid`),
/// run in the container as on a kubelet, until the pod is deleted: then they end with it, as
/// every process in a container ends with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_pod_leaves_no_background_or_setsid_process_of_an_exec_behind() {
    let env = own_env().await;
    let ns = env.namespace().await;
    let pod = ready_pod(&env, ns.name(), "leftovers", marked_sleeper("unused")).await;
    let uid = pod["metadata"]["uid"].as_str().expect("the pod's uid");
    // Every process of the pod, exec'd ones too, has the container's directory as HOME.
    let home = container_home(&env, uid);
    // Each exec returns at once: what it leaves running holds none of its output.
    exec_ok(&env, ns.name(), "leftovers", "sleep 1000 >/dev/null 2>&1 &").await;
    // `setsid`, run by the exec'd shell as the leader of its process group, forks a child that
    // makes a session of its own and runs `sleep`; the exec ends with its parent.
    exec_ok(
        &env,
        ns.name(),
        "leftovers",
        "exec setsid sleep 1001 >/dev/null 2>&1",
    )
    .await;
    let background = the_process(&home, "sleep 1000").await;
    let own_session = the_process(&home, "sleep 1001").await;
    assert_eq!(
        session_of(own_session),
        Some(own_session),
        "setsid's sleep leads a session of its own"
    );
    let _: Value = env
        .client(Identity::Admin)
        .delete()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("pods")
        .name("leftovers")
        .send()
        .await
        .expect("delete the pod");
    for (pid, command) in [(background, "sleep 1000"), (own_session, "sleep 1001")] {
        assert_ends(pid, command, "after its pod was deleted").await;
    }
}

/// A container ends when its main process exits, as in a container runtime, even though a
/// process it started in the background still holds its output: `sh -c 'sleep 3602 & exit 3'`
/// is terminated with exit code 3 at once, and its `sleep` is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_ends_with_its_main_process() {
    let env = own_env().await;
    let ns = env.namespace().await;
    let value = marker("main-exits");
    let client = env.client(Identity::Admin);
    let _: Value = client
        .post()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("pods")
        .json(&json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "background"},
            "spec": {
                "restartPolicy": "Never",
                "containers": [{
                    "name": "main",
                    "image": "busybox",
                    "command": ["sh", "-c", "sleep 3602 & exit 3"],
                    "env": [{"name": MARKER, "value": value}],
                }],
            },
        }))
        .send()
        .await
        .expect("create the pod");
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let pod: Value = client
            .get()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("pods")
            .name("background")
            .send()
            .await
            .expect("read the pod");
        let state = &pod["status"]["containerStatuses"][0]["state"];
        if state["terminated"].is_object() {
            assert_eq!(state["terminated"]["exitCode"], 3, "{state}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the container is not terminated {GONE_WITHIN:?} after its main process exited: {state}; processes: {:?}",
            marked_processes(&value)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_all_gone(&value, "after the container's main process exited").await;
}

/// Set in the child process of
/// [`a_start_removes_the_temporary_data_directory_of_a_killed_test_process`]: the stand-in
/// server binary it starts.
const STALE_DIR_CHILD_BINARY: &str = "KCLIENT_TESTENV_IT_STALE_DIR_CHILD_BINARY";

/// A test process killed together with its server (a harness that SIGKILLs the test's whole
/// process group after its grace, as cargo-nextest does on a timeout) leaves the server's
/// temporary data directory (etcd's files: tens of MB) in the temporary directory: neither
/// process lived to delete it. The next start deletes such a directory, once its creator is
/// dead and no server holds it; a directory of a live process, or one a server holds, stays.
#[tokio::test]
async fn a_start_removes_the_temporary_data_directory_of_a_killed_test_process() {
    if let Some(binary) = std::env::var_os(STALE_DIR_CHILD_BINARY) {
        // The child: a start in the parent's temporary directory.
        let err = TestEnv::builder()
            .binary(PathBuf::from(binary))
            .start()
            .await
            .expect_err("the stand-in server exits");
        let kclient_testenv::TestEnvError::Exited { log, .. } = &err else {
            panic!("expected the stand-in to run and exit, got {err}");
        };
        std::fs::remove_dir_all(log.parent().unwrap()).unwrap();
        return;
    }
    let dir =
        std::env::temp_dir().join(format!("kclient-testenv-stale-dirs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let binary = dir.join("testenv");
    script(&binary, "#!/bin/sh\nexit 3\n");
    let dead = {
        let mut exited = std::process::Command::new("true").spawn().unwrap();
        exited.wait().unwrap();
        exited.id()
    };
    let data_dir = |pid: u32| {
        let path = tmp.join(format!(
            "kclient-testenv-{pid}-0-{:016x}",
            rand::random::<u64>()
        ));
        std::fs::create_dir_all(path.join("etcd")).unwrap();
        std::fs::write(path.join("etcd").join("db"), "data").unwrap();
        std::fs::write(path.join("testenv.lock"), format!("{pid}\n")).unwrap();
        path
    };
    let stale = data_dir(dead);
    // A live process's directory (this one's), and a dead one's that a server still holds.
    let live = data_dir(std::process::id());
    // No process has an id above 2^22 (Linux's PID_MAX_LIMIT).
    let held = data_dir(4_194_305);
    let lock = std::fs::File::options()
        .write(true)
        .open(held.join("testenv.lock"))
        .unwrap();
    lock.lock().unwrap();
    let output = crate::child_test(
        "leaks::a_start_removes_the_temporary_data_directory_of_a_killed_test_process",
    )
    .env(STALE_DIR_CHILD_BINARY, &binary)
    .env("TMPDIR", &tmp)
    .output()
    .unwrap();
    assert!(
        output.status.success(),
        "the child test process failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!stale.exists(), "{} is left", stale.display());
    assert!(
        live.join("etcd/db").is_file(),
        "a live process's directory stays"
    );
    assert!(held.join("etcd/db").is_file(), "a held directory stays");
    drop(lock);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The environment entry `HOME=<dir>` that every process of container `main` of the pod with
/// `uid` has, its command's and exec'd commands' alike: the container's directory.
fn container_home(env: &TestEnv, uid: &str) -> String {
    format!("HOME={}", container_dir(env, uid).display())
}

/// The working directory of container `main` of the pod with `uid`.
fn container_dir(env: &TestEnv, uid: &str) -> PathBuf {
    env.data_dir().join("kubelet/pods").join(uid).join("main")
}

/// Runs `sh -c script` in container `main` of `pod` with `kubectl exec`, once, expecting exit
/// code 0.
///
/// Once: these scripts leave processes running, so a second run (what [`crate::pods::run`]
/// does after kubectl lost output to its own race) would leave two, and the tests count them.
/// They read no output, which is all that race loses.
async fn exec_ok(env: &TestEnv, namespace: &str, pod: &str, script: &str) {
    let mut command = crate::pods::kubectl_exec(env, namespace, pod, false);
    command.args(["sh", "-c", script]);
    let (code, _, stderr) = crate::pods::run_once(&mut command, None).await;
    assert_eq!(code, 0, "{script}: {stderr}");
}

/// Waits until process `pid` no longer runs `command`, failing the test after [`GONE_WITHIN`].
async fn assert_ends(pid: u32, command: &str, what: &str) {
    let deadline = Instant::now() + GONE_WITHIN;
    while still_runs(pid, command) {
        assert!(
            Instant::now() < deadline,
            "{command} (pid {pid}) still runs {GONE_WITHIN:?} {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The one process whose environment holds `needle` and that runs `command`, once it runs.
async fn the_process(needle: &str, command: &str) -> u32 {
    wait_for_process(needle, command).await;
    let pids = pids_running(needle, command);
    assert_eq!(pids.len(), 1, "{command}: {:?}", processes_with(needle));
    pids[0]
}

/// A server killed with SIGKILL runs no code on its way out, and its reaper knows only the
/// process groups of containers and of commands still exec'd: what an exec'd command left
/// running after it exited (`sh -c 'sleep 1010 &'`) and what left its process group
/// (`setsid`) must still end with the server, as they end with their pod.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_leaves_no_leftover_of_an_exec_behind() {
    let env = TestEnv::builder()
        .start()
        .await
        .unwrap_or_else(|e| panic!("starting an apiserver of this test's own: {e}"));
    let pod = ready_pod(&env, "default", "leftovers", marked_sleeper("unused")).await;
    let uid = pod["metadata"]["uid"].as_str().expect("the pod's uid");
    let home = container_home(&env, uid);
    exec_ok(&env, "default", "leftovers", "sleep 1010 >/dev/null 2>&1 &").await;
    exec_ok(
        &env,
        "default",
        "leftovers",
        "exec setsid sleep 1011 >/dev/null 2>&1",
    )
    .await;
    let background = the_process(&home, "sleep 1010").await;
    let own_session = the_process(&home, "sleep 1011").await;
    assert_eq!(session_of(own_session), Some(own_session));
    kill_9(server_pid(env.data_dir()));
    assert_ends(background, "sleep 1010", "after kill -9 of the server").await;
    assert_ends(own_session, "sleep 1011", "after kill -9 of the server").await;
}

/// A container's processes end with its main process, as in a container runtime (a real one
/// kills the container's cgroup, or its PID namespace ends with its init): also those that
/// left the main process's group (`setsid`) and what an exec'd command left running. A
/// restarted container (restartPolicy OnFailure after exit code 3) starts only once they are
/// gone, and what its new run starts is left alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_s_processes_end_with_its_main_process_before_it_restarts() {
    let env = own_env().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    // The first run leaves `sleep 3603` in a session of its own and exits 3 once told to (the
    // file `go`); the second one starts `sleep 3605` the same way and runs `sleep 3604`.
    let script = "if [ -e ran ]; then setsid sleep 3605 >/dev/null 2>&1 & exec sleep 3604; fi\n\
                  : > ran\n\
                  setsid sleep 3603 >/dev/null 2>&1 &\n\
                  until [ -e go ]; do sleep 0.05; done\n\
                  exit 3\n";
    let pod: Value = client
        .post()
        .group_version("", "v1")
        .namespace(ns.name())
        .resource("pods")
        .json(&json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "restarts"},
            "spec": {
                "restartPolicy": "OnFailure",
                "containers": [{
                    "name": "main",
                    "image": "busybox",
                    "command": ["sh", "-c", script],
                }],
            },
        }))
        .send()
        .await
        .expect("create the pod");
    let uid = pod["metadata"]["uid"].as_str().expect("the pod's uid");
    let home = container_home(&env, uid);
    let first_run = the_process(&home, "sleep 3603").await;
    assert_eq!(session_of(first_run), Some(first_run));
    exec_ok(
        &env,
        ns.name(),
        "restarts",
        "exec setsid sleep 3606 >/dev/null 2>&1",
    )
    .await;
    let exec_d = the_process(&home, "sleep 3606").await;
    std::fs::write(container_dir(&env, uid).join("go"), "").unwrap();
    let deadline = Instant::now() + GONE_WITHIN;
    loop {
        let pod: Value = client
            .get()
            .group_version("", "v1")
            .namespace(ns.name())
            .resource("pods")
            .name("restarts")
            .send()
            .await
            .expect("read the pod");
        let status = &pod["status"]["containerStatuses"][0];
        if status["restartCount"] == 1 && status["state"]["running"].is_object() {
            assert_eq!(status["lastState"]["terminated"]["exitCode"], 3, "{status}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the container did not restart within {GONE_WITHIN:?}: {status}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let second_run = the_process(&home, "sleep 3605").await;
    let main = the_process(&home, "sleep 3604").await;
    assert_ends(
        first_run,
        "sleep 3603",
        "after the first run's main process exited",
    )
    .await;
    assert_ends(
        exec_d,
        "sleep 3606",
        "after the first run's main process exited",
    )
    .await;
    assert!(
        still_runs(second_run, "sleep 3605") && still_runs(main, "sleep 3604"),
        "the second run's processes run: {:?}",
        processes_with(&home)
    );
}
