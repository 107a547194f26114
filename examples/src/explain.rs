//! The library half of the `explain` example: a field read by
//! [`ResourceSchema::explain`](kclient::discovery::ResourceSchema::explain) laid out exactly as
//! `kubectl explain` prints it (kubectl's plaintext template: the GROUP/KIND/VERSION header,
//! `FIELD:` with its type and enum, `DESCRIPTION:` wrapped at 76 columns and indented by 4,
//! `FIELDS:` with a tab between each name and its type), and the word wrapping kubectl uses
//! (`go-wordwrap`'s `WrapString`).

use kclient::apimachinery::{GroupVersionKind, GroupVersionResource};
use kclient::discovery::{ExplainedField, FieldSummary};
use serde_json::Value;

/// Reads `kubectl explain`'s argument `RESOURCE[.FIELD...]` where the resource may be named
/// with its group (`deployments.apps.spec.replicas`), as kubectl does without `--api-version`
/// (`SplitAndParseResourceRequestWithMatchingPrefix`): `candidates` are the resources the
/// first dot-separated part may mean, in preference order (the RESTMapper's `resources_for`);
/// the first whose `resource.group` the argument starts with is the resource, and what
/// follows it the field path. `None` when none matches: the first part alone names the
/// resource and every later part is a field.
pub fn match_group_resource<'a>(
    target: &'a str,
    candidates: &[GroupVersionResource],
) -> Option<(GroupVersionResource, Vec<&'a str>)> {
    let target = target.strip_suffix('.').unwrap_or(target);
    candidates.iter().find_map(|candidate| {
        let prefix = candidate.group_resource().to_string();
        let rest = target.strip_prefix(prefix.as_str())?;
        // At a dot (or the end): `deployments.appsx` does not name `deployments.apps`.
        let fields = match rest.strip_prefix('.') {
            Some(fields) => fields.split('.').filter(|f| !f.is_empty()).collect(),
            None if rest.is_empty() => Vec::new(),
            None => return None,
        };
        Some((candidate.clone(), fields))
    })
}

/// How many enum values a `FIELDS:` entry shows before `, ....`.
const SHORT_ENUM_LIMIT: usize = 4;

/// `kubectl explain`'s header for `gvk`: `GROUP:` (but for the core group), `KIND:`,
/// `VERSION:` and a blank line. kubectl prints it before it finds that a field does not
/// exist, too.
pub fn render_explain_header(gvk: &GroupVersionKind) -> String {
    let mut out = String::new();
    if !gvk.group.is_empty() {
        out.push_str(&format!("GROUP:      {}\n", gvk.group));
    }
    out.push_str(&format!(
        "KIND:       {}\nVERSION:    {}\n\n",
        gvk.kind, gvk.version
    ));
    out
}

/// `kubectl explain`'s text for `field` of `gvk`; with `recursive` (`kubectl explain
/// --recursive`, for a field from `explain_recursive`) the `FIELDS:` list shows each field on
/// one line, without its description, and its subfields under it, indented by two spaces a
/// level.
pub fn render_explain(gvk: &GroupVersionKind, field: &ExplainedField, recursive: bool) -> String {
    let mut out = render_explain_header(gvk);
    if !field.name.is_empty() {
        out.push_str(&format!("FIELD: {} <{}>\n", field.name, field.type_name));
        if !field.enum_values.is_empty() {
            out.push_str("ENUM:");
            for value in &field.enum_values {
                out.push_str("\n    ");
                out.push_str(&enum_text(value));
            }
        }
        out.push_str("\n\n");
    }
    out.push_str("DESCRIPTION:\n");
    let description = if field.description.is_empty() {
        "<empty>".to_owned()
    } else {
        format!("{}\n", field.description)
    };
    out.push_str(&indent(&wrap_words(&description, 76), 4));
    out.push('\n');
    if !field.fields.is_empty() {
        out.push_str("FIELDS:\n");
        field_list(&mut out, &field.fields, 1, recursive);
    }
    out.push('\n');
    out
}

