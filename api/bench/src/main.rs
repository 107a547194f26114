//! The layout benchmark of `kclient-api` against `k8s-openapi`: live bytes and allocations
//! per decoded object (exact, from a counting global allocator) and decode throughput, on the
//! same lists of Pods, ConfigMaps and Deployments; plus the measurements behind each layout
//! rule (boxing, small strings, interning, sorted-vector maps, boxed-slice lists).
//!
//! Run: `cargo run --release -p kclient-api-bench [-- N]` (N objects per list, default 5000).
//! It prints Markdown tables for `api/README.md`.
//!
//! Bytes and allocations are counted in this process. Decode speed is timed in fresh child
//! processes (this program again, with `--time DECODER FILE`), each decoding the list ten times
//! and reporting its best; a row's figure is the median of three children. A decode's speed
//! depends on the state the allocator's heap is left in by what ran before (timing one decoder
//! after another moved it by up to 20%), so no row is timed after another row's decodes.
//!
//! `cargo run --release -p kclient-api-bench -- --pods FILE` measures a saved Pod LIST response
//! instead (for example `bench/target/pods.json`, which `bench/run` saves from the real server)
//! and breaks a decoded Pod down into its parts; `-- N --write-pods FILE` writes the synthetic
//! Pod list to FILE too, so the two can be compared or profiled the same way.

#[path = "../../../bench/common/alloc.rs"]
mod alloc;
mod fixtures;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde::de::DeserializeOwned;
use serde_json::Value;

#[global_allocator]
static GLOBAL: alloc::Counting = alloc::Counting;

/// A list response's items (the list envelope's other fields are ignored).
#[derive(serde::Deserialize)]
struct Items<T> {
    items: Vec<T>,
}

/// Live bytes and allocations per object of a decoded list.
struct Memory {
    bytes_per_object: f64,
    allocs_per_object: f64,
}

/// Decodes `json` (a list of `n` objects) once, applying `after` to the items (e.g. dropping
/// managedFields), and counts the live bytes and allocations per object.
fn memory<T: DeserializeOwned>(json: &str, n: usize, after: impl Fn(&mut T)) -> Memory {
    let live0 = alloc::live();
    let allocs0 = alloc::allocs();
    let mut list: Items<T> =
        kclient_apimachinery::decode_json(json.as_bytes()).expect("decoding the list");
    let allocs = alloc::allocs() - allocs0;
    list.items.shrink_to_fit();
    list.items.iter_mut().for_each(&after);
    let bytes = alloc::live().saturating_sub(live0);
    drop(list);
    Memory {
        bytes_per_object: bytes as f64 / n as f64,
        allocs_per_object: allocs as f64 / n as f64,
    }
}

/// `decoder`'s best decode speed on `file` in one fresh process, MB/s.
fn time_once(decoder: &str, file: &Path) -> f64 {
    let exe = std::env::current_exe().expect("the benchmark's own path");
    let out = std::process::Command::new(&exe)
        .arg("--time")
        .arg(decoder)
        .arg(file)
        .output()
        .expect("running a timing child");
    assert!(out.status.success(), "timing {decoder} failed: {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .expect("a speed from the timing child")
}

/// The best of `runs`: load on this shared machine only ever slows a run down, so the fastest
/// is the closest to an undisturbed one.
fn best(runs: impl IntoIterator<Item = f64>) -> f64 {
    runs.into_iter().fold(0.0, f64::max)
}

/// The best over three fresh processes of `decoder`'s decode speed on `file`, MB/s.
fn speed(decoder: &str, file: &Path) -> f64 {
    best((0..3).map(|_| time_once(decoder, file)))
}

/// The speeds of two decoders compared with each other: five fresh processes each, taking
/// turns (a b, b a, a b, ...), so that a burst of load on this shared machine is met by both;
/// the best of each, MB/s.
fn speed_pair(a: &str, b: &str, file: &Path) -> (f64, f64) {
    let (mut runs_a, mut runs_b) = (Vec::new(), Vec::new());
    for round in 0..5 {
        if round % 2 == 0 {
            runs_a.push(time_once(a, file));
            runs_b.push(time_once(b, file));
        } else {
            runs_b.push(time_once(b, file));
            runs_a.push(time_once(a, file));
        }
    }
    (best(runs_a), best(runs_b))
}

/// The best speed decoding `json` as a list of `T` by kclient's decoder, as kclient's
/// clients decode a body (`decode_json`), MB/s (the child side of [`speed`]).
fn best_decode<T: DeserializeOwned>(json: &str) -> f64 {
    best_speed::<T, _>(json, |bytes| kclient_apimachinery::decode_json(bytes))
}

/// The best speed decoding `json` as a list of `T` by `serde_json` as kube-rs decodes a
/// body for k8s-openapi types (`String::from_utf8`, then `serde_json::from_str`), MB/s.
fn best_serde_json_decode<T: DeserializeOwned>(json: &str) -> f64 {
    best_speed::<T, _>(json, |bytes| match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(e) => Err(serde::de::Error::custom(e)),
    })
}

