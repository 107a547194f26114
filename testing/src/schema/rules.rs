//! A custom resource's CEL rules (`x-kubernetes-validations`), evaluated as kube-apiserver
//! evaluates them after the OpenAPI checks (feature `cel`, with the `cel` crate): each rule
//! of a schema node with `self` bound to the node's value, and a transition rule (one that
//! names `oldSelf`) on an update only, with `oldSelf` bound to the same value in the object
//! before the write (found by field name, map key, or the key of a `map` list's item; an
//! item of a `set` or an atomic list has none, and neither has a value that was `null`). A rule that yields false gives
//! the server's cause: its `reason` (`FieldValueInvalid` unless it says), at its node or
//! its `fieldPath` below it, with its `message`, its `messageExpression`'s value, or
//! `failed rule: <rule>`; one that fails to evaluate (`no such key: x`) says so, as the
//! server does.
//!
//! Rules run in the environment of [`environment`]: CEL's standard library and every
//! library kube-apiserver declares for CRD rules, timestamps and durations among them (a
//! `date-time` string is a timestamp, as on the server).
//!
//! What the fake leaves out: the server's checks when the CRD is written (a rule that does
//! not compile or type-check, or whose estimated cost is over the budget, is refused there;
//! the fake skips a rule the `cel` crate cannot parse, and evaluates one that would not
//! type-check), the cost limit at run time, and the server's other ways to name fields in
//! a `fieldPath`. A transition rule with `optionalOldSelf: true` runs on creates too, with
//! `oldSelf` an optional (`optional.none()` where there is no old value). A value an
//! update leaves as it was is evaluated too, and a rule that does not name `oldSelf` and
//! yields false there passes (ratcheting, as in `validation`); an evaluation error does
//! not. A map's value is named by its key in brackets
//! (`spec.limits[cpu]`), as the server names it.

mod comprehensions;
mod environment;
mod format;
mod ip;
mod lists;
mod netip;
mod quantity;
mod regex;
mod semver;
mod url;

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use cel::{Context, ExecutionError, Program};

use environment::{KUBERNETES, environment};
use serde_json::Value;

use super::StructuralSchema;
use super::formats::{date_parts, digits};
use super::validation::{Cause, go_value, join};

/// One `x-kubernetes-validations` entry, compiled.
#[derive(Clone)]
pub(super) struct Rule {
    source: String,
    message: Option<String>,
    message_expression: Option<Arc<Program>>,
    reason: Option<String>,
    field_path: Option<String>,
    /// Whether the rule names `oldSelf`, so that it holds between versions of the object.
    transition: bool,
    /// `optionalOldSelf: true`: a transition rule that also runs where there is no old
    /// value (a create), with `oldSelf` an optional (`optional.none()` there).
    optional_old_self: bool,
    program: Arc<Program>,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rule").field("rule", &self.source).finish()
    }
}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        (&self.source, &self.message, &self.reason, &self.field_path)
            == (
                &other.source,
                &other.message,
                &other.reason,
                &other.field_path,
            )
            && self.optional_old_self == other.optional_old_self
    }
}

impl Rule {
    /// How an evaluation error names the rule: by its message, if it has one.
    fn named(&self) -> &str {
        self.message.as_deref().unwrap_or(self.source.trim())
    }

    /// The rules of one schema node; those the `cel` crate cannot parse are left out.
    pub(super) fn read_all(schema: &Value) -> Vec<Rule> {
        schema["x-kubernetes-validations"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|entry| {
                let source = entry["rule"].as_str()?.to_owned();
                let program = compile(&source)?;
                let text = |key: &str| entry[key].as_str().map(str::to_owned);
                Some(Rule {
                    transition: names_old_self(&source),
                    optional_old_self: entry["optionalOldSelf"].as_bool() == Some(true),
                    message_expression: entry["messageExpression"]
                        .as_str()
                        .and_then(compile)
                        .map(Arc::new),
                    message: text("message").filter(|m| !m.is_empty()),
                    reason: text("reason"),
                    field_path: text("fieldPath").filter(|p| !p.is_empty()),
                    program: Arc::new(program),
                    source,
                })
            })
            .collect()
    }
}

/// A rule's `fieldPath` as the server names the field: `.spec.x` as `spec.x`, a map key
/// `['k']` as `[k]`.
fn field_path(path: &str) -> String {
    path.trim_start_matches('.')
        .replace("['", "[")
        .replace("']", "]")
}

