//! A testenv server process started by [`TestEnvBuilder::start`](crate::TestEnvBuilder::start):
//! spawning it, waiting for its ready line, and stopping it.
//!
//! The process runs with `--exit-with-stdin`: its stdin is a pipe this process holds, so closing
//! it (stop, drop, or this process ending in any way) shuts the server down, and nothing is left
//! running after a test binary exits, even one that never dropped its environment (a shared
//! `static`) or was killed. It also runs with `--remove-data-dir` when the data directory was
//! created here, so a temporary directory (with the log in it) does not outlive a clean stop,
//! nor this process ending while the server starts (the server takes a stop before it is ready
//! as a clean one); after a failed start it stays, and the error names the log in it (for a
//! start that timed out, this process writes to the server's stdin before closing it, which
//! asks it to keep the directory), unless the binary could not be run at all (then the log is
//! empty and the directory goes).
//!
//! A running server locks its data directory (`testenv.lock`), and a start claims it
//! (`testenv.start.lock`) from before it writes there until its server is ready or gone: a
//! start on a directory in use, or on one another start is starting a server on, fails with
//! [`TestEnvError::DataDirInUse`] before anything in it is touched. The server binary run
//! without `--start-claimed` (by `scripts/testenv up`, or by hand) takes the start lock too
//! while it takes `testenv.lock`, and refuses a directory a start has claimed; the binary
//! started here gets `--start-claimed`, its start lock being held here.
//!
//! `std::process` rather than `tokio::process`: a shared server outlives the runtime of the
//! test that started it.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::TestEnvError;
use crate::server_binary::last_lines;

/// How long a stop waits for a graceful shutdown before killing the process.
const STOP_GRACE: Duration = Duration::from_secs(30);

/// What to start.
#[derive(Debug)]
pub(crate) struct Launch {
    pub(crate) binary: PathBuf,
    pub(crate) data_dir: PathBuf,
    pub(crate) remove_data_dir: bool,
    pub(crate) port: Option<u16>,
    pub(crate) compaction: Duration,
    pub(crate) controllers: bool,
    pub(crate) nodes: u32,
    pub(crate) runtime_config: Option<String>,
    pub(crate) timeout: Duration,
}

/// A running server process. Dropping it stops the server.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    running: Mutex<Option<Running>>,
    data_dir: PathBuf,
    remove_data_dir: bool,
    log: PathBuf,
    pid: u32,
}

#[derive(Debug)]
struct Running {
    child: Child,
    stdin: ChildStdin,
}

impl ServerProcess {
    /// Starts the server and waits until it prints its ready line.
    pub(crate) async fn start(launch: Launch) -> Result<ServerProcess, TestEnvError> {
        std::fs::create_dir_all(&launch.data_dir)
            .map_err(|e| TestEnvError::io(format!("creating {}", launch.data_dir.display()), e))?;
        let (data_dir, remove_data_dir) = (launch.data_dir.clone(), launch.remove_data_dir);
        ServerProcess::spawn(launch).await.inspect_err(|e| {
            // Until the process ran, the log is empty and the error does not name it: a
            // temporary directory goes (one it ran in stays, for its log).
            if remove_data_dir
                && !matches!(
                    e,
                    TestEnvError::NotReady { .. } | TestEnvError::Exited { .. }
                )
            {
                let _ = std::fs::remove_dir_all(&data_dir);
            }
        })
    }

