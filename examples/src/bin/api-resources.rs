//! `kubectl api-resources` over kclient's discovery: the resources the server supports, one
//! per group resource in its preferred version, printed, filtered and sorted as kubectl does.
//!
//! ```sh
//! cargo run -p kclient-examples --bin api-resources
//! cargo run -p kclient-examples --bin api-resources -- -o wide --namespaced=false
//! cargo run -p kclient-examples --bin api-resources -- --api-group=apps --verbs=list,watch -o name
//! cargo run -p kclient-examples --bin api-resources -- -o json
//! ```
//!
//! Flags: `-o wide|name|json`, `--api-group`, `--namespaced[=true|false]`, `--verbs`,
//! `--categories`, `--sort-by=name|kind`, `--no-headers`. Uses the cluster of `KUBECONFIG`
//! (or `~/.kube/config`, or the pod's service account). As kubectl does, it prints what it
//! could discover and then fails if some group versions could not be discovered.

use std::process::ExitCode;

use kclient::discovery::DiscoveryClient;
use kclient::rest::Config;
use kclient_examples::out;
use kclient_examples::{
    API_RESOURCES_USAGE, ApiResourcesOptions, error_chain, render_resources, select_resources,
};

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        out!("{API_RESOURCES_USAGE}");
        return ExitCode::SUCCESS;
    }
    let opts = match ApiResourcesOptions::parse(args) {
        Ok(opts) => opts,
        Err(e) => {
            eprintln!("api-resources: {e}\n\n{API_RESOURCES_USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match run(&opts).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("api-resources: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

async fn run(opts: &ApiResourcesOptions) -> Result<(), Box<dyn std::error::Error>> {
    let discovery = DiscoveryClient::for_config(Config::infer()?)?;
    let found = discovery.server_preferred_resources().await?;
    let rows = select_resources(&found.value, opts);
    out!("{}", render_resources(&rows, opts));
    match found.error() {
        None => Ok(()),
        Some(partial) => Err(partial.into()),
    }
}