/// Whether a rule names the identifier `oldSelf` (outside a string it would, inside one
/// it might: the server decides by the compiled expression, the fake by the text).
fn names_old_self(source: &str) -> bool {
    source.match_indices("oldSelf").any(|(i, _)| {
        let before = source[..i].chars().next_back();
        let after = source[i + "oldSelf".len()..].chars().next();
        let ident = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        !ident(before) && !ident(after)
    })
}

impl StructuralSchema {
    /// Evaluates the rules at this node and below for `value` at `path` (`old` the same
    /// value before the write, on an update), each node's rules before its children's.
    /// A value left as it was is evaluated too, but a rule that does not name `oldSelf`
    /// and yields false there passes (ratcheting); its evaluation errors do not.
    pub(super) fn check_rules(
        &self,
        value: &Value,
        old: Option<&Value>,
        path: &str,
        out: &mut Vec<Cause>,
    ) {
        if !self.rules || value.is_null() {
            return;
        }
        // No old value, or a null one: no transition rule.
        let old = old.filter(|o| !o.is_null());
        if !self.cel.is_empty() {
            // The node's values, converted once for all its rules: `oldSelf` plain, and,
            // for rules with `optionalOldSelf`, an optional (empty where there is none).
            let self_cel = self.to_cel(value);
            let old_cel = old.map(|o| self.to_cel(o));
            let mut context = Context::with_env(Arc::clone(environment()));
            context.add_variable_from_value("self", self_cel.clone());
            if let Some(old_cel) = &old_cel {
                context.add_variable_from_value("oldSelf", old_cel.clone());
            }
            let optional = self
                .cel
                .iter()
                .any(|rule| rule.transition && rule.optional_old_self)
                .then(|| {
                    let mut optional = Context::with_env(Arc::clone(environment()));
                    optional.add_variable_from_value("self", self_cel);
                    let old_value =
                        old_cel.and_then(|o| Box::<dyn cel::common::value::Val>::try_from(o).ok());
                    optional.add_variable_as_val(
                        "oldSelf",
                        Box::new(cel::common::types::CelOptional::from(old_value)),
                    );
                    optional
                });
            let unchanged = self.unchanged(value, old);
            for rule in &self.cel {
                let ratchets = unchanged && !rule.transition;
                let context = match &optional {
                    Some(optional) if rule.transition && rule.optional_old_self => optional,
                    _ if rule.transition && old.is_none() => continue,
                    _ => &context,
                };
                self.evaluate(rule, (context, value), path, ratchets, out);
            }
        }
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    if let Some((schema, child)) = self.member_at(path, k) {
                        schema.check_rules(v, old.and_then(|o| o.get(k)), &child, out);
                    }
                }
            }
            Value::Array(items) => {
                let Some(schema) = &self.items else {
                    return;
                };
                let old_items = old.and_then(Value::as_array);
                for (i, item) in items.iter().enumerate() {
                    let before = old_items.and_then(|olds| self.correlate(item, olds));
                    schema.check_rules(item, before, &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }

    /// One rule, in `context` (`self`, and `oldSelf` on an update, bound to `value` and
    /// its old value): `ratchets` when the value is unchanged and the rule does not name
    /// `oldSelf`, so that its false result passes.
    fn evaluate(
        &self,
        rule: &Rule,
        (context, value): (&Context<'_, '_>, &Value),
        path: &str,
        ratchets: bool,
        out: &mut Vec<Cause>,
    ) {
        let type_name = self.value_type.as_deref().unwrap_or("object");
        match run(&rule.program, context) {
            Ok(cel::Value::Bool(true)) => {}
            Ok(cel::Value::Bool(false)) if ratchets => {}
            Ok(cel::Value::Bool(false)) => {
                // A messageExpression's value, trimmed, unless empty, over 5 KiB or on
                // more than one line; else the message; else the rule.
                let message = rule
                    .message_expression
                    .as_ref()
                    .and_then(|m| match run(m, context) {
                        Ok(cel::Value::String(s)) => {
                            let s = s.trim();
                            let usable = !s.is_empty() && s.len() <= 5 * 1024 && !s.contains('\n');
                            usable.then(|| s.to_owned())
                        }
                        _ => None,
                    })
                    .or_else(|| rule.message.clone())
                    .unwrap_or_else(|| format!("failed rule: {}", rule.source.trim()));
                let field = match &rule.field_path {
                    Some(below) => join(path, &field_path(below)),
                    None => path.to_owned(),
                };
                out.push(match rule.reason.as_deref() {
                    Some("FieldValueForbidden") => {
                        ("FieldValueForbidden", field, format!("Forbidden: {message}"))
                    }
                    Some("FieldValueRequired") => {
                        ("FieldValueRequired", field, format!("Required value: {message}"))
                    }
                    Some("FieldValueDuplicate") => (
                        "FieldValueDuplicate",
                        field,
                        match value {
                            Value::Object(_) | Value::Array(_) => "Duplicate value".to_owned(),
                            scalar => format!("Duplicate value: {}", go_value(scalar)),
                        },
                    ),
                    _ => (
                        "FieldValueInvalid",
                        field,
                        match value {
                            Value::Object(_) | Value::Array(_) => {
                                format!("Invalid value: {message}")
                            }
                            scalar => format!("Invalid value: {}: {message}", go_value(scalar)),
                        },
                    ),
                });
            }
            Ok(other) => out.push((
                "FieldValueInvalid",
                path.to_owned(),
                format!(
                    "Invalid value: {type_name:?}: rule did not evaluate to a bool ({other:?}) evaluating rule: {}",
                    rule.named()
                ),
            )),
            Err(e) => {
                let error = cel_error(&e);
                // The server words an error about a call's argument types its own way.
                let message = if matches!(e, ExecutionError::NoSuchOverload(_))
                    || error.contains("no such overload")
                {
                    format!(
                        "Invalid value: {type_name:?}: 'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {}",
                        rule.named()
                    )
                } else {
                    format!(
                        "Invalid value: {type_name:?}: {error} evaluating rule: {}",
                        rule.named()
                    )
                };
                out.push(("FieldValueInvalid", path.to_owned(), message));
            }
        }
    }

    /// A value as the server's CEL sees it, by this schema: an `integer` an int, a
    /// `number` a double (a whole one too), an object with properties or a map a map of
    /// its fields, a list a list; what the schema does not type, by the JSON.
    fn to_cel(&self, value: &Value) -> cel::Value {
        match value {
            Value::Null => cel::Value::Null,
            Value::Bool(b) => cel::Value::Bool(*b),
            Value::Number(n) => match (self.value_type.as_deref(), n.as_i64()) {
                (Some("number"), _) | (_, None) => cel::Value::Float(n.as_f64().unwrap_or(0.0)),
                (_, Some(i)) => cel::Value::Int(i),
            },
            Value::String(s) => self.string_to_cel(s),
            Value::Array(items) => {
                let schema = self.items.as_deref();
                cel::Value::List(Arc::new(
                    items
                        .iter()
                        .map(|item| schema.map_or_else(|| untyped(item), |s| s.to_cel(item)))
                        .collect(),
                ))
            }
            Value::Object(map) => {
                let fields: HashMap<String, cel::Value> = map
                    .iter()
                    .map(|(k, v)| {
                        let member = self.member(k);
                        (
                            k.clone(),
                            member.map_or_else(|| untyped(v), |s| s.to_cel(v)),
                        )
                    })
                    .collect();
                cel::Value::from(fields)
            }
        }
    }
}

impl StructuralSchema {
    /// A string as the server's CEL sees it, by its format: `duration` a duration (as
    /// kube-openapi's `strfmt.ParseDuration` reads it), `date` and `date-time` a timestamp
    /// (`date-time` in one of kube-openapi's layouts: RFC 3339 with or without a zone,
    /// whose absence means UTC), `byte` bytes (standard base64). A value the OpenAPI check
    /// passed and these do not read (`2024-01-01t00:00:00z`, lowercase) stays a string
    /// here; on the server, a rule that reads it fails to evaluate.
    fn string_to_cel(&self, s: &str) -> cel::Value {
        let converted = match self.limits.format.as_deref() {
            Some("duration") => super::durations::parse_duration(s)
                .map(|nanos| cel::Value::Duration(chrono::Duration::nanoseconds(nanos))),
            Some("date") => parse_date(s).map(cel::Value::Timestamp),
            Some("date-time") => parse_date_time(s).map(cel::Value::Timestamp),
            Some("byte") => {
                use base64::Engine as _;
                const LENIENT: base64::engine::GeneralPurpose = base64::engine::GeneralPurpose::new(
                    &base64::alphabet::STANDARD,
                    base64::engine::GeneralPurposeConfig::new()
                        .with_decode_allow_trailing_bits(true),
                );
                LENIENT
                    .decode(s)
                    .ok()
                    .map(|bytes| cel::Value::Bytes(Arc::new(bytes)))
            }
            _ => None,
        };
        converted.unwrap_or_else(|| cel::Value::String(Arc::new(s.to_owned())))
    }
}

/// Go's `time.Parse("2006-01-02", s)`: midnight UTC of that day.
fn parse_date(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let (year, month, day) = date_parts(s)?;
    let date = chrono::NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    Some(date.and_hms_opt(0, 0, 0)?.and_utc().fixed_offset())
}

/// kube-openapi's `strfmt.ParseDateTime`: Go's `time.Parse` with RFC 3339 layouts
/// (`2006-01-02T15:04:05` and a fraction, then `Z` or `±hh:mm`, or nothing for UTC).
fn parse_date_time(s: &str) -> Option<chrono::DateTime<chrono::FixedOffset>> {
    let (date, rest) = (s.get(..10)?, s.get(10..)?);
    let rest = rest.strip_prefix('T')?;
    let day = parse_date(date)?;
    let b = rest.as_bytes();
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let (hour, minute, second) = (
        digits(rest, 0..2)?,
        digits(rest, 3..5)?,
        digits(rest, 6..8)?,
    );
    let mut tail = &rest[8..];
    let mut nanos = 0u32;
    if let Some(fraction) = tail.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        // Go reads at most nine digits of a fraction.
        let kept = &fraction[..digits.min(9)];
        nanos = kept.parse::<u32>().ok()? * 10u32.pow(9 - kept.len() as u32);
        tail = &fraction[digits..];
    }
    let offset_seconds = match tail {
        "" | "Z" => 0,
        zone => {
            let zb = zone.as_bytes();
            if zb.len() != 6 || zb[3] != b':' || !matches!(zb[0], b'+' | b'-') {
                return None;
            }
            let hours: i32 = zone.get(1..3)?.parse().ok()?;
            let minutes: i32 = zone.get(4..6)?.parse().ok()?;
            if hours > 23 || minutes > 59 {
                return None;
            }
            let total = hours * 3600 + minutes * 60;
            if zb[0] == b'-' { -total } else { total }
        }
    };
    let offset = chrono::FixedOffset::east_opt(offset_seconds)?;
    let time = chrono::NaiveTime::from_hms_nano_opt(hour, minute, second, nanos)?;
    day.date_naive()
        .and_time(time)
        .and_local_timezone(offset)
        .single()
}