    /// Spawns the server in the existing data directory and waits for its ready line.
    async fn spawn(launch: Launch) -> Result<ServerProcess, TestEnvError> {
        // Before the log is created (truncating the log of a server running or starting
        // there). Held until the server is ready or gone: its own lock (which the server checks
        // too) is taken only some time after the spawn, and another start in that time would
        // pass the check below and truncate this one's log. This says so as a typed error
        // rather than as a log tail.
        let claim = claim_data_dir(&launch.data_dir)?;
        check_not_in_use(&launch.data_dir)?;
        // In the data directory: a temporary one takes it along when it is deleted, and one
        // kept after a failed start keeps it for inspection.
        let log = launch.data_dir.join("testenv.log");
        let out = File::create(&log)
            .map_err(|e| TestEnvError::io(format!("creating {}", log.display()), e))?;
        let err = out
            .try_clone()
            .map_err(|e| TestEnvError::io(format!("opening {}", log.display()), e))?;
        let mut command = Command::new(&launch.binary);
        command
            .arg("--data-dir")
            .arg(&launch.data_dir)
            .arg("--etcd-compaction-interval")
            .arg(format!("{}s", launch.compaction.as_secs().max(1)))
            .arg(format!("--controllers={}", launch.controllers))
            .arg(format!("--nodes={}", launch.nodes))
            .arg("--exit-with-stdin")
            // This process holds the start lock for it (a server run without the flag takes
            // it, and would find it taken).
            .arg("--start-claimed");
        if launch.remove_data_dir {
            command.arg("--remove-data-dir");
        }
        if let Some(port) = launch.port {
            command.arg("--secure-port").arg(port.to_string());
        }
        if let Some(config) = &launch.runtime_config {
            command.arg(format!("--runtime-config={config}"));
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(out)
            .stderr(err)
            .spawn()
            .map_err(|e| TestEnvError::io(format!("starting {}", launch.binary.display()), e))?;
        let Some(stdin) = child.stdin.take() else {
            let _ = child.kill();
            return Err(TestEnvError::io(
                "the server's stdin",
                std::io::ErrorKind::BrokenPipe.into(),
            ));
        };
        claim.name_server(child.id());
        let mut server = ServerProcess {
            pid: child.id(),
            running: Mutex::new(Some(Running { child, stdin })),
            data_dir: launch.data_dir,
            remove_data_dir: launch.remove_data_dir,
            log,
        };
        if let Err(e) = server.wait_ready(launch.timeout, launch.port).await {
            // The error names the log in the data directory: keep it when dropping the server.
            server.remove_data_dir = false;
            return Err(e);
        }
        // Ready: the server holds its own lock now, until it ends.
        drop(claim);
        Ok(server)
    }

    /// Waits for the ready line. A server given `port` that exits because the port is taken
    /// (another process took it after the builder's check, during a build, say) is
    /// [`TestEnvError::PortInUse`], as a port taken before the check is.
    async fn wait_ready(&self, timeout: Duration, port: Option<u16>) -> Result<(), TestEnvError> {
        // A timeout past what the clock can represent waits without one.
        let deadline = Instant::now().checked_add(timeout);
        loop {
            let text = std::fs::read_to_string(&self.log).unwrap_or_default();
            if text.lines().any(|line| line.starts_with("READY ")) {
                return Ok(());
            }
            let exited = {
                let mut running = self.running.lock();
                match running.as_mut().map(|r| r.child.try_wait()) {
                    Some(Ok(Some(status))) => Some(status.to_string()),
                    Some(Ok(None)) => None,
                    Some(Err(e)) => Some(format!("unknown: {e}")),
                    None => Some("stopped".to_string()),
                }
            };
            if let Some(status) = exited {
                self.stop_keeping_data();
                let text = std::fs::read_to_string(&self.log).unwrap_or_default();
                if let Some(port) = port
                    && text.contains(&port_in_use_message(port))
                {
                    return Err(TestEnvError::PortInUse { port });
                }
                return Err(TestEnvError::Exited {
                    status,
                    tail: last_lines(&text, 30),
                    log: self.log.clone(),
                });
            }
            if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                self.stop_keeping_data();
                return Err(TestEnvError::NotReady {
                    timeout,
                    tail: last_lines(&text, 30),
                    log: self.log.clone(),
                });
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }

    /// The server's log file.
    pub(crate) fn log(&self) -> &Path {
        &self.log
    }

    /// Whether the process is still running.
    pub(crate) fn is_running(&self) -> bool {
        let mut running = self.running.lock();
        matches!(running.as_mut().map(|r| r.child.try_wait()), Some(Ok(None)))
    }

    /// Stops the server: closes its stdin, waits up to [`STOP_GRACE`] for it to exit, then
    /// kills it. Idempotent. Blocks the calling thread.
    pub(crate) fn stop_blocking(&self) -> Option<std::process::ExitStatus> {
        let status = self.stop(false);
        if self.remove_data_dir {
            // The server removes it on a clean exit; this covers a kill.
            let _ = std::fs::remove_dir_all(&self.data_dir);
        }
        status
    }

    /// [`ServerProcess::stop_blocking`], keeping the data directory and the log in it that a
    /// start error names.
    fn stop_keeping_data(&self) -> Option<std::process::ExitStatus> {
        self.stop(true)
    }

    /// Closes the server's stdin, first asking it to keep its data directory if `keep` (any
    /// input does: a stop before it is ready otherwise removes a temporary one, as it must when
    /// this process ends while the server starts), and waits for it to exit.
    fn stop(&self, keep: bool) -> Option<std::process::ExitStatus> {
        let Running {
            mut child,
            mut stdin,
        } = self.running.lock().take()?;
        if keep {
            // A server that already exited cannot read it, and needs no telling.
            let _ = stdin.write_all(b"keep\n");
        }
        drop(stdin);
        let deadline = Instant::now() + STOP_GRACE;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50))
                }
                _ => {
                    let _ = child.kill();
                    break child.wait().ok();
                }
            }
        }
    }
}

