//! `kclient-api-gen`: generates kclient's Kubernetes API types from the OpenAPI documents
//! checked in under `api/openapi/`.
//!
//! ```text
//! cargo run -p kclient-api-gen                 # regenerate the checked-in code
//! cargo run -p kclient-api-gen -- --check      # exit 1 if regenerating would change anything
//! cargo run -p kclient-api-gen -- --import DIR # refresh api/openapi/ from OpenAPI v3 documents
//! cargo run -p kclient-api-gen -- --import-go-nulls DIR # refresh api/gen/go-nulls.txt from the
//!                                              # Go sources (DIR: $(go env GOMODCACHE)/k8s.io)
//! ```
//!
//! It writes `apimachinery/src/meta/{v1,version}.rs`, `api/src/**` (except hand-written files
//! such as `apiextensions/v1/json_schema_props_or.rs`; `api/src/resources.rs` holds the
//! `watchable_resources!` list of every resource an informer can watch), the `[features]` section of
//! `api/Cargo.toml` and `api/tests/it/roundtrip_generated.rs`, each formatted with rustfmt.

mod apply;
mod emit;
mod go_nulls;
mod json_schema;
mod model;
mod names;
mod proto;
mod protobuf;
mod samples;
mod spec;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use model::Crate;

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kclient-api-gen: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .map_err(|e| format!("finding the workspace root: {e}"))?;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let openapi = root.join("api/openapi");
    match args.first().map(String::as_str) {
        Some("--import") => {
            let src = args.get(1).ok_or("--import needs a directory")?;
            let n = spec::import(Path::new(src), &openapi)?;
            eprintln!("imported {n} documents into {}", openapi.display());
            Ok(ExitCode::SUCCESS)
        }
        Some("--import-go-nulls") => {
            let src = args.get(1).ok_or("--import-go-nulls needs a directory")?;
            let spec = spec::load(&openapi)?;
            let (nulls, values) = go_nulls::import(Path::new(src), &spec)?;
            for (file, text) in [(go_nulls::FILE, nulls), (go_nulls::VALUES_FILE, values)] {
                let path = root.join(file);
                std::fs::write(&path, &text)
                    .map_err(|e| format!("writing {}: {e}", path.display()))?;
                let n = text.lines().filter(|l| !l.starts_with('#')).count();
                eprintln!("wrote {n} fields to {}", path.display());
            }
            Ok(ExitCode::SUCCESS)
        }
        Some("--check") => {
            let files = generate(&root, &openapi)?;
            let mut stale = Vec::new();
            for (path, content) in &files {
                let current = std::fs::read_to_string(root.join(path)).unwrap_or_default();
                if &current != content {
                    stale.push(path.display().to_string());
                }
            }
            stale.extend(
                orphans(&root, &files)
                    .iter()
                    .map(|p| p.display().to_string()),
            );
            if stale.is_empty() {
                eprintln!("generated code is up to date ({} files)", files.len());
                Ok(ExitCode::SUCCESS)
            } else {
                eprintln!(
                    "generated code is stale; run `cargo run -p kclient-api-gen`:\n  {}",
                    stale.join("\n  ")
                );
                Ok(ExitCode::FAILURE)
            }
        }
        None => {
            let files = generate(&root, &openapi)?;
            for (path, content) in &files {
                let full = root.join(path);
                if let Some(dir) = full.parent() {
                    std::fs::create_dir_all(dir)
                        .map_err(|e| format!("creating {}: {e}", dir.display()))?;
                }
                let current = std::fs::read_to_string(&full).unwrap_or_default();
                if &current != content {
                    std::fs::write(&full, content)
                        .map_err(|e| format!("writing {}: {e}", full.display()))?;
                }
            }
            for orphan in orphans(&root, &files) {
                std::fs::remove_file(root.join(&orphan))
                    .map_err(|e| format!("removing {}: {e}", orphan.display()))?;
                eprintln!("removed {}", orphan.display());
            }
            eprintln!("generated {} files", files.len());
            Ok(ExitCode::SUCCESS)
        }
        Some(other) => Err(format!(
            "unknown argument {other:?} (expected --check, --import DIR or --import-go-nulls DIR)"
        )),
    }
}

