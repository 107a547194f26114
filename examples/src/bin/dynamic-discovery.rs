//! `kubectl get` in miniature: resolve kubectl-style names (`deploy`, `cm`, `crd`,
//! `deployments.v1.apps`, `Network`) to resources through discovery and the RESTMapper, then
//! list them with the dynamic client, which needs no generated types and so works for custom
//! resources too.
//!
//! ```sh
//! cargo run -p kclient-examples --bin dynamic-discovery                  # a default set
//! cargo run -p kclient-examples --bin dynamic-discovery -- ns cm.v1 networks -n network-demo
//! ```
//!
//! Arguments are resource names; `-n NS` lists one namespace (default: all namespaces). As
//! with `kubectl get`, a name that does not resolve (or whose list fails) is reported on stderr
//! and the exit status is 1; the other names are still listed.

use kclient::apimachinery::{ListOptions, Unstructured};
use kclient::discovery::{DeferredDiscoveryRESTMapper, DiscoveryClient, MemCacheClient};
use kclient::dynamic::DynamicClient;
use kclient::rest::{Client, Config};
use kclient_examples::error_chain;
use kclient_examples::outln;
use std::process::ExitCode;

/// At most this many objects are printed per resource (one page of the list).
const PAGE: i64 = 10;

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("dynamic-discovery: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut namespace: Option<String> = None;
    let mut names = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "-n" | "--namespace" => {
                namespace = Some(args.next().ok_or("-n needs a namespace")?);
            }
            _ => names.push(arg),
        }
    }
    if names.is_empty() {
        names = [
            "ns",
            "cm",
            "deploy",
            "crd",
            "net",
            "Lease.coordination.k8s.io",
        ]
        .map(String::from)
        .to_vec();
    }

    let client = Client::new(Config::infer()?)?;
    // Discovery behind a memory cache: the mapper is built from it on first use and rebuilt
    // when a name misses (a CRD created since).
    let discovery = MemCacheClient::new(DiscoveryClient::new(client.clone()));
    let version = discovery.server_version().await?;
    let groups = discovery.server_groups().await?;
    outln!(
        "server {} serves {} API groups",
        version.git_version,
        groups.groups.len()
    );
    let mapper = DeferredDiscoveryRESTMapper::new(discovery);
    let dynamic = DynamicClient::new(client);

    // As `kubectl get`: a name that does not resolve, or a list that fails, is reported on
    // stderr and makes the exit status 1; the other names are still listed.
    let mut failed = 0;
    for name in &names {
        outln!();
        let mapping = match mapper.mapping_for(name).await {
            Ok(mapping) => mapping,
            Err(e) => {
                eprintln!("dynamic-discovery: {name}: {e}");
                failed += 1;
                continue;
            }
        };
        let gvr = &mapping.resource;
        let namespaced = mapping.scope.is_namespaced();
        outln!(
            "{name} -> kind {}, resource {} in {}{} ({})",
            mapping.group_version_kind.kind,
            gvr.resource,
            if gvr.group.is_empty() {
                "core"
            } else {
                &gvr.group
            },
            format_args!("/{}", gvr.version),
            if namespaced {
                "namespaced"
            } else {
                "cluster-wide"
            }
        );
        let mut resource = dynamic.resource(gvr.clone());
        if namespaced && let Some(ns) = &namespace {
            resource = resource.namespace(ns);
        }
        let list = match resource.list(&ListOptions::default().limit(PAGE)).await {
            Ok(list) => list,
            Err(e) => {
                eprintln!("dynamic-discovery: listing {name}: {e}");
                failed += 1;
                continue;
            }
        };
        if list.items.is_empty() {
            outln!("  (none)");
        }
        for item in &list.items {
            outln!("  {}", describe(item, namespaced));
        }
        if let Some(more) = list.metadata.remaining_item_count.filter(|n| *n > 0) {
            outln!("  ... and {more} more");
        } else if !list.metadata.continue_token.is_empty() {
            outln!("  ... and more");
        }
    }
    match failed {
        0 => Ok(()),
        1 => Err("1 name failed".into()),
        n => Err(format!("{n} names failed").into()),
    }
}

/// `namespace/name` (or `name`) and the creation time.
fn describe(item: &Unstructured, namespaced: bool) -> String {
    let field = |path: &[&str]| {
        item.nested_string(path)
            .ok()
            .flatten()
            .unwrap_or("")
            .to_owned()
    };
    let name = field(&["metadata", "name"]);
    let created = field(&["metadata", "creationTimestamp"]);
    let full = if namespaced {
        format!("{}/{name}", field(&["metadata", "namespace"]))
    } else {
        name
    };
    format!("{full:<60} created {created}")
}
