//! The kclient side of the side-by-side benchmarks (see `bench/README.md`): heap bytes held by
//! a synced `SharedInformerFactory` Pod informer and the time to sync it, with and without a
//! transform that drops managedFields, over protobuf (the default of a client built with the
//! `protobuf` features, as client-go's) or JSON (`--json`), and decode speed of a Pod LIST into
//! `kclient-api` types, from JSON or protobuf. Heap is counted by the same allocator as the
//! kube-rs side (`bench/common/alloc.rs`). With `--mixed` the factory runs one informer per
//! kind of the mixed fixture (`bench/go/mixed.go`) and they are measured together.
//!
//! ```text
//! kclient-bench informer NAMESPACE [--json] [--transform | --metadata | --mixed]
//! kclient-bench decode FILE [RUNS] [--protobuf]
//! ```
//!
//! Each prints one JSON object per line for `bench/run` to tabulate. The cluster comes from
//! `KUBECONFIG`. Build with `--release` to measure; `bench/run` does.

#[path = "../../common/alloc.rs"]
mod alloc;

use std::time::{Duration, Instant};

use kclient_api::apps::v1::Deployment;
use kclient_api::core::v1::{ConfigMap, Pod, Secret, Service};
use kclient_apimachinery::ObjectList;
use kclient_informers::SharedInformerFactory;
use kclient_rest::{Client, Config, ContentType};
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
            let json = args.iter().any(|a| a == "--json");
            if args.iter().any(|a| a == "--metadata") {
                return metadata_informer(namespace, json).await;
            }
            if args.iter().any(|a| a == "--mixed") {
                return mixed_informer(namespace, json).await;
            }
            informer(namespace, transform, json).await
        }
        Some("decode") => {
            let file = args.get(1).ok_or("decode needs a file")?;
            let runs = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(5);
            if args.iter().any(|a| a == "--protobuf") {
                #[cfg(feature = "protobuf")]
                return decode_protobuf(file, runs);
                #[cfg(not(feature = "protobuf"))]
                return Err("decode --protobuf needs a build with --features protobuf".into());
            }
            decode(file, runs)
        }
        _ => Err(
            "usage: kclient-bench informer NAMESPACE [--json] [--transform | --metadata | --mixed] \
                  | decode FILE [RUNS] [--protobuf]"
                .into(),
        ),
    }
}

/// Starts the factory's Pod informer on the namespace, waits for sync, and reports the heap it
/// holds and the time it took.
async fn informer(namespace: &str, transform: bool, json: bool) -> Result<(), BoxError> {
    let factory = factory(namespace, json)?;
    let pods = factory.informer::<Pod>();
    if transform {
        pods.set_transform(|pod: &mut Pod| pod.metadata.managed_fields = None)?;
    }
    let mode = if transform {
        "informer-transform"
    } else {
        "informer"
    };
    measure(
        &factory,
        label(json),
        mode,
        || pods.has_synced(),
        || pods.get_store().list().len(),
    )
    .await
}

/// As [`informer`], with a metadata-only informer of the Pods (`PartialObjectMetadata`).
async fn metadata_informer(namespace: &str, json: bool) -> Result<(), BoxError> {
    let factory = factory(namespace, json)?;
    let pods = factory.metadata_informer(&kclient_apimachinery::ApiResource::of::<Pod>());
    measure(
        &factory,
        label(json),
        "informer-metadata",
        || pods.has_synced(),
        || pods.get_store().list().len(),
    )
    .await
}

/// As [`informer`], over the mixed fixture: one informer per kind, all from one factory.
async fn mixed_informer(namespace: &str, json: bool) -> Result<(), BoxError> {
    let factory = factory(namespace, json)?;
    let config_maps = factory.informer::<ConfigMap>();
    let secrets = factory.informer::<Secret>();
    let services = factory.informer::<Service>();
    let deployments = factory.informer::<Deployment>();
    let pods = factory.informer::<Pod>();
    let synced = || {
        config_maps.has_synced()
            && secrets.has_synced()
            && services.has_synced()
            && deployments.has_synced()
            && pods.has_synced()
    };
    measure(&factory, label(json), "informer-mixed", synced, || {
        config_maps.get_store().list().len()
            + secrets.get_store().list().len()
            + services.get_store().list().len()
            + deployments.get_store().list().len()
            + pods.get_store().list().len()
    })
    .await
}

