//! Go's `net/netip` parsing, with its error messages, which Kubernetes' IP and CIDR
//! functions and Go's URL parsing (for a host in brackets) pass on: `ParseAddr`,
//! `ParsePrefix`, and an address's string form.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};

use crate::schema::validation::go_quote;

/// An address as Go's `netip.Addr` holds it: IPv4, or IPv6 with an optional zone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Addr {
    V4([u8; 4]),
    V6([u8; 16], Option<String>),
}

impl Addr {
    /// Whether this is an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`).
    pub(super) fn is_4in6(&self) -> bool {
        matches!(self, Addr::V6(b, _) if b[..10] == [0; 10] && b[10..12] == [0xff, 0xff])
    }

    /// The address's zone (IPv6 only).
    pub(super) fn zone(&self) -> Option<&str> {
        match self {
            Addr::V6(_, zone) => zone.as_deref(),
            Addr::V4(_) => None,
        }
    }

    /// The number of bits of the address: 32 or 128.
    pub(super) fn bit_len(&self) -> u32 {
        match self {
            Addr::V4(_) => 32,
            Addr::V6(..) => 128,
        }
    }

    /// The address's bytes.
    pub(super) fn bytes(&self) -> &[u8] {
        match self {
            Addr::V4(b) => b,
            Addr::V6(b, _) => b,
        }
    }

    /// The address with all bits after the first `bits` cleared, and no zone (Go's
    /// `Addr.Prefix(bits).Addr()`).
    pub(super) fn masked(&self, bits: u32) -> Addr {
        let mut bytes = self.bytes().to_vec();
        for (i, byte) in bytes.iter_mut().enumerate() {
            let start = i as u32 * 8;
            if start >= bits {
                *byte = 0;
            } else if start + 8 > bits {
                *byte &= 0xffu8 << (start + 8 - bits);
            }
        }
        match self {
            Addr::V4(_) => Addr::V4(bytes.try_into().unwrap_or([0; 4])),
            Addr::V6(..) => Addr::V6(bytes.try_into().unwrap_or([0; 16]), None),
        }
    }

    /// The same address, in the IPv4 form if it is IPv4-mapped (Go's `Unmap`).
    fn unmapped(&self) -> Addr {
        match self {
            Addr::V6(b, _) if self.is_4in6() => Addr::V4([b[12], b[13], b[14], b[15]]),
            other => other.clone(),
        }
    }

    /// Go's `IsUnspecified`: `0.0.0.0` or `::`.
    pub(super) fn is_unspecified(&self) -> bool {
        match self {
            Addr::V4(b) => *b == [0; 4],
            Addr::V6(b, zone) => *b == [0; 16] && zone.is_none(),
        }
    }

    /// Go's `IsLoopback`.
    pub(super) fn is_loopback(&self) -> bool {
        match self.unmapped() {
            Addr::V4(b) => b[0] == 127,
            Addr::V6(b, _) => Ipv6Addr::from(b).is_loopback(),
        }
    }

    /// Go's `IsMulticast`.
    fn is_multicast(&self) -> bool {
        match self.unmapped() {
            Addr::V4(b) => b[0] & 0xf0 == 0xe0,
            Addr::V6(b, _) => b[0] == 0xff,
        }
    }

    /// Go's `IsLinkLocalMulticast`.
    pub(super) fn is_link_local_multicast(&self) -> bool {
        match self.unmapped() {
            Addr::V4(b) => b[0] == 224 && b[1] == 0 && b[2] == 0,
            Addr::V6(b, _) => b[0] == 0xff && b[1] & 0x0f == 0x02,
        }
    }

    /// Go's `IsLinkLocalUnicast`.
    pub(super) fn is_link_local_unicast(&self) -> bool {
        match self.unmapped() {
            Addr::V4(b) => b[0] == 169 && b[1] == 254,
            Addr::V6(b, _) => b[0] == 0xfe && b[1] & 0xc0 == 0x80,
        }
    }

    /// Go's `IsGlobalUnicast`.
    pub(super) fn is_global_unicast(&self) -> bool {
        let ip = self.unmapped();
        if let Addr::V4(b) = ip
            && (b == [0; 4] || b == [255; 4])
        {
            return false;
        }
        !matches!(&ip, Addr::V6(b, None) if *b == [0; 16])
            && !ip.is_loopback()
            && !ip.is_multicast()
            && !ip.is_link_local_unicast()
    }
}

