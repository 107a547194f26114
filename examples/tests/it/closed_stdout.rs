//! The example programs whose output a user pipes into `head` end as kubectl does when the
//! reader has gone: at once and quietly (kubectl is killed by SIGPIPE, a shell reports 141;
//! ours exit with 141), not with a panic and its backtrace, nor a "Broken pipe" error.

use std::process::Command;

use kclient::envtest::{Identity, TestEnv};

use crate::{ClosedPipeEnd, run_with_closed_stdout};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn programs_end_quietly_when_stdout_is_closed() {
    let env = TestEnv::connect().await;
    let kubeconfig = env.kubeconfig_path(Identity::Admin);
    let cache = tempfile::tempdir().expect("a kubectl cache directory");
    let cache_dir = cache.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let mut kubectl = Command::new("kubectl");
        kubectl
            .arg("api-resources")
            .arg(format!("--kubeconfig={}", kubeconfig.display()))
            .arg(format!("--cache-dir={}", cache_dir.display()));
        let (end, stderr) = run_with_closed_stdout(kubectl);
        assert_eq!(end, ClosedPipeEnd::Sigpipe, "kubectl: {stderr}");
        assert_eq!(stderr, "", "kubectl");

        for (bin, args) in [
            (env!("CARGO_BIN_EXE_api-resources"), &[][..]),
            (env!("CARGO_BIN_EXE_cluster-info"), &[]),
            (env!("CARGO_BIN_EXE_dynamic-discovery"), &["ns"]),
            (env!("CARGO_BIN_EXE_explain"), &["pods"]),
            (env!("CARGO_BIN_EXE_explain"), &["--help"]),
        ] {
            let mut ours = Command::new(bin);
            ours.args(args).env("KUBECONFIG", &kubeconfig);
            let (end, stderr) = run_with_closed_stdout(ours);
            assert_eq!(end, ClosedPipeEnd::Exited(141), "{bin} {args:?}: {stderr}");
            assert_eq!(stderr, "", "{bin} {args:?}");
        }
    })
    .await
    .expect("the programs ran");
}
