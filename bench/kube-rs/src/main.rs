//! The kube-rs side of kclient's side-by-side benchmarks (see `../README.md`): heap bytes held
//! by a synced `kube::runtime::reflector` store of Pods and the time to sync it, and decode
//! speed of a Pod LIST into `k8s-openapi` types, counted by the same allocator as the kclient
//! side (`../common/alloc.rs`).
//!
//! ```text
//! kube-rs-bench informer NAMESPACE [--transform | --metadata | --mixed] [--streaming]
//! kube-rs-bench decode FILE [RUNS]
//! ```
//!
//! Each prints one JSON object per line for `bench/run` to tabulate. The cluster comes from
//! `KUBECONFIG`. With `--mixed` it runs one reflector per kind of the mixed fixture
//! (`../go/mixed.go`), measured together.

#[path = "../../common/alloc.rs"]
mod alloc;

use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Pod, Secret, Service};
use kube::core::{ObjectList, PartialObjectMeta};
use kube::runtime::reflector::Store;
use kube::runtime::{WatchStreamExt, reflector, watcher};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;
use serde_json::json;

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

type BoxError = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("informer") => {
            let namespace = args.get(1).ok_or("informer needs a namespace")?;
            let transform = args.iter().any(|a| a == "--transform");
            let streaming = args.iter().any(|a| a == "--streaming");
            if args.iter().any(|a| a == "--metadata") {
                return metadata_informer(namespace, streaming).await;
            }
            if args.iter().any(|a| a == "--mixed") {
                return mixed_informer(namespace, streaming).await;
            }
            informer(namespace, transform, streaming).await
        }
        Some("decode") => {
            let file = args.get(1).ok_or("decode needs a file")?;
            let runs = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
            decode(file, runs)
        }
        _ => Err("usage: kube-rs-bench informer NAMESPACE [--transform | --metadata | --mixed] [--streaming] | decode FILE [RUNS]".into()),
    }
}

/// Starts a reflector (watcher + store) on the namespace's Pods, waits until the store is
/// ready, and reports the heap it holds and the time it took.
async fn informer(namespace: &str, transform: bool, streaming: bool) -> Result<(), BoxError> {
    let api: Api<Pod> = Api::namespaced(Client::try_default().await?, namespace);
    let mode = if transform {
        "informer-transform"
    } else {
        "informer"
    };
    measure(api, streaming, mode, move |pod: &mut Pod| {
        if transform {
            pod.meta_mut().managed_fields = None;
        }
    })
    .await
}

/// As [`informer`], metadata only: kube 5 makes an `Api<PartialObjectMeta<K>>` ask for
/// `PartialObjectMetadata` (its replacement for the deprecated `metadata_watcher`).
async fn metadata_informer(namespace: &str, streaming: bool) -> Result<(), BoxError> {
    let api: Api<PartialObjectMeta<Pod>> = Api::namespaced(Client::try_default().await?, namespace);
    measure(api, streaming, "informer-metadata", |_| {}).await
}

/// As [`informer`], over the mixed fixture: one reflector per kind, started together and
/// measured once all their stores are ready.
async fn mixed_informer(namespace: &str, streaming: bool) -> Result<(), BoxError> {
    let client = Client::try_default().await?;
    let config = watcher_config(streaming);
    let before = alloc::live();
    let start = Instant::now();
    let (config_maps, t1) = spawn_reflector(
        Api::<ConfigMap>::namespaced(client.clone(), namespace),
        config.clone(),
        |_| {},
    );
    let (secrets, t2) = spawn_reflector(
        Api::<Secret>::namespaced(client.clone(), namespace),
        config.clone(),
        |_| {},
    );
    let (services, t3) = spawn_reflector(
        Api::<Service>::namespaced(client.clone(), namespace),
        config.clone(),
        |_| {},
    );
    let (deployments, t4) = spawn_reflector(
        Api::<Deployment>::namespaced(client.clone(), namespace),
        config.clone(),
        |_| {},
    );
    let (pods, t5) = spawn_reflector(Api::<Pod>::namespaced(client, namespace), config, |_| {});
    futures::try_join!(
        config_maps.wait_until_ready(),
        secrets.wait_until_ready(),
        services.wait_until_ready(),
        deployments.wait_until_ready(),
        pods.wait_until_ready(),
    )?;
    let sync_seconds = start.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let live_bytes = alloc::live() as i64 - before as i64;
    let objects = config_maps.state().len()
        + secrets.state().len()
        + services.state().len()
        + deployments.state().len()
        + pods.state().len();
    report(
        streaming,
        "informer-mixed",
        objects,
        live_bytes,
        sync_seconds,
    );
    for task in [t1, t2, t3, t4, t5] {
        task.abort();
    }
    Ok(())
}

