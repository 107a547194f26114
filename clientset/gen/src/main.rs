//! `kclient-clientset-gen`: generates `clientset/src/generated.rs` (client-go's
//! `kubernetes.Clientset` navigation: `core_v1().pods(ns)`, `apps_v1().deployments(ns)`, ...)
//! from the OpenAPI v3 documents checked in under `api/openapi/`.
//!
//! ```text
//! cargo run -p kclient-clientset-gen              # rewrite clientset/src/generated.rs
//! cargo run -p kclient-clientset-gen -- --check   # exit 1 if regenerating changes anything
//! options: --openapi <dir>   --out <file>
//! ```
//!
//! The output goes through `rustfmt` (with the workspace's `rustfmt.toml`) so that
//! `cargo fmt` leaves it unchanged and `--check` compares like with like.

mod collect;
mod emit;
mod names;

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(message) => {
            eprintln!("kclient-clientset-gen: {message}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .map_err(|e| format!("finding the repository root: {e}"))?;
    let mut openapi = repo.join("api/openapi");
    let mut out = repo.join("clientset/src/generated.rs");
    let mut check = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--openapi" => {
                openapi = PathBuf::from(args.next().ok_or("--openapi needs a directory")?)
            }
            "--out" => out = PathBuf::from(args.next().ok_or("--out needs a file")?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let gvs = collect::load(&openapi)?;
    let code = rustfmt(&emit::emit(&gvs), &repo.join("rustfmt.toml"))?;
    let resources: usize = gvs.iter().map(|gv| gv.resources.len()).sum();
    if check {
        let current = std::fs::read_to_string(&out).unwrap_or_default();
        if current == code {
            eprintln!(
                "{} is up to date ({} group versions, {resources} resources)",
                out.display(),
                gvs.len()
            );
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "{} is out of date: run `cargo run -p kclient-clientset-gen`",
            out.display()
        );
        return Ok(ExitCode::FAILURE);
    }
    std::fs::write(&out, code).map_err(|e| format!("writing {}: {e}", out.display()))?;
    eprintln!(
        "wrote {} ({} group versions, {resources} resources)",
        out.display(),
        gvs.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// Formats `code` with rustfmt and the workspace configuration.
fn rustfmt(code: &str, config: &Path) -> Result<String, String> {
    let mut child = Command::new(std::env::var("RUSTFMT").unwrap_or_else(|_| "rustfmt".into()))
        .arg("--edition=2024")
        .arg("--config-path")
        .arg(config)
        .arg("--emit=stdout")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running rustfmt: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("rustfmt has no stdin")?
        .write_all(code.as_bytes())
        .map_err(|e| format!("writing to rustfmt: {e}"))?;
    let output = child
        .wait_with_output()
        .map_err(|e| format!("waiting for rustfmt: {e}"))?;
    if !output.status.success() {
        return Err("rustfmt failed on the generated code".into());
    }
    String::from_utf8(output.stdout).map_err(|e| format!("rustfmt output: {e}"))
}
