//! Which optional fields Go writes as an explicit `null` when they are unset, read from the Go
//! struct definitions the OpenAPI documents were generated from.
//!
//! Go's `encoding/json` leaves a field out only when its tag says `omitempty` (and the value is
//! nil or empty) or `omitzero`. So a nil pointer, slice or map without `omitempty` is written as
//! `null` (`HorizontalPodAutoscalerStatus.currentMetrics`), and a struct value is never left
//! out: a zero `metav1.Time` or `MicroTime` writes `null` even with `omitempty`
//! (`creationTimestamp: null`, the events.k8s.io Event's `deprecatedFirstTimestamp`), as does an
//! empty `runtime.RawExtension` or apiextensions `JSON`. The OpenAPI documents do not say any of
//! this, so `--import-go-nulls DIR` scans the Go sources (`DIR` holds module folders such as
//! `api@v0.36.3`, e.g. `$(go env GOMODCACHE)/k8s.io`) and writes [`FILE`], one
//! `schema field` line per such field; generation reads that file, so `--check` needs no Go.
//!
//! The scanner reads `type X struct { ... }` blocks line by line (the API packages are
//! gofmt-ed, one field per line) and follows `json:",inline"` embedding as the OpenAPI
//! documents flatten it.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::spec::Spec;

/// The checked-in list, relative to the workspace root.
pub(crate) const FILE: &str = "api/gen/go-nulls.txt";

/// `(schema name, JSON field name)` of every field Go writes as `null` when unset.
pub(crate) type GoNulls = BTreeSet<(String, String)>;

/// Reads [`FILE`] (`# comments` and blank lines are skipped).
pub(crate) fn load(root: &Path) -> Result<GoNulls, String> {
    let path = root.join(FILE);
    let text = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut out = GoNulls::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut parts = line.split_whitespace();
        match (parts.next(), parts.next(), parts.next()) {
            (Some(schema), Some(field), None) => {
                out.insert((schema.to_string(), field.to_string()));
            }
            _ => {
                return Err(format!(
                    "{}:{}: expected `schema field`",
                    path.display(),
                    n + 1
                ));
            }
        }
    }
    Ok(out)
}

/// How a Go field's type encodes its zero value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Zero {
    /// Pointer, slice, map or interface: `null` unless `omitempty`/`omitzero`.
    Nil,
    /// A struct whose zero value marshals as `null` (`Time`, `MicroTime`, `RawExtension`,
    /// `JSON`): `null` unless `omitzero`.
    NullStruct,
    /// Anything else (strings, numbers, other structs): never `null`.
    Value,
}

#[derive(Debug)]
struct GoField {
    /// The JSON name; empty for an inline embedding.
    json: String,
    /// The Go type as written (`*int64`, `[]MetricStatus`, `metav1.Time`).
    ty: String,
    omitempty: bool,
    omitzero: bool,
}

/// Go packages by schema prefix (`io.k8s.api.core.v1`): struct fields and named non-struct
/// types (`type ResourceList map[...]`).
#[derive(Default)]
struct Packages {
    structs: BTreeMap<(String, String), Vec<GoField>>,
    named: BTreeMap<(String, String), Zero>,
}

/// The checked-in list of Go value fields, relative to the workspace root.
pub(crate) const VALUES_FILE: &str = "api/gen/go-values.txt";

/// `(schema name, JSON field name)` of every optional field whose Go type is a value (not a
/// pointer, slice or map), with whether its tag says `omitempty`. Protobuf always carries such
/// a field (Go writes its zero value), while JSON leaves a zero out when `omitempty` says so:
/// the protobuf decoder reads a zero there as unset, to decode as JSON does, and writes an
/// unset one as zero, as Go does.
pub(crate) type GoValues = BTreeMap<(String, String), bool>;

/// Reads [`VALUES_FILE`]: `schema field omitempty|always` lines.
pub(crate) fn load_values(root: &Path) -> Result<GoValues, String> {
    let path = root.join(VALUES_FILE);
    let text = fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut out = GoValues::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            [schema, field, mode @ ("omitempty" | "always")] => {
                out.insert(
                    (schema.to_string(), field.to_string()),
                    *mode == "omitempty",
                );
            }
            _ => {
                return Err(format!(
                    "{}:{}: expected `schema field omitempty|always`",
                    path.display(),
                    n + 1
                ));
            }
        }
    }
    Ok(out)
}

