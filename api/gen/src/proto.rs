//! A reader of the `generated.proto` files under `api/proto/`: only what go-to-protobuf writes
//! (`package`, top-level `message` blocks of `optional`/`repeated`/`map<K, V>` fields,
//! comments, `syntax`, `import` and `option` lines). Anything else is an error, so a new
//! construct in a future release is noticed rather than misread.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// How a field repeats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Label {
    Optional,
    Repeated,
    /// `map<key, value>`; the field's `ty` is the value type.
    Map {
        key: String,
    },
}

/// One field of a message.
#[derive(Debug, Clone)]
pub(crate) struct ProtoField {
    pub(crate) number: u32,
    pub(crate) label: Label,
    /// A scalar (`string`, `int32`, `int64`, `bool`, `bytes`, `double`) or a message's full
    /// name without the leading dot (`k8s.io.api.core.v1.PodSpec`).
    pub(crate) ty: String,
}

/// Every message, by full name (`k8s.io.api.core.v1.Pod`), fields by proto name.
pub(crate) type Protos = BTreeMap<String, BTreeMap<String, ProtoField>>;

const SCALARS: &[&str] = &["string", "int32", "int64", "bool", "bytes", "double"];

/// Reads every `*.proto` file under `dir`.
pub(crate) fn load(dir: &Path) -> Result<Protos, String> {
    let mut out = Protos::new();
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    if files.is_empty() {
        return Err(format!("no .proto files under {}", dir.display()));
    }
    for path in files {
        let text =
            fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        parse(&text, &mut out).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            walk(&path, out);
        } else if path.extension().is_some_and(|e| e == "proto") {
            out.push(path);
        }
    }
}

/// Parses one file into `out`.
pub(crate) fn parse(text: &str, out: &mut Protos) -> Result<(), String> {
    let mut package = None::<String>;
    let mut current: Option<(String, BTreeMap<String, ProtoField>)> = None;
    let mut in_block_comment = false;
    for (n, raw) in text.lines().enumerate() {
        let err = |m: &str| format!("line {}: {m}: {raw:?}", n + 1);
        let mut line = raw.trim();
        if in_block_comment {
            if let Some(end) = line.find("*/") {
                in_block_comment = false;
                line = line[end + 2..].trim();
            } else {
                continue;
            }
        }
        if line.starts_with("/*") {
            if !line.contains("*/") {
                in_block_comment = true;
            }
            continue;
        }
        if let Some(i) = line.find("//") {
            line = line[..i].trim();
        }
        if line.is_empty() {
            continue;
        }
        if let Some((name, fields)) = &mut current {
            if line == "}" {
                let pkg = package
                    .as_deref()
                    .ok_or_else(|| err("message before package"))?;
                out.insert(format!("{pkg}.{name}"), std::mem::take(fields));
                current = None;
                continue;
            }
            let body = line.strip_suffix(';').ok_or_else(|| err("expected ';'"))?;
            let (decl, number) = body.split_once('=').ok_or_else(|| err("expected '='"))?;
            let number: u32 = number
                .trim()
                .parse()
                .map_err(|_| err("field number is not a number"))?;
            let decl = decl.trim();
            let (label, ty, fname) = if let Some(rest) = decl.strip_prefix("map<") {
                let (types, fname) = rest.split_once('>').ok_or_else(|| err("unclosed map<"))?;
                let (k, v) = types
                    .split_once(',')
                    .ok_or_else(|| err("map without ','"))?;
                (
                    Label::Map {
                        key: k.trim().to_string(),
                    },
                    v.trim(),
                    fname.trim(),
                )
            } else {
                let parts: Vec<&str> = decl.split_whitespace().collect();
                match parts.as_slice() {
                    ["optional", ty, fname] => (Label::Optional, *ty, *fname),
                    ["repeated", ty, fname] => (Label::Repeated, *ty, *fname),
                    _ => return Err(err("expected `optional|repeated TYPE NAME`")),
                }
            };
            let pkg = package.as_deref().unwrap_or_default();
            let ty = if SCALARS.contains(&ty) {
                ty.to_string()
            } else if let Some(full) = ty.strip_prefix('.') {
                full.to_string()
            } else {
                format!("{pkg}.{ty}")
            };
            let field = ProtoField { number, label, ty };
            if fields.insert(fname.to_string(), field).is_some() {
                return Err(err("field declared twice"));
            }
            continue;
        }
        if let Some(p) = line.strip_prefix("package ") {
            package = Some(p.trim_end_matches(';').trim().to_string());
        } else if let Some(m) = line.strip_prefix("message ") {
            let name = m
                .strip_suffix('{')
                .ok_or_else(|| err("expected `message Name {`"))?;
            current = Some((name.trim().to_string(), BTreeMap::new()));
        } else if line.starts_with("syntax ")
            || line.starts_with("import ")
            || line.starts_with("option ")
        {
        } else {
            return Err(err("unexpected line"));
        }
    }
    if current.is_some() {
        return Err("message not closed at end of file".into());
    }
    Ok(())
}

/// The protobuf message of an OpenAPI schema name:
/// `io.k8s.api.core.v1.Pod` → `k8s.io.api.core.v1.Pod`,
/// `io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.X` →
/// `k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.v1.X`.
pub(crate) fn message_of(schema: &str) -> Option<String> {
    let rest = schema.strip_prefix("io.k8s.")?;
    Some(format!("k8s.io.{}", rest.replace('-', "_")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_go_to_protobuf_writes() {
        let text = r#"
/*
Copyright.
*/
// This file was autogenerated by go-to-protobuf. Do not edit it manually!
syntax = "proto2";
package k8s.io.api.test.v1;
import "k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto";
option go_package = "k8s.io/api/test/v1";

// A thing.
message Thing {
  // Standard metadata.
  optional .k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta metadata = 1;
  repeated string names = 2;
  map<string, Other> others = 3;
  optional int32 count = 4;
}

message Other {
}
"#;
        let mut out = Protos::new();
        parse(text, &mut out).unwrap();
        let thing = &out["k8s.io.api.test.v1.Thing"];
        assert_eq!(
            thing["metadata"].ty,
            "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert_eq!(thing["names"].label, Label::Repeated);
        assert_eq!(thing["others"].ty, "k8s.io.api.test.v1.Other");
        assert_eq!(
            thing["others"].label,
            Label::Map {
                key: "string".into()
            }
        );
        assert_eq!(thing["count"].number, 4);
        assert!(out["k8s.io.api.test.v1.Other"].is_empty());
        assert!(parse("message X {\n  oneof y {\n", &mut out).is_err());
    }
}
