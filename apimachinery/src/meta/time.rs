//! [`Time`] and [`MicroTime`], `metav1.Time` and `metav1.MicroTime`: timestamps encoded as
//! RFC 3339 strings in UTC.
//!
//! `Time` has whole-second precision (as the API server stores it) and takes 8 bytes;
//! `MicroTime` keeps microseconds (Events, Leases). Both decode any RFC 3339 offset and
//! fraction, and encode in UTC with a `Z` suffix, as Go does: `Time` as
//! `2024-01-02T03:04:05Z`, `MicroTime` as `2024-01-02T03:04:05.123456Z`.
//!
//! As in Go, an unset timestamp is the zero time, `0001-01-01T00:00:00Z` ([`Time::ZERO`], the
//! `Default`), which is written as JSON `null`, and `null` reads as the zero time. So a
//! required timestamp the server left unset (`metav1.Condition.lastTransitionTime`) goes back
//! as `null`, never as an invented date. An optional timestamp (`Option<Time>` in the
//! generated types) reads `null`, and the zero time written out as a string, as `None`, from
//! JSON as from protobuf.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// A timestamp with whole-second precision: seconds since the Unix epoch. The default is
/// [`Time::ZERO`], Go's zero time, encoded as `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Time(pub i64);

/// A timestamp with microsecond precision: microseconds since the Unix epoch. The default is
/// [`MicroTime::ZERO`], Go's zero time, encoded as `null`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MicroTime(pub i64);

/// Go's zero `time.Time`, 0001-01-01T00:00:00Z, in seconds since the Unix epoch.
const GO_ZERO_SECONDS: i64 = -62_135_596_800;

impl Default for Time {
    fn default() -> Self {
        Time::ZERO
    }
}

impl Default for MicroTime {
    fn default() -> Self {
        MicroTime::ZERO
    }
}

impl Time {
    /// The zero time, 0001-01-01T00:00:00Z: an unset timestamp, encoded as `null` (Go's
    /// `metav1.Time{}`).
    pub const ZERO: Time = Time(GO_ZERO_SECONDS);

    /// Whether this is the zero time (unset).
    pub const fn is_zero(self) -> bool {
        self.0 == GO_ZERO_SECONDS
    }

    /// The current time, truncated to whole seconds.
    pub fn now() -> Self {
        Time(unix_micros(SystemTime::now()).div_euclid(1_000_000))
    }

    /// The time `secs` seconds after the Unix epoch.
    pub const fn from_unix_seconds(secs: i64) -> Self {
        Time(secs)
    }

    /// Seconds since the Unix epoch.
    pub const fn unix_seconds(self) -> i64 {
        self.0
    }

    /// Parses an RFC 3339 timestamp, dropping any fraction of a second; `None` if it is not
    /// one or names a time that does not exist (`2023-02-30`, second 60), as Go's
    /// `time.Parse(time.RFC3339, ..)` refuses it.
    pub fn parse(s: &str) -> Option<Self> {
        parse_rfc3339(s)
            .ok()
            .map(|micros| Time(micros.div_euclid(1_000_000)))
    }
}

impl MicroTime {
    /// The zero time, 0001-01-01T00:00:00Z: an unset timestamp, encoded as `null` (Go's
    /// `metav1.MicroTime{}`).
    pub const ZERO: MicroTime = MicroTime(GO_ZERO_SECONDS * 1_000_000);

    /// Whether this is the zero time (unset).
    pub const fn is_zero(self) -> bool {
        self.0 == GO_ZERO_SECONDS * 1_000_000
    }

    /// The current time, truncated to microseconds.
    pub fn now() -> Self {
        MicroTime(unix_micros(SystemTime::now()))
    }

    /// The time `micros` microseconds after the Unix epoch.
    pub const fn from_unix_micros(micros: i64) -> Self {
        MicroTime(micros)
    }

    /// Microseconds since the Unix epoch.
    pub const fn unix_micros(self) -> i64 {
        self.0
    }

    /// Parses an RFC 3339 timestamp, keeping microseconds; `None` as for [`Time::parse`].
    pub fn parse(s: &str) -> Option<Self> {
        parse_rfc3339(s).ok().map(MicroTime)
    }
}

impl From<Time> for SystemTime {
    fn from(t: Time) -> Self {
        from_unix_micros(t.0.saturating_mul(1_000_000))
    }
}

impl From<MicroTime> for SystemTime {
    fn from(t: MicroTime) -> Self {
        from_unix_micros(t.0)
    }
}

impl From<SystemTime> for Time {
    fn from(t: SystemTime) -> Self {
        Time(unix_micros(t).div_euclid(1_000_000))
    }
}