/// Scans the modules under `dir` and returns the new contents of [`FILE`] and [`VALUES_FILE`].
pub(crate) fn import(dir: &Path, spec: &Spec) -> Result<(String, String), String> {
    // The Go packages the schemas come from, e.g. `io.k8s.api.core.v1`.
    let wanted: BTreeSet<String> = spec
        .schemas
        .keys()
        .filter_map(|s| s.rsplit_once('.').map(|(pkg, _)| pkg.to_string()))
        .collect();
    let mut packages = Packages::default();
    let mut scanned = BTreeSet::new();
    let mut modules: BTreeMap<String, PathBuf> = BTreeMap::new();
    for entry in fs::read_dir(dir).map_err(|e| format!("reading {}: {e}", dir.display()))? {
        let entry = entry.map_err(|e| format!("reading {}: {e}", dir.display()))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let module = name.split('@').next().unwrap_or(&name).to_string();
        let prefix = format!("io.k8s.{module}");
        if !wanted.iter().any(|w| w.starts_with(&format!("{prefix}."))) {
            continue;
        }
        if let Some(previous) = modules.insert(module.clone(), entry.path()) {
            return Err(format!(
                "{} holds two versions of k8s.io/{module} ({} and {}); point at a folder with one",
                dir.display(),
                previous.display(),
                entry.path().display()
            ));
        }
    }
    for (module, path) in &modules {
        for pkg in &wanted {
            let Some(rel) = pkg.strip_prefix(&format!("io.k8s.{module}.")) else {
                continue;
            };
            let pkg_dir = path.join(rel.replace('.', "/"));
            if pkg_dir.is_dir() {
                scan_package(&pkg_dir, pkg, &mut packages)?;
                scanned.insert(pkg.clone());
            }
        }
    }
    let missing: Vec<&String> = wanted.iter().filter(|p| !scanned.contains(*p)).collect();
    let mut out = String::from(
        "# Optional fields Go writes as `null` when unset (see api/gen/src/go_nulls.rs).\n\
         # Generated by `cargo run -p kclient-api-gen -- --import-go-nulls DIR`; do not edit.\n",
    );
    let mut values = String::from(
        "# Optional fields whose Go type is a value, not a pointer: `omitempty` or `always` by\n\
         # their JSON tag (see GoValues in api/gen/src/go_nulls.rs; used by the protobuf code).\n\
         # Generated by `cargo run -p kclient-api-gen -- --import-go-nulls DIR`; do not edit.\n",
    );
    for name in &missing {
        out.push_str(&format!("# no Go source found for package {name}\n"));
        values.push_str(&format!("# no Go source found for package {name}\n"));
    }
    for (schema, value) in &spec.schemas {
        let Some((pkg, ty)) = schema.rsplit_once('.') else {
            continue;
        };
        let Some(props) = value.get("properties").and_then(|p| p.as_object()) else {
            continue;
        };
        let mut fields = Vec::new();
        collect_fields(&packages, pkg, ty, &mut fields, 0);
        let required: BTreeSet<&str> = value
            .get("required")
            .and_then(|r| r.as_array())
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str())
            .collect();
        let mut nulls = BTreeSet::new();
        let mut value_fields = BTreeMap::new();
        for (field_pkg, f) in fields {
            if props.contains_key(&f.json) && writes_null(&packages, &field_pkg, f) {
                nulls.insert(f.json.clone());
            }
            if props.contains_key(&f.json)
                && !required.contains(f.json.as_str())
                && zero_of(&packages, &field_pkg, &f.ty) != Zero::Nil
            {
                value_fields.insert(f.json.clone(), f.omitempty);
            }
        }
        for field in nulls {
            out.push_str(&format!("{schema} {field}\n"));
        }
        for (field, omitempty) in value_fields {
            let mode = if omitempty { "omitempty" } else { "always" };
            values.push_str(&format!("{schema} {field} {mode}\n"));
        }
    }
    Ok((out, values))
}

/// The JSON fields of `pkg.ty`, inline embeddings flattened, each with its package.
fn collect_fields<'p>(
    packages: &'p Packages,
    pkg: &str,
    ty: &str,
    out: &mut Vec<(String, &'p GoField)>,
    depth: usize,
) {
    let Some(fields) = packages.structs.get(&(pkg.to_string(), ty.to_string())) else {
        return;
    };
    for f in fields {
        if f.json.is_empty() {
            if depth < 8
                && let Some((epkg, ety)) = resolve(packages, pkg, f.ty.trim_start_matches('*'))
            {
                collect_fields(packages, &epkg, &ety, out, depth + 1);
            }
        } else {
            out.push((pkg.to_string(), f));
        }
    }
}

/// The package and name a type reference (`Name` or `alias.Name`) points at among the scanned
/// packages: the same package first, else the one package that declares the name.
fn resolve(packages: &Packages, pkg: &str, reference: &str) -> Option<(String, String)> {
    let name = reference.rsplit('.').next()?;
    let declared = |p: &str| {
        let key = (p.to_string(), name.to_string());
        packages.structs.contains_key(&key) || packages.named.contains_key(&key)
    };
    if !reference.contains('.') && declared(pkg) {
        return Some((pkg.to_string(), name.to_string()));
    }
    let mut found = packages
        .structs
        .keys()
        .chain(packages.named.keys())
        .filter(|(p, n)| n == name && (reference.contains('.') || p == pkg))
        .map(|(p, _)| p.clone());
    let first = found.next()?;
    if found.any(|p| p != first) {
        return None;
    }
    Some((first, name.to_string()))
}

