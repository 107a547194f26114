//! The kube-runtime side of the controller benchmark (see `../../controller/README.md`): a
//! `kube::runtime::Controller` for the benchmark's `Parent` custom resource (as a
//! `DynamicObject`: no Rust type is derived for it) that owns ConfigMaps, with 4 concurrent
//! reconciles and a reconcile that only records itself.
//!
//! ```text
//! kube-rs-controller-bench NAMESPACE PARENTS LOG
//! ```
//!
//! Output and log format are those of the kclient side: `{"event":"all_reconciled",...}` once
//! every Parent has been reconciled, then, after standard input closes, one line per reconcile
//! in LOG and `{"event":"done",...}`.

use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::watcher;
use kube::{Client, ResourceExt};

#[path = "../../../common/reconcile_log.rs"]
mod reconcile_log;

use reconcile_log::ReconcileLog;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The reconcile never fails; kube-runtime still asks for an error type.
#[derive(Debug)]
struct Never;

impl std::fmt::Display for Never {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("never")
    }
}

impl std::error::Error for Never {}

async fn reconcile(parent: Arc<DynamicObject>, log: Arc<ReconcileLog>) -> Result<Action, Never> {
    log.record(format!(
        "{}/{}",
        parent.namespace().unwrap_or_default(),
        parent.name_any()
    ));
    Ok(Action::await_change())
}

fn error_policy(_: Arc<DynamicObject>, _: &Never, _: Arc<ReconcileLog>) -> Action {
    Action::await_change()
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let started = Instant::now();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [namespace, parents, log_path] = args.as_slice() else {
        return Err("usage: kube-rs-controller-bench NAMESPACE PARENTS LOG".into());
    };
    let log = Arc::new(ReconcileLog::new(started, parents.parse()?));

    let client = Client::try_default().await?;
    let gvk = GroupVersionKind::gvk("bench.kclient.dev", "v1", "Parent");
    let resource = ApiResource::from_gvk_with_plural(&gvk, "parents");
    let parents: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    let config_maps: Api<ConfigMap> = Api::namespaced(client, namespace);

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    // Blocking stdin on its own thread: the runtime's threads stay free.
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        let _ = stop_tx.send(());
    });
    Controller::new_with(parents, watcher::Config::default(), resource)
        .owns(config_maps, watcher::Config::default())
        .with_config(ControllerConfig::default().concurrency(4))
        .graceful_shutdown_on(async {
            let _ = stop_rx.await;
        })
        .run(reconcile, error_policy, Arc::clone(&log))
        .for_each(|_| async {})
        .await;

    let reconciles = log.write(log_path)?;
    println!("{{\"event\":\"done\",\"reconciles\":{reconciles}}}");
    Ok(())
}
