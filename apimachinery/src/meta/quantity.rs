//! [`Quantity`], `k8s.io/apimachinery/pkg/api/resource.Quantity`: a resource amount such as
//! `100m` CPU or `1Gi` of memory.
//!
//! The exact string is kept as received (but for whitespace around it, see below) and sent
//! back unchanged, so a read-modify-write never
//! rewrites `1000m` as `1`. It is parsed into a number only on demand ([`Quantity::to_milli`],
//! [`Quantity::to_i64_ceil`], [`Quantity::to_f64`]). The API also accepts a bare JSON number,
//! which is decoded into its decimal text.
//!
//! Because the text is the value, `==` and `Hash` compare the text (`1000m != 1`), and there
//! is no `Ord`: an order on the text looks numeric and is not (`"500m" > "1"`). Amounts are
//! compared with [`Quantity::cmp_amount`], Go's `Quantity.Cmp`.
//!
//! The amount of a text is the one Go's `ParseQuantity` reads from it, as the API server does,
//! with its quirks (a number with no digits, `"."`, `"+"`, `"m"`, `"Ki"`, is zero) and its
//! bounds (a magnitude is rounded up to whole nano-units, and a binary-suffixed one is capped
//! at 2^63-1: the server stores `"16Ei"` as `9223372036854775807`). kclient departs from it
//! only where Go's answer is unbounded or wrong: it reads numbers of at most 38 digits
//! (leading zeros aside) and decimal exponents up to 1000 (`"1e1001"` has no amount here),
//! and it never wraps around an integer type. Decoding JSON trims whitespace around the text,
//! as Go's `Quantity.UnmarshalJSON` does (`" 1"` reads as `1`); [`Quantity::from`] keeps it,
//! and such a text has no amount, as `ParseQuantity` and the server's protobuf decoding refuse
//! it.

use std::cmp::Ordering;
use std::fmt;

use super::IStr;

/// A resource quantity, stored as its exact text (an [`IStr`]: 16 bytes, inline up to 14
/// bytes, so `500m` or `128Mi` need no allocation); see the [`meta`](crate::meta) module
/// documentation.
///
/// `==` and `Hash` compare the text, the serialized form: `"1000m"` and `"1"` are different
/// quantities of the same amount. Compare amounts with [`Quantity::cmp_amount`]; there is no
/// `Ord`, so a text order that looks numeric cannot be used by mistake:
///
/// ```compile_fail
/// use kclient_apimachinery::meta::Quantity;
/// let _ = Quantity::from("500m") < Quantity::from("1");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Quantity(pub IStr);

impl Quantity {
    /// Checks `text` as Go's `resource.ParseQuantity` does and keeps it as it is: an error
    /// for text the API server would refuse (`"1 Gi"`, `"0x1"`, `""`), where
    /// [`Quantity::from`] takes any text and the server refuses the whole object later.
    ///
    /// Unlike Go's, the text is not rewritten in its canonical form (see the
    /// [`meta`](crate::meta) module documentation). The one departure in what is accepted:
    /// numbers of more than 38 digits and decimal exponents above 1000, which Go accepts, are
    /// refused here, because kclient does not compute their amounts.
    ///
    /// ```
    /// use kclient_apimachinery::meta::Quantity;
    ///
    /// let limit: Quantity = "512Mi".parse().unwrap();
    /// assert_eq!(limit.to_i64_ceil(), Some(512 << 20));
    /// let err = Quantity::parse("512 Mi").unwrap_err();
    /// assert!(err.to_string().contains(r#""512 Mi""#));
    /// ```
    pub fn parse(text: &str) -> Result<Quantity, ParseQuantityError> {
        match parse(text) {
            Some(_) => Ok(Quantity::from(text)),
            None => Err(ParseQuantityError {
                text: text.to_owned(),
            }),
        }
    }

