//! Label selectors (client-go's `labels` package): parsing with the full grammar of
//! `labels.Parse`, validation of keys and values, matching against any [`StringMap`], and the
//! canonical string form that the API server accepts.
//!
//! Grammar (whitespace separates tokens and is otherwise ignored):
//!
//! ```text
//! selector    := requirement ( "," requirement )*  |  ""
//! requirement := ["!"] KEY
//!              | KEY ("=" | "==" | "!=") VALUE?
//!              | KEY ("in" | "notin") "(" VALUE? ("," VALUE?)* ")"
//!              | KEY (">" | "<") INTEGER
//! ```
//!
//! `KEY` is a qualified name (`[dns-subdomain/]name`, name at most 63 characters) and `VALUE`
//! a label value (at most 63 characters, possibly empty). `in` and `notin` are keywords only
//! where an operator is expected: `x in (in)` is fine.
//!
//! Requirements are ANDed and kept sorted by key; the values of a requirement are kept as a
//! sorted set. Display gives the canonical form: `a=b,c in (d,e),!f,g>1`.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use crate::object::StringMap;
use crate::validation::{validate_label_key, validate_label_value};

mod label_selector;
mod parser;

/// The operator of a [`Requirement`] (client-go's `selection.Operator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `key=value`.
    Equals,
    /// `key==value` (same meaning as `=`).
    DoubleEquals,
    /// `key!=value`: the key is absent or has another value.
    NotEquals,
    /// `key in (a,b)`: the key is present with one of the values.
    In,
    /// `key notin (a,b)`: the key is absent or has none of the values.
    NotIn,
    /// `key`: the key is present.
    Exists,
    /// `!key`: the key is absent.
    DoesNotExist,
    /// `key>n`: the value is an integer greater than `n`.
    GreaterThan,
    /// `key<n`: the value is an integer less than `n`.
    LessThan,
}

impl Operator {
    /// The name client-go gives the operator (`=`, `==`, `!=`, `in`, `notin`, `exists`, `!`,
    /// `gt`, `lt`).
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => "in",
            Operator::NotIn => "notin",
            Operator::Exists => "exists",
            Operator::DoesNotExist => "!",
            Operator::GreaterThan => "gt",
            Operator::LessThan => "lt",
        }
    }
}

/// One condition of a label [`Selector`]: a key, an operator and a set of values.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    key: String,
    operator: Operator,
    /// Sorted and without duplicates.
    values: Vec<String>,
}

impl Requirement {
    /// A validated requirement (client-go's `NewRequirement`): the key must be a qualified
    /// name and every value a label value; `in`/`notin` need at least one value,
    /// `=`/`==`/`!=` exactly one, `exists`/`!` none, `>`/`<` exactly one integer.
    pub fn new<I, S>(
        key: impl Into<String>,
        operator: Operator,
        values: I,
    ) -> Result<Self, SelectorError>
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let key = key.into();
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        let err = |message: String| Err(SelectorError::new(None, message));
        if let Err(reason) = validate_label_key(&key) {
            return err(format!("invalid label key {key:?}: {reason}"));
        }
        match operator {
            Operator::In | Operator::NotIn if values.is_empty() => {
                return err(format!(
                    "key {key:?}: for 'in', 'notin' operators, values set can't be empty"
                ));
            }
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                return err(format!(
                    "key {key:?}: exact-match compatibility requires one single value"
                ));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => {
                return err(format!(
                    "key {key:?}: values set must be empty for exists and does not exist"
                ));
            }
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    return err(format!(
                        "key {key:?}: for 'gt', 'lt' operators, exactly one value is required"
                    ));
                }
                if values[0].parse::<i64>().is_err() {
                    return err(format!(
                        "key {key:?}: for 'gt', 'lt' operators, the value must be an integer, not {:?}",
                        values[0]
                    ));
                }
            }
            _ => {}
        }
        for value in &values {
            if let Err(reason) = validate_label_value(value) {
                return err(format!(
                    "invalid label value {value:?} for key {key:?}: {reason}"
                ));
            }
        }
        let values: BTreeSet<String> = values.into_iter().collect();
        Ok(Requirement {
            key,
            operator,
            values: values.into_iter().collect(),
        })
    }

    /// The label key.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The operator.
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The values, sorted.
    pub fn values(&self) -> &[String] {
        &self.values
    }

    fn has_value(&self, value: &str) -> bool {
        self.values.iter().any(|v| v == value)
    }

    /// Whether the labels satisfy this requirement.
    pub fn matches<L: StringMap + ?Sized>(&self, labels: &L) -> bool {
        match self.operator {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                labels.get(&self.key).is_some_and(|v| self.has_value(v))
            }
            Operator::NotIn | Operator::NotEquals => {
                labels.get(&self.key).is_none_or(|v| !self.has_value(v))
            }
            Operator::Exists => labels.contains_key(&self.key),
            Operator::DoesNotExist => !labels.contains_key(&self.key),
            Operator::GreaterThan | Operator::LessThan => {
                let Some(Ok(actual)) = labels.get(&self.key).map(str::parse::<i64>) else {
                    return false;
                };
                let Some(Ok(bound)) = self.values.first().map(|v| v.parse::<i64>()) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    actual > bound
                } else {
                    actual < bound
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operator == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let (op, parens) = match self.operator {
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
            Operator::Equals => ("=", false),
            Operator::DoubleEquals => ("==", false),
            Operator::NotEquals => ("!=", false),
            Operator::In => (" in ", true),
            Operator::NotIn => (" notin ", true),
            Operator::GreaterThan => (">", false),
            Operator::LessThan => ("<", false),
        };
        f.write_str(op)?;
        if parens {
            f.write_str("(")?;
        }
        f.write_str(&self.values.join(","))?;
        if parens {
            f.write_str(")")?;
        }
        Ok(())
    }
}

