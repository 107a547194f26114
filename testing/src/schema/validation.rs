//! A custom resource validated by its CRD's schema, as kube-apiserver validates one on every
//! write, in its words: first the OpenAPI checks of each node (type; a string's length,
//! pattern and format; a number's range, `multipleOf` and bounds; a list's items and size;
//! `enum`; an object's size, required fields and fields), then the list types (`set` items
//! and `map` keys unique). Every cause is (reason, field, message).
//!
//! An update ratchets, as on the server since Kubernetes 1.33: a value left as it was (the
//! same field, map value, or `map` list item by key, before the write; a `map` list in
//! another order counts as the same; an item of a `set` or an atomic list is matched with
//! none) passes whatever the schema now says, with all below it; an object the update changed is checked
//! for its own size and required fields; and when the object before the update repeated an
//! item or key in any list, no list of the update is checked for repeats.
//!
//! CEL rules (`x-kubernetes-validations`) come last, with the feature `cel` (see `rules`);
//! where a schema has them, a write the other checks refuse gets the server's note that its
//! rules were not checked instead, with the feature or without. What the fake leaves out:
//! CEL rules without the feature, and the formats named in [`formats`].
//! The server lists several
//! causes in the order it walks Go maps, which varies; the fake lists an object's fields
//! in name order.

use std::collections::BTreeMap;

use regex::Regex;
use serde_json::{Map, Number, Value};

use super::{StructuralSchema, formats};

/// One cause of a refusal: reason, field, message.
pub(crate) type Cause = (&'static str, String, String);

const INVALID: &str = "FieldValueInvalid";
/// The fields of an object the schema validates only in part (see `validate`).
const IDENTITY: [&str; 3] = ["apiVersion", "kind", "metadata"];
const TYPE_INVALID: &str = "FieldValueTypeInvalid";

/// The bounds a schema node sets on its value, beyond its type and `enum`.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Limits {
    /// `format`, as written.
    pub(super) format: Option<String>,
    minimum: Option<f64>,
    maximum: Option<f64>,
    exclusive_minimum: bool,
    exclusive_maximum: bool,
    multiple_of: Option<f64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    pattern: Option<Pattern>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
}