    /// The quantity's text, such as `500m` or `2Gi`.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The value in thousandths (`"1.5"` and `"1500m"` give 1500), rounded away from zero as
    /// Go's `MilliValue` does (`"100u"`, a ten-thousandth, gives 1); `None` if the text is not
    /// a valid quantity or overflows. A binary-suffixed amount is capped at 2^63-1 first, as
    /// the API server stores it (`"16Ei"` gives 9223372036854775807000).
    ///
    /// For a negative fraction Go's answer depends on how `ParseQuantity` stored the amount:
    /// its `int64` form rounds away from zero (`-1.5` gives -2), its big-decimal form
    /// (`"-0.3Ki"`, more than 18 digits, or a scale finer than `n`) truncates and adds one.
    /// kclient always rounds away from zero, as the `int64` form does.
    pub fn to_milli(&self) -> Option<i128> {
        parse(&self.0)?.capped_scaled(-3)
    }

    /// The value in nano-units (`"1.5"` and `"1500000000n"` give 1500000000), the finest
    /// unit Go's `ParseQuantity` keeps: a finer amount is rounded away from zero to a whole
    /// nano-unit, as Go stores it (`"0.1n"` gives 1), and a binary-suffixed amount is capped
    /// at 2^63-1 as for [`to_milli`](Self::to_milli) (Go's `ScaledValue(resource.Nano)` for
    /// amounts it holds exactly). `None` if the text is not a valid quantity or the amount
    /// does not fit an `i128` (beyond about 1.7 * 10^29).
    ///
    /// ```
    /// use kclient_apimachinery::meta::Quantity;
    ///
    /// assert_eq!(Quantity::from("250m").to_nano(), Some(250_000_000));
    /// assert_eq!(Quantity::from("1Ki").to_nano(), Some(1_024_000_000_000));
    /// ```
    pub fn to_nano(&self) -> Option<i128> {
        parse(&self.0)?.capped_scaled(-9)
    }

    /// The value rounded away from zero to an integer (Go's `Value`), a binary-suffixed amount
    /// capped at 2^63-1 as for [`to_milli`](Self::to_milli); `None` if invalid or out of the
    /// `i64` range.
    pub fn to_i64_ceil(&self) -> Option<i64> {
        parse(&self.0)?
            .capped_scaled(0)
            .and_then(|v| i64::try_from(v).ok())
    }

    /// Compares the amounts, as Go's `Quantity.Cmp` does: `500m` is less than `1`, `1Gi` more
    /// than `512Mi`, `1000m` equal to `1`. `None` if either text is not a valid quantity.
    ///
    /// The amounts are the ones Go's `ParseQuantity` holds: a magnitude that is not a whole
    /// number of nano-units is rounded away from zero to one (`0.1n` and `1n` are equal), and a
    /// binary-suffixed amount above 2^63-1 is capped there (`8Ei` and `16Ei` are equal). Within
    /// that, the comparison is exact for any suffixes and exponents (`1e-1000`, `3e500`), with
    /// integer arithmetic only: no float rounding and no overflow.
    ///
    /// `Quantity` has no `Ord`: its `==` and `Hash` compare the text, which is what is sent
    /// back to the server, and an amount order would not agree with them (`1000m != 1`). Sort
    /// by amount with `sort_by(|a, b| a.cmp_amount(b).unwrap_or(Ordering::Equal))` or by
    /// whatever order suits invalid texts.
    pub fn cmp_amount(&self, other: &Quantity) -> Option<Ordering> {
        Some(
            parse(&self.0)?
                .go_amount()
                .cmp(&parse(&other.0)?.go_amount()),
        )
    }

