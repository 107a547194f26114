//! [`Duration`], `metav1.Duration`: a Go `time.Duration` (signed nanoseconds) written in JSON as
//! Go's duration text (`"1h30m0s"`), and read with `time.ParseDuration`'s grammar.
//!
//! No field of the built-in v1.36 APIs is a `metav1.Duration` (k8s.io/api has none); custom
//! resources and configuration types use it, and the REST client writes `?timeout=` with it.

use std::fmt;
use std::str::FromStr;

/// Nanoseconds in each unit `time.ParseDuration` accepts (`µs` as U+00B5 or U+03BC).
const UNITS: [(&str, u64); 8] = [
    ("ns", 1),
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The magnitude of `i64::MIN`, the largest a duration's digits may reach before its sign.
const MAX_MAGNITUDE: u64 = 1 << 63;

/// `metav1.Duration`: signed nanoseconds, as Go's `time.Duration`; JSON is Go's text for it.
///
/// ```
/// use kclient_apimachinery::meta::Duration;
///
/// let d: Duration = "1h30m".parse()?;
/// assert_eq!(d.to_string(), "1h30m0s");
/// assert_eq!(d.to_std(), Some(std::time::Duration::from_secs(5400)));
/// assert_eq!(serde_json::to_string(&Duration::from_nanos(-1_500_000_000))?, r#""-1.5s""#);
/// assert!("1e3s".parse::<Duration>().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(i64);

impl Duration {
    /// No time.
    pub const ZERO: Duration = Duration(0);

    /// A duration of `nanos` nanoseconds (negative durations exist in Go too).
    pub const fn from_nanos(nanos: i64) -> Self {
        Duration(nanos)
    }

    /// The nanoseconds.
    pub const fn as_nanos(self) -> i64 {
        self.0
    }

    /// As a `std::time::Duration`; `None` when negative.
    pub fn to_std(self) -> Option<std::time::Duration> {
        u64::try_from(self.0)
            .ok()
            .map(std::time::Duration::from_nanos)
    }

    /// Parses Go's duration text (`time.ParseDuration`): a sign, then numbers with units, as
    /// `300ms`, `-1.5h`, `2h45m`; `0` needs no unit. Fractions are cut to whole nanoseconds as
    /// Go does.
    pub fn parse(text: &str) -> Result<Self, ParseDurationError> {
        let invalid = || ParseDurationError::new(text, Problem::Invalid);
        let (negative, mut rest) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        if rest == "0" {
            return Ok(Duration::ZERO);
        }
        if rest.is_empty() {
            return Err(invalid());
        }
        let mut total: u64 = 0;
        while !rest.is_empty() {
            if !rest.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
                return Err(invalid());
            }
            let (whole, after) = leading_int(rest).ok_or_else(invalid)?;
            let has_whole = after.len() != rest.len();
            rest = after;
            let (mut fraction, mut scale, mut has_fraction) = (0, 1.0, false);
            if let Some(after_dot) = rest.strip_prefix('.') {
                let (f, s, after) = leading_fraction(after_dot);
                has_fraction = after.len() != after_dot.len();
                (fraction, scale, rest) = (f, s, after);
            }
            if !has_whole && !has_fraction {
                return Err(invalid());
            }
            let unit_len = rest
                .find(|c: char| c == '.' || c.is_ascii_digit())
                .unwrap_or(rest.len());
            if unit_len == 0 {
                return Err(ParseDurationError::new(text, Problem::MissingUnit));
            }
            let unit_text = &rest[..unit_len];
            rest = &rest[unit_len..];
            let Some(&(_, unit)) = UNITS.iter().find(|(name, _)| *name == unit_text) else {
                return Err(ParseDurationError::new(
                    text,
                    Problem::UnknownUnit(unit_text.to_owned()),
                ));
            };
            if whole > MAX_MAGNITUDE / unit {
                return Err(invalid());
            }
            let mut value = whole * unit;
            if fraction > 0 {
                // Go computes the fraction in float64; doing the same keeps results identical.
                value += (fraction as f64 * (unit as f64 / scale)) as u64;
                if value > MAX_MAGNITUDE {
                    return Err(invalid());
                }
            }
            total = total
                .checked_add(value)
                .filter(|t| *t <= MAX_MAGNITUDE)
                .ok_or_else(invalid)?;
        }
        if negative {
            // MAX_MAGNITUDE itself is i64::MIN.
            Ok(Duration(0i64.wrapping_sub_unsigned(total)))
        } else {
            i64::try_from(total).map(Duration).map_err(|_| invalid())
        }
    }
}

