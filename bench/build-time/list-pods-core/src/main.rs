//! The facade README's example: lists the Pods of `default`. Built with `core` here and
//! with `all` by list-pods-all, for the build-time comparison (bench/build-time/run).
use kclient::prelude::*;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let clientset = Clientset::try_default()?; // KUBECONFIG, ~/.kube/config or in-cluster
    let pods = clientset.core_v1().pods("default").list(&ListOptions::default()).await?;
    for pod in &pods.items {
        println!("{}", pod.name());
    }
    Ok(())
}