    /// The value as a float (approximate, Go's `AsApproximateFloat64`) of the amount Go holds:
    /// rounded up to whole nano-units and, if binary-suffixed, capped at 2^63-1; `None` if
    /// invalid.
    pub fn to_f64(&self) -> Option<f64> {
        let p = parse(&self.0)?;
        if let Some(capped) = p.binary_cap() {
            return Some(capped as f64);
        }
        if p.mantissa != 0 && p.scaled(-9) == Some(p.mantissa.signum()) {
            // Under a nano-unit: Go rounds it up to one.
            return Some(p.mantissa.signum() as f64 * 1e-9);
        }
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
        if num == 0 {
            return Some(0);
        }
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

    /// The capped amount, +-(2^63-1), if Go's `ParseQuantity` caps this one: binary-suffixed
    /// and larger in magnitude.
    fn binary_cap(&self) -> Option<i128> {
        let max = i128::from(i64::MAX);
        // An amount too large for an i128 is over the cap too.
        (self.exp2 > 0
            && self
                .scaled(0)
                .is_none_or(|units| units.unsigned_abs() > max.unsigned_abs()))
        .then(|| max * self.mantissa.signum())
    }

    /// [`scaled`](Self::scaled) of the amount Go holds, capped as [`binary_cap`](Self::binary_cap)
    /// says. (Go's rounding up to whole nano-units does not change a value rounded away from
    /// zero to a coarser unit.)
    fn capped_scaled(&self, unit_exp10: i32) -> Option<i128> {
        match self.binary_cap() {
            Some(capped) => Parsed {
                mantissa: capped,
                exp10: 0,
                exp2: 0,
            }
            .scaled(unit_exp10),
            None => self.scaled(unit_exp10),
        }
    }
}

/// The largest amount Go's `ParseQuantity` keeps for a binary-suffixed quantity (its
/// `maxAllowed`, 2^63-1), in nano-units.
const GO_BINARY_MAX_NANOS: u128 = i64::MAX as u128 * 1_000_000_000;

impl Parsed {
    /// The amount as Go's `ParseQuantity` holds it, in nano-units: the magnitude rounded up to
    /// a whole nano-unit, capped at 2^63-1 when the suffix is binary.
    fn go_amount(&self) -> Amount {
        let negative = self.mantissa < 0;
        let mut nanos = BigUint::from(self.mantissa.unsigned_abs());
        if nanos.is_zero() {
            return Amount {
                negative: false,
                nanos,
            };
        }
        for _ in 0..self.exp2 {
            nanos.mul_small(2);
        }
        let shift = i64::from(self.exp10) + 9;
        if shift >= 0 {
            for _ in 0..shift {
                nanos.mul_small(10);
            }
        } else {
            let mut inexact = false;
            for _ in 0..shift.unsigned_abs() {
                if nanos.is_zero() {
                    break;
                }
                inexact |= nanos.div_small(10) != 0;
            }
            if inexact {
                nanos.add_one();
            }
        }
        if self.exp2 > 0 {
            let max = BigUint::from(GO_BINARY_MAX_NANOS);
            if nanos > max {
                nanos = max;
            }
        }
        Amount { negative, nanos }
    }
}

/// A signed amount in nano-units, ordered by value.
#[derive(PartialEq, Eq)]
struct Amount {
    negative: bool,
    nanos: BigUint,
}

impl Ord for Amount {
    fn cmp(&self, other: &Self) -> Ordering {
        let sign = |a: &Amount| match (a.nanos.is_zero(), a.negative) {
            (true, _) => 0i8,
            (false, true) => -1,
            (false, false) => 1,
        };
        match sign(self).cmp(&sign(other)) {
            Ordering::Equal if sign(self) < 0 => other.nanos.cmp(&self.nanos),
            Ordering::Equal => self.nanos.cmp(&other.nanos),
            unequal => unequal,
        }
    }
}

impl PartialOrd for Amount {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// An unsigned integer of any size, just enough of one to scale a quantity exactly: 32-bit
/// limbs, least significant first, no high zero limbs (zero is empty), so that the derived
/// equality holds and [`Ord`] compares lengths first.
#[derive(Clone, PartialEq, Eq)]
struct BigUint(Vec<u32>);

impl From<u128> for BigUint {
    fn from(mut n: u128) -> Self {
        let mut limbs = Vec::new();
        while n != 0 {
            limbs.push(n as u32);
            n >>= 32;
        }
        BigUint(limbs)
    }
}

impl BigUint {
    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn mul_small(&mut self, factor: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let product = u64::from(*limb) * u64::from(factor) + carry;
            *limb = product as u32;
            carry = product >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    /// Divides in place, returning the remainder.
    fn div_small(&mut self, divisor: u32) -> u32 {
        let mut remainder = 0u64;
        for limb in self.0.iter_mut().rev() {
            let current = (remainder << 32) | u64::from(*limb);
            *limb = (current / u64::from(divisor)) as u32;
            remainder = current % u64::from(divisor);
        }
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
        remainder as u32
    }

    fn add_one(&mut self) {
        for limb in &mut self.0 {
            let (sum, overflow) = limb.overflowing_add(1);
            *limb = sum;
            if !overflow {
                return;
            }
        }
        self.0.push(1);
    }
}

impl Ord for BigUint {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

impl PartialOrd for BigUint {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Parses `<sign><digits>[.<digits>]<suffix>` as Go's `ParseQuantity` does. The suffix is a
/// decimal SI one (`n`, `u`, `m`, none, `k`, `M`, `G`, `T`, `P`, `E`), a binary one (`Ki` to
/// `Ei`) or a decimal exponent (`e3`, `E-2`), as in Go's `quantitySuffixer`. As in Go, the
/// number may have no digits at all and is then zero (`"."`, `"-"`, `"m"`, `"Ki"`; not
/// `"e-10"`, `"Pi"` or `"Ei"`), but the text may not be empty.
fn parse(s: &str) -> Option<Parsed> {
    if s.is_empty() {
        return None;
    }
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
    let mut digits = 0usize;
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
            // Go reads the exponent as an int64 (and then truncates it to an int32, which
            // kclient does not copy). Above 1000 the amount is not computed (it would take
            // memory in proportion); below -1000 any amount this parser holds is under a
            // nano-unit, as it is at -1000, so the exponent is clamped there.
            let e: i64 = exp[1..].parse().ok()?;
            if e > 1000 {
                return None;
            }
            (e.max(-1000) as i32, 0)
        }
        _ => return None,
    };
    // A number with no digits is zero where Go reads it as an `int64` (whose text "0" it
    // makes up), and an error where it reads it as a big decimal, which needs digits: for a
    // scale finer than nano-units (`e-10`) and for `Pi` and `Ei`.
    if digits == 0 && (exp10 < -9 || exp2 > 40) {
        return None;
    }
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

impl std::str::FromStr for Quantity {
    type Err = ParseQuantityError;

