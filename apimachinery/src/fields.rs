//! Field selectors (client-go's `fields` package): `field=value`, `field==value` and
//! `field!=value` terms joined by `,`, matched against fields an object exposes (such as
//! `metadata.name`, `metadata.namespace`, `spec.nodeName`, `status.phase`).
//!
//! Values may contain `,`, `=` and `\` only escaped with a backslash (`\,`, `\=`, `\\`);
//! [`escape_field_value`] does that. Field names are not escaped: a term splits at its first
//! operator. An unknown field matches as the empty string, as in client-go.

use std::fmt;
use std::str::FromStr;

use crate::object::StringMap;

/// The operator of a [`FieldRequirement`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldOperator {
    /// `field=value` or `field==value`.
    Equals,
    /// `field!=value`.
    NotEquals,
}

/// One term of a [`FieldSelector`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    /// The field path, such as `metadata.name`.
    pub field: String,
    /// The operator.
    pub operator: FieldOperator,
    /// The value, unescaped.
    pub value: String,
}

impl FieldRequirement {
    /// Whether the field's value (`""` when absent) satisfies this term.
    fn matches_value(&self, actual: Option<&str>) -> bool {
        let actual = actual.unwrap_or("");
        match self.operator {
            FieldOperator::Equals => actual == self.value,
            FieldOperator::NotEquals => actual != self.value,
        }
    }
}

impl fmt::Display for FieldRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let op = match self.operator {
            FieldOperator::Equals => "=",
            FieldOperator::NotEquals => "!=",
        };
        write!(f, "{}{op}{}", self.field, escape_field_value(&self.value))
    }
}

/// A field selector: terms that must all hold. The empty selector matches everything.
///
/// ```
/// use kclient_apimachinery::FieldSelector;
///
/// let selector: FieldSelector = "status.phase!=Running,spec.nodeName=node-1".parse()?;
/// let fields = |name: &str| match name {
///     "spec.nodeName" => Some("node-1"),
///     "status.phase" => Some("Pending"),
///     _ => None,
/// };
/// assert!(selector.matches_with(fields));
/// assert_eq!(selector.to_string(), "spec.nodeName=node-1,status.phase!=Running");
/// # Ok::<(), kclient_apimachinery::FieldSelectorError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// The selector that matches everything.
    pub fn everything() -> Self {
        FieldSelector::default()
    }

    /// A selector with the single term `field=value` (client-go's `OneTermEqualSelector`).
    pub fn one_term_equal(field: impl Into<String>, value: impl Into<String>) -> Self {
        FieldSelector {
            requirements: vec![FieldRequirement {
                field: field.into(),
                operator: FieldOperator::Equals,
                value: value.into(),
            }],
        }
    }

    /// Parses a field selector (client-go's `fields.ParseSelector`). Terms are sorted by their
    /// printed form, so the string form is canonical: printing a parsed selector and parsing
    /// that again gives the same string.
    ///
    /// client-go sorts the terms as written instead, and so prints `a==c,a=b` as `a=c,a=b`
    /// (`==` prints as `=`), which parses and prints as `a=b,a=c`. The order never changes
    /// what a selector matches.
    ///
    /// As in client-go (and so on the API server), a term with neither a field nor a value
    /// (`=`, `==`, `!=`) is dropped: it selects everything.
    pub fn parse(input: &str) -> Result<Self, FieldSelectorError> {
        let terms = split_terms(input);
        let mut requirements = Vec::with_capacity(terms.len());
        for term in terms.into_iter().filter(|t| !t.is_empty()) {
            let Some((field, operator, raw_value)) = split_term(term) else {
                return Err(FieldSelectorError::new(format!(
                    "invalid field selector {input:?}: can't understand {term:?}"
                )));
            };
            let value = unescape_field_value(raw_value)?;
            if field.is_empty() && value.is_empty() {
                // client-go's parser hands each term to a transform; the identity one it uses
                // turns an empty field with an empty value into `Everything()`, which the
                // enclosing `and` drops.
                continue;
            }
            requirements.push(FieldRequirement {
                field: field.to_owned(),
                operator,
                value,
            });
        }
        if requirements.len() > 1 {
            requirements.sort_by_cached_key(ToString::to_string);
        }
        Ok(FieldSelector { requirements })
    }

    /// This selector with one more term.
    pub fn and(mut self, requirement: FieldRequirement) -> Self {
        self.requirements.push(requirement);
        self
    }

    /// The terms.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Whether the selector has no terms (matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether every term holds, reading fields through `get` (`None` for a field the object
    /// does not have, which compares as `""`).
    pub fn matches_with<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches_value(get(&r.field)))
    }

    /// Whether every term holds against a map of field paths to values (client-go's
    /// `fields.Set`).
    pub fn matches<F: StringMap + ?Sized>(&self, fields: &F) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches_value(fields.get(&r.field)))
    }

    /// If a term requires `field` to equal one value, that value (client-go's
    /// `RequiresExactMatch`).
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.field == field && r.operator == FieldOperator::Equals)
            .map(|r| r.value.as_str())
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl FromStr for FieldSelector {
    type Err = FieldSelectorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FieldSelector::parse(s)
    }
}