/// A `pattern`, compiled once; `None` when the regex crate does not take what Go's
/// `regexp` does, and then not checked.
#[derive(Debug, Clone)]
struct Pattern {
    source: String,
    regex: Option<Regex>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Limits {
    /// Reads a node's limits from its OpenAPI v3 schema.
    pub(super) fn read(schema: &Value) -> Self {
        let number = |key: &str| schema[key].as_f64();
        let count = |key: &str| schema[key].as_u64();
        let flag = |key: &str| schema[key].as_bool() == Some(true);
        Limits {
            format: schema["format"].as_str().map(str::to_owned),
            minimum: number("minimum"),
            maximum: number("maximum"),
            exclusive_minimum: flag("exclusiveMinimum"),
            exclusive_maximum: flag("exclusiveMaximum"),
            multiple_of: number("multipleOf"),
            min_length: count("minLength"),
            max_length: count("maxLength"),
            pattern: schema["pattern"].as_str().map(|p| Pattern {
                source: p.to_owned(),
                regex: Regex::new(&ascii_classes(p)).ok(),
            }),
            min_items: count("minItems"),
            max_items: count("maxItems"),
            min_properties: count("minProperties"),
            max_properties: count("maxProperties"),
        }
    }
}

/// A Go pattern for the regex crate: Go's `\d`, `\w` and `\s` (also inside a class) and
/// `\b` match ASCII only, the regex crate's any script, so they become ASCII classes and
/// an ASCII boundary; Go's `\<` and `\>` are the characters, the regex crate's word
/// boundaries.
pub(super) fn ascii_classes(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('d') => out.push_str("[0-9]"),
            Some('D') => out.push_str("[^0-9]"),
            Some('w') => out.push_str("[0-9A-Za-z_]"),
            Some('W') => out.push_str("[^0-9A-Za-z_]"),
            Some('s') => out.push_str(r"[\t\n\f\r ]"),
            Some('S') => out.push_str(r"[^\t\n\f\r ]"),
            Some('b') => out.push_str(r"(?-u:\b)"),
            Some('B') => out.push_str(r"(?-u:\B)"),
            Some(c @ ('<' | '>')) => out.push(c),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

impl StructuralSchema {
    /// What the server's validation of a custom resource by its schema finds wrong with
    /// `object` (see the module docs). `old` is the object before the write, on an
    /// update: a value left as it was there passes whatever the schema says now
    /// (ratcheting, as the server does since Kubernetes 1.33), and CEL's transition rules
    /// hold between the two (feature `cel`).
    pub(crate) fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut out = Vec::new();
        if let Some(map) = object.as_object() {
            self.check_object(map, old, ("", ""), &IDENTITY, &mut out);
            // Of `metadata`, a schema may constrain the name and generateName only.
            if let (Some(schema), Some(meta)) =
                (self.properties.get("metadata"), map.get("metadata"))
            {
                for name in ["name", "generateName"] {
                    if let (Some(field), Some(value)) =
                        (schema.properties.get(name), meta.get(name))
                    {
                        let before = old.and_then(|o| o["metadata"].get(name));
                        field.check(value, before, ("", &format!("metadata.{name}")), &mut out);
                    }
                }
            }
            if !old.is_some_and(|old| self.repeats_anywhere(old)) {
                self.check_root_list_types(map, &mut out);
            }
        }
        self.check_cel(object, old, &mut out);
        out
    }

    /// The CEL rules, last: evaluated (feature `cel`) unless another check found the
    /// object of the wrong shape for them, and then the server's note that they were not.
    fn check_cel(&self, object: &Value, old: Option<&Value>, out: &mut Vec<Cause>) {
        if !self.rules || self.note_rules_unchecked(out) {
            return;
        }
        #[cfg(feature = "cel")]
        self.check_rules(object, old, "", out);
        #[cfg(not(feature = "cel"))]
        let _ = (object, old);
    }

    /// The server's last cause when a schema has CEL rules and another check found the
    /// object of the wrong shape for them (a wrong type, a missing field, a value outside
    /// an `enum`, too long or too many): it then skips the rules, and says so.
    /// Whether it gave it.
    fn note_rules_unchecked(&self, out: &mut Vec<Cause>) -> bool {
        let blocking = [
            "FieldValueNotSupported",
            "FieldValueRequired",
            "FieldValueTooLong",
            "FieldValueTooMany",
            TYPE_INVALID,
        ];
        let blocked = self.rules && out.iter().any(|(reason, _, _)| blocking.contains(reason));
        if blocked {
            out.push((
                INVALID,
                "<nil>".to_owned(),
                "Invalid value: null: some validation rules were not checked because the \
                 object was invalid; correct the existing errors to complete validation"
                    .to_owned(),
            ));
        }
        blocked
    }

    /// [`validate`](Self::validate) for a write through the `status` subresource, which the
    /// server checks by the status schema alone: its messages name fields from `status`
    /// down (`count in body`), its causes from the object's root (`status.count`).
    /// Its CEL rules are those of the whole object, as for any write.
    pub(crate) fn validate_status(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut out = Vec::new();
        if let (Some(schema), Some(status)) = (self.properties.get("status"), object.get("status"))
        {
            let before = old.and_then(|o| o.get("status"));
            match status.as_object() {
                Some(_) if before == Some(status) => {}
                Some(map) => schema.check_object(map, before, ("status.", ""), &[], &mut out),
                None => schema.check(status, before, ("", "status"), &mut out),
            }
            if !old.is_some_and(|old| self.repeats_anywhere(old)) {
                schema.check_list_types(status, "status", &mut out);
            }
        }
        self.check_cel(object, old, &mut out);
        out
    }

    /// Checks `value` at `path` as the server's OpenAPI validator does, every check that
    /// applies to a value of its kind in its order, unless it equals `old`, its value
    /// before the write (ratcheting); a cause's field is `prefix` and `path`, a message
    /// names `path` alone.
    fn check(
        &self,
        value: &Value,
        old: Option<&Value>,
        (prefix, path): (&str, &str),
        out: &mut Vec<Cause>,
    ) {
        if self.unchanged(value, old) {
            return;
        }
        if value.is_null() {
            // Pruning dropped a field's `null` the schema does not allow, but not a list
            // item's, nor one a server-side apply left: those are not of the type. A null
            // is in no `enum`.
            let field = format!("{prefix}{path}");
            let typed = self.value_type.is_some() || self.int_or_string;
            if typed && !self.nullable {
                self.check_type(value, &field, path, out);
            }
            self.check_enum(value, &field, out);
            return;
        }
        let field = format!("{prefix}{path}");
        self.check_type(value, &field, path, out);
        match value {
            Value::String(s) => {
                self.check_string(s, &field, path, out);
                self.check_format(s, &field, path, out);
            }
            Value::Number(n) => {
                // The causes with no field of their own: `<nil>`, or the subresource's
                // root (`status`) on a write through it.
                let unfielded = prefix.strip_suffix('.').unwrap_or("<nil>");
                self.check_number(n, (&field, unfielded), path, out);
            }
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    let olds = old.and_then(Value::as_array);
                    for (i, item) in items.iter().enumerate() {
                        let before = olds.and_then(|olds| self.correlate(item, olds));
                        schema.check(item, before, (prefix, &format!("{path}[{i}]")), out);
                    }
                }
                let bounds = (self.limits.min_items, self.limits.max_items);
                check_size(items.len(), bounds, "items", (&field, path), out);
            }
            _ => {}
        }
        self.check_enum(value, &field, out);
        if let Value::Object(map) = value {
            self.check_object(map, old, (prefix, path), &[], out);
        }
    }

    /// Whether an object repeats an item or key in any of its `set` or `map` lists: the
    /// server then checks no list of an update to it (its list types ratchet whole).
    fn repeats_anywhere(&self, object: &Value) -> bool {
        let mut found = Vec::new();
        if let Some(map) = object.as_object() {
            self.check_root_list_types(map, &mut found);
        }
        !found.is_empty()
    }

    /// The list types' check of an object's fields, but its identity's.
    fn check_root_list_types(&self, map: &Map<String, Value>, out: &mut Vec<Cause>) {
        for (k, v) in map.iter().filter(|(k, _)| !IDENTITY.contains(&k.as_str())) {
            if let Some(field) = self.member(k) {
                field.check_list_types(v, k, out);
            }
        }
    }

    /// The item of an old list that `item` continues, for ratcheting and transition rules:
    /// the one with its key in a `map` list, the equal one in a `set`; none in an atomic
    /// list.
    pub(super) fn correlate<'v>(&self, item: &Value, olds: &'v [Value]) -> Option<&'v Value> {
        if self.list_type.as_deref() != Some("map") {
            return None;
        }
        // Every key present and a scalar, in both.
        let keyed = |v: &Value| {
            self.list_map_keys.iter().all(|k| {
                v.get(k)
                    .is_some_and(|k| !k.is_null() && !k.is_object() && !k.is_array())
            })
        };
        if !keyed(item) {
            return None;
        }
        olds.iter()
            .find(|o| keyed(o) && self.list_map_keys.iter().all(|k| o.get(k) == item.get(k)))
    }

    /// Whether `value` is `old` as the server's ratcheting compares them: a `map` list's
    /// items by key, in any order; all else as JSON.
    pub(super) fn unchanged(&self, value: &Value, old: Option<&Value>) -> bool {
        let Some(old) = old else {
            return false;
        };
        match (value, old) {
            (Value::Object(map), Value::Object(olds)) => {
                map.len() == olds.len()
                    && map.iter().all(|(k, v)| match self.member(k) {
                        Some(schema) => schema.unchanged(v, olds.get(k)),
                        None => olds.get(k) == Some(v),
                    })
            }
            (Value::Array(items), Value::Array(olds))
                if self.list_type.as_deref() == Some("map") =>
            {
                items.len() == olds.len()
                    && items.iter().all(|item| {
                        let schema = self.items.as_deref();
                        match self.correlate(item, olds) {
                            Some(o) => schema.map_or(o == item, |s| s.unchanged(item, Some(o))),
                            None => false,
                        }
                    })
            }
            _ => value == old,
        }
    }

    /// `enum`, matched as Go's validator matches: a number converted to each allowed
    /// number's type first (so `1.0` and `1.5` both match an allowed `1`, which is an int64
    /// to it), a `null` never.
    fn check_enum(&self, value: &Value, field: &str, out: &mut Vec<Cause>) {
        let Some(allowed) = self.allowed.as_ref().filter(|a| !a.is_empty()) else {
            return;
        };
        let matches = |entry: &Value| match (value, entry) {
            (Value::Null, _) => false,
            (Value::Number(v), Value::Number(e)) => match (e.as_i64(), v.as_f64()) {
                (Some(e), Some(v)) if v.is_finite() => v.trunc() == e as f64,
                (None, Some(v)) => e.as_f64() == Some(v),
                _ => false,
            },
            _ => value == entry,
        };
        if allowed.iter().any(matches) {
            return;
        }
        // Each allowed value as text (a string as it is, anything else as JSON), quoted.
        let supported: Vec<String> = allowed
            .iter()
            .map(|v| match v {
                Value::String(s) => go_quote(s),
                other => go_quote(&go_json(other)),
            })
            .collect();
        out.push((
            "FieldValueNotSupported",
            field.to_owned(),
            format!(
                "Unsupported value: {}: supported values: {}",
                go_value(value),
                supported.join(", ")
            ),
        ));
    }

    /// The type check: a value of another JSON type than the schema's. A float with no
    /// fraction (`3.0`, a float64 to the server) is an integer to it too.
    fn check_type(&self, value: &Value, field: &str, path: &str, out: &mut Vec<Cause>) {
        let actual = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            // A whole float64 counts as an integer only where the schema asks for one.
            Value::Number(n)
                if n.is_i64()
                    || (n.as_f64().is_some_and(is_json_integer)
                        && (self.value_type.as_deref() == Some("integer")
                            || self.int_or_string)) =>
            {
                "integer"
            }
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let expected = if self.int_or_string {
            Some("integer,string")
        } else {
            self.value_type.as_deref()
        };
        let fits = match expected {
            None => true,
            Some("integer,string") => matches!(actual, "integer" | "string"),
            Some("number") => matches!(actual, "integer" | "number"),
            Some(t) => t == actual,
        };
        if let Some(expected) = expected.filter(|_| !fits) {
            out.push(type_invalid(field, path, &format!("{actual:?}"), expected));
        }
    }

    /// `maxLength`, `minLength` and `pattern`, in that order, the first that fails only.
    /// Lengths count characters, as the server does (its message says bytes).
    fn check_string(&self, s: &str, field: &str, path: &str, out: &mut Vec<Cause>) {
        let limits = &self.limits;
        let length = s.chars().count() as u64;
        if let Some(max) = limits.max_length.filter(|max| length > *max) {
            let bytes = if max == 1 { "byte" } else { "bytes" };
            let message = format!("Too long: may not be more than {max} {bytes}");
            out.push(("FieldValueTooLong", field.to_owned(), message));
        } else if let Some(min) = limits.min_length.filter(|min| length < *min) {
            let message = format!("{path} in body should be at least {min} chars long");
            out.push((INVALID, field.to_owned(), invalid(&s.into(), &message)));
        } else if let Some(Pattern {
            source,
            regex: Some(regex),
        }) = &limits.pattern
            && !regex.is_match(s)
        {
            let message = format!("{path} in body should match '{source}'");
            out.push((INVALID, field.to_owned(), invalid(&s.into(), &message)));
        }
    }

    fn check_format(&self, s: &str, field: &str, path: &str, out: &mut Vec<Cause>) {
        let Some(format) = &self.limits.format else {
            return;
        };
        if formats::conforms(format, s) == Some(false) {
            out.push(type_invalid(field, path, &go_quote(s), format));
        }
    }

    /// The server's number checks: that the value fits the type and format (`int32`), then
    /// `multipleOf`, `minimum`, `maximum`. An int64 value is compared with each bound as
    /// an int64 (Go's conversion, which truncates: so a `multipleOf` under 1 is 0 to an
    /// integer, which the server refuses as not positive).
    fn check_number(
        &self,
        n: &Number,
        (field, unfielded): (&str, &str),
        path: &str,
        out: &mut Vec<Cause>,
    ) {
        let limits = &self.limits;
        let format = limits.format.as_deref().unwrap_or("");
        let value_type = self.value_type.as_deref().unwrap_or("");
        let text = match n.as_i64() {
            Some(i) => i.to_string(),
            None => format!("{}", n.as_f64().unwrap_or(0.0)),
        };
        if let Some(message) = out_of_range(&text, value_type, format, "Checked", path) {
            out.push((INVALID, unfielded.to_owned(), message));
        }
        let data = n.as_f64().unwrap_or(0.0);
        let value = Value::Number(n.clone());
        // Each bound is first checked against the type and format itself; one that does
        // not fit is compared as a float64.
        let native = |bound: f64, prefix: &str, out: &mut Vec<Cause>| {
            let text = format!("{bound}");
            match out_of_range(&text, value_type, format, prefix, path) {
                Some(message) => {
                    out.push((INVALID, unfielded.to_owned(), message));
                    None
                }
                None => n.as_i64(),
            }
        };
        if let Some(factor) = limits.multiple_of {
            match native(factor, "MultipleOf", out) {
                Some(i) => {
                    let factor = factor as i64;
                    if factor <= 0 {
                        let message = format!(
                            "factor MultipleOf declared for {path} must be positive: {factor}"
                        );
                        out.push((INVALID, field.to_owned(), invalid(&factor.into(), &message)));
                    } else if i % factor != 0 {
                        let message = format!("{path} in body should be a multiple of {factor}");
                        out.push((INVALID, field.to_owned(), invalid(&value, &message)));
                    }
                }
                None => {
                    let mult = if factor < 1.0 {
                        1.0 / factor * data
                    } else {
                        data / factor
                    };
                    if !is_json_integer(mult) {
                        let message =
                            format!("{path} in body should be a multiple of {}", go_g(factor));
                        out.push((INVALID, field.to_owned(), invalid(&value, &message)));
                    }
                }
            }
        }
        let bounds = [
            (
                limits.minimum,
                limits.exclusive_minimum,
                "Minimum boundary",
                true,
            ),
            (
                limits.maximum,
                limits.exclusive_maximum,
                "Maximum boundary",
                false,
            ),
        ];
        for (bound, exclusive, prefix, lower) in bounds {
            let Some(bound) = bound else {
                continue;
            };
            let (fails, shown) = match native(bound, prefix, out) {
                Some(i) => {
                    let b = bound as i64;
                    let fails = match (lower, exclusive) {
                        (true, false) => i < b,
                        (true, true) => i <= b,
                        (false, false) => i > b,
                        (false, true) => i >= b,
                    };
                    (fails, b.to_string())
                }
                None => {
                    let fails = match (lower, exclusive) {
                        (true, false) => data < bound,
                        (true, true) => data <= bound,
                        (false, false) => data > bound,
                        (false, true) => data >= bound,
                    };
                    (fails, go_g(bound))
                }
            };
            if fails {
                let relation = match (lower, exclusive) {
                    (true, false) => "greater than or equal to",
                    (true, true) => "greater than",
                    (false, false) => "less than or equal to",
                    (false, true) => "less than",
                };
                let message = format!("{path} in body should be {relation} {shown}");
                out.push((INVALID, field.to_owned(), invalid(&value, &message)));
            }
        }
    }

    /// Checks an object at `path` (`""` for the root): its size, its required fields, and
    /// its fields but those in `skip`.
    fn check_object(
        &self,
        map: &Map<String, Value>,
        old: Option<&Value>,
        (prefix, path): (&str, &str),
        skip: &[&str],
        out: &mut Vec<Cause>,
    ) {
        let field = format!("{prefix}{path}");
        let bounds = (self.limits.min_properties, self.limits.max_properties);
        check_size(map.len(), bounds, "properties", (&field, path), out);
        for name in &self.required {
            if !map.contains_key(name) {
                out.push((
                    "FieldValueRequired",
                    join(&field, name),
                    "Required value".to_owned(),
                ));
            }
        }
        for (k, v) in map.iter().filter(|(k, _)| !skip.contains(&k.as_str())) {
            if let Some(schema) = self.member(k) {
                let before = old.and_then(|o| o.get(k));
                schema.check(v, before, (prefix, &join(path, k)), out);
            }
        }
    }

    /// The list types' check, after the OpenAPI checks: each item of a `set` and each key
    /// of a `map` list once. A repeated one is named at its second place only.
    fn check_list_types(&self, value: &Value, path: &str, out: &mut Vec<Cause>) {
        match value {
            Value::Array(items) => {
                for (i, shown) in self.repeats(items) {
                    let message = format!("Duplicate value: {shown}");
                    out.push(("FieldValueDuplicate", format!("{path}[{i}]"), message));
                }
                if let Some(schema) = &self.items {
                    for (i, item) in items.iter().enumerate() {
                        schema.check_list_types(item, &format!("{path}[{i}]"), out);
                    }
                }
            }
            Value::Object(map) => {
                for (k, v) in map {
                    if let Some((schema, child)) = self.member_at(path, k) {
                        schema.check_list_types(v, &child, out);
                    }
                }
            }
            _ => {}
        }
    }

    /// The schema of the member `k` of an object at `path`, and the member's path as the
    /// list-type and CEL checks name it: a property by name (`spec.x`), a map's value by
    /// its key in brackets (`spec.limits[cpu]`).
    pub(super) fn member_at(&self, path: &str, k: &str) -> Option<(&StructuralSchema, String)> {
        match self.properties.get(k) {
            Some(schema) => Some((schema, join(path, k))),
            None => Some((self.member(k)?, format!("{path}[{k}]"))),
        }
    }

    /// The second place of each item (`set`) or key (`map` list) that a list repeats, with
    /// the item or key as a cause shows it.
    fn repeats(&self, items: &[Value]) -> Vec<(usize, String)> {
        let mut seen: BTreeMap<String, u32> = BTreeMap::new();
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let shown = match self.list_type.as_deref() {
                Some("set") => go_value(item),
                Some("map") => {
                    let Some(fields) = item.as_object() else {
                        continue;
                    };
                    let key: Map<String, Value> = self
                        .list_map_keys
                        .iter()
                        .filter_map(|k| Some((k.clone(), fields.get(k)?.clone())))
                        .collect();
                    go_json(&Value::Object(key))
                }
                _ => break,
            };
            // A scalar's type is part of it, as in Go's map of them: 1 and 1.0 differ.
            let identity = format!("{}{}", item.is_f64(), shown);
            let times = seen.entry(identity).or_default();
            *times += 1;
            if *times == 2 {
                out.push((i, shown));
            }
        }
        out
    }
}