/// What the server says when the port it was given (`--secure-port`) is taken
/// (`server/state.go`, `loadOrCreateState`).
fn port_in_use_message(port: u16) -> String {
    format!("port {port} on 127.0.0.1 is in use")
}

/// The lock a running server holds in its data directory (`server/state.go`).
const LOCK_FILE: &str = "testenv.lock";

/// The lock a start holds in the data directory from before it writes there until its server
/// is ready (and holds [`LOCK_FILE`]) or gone.
const START_LOCK_FILE: &str = "testenv.start.lock";

/// A start's claim on a data directory ([`START_LOCK_FILE`]); dropping it releases it.
#[derive(Debug)]
struct Claim {
    file: File,
}

impl Claim {
    /// Writes the pid of the server being started, for the message of a start that finds the
    /// directory claimed.
    fn name_server(&self, pid: u32) {
        let mut file = &self.file;
        let _ = file.set_len(0).and_then(|()| writeln!(file, "{pid}"));
    }
}

/// Claims `data_dir` for a start, failing with [`TestEnvError::DataDirInUse`] while another
/// start (in this process or another) holds it. The system releases it with its holder, so a
/// start that crashed does not count.
fn claim_data_dir(data_dir: &Path) -> Result<Claim, TestEnvError> {
    let path = data_dir.join(START_LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| TestEnvError::io(format!("opening {}", path.display()), e))?;
    match file.try_lock() {
        Ok(()) => {
            // No pid yet (a previous start's would mislead).
            let _ = file.set_len(0);
            Ok(Claim { file })
        }
        Err(std::fs::TryLockError::WouldBlock) => Err(TestEnvError::DataDirInUse {
            dir: data_dir.to_path_buf(),
            pid: read_pid(&path),
        }),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(TestEnvError::io(format!("locking {}", path.display()), e))
        }
    }
}

/// The pid a lock file names, if it names one.
fn read_pid(path: &Path) -> Option<u32> {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.trim().parse().ok())
}

/// Fails with [`TestEnvError::DataDirInUse`] when a server runs on `data_dir`: it holds the
/// lock file there (the system releases it with the process, so a crashed one does not count).
fn check_not_in_use(data_dir: &Path) -> Result<(), TestEnvError> {
    let path = data_dir.join(LOCK_FILE);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|e| TestEnvError::io(format!("opening {}", path.display()), e))?;
    match file.try_lock() {
        // Released when `file` is closed, before the server takes it.
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(TestEnvError::DataDirInUse {
            dir: data_dir.to_path_buf(),
            pid: read_pid(&path),
        }),
        Err(std::fs::TryLockError::Error(e)) => {
            Err(TestEnvError::io(format!("locking {}", path.display()), e))
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop_blocking();
    }
}
