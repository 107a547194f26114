//! Prints the server's version and every API group with its versions, the way
//! `kubectl version` and `kubectl api-versions` do.
//!
//! Uses the cluster of `KUBECONFIG` (or `~/.kube/config`, or the pod's service account):
//!
//! ```sh
//! scripts/demo                      # against the local apiserver
//! cargo run -p kclient-examples --bin cluster-info
//! ```

use kclient::rest::{Client, Config};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let client = Client::new(Config::infer()?)?;
    println!("server: {}", client.base_url());

    let version: Value = serde_json::from_slice(&client.get_raw("/version").await?)?;
    println!(
        "version: {} (platform {}, go {})",
        text(&version["gitVersion"]),
        text(&version["platform"]),
        text(&version["goVersion"])
    );

    // The core group lives at /api, every other group at /apis.
    let core: Value = serde_json::from_slice(&client.get_raw("/api").await?)?;
    let groups: Value = serde_json::from_slice(&client.get_raw("/apis").await?)?;
    let mut lines = Vec::new();
    for v in core["versions"].as_array().into_iter().flatten() {
        lines.push(format!("{:<40} {}", "(core)", text(v)));
    }
    for group in groups["groups"].as_array().into_iter().flatten() {
        let preferred = text(&group["preferredVersion"]["version"]);
        let versions: Vec<String> = group["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| {
                let version = text(&v["version"]);
                if version == preferred {
                    format!("{version} (preferred)")
                } else {
                    version.to_string()
                }
            })
            .collect();
        lines.push(format!(
            "{:<40} {}",
            text(&group["name"]),
            versions.join(", ")
        ));
    }
    println!("{} API groups:", lines.len());
    for line in lines {
        println!("  {line}");
    }
    Ok(())
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("?")
}
