//! Formats a duration the way Go's `time.Duration.String()` does, for the `?timeout=` query
//! parameter the API server parses with `time.ParseDuration`.

use std::fmt::Write as _;
use std::time::Duration;

/// `1h2m3.5s`, `1m0s`, `30s`, `500ms`, `1.5µs`, `0s`.
pub(crate) fn go_duration(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".to_string();
    }
    if nanos < 1_000_000_000 {
        let (unit, scale) = if nanos < 1_000 {
            ("ns", 1)
        } else if nanos < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{}{unit}", fraction(nanos, scale));
    }
    let total_secs = nanos / 1_000_000_000;
    let sub = nanos % 1_000_000_000;
    let hours = total_secs / 3600;
    let minutes = (total_secs % 3600) / 60;
    let secs = total_secs % 60;
    let mut out = String::new();
    if hours > 0 {
        let _ = write!(out, "{hours}h");
    }
    if hours > 0 || minutes > 0 {
        let _ = write!(out, "{minutes}m");
    }
    let _ = write!(
        out,
        "{}s",
        fraction(secs * 1_000_000_000 + sub, 1_000_000_000)
    );
    out
}

/// `value / scale` with the fraction's trailing zeros removed.
fn fraction(value: u128, scale: u128) -> String {
    let whole = value / scale;
    let rem = value % scale;
    if rem == 0 {
        return whole.to_string();
    }
    let width = scale.ilog10() as usize;
    let frac = format!("{rem:0width$}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_go() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_nanos(1), "1ns"),
            (Duration::from_nanos(1_500), "1.5µs"),
            (Duration::from_millis(500), "500ms"),
            (Duration::from_micros(1_500), "1.5ms"),
            (Duration::from_secs(1), "1s"),
            (Duration::from_millis(1_500), "1.5s"),
            (Duration::from_secs(30), "30s"),
            (Duration::from_secs(60), "1m0s"),
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(3600), "1h0m0s"),
            (Duration::from_secs(3723), "1h2m3s"),
            (Duration::from_millis(3_723_050), "1h2m3.05s"),
        ];
        for (d, want) in cases {
            assert_eq!(go_duration(d), want, "{d:?}");
        }
    }
}