/// `path.name`, or `name` at the root.
pub(super) fn join(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_owned()
    } else {
        format!("{path}.{name}")
    }
}

/// A value not of the type (or string format) `expected`, as the server words it: what the
/// value is (`shown`: its JSON type, or the string itself) twice.
fn type_invalid(field: &str, path: &str, shown: &str, expected: &str) -> Cause {
    (
        TYPE_INVALID,
        field.to_owned(),
        format!("Invalid value: {shown}: {path} in body must be of type {expected}: {shown}"),
    )
}

/// An `Invalid value` message: the value as Go prints it, then what is wrong.
fn invalid(value: &Value, message: &str) -> String {
    format!("Invalid value: {}: {message}", go_value(value))
}

/// A list's (`what`: `items`) or an object's (`properties`) size against its schema's
/// `(min, max)`: under the least, `Invalid value`; over the most, `Too many`, worded for
/// both as the server words a list.
fn check_size(
    size: usize,
    (min, max): (Option<u64>, Option<u64>),
    what: &str,
    (field, path): (&str, &str),
    out: &mut Vec<Cause>,
) {
    let size = size as u64;
    if let Some(min) = min.filter(|min| size < *min) {
        let message = format!("{path} in body should have at least {min} {what}");
        out.push((INVALID, field.to_owned(), invalid(&size.into(), &message)));
    }
    if let Some(max) = max.filter(|max| size > *max) {
        let items = if max == 1 { "item" } else { "items" };
        let message = format!("Too many: {size}: must have at most {max} {items}");
        out.push(("FieldValueTooMany", field.to_owned(), message));
    }
}