/// Go's `Addr.String`: dotted IPv4, RFC 5952 IPv6 (an IPv4-mapped one as `::ffff:1.2.3.4`),
/// and `%zone`.
impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Addr::V4(b) => write!(f, "{}", Ipv4Addr::from(*b)),
            Addr::V6(b, zone) => {
                write!(f, "{}", Ipv6Addr::from(*b))?;
                match zone {
                    Some(zone) => write!(f, "%{zone}"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// Go's `parseAddrError`: `ParseAddr("x"): why (at "rest")`.
fn addr_error(input: &str, why: &str, at: Option<&str>) -> String {
    match at {
        Some(at) if !at.is_empty() => format!(
            "ParseAddr({}): {why} (at {})",
            go_quote(input),
            go_quote(at)
        ),
        _ => format!("ParseAddr({}): {why}", go_quote(input)),
    }
}

/// Go's `netip.ParseAddr`.
pub(super) fn parse_addr(s: &str) -> Result<Addr, String> {
    match s.bytes().find(|b| matches!(b, b'.' | b':' | b'%')) {
        Some(b'.') => parse_v4_fields(s, s).map(Addr::V4),
        Some(b':') => parse_v6(s),
        Some(_) => Err(addr_error(s, "missing IPv6 address", None)),
        None => Err(addr_error(s, "unable to parse IP", None)),
    }
}

/// Go's `parseIPv4Fields` of `part`, a piece of `input` (named in the errors).
fn parse_v4_fields(input: &str, part: &str) -> Result<[u8; 4], String> {
    let (mut fields, mut val, mut pos, mut digits) = ([0u8; 4], 0u32, 0usize, 0);
    let bytes = part.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'0'..=b'9' => {
                if digits == 1 && val == 0 {
                    return Err(addr_error(
                        input,
                        "IPv4 field has octet with leading zero",
                        None,
                    ));
                }
                val = val * 10 + u32::from(c - b'0');
                digits += 1;
                if val > 255 {
                    return Err(addr_error(input, "IPv4 field has value >255", None));
                }
            }
            b'.' => {
                if i == 0 || i == bytes.len() - 1 || bytes[i - 1] == b'.' {
                    return Err(addr_error(
                        input,
                        "IPv4 field must have at least one digit",
                        Some(&part[i..]),
                    ));
                }
                if pos == 3 {
                    return Err(addr_error(input, "IPv4 address too long", None));
                }
                fields[pos] = val as u8;
                pos += 1;
                val = 0;
                digits = 0;
            }
            _ => {
                return Err(addr_error(input, "unexpected character", Some(&part[i..])));
            }
        }
    }
    if pos < 3 {
        return Err(addr_error(input, "IPv4 address too short", None));
    }
    fields[3] = val as u8;
    Ok(fields)
}

/// Go's `parseIPv6`.
fn parse_v6(input: &str) -> Result<Addr, String> {
    let (mut s, zone) = match input.split_once('%') {
        Some((_, "")) => {
            return Err(addr_error(input, "zone must be a non-empty string", None));
        }
        Some((addr, zone)) => (addr, Some(zone.to_owned())),
        None => (input, None),
    };
    let mut ip = [0u8; 16];
    let mut ellipsis: Option<usize> = None;
    if let Some(rest) = s.strip_prefix("::") {
        ellipsis = Some(0);
        s = rest;
        if s.is_empty() {
            return Ok(Addr::V6(ip, zone));
        }
    }
    let mut i = 0;
    while i < 16 {
        let mut off = 0;
        let mut acc = 0u32;
        for c in s.bytes() {
            let Some(digit) = (c as char).to_digit(16) else {
                break;
            };
            acc = (acc << 4) + digit;
            if off > 3 {
                return Err(addr_error(
                    input,
                    "each group must have 4 or less digits",
                    Some(s),
                ));
            }
            if acc > 0xffff {
                return Err(addr_error(input, "IPv6 field has value >=2^16", Some(s)));
            }
            off += 1;
        }
        if off == 0 {
            return Err(addr_error(
                input,
                "each colon-separated field must have at least one digit",
                Some(s),
            ));
        }
        if s.as_bytes().get(off) == Some(&b'.') {
            if ellipsis.is_none() && i != 12 {
                return Err(addr_error(
                    input,
                    "embedded IPv4 address must replace the final 2 fields of the address",
                    Some(s),
                ));
            }
            if i + 4 > 16 {
                return Err(addr_error(
                    input,
                    "too many hex fields to fit an embedded IPv4 at the end of the address",
                    Some(s),
                ));
            }
            ip[i..i + 4].copy_from_slice(&parse_v4_fields(input, s)?);
            s = "";
            i += 4;
            break;
        }
        ip[i] = (acc >> 8) as u8;
        ip[i + 1] = acc as u8;
        i += 2;
        s = &s[off..];
        if s.is_empty() {
            break;
        }
        if !s.starts_with(':') {
            return Err(addr_error(
                input,
                "unexpected character, want colon",
                Some(s),
            ));
        } else if s.len() == 1 {
            return Err(addr_error(
                input,
                "colon must be followed by more characters",
                Some(s),
            ));
        }
        s = &s[1..];
        if s.starts_with(':') {
            if ellipsis.is_some() {
                return Err(addr_error(input, "multiple :: in address", Some(s)));
            }
            ellipsis = Some(i);
            s = &s[1..];
            if s.is_empty() {
                break;
            }
        }
    }
    if !s.is_empty() {
        return Err(addr_error(input, "trailing garbage after address", Some(s)));
    }
    if i < 16 {
        let Some(at) = ellipsis else {
            return Err(addr_error(input, "address string too short", None));
        };
        let n = 16 - i;
        ip.copy_within(at..i, at + n);
        ip[at..at + n].fill(0);
    } else if ellipsis.is_some() {
        return Err(addr_error(
            input,
            "the :: must expand to at least one field of zeros",
            None,
        ));
    }
    Ok(Addr::V6(ip, zone))
}

/// A network as Go's `netip.Prefix` holds it: an address (not masked) and a length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Prefix {
    pub(super) addr: Addr,
    pub(super) bits: u32,
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.bits)
    }
}