/// A label selector: requirements that must all hold, or nothing at all.
///
/// ```
/// use kclient_apimachinery::Selector;
/// use std::collections::BTreeMap;
///
/// let selector: Selector = "tier in (web, api), env != prod, !canary".parse()?;
/// assert_eq!(selector.to_string(), "!canary,env!=prod,tier in (api,web)");
///
/// let labels = BTreeMap::from([("tier".to_owned(), "web".to_owned())]);
/// assert!(selector.matches(&labels));
/// # Ok::<(), kclient_apimachinery::SelectorError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Selector {
    /// `None` is client-go's `Nothing()`; `Some(empty)` is `Everything()`.
    requirements: Option<Vec<Requirement>>,
}

impl Default for Selector {
    /// [`Selector::everything`].
    fn default() -> Self {
        Selector::everything()
    }
}

impl Selector {
    /// The selector that matches every object (the empty selector).
    pub fn everything() -> Self {
        Selector {
            requirements: Some(Vec::new()),
        }
    }

    /// The selector that matches no object (what a `null` `LabelSelector` means).
    pub fn nothing() -> Self {
        Selector { requirements: None }
    }

    /// Parses a selector string (client-go's `labels.Parse`); `""` is [`Selector::everything`].
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let mut requirements = parser::parse(input)?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Selector {
            requirements: Some(requirements),
        })
    }

    /// The selector matching exactly these labels, without validating them (client-go's
    /// `SelectorFromSet`; the server rejects invalid ones).
    pub fn from_set<I, K, V>(labels: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut requirements: Vec<Requirement> = labels
            .into_iter()
            .map(|(k, v)| Requirement {
                key: k.into(),
                operator: Operator::Equals,
                values: vec![v.into()],
            })
            .collect();
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Selector {
            requirements: Some(requirements),
        }
    }

    /// The selector matching exactly these labels, validating them (client-go's
    /// `ValidatedSelectorFromSet`).
    pub fn validated_from_set<I, K, V>(labels: I) -> Result<Self, SelectorError>
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        let mut selector = Selector::everything();
        for (k, v) in labels {
            selector = selector.and(Requirement::new(k, Operator::Equals, [v])?);
        }
        Ok(selector)
    }

    /// This selector with one more requirement (no-op on [`Selector::nothing`]).
    pub fn and(mut self, requirement: Requirement) -> Self {
        if let Some(requirements) = &mut self.requirements {
            let at = requirements.partition_point(|r| r.key <= requirement.key);
            requirements.insert(at, requirement);
        }
        self
    }

    /// Whether the labels satisfy every requirement; always `false` for
    /// [`Selector::nothing`].
    pub fn matches<L: StringMap + ?Sized>(&self, labels: &L) -> bool {
        match &self.requirements {
            None => false,
            Some(requirements) => requirements.iter().all(|r| r.matches(labels)),
        }
    }

    /// Whether the selector does not restrict anything (it is [`Selector::everything`]).
    pub fn is_empty(&self) -> bool {
        self.requirements.as_ref().is_some_and(Vec::is_empty)
    }

    /// Whether this is [`Selector::nothing`] (client-go's `MatchesNothing`).
    pub fn matches_nothing(&self) -> bool {
        self.requirements.is_none()
    }

    /// The requirements, sorted by key; `None` for [`Selector::nothing`].
    pub fn requirements(&self) -> Option<&[Requirement]> {
        self.requirements.as_deref()
    }

    /// If the selector requires `label` to have one specific value (`=`, `==`, or `in` with a
    /// single value), that value (client-go's `RequiresExactMatch`). Indexers use it.
    pub fn requires_exact_match(&self, label: &str) -> Option<&str> {
        let requirement = self
            .requirements
            .as_ref()?
            .iter()
            .find(|r| r.key == label)?;
        match (requirement.operator, requirement.values.as_slice()) {
            (Operator::Equals | Operator::DoubleEquals | Operator::In, [value]) => Some(value),
            _ => None,
        }
    }
}