/// Every generated file, by path relative to the workspace root.
fn generate(root: &Path, openapi: &Path) -> Result<BTreeMap<PathBuf, String>, String> {
    let spec = spec::load(openapi)?;
    if spec.documents.is_empty() {
        return Err(format!("no OpenAPI documents in {}", openapi.display()));
    }
    let go_nulls = go_nulls::load(root)?;
    let mut model = model::build(&spec, &go_nulls)?;
    let protos = proto::load(&root.join("api/proto"))?;
    let go_values = go_nulls::load_values(root)?;
    protobuf::attach(&mut model, &protos, &go_values)?;
    let mut files = BTreeMap::new();

    for m in emit::modules(&model, Crate::Apimachinery) {
        let path = PathBuf::from(format!("apimachinery/src/meta/{}.rs", m.version));
        files.insert(path, rustfmt(&emit::module_file(&model, &m))?);
    }

    let mut groups: BTreeMap<String, Vec<model::Module>> = BTreeMap::new();
    for m in emit::modules(&model, Crate::Api) {
        let path = PathBuf::from(format!("api/src/{}/{}.rs", m.group, m.version));
        files.insert(path, rustfmt(&emit::module_file(&model, &m))?);
        groups.entry(m.group.clone()).or_default().push(m);
    }
    for (group, versions) in &groups {
        let path = PathBuf::from(format!("api/src/{group}/mod.rs"));
        files.insert(path, rustfmt(&emit::group_mod(&model, group, versions))?);
    }
    files.insert(
        PathBuf::from("api/src/lib.rs"),
        rustfmt(&emit::api_lib(&groups))?,
    );

    // Server-side apply configurations (feature `apply`).
    let mut apply_groups: BTreeMap<String, Vec<model::Module>> = BTreeMap::new();
    for m in apply::modules(&model) {
        let path = PathBuf::from(format!(
            "api/src/applyconfigurations/{}/{}.rs",
            m.group, m.version
        ));
        files.insert(path, rustfmt(&apply::module_file(&model, &m))?);
        apply_groups.entry(m.group.clone()).or_default().push(m);
    }
    for (group, versions) in &apply_groups {
        let path = PathBuf::from(format!("api/src/applyconfigurations/{group}/mod.rs"));
        files.insert(path, rustfmt(&apply::group_mod(group, versions))?);
    }
    files.insert(
        PathBuf::from("api/src/applyconfigurations/mod.rs"),
        rustfmt(&apply::root_mod(&apply_groups))?,
    );
    files.insert(
        PathBuf::from("api/tests/it/apply_roundtrip_generated.rs"),
        rustfmt(&apply::roundtrip_tests(&model))?,
    );

    files.insert(
        PathBuf::from("api/src/resources.rs"),
        rustfmt(&emit::resources_macro(&model))?,
    );

    // The [features] section of api/Cargo.toml, between markers.
    let manifest_path = PathBuf::from("api/Cargo.toml");
    let manifest = std::fs::read_to_string(root.join(&manifest_path))
        .map_err(|e| format!("reading api/Cargo.toml: {e}"))?;
    let begin = "# BEGIN generated features (api/gen)\n";
    let end = "# END generated features\n";
    let (Some(b), Some(e)) = (manifest.find(begin), manifest.find(end)) else {
        return Err("api/Cargo.toml lacks the generated-features markers".into());
    };
    let features = emit::features(&emit::feature_deps(&model));
    let new_manifest = format!("{}{begin}{features}{}", &manifest[..b], &manifest[e..]);
    files.insert(manifest_path, new_manifest);

    files.insert(
        PathBuf::from("api/tests/it/roundtrip_generated.rs"),
        rustfmt(&samples::roundtrip_tests(&model))?,
    );
    Ok(files)
}

/// Formats Rust source with rustfmt (edition 2024), through stdin and stdout.
fn rustfmt(source: &str) -> Result<String, String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running rustfmt: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("rustfmt has no stdin")?;
    let input = source.to_string();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child
        .wait_with_output()
        .map_err(|e| format!("running rustfmt: {e}"))?;
    writer
        .join()
        .map_err(|_| "rustfmt writer thread panicked".to_string())?
        .map_err(|e| format!("writing to rustfmt: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "rustfmt failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    String::from_utf8(output.stdout).map_err(|e| format!("rustfmt output is not UTF-8: {e}"))
}

/// Generated files on disk (under `api/src/` and `apimachinery/src/meta/`, recognised by their
/// header) that the current documents no longer produce, such as a dropped group version.
fn orphans(root: &Path, files: &BTreeMap<PathBuf, String>) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&root.join("api/src"), &mut found);
    walk(&root.join("apimachinery/src/meta"), &mut found);
    let mut orphans: Vec<PathBuf> = found
        .into_iter()
        .filter_map(|p| p.strip_prefix(root).ok().map(Path::to_path_buf))
        .filter(|p| !files.contains_key(p))
        .filter(|p| {
            std::fs::read_to_string(root.join(p))
                .is_ok_and(|text| text.contains("Generated by `api/gen`"))
        })
        .collect();
    orphans.sort();
    orphans
}