/// The watcher configuration: paged LIST then watch, or a streaming list.
fn watcher_config(streaming: bool) -> watcher::Config {
    if streaming {
        watcher::Config::default().streaming_lists()
    } else {
        watcher::Config::default()
    }
}

/// Spawns a reflector over `api`, its objects passed through `modify`, and returns its store
/// and task.
fn spawn_reflector<K>(
    api: Api<K>,
    config: watcher::Config,
    modify: impl FnMut(&mut K) + Send + 'static,
) -> (Store<K>, tokio::task::JoinHandle<()>)
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone + Send + Sync,
{
    let (reader, writer) = reflector::store();
    let events = watcher(api, config).modify(modify);
    let task = tokio::spawn(reflector(writer, events).for_each(|_| async {}));
    (reader, task)
}

/// Prints one result line.
fn report(streaming: bool, mode: &str, objects: usize, live_bytes: i64, sync_seconds: f64) {
    let client = if streaming {
        "kube-rs (streaming list)"
    } else {
        "kube-rs"
    };
    println!(
        "{}",
        json!({
            "client": client, "mode": mode, "objects": objects,
            "live_bytes": live_bytes, "sync_seconds": sync_seconds,
        })
    );
}

/// Runs a reflector over `api` (its objects passed through `modify`), waits until the store is
/// ready, and prints the heap it holds and the time it took as one JSON line.
async fn measure<K>(
    api: Api<K>,
    streaming: bool,
    mode: &str,
    modify: impl FnMut(&mut K) + Send + 'static,
) -> Result<(), BoxError>
where
    K: Resource + Clone + DeserializeOwned + std::fmt::Debug + Send + Sync + 'static,
    K::DynamicType: Default + Eq + std::hash::Hash + Clone + Send + Sync,
{
    let before = alloc::live();
    let start = Instant::now();
    let (reader, task) = spawn_reflector(api, watcher_config(streaming), modify);
    reader.wait_until_ready().await?;
    let sync_seconds = start.elapsed().as_secs_f64();
    // Let the first watch settle (buffers of the initial list are dropped), then measure.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let live_bytes = alloc::live() as i64 - before as i64;
    let objects = reader.state().len();
    report(streaming, mode, objects, live_bytes, sync_seconds);
    task.abort();
    Ok(())
}

/// Decodes the PodList file into `ObjectList<Pod>` (what `Api::list` returns) `runs` times, as
/// kube-client decodes a body (checks UTF-8, then `serde_json::from_str`; it also copies the
/// body into a `String` first, which this leaves out), and reports the median speed and the heap
/// one decoded list holds.
fn decode(file: &str, runs: usize) -> Result<(), BoxError> {
    let data = std::fs::read(file)?;
    let mut secs = Vec::with_capacity(runs);
    let mut objects = 0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let list: ObjectList<Pod> = serde_json::from_str(std::str::from_utf8(&data)?)?;
        secs.push(start.elapsed().as_secs_f64());
        objects = list.items.len();
        drop(std::hint::black_box(list));
    }
    secs.sort_by(f64::total_cmp);
    let median = secs[secs.len() / 2];

    let before = alloc::live();
    let allocs = alloc::allocs();
    let list: ObjectList<Pod> = serde_json::from_str(std::str::from_utf8(&data)?)?;
    let live_bytes = alloc::live() as i64 - before as i64;
    let allocations = alloc::allocs() - allocs;
    drop(std::hint::black_box(list));

    println!(
        "{}",
        json!({
            "client": "kube-rs", "mode": "decode", "decoder": "k8s-openapi (serde_json)",
            "objects": objects, "json_bytes": data.len(), "live_bytes": live_bytes,
            "allocations": allocations, "median_seconds": median,
            "bytes_per_second": data.len() as f64 / median,
        })
    );
    Ok(())
}
