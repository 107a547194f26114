//! Leader election on a `coordination.k8s.io/v1` Lease, as replicated controllers use it so that
//! only one replica acts at a time.
//!
//! By default it runs three candidates in this one process, competing for the Lease
//! `leader-election-demo` in namespace `default`: one wins, leads for a few seconds and steps
//! down (releasing the Lease, so the next takes over at once instead of waiting out the lease
//! duration), and so on until each has led once. With `--identity NAME` it runs one candidate
//! until Ctrl-C: start it in two terminals and stop the leader to see the other take over.
//!
//! ```sh
//! cargo run -p kclient-examples --bin leader-election
//! cargo run -p kclient-examples --bin leader-election -- --identity alice   # and bob, elsewhere
//! ```

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use kclient::cache::CancellationToken;
use kclient::kubernetes::Clientset;
use kclient::rest::{Client, Config};
use kclient::tools::{LeaderCallbacks, LeaderElectionConfig, LeaderElector, LeaseLock};
use kclient_examples::error_chain;
use kclient_examples::outln;

const NAMESPACE: &str = "default";
const LEASE: &str = "leader-election-demo";
/// How long each leader of the in-process demo leads before stepping down.
const TERM: Duration = Duration::from_secs(3);

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let identity = match (args.next().as_deref(), args.next()) {
        (None, _) => None,
        (Some("--identity"), Some(identity)) => Some(identity),
        _ => {
            eprintln!("usage: leader-election [--identity NAME]");
            return ExitCode::from(2);
        }
    };
    let result = match identity {
        Some(identity) => run_one(identity).await,
        None => run_demo().await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("leader-election: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

/// A candidate with short durations so the demo moves quickly: a 6 s lease renewed every
/// second, given up if not renewed within 4 s.
fn elector(
    clientset: &Clientset,
    identity: &str,
    callbacks: LeaderCallbacks,
) -> Result<Arc<LeaderElector>, Box<dyn std::error::Error>> {
    let lock = LeaseLock::new(
        clientset.coordination_v1().leases(NAMESPACE),
        LEASE,
        identity,
    );
    let mut config = LeaderElectionConfig::new(lock, callbacks);
    config.lease_duration = Duration::from_secs(6);
    config.renew_deadline = Duration::from_secs(4);
    config.retry_period = Duration::from_secs(1);
    config.release_on_cancel = true;
    config.name = identity.to_owned();
    Ok(Arc::new(LeaderElector::new(config)?))
}

/// Three candidates in one process; each leader steps down after [`TERM`].
async fn run_demo() -> Result<(), Box<dyn std::error::Error>> {
    let clientset = Clientset::new(Client::new(Config::infer()?)?);
    let started = Instant::now();
    let stamp = move || format!("[{:>5.1} s]", started.elapsed().as_secs_f64());
    outln!("three candidates compete for Lease {NAMESPACE}/{LEASE}");

    let mut running = Vec::new();
    for name in ["alice", "bob", "carol"] {
        let cancel = CancellationToken::new();
        let identity = name.to_owned();
        let step_down = cancel.clone();
        let callbacks = LeaderCallbacks::new()
            .on_started_leading(move |leading: CancellationToken| {
                let (identity, step_down) = (identity.clone(), step_down.clone());
                async move {
                    outln!("{} {identity}: I lead; working for {TERM:?}", stamp());
                    tokio::select! {
                        () = tokio::time::sleep(TERM) => {
                            outln!("{} {identity}: stepping down, releasing the Lease", stamp());
                            step_down.cancel();
                        }
                        () = leading.cancelled() => {
                            outln!("{} {identity}: leadership lost", stamp());
                        }
                    }
                }
            })
            .on_stopped_leading({
                let name = name.to_owned();
                move || outln!("{} {name}: no longer competing", stamp())
            })
            .on_new_leader({
                let name = name.to_owned();
                move |leader: &str| {
                    if !leader.is_empty() && leader != name {
                        outln!("{} {name}: sees {leader} as the leader", stamp());
                    }
                }
            });
        let elector = elector(&clientset, name, callbacks)?;
        running.push(tokio::spawn(async move { elector.run(cancel).await }));
    }
    for task in running {
        task.await?;
    }
    outln!(
        "{} every candidate led once; done",
        format_args!("[{:>5.1} s]", started.elapsed().as_secs_f64())
    );
    Ok(())
}

/// One candidate that leads until Ctrl-C (or loses the Lease).
async fn run_one(identity: String) -> Result<(), Box<dyn std::error::Error>> {
    let clientset = Clientset::new(Client::new(Config::infer()?)?);
    let callbacks = LeaderCallbacks::new()
        .on_started_leading({
            let identity = identity.clone();
            move |leading: CancellationToken| {
                let identity = identity.clone();
                async move {
                    outln!("{identity}: I lead; the work would run here until Ctrl-C");
                    leading.cancelled().await;
                    outln!("{identity}: stopping the work");
                }
            }
        })
        .on_stopped_leading({
            let identity = identity.clone();
            move || outln!("{identity}: no longer leading")
        })
        .on_new_leader({
            let identity = identity.clone();
            move |leader: &str| {
                if leader.is_empty() {
                    outln!("{identity}: the Lease was released");
                } else if leader != identity {
                    outln!("{identity}: {leader} leads; waiting");
                }
            }
        });
    let elector = elector(&clientset, &identity, callbacks)?;
    let cancel = CancellationToken::new();
    tokio::spawn({
        let cancel = cancel.clone();
        async move {
            let _ = tokio::signal::ctrl_c().await;
            cancel.cancel();
        }
    });
    outln!("{identity}: competing for Lease {NAMESPACE}/{LEASE} (Ctrl-C to stop)");
    elector.run(cancel).await;
    Ok(())
}