/// Go's `netip.ParsePrefix`.
pub(super) fn parse_prefix(s: &str) -> Result<Prefix, String> {
    let error = |why: &str| format!("netip.ParsePrefix({}): {why}", go_quote(s));
    let Some(slash) = s.rfind('/') else {
        return Err(error("no '/'"));
    };
    let addr = parse_addr(&s[..slash]).map_err(|e| error(&e))?;
    if addr.zone().is_some() {
        return Err(error("IPv6 zones cannot be present in a prefix"));
    }
    let bits_text = &s[slash + 1..];
    let bad_bits = || error(&format!("bad bits after slash: {}", go_quote(bits_text)));
    if bits_text.len() > 1 && !(b'1'..=b'9').contains(&bits_text.as_bytes()[0]) {
        return Err(bad_bits());
    }
    // Go's `strconv.Atoi`: an optional sign, then decimal digits.
    let bits: i64 = bits_text.parse().map_err(|_| bad_bits())?;
    if bits < 0 || bits > i64::from(addr.bit_len()) {
        return Err(error("prefix length out of range"));
    }
    Ok(Prefix {
        addr,
        bits: bits as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::{parse_addr, parse_prefix};

    /// Go 1.26's answers (`netip.ParseAddr`, `ParsePrefix`).
    #[test]
    fn addresses_parse_as_in_go() {
        assert_eq!(parse_addr("::1").unwrap().to_string(), "::1");
        assert_eq!(
            parse_addr("2001:DB8::0:0:0:abcd").unwrap().to_string(),
            "2001:db8::abcd"
        );
        assert_eq!(
            parse_addr("::ffff:1.2.3.4").unwrap().to_string(),
            "::ffff:1.2.3.4"
        );
        assert_eq!(
            parse_addr("fe80::1%en0").unwrap().to_string(),
            "fe80::1%en0"
        );
        assert_eq!(
            parse_addr("::1::2").unwrap_err(),
            r#"ParseAddr("::1::2"): multiple :: in address (at ":2")"#
        );
        assert_eq!(
            parse_addr("01.2.3.4").unwrap_err(),
            r#"ParseAddr("01.2.3.4"): IPv4 field has octet with leading zero"#
        );
        assert_eq!(
            parse_addr("foo").unwrap_err(),
            r#"ParseAddr("foo"): unable to parse IP"#
        );
        assert_eq!(
            parse_prefix("10.0.0.0/033").unwrap_err(),
            r#"netip.ParsePrefix("10.0.0.0/033"): bad bits after slash: "033""#
        );
        assert_eq!(
            parse_prefix("10.1.2.3/8").unwrap().to_string(),
            "10.1.2.3/8"
        );
    }

    /// Each input and what Go 1.26 printed for it (`fmt.Printf("%v | %v", addr, err)` of
    /// `netip.ParseAddr` and `ParsePrefix`, run in session 59).
    #[test]
    fn go_answers_these_inputs_so() {
        for (input, go) in [
            ("::", "::"),
            ("1:0:0:4:0:0:0:8", "1:0:0:4::8"),
            (
                "1.2.3.256",
                r#"ParseAddr("1.2.3.256"): IPv4 field has value >255"#,
            ),
            ("1.2.3", r#"ParseAddr("1.2.3"): IPv4 address too short"#),
            (
                "12345::",
                r#"ParseAddr("12345::"): each group must have 4 or less digits (at "12345::")"#,
            ),
            (
                "1:2:3:4:5:6:7:8:9",
                r#"ParseAddr("1:2:3:4:5:6:7:8:9"): trailing garbage after address (at "9")"#,
            ),
            ("1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"),
            ("::1.2.3.4", "::102:304"),
            ("%x", r#"ParseAddr("%x"): missing IPv6 address"#),
        ] {
            let ours = parse_addr(input).map_or_else(|e| e, |a| a.to_string());
            assert_eq!(ours, go, "{input}");
        }
        for (input, go) in [
            ("10.0.0.0", r#"netip.ParsePrefix("10.0.0.0"): no '/'"#),
            ("::ffff:1.2.3.4/120", "::ffff:1.2.3.4/120"),
            (
                "fe80::1%eth0/64",
                r#"netip.ParsePrefix("fe80::1%eth0/64"): IPv6 zones cannot be present in a prefix"#,
            ),
            (
                "10.0.0.0/-1",
                r#"netip.ParsePrefix("10.0.0.0/-1"): bad bits after slash: "-1""#,
            ),
            (
                "10.0.0.0/33",
                r#"netip.ParsePrefix("10.0.0.0/33"): prefix length out of range"#,
            ),
        ] {
            let ours = parse_prefix(input).map_or_else(|e| e, |p| p.to_string());
            assert_eq!(ours, go, "{input}");
        }
    }
}