fn zero_of(packages: &Packages, pkg: &str, ty: &str) -> Zero {
    if ty.starts_with('*') || ty.starts_with("[]") || ty.starts_with("map[") {
        return Zero::Nil;
    }
    if ty == "interface{}" || ty == "any" {
        return Zero::Nil;
    }
    let name = ty.rsplit('.').next().unwrap_or(ty);
    if matches!(name, "Time" | "MicroTime" | "RawExtension" | "JSON") {
        return Zero::NullStruct;
    }
    match resolve(packages, pkg, ty) {
        Some(key) => packages.named.get(&key).copied().unwrap_or(Zero::Value),
        None => Zero::Value,
    }
}

fn writes_null(packages: &Packages, pkg: &str, f: &GoField) -> bool {
    match zero_of(packages, pkg, &f.ty) {
        Zero::Nil => !f.omitempty && !f.omitzero,
        Zero::NullStruct => !f.omitzero,
        Zero::Value => false,
    }
}

fn scan_package(dir: &Path, pkg: &str, packages: &mut Packages) -> Result<(), String> {
    let mut names: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(|e| format!("reading {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let n = p.file_name().unwrap_or_default().to_string_lossy();
            n.ends_with(".go")
                && !n.ends_with("_test.go")
                && !n.starts_with("zz_generated")
                && !n.starts_with("generated.")
        })
        .collect();
    names.sort();
    for path in names {
        let text =
            fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        scan_file(&text, pkg, packages);
    }
    Ok(())
}

fn scan_file(text: &str, pkg: &str, packages: &mut Packages) {
    let mut current: Option<(String, Vec<GoField>)> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some((name, fields)) = &mut current {
            if line.starts_with('}') {
                let (name, fields) = (std::mem::take(name), std::mem::take(fields));
                packages.structs.insert((pkg.to_string(), name), fields);
                current = None;
            } else if let Some(f) = parse_field(trimmed) {
                fields.push(f);
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("type ") else {
            continue;
        };
        let mut parts = rest.splitn(2, ' ');
        let (Some(name), Some(def)) = (parts.next(), parts.next()) else {
            continue;
        };
        let def = def.trim();
        if def.starts_with("struct {") && !def.ends_with('}') {
            current = Some((name.to_string(), Vec::new()));
        } else if def.starts_with("struct") {
            packages
                .structs
                .insert((pkg.to_string(), name.to_string()), Vec::new());
        } else if def.starts_with('*') || def.starts_with("[]") || def.starts_with("map[") {
            packages
                .named
                .insert((pkg.to_string(), name.to_string()), Zero::Nil);
        }
    }
}

/// One struct field line: `Name Type `json:"name,omitempty" ...``, or an embedding
/// `Type `json:",inline"``. Other lines (comments, blank) give `None`.
fn parse_field(line: &str) -> Option<GoField> {
    if line.starts_with("//") {
        return None;
    }
    let (head, tag) = line.split_once('`')?;
    let tokens: Vec<&str> = head.split_whitespace().collect();
    let json_tag = tag.split("json:\"").nth(1)?.split('"').next()?;
    let mut options = json_tag.split(',');
    let json = options.next().unwrap_or("");
    if json == "-" {
        return None;
    }
    let options: Vec<&str> = options.collect();
    let (json, ty) = match tokens.as_slice() {
        [_, ty] if !json.is_empty() => (json.to_string(), ty.to_string()),
        [ty] if options.contains(&"inline") || json.is_empty() => (String::new(), ty.to_string()),
        _ => return None,
    };
    Some(GoField {
        json,
        ty,
        omitempty: options.contains(&"omitempty"),
        omitzero: options.contains(&"omitzero"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_rules_for_null() {
        let src = r#"
type ResourceList map[string]string

type Inner struct {
	// Comment `json:"ignored"`
	Items []string `json:"items" protobuf:"x"`
	Opt *int64 `json:"opt,omitempty"`
	Stamp metav1.Time `json:"stamp,omitempty"`
	Zero metav1.Time `json:"zero,omitzero"`
	Res ResourceList `json:"res"`
	ResOpt ResourceList `json:"resOpt,omitempty"`
	Name string `json:"name"`
	Hidden *string `json:"-"`
}

type Outer struct {
	Inner `json:",inline"`
	Own map[string]string `json:"own"`
}
"#;
        let mut packages = Packages::default();
        scan_file(src, "io.k8s.api.test.v1", &mut packages);
        let mut fields = Vec::new();
        collect_fields(&packages, "io.k8s.api.test.v1", "Outer", &mut fields, 0);
        let nulls: Vec<&str> = fields
            .iter()
            .filter(|(p, f)| writes_null(&packages, p, f))
            .map(|(_, f)| f.json.as_str())
            .collect();
        assert_eq!(nulls, ["items", "stamp", "res", "own"]);
    }
}