/// The best of at least ten decodes of `json` by `decode` as a list of `T`, in MB/s: as many as
/// take about 300 MB of input, so a small list (the ConfigMaps, 4.4 MB) is timed over as much
/// decoding as the Pods (31 MB) and a burst of load from other work on the machine is as likely
/// to be outlasted.
fn best_speed<T: DeserializeOwned, E: std::fmt::Debug>(
    json: &str,
    decode: impl Fn(&[u8]) -> Result<Items<T>, E>,
) -> f64 {
    let mut best = f64::MAX;
    let runs = (300_000_000 / json.len().max(1)).max(10);
    for _ in 0..runs {
        let start = Instant::now();
        let list = decode(json.as_bytes()).expect("decoding the list");
        let secs = start.elapsed().as_secs_f64();
        std::hint::black_box(&list);
        drop(list);
        best = best.min(secs);
    }
    json.len() as f64 / best / 1e6
}

/// Times `decoder` on the list in `file` and prints MB/s (run by [`speed`]).
fn time_child(decoder: &str, file: &str) {
    use k8s_openapi::api::{apps::v1 as oapps, core::v1 as ocore};
    use kclient_api::{apps::v1 as kapps, core::v1 as kcore};
    let json = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
    let mb_per_s = match decoder {
        "openapi-pod" => best_serde_json_decode::<ocore::Pod>(&json),
        "kclient-pod" => best_decode::<kcore::Pod>(&json),
        "kclient-pod-no-interning" => {
            kclient_apimachinery::meta::interner::set_enabled(false);
            best_decode::<kcore::Pod>(&json)
        }
        "kclient-pod-serde-json" => best_serde_json_decode::<kcore::Pod>(&json),
        "kclient-pod-from-slice" => {
            best_speed::<kcore::Pod, _>(&json, |bytes| serde_json::from_slice(bytes))
        }
        "ignored" => best_decode::<serde::de::IgnoredAny>(&json),
        "ignored-serde-json" => best_serde_json_decode::<serde::de::IgnoredAny>(&json),
        "openapi-configmap" => best_serde_json_decode::<ocore::ConfigMap>(&json),
        "kclient-configmap" => best_decode::<kcore::ConfigMap>(&json),
        "openapi-deployment" => best_serde_json_decode::<oapps::Deployment>(&json),
        "kclient-deployment" => best_decode::<kapps::Deployment>(&json),
        other => panic!("unknown decoder {other}"),
    };
    println!("{mb_per_s:.1}");
}

/// Writes `json` to a file in the temporary directory for the timing children.
fn list_file(name: &str, json: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "kclient-api-bench-{}-{name}.json",
        std::process::id()
    ));
    std::fs::write(&path, json).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    path
}

fn list_json(items: &[Value], kind: &str, api_version: &str) -> String {
    serde_json::to_string(&serde_json::json!({
        "kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": "123456"}, "items": items
    }))
    .expect("encoding the fixture")
}

