//! Lists Pods with the mission's core dependencies alone, as untyped JSON: the floor under any
//! kclient program's build.
#[derive(serde::Deserialize)]
struct List {
    items: Vec<serde_json::Value>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let server = std::env::var("SERVER")?;
    let url = url::Url::parse(&server)?.join("/api/v1/namespaces/default/pods")?;
    let client = reqwest::Client::builder().build()?;
    let list: List = client
        .get(url)
        .header(http::header::ACCEPT, "application/json")
        .send()
        .await?
        .bytes()
        .await
        .map(|body| serde_json::from_slice(&body))??;
    let names = parking_lot::Mutex::new(Vec::new());
    let (tx, rx) = crossbeam_channel::unbounded();
    for pod in &list.items {
        tx.send(pod["metadata"]["name"].to_string())?;
    }
    drop(tx);
    names.lock().extend(rx);
    println!("{:?}", names.lock());
    Ok(())
}