/// Whether a number, written as `text` (plain decimal), fits the type and format: an
/// integer type takes the integers of its format (`int32`, else int64), a number type of
/// format `float` those a float32 holds. When not, the server's
/// message, which it gives with no field.
fn out_of_range(
    text: &str,
    value_type: &str,
    format: &str,
    prefix: &str,
    path: &str,
) -> Option<String> {
    let fits = match (value_type, format) {
        // The server keeps only `int32` and `int64` of an integer's formats, and `float`
        // and `double` of a number's.
        ("integer", "int32") => text.parse::<i32>().is_ok(),
        ("integer", _) => text.parse::<i64>().is_ok(),
        ("number", "float") => text.parse::<f32>().is_ok_and(f32::is_finite),
        _ => true,
    };
    if fits {
        return None;
    }
    let value_type = if value_type == "integer" {
        "integer"
    } else {
        "number"
    };
    let format = if format.is_empty() {
        "(default format)".to_owned()
    } else {
        format!("with format {format}")
    };
    Some(format!(
        "Invalid value: \"\": {prefix} value must be of type {value_type} {format} in {path}"
    ))
}

/// Whether a float64 counts as an integer to the server's checks (go-openapi's
/// `IsFloat64AJSONInteger`): within ±(2^53 - 1), and whole, or nearly (a relative
/// difference under 1e-9).
fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9_007_199_254_740_991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    if f == f.trunc() {
        return true;
    }
    let g = f.trunc();
    f > 0.0 && g != 0.0 && (f - g).abs() / (f.abs() + g.abs()) < 1e-9
}

