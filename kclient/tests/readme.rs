//! The README (and the crate documentation) describe what the facade offers: every module it
//! re-exports, every cargo feature and everything the prelude brings into scope must be named
//! there, so that a user choosing features or imports from them finds what exists.

use std::collections::BTreeSet;

const README: &str = include_str!("../README.md");
const CARGO_TOML: &str = include_str!("../Cargo.toml");
const LIB_RS: &str = include_str!("../src/lib.rs");
const PRELUDE_RS: &str = include_str!("../src/prelude.rs");

/// The facade's modules: `pub mod x` and `pub use kclient_y as x` in lib.rs (not the prelude,
/// which has its own section).
fn modules() -> BTreeSet<String> {
    LIB_RS
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            line.strip_prefix("pub mod ")
                .map(|rest| rest.trim_end_matches(';'))
                .or_else(|| {
                    line.strip_prefix("pub use kclient_")
                        .and_then(|rest| rest.split(" as ").nth(1))
                        .map(|name| name.trim_end_matches(';'))
                })
        })
        .filter(|name| *name != "prelude")
        .map(str::to_owned)
        .collect()
}

/// The features of Cargo.toml's `[features]` table.
fn features() -> BTreeSet<String> {
    let mut in_features = false;
    let mut out = BTreeSet::new();
    for line in CARGO_TOML.lines() {
        if line.starts_with('[') {
            in_features = line == "[features]";
            continue;
        }
        if !in_features || line.starts_with('#') || line.starts_with(' ') {
            continue;
        }
        if let Some((name, _)) = line.split_once(" = ") {
            out.insert(name.trim().to_owned());
        }
    }
    out
}

/// The names the prelude re-exports.
fn prelude_items() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_use = false;
    for line in PRELUDE_RS.lines() {
        let line = line.trim();
        if line.starts_with("pub use ") {
            in_use = true;
        }
        if !in_use {
            continue;
        }
        // `pub use a::b::{C, D};` or `pub use a::b::C;`, possibly over several lines.
        let names = line
            .rsplit_once("::")
            .map_or(line, |(_, tail)| tail)
            .trim_start_matches("pub use ");
        for name in names.split([',', '{', '}', ';']) {
            let name = name.trim();
            if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                out.insert(name.to_owned());
            }
        }
        if line.ends_with(';') {
            in_use = false;
        }
    }
    out
}

/// The names of `wanted` that `text` never mentions as `` `name` `` (or `` `prefix name` ``).
fn missing(text: &str, wanted: &BTreeSet<String>, prefix: &str) -> Vec<String> {
    wanted
        .iter()
        .filter(|name| !text.contains(&format!("`{prefix}{name}`")))
        .cloned()
        .collect()
}

#[test]
fn the_readme_names_every_module_feature_and_prelude_item() {
    let modules = modules();
    assert!(modules.contains("kubernetes") && modules.contains("signal"));
    assert_eq!(
        missing(README, &modules, "kclient::"),
        Vec::<String>::new(),
        "modules missing from README.md's table"
    );
    let features = features();
    assert!(features.contains("runtime") && features.contains("core"));
    assert_eq!(
        missing(README, &features, ""),
        Vec::<String>::new(),
        "features missing from README.md"
    );
    let prelude = prelude_items();
    assert!(prelude.contains("Clientset") && prelude.contains("CancellationToken"));
    assert_eq!(
        missing(README, &prelude, ""),
        Vec::<String>::new(),
        "prelude items missing from README.md"
    );
}

#[test]
fn the_crate_documentation_names_every_module_and_feature() {
    let docs: String = LIB_RS
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    // The crate documentation's module table writes names bare ("`kubernetes`") or as links
    // ("[`api`]").
    assert_eq!(
        missing(&docs, &modules(), ""),
        Vec::<String>::new(),
        "modules missing from the crate documentation's table"
    );
    assert_eq!(
        missing(&docs, &features(), ""),
        Vec::<String>::new(),
        "features missing from the crate documentation"
    );
}
