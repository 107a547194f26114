//! `kubectl explain` in miniature: a resource's or field's type, description and subfields,
//! read from the server's OpenAPI v3 documents through kclient's discovery.
//!
//! ```sh
//! cargo run -p kclient-examples --bin explain -- deployment.spec.replicas
//! cargo run -p kclient-examples --bin explain -- pods.spec.containers.ports
//! cargo run -p kclient-examples --bin explain -- cronjobs.spec --api-version=batch/v1
//! cargo run -p kclient-examples --bin explain -- deployment.spec --recursive
//! ```
//!
//! The argument is `RESOURCE[.FIELD...]`; the resource may be a plural, singular or short
//! name or a kind, resolved through discovery (its preferred version unless `--api-version`
//! names one), or, without `--api-version`, a plural with its group
//! (`deployments.apps.spec.replicas`), as kubectl takes it. `--recursive` lists every field
//! under the one explained, a line each, as `kubectl explain --recursive` does. Uses the cluster of `KUBECONFIG` (or `~/.kube/config`, or the pod's service
//! account).

use std::process::ExitCode;

use kclient::apimachinery::{GroupVersion, GroupVersionKind, GroupVersionResource};
use kclient::discovery::{
    DeferredDiscoveryRESTMapper, DiscoveryClient, MemCacheClient, OpenAPIV3Client,
};
use kclient::rest::Config;
use kclient_examples::{error_chain, match_group_resource, render_explain, render_explain_header};
use kclient_examples::{out, outln};

const USAGE: &str =
    "usage: explain RESOURCE[.FIELD...] [--api-version=GROUP/VERSION] [--recursive[=true|false]]";

#[tokio::main]
async fn main() -> ExitCode {
    let mut target = None;
    let mut api_version = None;
    let mut recursive = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--recursive" {
            recursive = true;
        } else if let Some(v) = arg.strip_prefix("--recursive=") {
            // A boolean flag takes its value only after `=`, as kubectl's (Go's strconv.ParseBool).
            recursive = match v {
                "1" | "t" | "T" | "true" | "TRUE" | "True" => true,
                "0" | "f" | "F" | "false" | "FALSE" | "False" => false,
                _ => {
                    eprintln!("explain: invalid argument {v:?} for \"--recursive\" flag\n{USAGE}");
                    return ExitCode::FAILURE;
                }
            };
        } else if let Some(v) = arg.strip_prefix("--api-version=") {
            api_version = Some(v.to_owned());
        } else if arg == "--api-version" {
            // As kubectl: a flag given last without its value is an error, not ignored.
            let Some(v) = args.next() else {
                eprintln!("explain: flag needs an argument: --api-version\n{USAGE}");
                return ExitCode::FAILURE;
            };
            api_version = Some(v);
        } else if arg == "-h" || arg == "--help" {
            outln!("{USAGE}");
            return ExitCode::SUCCESS;
        } else if target.is_none() && !arg.starts_with('-') {
            target = Some(arg);
        } else {
            eprintln!("explain: unexpected argument {arg:?}\n{USAGE}");
            return ExitCode::FAILURE;
        }
    }
    let Some(target) = target else {
        eprintln!("explain: a resource is required\n{USAGE}");
        return ExitCode::FAILURE;
    };
    match run(&target, api_version.as_deref(), recursive).await {
        Ok(text) => {
            out!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("explain: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

async fn run(
    target: &str,
    api_version: Option<&str>,
    recursive: bool,
) -> Result<String, Box<dyn std::error::Error>> {
    let (resource, fields) = target.split_once('.').unwrap_or((target, ""));
    let mut path: Vec<&str> = fields.split('.').filter(|f| !f.is_empty()).collect();

    let config = Config::infer()?;
    let discovery = DiscoveryClient::for_config(config)?;
    let openapi = OpenAPIV3Client::new(discovery.rest_client().clone());
    let mapper = DeferredDiscoveryRESTMapper::new(MemCacheClient::new(discovery));
    // As kubectl does: without `--api-version`, a resource may be named with its group
    // (`deployments.apps.spec`); otherwise the first part is the resource (or kind), and the
    // version asked for replaces its preferred one.
    let with_group = match api_version {
        Some(_) => None,
        None => match mapper
            .resources_for(&GroupVersionResource::new("", "", resource))
            .await
        {
            Ok(candidates) => match_group_resource(target, &candidates),
            Err(_) => None,
        },
    };
    let mut gvk = match with_group {
        Some((gvr, fields)) => {
            path = fields;
            mapper.kind_for(&gvr).await?
        }
        None => mapper.mapping_for(resource).await?.group_version_kind,
    };
    if let Some(api_version) = api_version {
        let gv = GroupVersion::parse(api_version)?;
        gvk = GroupVersionKind::new(&gv.group, &gv.version, &gvk.kind);
    }
    let schema = openapi.resource_schema(&gvk).await?;
    let explained = if recursive {
        schema.explain_recursive(&path)
    } else {
        schema.explain(&path)
    };
    match explained {
        Ok(field) => Ok(render_explain(&gvk, &field, recursive)),
        Err(e) => {
            // As kubectl: the header is printed before the field is found missing.
            out!("{}", render_explain_header(&gvk));
            Err(e.into())
        }
    }
}