fn print_row(kind: &str, layout: &str, json_per_object: f64, memory: &Memory, mb_per_s: f64) {
    println!(
        "| {kind} | {layout} | {:.0} | {:.2} | {:.1} | {mb_per_s:.0} |",
        memory.bytes_per_object,
        memory.bytes_per_object / json_per_object,
        memory.allocs_per_object,
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let [_, flag, decoder, file] = args.as_slice()
        && flag == "--time"
    {
        time_child(decoder, file);
        return;
    }
    if let [_, flag, file] = args.as_slice()
        && flag == "--pods"
    {
        let json = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("reading {file}: {e}"));
        pod_breakdown(&json, file);
        return;
    }
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5000);
    let mut rng = fixtures::Rng::new(42);
    let pods: Vec<Value> = (0..n).map(|_| fixtures::pod(&mut rng)).collect();
    let config_maps: Vec<Value> = (0..n).map(|_| fixtures::config_map(&mut rng)).collect();
    let deployments: Vec<Value> = (0..n).map(|_| fixtures::deployment(&mut rng)).collect();
    let pod_list = list_json(&pods, "PodList", "v1");
    if let [_, _, flag, file] = args.as_slice()
        && flag == "--write-pods"
    {
        std::fs::write(file, &pod_list).unwrap_or_else(|e| panic!("writing {file}: {e}"));
    }
    let cm_list = list_json(&config_maps, "ConfigMapList", "v1");
    let deploy_list = list_json(&deployments, "DeploymentList", "apps/v1");

    let per = |s: &str| s.len() as f64 / n as f64;
    let managed: f64 = pods
        .iter()
        .map(|p| serde_json::to_string(&p["metadata"]["managedFields"]).map_or(0, |s| s.len()))
        .sum::<usize>() as f64
        / n as f64;
    println!(
        "{n} objects per list. Pod JSON: {:.0} bytes/object, {managed:.0} of it managedFields.",
        per(&pod_list)
    );
    println!(
        "ConfigMap JSON: {:.0} bytes/object; Deployment JSON: {:.0} bytes/object.\n",
        per(&cm_list),
        per(&deploy_list)
    );

    println!("| kind | layout | live bytes/object | x JSON | allocations/object | decode MB/s |");
    println!("|---|---|--:|--:|--:|--:|");
    type KPod = kclient_api::core::v1::Pod;
    type OPod = k8s_openapi::api::core::v1::Pod;
    let jp = per(&pod_list);
    let pod_file = list_file("pods", &pod_list);
    // The rows that drop managedFields after decoding share their decode's speed.
    let speed_of = |decoder| speed(decoder, &pod_file);
    let (kclient, openapi) = speed_pair("kclient-pod", "openapi-pod", &pod_file);
    let mut ratios = vec![("Pod", kclient / openapi)];
    print_row(
        "Pod",
        "k8s-openapi 0.29",
        jp,
        &memory::<OPod>(&pod_list, n, |_| {}),
        openapi,
    );
    print_row(
        "Pod",
        "k8s-openapi, managedFields cleared",
        jp,
        &memory::<OPod>(&pod_list, n, |p| p.metadata.managed_fields = None),
        openapi,
    );
    let kclient_memory = memory::<KPod>(&pod_list, n, |_| {});
    print_row("Pod", "kclient-api", jp, &kclient_memory, kclient);
    print_row(
        "Pod",
        "kclient-api, managedFields dropped",
        jp,
        &memory::<KPod>(&pod_list, n, |p| p.metadata.managed_fields = None),
        kclient,
    );
    kclient_apimachinery::meta::interner::set_enabled(false);
    print_row(
        "Pod",
        "kclient-api, interning off",
        jp,
        &memory::<KPod>(&pod_list, n, |_| {}),
        speed_of("kclient-pod-no-interning"),
    );
    kclient_apimachinery::meta::interner::set_enabled(true);
    print_row(
        "Pod",
        "kclient-api, decoded by serde_json::from_str (after one UTF-8 check)",
        jp,
        &kclient_memory,
        speed_of("kclient-pod-serde-json"),
    );
    print_row(
        "Pod",
        "kclient-api, decoded by serde_json::from_slice",
        jp,
        &kclient_memory,
        speed_of("kclient-pod-from-slice"),
    );
    let parse_only = memory::<serde::de::IgnoredAny>(&pod_list, n, |_| {});
    print_row(
        "Pod",
        "parse only (serde IgnoredAny), kclient's decoder: its floor",
        jp,
        &parse_only,
        speed_of("ignored"),
    );
    print_row(
        "Pod",
        "parse only (serde IgnoredAny), serde_json::from_str",
        jp,
        &parse_only,
        speed_of("ignored-serde-json"),
    );
    let _ = std::fs::remove_file(&pod_file);

    type KCm = kclient_api::core::v1::ConfigMap;
    type OCm = k8s_openapi::api::core::v1::ConfigMap;
    let jc = per(&cm_list);
    let cm_file = list_file("configmaps", &cm_list);
    let (kclient, openapi) = speed_pair("kclient-configmap", "openapi-configmap", &cm_file);
    ratios.push(("ConfigMap", kclient / openapi));
    print_row(
        "ConfigMap",
        "k8s-openapi 0.29",
        jc,
        &memory::<OCm>(&cm_list, n, |_| {}),
        openapi,
    );
    print_row(
        "ConfigMap",
        "kclient-api",
        jc,
        &memory::<KCm>(&cm_list, n, |_| {}),
        kclient,
    );
    print_row(
        "ConfigMap",
        "kclient-api, managedFields dropped",
        jc,
        &memory::<KCm>(&cm_list, n, |c| c.metadata.managed_fields = None),
        kclient,
    );
    let _ = std::fs::remove_file(&cm_file);

    type KDep = kclient_api::apps::v1::Deployment;
    type ODep = k8s_openapi::api::apps::v1::Deployment;
    let jd = per(&deploy_list);
    let deploy_file = list_file("deployments", &deploy_list);
    let (kclient, openapi) = speed_pair("kclient-deployment", "openapi-deployment", &deploy_file);
    ratios.push(("Deployment", kclient / openapi));
    print_row(
        "Deployment",
        "k8s-openapi 0.29",
        jd,
        &memory::<ODep>(&deploy_list, n, |_| {}),
        openapi,
    );
    print_row(
        "Deployment",
        "kclient-api",
        jd,
        &memory::<KDep>(&deploy_list, n, |_| {}),
        kclient,
    );
    print_row(
        "Deployment",
        "kclient-api, managedFields dropped",
        jd,
        &memory::<KDep>(&deploy_list, n, |d| d.metadata.managed_fields = None),
        kclient,
    );
    let _ = std::fs::remove_file(&deploy_file);
    let ratios: Vec<String> = ratios
        .iter()
        .map(|(kind, ratio)| format!("{kind} {ratio:.2}x"))
        .collect();
    println!(
        "\nDecode speed, kclient-api / k8s-openapi (target at least 2x): {}",
        ratios.join(", ")
    );

    layout_rules(&pods);
}

