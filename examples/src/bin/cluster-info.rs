//! Prints the server's version and every API group with its versions, the way
//! `kubectl version` and `kubectl api-versions` do, through the [`DiscoveryClient`].
//!
//! Uses the cluster of `KUBECONFIG` (or `~/.kube/config`, or the pod's service account):
//!
//! ```sh
//! scripts/demo                      # against the local apiserver
//! cargo run -p kclient-examples --bin cluster-info
//! ```

use kclient::discovery::DiscoveryClient;
use kclient::rest::Config;
use kclient_examples::outln;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let discovery = DiscoveryClient::for_config(Config::infer()?)?;
    outln!("server: {}", discovery.rest_client().base_url());

    let version = discovery.server_version().await?;
    outln!(
        "version: {} (platform {}, go {})",
        version.git_version,
        version.platform,
        version.go_version
    );

    // The core group (from /api) comes first, then every other group (from /apis), in the
    // server's priority order.
    let groups = discovery.server_groups().await?.groups;
    outln!("{} API groups:", groups.len());
    for group in &groups {
        let preferred = group.preferred_version_name();
        let versions: Vec<String> = group
            .versions
            .iter()
            .map(|v| {
                if v.version == preferred {
                    format!("{} (preferred)", v.version)
                } else {
                    v.version.clone()
                }
            })
            .collect();
        let name = if group.name.is_empty() {
            "(core)"
        } else {
            group.name.as_str()
        };
        outln!("  {name:<40} {}", versions.join(", "));
    }
    Ok(())
}