/// A value the schema does not type, by its JSON alone.
fn untyped(value: &Value) -> cel::Value {
    StructuralSchema::default().to_cel(value)
}

/// Compiles a rule or message expression; `None` when the `cel` crate cannot (or panics).
fn compile(source: &str) -> Option<Program> {
    std::panic::catch_unwind(|| environment().compile(source).ok())
        .ok()
        .flatten()
}

/// Runs a program; a panic inside the `cel` crate is an evaluation error, not the test's.
fn run(program: &Program, context: &Context<'_, '_>) -> Result<cel::Value, ExecutionError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| program.execute(context)))
        .unwrap_or_else(|_| Err(ExecutionError::function_error("cel", "evaluation panicked")))
}

/// An evaluation error in cel-go's words where the two agree on the case.
pub(super) fn cel_error(e: &ExecutionError) -> String {
    match e {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::FunctionError { function, message } if function == KUBERNETES => {
            message.clone()
        }
        // A string `duration()` or `timestamp()` cannot read: cel-go's words, which name
        // the type and not the fault.
        ExecutionError::FunctionError { function, .. } if function == "duration" => {
            "type conversion error from 'string' to 'google.protobuf.Duration'".to_owned()
        }
        ExecutionError::FunctionError { function, .. } if function == "timestamp" => {
            "type conversion error from 'string' to 'google.protobuf.Timestamp'".to_owned()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::names_old_self;

    #[test]
    fn a_transition_rule_names_old_self() {
        assert!(names_old_self("self == oldSelf"));
        assert!(names_old_self("oldSelf.x <= self.x"));
        assert!(!names_old_self("self.oldSelfish == 1"));
        assert!(!names_old_self("self > 0"));
    }
}