/// A factory for the namespace on the cluster `KUBECONFIG` names, speaking JSON when `json`
/// (else protobuf, when built with the `protobuf` feature).
fn factory(namespace: &str, json: bool) -> Result<SharedInformerFactory, BoxError> {
    let mut config = Config::infer()?;
    if json {
        config.content_type = ContentType::Json;
    }
    let client = Client::new(config)?;
    Ok(SharedInformerFactory::new(client, Duration::ZERO).with_namespace(namespace))
}

/// The client's name in the results: protobuf is what a build with the feature speaks.
fn label(json: bool) -> &'static str {
    if json || cfg!(not(feature = "protobuf")) {
        "kclient"
    } else {
        "kclient (protobuf)"
    }
}

/// How often [`measure`] looks whether the informers have synced: the resolution of the sync
/// time, the same as bench/go's. Not `wait_for_cache_sync`, which looks every 100 ms, as
/// client-go's `WaitForCacheSync` does: at 5,000 Pods a sync takes about a second, so those
/// steps were a tenth of the figure.
const SYNC_POLL_PERIOD: Duration = Duration::from_millis(5);

/// Starts the factory's informers, waits until `synced` says they all have, and prints the
/// heap they hold and the time it took; `objects` counts what the measured informers cached.
async fn measure(
    factory: &SharedInformerFactory,
    client: &str,
    mode: &str,
    synced: impl Fn() -> bool,
    objects: impl Fn() -> usize,
) -> Result<(), BoxError> {
    let before = alloc::live();
    let start = Instant::now();
    factory.start();
    while !synced() {
        tokio::time::sleep(SYNC_POLL_PERIOD).await;
    }
    let sync_seconds = start.elapsed().as_secs_f64();
    // Let the first watch settle (buffers of the initial list are dropped), then measure.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let live_bytes = alloc::live() as i64 - before as i64;
    println!(
        "{}",
        json!({
            "client": client, "mode": mode, "objects": objects(),
            "live_bytes": live_bytes, "sync_seconds": sync_seconds,
        })
    );
    factory.shutdown().await;
    Ok(())
}

/// Decodes the PodList file into `ObjectList<Pod>` (what a kclient list returns) `runs` times,
/// as kclient's clients decode a body (`decode_json`), and reports the median speed and the
/// heap one decoded list holds.
fn decode(file: &str, runs: usize) -> Result<(), BoxError> {
    let data = std::fs::read(file)?;
    measure_decode(&data, runs, "kclient-api (decode_json)", "json", |data| {
        Ok(kclient_apimachinery::decode_json::<ObjectList<Pod>>(data)?)
    })
}

/// Decodes a protobuf PodList file (the server's `k8s\0` envelope) into `ObjectList<Pod>` with
/// the generated protobuf code, as a typed client does, and reports as [`decode`] does.
#[cfg(feature = "protobuf")]
fn decode_protobuf(file: &str, runs: usize) -> Result<(), BoxError> {
    use kclient_apimachinery::Resource as _;
    let data = std::fs::read(file)?;
    let codec = Pod::protobuf().ok_or("kclient-api was built without its protobuf feature")?;
    measure_decode(&data, runs, "kclient-api (protobuf)", "protobuf", |data| {
        Ok(codec.decode_list(data)?)
    })
}

/// Times `runs` decodes of `data`, measures the heap and allocations of one more, and prints
/// the median speed.
fn measure_decode(
    data: &[u8],
    runs: usize,
    decoder: &str,
    wire: &str,
    decode: impl Fn(&[u8]) -> Result<ObjectList<Pod>, BoxError>,
) -> Result<(), BoxError> {
    let mut secs = Vec::with_capacity(runs);
    let mut objects = 0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let list = decode(data)?;
        secs.push(start.elapsed().as_secs_f64());
        objects = list.items.len();
        drop(std::hint::black_box(list));
    }
    secs.sort_by(f64::total_cmp);
    let median = secs[secs.len() / 2];

    let before = alloc::live();
    let allocs = alloc::allocs();
    let list = decode(data)?;
    let live_bytes = alloc::live() as i64 - before as i64;
    let allocations = alloc::allocs() - allocs;
    drop(std::hint::black_box(list));

    println!(
        "{}",
        json!({
            "client": "kclient", "mode": "decode", "decoder": decoder, "wire": wire,
            "objects": objects, "wire_bytes": data.len(),
            "live_bytes": live_bytes, "allocations": allocations, "median_seconds": median,
            "bytes_per_second": data.len() as f64 / median,
        })
    );
    Ok(())
}
