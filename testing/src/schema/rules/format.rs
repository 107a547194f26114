//! Kubernetes' `format` library: `format.named(<string>)` (an optional format),
//! `format.<name>()`, and `<format>.validate(<string>)`, which gives `optional.none()` for
//! a valid string and otherwise the list of what is wrong, in apimachinery's words
//! (`IsDNS1123Label`, `IsQualifiedName`, ...; v0.36), or strfmt's for the OpenAPI
//! formats.

use std::sync::LazyLock;

use cel::common::types::{CelList, CelOptional, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use regex::Regex;

use super::environment::{library_value, no_overload, string_arg, take};
use crate::names::{SUBDOMAIN_MAX, dns1123_label, dns1123_subdomain, regex_error, whole};
use crate::schema::formats;

/// The CEL type of a format.
static FORMAT_TYPE: Type = Type::new_unspecified_type("kubernetes.NamedFormat");

/// The formats, by the name `format.named` takes.
const NAMES: [&str; 13] = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

type Function = for<'b, 'v> fn(Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError>;

/// Registers the type and the functions on `env`.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(FORMAT_TYPE.to_owned())?;
    env.add_overload("format.named", "k8s.format.named", vec![STRING_TYPE], named)?;
    env.add_member_overload(
        "validate",
        "k8s.format.validate",
        FORMAT_TYPE.to_owned(),
        vec![STRING_TYPE],
        validate,
    )?;
    // One constant function per format: `format.dns1123Label()`, ...
    let constants: [Function; 13] = [
        |_| Ok(format_value(0)),
        |_| Ok(format_value(1)),
        |_| Ok(format_value(2)),
        |_| Ok(format_value(3)),
        |_| Ok(format_value(4)),
        |_| Ok(format_value(5)),
        |_| Ok(format_value(6)),
        |_| Ok(format_value(7)),
        |_| Ok(format_value(8)),
        |_| Ok(format_value(9)),
        |_| Ok(format_value(10)),
        |_| Ok(format_value(11)),
        |_| Ok(format_value(12)),
    ];
    for (name, constant) in NAMES.iter().zip(constants) {
        let full = format!("format.{name}");
        env.add_overload(&full, &format!("k8s.{full}"), vec![], constant)?;
    }
    Ok(())
}

/// A format: its index in [`NAMES`].
#[derive(Debug, Clone, PartialEq, Eq)]
struct Format(usize);

library_value!(Format, FORMAT_TYPE, |a, b| a == b);

fn format_value<'b, 'v>(index: usize) -> CowVal<'b, 'v> {
    CowVal::owned(Format(index))
}

fn named<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [name] = take(args)?;
    let name = string_arg(name.as_ref())?;
    let found = NAMES
        .iter()
        .position(|n| *n == name)
        .map(|i| Box::new(Format(i)) as Box<dyn Val + 'v>);
    Ok(CowVal::owned(CelOptional::from(found)))
}

fn validate<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [format, text] = take(args)?;
    let index = format
        .downcast_ref::<Format>()
        .ok_or_else(|| no_overload(format.as_ref()))?
        .0;
    let problems = problems(NAMES[index], string_arg(text.as_ref())?);
    let result = (!problems.is_empty()).then(|| {
        let list: Vec<Box<dyn Val + 'v>> = problems
            .into_iter()
            .map(|p| Box::new(CelString::from(p)) as Box<dyn Val + 'v>)
            .collect();
        Box::new(CelList::from(list)) as Box<dyn Val + 'v>
    });
    Ok(CowVal::owned(CelOptional::from(result)))
}

const DNS1035_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";

static DNS1035: LazyLock<Regex> = LazyLock::new(|| whole(DNS1035_FMT));
static KEY: LazyLock<Regex> = LazyLock::new(|| whole(KEY_FMT));
static VALUE: LazyLock<Regex> = LazyLock::new(|| whole(VALUE_FMT));

/// `IsDNS1035Label`.
fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters".to_owned());
    }
    if !DNS1035.is_match(value) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            DNS1035_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsQualifiedName` (`content.IsLabelKey`).
fn qualified_name(value: &str) -> Vec<String> {
    const KEY_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
    let key_error = || regex_error(KEY_MESSAGE, KEY_FMT, &["MyName", "my.name", "123-abc"]);
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_owned());
            } else {
                errs.extend(
                    dns1123_subdomain(prefix, SUBDOMAIN_MAX, "bytes")
                        .into_iter()
                        .map(|e| format!("prefix part {e}")),
                );
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                key_error()
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 bytes".to_owned());
    }
    if !KEY.is_match(name) {
        errs.push(format!("name part {}", key_error()));
    }
    errs
}

/// `IsValidLabelValue` (`content.IsLabelValue`).
fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 bytes".to_owned());
    }
    if !VALUE.is_match(value) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// apimachinery's `maskTrailingDash`, for the `...Prefix` formats: a name of more than
/// one character that ends in `-` loses its last two characters and gains an `a`.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        format!("{}a", &name[..name.len() - 2])
    } else {
        name.to_owned()
    }
}

/// What is wrong with `value` in the format `name`.
fn problems(name: &str, value: &str) -> Vec<String> {
    let openapi = |format: &str, problem: &str| {
        if formats::conforms(format, value) == Some(false) {
            vec![problem.to_owned()]
        } else {
            Vec::new()
        }
    };
    match name {
        "dns1123Label" => dns1123_label(value),
        "dns1123Subdomain" => dns1123_subdomain(value, SUBDOMAIN_MAX, "characters"),
        "dns1035Label" => dns1035_label(value),
        "qualifiedName" => qualified_name(value),
        "dns1123LabelPrefix" => dns1123_label(&mask_trailing_dash(value)),
        "dns1123SubdomainPrefix" => {
            dns1123_subdomain(&mask_trailing_dash(value), SUBDOMAIN_MAX, "characters")
        }
        "dns1035LabelPrefix" => dns1035_label(&mask_trailing_dash(value)),
        "labelValue" => label_value(value),
        "uri" => match super::url::parse(value, true) {
            Ok(_) => Vec::new(),
            Err(e) => vec![format!(
                "parse {}: {e}",
                crate::schema::validation::go_quote(value)
            )],
        },
        "uuid" => openapi("uuid", "does not match the UUID format"),
        "byte" => openapi("byte", "invalid base64"),
        "date" => openapi("date", "invalid date"),
        _ => openapi("datetime", "invalid datetime"),
    }
}