/// kubectl's `fieldList` of `fields` at `level` (indented by two spaces a level): each field's
/// line (`fieldDetail`), then its description, or, when `recursive`, its own subfields.
fn field_list(out: &mut String, fields: &[FieldSummary], level: usize, recursive: bool) {
    let pad = " ".repeat(level * 2);
    for f in fields {
        out.push_str(&format!("{pad}{}\t<{}>", f.name, f.type_name));
        if f.required {
            out.push_str(" -required-");
        }
        if !f.enum_values.is_empty() {
            out.push_str(&format!("\n{pad}enum: "));
            for (i, value) in f.enum_values.iter().enumerate() {
                if i >= SHORT_ENUM_LIMIT {
                    out.push_str(", ....");
                    break;
                }
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&enum_text(value));
            }
        }
        out.push('\n');
        if recursive {
            field_list(out, &f.fields, level + 1, true);
        } else {
            out.push_str(&indent(
                &wrap_words(&f.description, 78 - level * 2),
                level * 2 + 2,
            ));
            out.push_str("\n\n");
        }
    }
}

/// An enum value as kubectl's template prints it; the empty string shows as `""`.
fn enum_text(value: &Value) -> String {
    match value {
        Value::String(s) if s.is_empty() => "\"\"".to_owned(),
        other => go_text(other),
    }
}

/// A JSON value as Go's `%v` prints it once `encoding/json` has read it into an `any`
/// (kubectl reads the OpenAPI document so): a number is a float64, `null` is `<nil>`, a list
/// is `[a b]` and an object `map[k:v ...]` with its keys in order.
fn go_text(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_float(n.as_f64().unwrap_or_default()),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_text).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let entries: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", go_text(v)))
                .collect();
            format!("map[{}]", entries.join(" "))
        }
    }
}

/// A float64 as Go's `%v` prints it (`strconv`'s `'g'` format with the shortest digits):
/// with an exponent (`1e+06`, `1.5e-05`) when the exponent is below -4 or at least 6, else
/// as a plain decimal (`100000`, `0.0001`).
fn go_float(f: f64) -> String {
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if f != 0.0 && !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
    } else {
        f.to_string()
    }
}

/// Prefixes `text` and every line after a newline with `amount` spaces (a trailing newline
/// gets its padding too, as kubectl's `indent` does).
fn indent(text: &str, amount: usize) -> String {
    let pad = " ".repeat(amount);
    format!("{pad}{}", text.replace('\n', &format!("\n{pad}")))
}