/// A value as the server's field errors print it: a string quoted as Go's `%q` does, a
/// number or boolean as Go's `%v`, anything else as JSON.
pub(crate) fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        // An int64 stays one; anything else is a float64 to the server.
        Value::Number(n) if n.is_i64() => n.to_string(),
        Value::Number(n) => go_g(n.as_f64().unwrap_or(0.0)),
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Array(_) | Value::Object(_) => go_json(value),
    }
}

/// JSON as Go's `encoding/json` writes it: its float format, and `<`, `>` and `&`
/// escaped.
fn go_json(value: &Value) -> String {
    String::from_utf8_lossy(&crate::numbers::to_vec(value))
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// A float64 as Go's `%v` prints it (`%g` with the fewest digits): with an exponent of at
/// least two digits below 1e-4 and from 1e6 (`1e+06`, `1.2345675e+06`, `1e-05`), in plain
/// decimal between (`123456.5`).
fn go_g(f: f64) -> String {
    if !f.is_finite() {
        return if f.is_nan() {
            "NaN".to_owned()
        } else if f > 0.0 {
            "+Inf".to_owned()
        } else {
            "-Inf".to_owned()
        };
    }
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    if f == 0.0 || (-4..6).contains(&exponent) {
        return format!("{f}");
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.abs())
}

/// A string quoted as Go's `%q` does: `\"`, `\\` and the C escapes, other control
/// characters as `\xNN` or `\uNNNN`, and the rest as is. (Go also escapes the Unicode
/// format characters, such as a zero-width space, which the fake prints as they are.)
pub(super) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() || (c.is_whitespace() && c != ' ') => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::{ascii_classes, go_g, go_quote, is_json_integer};

    #[test]
    fn floats_print_as_gos_percent_v() {
        for (f, want) in [
            (0.3, "0.3"),
            (10.0, "10"),
            (1e21, "1e+21"),
            (1e6, "1e+06"),
            (1234567.5, "1.2345675e+06"),
            (123456.5, "123456.5"),
            (1e-5, "1e-05"),
            (1e-4, "0.0001"),
            (-2.5e300, "-2.5e+300"),
        ] {
            assert_eq!(go_g(f), want, "{f:?}");
        }
    }

    #[test]
    fn strings_quote_as_gos_percent_q() {
        assert_eq!(go_quote("a\"b\\"), r#""a\"b\\""#);
        assert_eq!(go_quote("ab\n\u{1}é"), r#""ab\n\x01é""#);
        assert_eq!(go_quote("\u{a0}"), r#""\u00a0""#);
    }

    #[test]
    fn go_perl_classes_are_ascii() {
        assert_eq!(
            ascii_classes(r"^\d+[\w.]\\d$"),
            r"^[0-9]+[[0-9A-Za-z_].]\\d$"
        );
        let re = regex::Regex::new(&ascii_classes(r"^\d$")).unwrap();
        assert!(re.is_match("7") && !re.is_match("٧"));
    }

    #[test]
    fn json_integers_are_whole_floats_within_53_bits() {
        assert!(is_json_integer(3.0) && is_json_integer(-3.0));
        assert!(!is_json_integer(1.5) && !is_json_integer(1e17) && !is_json_integer(f64::NAN));
    }
}