/// The measurements behind each layout rule.
fn layout_rules(pods: &[Value]) {
    use std::mem::size_of;
    println!("\nStruct sizes (bytes), k8s-openapi vs kclient-api (optional structs boxed):\n");
    println!("| type | k8s-openapi | kclient-api |");
    println!("|---|--:|--:|");
    macro_rules! size_row {
        ($name:literal, $o:ty, $k:ty) => {
            println!("| {} | {} | {} |", $name, size_of::<$o>(), size_of::<$k>());
        };
    }
    size_row!(
        "Pod",
        k8s_openapi::api::core::v1::Pod,
        kclient_api::core::v1::Pod
    );
    size_row!(
        "ObjectMeta",
        k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
        kclient_apimachinery::meta::v1::ObjectMeta
    );
    size_row!(
        "PodSpec",
        k8s_openapi::api::core::v1::PodSpec,
        kclient_api::core::v1::PodSpec
    );
    size_row!(
        "Container",
        k8s_openapi::api::core::v1::Container,
        kclient_api::core::v1::Container
    );
    size_row!(
        "Volume",
        k8s_openapi::api::core::v1::Volume,
        kclient_api::core::v1::Volume
    );
    size_row!(
        "PodStatus",
        k8s_openapi::api::core::v1::PodStatus,
        kclient_api::core::v1::PodStatus
    );
    size_row!(
        "ContainerStatus",
        k8s_openapi::api::core::v1::ContainerStatus,
        kclient_api::core::v1::ContainerStatus
    );
    size_row!(
        "Time (Option)",
        Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::Time>,
        Option<kclient_apimachinery::meta::Time>
    );
    size_row!(
        "string (Option)",
        Option<String>,
        Option<kclient_apimachinery::meta::IStr>
    );
    size_row!(
        "list (Option)",
        Option<Vec<u8>>,
        Option<kclient_apimachinery::meta::List<u8>>
    );

    // Every string value of the Pods, as one list, decoded three ways.
    let mut strings = Vec::new();
    for p in pods {
        collect_strings(p, &mut strings);
    }
    let inline = strings.iter().filter(|s| s.len() <= 24).count();
    let strings_json = serde_json::to_string(&strings).expect("encoding strings");
    println!(
        "\nString values of the Pods (except managedFields keys): {} per Pod, {:.0}% of them at most 24 bytes.\n",
        strings.len() / pods.len(),
        100.0 * inline as f64 / strings.len() as f64
    );
    println!("| strings decoded as | live bytes/Pod | allocations/Pod |");
    println!("|---|--:|--:|");
    let n = pods.len();
    let (b, a) = mem_of::<Vec<String>>(&strings_json);
    println!("| String | {:.0} | {:.1} |", b / n as f64, a / n as f64);
    let (b, a) = mem_of::<Vec<compact_str::CompactString>>(&strings_json);
    println!(
        "| CompactString | {:.0} | {:.1} |",
        b / n as f64,
        a / n as f64
    );
    let (b, a) = mem_of::<Vec<kclient_apimachinery::meta::IStr>>(&strings_json);
    println!(
        "| IStr (inline or interned) | {:.0} | {:.1} |",
        b / n as f64,
        a / n as f64
    );

    // Labels as a BTreeMap vs the sorted boxed slice.
    let labels: Vec<&Value> = pods.iter().map(|p| &p["metadata"]["labels"]).collect();
    let labels_json = serde_json::to_string(&labels).expect("encoding labels");
    println!("\n| labels decoded as | live bytes/Pod | allocations/Pod |");
    println!("|---|--:|--:|");
    let (b, a) = mem_of::<Vec<BTreeMap<String, String>>>(&labels_json);
    println!(
        "| BTreeMap<String, String> | {:.0} | {:.1} |",
        b / n as f64,
        a / n as f64
    );
    let (b, a) = mem_of::<Vec<kclient_apimachinery::meta::StrMap>>(&labels_json);
    println!(
        "| StrMap (sorted boxed slice of IStr) | {:.0} | {:.1} |",
        b / n as f64,
        a / n as f64
    );

    // Container lists as Vec vs List (boxed slice built from a stack buffer).
    let containers: Vec<&Value> = pods.iter().map(|p| &p["spec"]["volumes"]).collect();
    let containers_json = serde_json::to_string(&containers).expect("encoding volumes");
    println!("\n| spec.volumes decoded as | live bytes/Pod | allocations/Pod |");
    println!("|---|--:|--:|");
    let (b, a) = mem_of::<Vec<Vec<kclient_api::core::v1::Volume>>>(&containers_json);
    println!(
        "| Vec<Volume> | {:.0} | {:.1} |",
        b / n as f64,
        a / n as f64
    );
    let (b, a) = mem_of::<Vec<kclient_apimachinery::meta::List<kclient_api::core::v1::Volume>>>(
        &containers_json,
    );
    println!(
        "| List<Volume> | {:.0} | {:.1} |",
        b / n as f64,
        a / n as f64
    );
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| collect_strings(x, out)),
        Value::Object(m) => {
            for (k, x) in m {
                if k != "managedFields" {
                    collect_strings(x, out);
                }
            }
        }
        _ => {}
    }
}

