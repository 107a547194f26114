//! [`Quantity`], `k8s.io/apimachinery/pkg/api/resource.Quantity`: a resource amount such as
//! `100m` CPU or `1Gi` of memory.
//!
//! The exact string is kept as received and sent back unchanged, so a read-modify-write never
//! rewrites `1000m` as `1`. It is parsed into a number only on demand ([`Quantity::to_milli`],
//! [`Quantity::to_i64_ceil`], [`Quantity::to_f64`]). The API also accepts a bare JSON number,
//! which is decoded into its decimal text.

use std::fmt;

use super::IStr;

/// A resource quantity, stored as its exact text (an [`IStr`]: 16 bytes, inline up to 14
/// bytes, so `500m` or `128Mi` need no allocation); see the [`meta`](crate::meta) module
/// documentation.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Quantity(pub IStr);

impl Quantity {
    /// The quantity's text, such as `500m` or `2Gi`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value in thousandths (`"1.5"` and `"1500m"` give 1500), rounded away from zero as
    /// Go's `MilliValue` does (`"100u"`, a ten-thousandth, gives 1); `None` if the text is not
    /// a valid quantity or overflows.
    ///
    /// For a negative fraction Go's answer depends on how `ParseQuantity` stored the amount:
    /// its `int64` form rounds away from zero (`-1.5` gives -2), its big-decimal form
    /// (`"-0.3Ki"`, more than 18 digits, or a scale finer than `n`) truncates and adds one.
    /// kclient always rounds away from zero, as the `int64` form does.
    pub fn to_milli(&self) -> Option<i128> {
        parse(&self.0)?.scaled(-3)
    }

    /// The value rounded away from zero to an integer (Go's `Value`); `None` if invalid or
    /// out of the `i64` range.
    pub fn to_i64_ceil(&self) -> Option<i64> {
        parse(&self.0)?
            .scaled(0)
            .and_then(|v| i64::try_from(v).ok())
    }

    /// The value as a float (approximate); `None` if invalid.
    pub fn to_f64(&self) -> Option<f64> {
        let p = parse(&self.0)?;
        Some(p.mantissa as f64 * 10f64.powi(p.exp10) * 2f64.powi(p.exp2))
    }
}

/// A parsed quantity: `mantissa * 10^exp10 * 2^exp2`.
struct Parsed {
    mantissa: i128,
    exp10: i32,
    exp2: i32,
}

impl Parsed {
    /// The value in units of `10^unit_exp10`, rounded away from zero.
    fn scaled(&self, unit_exp10: i32) -> Option<i128> {
        let mut num = self.mantissa;
        if self.exp2 > 0 {
            num = num.checked_mul(1i128.checked_shl(self.exp2 as u32)?)?;
        }
        let e = self.exp10 - unit_exp10;
        if e >= 0 {
            num.checked_mul(10i128.checked_pow(e as u32)?)
        } else {
            let Some(div) = 10i128.checked_pow((-e) as u32) else {
                // Far smaller than one unit: rounds away from zero to +-1 (or stays 0).
                return Some(num.signum());
            };
            let q = num / div;
            Some(if num % div != 0 { q + num.signum() } else { q })
        }
    }
}