/// The digits at the start of `s` as an integer and what follows; `None` on overflow.
fn leading_int(s: &str) -> Option<(u64, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let mut value: u64 = 0;
    for b in s[..digits].bytes() {
        if value > MAX_MAGNITUDE / 10 {
            return None;
        }
        value = value * 10 + u64::from(b - b'0');
        if value > MAX_MAGNITUDE {
            return None;
        }
    }
    Some((value, &s[digits..]))
}

/// The digits at the start of `s` as a fraction `value / scale`, and what follows; digits
/// beyond what fits are consumed and ignored.
fn leading_fraction(s: &str) -> (u64, f64, &str) {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let (mut value, mut scale, mut overflow) = (0u64, 1.0f64, false);
    for b in s[..digits].bytes() {
        if overflow {
            continue;
        }
        if value > (MAX_MAGNITUDE - 1) / 10 {
            overflow = true;
            continue;
        }
        let next = value * 10 + u64::from(b - b'0');
        if next > MAX_MAGNITUDE {
            overflow = true;
            continue;
        }
        value = next;
        scale *= 10.0;
    }
    (value, scale, &s[digits..])
}

impl From<std::time::Duration> for Duration {
    /// Saturates at `i64::MAX` nanoseconds (about 292 years).
    fn from(d: std::time::Duration) -> Self {
        Duration(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
    }
}

impl fmt::Display for Duration {
    /// Go's `time.Duration.String()`: `1h2m3.5s`, `1m0s`, `500ms`, `1.5µs`, `-2s`, `0s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let magnitude = self.0.unsigned_abs();
        if self.0 < 0 {
            f.write_str("-")?;
        }
        if magnitude == 0 {
            return f.write_str("0s");
        }
        if magnitude < 1_000_000_000 {
            let (unit, digits) = if magnitude < 1_000 {
                ("ns", 0)
            } else if magnitude < 1_000_000 {
                ("\u{b5}s", 3)
            } else {
                ("ms", 6)
            };
            write_fraction(f, magnitude, digits)?;
            return f.write_str(unit);
        }
        let seconds = magnitude / 1_000_000_000;
        let (hours, minutes) = (seconds / 3600, seconds / 60 % 60);
        if hours > 0 {
            write!(f, "{hours}h")?;
        }
        if seconds >= 60 {
            write!(f, "{minutes}m")?;
        }
        write_fraction(f, magnitude % 60_000_000_000, 9)?;
        f.write_str("s")
    }
}

/// `value / 10^digits` with the fraction's trailing zeros removed.
fn write_fraction(f: &mut fmt::Formatter<'_>, value: u64, digits: u32) -> fmt::Result {
    let scale = 10u64.pow(digits);
    let (whole, rest) = (value / scale, value % scale);
    write!(f, "{whole}")?;
    if rest > 0 {
        let text = format!("{rest:0width$}", width = digits as usize);
        write!(f, ".{}", text.trim_end_matches('0'))?;
    }
    Ok(())
}

impl FromStr for Duration {
    type Err = ParseDurationError;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Duration::parse(text)
    }
}

impl serde::Serialize for Duration {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Duration {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Duration;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a Go duration such as \"1m30s\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Duration, E> {
                Duration::parse(v).map_err(E::custom)
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

/// Text that is not a Go duration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseDurationError {
    text: String,
    problem: Problem,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Problem {
    Invalid,
    MissingUnit,
    UnknownUnit(String),
}

impl ParseDurationError {
    fn new(text: &str, problem: Problem) -> Self {
        ParseDurationError {
            text: text.to_owned(),
            problem,
        }
    }
}

impl fmt::Display for ParseDurationError {
    /// Go's wording: `invalid duration "soon"`, `missing unit in duration "1"`,
    /// `unknown unit "e" in duration "1e3s"`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.problem {
            Problem::Invalid => write!(f, "invalid duration {:?}", self.text),
            Problem::MissingUnit => write!(f, "missing unit in duration {:?}", self.text),
            Problem::UnknownUnit(unit) => {
                write!(f, "unknown unit {unit:?} in duration {:?}", self.text)
            }
        }
    }
}

