//! [`IntOrString`], `k8s.io/apimachinery/pkg/util/intstr.IntOrString`: a field that holds
//! either an integer or a string, such as a port (`8080` or `"http"`) or a rolling update
//! bound (`1` or `"25%"`).

use std::fmt;

use super::IStr;

/// An integer or a string, encoded as whichever it holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IntOrString {
    /// An integer value.
    Int(i32),
    /// A string value.
    String(IStr),
}

impl Default for IntOrString {
    fn default() -> Self {
        IntOrString::Int(0)
    }
}

impl IntOrString {
    /// Resolves an integer or a percentage (`"25%"`) against `total`, as Go's
    /// `GetScaledValueFromIntOrPercent`: a percentage is `total * percent / 100`, rounded up
    /// when `round_up` is true and down otherwise.
    ///
    /// `None` where Go returns an error (a string that is not an integer followed by `%`), and
    /// also where the result does not fit an `i32` (`"9223372036854775807%"`): Go computes in
    /// `float64` and converts back without a check, so its result there is meaningless; here
    /// every step is checked.
    pub fn scaled_value(&self, total: i32, round_up: bool) -> Option<i32> {
        match self {
            IntOrString::Int(i) => Some(*i),
            IntOrString::String(s) => {
                let percent: i64 = s.strip_suffix('%')?.parse().ok()?;
                let product = percent.checked_mul(i64::from(total))?;
                let value = if round_up {
                    product.checked_add(99)?.div_euclid(100)
                } else {
                    product.div_euclid(100)
                };
                i32::try_from(value).ok()
            }
        }
    }
}

impl fmt::Display for IntOrString {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IntOrString::Int(i) => write!(f, "{i}"),
            IntOrString::String(s) => f.write_str(s),
        }
    }
}

impl From<i32> for IntOrString {
    fn from(i: i32) -> Self {
        IntOrString::Int(i)
    }
}

impl From<&str> for IntOrString {
    fn from(s: &str) -> Self {
        IntOrString::String(IStr::new(s))
    }
}

impl serde::Serialize for IntOrString {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            IntOrString::Int(i) => serializer.serialize_i32(*i),
            IntOrString::String(s) => serializer.serialize_str(s),
        }
    }
}

impl<'de> serde::Deserialize<'de> for IntOrString {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = IntOrString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an integer or a string")
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<IntOrString, E> {
                i32::try_from(v)
                    .map(IntOrString::Int)
                    .map_err(|_| E::custom(format_args!("integer {v} out of the int32 range")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<IntOrString, E> {
                i32::try_from(v)
                    .map(IntOrString::Int)
                    .map_err(|_| E::custom(format_args!("integer {v} out of the int32 range")))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<IntOrString, E> {
                Ok(IntOrString::String(IStr::new(v)))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_both_forms() {
        let i: IntOrString = serde_json::from_str("8080").unwrap();
        assert_eq!(i, IntOrString::Int(8080));
        assert_eq!(serde_json::to_string(&i).unwrap(), "8080");
        let s: IntOrString = serde_json::from_str("\"http\"").unwrap();
        assert_eq!(s, IntOrString::from("http"));
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"http\"");
        assert!(serde_json::from_str::<IntOrString>("4294967296").is_err());
        assert!(serde_json::from_str::<IntOrString>("true").is_err());
    }

    #[test]
    fn is_two_words() {
        assert_eq!(std::mem::size_of::<IntOrString>(), 16);
        assert_eq!(std::mem::size_of::<Option<IntOrString>>(), 16);
    }

    #[test]
    fn scales_percentages() {
        assert_eq!(IntOrString::from("25%").scaled_value(10, true), Some(3));
        assert_eq!(IntOrString::from("25%").scaled_value(10, false), Some(2));
        assert_eq!(IntOrString::Int(4).scaled_value(10, true), Some(4));
        assert_eq!(IntOrString::from("abc").scaled_value(10, true), None);
    }

    #[test]
    fn scaled_values_at_the_edges_never_overflow() {
        let max = i64::MAX.to_string();
        let min = i64::MIN.to_string();
        // (value, total, round up) -> result
        let table: &[(&str, i32, bool, Option<i32>)] = &[
            // Products that overflow an i64.
            (&format!("{max}%"), 10, true, None),
            (&format!("{max}%"), 10, false, None),
            (&format!("{min}%"), -1, false, None),
            (&format!("{min}%"), 2, true, None),
            // Products that fit an i64 but whose result does not fit an i32.
            (&format!("{max}%"), 1, false, None),
            (&format!("{max}%"), 1, true, None),
            ("2147483648%", 100, false, None),
            ("-2147483649%", 100, true, None),
            ("100%", i32::MAX, true, Some(i32::MAX)),
            ("101%", i32::MAX, true, None),
            ("100%", i32::MIN, false, Some(i32::MIN)),
            ("101%", i32::MIN, false, None),
            // The largest and smallest results that fit.
            ("2147483647%", 100, true, Some(i32::MAX)),
            ("-2147483648%", 100, false, Some(i32::MIN)),
            (&format!("{max}%"), 0, true, Some(0)),
            // Rounding of negative values, as Go's math.Ceil and math.Floor.
            ("-25%", 10, true, Some(-2)),
            ("-25%", 10, false, Some(-3)),
            ("1%", 1, true, Some(1)),
            ("1%", 1, false, Some(0)),
            // Not a percentage: Go's error.
            ("%", 10, true, None),
            ("1.5%", 10, true, None),
            ("99999999999999999999%", 10, true, None),
            ("10", 10, true, None),
        ];
        for (value, total, round_up, want) in table {
            assert_eq!(
                IntOrString::from(*value).scaled_value(*total, *round_up),
                *want,
                "{value} of {total}, round up {round_up}"
            );
        }
        assert_eq!(
            IntOrString::Int(i32::MIN).scaled_value(0, true),
            Some(i32::MIN)
        );
    }
}