/// Parses `<sign><digits>[.<digits>]<suffix>` as the Kubernetes grammar defines it. The
/// suffix is a decimal SI one (`n`, `u`, `m`, none, `k`, `M`, `G`, `T`, `P`, `E`), a binary
/// one (`Ki` to `Ei`) or a decimal exponent (`e3`, `E-2`), as in Go's `quantitySuffixer`.
fn parse(s: &str) -> Option<Parsed> {
    let bytes = s.as_bytes();
    let mut i = 0;
    let negative = match bytes.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut mantissa: i128 = 0;
    let mut digits = 0;
    let mut frac_digits = 0i32;
    let mut seen_point = false;
    while i < bytes.len() {
        match bytes[i] {
            b'0'..=b'9' => {
                mantissa = mantissa
                    .checked_mul(10)?
                    .checked_add(i128::from(bytes[i] - b'0'))?;
                digits += 1;
                if seen_point {
                    frac_digits += 1;
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => break,
        }
        i += 1;
    }
    if digits == 0 {
        return None;
    }
    let (exp10, exp2) = match &s[i..] {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        exp if exp.starts_with(['e', 'E']) => {
            let e: i32 = exp[1..].parse().ok()?;
            if !(-1000..=1000).contains(&e) {
                return None;
            }
            (e, 0)
        }
        _ => return None,
    };
    Some(Parsed {
        mantissa: if negative { -mantissa } else { mantissa },
        exp10: exp10 - frac_digits,
        exp2,
    })
}

impl fmt::Debug for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.0.as_str(), f)
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for Quantity {
    fn from(s: &str) -> Self {
        Quantity(IStr::new(s))
    }
}

impl From<String> for Quantity {
    fn from(s: String) -> Self {
        Quantity(IStr::new(&s))
    }
}

impl serde::Serialize for Quantity {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> serde::Deserialize<'de> for Quantity {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Quantity;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a quantity string or number")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Quantity, E> {
                Ok(Quantity(IStr::new(v)))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Quantity, E> {
                Ok(Quantity(IStr::new(&v.to_string())))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Quantity, E> {
                Ok(Quantity(IStr::new(&v.to_string())))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Quantity, E> {
                Ok(Quantity(IStr::new(&v.to_string())))
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_two_words() {
        assert_eq!(std::mem::size_of::<Quantity>(), 16);
        assert_eq!(std::mem::size_of::<Option<Quantity>>(), 16);
    }

    #[test]
    fn keeps_exact_text() {
        for s in ["100m", "1Gi", "1.5", "0.1m", "1e3", "+2", "1000m"] {
            let q: Quantity = serde_json::from_str(&format!("\"{s}\"")).unwrap();
            assert_eq!(serde_json::to_string(&q).unwrap(), format!("\"{s}\""));
        }
    }

    #[test]
    fn numbers_decode_to_text() {
        let q: Quantity = serde_json::from_str("2").unwrap();
        assert_eq!(q.as_str(), "2");
        let q: Quantity = serde_json::from_str("0.5").unwrap();
        assert_eq!(q.to_milli(), Some(500));
    }

    #[test]
    fn parses_on_demand() {
        assert_eq!(Quantity::from("100m").to_milli(), Some(100));
        assert_eq!(Quantity::from("1.5").to_milli(), Some(1500));
        assert_eq!(Quantity::from("2").to_milli(), Some(2000));
        assert_eq!(Quantity::from("1Ki").to_i64_ceil(), Some(1024));
        assert_eq!(
            Quantity::from("1.5Gi").to_i64_ceil(),
            Some(1536 * 1024 * 1024)
        );
        assert_eq!(Quantity::from("1e3").to_i64_ceil(), Some(1000));
        assert_eq!(Quantity::from("1E-3").to_milli(), Some(1));
        assert_eq!(Quantity::from("0.1m").to_milli(), Some(1));
        assert_eq!(Quantity::from("100m").to_i64_ceil(), Some(1));
        assert_eq!(Quantity::from("-1.5").to_i64_ceil(), Some(-2));
        assert_eq!(Quantity::from("3k").to_f64(), Some(3000.0));
        assert_eq!(Quantity::from("1Xi").to_milli(), None);
        assert_eq!(Quantity::from("").to_milli(), None);
        assert_eq!(Quantity::from("m").to_milli(), None);
        assert_eq!(Quantity::from("9Ei").to_i64_ceil(), None);
    }

    /// Go's suffix table has `n` (1e-9) and `u` (1e-6): metrics-server reports CPU as
    /// `156423n`, and the API server writes 0.0001 CPU as `100u`. `MilliValue` and `Value`
    /// round a fraction away from zero.
    #[test]
    fn nano_and_micro_suffixes() {
        let cases: &[(&str, Option<i128>, Option<i64>)] = &[
            ("500000000n", Some(500), Some(1)),
            ("250000u", Some(250), Some(1)),
            ("100u", Some(1), Some(1)),
            ("1000u", Some(1), Some(1)),
            ("1001u", Some(2), Some(1)),
            ("1500000000n", Some(1500), Some(2)),
            ("2000000000n", Some(2000), Some(2)),
            ("156423n", Some(1), Some(1)),
            ("0n", Some(0), Some(0)),
            ("0.5n", Some(1), Some(1)),
            ("1.5u", Some(1), Some(1)),
            ("-100u", Some(-1), Some(-1)),
            ("-1500000000n", Some(-1500), Some(-2)),
            ("1nn", None, None),
            ("1un", None, None),
            ("1U", None, None),
            ("1N", None, None),
        ];
        for (text, milli, value) in cases {
            let q = Quantity::from(*text);
            assert_eq!(q.to_milli(), *milli, "{text} to_milli");
            assert_eq!(q.to_i64_ceil(), *value, "{text} to_i64_ceil");
        }
        let cpu = Quantity::from("156423n").to_f64().unwrap();
        assert!((cpu - 0.000_156_423).abs() < 1e-15, "{cpu}");
        let quarter = Quantity::from("250000u").to_f64().unwrap();
        assert!((quarter - 0.25).abs() < 1e-15, "{quarter}");
    }
}
