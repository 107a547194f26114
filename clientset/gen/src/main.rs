//! `kclient-clientset-gen`: generates `clientset/src/generated.rs` (client-go's
//! `kubernetes.Clientset` navigation: `core_v1().pods(ns)`, `apps_v1().deployments(ns)`, ...)
//! and the per-group `[features]` table of `clientset/Cargo.toml` (between its
//! `# BEGIN generated features` and `# END generated features` lines) from the OpenAPI v3
//! documents checked in under `api/openapi/`.
//!
//! ```text
//! cargo run -p kclient-clientset-gen              # rewrite both
//! cargo run -p kclient-clientset-gen -- --check   # exit 1 if regenerating changes anything
//! options: --openapi <dir>   --out <file>   --manifest <Cargo.toml>
//! ```
//!
//! The output goes through `rustfmt` (with the workspace's `rustfmt.toml`) so that
//! `cargo fmt` leaves it unchanged and `--check` compares like with like.

mod collect;
mod emit;
mod methods;
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
    let mut manifest = repo.join("clientset/Cargo.toml");
    let mut check = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--check" => check = true,
            "--openapi" => {
                openapi = PathBuf::from(args.next().ok_or("--openapi needs a directory")?)
            }
            "--out" => out = PathBuf::from(args.next().ok_or("--out needs a file")?),
            "--manifest" => {
                manifest = PathBuf::from(args.next().ok_or("--manifest needs a Cargo.toml")?)
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let gvs = collect::load(&openapi)?;
    let methods = methods::resolve(&gvs)?;
    let code = rustfmt(&emit::emit(&gvs, &methods), &repo.join("rustfmt.toml"))?;
    let current_manifest = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("reading {}: {e}", manifest.display()))?;
    let new_manifest = with_features(&current_manifest, &emit::features(&gvs))
        .map_err(|e| format!("{}: {e}", manifest.display()))?;
    let resources: usize = gvs.iter().map(|gv| gv.resources.len()).sum();
    if check {
        let current = std::fs::read_to_string(&out).unwrap_or_default();
        let mut stale = Vec::new();
        if current != code {
            stale.push(out.display().to_string());
        }
        if current_manifest != new_manifest {
            stale.push(format!("the [features] of {}", manifest.display()));
        }
        if stale.is_empty() {
            eprintln!(
                "{} and {} are up to date ({} group versions, {resources} resources)",
                out.display(),
                manifest.display(),
                gvs.len()
            );
            return Ok(ExitCode::SUCCESS);
        }
        eprintln!(
            "{} out of date: run `cargo run -p kclient-clientset-gen`",
            stale.join(" and ")
        );
        return Ok(ExitCode::FAILURE);
    }
    std::fs::write(&out, code).map_err(|e| format!("writing {}: {e}", out.display()))?;
    if current_manifest != new_manifest {
        std::fs::write(&manifest, new_manifest)
            .map_err(|e| format!("writing {}: {e}", manifest.display()))?;
    }
    eprintln!(
        "wrote {} and the [features] of {} ({} group versions, {resources} resources)",
        out.display(),
        manifest.display(),
        gvs.len()
    );
    Ok(ExitCode::SUCCESS)
}

/// `manifest` with the text between its generated-features markers replaced by `features`.
fn with_features(manifest: &str, features: &str) -> Result<String, String> {
    let begin = "# BEGIN generated features (clientset/gen)\n";
    let end = "# END generated features\n";
    match (manifest.find(begin), manifest.find(end)) {
        (Some(b), Some(e)) if b < e => Ok(format!(
            "{}{begin}{features}{}",
            &manifest[..b],
            &manifest[e..]
        )),
        _ => Err(format!(
            "lacks the lines {:?} and {:?} around its [features] table",
            begin.trim_end(),
            end.trim_end()
        )),
    }
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
