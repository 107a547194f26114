//! The string formats a custom resource's schema may name (`format: uuid`), checked as
//! kube-apiserver checks them: the formats of kube-openapi's default registry, matched by
//! name with dashes ignored (`date-time` is `datetime`). A format the
//! registry does not know (`binary`, `password`, or any other name) checks nothing, as on
//! the server, which only warns about it when the CRD is written.
//!
//! The fake checks the formats with a fixed grammar, and `duration` with Go's parsers
//! ([`durations`](super::durations)). `uri`, `email`, `creditcard`, `isbn`, `isbn10` and
//! `isbn13` are left unchecked: each rests on a Go parser (`net/url`, `net/mail`) or a
//! checksum whose edge cases the fake would only approximate.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use regex::Regex;

/// Whether `value` is in `format`; `None` when the fake does not check that format.
pub(super) fn conforms(format: &str, value: &str) -> Option<bool> {
    // The server's registry ignores dashes only (`date_time` is no format it knows).
    let name: String = format.chars().filter(|c| *c != '-').collect();
    let ok = match name.as_str() {
        "byte" => is_base64(value),
        "date" => is_date(value),
        "datetime" => is_date_time(value),
        "duration" => super::durations::parse_duration(value).is_some(),
        "hostname" => is_hostname(value),
        "ipv4" => value.contains('.') && parse_ip_sloppy(value).is_some(),
        "ipv6" => value.contains(':') && value.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(value),
        "mac" => is_mac(value),
        "uuid" => matches(&UUID, value),
        "uuid3" => matches(&UUID3, value),
        "uuid4" => matches(&UUID4, value),
        "uuid5" => matches(&UUID5, value),
        "ssn" => value.len() == 11 && matches(&SSN, value),
        "hexcolor" => matches(&HEX_COLOR, value),
        "rgbcolor" => matches(&RGB_COLOR, value),
        "bsonobjectid" => value.len() == 24 && value.bytes().all(|b| b.is_ascii_hexdigit()),
        "k8sshortname" => value.len() <= 63 && matches(&SHORT_NAME, value),
        "k8slongname" => value.len() <= 253 && matches(&LONG_NAME, value),
        "password" | "binary" => true,
        _ => return None,
    };
    Some(ok)
}

/// Compiles one of this file's fixed patterns.
fn fixed(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("the fixed pattern {pattern}: {e}"))
}

fn matches(regex: &LazyLock<Regex>, value: &str) -> bool {
    regex.is_match(value)
}