/// A field selector that did not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldSelectorError {
    message: String,
}

impl FieldSelectorError {
    fn new(message: String) -> Self {
        FieldSelectorError { message }
    }
}

impl fmt::Display for FieldSelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for FieldSelectorError {}

/// Escapes a literal value for a field selector: `\` → `\\`, `,` → `\,`, `=` → `\=`
/// (client-go's `fields.EscapeValue`).
pub fn escape_field_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Undoes [`escape_field_value`]; an unknown escape, a trailing `\`, or an unescaped `,` or
/// `=` is an error (client-go's `fields.UnescapeValue`).
pub fn unescape_field_value(value: &str) -> Result<String, FieldSelectorError> {
    if !value.contains(['\\', ',', '=']) {
        return Ok(value.to_owned());
    }
    let mut out = String::with_capacity(value.len());
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(FieldSelectorError::new(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
            out.push(c);
            escaped = false;
        } else {
            match c {
                '\\' => escaped = true,
                ',' | '=' => {
                    return Err(FieldSelectorError::new(format!(
                        "invalid field selector: unescaped character in value: {c:?}"
                    )));
                }
                _ => out.push(c),
            }
        }
    }
    if escaped {
        return Err(FieldSelectorError::new(
            "invalid field selector: invalid escape sequence: \\".to_owned(),
        ));
    }
    Ok(out)
}

/// Splits at commas not preceded by a backslash, keeping escapes in the terms.
fn split_terms(input: &str) -> Vec<&str> {
    if input.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut escaped = false;
    for (i, c) in input.char_indices() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            terms.push(&input[start..i]);
            start = i + 1;
        }
    }
    terms.push(&input[start..]);
    terms
}

/// Splits a term at its first operator (`!=` and `==` before `=`), returning the raw value.
fn split_term(term: &str) -> Option<(&str, FieldOperator, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for (op, operator) in [
            ("!=", FieldOperator::NotEquals),
            ("==", FieldOperator::Equals),
            ("=", FieldOperator::Equals),
        ] {
            if let Some(value) = rest.strip_prefix(op) {
                return Some((&term[..i], operator, value));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn parses_and_prints_canonically() {
        let cases: &[(&str, &str)] = &[
            ("", ""),
            ("a=b", "a=b"),
            ("a==b", "a=b"),
            ("a!=b", "a!=b"),
            ("b=c,a=b", "a=b,b=c"),
            ("a=b,,c=d", "a=b,c=d"),
            ("metadata.name=x", "metadata.name=x"),
            ("a=", "a="),
            (r"a=b\,c", r"a=b\,c"),
            (r"a=b\=c\\d", r"a=b\=c\\d"),
            ("a!=b,a=c", "a!=b,a=c"),
            // Sorted as printed: `==` prints as `=`, and sorts as it prints (client-go prints
            // `a=c,a=b`).
            ("a==c,a=b", "a=b,a=c"),
            // A term with neither field nor value is dropped, as in client-go.
            (r"==,=1\\", r"=1\\"),
        ];
        for (input, canonical) in cases {
            let selector = FieldSelector::parse(input)
                .unwrap_or_else(|e| panic!("{input:?} should parse: {e}"));
            assert_eq!(selector.to_string(), *canonical, "{input:?}");
            let again = FieldSelector::parse(canonical).unwrap();
            assert_eq!(again.to_string(), *canonical, "{canonical:?} printed again");
        }
    }

    #[test]
    fn rejects_bad_terms_and_escapes() {
        let cases: &[(&str, &str)] = &[
            ("a", "can't understand \"a\""),
            ("a=b,c", "can't understand \"c\""),
            ("a=b=c", "unescaped character in value: '='"),
            (r"a=b\c", r"invalid escape sequence: \c"),
            ("a=b\\", r"invalid escape sequence: \"),
        ];
        for (input, fragment) in cases {
            let err = FieldSelector::parse(input).unwrap_err();
            assert!(err.to_string().contains(fragment), "{input:?}: {err}");
        }
    }

    /// client-go's `ParseSelector` passes every term through an identity `Transform`, which
    /// turns a term with neither field nor value (`=`, `==`, `!=`) into `Everything()`: the
    /// term is dropped, and the server lists every object for `fieldSelector=!=`.
    #[test]
    fn a_term_without_field_or_value_selects_everything_as_in_client_go() {
        let fields: BTreeMap<String, String> =
            [("metadata.name".to_owned(), "web".to_owned())].into();
        let cases: &[(&str, &str, bool)] = &[
            ("=", "", true),
            ("==", "", true),
            ("!=", "", true),
            ("!=,==", "", true),
            ("metadata.name=db,!=", "metadata.name=db", false),
            ("!=,metadata.name=web", "metadata.name=web", true),
            // A field or a value alone keeps the term.
            ("!=x", "!=x", true),
            ("=x", "=x", false),
            ("x=", "x=", true),
            ("x!=", "x!=", false),
        ];
        for (input, printed, matches) in cases {
            let selector = FieldSelector::parse(input).unwrap();
            assert_eq!(selector.to_string(), *printed, "{input:?}");
            assert_eq!(selector.is_empty(), printed.is_empty(), "{input:?}");
            assert_eq!(selector.matches(&fields), *matches, "{input:?}");
        }
        // Dropping such a term does not hide a bad escape in another.
        assert!(FieldSelector::parse(r"!=,a=b\x").is_err());
    }

    #[test]
    fn unescapes_values() {
        let selector = FieldSelector::parse(r"a=x\,y\=z\\").unwrap();
        assert_eq!(selector.requirements()[0].value, r"x,y=z\");
        assert_eq!(escape_field_value(r"x,y=z\"), r"x\,y\=z\\");
        assert_eq!(
            unescape_field_value(&escape_field_value("a,b=c\\")).unwrap(),
            "a,b=c\\"
        );
    }

    #[test]
    fn matching() {
        let fields: BTreeMap<String, String> = [
            ("metadata.name".to_owned(), "web".to_owned()),
            ("status.phase".to_owned(), "Running".to_owned()),
        ]
        .into();
        let cases: &[(&str, bool)] = &[
            ("", true),
            ("metadata.name=web", true),
            ("metadata.name==web", true),
            ("metadata.name=db", false),
            ("metadata.name!=db", true),
            ("metadata.name=web,status.phase=Running", true),
            ("metadata.name=web,status.phase!=Running", false),
            ("spec.nodeName=", true),
            ("spec.nodeName!=", false),
            ("spec.nodeName=n1", false),
        ];
        for (input, expected) in cases {
            let selector = FieldSelector::parse(input).unwrap();
            assert_eq!(selector.matches(&fields), *expected, "{input:?}");
            let getter = |f: &str| fields.get(f).map(String::as_str);
            assert_eq!(selector.matches_with(getter), *expected, "{input:?}");
        }
    }

    #[test]
    fn exact_matches_and_building() {
        let selector = FieldSelector::parse("metadata.name=web,spec.nodeName!=n1").unwrap();
        assert_eq!(selector.requires_exact_match("metadata.name"), Some("web"));
        assert_eq!(selector.requires_exact_match("spec.nodeName"), None);
        let built = FieldSelector::one_term_equal("metadata.name", "a,b").and(FieldRequirement {
            field: "status.phase".into(),
            operator: FieldOperator::NotEquals,
            value: "Failed".into(),
        });
        assert_eq!(
            built.to_string(),
            r"metadata.name=a\,b,status.phase!=Failed"
        );
        assert_eq!(FieldSelector::parse(&built.to_string()).unwrap(), built);
        assert!(FieldSelector::everything().is_empty());
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn parsing_never_panics(input in ".{0,40}") {
                let _ = FieldSelector::parse(&input);
            }

            #[test]
            fn the_printed_form_is_a_fixed_point(input in r"[a=!,\\1]{0,12}") {
                if let Ok(selector) = FieldSelector::parse(&input) {
                    let shown = selector.to_string();
                    let again = FieldSelector::parse(&shown).unwrap();
                    prop_assert_eq!(again.to_string(), shown);
                    prop_assert_eq!(again, selector);
                }
            }

            #[test]
            fn any_value_survives_escaping(value in ".{0,20}") {
                prop_assert_eq!(unescape_field_value(&escape_field_value(&value)).unwrap(), value);
            }

            #[test]
            fn the_string_form_parses_back(
                terms in prop::collection::vec(("[a-zA-Z.]{1,12}", any::<bool>(), ".{0,12}"), 0..4)
            ) {
                let selector = terms.iter().fold(FieldSelector::everything(), |s, (field, eq, value)| {
                    s.and(FieldRequirement {
                        field: field.clone(),
                        operator: if *eq { FieldOperator::Equals } else { FieldOperator::NotEquals },
                        value: value.clone(),
                    })
                });
                let parsed = FieldSelector::parse(&selector.to_string()).unwrap();
                let mut expected = selector.requirements().to_vec();
                let mut got = parsed.requirements().to_vec();
                let key = |r: &FieldRequirement| (r.field.clone(), r.operator == FieldOperator::Equals, r.value.clone());
                expected.sort_by_key(key);
                got.sort_by_key(key);
                prop_assert_eq!(got, expected);
            }
        }
    }
}