impl From<SystemTime> for MicroTime {
    fn from(t: SystemTime) -> Self {
        MicroTime(unix_micros(t))
    }
}

impl From<Time> for MicroTime {
    fn from(t: Time) -> Self {
        MicroTime(t.0.saturating_mul(1_000_000))
    }
}

fn unix_micros(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_micros()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_micros()).unwrap_or(i64::MAX),
    }
}

fn from_unix_micros(micros: i64) -> SystemTime {
    if micros >= 0 {
        UNIX_EPOCH + Duration::from_micros(micros as u64)
    } else {
        UNIX_EPOCH - Duration::from_micros(micros.unsigned_abs())
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number from [`days_from_civil`].
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The number of days in `month` (1-12) of `year`, in the proleptic Gregorian calendar (Go's
/// `daysIn`: year 0 is a leap year, as every year divisible by 400).
fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)` into microseconds since the epoch.
/// As Go's parser, it takes an hour of one digit (`T9:00:00Z`) and a fraction after a comma.
///
/// As Go's `time.Parse(time.RFC3339, ..)` (what `metav1.Time.UnmarshalJSON` calls), a date
/// the month does not have (`2023-02-30`, `2023-02-29`) is refused, never rolled over into the
/// next month, and so is second 60: Go has no leap seconds. The error names the part out of
/// range in Go's words (`day out of range`).
fn parse_rfc3339(s: &str) -> Result<i64, &'static str> {
    const SYNTAX: &str = "not of the form YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)";
    let b = s.as_bytes();
    // Go's layout reads the hour (`15`) as one or two digits; everything after it moves
    // back by `short` bytes when it has one.
    let short = usize::from(b.get(12) == Some(&b':'));
    if b.len() < 20 - short {
        return Err(SYNTAX);
    }
    let num = |range: std::ops::Range<usize>| -> Result<i64, &'static str> {
        let part = b.get(range).ok_or(SYNTAX)?;
        if !part.iter().all(u8::is_ascii_digit) {
            return Err(SYNTAX);
        }
        Ok(part
            .iter()
            .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
    };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    if b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return Err(SYNTAX);
    }
    let (hour, minute, second) = (
        num(11..13 - short)?,
        num(14 - short..16 - short)?,
        num(17 - short..19 - short)?,
    );
    if b[13 - short] != b':' || b[16 - short] != b':' {
        return Err(SYNTAX);
    }
    if !(1..=12).contains(&month) {
        return Err("month out of range");
    }
    if !(1..=days_in_month(year, month)).contains(&day) {
        return Err("day out of range");
    }
    if hour > 23 {
        return Err("hour out of range");
    }
    if minute > 59 {
        return Err("minute out of range");
    }
    if second > 59 {
        return Err("second out of range");
    }
    let mut i = 19 - short;
    let mut micros = 0i64;
    // Go reads a fraction after a comma too.
    if b[i] == b'.' || b[i] == b',' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            if i - start < 6 {
                micros = micros * 10 + i64::from(b[i] - b'0');
            }
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return Err(SYNTAX);
        }
        for _ in digits..6 {
            micros *= 10;
        }
    }
    let offset_secs = match b.get(i..).ok_or(SYNTAX)? {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let digits = [*h1, *h2, *m1, *m2];
            if !digits.iter().all(u8::is_ascii_digit) {
                return Err(SYNTAX);
            }
            let h = i64::from(h1 - b'0') * 10 + i64::from(h2 - b'0');
            let m = i64::from(m1 - b'0') * 10 + i64::from(m2 - b'0');
            // Go tests the offset with `>`, "as some people do write offsets of 24 hours or
            // 60 minutes".
            if h > 24 {
                return Err("time zone offset hour out of range");
            }
            if m > 60 {
                return Err("time zone offset minute out of range");
            }
            let off = h * 3600 + m * 60;
            if *sign == b'+' { off } else { -off }
        }
        _ => return Err(SYNTAX),
    };
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_secs;
    // The instant must be writable again: encoded in UTC, its year must have four digits.
    // An offset can push a timestamp of year 0000 or 9999 outside that range
    // (`0000-01-01T00:00:00+00:01`); such a time is refused here rather than written as text
    // that no parser, this one or Go's, reads back.
    let first = days_from_civil(0, 1, 1) * 86_400;
    let last = days_from_civil(9999, 12, 31) * 86_400 + 86_399;
    if !(first..=last).contains(&secs) {
        return Err("year out of range 0000-9999 once converted to UTC");
    }
    secs.checked_mul(1_000_000)
        .and_then(|s| s.checked_add(micros))
        .ok_or("year out of range 0000-9999 once converted to UTC")
}

fn write_rfc3339(f: &mut fmt::Formatter<'_>, micros: i64, with_micros: bool) -> fmt::Result {
    let secs = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    write!(
        f,
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )?;
    if with_micros {
        write!(f, ".{frac:06}")?;
    }
    f.write_str("Z")
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rfc3339(f, self.0.saturating_mul(1_000_000), false)
    }
}

impl fmt::Display for MicroTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_rfc3339(f, self.0, true)
    }
}

impl serde::Serialize for Time {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_zero() {
            return serializer.serialize_none();
        }
        serializer.collect_str(self)
    }
}

impl serde::Serialize for MicroTime {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.is_zero() {
            return serializer.serialize_none();
        }
        serializer.collect_str(self)
    }
}

/// Reads an RFC 3339 string with `parse_rfc3339` turned into `T` by `from_micros`, or `null`
/// as `zero`.
struct TimeVisitor<T> {
    from_micros: fn(i64) -> T,
    zero: T,
}

impl<'de, T> serde::de::Visitor<'de> for TimeVisitor<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an RFC 3339 timestamp or null")
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<T, E> {
        parse_rfc3339(v)
            .map(self.from_micros)
            .map_err(|why| E::custom(format_args!("invalid RFC 3339 timestamp {v:?}: {why}")))
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<T, E> {
        Ok(self.zero)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<T, E> {
        Ok(self.zero)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Time {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_option(TimeVisitor {
            from_micros: |micros| Time(micros.div_euclid(1_000_000)),
            zero: Time::ZERO,
        })
    }
}

impl<'de> serde::Deserialize<'de> for MicroTime {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_option(TimeVisitor {
            from_micros: MicroTime,
            zero: MicroTime::ZERO,
        })
    }
}

/// Reads an optional [`Time`]; for `#[serde(deserialize_with)]` in generated code. As the
/// protobuf decoder does, it reads the zero time (Go's unset value, which Go itself writes as
/// `null`) as absent, so that no decoded object holds `Some(Time::ZERO)`: that value encodes
/// as `null`, which reads back as `None`, and the object would not survive its own round trip.
pub fn deserialize_option_time<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Time>, D::Error> {
    let time: Option<Time> = serde::Deserialize::deserialize(deserializer)?;
    Ok(time.filter(|t| !t.is_zero()))
}

/// Reads an optional [`MicroTime`], the zero time as absent: see [`deserialize_option_time`].
pub fn deserialize_option_micro_time<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<MicroTime>, D::Error> {
    let time: Option<MicroTime> = serde::Deserialize::deserialize(deserializer)?;
    Ok(time.filter(|t| !t.is_zero()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_optional_zero_time_reads_as_absent_and_so_survives_a_round_trip() {
        #[derive(Debug, PartialEq, serde::Deserialize, serde::Serialize)]
        struct Stamps {
            #[serde(default, deserialize_with = "deserialize_option_time")]
            at: Option<Time>,
            #[serde(default, deserialize_with = "deserialize_option_micro_time")]
            micro: Option<MicroTime>,
        }
        let zero = r#"{"at":"0001-01-01T00:00:00Z","micro":"0001-01-01T00:00:00.000000Z"}"#;
        let absent = Stamps {
            at: None,
            micro: None,
        };
        for text in [zero, r#"{"at":null,"micro":null}"#, "{}"] {
            let read: Stamps = serde_json::from_str(text).unwrap();
            assert_eq!(read, absent, "{text}");
            let again: Stamps =
                serde_json::from_str(&serde_json::to_string(&read).unwrap()).unwrap();
            assert_eq!(again, read, "{text}");
        }
        let set: Stamps = serde_json::from_str(
            r#"{"at":"2024-01-02T03:04:05Z","micro":"2024-01-02T03:04:05.5Z"}"#,
        )
        .unwrap();
        assert_eq!(set.at, Time::parse("2024-01-02T03:04:05Z"));
        assert_eq!(set.micro, MicroTime::parse("2024-01-02T03:04:05.500000Z"));
        assert!(serde_json::from_str::<Stamps>(r#"{"at":"yesterday"}"#).is_err());
    }

    #[test]
    fn the_zero_time_is_the_default_and_null_on_the_wire() {
        assert!(Time::default().is_zero() && MicroTime::default().is_zero());
        assert_eq!(Time::ZERO.to_string(), "0001-01-01T00:00:00Z");
        assert_eq!(MicroTime::ZERO.to_string(), "0001-01-01T00:00:00.000000Z");
        assert_eq!(serde_json::to_string(&Time::ZERO).unwrap(), "null");
        assert_eq!(serde_json::to_string(&MicroTime::ZERO).unwrap(), "null");
        assert_eq!(serde_json::from_str::<Time>("null").unwrap(), Time::ZERO);
        assert_eq!(
            serde_json::from_str::<MicroTime>("null").unwrap(),
            MicroTime::ZERO
        );
        // The epoch is a real time, not "unset".
        assert_eq!(
            serde_json::to_string(&Time(0)).unwrap(),
            "\"1970-01-01T00:00:00Z\""
        );
        // An optional time still reads null as absent.
        assert_eq!(serde_json::from_str::<Option<Time>>("null").unwrap(), None);
        assert_eq!(
            serde_json::from_str::<Option<Time>>("\"2024-01-02T03:04:05Z\"").unwrap(),
            Time::parse("2024-01-02T03:04:05Z")
        );
        assert!(serde_json::from_str::<Time>("17").is_err());
    }

    #[test]
    fn time_round_trips_whole_seconds() {
        let t: Time = serde_json::from_str("\"2024-02-29T23:59:58Z\"").unwrap();
        assert_eq!(t.unix_seconds(), 1_709_251_198);
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            "\"2024-02-29T23:59:58Z\""
        );
        let frac: Time = serde_json::from_str("\"2024-02-29T23:59:58.999Z\"").unwrap();
        assert_eq!(frac, t);
    }

    #[test]
    fn offsets_convert_to_utc() {
        let t = Time::parse("2024-01-01T02:00:00+02:00").unwrap();
        assert_eq!(t.to_string(), "2024-01-01T00:00:00Z");
        let t = Time::parse("2023-12-31T22:30:00-01:30").unwrap();
        assert_eq!(t.to_string(), "2024-01-01T00:00:00Z");
    }

    #[test]
    fn micro_time_keeps_microseconds() {
        let t: MicroTime = serde_json::from_str("\"2021-06-01T10:11:12.123456Z\"").unwrap();
        assert_eq!(t.unix_micros() % 1_000_000, 123_456);
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            "\"2021-06-01T10:11:12.123456Z\""
        );
        let short = MicroTime::parse("2021-06-01T10:11:12.5Z").unwrap();
        assert_eq!(short.to_string(), "2021-06-01T10:11:12.500000Z");
        let nanos = MicroTime::parse("2021-06-01T10:11:12.123456789Z").unwrap();
        assert_eq!(nanos, t);
    }

    #[test]
    fn before_epoch_and_invalid() {
        let t = Time::parse("1969-12-31T23:59:59Z").unwrap();
        assert_eq!(t.unix_seconds(), -1);
        assert_eq!(t.to_string(), "1969-12-31T23:59:59Z");
        for bad in [
            "",
            "2024-01-01",
            "2024-13-01T00:00:00Z",
            "2024-01-01T00:00:00",
            "2024-01-01T00:00:00.Z",
            "2024-01-01T00:00:00+0100",
            // In UTC these fall outside years 0000-9999 and could not be written back.
            "0000-01-01T00:00:00+00:01",
            "9999-12-31T23:59:59-00:01",
        ] {
            assert!(Time::parse(bad).is_none(), "{bad}");
            assert!(MicroTime::parse(bad).is_none(), "{bad}");
        }
        // The edges themselves round-trip.
        for edge in ["0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z"] {
            assert_eq!(Time::parse(edge).unwrap().to_string(), edge);
        }
        assert_eq!(
            Time::parse("0000-01-01T00:01:00+00:01")
                .unwrap()
                .to_string(),
            "0000-01-01T00:00:00Z"
        );
        assert!(serde_json::from_str::<Time>("\"yesterday\"").is_err());
    }

    /// Go's `time.Parse(time.RFC3339, ..)` refuses a day the month does not have and second
    /// 60 ("day out of range", "second out of range") where a rollover would silently move the
    /// time; leap years follow the Gregorian rules.
    #[test]
    fn impossible_dates_and_times_are_refused_naming_the_part() {
        let refused = [
            ("2023-02-29T00:00:00Z", "day out of range"),
            ("2023-02-30T00:00:00Z", "day out of range"),
            ("2024-02-30T00:00:00Z", "day out of range"),
            ("1900-02-29T00:00:00Z", "day out of range"),
            ("2024-04-31T12:00:00Z", "day out of range"),
            ("2024-06-31T12:00:00Z", "day out of range"),
            ("2024-09-31T12:00:00Z", "day out of range"),
            ("2024-11-31T12:00:00Z", "day out of range"),
            ("2024-01-32T00:00:00Z", "day out of range"),
            ("2024-01-00T00:00:00Z", "day out of range"),
            ("2024-00-01T00:00:00Z", "month out of range"),
            ("2024-13-01T00:00:00Z", "month out of range"),
            ("2024-01-01T24:00:00Z", "hour out of range"),
            ("2024-01-01T23:60:00Z", "minute out of range"),
            ("2024-01-01T23:59:60Z", "second out of range"),
            ("2016-12-31T23:59:60Z", "second out of range"),
            (
                "2024-01-01T00:00:00+25:00",
                "time zone offset hour out of range",
            ),
            (
                "2024-01-01T00:00:00+01:61",
                "time zone offset minute out of range",
            ),
        ];
        for (text, why) in refused {
            assert_eq!(Time::parse(text), None, "{text}");
            assert_eq!(MicroTime::parse(text), None, "{text}");
            let err = serde_json::from_str::<Time>(&format!("\"{text}\"")).unwrap_err();
            assert!(
                err.to_string()
                    .starts_with(&format!("invalid RFC 3339 timestamp \"{text}\": {why}")),
                "{text}: {err}"
            );
            assert!(serde_json::from_str::<MicroTime>(&format!("\"{text}\"")).is_err());
        }
        let accepted = [
            ("2024-02-29T00:00:00Z", "2024-02-29T00:00:00Z"),
            ("2000-02-29T12:00:00Z", "2000-02-29T12:00:00Z"),
            ("0000-02-29T00:00:00Z", "0000-02-29T00:00:00Z"),
            ("2023-02-28T23:59:59Z", "2023-02-28T23:59:59Z"),
            ("2024-04-30T00:00:00Z", "2024-04-30T00:00:00Z"),
            ("2024-12-31T23:59:59Z", "2024-12-31T23:59:59Z"),
            // Go accepts offsets up to 24 hours and 60 minutes.
            ("2024-01-02T00:00:00+24:00", "2024-01-01T00:00:00Z"),
            ("2024-01-01T01:00:00+00:60", "2024-01-01T00:00:00Z"),
        ];
        for (text, utc) in accepted {
            assert_eq!(
                Time::parse(text).map(|t| t.to_string()).as_deref(),
                Some(utc)
            );
            let micro = MicroTime::parse(text).unwrap();
            assert_eq!(
                Time::from_unix_seconds(micro.unix_micros() / 1_000_000).to_string(),
                utc
            );
        }
    }

    /// Go's `time.Parse(time.RFC3339, ..)` reads the hour with its layout's `15`, one or two
    /// digits, and a fraction after a comma as after a point; `metav1.Time` decodes such a
    /// timestamp, which a custom resource may hold (the server's `date-time` format accepts
    /// the comma: tests/it/time.rs; a field with no format, anything), so kclient decodes it
    /// too. Outputs from apimachinery v0.36.3.
    #[test]
    fn one_digit_hours_and_comma_fractions_read_as_go_reads_them() {
        for (text, utc) in [
            ("2024-01-01T1:00:00Z", "2024-01-01T01:00:00Z"),
            ("2024-01-01T9:00:00+01:00", "2024-01-01T08:00:00Z"),
            ("2024-01-01T00:00:00,5Z", "2024-01-01T00:00:00Z"),
            ("2024-01-01T1:00:00,123456Z", "2024-01-01T01:00:00Z"),
        ] {
            let read: Result<Time, _> = serde_json::from_str(&format!("\"{text}\""));
            assert_eq!(
                read.map(|t| t.to_string()).ok().as_deref(),
                Some(utc),
                "{text}"
            );
        }
        assert_eq!(
            MicroTime::parse("2024-01-01T1:00:00,123456Z").map(|t| t.to_string()),
            Some("2024-01-01T01:00:00.123456Z".to_owned())
        );
        for refused in [
            "2024-01-01T0:0:0Z",
            "2024-01-01T:00:00Z",
            "2024-01-01T9:5:00Z",
            "2024-01-01T1:00:0Z",
            "2024-01-01T1:00:00",
            "2024-01-01T00:00:00,Z",
            "2024-1-01T00:00:00Z",
            "2024-01-01T1Z",
        ] {
            assert_eq!(Time::parse(refused), None, "{refused}");
            assert_eq!(MicroTime::parse(refused), None, "{refused}");
        }
    }

    #[test]
    fn system_time_conversions() {
        let now = Time::now();
        let back = Time::from(SystemTime::from(now));
        assert_eq!(now, back);
        assert_eq!(MicroTime::from(Time(2)).unix_micros(), 2_000_000);
    }
}
