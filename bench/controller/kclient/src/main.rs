//! The kclient side of the controller benchmark (see `bench/controller/README.md`): a
//! controller for the benchmark's `Parent` custom resource that owns ConfigMaps, with 4 workers
//! and a reconcile that only records itself.
//!
//! ```text
//! kclient-controller-bench [--owns-metadata | --owns-uncached] NAMESPACE PARENTS LOG
//! ```
//!
//! With `--owns-metadata` the ConfigMaps are watched and cached as metadata only
//! (`owns_metadata`, controller-runtime's `builder.OnlyMetadata`); with `--owns-uncached` their
//! metadata is watched and only each child's owner kept (`owns_uncached`, as kube-runtime's
//! `owns`); without either, whole (`owns`).
//!
//! It prints `{"event":"all_reconciled","seconds":S}` once every Parent has been reconciled
//! (seconds since the process started), runs until its standard input closes, then writes one
//! line per reconcile to LOG (`namespace/name unix-nanos`) and prints
//! `{"event":"done","reconciles":N}`. The cluster comes from `KUBECONFIG`; build with
//! `--release` to measure (`bench/controller/run` does).

use std::sync::Arc;
use std::time::Instant;

use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::ApiResource;
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::cache::CancellationToken;
use kclient::controller::{Action, ControllerBuilder};
use kclient::informers::SharedInformerFactory;
use kclient::kubernetes::custom_resource;
use kclient::rest::{Client, Config};
use serde::{Deserialize, Serialize};

#[path = "../../../common/reconcile_log.rs"]
mod reconcile_log;

use reconcile_log::ReconcileLog;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// The benchmark's custom resource (CRD `parents.bench.kclient.dev`, created by the Go
/// fixture tool's `setup`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct Parent {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: ParentSpec,
}

/// What a Parent says; the reconcile does not read it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
struct ParentSpec {
    #[serde(default)]
    size: i64,
    #[serde(default)]
    owner: String,
}

custom_resource!(Parent {
    group: "bench.kclient.dev",
    version: "v1",
    kind: "Parent",
    plural: "parents",
    singular: "parent",
    scope: Namespaced,
});

/// How the controller watches the children.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Owns {
    /// `owns`: whole ConfigMaps, cached.
    Whole,
    /// `owns_metadata`: their metadata, cached.
    Metadata,
    /// `owns_uncached`: their metadata, watched; only each one's owner kept.
    Uncached,
}

async fn reconcile(parent: Arc<Parent>, log: Arc<ReconcileLog>) -> Result<Action, BoxError> {
    let meta = &parent.metadata;
    log.record(format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    ));
    Ok(Action::done())
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let started = Instant::now();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let owns = match args.first().map(String::as_str) {
        Some("--owns-metadata") => Owns::Metadata,
        Some("--owns-uncached") => Owns::Uncached,
        _ => Owns::Whole,
    };
    if owns != Owns::Whole {
        args.remove(0);
    }
    let [namespace, parents, log_path] = args.as_slice() else {
        return Err(
            "usage: kclient-controller-bench [--owns-metadata | --owns-uncached] \
                    NAMESPACE PARENTS LOG"
                .into(),
        );
    };
    let log = Arc::new(ReconcileLog::new(started, parents.parse()?));

    let client = Client::new(Config::infer()?)?;
    let factory = SharedInformerFactory::new(client, std::time::Duration::ZERO)
        .with_namespace(namespace.as_str());
    let builder = ControllerBuilder::new("bench", &factory).for_::<Parent>();
    let builder = match owns {
        Owns::Whole => builder.owns::<ConfigMap>(),
        Owns::Metadata => builder.owns_metadata::<ConfigMap>(),
        Owns::Uncached => builder.owns_uncached::<ConfigMap>(),
    };
    let controller = builder.workers(4).reconcile(reconcile);
    factory.start();
    // Where the start-up time goes: when each cache synced, on standard error (the driver
    // reads standard output only), polled every 5 ms. `owns_uncached` has no children's cache.
    let parents_synced = factory.informer::<Parent>();
    let children_synced: Option<Box<dyn Fn() -> bool + Send>> = match owns {
        Owns::Whole => {
            let informer = factory.informer::<ConfigMap>();
            Some(Box::new(move || informer.has_synced()))
        }
        Owns::Metadata => {
            let informer = factory.metadata_informer(&ApiResource::of::<ConfigMap>());
            Some(Box::new(move || informer.has_synced()))
        }
        Owns::Uncached => None,
    };
    tokio::spawn(async move {
        // Nothing to report for a cache that does not exist.
        let (mut parents, mut children) = (false, children_synced.is_none());
        while !(parents && children) {
            for (done, synced, what) in [
                (&mut parents, parents_synced.has_synced(), "parents"),
                (
                    &mut children,
                    children_synced.as_ref().is_some_and(|f| f()),
                    "children",
                ),
            ] {
                if synced && !*done {
                    *done = true;
                    let seconds = started.elapsed().as_secs_f64();
                    eprintln!("{{\"event\":\"{what}_synced\",\"seconds\":{seconds:.3}}}");
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });

    let shutdown = CancellationToken::new();
    let stop = shutdown.clone();
    // Blocking stdin on its own thread: the runtime's threads stay free.
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
        stop.cancel();
    });
    controller.run(Arc::clone(&log), shutdown).await?;
    factory.shutdown().await;

    let reconciles = log.write(log_path)?;
    println!("{{\"event\":\"done\",\"reconciles\":{reconciles}}}");
    Ok(())
}