    /// [`Quantity::parse`].
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Quantity::parse(text)
    }
}

/// Text that is not a quantity (see [`Quantity::parse`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseQuantityError {
    text: String,
}

impl fmt::Display for ParseQuantityError {
    /// The text, then Go's `ErrFormatWrong` wording.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid quantity {:?}: quantities must match the regular expression \
             '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            self.text
        )
    }
}

impl std::error::Error for ParseQuantityError {}

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
    /// Its text, as a string. It goes through `serialize_newtype_struct`, which JSON and YAML
    /// write as the string alone, so that [`semantic_eq`](crate::semantic_eq) can tell a
    /// quantity from other strings and compare it by amount.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_newtype_struct(crate::equality::QUANTITY_NAME, self.as_str())
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
                // Go's `UnmarshalJSON` trims whitespace around the raw text between the
                // quotes: what a JSON encoder writes unescaped (a control character such as a
                // tab arrives escaped, as `\` and `t`, which Go does not trim).
                let trimmed = v.trim_matches(|c: char| c.is_whitespace() && c >= ' ');
                Ok(Quantity(IStr::new(trimmed)))
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
        assert_eq!(Quantity::from("1e1001").to_milli(), None);
    }

    /// The amounts Go's `ParseQuantity` (k8s.io/apimachinery v0.36.3) reads, `MilliValue`
    /// and `Value`, where those do not overflow an `int64` (and rounded away from zero where
    /// Go's big-decimal form does not, see `to_milli`); `None` where it returns an error.
    #[test]
    fn amounts_are_the_ones_go_parse_quantity_reads() {
        let cases: &[(&str, Option<(i128, i64)>)] = &[
            // A number with no digits is zero...
            (".", Some((0, 0))),
            ("+", Some((0, 0))),
            ("-", Some((0, 0))),
            ("-.", Some((0, 0))),
            ("m", Some((0, 0))),
            ("-m", Some((0, 0))),
            ("+.m", Some((0, 0))),
            ("n", Some((0, 0))),
            ("e3", Some((0, 0))),
            (".e3", Some((0, 0))),
            ("e-9", Some((0, 0))),
            ("Ki", Some((0, 0))),
            ("-Ki", Some((0, 0))),
            (".Ti", Some((0, 0))),
            // ...but where Go reads it as a big decimal, an error.
            ("e-10", None),
            ("-e-10", None),
            (".e-10", None),
            ("Pi", None),
            ("Ei", None),
            ("+.Pi", None),
            ("0Pi", Some((0, 0))),
            ("0e-10", Some((0, 0))),
            ("0e500", Some((0, 0))),
            ("+e500", Some((0, 0))),
            // Binary amounts are capped at 2^63-1.
            ("8Ei", Some((9_223_372_036_854_775_807_000, i64::MAX))),
            ("9Ei", Some((9_223_372_036_854_775_807_000, i64::MAX))),
            ("16Ei", Some((9_223_372_036_854_775_807_000, i64::MAX))),
            ("-16Ei", Some((-9_223_372_036_854_775_807_000, -i64::MAX))),
            (
                "7.99Ei",
                Some((9_211_842_821_808_707_338_240, 9_211_842_821_808_707_339)),
            ),
            // Tiny amounts, at any exponent, round up to one nano-unit.
            ("1e-1001", Some((1, 1))),
            ("-1e-5000", Some((-1, -1))),
            ("1.e-10", Some((1, 1))),
            // Refused.
            ("", None),
            ("i", None),
            ("1e", None),
            ("1i", None),
            (" 1", None),
            ("1 ", None),
            ("--1", None),
            ("1.2.3", None),
        ];
        for (text, want) in cases {
            let q = Quantity::from(*text);
            let got = q.to_milli().zip(q.to_i64_ceil());
            assert_eq!(got, *want, "{text:?}");
            assert_eq!(q.to_f64().is_some(), want.is_some(), "{text:?}");
            // `parse` accepts exactly what `ParseQuantity` accepts, and keeps the text.
            match Quantity::parse(text) {
                Ok(parsed) => assert_eq!((parsed.as_str(), want.is_some()), (*text, true)),
                Err(err) => {
                    assert!(want.is_none(), "{text:?} refused: {err}");
                    assert!(err.to_string().contains(&format!("{text:?}")), "{err}");
                }
            }
        }
        assert_eq!("1e1001".parse::<Quantity>().ok(), None);
        assert_eq!(
            Quantity::parse("1 Gi").unwrap_err().to_string(),
            "invalid quantity \"1 Gi\": quantities must match the regular expression \
             '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
        assert_eq!(Quantity::from("16Ei").to_f64(), Some(i64::MAX as f64));
        assert_eq!(Quantity::from("0.1n").to_f64(), Some(1e-9));
        assert_eq!(Quantity::from("-1e-20").to_f64(), Some(-1e-9));
    }

    /// Go's `Quantity.UnmarshalJSON` trims whitespace between the quotes, raw: a tab or a
    /// newline arrives escaped and is not trimmed.
    #[test]
    fn json_decoding_trims_whitespace_as_go() {
        for (json, text) in [
            (r#"" 1""#, Some("1")),
            (r#""500m  ""#, Some("500m")),
            ("\"\u{a0}2Gi\u{3000}\"", Some("2Gi")),
            (r#""\t1""#, None),
            (r#""1\n""#, None),
        ] {
            let q: Quantity = serde_json::from_str(json).unwrap();
            match text {
                Some(text) => assert_eq!(q.as_str(), text, "{json}"),
                None => assert_eq!(q.to_milli(), None, "{json}"),
            }
        }
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

    /// Go's `Quantity.Cmp` compares amounts, whatever the suffixes; `ParseQuantity` rounds a
    /// magnitude up to whole nano-units and caps binary amounts at 2^63-1.
    #[test]
    fn cmp_amount_compares_amounts_as_go() {
        use Ordering::{Equal, Greater, Less};
        let cases = [
            ("500m", "1", Less),
            ("2", "10", Less),
            ("1Gi", "512Mi", Greater),
            ("1000m", "1", Equal),
            ("1k", "1000", Equal),
            ("1Ki", "1024", Equal),
            ("1Ki", "1k", Greater),
            ("1e3", "1k", Equal),
            ("1E-3", "1m", Equal),
            ("1E", "1e18", Equal),
            ("100u", "0.1m", Equal),
            ("156423n", "157u", Less),
            ("1.5Gi", "1536Mi", Equal),
            ("0.5Ki", "512", Equal),
            ("+1", "1", Equal),
            ("0", "-0", Equal),
            ("0", "0m", Equal),
            ("-1", "1", Less),
            ("-2", "-1", Less),
            ("-500m", "0", Less),
            ("-1Ki", "-1k", Less),
            // Exact however large or small the exponent: no overflow, no floating point.
            ("1e1000", "9e999", Greater),
            ("1e1000", "10e999", Equal),
            ("-1e1000", "-9e999", Less),
            ("1e19", "1e20", Less),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567891",
                Less,
            ),
            ("18446744073709551616", "18446744073709551615", Greater),
            // Go rounds a magnitude up to whole nano-units when parsing...
            ("0.1n", "1n", Equal),
            ("1.1n", "2n", Equal),
            ("-0.1n", "-1n", Equal),
            ("1e-1000", "0", Greater),
            ("3e-1000", "1e-999", Equal),
            ("0.000000001", "1n", Equal),
            // ...and caps binary amounts (only) at 2^63-1.
            ("8Ei", "9223372036854775807", Equal),
            ("16Ei", "8Ei", Equal),
            ("16Ei", "9223372036854775808", Less),
            ("-16Ei", "-8Ei", Equal),
            ("7Ei", "8Ei", Less),
        ];
        for (a, b, expected) in cases {
            let (a, b) = (Quantity::from(a), Quantity::from(b));
            assert_eq!(a.cmp_amount(&b), Some(expected), "{a} vs {b}");
            assert_eq!(b.cmp_amount(&a), Some(expected.reverse()), "{b} vs {a}");
        }
        assert_eq!(Quantity::from("1Xi").cmp_amount(&Quantity::from("1")), None);
        assert_eq!(Quantity::from("1").cmp_amount(&Quantity::from("")), None);

        // Sorting by amount, which sorting the text got wrong.
        let mut sorted: Vec<Quantity> = ["1Gi", "500m", "2", "512Mi", "100u", "10", "1"]
            .into_iter()
            .map(Quantity::from)
            .collect();
        sorted.sort_by(|a, b| a.cmp_amount(b).unwrap_or(Ordering::Equal));
        let sorted: Vec<&str> = sorted.iter().map(Quantity::as_str).collect();
        assert_eq!(sorted, ["100u", "500m", "1", "2", "10", "512Mi", "1Gi"]);
    }
}