impl std::error::Error for ParseDurationError {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Inputs and what Go 1.26's `time.ParseDuration` returns for them (`None`: an error),
    /// with `Duration.String()` of the result.
    const GO_PARSE: &[(&str, Option<(i64, &str)>)] = &[
        ("0", Some((0, "0s"))),
        ("0s", Some((0, "0s"))),
        ("1.5h", Some((5_400_000_000_000, "1h30m0s"))),
        ("1h30m", Some((5_400_000_000_000, "1h30m0s"))),
        ("-1.5s", Some((-1_500_000_000, "-1.5s"))),
        ("+5s", Some((5_000_000_000, "5s"))),
        (".5s", Some((500_000_000, "500ms"))),
        ("1.s", Some((1_000_000_000, "1s"))),
        ("300ms", Some((300_000_000, "300ms"))),
        ("1us", Some((1_000, "1\u{b5}s"))),
        ("1\u{b5}s", Some((1_000, "1\u{b5}s"))),
        ("1\u{3bc}s", Some((1_000, "1\u{b5}s"))),
        ("2ns", Some((2, "2ns"))),
        ("1h2m3.05s", Some((3_723_050_000_000, "1h2m3.05s"))),
        ("1.0000000001s", Some((1_000_000_000, "1s"))),
        (
            "2562047h47m16.854775807s",
            Some((i64::MAX, "2562047h47m16.854775807s")),
        ),
        ("2562047h47m16.854775808s", None),
        ("", None),
        ("1", None),
        ("1e3s", None),
        ("s", None),
        ("1hm", None),
        ("-0", Some((0, "0s"))),
        ("5m-3s", None),
        ("1.5.5s", None),
        ("0.333333333333s", Some((333_333_333, "333.333333ms"))),
        (
            "9223372036854775807ns",
            Some((i64::MAX, "2562047h47m16.854775807s")),
        ),
        (
            "-9223372036854775808ns",
            Some((i64::MIN, "-2562047h47m16.854775808s")),
        ),
    ];

    #[test]
    fn parses_and_prints_as_go() {
        for &(text, want) in GO_PARSE {
            match (Duration::parse(text), want) {
                (Ok(d), Some((nanos, printed))) => {
                    assert_eq!(d.as_nanos(), nanos, "{text:?}");
                    assert_eq!(d.to_string(), printed, "{text:?}");
                }
                (Err(_), None) => {}
                (got, want) => panic!("{text:?}: got {got:?}, Go gives {want:?}"),
            }
        }
    }

    #[test]
    fn prints_as_go() {
        let cases = [
            (0, "0s"),
            (1, "1ns"),
            (999, "999ns"),
            (1_000, "1\u{b5}s"),
            (1_500, "1.5\u{b5}s"),
            (1_000_000, "1ms"),
            (1_500_000, "1.5ms"),
            (1_000_000_000, "1s"),
            (60_000_000_000, "1m0s"),
            (3_600_000_000_000, "1h0m0s"),
            (3_723_050_000_000, "1h2m3.05s"),
            (-1_500_000_000, "-1.5s"),
            (-1, "-1ns"),
        ];
        for (nanos, want) in cases {
            assert_eq!(Duration::from_nanos(nanos).to_string(), want, "{nanos}");
        }
    }

    #[test]
    fn errors_say_what_was_wrong() {
        // Go 1.26's messages for the same inputs, without its "time: " prefix.
        assert_eq!(
            Duration::parse("soon").unwrap_err().to_string(),
            r#"invalid duration "soon""#
        );
        assert_eq!(
            Duration::parse("1e3s").unwrap_err().to_string(),
            r#"unknown unit "e" in duration "1e3s""#
        );
        assert_eq!(
            Duration::parse("1").unwrap_err().to_string(),
            r#"missing unit in duration "1""#
        );
        assert_eq!(
            Duration::parse("3d").unwrap_err().to_string(),
            r#"unknown unit "d" in duration "3d""#
        );
        let err = serde_json::from_str::<Duration>(r#""soon""#).unwrap_err();
        assert!(err.to_string().contains("invalid duration"), "{err}");
        assert!(serde_json::from_str::<Duration>("30").is_err());
    }

    #[test]
    fn converts_from_and_to_std() {
        let d = Duration::from(std::time::Duration::from_millis(1_500));
        assert_eq!(d.to_string(), "1.5s");
        assert_eq!(d.to_std(), Some(std::time::Duration::from_millis(1_500)));
        assert_eq!(Duration::from_nanos(-1).to_std(), None);
        assert_eq!(
            Duration::from(std::time::Duration::MAX).as_nanos(),
            i64::MAX
        );
    }

    proptest::proptest! {
        #[test]
        fn printed_text_parses_back(nanos: i64) {
            let d = Duration::from_nanos(nanos);
            proptest::prop_assert_eq!(Duration::parse(&d.to_string()), Ok(d));
            let json = serde_json::to_string(&d).unwrap();
            proptest::prop_assert_eq!(serde_json::from_str::<Duration>(&json).unwrap(), d);
        }
    }
}