static UUID: LazyLock<Regex> = LazyLock::new(|| {
    fixed(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    fixed(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
});
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    fixed(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    fixed(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
});
static SSN: LazyLock<Regex> = LazyLock::new(|| fixed(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$"));
static HEX_COLOR: LazyLock<Regex> = LazyLock::new(|| fixed(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$"));
static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| {
    let byte = r"(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    let space = r"[\t\n\f\r ]*";
    fixed(&format!(
        r"^rgb\({space}{byte}{space},{space}{byte}{space},{space}{byte}{space}\)$"
    ))
});
/// A DNS label (RFC 1123), as Kubernetes names many objects.
static SHORT_NAME: LazyLock<Regex> = LazyLock::new(|| fixed(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"));
/// A DNS subdomain (RFC 1123): labels joined by dots.
static LONG_NAME: LazyLock<Regex> =
    LazyLock::new(|| fixed(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"));
/// A host name: RFC 1034 labels, digits first allowed, symbols and letters of any script.
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    let c = r"a-zA-Z0-9\p{S}\p{L}";
    fixed(&format!(
        r"^([{c}]((-?[{c}]{{0,62}})?)|([{c}](([{c}-]{{0,61}}[{c}])?)(\.)){{1,}}([a-zA-Z\p{{L}}]){{2,63}})$"
    ))
});
/// Standard base64 with its padding, at least one group of four.
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    fixed(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
});
/// The time of day of a `date-time`, after its `t`.
static TIME_OF_DAY: LazyLock<Regex> = LazyLock::new(|| {
    fixed(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
});

/// Only the pattern, as the server checks it: `YR==`, whose last bits are not zero, passes.
fn is_base64(value: &str) -> bool {
    matches(&BASE64, value)
}

/// The number written with the ASCII digits of `s[range]`, all of them digits.
pub(super) fn digits(s: &str, range: std::ops::Range<usize>) -> Option<u32> {
    let part = s.get(range)?;
    part.bytes()
        .all(|c| c.is_ascii_digit())
        .then(|| part.parse().ok())?
}

/// The year, month and day of a `YYYY-MM-DD` string, whether or not that day exists.
pub(super) fn date_parts(value: &str) -> Option<(u32, u32, u32)> {
    let b = value.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    Some((
        digits(value, 0..4)?,
        digits(value, 5..7)?,
        digits(value, 8..10)?,
    ))
}

/// `YYYY-MM-DD`, a day that exists (Go's `time.Parse` with layout `2006-01-02`).
fn is_date(value: &str) -> bool {
    let Some((year, month, day)) = date_parts(value) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// kube-openapi's `IsDateTime`: lowercased and split at each `t`, a date before the first,
/// and a time of day with a zone (`z` or `+hh:mm`) after it, hours to 23, minutes and
/// seconds to 59.
fn is_date_time(value: &str) -> bool {
    if value.len() < 4 {
        return false;
    }
    let lower = value.to_lowercase();
    let mut parts = lower.split('t');
    let (Some(date), Some(time)) = (parts.next(), parts.next()) else {
        return false;
    };
    if !is_date(date) {
        return false;
    }
    let Some(c) = TIME_OF_DAY.captures(time) else {
        return false;
    };
    c[1] <= *"23" && c[2] <= *"59" && c[3] <= *"59"
}

fn is_hostname(value: &str) -> bool {
    matches(&HOSTNAME, value) && value.len() <= 255 && value.split('.').all(|p| p.len() <= 63)
}

/// An IP address as Kubernetes' `ParseIPSloppy` reads one: IPv4 octets may carry leading
/// zeros, any number of them, read as decimal.
fn parse_ip_sloppy(value: &str) -> Option<IpAddr> {
    if let Ok(ip) = value.parse::<IpAddr>() {
        return Some(ip);
    }
    if value.contains(':') {
        // IPv6: a group may carry leading zeros past four digits (`00001::`), and an IPv4
        // tail leading zeros in its octets.
        let groups: Option<Vec<String>> = value
            .split(':')
            .map(|group| {
                if group.contains('.') {
                    return Some(parse_ipv4_sloppy(group)?.to_string());
                }
                let trimmed = group.trim_start_matches('0');
                match (group.is_empty(), trimmed.len()) {
                    (true, _) => Some(String::new()),
                    (false, 0) => Some("0".to_owned()),
                    (false, 1..=4) => Some(trimmed.to_owned()),
                    _ => None,
                }
            })
            .collect();
        return groups?.join(":").parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    parse_ipv4_sloppy(value).map(IpAddr::V4)
}

/// An IPv4 address whose octets may carry leading zeros, read as decimal.
fn parse_ipv4_sloppy(value: &str) -> Option<Ipv4Addr> {
    let octets: Vec<&str> = value.split('.').collect();
    if octets.len() != 4 {
        return None;
    }
    let mut bytes = [0u8; 4];
    for (byte, octet) in bytes.iter_mut().zip(&octets) {
        if octet.is_empty() || !octet.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        *byte = octet.parse().ok()?;
    }
    Some(Ipv4Addr::from(bytes))
}

/// `address/prefix` (`ParseCIDRSloppy`), the prefix in decimal up to the address's bits.
fn is_cidr(value: &str) -> bool {
    let Some((address, prefix)) = value.split_once('/') else {
        return false;
    };
    if parse_ip_sloppy(address).is_none() {
        return false;
    }
    let bits = if address.contains(':') { 128 } else { 32 };
    !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_digit())
        && prefix.parse::<u32>().is_ok_and(|p| p <= bits)
}

/// A hardware address as Go's `net.ParseMAC` (Go 1.26) reads one: 6, 8 or 20 bytes as
/// pairs of hex digits joined by `:` or `-`, as groups of four joined by `.`, or as hex
/// digits alone.
fn is_mac(value: &str) -> bool {
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    let sizes = |bytes: usize| matches!(bytes, 6 | 8 | 20);
    let b = value.as_bytes();
    if b.len() < 12 {
        return false;
    }
    if b[2] == b':' || b[2] == b'-' {
        let parts: Vec<&str> = value.split(b[2] as char).collect();
        sizes(parts.len()) && parts.iter().all(|p| hex(p, 2))
    } else if b[4] == b'.' {
        let parts: Vec<&str> = value.split('.').collect();
        sizes(parts.len() * 2) && parts.iter().all(|p| hex(p, 4))
    } else {
        b.len().is_multiple_of(2) && sizes(b.len() / 2) && hex(value, b.len())
    }
}

#[cfg(test)]
mod tests {
    use super::conforms;

    /// Each format with values the server was seen to take and to refuse (testenv's
    /// kube-apiserver v1.36.3).
    #[test]
    fn formats_take_and_refuse_what_the_server_does() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "byte",
                &["aGVsbG8=", "YWJj", "YR=="],
                &["!!", "", "abc", "aGVsbG8"],
            ),
            (
                "date",
                &["2024-02-29"],
                &["2023-02-29", "2024-1-01", "yesterday"],
            ),
            (
                "date-time",
                &["2024-01-02T03:04:05Z", "2024-01-02t03:04:05.123+01:00"],
                &["2024-01-02", "2024-01-02T24:00:00Z", "2024-01-02T03:04:05"],
            ),
            (
                "hostname",
                &["a", "example.com", "1.example.com"],
                &["-a", "a_b", ""],
            ),
            (
                "ipv4",
                &["10.0.0.1", "010.0.0.1"],
                &["10.0.0", "::1", "256.0.0.1"],
            ),
            (
                "ipv6",
                &["::1", "fe80::1", "::ffff:1.2.3.4"],
                &["10.0.0.1", "::g"],
            ),
            (
                "cidr",
                &[
                    "10.0.0.0/8",
                    "::/0",
                    "00001::/64",
                    "1:2:3:4:5:6:7:00008/128",
                    "::ffff:001.2.3.4/128",
                ],
                &["10.0.0.0", "10.0.0.0/33", "10000::/64"],
            ),
            (
                "mac",
                &[
                    "01:23:45:67:89:ab",
                    "01-23-45-67-89-ab",
                    "0123.4567.89ab",
                    "0123456789ab",
                ],
                &[
                    "01:23:45:67:89",
                    "0123456789abcd",
                    "01:23-45:67:89:ab",
                    "012345678",
                ],
            ),
            (
                "uuid",
                &[
                    "123e4567-e89b-12d3-a456-426614174000",
                    "123E4567E89B12D3A456426614174000",
                ],
                &["123e4567-e89b-12d3-a456"],
            ),
            (
                "uuid4",
                &["123e4567-e89b-42d3-a456-426614174000"],
                &["123e4567-e89b-12d3-a456-426614174000"],
            ),
            ("hexcolor", &["#fff", "a0a0a0"], &["#ffff"]),
            ("rgbcolor", &["rgb(0, 128,255)"], &["rgb(256,0,0)"]),
            ("ssn", &["123-45-6789", "123 45 6789"], &["123456789"]),
            (
                "bsonobjectid",
                &["507f1f77bcf86cd799439011"],
                &["507f1f77bcf86cd79943901"],
            ),
            ("k8s-short-name", &["a-1"], &["A", "a.b", "-a"]),
            ("k8s-long-name", &["a.b-c"], &["a..b", "A"]),
        ];
        for (format, good, bad) in cases {
            for v in *good {
                assert_eq!(conforms(format, v), Some(true), "{format} {v:?}");
            }
            for v in *bad {
                assert_eq!(conforms(format, v), Some(false), "{format} {v:?}");
            }
        }
        assert_eq!(conforms("password", "!!"), Some(true));
        assert_eq!(conforms("foo", "!!"), None);
        assert_eq!(conforms("email", "!!"), None);
    }
}
