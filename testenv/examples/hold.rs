//! Starts an apiserver and holds it until killed (used to check that killing the test
//! process stops the server): `cargo run -p kclient-testenv --example hold`.

use kclient_testenv::TestEnv;

#[tokio::main]
async fn main() -> Result<(), kclient_testenv::TestEnvError> {
    let env = TestEnv::builder().start_shared().await?;
    println!("READY data_dir={}", env.data_dir().display());
    std::future::pending::<()>().await;
    Ok(())
}
