//! The kubectl look-alikes refuse a flag they do not know as kubectl does: a message naming
//! it on stderr and exit status 1 (cobra's, not the 2 of some Unix tools).

use std::process::Command;

#[test]
fn an_unknown_flag_exits_as_kubectl_does() {
    for (subcommand, ours) in [
        ("api-resources", env!("CARGO_BIN_EXE_api-resources")),
        ("explain", env!("CARGO_BIN_EXE_explain")),
        ("exec", env!("CARGO_BIN_EXE_kexec")),
        ("logs", env!("CARGO_BIN_EXE_klogs")),
        ("port-forward", env!("CARGO_BIN_EXE_kport-forward")),
    ] {
        // No server is needed: both stop at the flags.
        let theirs = Command::new("kubectl")
            .args([
                subcommand,
                "--no-such-flag",
                "--kubeconfig=/nonexistent/kubeconfig",
            ])
            .output()
            .unwrap_or_else(|e| panic!("running kubectl (is it installed and on PATH?): {e}"));
        let mine = Command::new(ours)
            .arg("--no-such-flag")
            .env("KUBECONFIG", "/nonexistent/kubeconfig")
            .output()
            .unwrap_or_else(|e| panic!("running {ours}: {e}"));
        assert_eq!(
            theirs.status.code(),
            Some(1),
            "kubectl {subcommand}: {theirs:?}"
        );
        assert_eq!(mine.status.code(), theirs.status.code(), "{ours}: {mine:?}");
        let stderr = String::from_utf8_lossy(&mine.stderr);
        assert!(stderr.contains("--no-such-flag"), "{ours}: {stderr}");
    }
}
