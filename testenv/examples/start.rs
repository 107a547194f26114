//! Starts an apiserver with `TestEnv::builder`, reports how (cached or built binary, time to
//! ready), checks it answers, and stops it: `cargo run -p kclient-testenv --example start`.
//! With `KCLIENT_CACHE_DIR` set to an empty directory it shows the first-use build.

use std::time::Instant;

use kclient_testenv::{Identity, TestEnv};

#[tokio::main]
async fn main() -> Result<(), kclient_testenv::TestEnvError> {
    let started = Instant::now();
    let env = TestEnv::builder().start().await?;
    let report = env.start_report().expect("a started server");
    println!(
        "binary {} ({:?}); server ready in {:.1?}; start() took {:.1?}",
        report.binary.display(),
        report.binary_source,
        report.ready_in,
        started.elapsed()
    );
    let version = env
        .client(Identity::Admin)
        .get_raw("/version")
        .await
        .expect("GET /version");
    println!("/version: {}", String::from_utf8_lossy(&version).trim());
    let stopping = Instant::now();
    env.stop().await;
    println!("stopped in {:.1?}", stopping.elapsed());
    Ok(())
}