impl fmt::Display for Selector {
    /// The canonical form: requirements sorted by key, joined by `,`. [`Selector::nothing`]
    /// displays as `""`, as in client-go; do not send it to a server.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().flatten().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl FromStr for Selector {
    type Err = SelectorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Selector::parse(s)
    }
}

/// A label selector that did not parse or did not validate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectorError {
    position: Option<usize>,
    message: String,
}

impl SelectorError {
    pub(super) fn new(position: Option<usize>, message: String) -> Self {
        SelectorError { position, message }
    }

    /// The byte offset in the input where the problem was found, for parse errors.
    pub fn position(&self) -> Option<usize> {
        self.position
    }

    /// What was wrong, without the position.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(
                f,
                "invalid label selector at position {p}: {}",
                self.message
            ),
            None => write!(f, "invalid label selector: {}", self.message),
        }
    }
}

impl std::error::Error for SelectorError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    /// Valid selectors and their canonical string form (from client-go's selector_test.go
    /// `TestSelectorParse` and more).
    const VALID: &[(&str, &str)] = &[
        ("", ""),
        ("x=a,y=b,z=c", "x=a,y=b,z=c"),
        ("x!=a,y=b", "x!=a,y=b"),
        ("x=,z= ", "x=,z="),
        ("x= ,z= ", "x=,z="),
        ("!x", "!x"),
        ("x>1", "x>1"),
        ("x>1,z<5", "x>1,z<5"),
        ("x >1,z< 5", "x>1,z<5"),
        ("x == a", "x==a"),
        ("x in (a,b)", "x in (a,b)"),
        ("x in (b,a)", "x in (a,b)"),
        ("x notin (a)", "x notin (a)"),
        ("x in ( a , b )", "x in (a,b)"),
        (
            "x in (foo,,baz),y,z notin ()",
            "x in (,baz,foo),y,z notin ()",
        ),
        ("x in (a,)", "x in (,a)"),
        ("x in (,a)", "x in (,a)"),
        ("x in (a,a)", "x in (a)"),
        // Go's parseIdentifiersList consumes the second comma of `,,`: these end on a value or
        // on a lone `,)`.
        ("x in (,,a)", "x in (,a)"),
        ("x in (a,,b)", "x in (,a,b)"),
        ("x in (,,,)", "x in ()"),
        ("x in (a,,,)", "x in (,a)"),
        ("x in (,)", "x in ()"),
        ("x in ()", "x in ()"),
        ("x notin (,,a)", "x notin (,a)"),
        ("x in (in)", "x in (in)"),
        ("x in (notin)", "x in (notin)"),
        ("in in (in)", "in in (in)"),
        ("z,y,x", "x,y,z"),
        ("a=b, !c ,d", "a=b,!c,d"),
        ("app.kubernetes.io/name=web", "app.kubernetes.io/name=web"),
        ("x=a\t,\ny=b", "x=a,y=b"),
    ];

    /// Invalid selectors, the position of the problem and a fragment of the message.
    const INVALID: &[(&str, Option<usize>, &str)] = &[
        ("x=a||y=b", Some(0), "invalid label value \"a||y\""),
        (
            "x==a==b",
            Some(4),
            "found '==', expected: ',' or end of string",
        ),
        ("!x=a", Some(2), "found '=', expected: ',' or end of string"),
        ("x<a", Some(0), "must be an integer"),
        ("x>1.5", Some(0), "must be an integer"),
        ("x in (a b)", Some(8), "found 'b', expected: ',' or ')'"),
        ("x in a", Some(5), "found 'a', expected: '('"),
        ("x in", Some(4), "found end of string, expected: '('"),
        (
            "x in (a",
            Some(7),
            "found end of string, expected: ',' or ')'",
        ),
        (
            "x in (=)",
            Some(6),
            "found '=', expected: ',', ')' or identifier",
        ),
        ("x notx (a)", Some(2), "found 'notx', expected: in, notin"),
        // After `,,` (both commas consumed) Go wants a value or a comma, not `)`.
        (
            "x in (,,)",
            Some(8),
            "found ')', expected: ',', or identifier",
        ),
        (
            "x in (a,,)",
            Some(9),
            "found ')', expected: ',', or identifier",
        ),
        (
            "x notin (a,,)",
            Some(12),
            "found ')', expected: ',', or identifier",
        ),
        (
            "x in (,,,,)",
            Some(10),
            "found ')', expected: ',', or identifier",
        ),
        (
            "x,",
            Some(2),
            "found end of string, expected: identifier after ','",
        ),
        (
            ",x",
            Some(0),
            "found ',', expected: '!', identifier, or end of string",
        ),
        ("x,,y", Some(2), "identifier after ','"),
        ("x=(a)", Some(2), "found '(', expected: identifier"),
        ("!", Some(1), "found end of string, expected: identifier"),
        ("!!x", Some(1), "found '!', expected: identifier"),
        ("-x", Some(0), "invalid label key \"-x\""),
        ("a/b/c=d", Some(0), "invalid label key \"a/b/c\""),
        (
            "x=a b",
            Some(4),
            "found 'b', expected: ',' or end of string",
        ),
        (
            "x in ((a))",
            Some(6),
            "found '(', expected: ',', ')' or identifier",
        ),
        ("x=é", Some(0), "invalid label value"),
        ("x=-1", Some(0), "invalid label value \"-1\""),
        ("x>-1", Some(0), "invalid label value \"-1\""),
    ];

    #[test]
    fn parses_valid_selectors_to_their_canonical_form() {
        for (input, canonical) in VALID {
            let selector =
                Selector::parse(input).unwrap_or_else(|e| panic!("{input:?} should parse: {e}"));
            assert_eq!(selector.to_string(), *canonical, "{input:?}");
            // The canonical form parses back to the same selector.
            assert_eq!(
                Selector::parse(canonical).unwrap(),
                selector,
                "{canonical:?}"
            );
        }
    }

    #[test]
    fn rejects_invalid_selectors_naming_the_position_and_token() {
        for (input, position, fragment) in INVALID {
            let err = Selector::parse(input)
                .err()
                .unwrap_or_else(|| panic!("{input:?} should not parse"));
            assert_eq!(err.position(), *position, "{input:?}: {err}");
            assert!(err.to_string().contains(fragment), "{input:?}: {err}");
        }
    }

    #[test]
    fn key_and_value_length_limits() {
        let long = "a".repeat(64);
        assert!(Selector::parse(&format!("{long}=x")).is_err());
        assert!(Selector::parse(&format!("x={long}")).is_err());
        assert!(Selector::parse(&format!("x={}", &long[1..])).is_ok());
    }

    #[test]
    fn operators_parse_to_the_right_requirements() {
        let cases: &[(&str, Operator, &[&str])] = &[
            ("x", Operator::Exists, &[]),
            ("!x", Operator::DoesNotExist, &[]),
            ("x=a", Operator::Equals, &["a"]),
            ("x==a", Operator::DoubleEquals, &["a"]),
            ("x!=a", Operator::NotEquals, &["a"]),
            ("x in (b,a)", Operator::In, &["a", "b"]),
            ("x notin (a)", Operator::NotIn, &["a"]),
            ("x>3", Operator::GreaterThan, &["3"]),
            ("x<3", Operator::LessThan, &["3"]),
            ("x in ()", Operator::In, &[""]),
            ("x=", Operator::Equals, &[""]),
        ];
        for (input, operator, values) in cases {
            let selector = Selector::parse(input).unwrap();
            let [r] = selector.requirements().unwrap() else {
                panic!("{input:?}: expected one requirement");
            };
            assert_eq!(r.key(), "x");
            assert_eq!(r.operator(), *operator, "{input:?}");
            assert_eq!(r.values(), *values, "{input:?}");
        }
    }

    #[test]
    fn matching() {
        // (selector, labels, matches)
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], bool);
        let cases: &[Case<'_>] = &[
            ("", &[("x", "y")], true),
            ("", &[], true),
            ("x=y", &[("x", "y")], true),
            ("x==y", &[("x", "y")], true),
            ("x=y", &[("x", "z")], false),
            ("x=y", &[], false),
            ("x!=y", &[("x", "z")], true),
            ("x!=y", &[], true),
            ("x!=y", &[("x", "y")], false),
            ("x=y,z=w", &[("x", "y"), ("z", "w")], true),
            ("x=y,z=w", &[("x", "y")], false),
            ("x in (a,b)", &[("x", "b")], true),
            ("x in (a,b)", &[("x", "c")], false),
            ("x in (a,b)", &[], false),
            ("x notin (a,b)", &[("x", "c")], true),
            ("x notin (a,b)", &[], true),
            ("x notin (a,b)", &[("x", "a")], false),
            ("x", &[("x", "")], true),
            ("x", &[("y", "")], false),
            ("!x", &[("y", "")], true),
            ("!x", &[("x", "")], false),
            ("x=", &[("x", "")], true),
            ("x in ()", &[("x", "")], true),
            ("x>1", &[("x", "2")], true),
            ("x>1", &[("x", "1")], false),
            ("x>1", &[("x", "a")], false),
            ("x>1", &[], false),
            ("x<1", &[("x", "-5")], true),
            ("x<1", &[("x", "1")], false),
        ];
        for (input, ls, expected) in cases {
            let selector = Selector::parse(input).unwrap();
            assert_eq!(
                selector.matches(&labels(ls)),
                *expected,
                "{input:?} on {ls:?}"
            );
        }
        // Through the object-safe view as well.
        let ls = labels(&[("app", "web")]);
        let view: &dyn StringMap = &ls;
        assert!(Selector::parse("app=web").unwrap().matches(view));
    }

    #[test]
    fn everything_and_nothing() {
        let ls = labels(&[("a", "b")]);
        assert!(Selector::everything().matches(&ls));
        assert!(Selector::everything().is_empty());
        assert!(!Selector::everything().matches_nothing());
        assert!(!Selector::nothing().matches(&ls));
        assert!(!Selector::nothing().matches(&labels(&[])));
        assert!(!Selector::nothing().is_empty());
        assert!(Selector::nothing().matches_nothing());
        assert_eq!(Selector::nothing().requirements(), None);
        assert_eq!(Selector::nothing().to_string(), "");
        let still_nothing =
            Selector::nothing().and(Requirement::new("a", Operator::Exists, [""; 0]).unwrap());
        assert!(still_nothing.matches_nothing());
        assert_eq!(Selector::default(), Selector::everything());
    }

    #[test]
    fn sets_exact_matches_and_adding() {
        let selector = Selector::from_set([("b", "2"), ("a", "1")]);
        assert_eq!(selector.to_string(), "a=1,b=2");
        assert_eq!(selector.requires_exact_match("a"), Some("1"));
        assert_eq!(selector.requires_exact_match("c"), None);
        let in_one = Selector::parse("x in (v)").unwrap();
        assert_eq!(in_one.requires_exact_match("x"), Some("v"));
        let in_two = Selector::parse("x in (v,w),y!=z").unwrap();
        assert_eq!(in_two.requires_exact_match("x"), None);
        assert_eq!(in_two.requires_exact_match("y"), None);

        let added = Selector::from_set([("c", "3"), ("a", "1")])
            .and(Requirement::new("b", Operator::NotIn, ["x", "y"]).unwrap());
        assert_eq!(added.to_string(), "a=1,b notin (x,y),c=3");

        assert!(Selector::validated_from_set([("a", "-bad")]).is_err());
        assert_eq!(
            Selector::validated_from_set([("a", "ok")])
                .unwrap()
                .to_string(),
            "a=ok"
        );
    }

    #[test]
    fn requirement_validation() {
        let bad: &[(&str, Operator, &[&str])] = &[
            ("x", Operator::In, &[]),
            ("x", Operator::NotIn, &[]),
            ("x", Operator::Equals, &[]),
            ("x", Operator::Equals, &["a", "b"]),
            ("x", Operator::Exists, &["a"]),
            ("x", Operator::DoesNotExist, &["a"]),
            ("x", Operator::GreaterThan, &["a"]),
            ("x", Operator::LessThan, &["1", "2"]),
            ("", Operator::Exists, &[]),
            ("x", Operator::In, &["ok", "not ok"]),
        ];
        for (key, op, values) in bad {
            assert!(
                Requirement::new(*key, *op, values.iter().copied()).is_err(),
                "{key} {op:?} {values:?}"
            );
        }
        let r = Requirement::new("x", Operator::In, ["b", "a", "b"]).unwrap();
        assert_eq!(r.values(), ["a", "b"]);
        assert_eq!(r.to_string(), "x in (a,b)");
        let err = Requirement::new("x", Operator::In, [""; 0]).unwrap_err();
        assert_eq!(err.position(), None);
        assert_eq!(
            err.to_string(),
            "invalid label selector: key \"x\": for 'in', 'notin' operators, values set can't be empty"
        );
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        fn key() -> impl Strategy<Value = String> {
            prop_oneof![
                "[a-z0-9]([a-z0-9._-]{0,8}[a-z0-9])?",
                "[a-z]{1,5}(\\.[a-z]{1,5})?/[A-Za-z0-9]([A-Za-z0-9_.-]{0,6}[A-Za-z0-9])?",
                Just("in".to_owned()),
                Just("notin".to_owned()),
            ]
        }

        fn value() -> impl Strategy<Value = String> {
            prop_oneof![
                "([A-Za-z0-9]([A-Za-z0-9._-]{0,8}[A-Za-z0-9])?)?",
                Just("in".to_owned())
            ]
        }

        fn requirement() -> impl Strategy<Value = Requirement> {
            let set = || prop::collection::vec(value(), 1..4);
            prop_oneof![
                (key(), value()).prop_map(|(k, v)| Requirement::new(k, Operator::Equals, [v])),
                (key(), value()).prop_map(|(k, v)| Requirement::new(
                    k,
                    Operator::DoubleEquals,
                    [v]
                )),
                (key(), value()).prop_map(|(k, v)| Requirement::new(k, Operator::NotEquals, [v])),
                (key(), set()).prop_map(|(k, v)| Requirement::new(k, Operator::In, v)),
                (key(), set()).prop_map(|(k, v)| Requirement::new(k, Operator::NotIn, v)),
                key().prop_map(|k| Requirement::new(k, Operator::Exists, [""; 0])),
                key().prop_map(|k| Requirement::new(k, Operator::DoesNotExist, [""; 0])),
                (key(), 0u32..100_000).prop_map(|(k, n)| Requirement::new(
                    k,
                    Operator::GreaterThan,
                    [n.to_string()]
                )),
                (key(), 0u32..100_000).prop_map(|(k, n)| Requirement::new(
                    k,
                    Operator::LessThan,
                    [n.to_string()]
                )),
            ]
            .prop_map(|r| r.expect("generated requirements are valid"))
        }

        proptest! {
            #[test]
            fn parsing_never_panics(input in ".{0,40}") {
                let _ = Selector::parse(&input);
            }

            #[test]
            fn parsing_never_panics_on_the_selector_alphabet(input in "[a-z0-9=!(),<> \t.in-]{0,30}") {
                if let Ok(selector) = Selector::parse(&input) {
                    // Whatever parses prints to a form that parses to the same selector.
                    prop_assert_eq!(Selector::parse(&selector.to_string()).unwrap(), selector);
                }
            }

            #[test]
            fn the_canonical_form_parses_back(requirements in prop::collection::vec(requirement(), 0..5)) {
                let selector = requirements.into_iter().fold(Selector::everything(), Selector::and);
                let text = selector.to_string();
                let parsed = Selector::parse(&text);
                prop_assert_eq!(parsed.as_ref(), Ok(&selector), "text {:?}", text);
            }
        }
    }
}