/// Wraps `text` at whitespace so that lines stay within `limit` characters where words allow
/// (`go-wordwrap`'s `WrapString`): existing newlines are kept, a word longer than the limit
/// is left whole, and the spaces where a line is broken are dropped.
pub fn wrap_words(text: &str, limit: usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut current = 0;
    let (mut word, mut space) = (String::new(), String::new());
    let (mut word_len, mut space_len) = (0, 0);
    for c in text.chars() {
        if c == '\n' {
            if word_len == 0 {
                if current + space_len <= limit {
                    out.push_str(&space);
                }
            } else {
                out.push_str(&space);
                out.push_str(&word);
            }
            space.clear();
            word.clear();
            (space_len, word_len) = (0, 0);
            out.push('\n');
            current = 0;
        } else if c.is_whitespace() && c != '\u{a0}' {
            if space_len == 0 || word_len > 0 {
                current += space_len + word_len;
                out.push_str(&space);
                out.push_str(&word);
                space.clear();
                word.clear();
                (space_len, word_len) = (0, 0);
            }
            space.push(c);
            space_len += 1;
        } else {
            word.push(c);
            word_len += 1;
            if current + space_len + word_len > limit && word_len < limit {
                out.push('\n');
                current = 0;
                space.clear();
                space_len = 0;
            }
        }
    }
    if word_len == 0 {
        if current + space_len <= limit {
            out.push_str(&space);
        }
    } else {
        out.push_str(&space);
        out.push_str(&word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn wraps_at_spaces_keeps_newlines_and_long_words() {
        assert_eq!(wrap_words("aaa bbb ccc", 7), "aaa bbb\nccc");
        assert_eq!(wrap_words("one\n\ntwo three", 8), "one\n\ntwo\nthree");
        assert_eq!(wrap_words("a verylongword b", 5), "a\nverylongword\nb");
        assert_eq!(wrap_words("end.\n", 76), "end.\n");
    }

    #[test]
    fn a_resource_named_with_its_group_is_split_from_its_fields() {
        let candidates = [
            GroupVersionResource::new("", "v1", "events"),
            GroupVersionResource::new("events.k8s.io", "v1", "events"),
        ];
        let deployments = [GroupVersionResource::new("apps", "v1", "deployments")];
        assert_eq!(
            match_group_resource("deployments.apps.spec.replicas", &deployments),
            Some((deployments[0].clone(), vec!["spec", "replicas"]))
        );
        assert_eq!(
            match_group_resource("deployments.apps.", &deployments),
            Some((deployments[0].clone(), vec![]))
        );
        // Not a group: the first part alone is the resource.
        assert_eq!(match_group_resource("deployments.spec", &deployments), None);
        assert_eq!(
            match_group_resource("deployments.appsx", &deployments),
            None
        );
        // The first candidate that matches wins, as in kubectl (core events before
        // events.k8s.io's, whose name the core one's prefixes).
        assert_eq!(
            match_group_resource("events.reason", &candidates),
            Some((candidates[0].clone(), vec!["reason"]))
        );
    }

    /// kubectl reads the OpenAPI document into Go values and prints an enum's values with
    /// `%v`: numbers as a float64 (`1e+06`), `null` as `<nil>`, lists and maps Go's way.
    #[test]
    fn enum_values_print_as_go_prints_them() {
        let texts: Vec<String> = [
            json!(""),
            json!("A"),
            json!(1),
            json!(-7),
            json!(100000),
            json!(1000000),
            json!(123456789012_i64),
            json!(1.5),
            json!(2.0),
            json!(0.0001),
            json!(0.00001),
            json!(-0.000123),
            json!(1e100),
            json!(true),
            json!(null),
            json!(["a", 1000000]),
            json!({"b": null, "a": 1}),
        ]
        .iter()
        .map(enum_text)
        .collect();
        assert_eq!(
            texts,
            [
                "\"\"",
                "A",
                "1",
                "-7",
                "100000",
                "1e+06",
                "1.23456789012e+11",
                "1.5",
                "2",
                "0.0001",
                "1e-05",
                "-0.000123",
                "1e+100",
                "true",
                "<nil>",
                "[a 1e+06]",
                "map[a:1 b:<nil>]",
            ]
        );
    }

    #[test]
    fn lays_out_a_field_as_kubectl() {
        let gvk = GroupVersionKind::new("apps", "v1", "Deployment");
        let field = ExplainedField {
            name: "strategy".into(),
            type_name: "DeploymentStrategy".into(),
            enum_values: vec![],
            description: "How to replace pods.".into(),
            fields: vec![FieldSummary {
                name: "type".into(),
                type_name: "string".into(),
                required: true,
                description: "Type.".into(),
                enum_values: vec!["".into(), "A".into()],
                fields: vec![],
            }],
        };
        assert_eq!(
            render_explain(&gvk, &field, false),
            "GROUP:      apps\nKIND:       Deployment\nVERSION:    v1\n\n\
             FIELD: strategy <DeploymentStrategy>\n\n\n\
             DESCRIPTION:\n    How to replace pods.\n    \n\
             FIELDS:\n  type\t<string> -required-\n  enum: \"\", A\n    Type.\n\n\n"
        );
    }
}