/// Live bytes and allocations of decoding `json` as `T` (kept alive while measured).
fn mem_of<T: DeserializeOwned>(json: &str) -> (f64, f64) {
    let live0 = alloc::live();
    let allocs0 = alloc::allocs();
    let value: T = serde_json::from_str(json).expect("decoding");
    let r = (
        (alloc::live().saturating_sub(live0)) as f64,
        (alloc::allocs() - allocs0) as f64,
    );
    drop(value);
    r
}

/// The type of `ObjectMeta::managed_fields` (inside the `Option`).
type ManagedFields =
    kclient_apimachinery::meta::List<kclient_apimachinery::meta::v1::ManagedFieldsEntry>;

/// Measures a saved Pod LIST and where a decoded Pod's bytes go.
fn pod_breakdown(list_json: &str, file: &str) {
    type KPod = kclient_api::core::v1::Pod;
    type OPod = k8s_openapi::api::core::v1::Pod;
    use kclient_api::core::v1 as k;
    let list: Value = serde_json::from_str(list_json).expect("a JSON list");
    let items = list["items"].as_array().expect("a list with items");
    let n = items.len();
    let jp = list_json.len() as f64 / n as f64;
    let part = |f: &dyn Fn(&Value) -> Value| -> (String, f64) {
        let parts: Vec<Value> = items.iter().map(f).collect();
        let json = serde_json::to_string(&parts).expect("encoding");
        let per = json.len() as f64 / n as f64;
        (json, per)
    };
    println!("{n} Pods, {jp:.0} bytes of JSON each.\n");
    println!("| layout | live bytes/Pod | x JSON | allocations/Pod | decode MB/s |");
    println!("|---|--:|--:|--:|--:|");
    let row = |name: &str, m: Memory, mb_per_s: f64| {
        println!(
            "| {name} | {:.0} | {:.2} | {:.1} | {mb_per_s:.0} |",
            m.bytes_per_object,
            m.bytes_per_object / jp,
            m.allocs_per_object,
        )
    };
    let file = Path::new(file);
    let (kclient, openapi) = speed_pair("kclient-pod", "openapi-pod", file);
    row(
        "k8s-openapi 0.29",
        memory::<OPod>(list_json, n, |_| {}),
        openapi,
    );
    row("kclient-api", memory::<KPod>(list_json, n, |_| {}), kclient);
    row(
        "kclient-api, managedFields dropped",
        memory::<KPod>(list_json, n, |p| p.metadata.managed_fields = None),
        kclient,
    );
    println!(
        "\nDecode speed, kclient-api / k8s-openapi: {:.2}x",
        kclient / openapi
    );
    println!("\n| part | JSON bytes/Pod | live bytes/Pod (incl. its slot) | allocations/Pod |");
    println!("|---|--:|--:|--:|");
    let show = |name: &str, (_, per): (String, f64), (b, a): (f64, f64)| {
        println!(
            "| {name} | {per:.0} | {:.0} | {:.1} |",
            b / n as f64,
            a / n as f64
        )
    };
    let meta = part(&|p| {
        let mut m = p["metadata"].clone();
        if let Some(m) = m.as_object_mut() {
            m.remove("managedFields");
        }
        m
    });
    let b = mem_of::<Vec<kclient_apimachinery::meta::v1::ObjectMeta>>(&meta.0);
    show("metadata without managedFields", meta, b);
    let mf = part(&|p| p["metadata"]["managedFields"].clone());
    let b = mem_of::<Vec<Option<ManagedFields>>>(&mf.0);
    show("metadata.managedFields", mf, b);
    let spec = part(&|p| p["spec"].clone());
    let b = mem_of::<Vec<k::PodSpec>>(&spec.0);
    show("spec", spec, b);
    let containers = part(&|p| p["spec"]["containers"].clone());
    let b = mem_of::<Vec<kclient_apimachinery::meta::List<k::Container>>>(&containers.0);
    show("spec.containers", containers, b);
    let volumes = part(&|p| p["spec"]["volumes"].clone());
    let b = mem_of::<Vec<Option<kclient_apimachinery::meta::List<k::Volume>>>>(&volumes.0);
    show("spec.volumes", volumes, b);
    let status = part(&|p| p["status"].clone());
    let b = mem_of::<Vec<k::PodStatus>>(&status.0);
    show("status", status, b);
}
