//! Kubernetes' IP and CIDR functions: `ip(<string>)`, `isIP(<string>)`,
//! `ip.isCanonical(<string>)`, and on an address `family()`, `isUnspecified()`,
//! `isLoopback()`, `isLinkLocalMulticast()`, `isLinkLocalUnicast()` and
//! `isGlobalUnicast()`; `cidr(<string>)`, `isCIDR(<string>)`, and on a network
//! `containsIP()`, `containsCIDR()` (a value or a string), `ip()`, `masked()` and
//! `prefixLength()`; `string()` of either. Addresses and networks are read as Go's
//! `netip` reads them ([`netip`](super::netip)), without IPv4-mapped IPv6 addresses or
//! zones, as the server's library refuses them, and its errors are the server's words.

use cel::common::types::{CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::environment::{
    boolean, fail, int, library_value, no_overload, string, string_arg, take,
};
use super::netip::{Addr, Prefix, parse_addr, parse_prefix};
use crate::schema::validation::go_quote;

/// The CEL types of an address and of a network.
static IP_TYPE: Type = Type::new_unspecified_type("net.IP");
static CIDR_TYPE: Type = Type::new_unspecified_type("net.CIDR");

type Function = for<'b, 'v> fn(Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError>;

/// Registers the types and the functions on `env`.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    let (ip, cidr) = (|| IP_TYPE.to_owned(), || CIDR_TYPE.to_owned());
    env.add_type(ip())?;
    env.add_type(cidr())?;
    env.add_overload("ip", "k8s.ip(string)", vec![STRING_TYPE], to_ip)?;
    env.add_overload("isIP", "k8s.isIP(string)", vec![STRING_TYPE], is_ip)?;
    env.add_overload(
        "ip.isCanonical",
        "k8s.ip.isCanonical",
        vec![STRING_TYPE],
        is_canonical,
    )?;
    env.add_overload("string", "k8s.string(ip)", vec![ip()], ip_to_string)?;
    let tests: [(&str, Function); 6] = [
        ("family", family),
        ("isUnspecified", is_unspecified),
        ("isLoopback", is_loopback),
        ("isLinkLocalMulticast", is_link_local_multicast),
        ("isLinkLocalUnicast", is_link_local_unicast),
        ("isGlobalUnicast", is_global_unicast),
    ];
    for (name, f) in tests {
        env.add_member_overload(name, &format!("k8s.ip.{name}()"), ip(), vec![], f)?;
    }
    env.add_overload("cidr", "k8s.cidr(string)", vec![STRING_TYPE], to_cidr)?;
    env.add_overload("isCIDR", "k8s.isCIDR(string)", vec![STRING_TYPE], is_cidr)?;
    env.add_overload("string", "k8s.string(cidr)", vec![cidr()], cidr_to_string)?;
    env.add_member_overload(
        "containsIP",
        "k8s.cidr.containsIP(ip)",
        cidr(),
        vec![ip()],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsIP",
        "k8s.cidr.containsIP(string)",
        cidr(),
        vec![STRING_TYPE],
        contains_ip,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "k8s.cidr.containsCIDR(cidr)",
        cidr(),
        vec![cidr()],
        contains_cidr,
    )?;
    env.add_member_overload(
        "containsCIDR",
        "k8s.cidr.containsCIDR(string)",
        cidr(),
        vec![STRING_TYPE],
        contains_cidr,
    )?;
    env.add_member_overload("ip", "k8s.cidr.ip()", cidr(), vec![], cidr_ip)?;
    env.add_member_overload("masked", "k8s.cidr.masked()", cidr(), vec![], masked)?;
    env.add_member_overload(
        "prefixLength",
        "k8s.cidr.prefixLength()",
        cidr(),
        vec![],
        prefix_length,
    )?;
    Ok(())
}

/// An address value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ip(Addr);

/// A network value.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Cidr(Prefix);

library_value!(Ip, IP_TYPE, |a, b| a == b);

library_value!(Cidr, CIDR_TYPE, |a, b| a == b);

/// The library's `parseIPAddr`: Go's `ParseAddr`, without zones or IPv4-mapped addresses.
fn parse_ip(raw: &str) -> Result<Addr, String> {
    let addr = parse_addr(raw).map_err(|e| {
        format!(
            "IP Address {} parse error during conversion from string: {e}",
            go_quote(raw)
        )
    })?;
    if addr.zone().is_some() {
        return Err(format!(
            "IP address {} with zone value is not allowed",
            go_quote(raw)
        ));
    }
    if addr.is_4in6() {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            go_quote(raw)
        ));
    }
    Ok(addr)
}

/// The library's `parseCIDR`: Go's `ParsePrefix`, without IPv4-mapped addresses.
fn parse_cidr(raw: &str) -> Result<Prefix, String> {
    let prefix = parse_prefix(raw)
        .map_err(|e| format!("network address parse error during conversion from string: {e}"))?;
    if prefix.addr.is_4in6() {
        return Err(format!(
            "IPv4-mapped IPv6 address {} is not allowed",
            go_quote(raw)
        ));
    }
    Ok(prefix)
}

fn ip_arg(val: &dyn Val) -> Result<&Addr, ExecutionError> {
    val.downcast_ref::<Ip>()
        .map(|ip| &ip.0)
        .ok_or_else(|| no_overload(val))
}

fn cidr_arg(val: &dyn Val) -> Result<&Prefix, ExecutionError> {
    val.downcast_ref::<Cidr>()
        .map(|cidr| &cidr.0)
        .ok_or_else(|| no_overload(val))
}

fn to_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    let addr = parse_ip(string_arg(s.as_ref())?).map_err(fail)?;
    Ok(CowVal::owned(Ip(addr)))
}

fn is_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    Ok(boolean(parse_ip(string_arg(s.as_ref())?).is_ok()))
}

/// Whether the text is the address's one canonical form (Go's `Addr.String`).
fn is_canonical<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    let raw = string_arg(s.as_ref())?;
    let addr = parse_ip(raw).map_err(fail)?;
    Ok(boolean(addr.to_string() == raw))
}

fn ip_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [ip] = take(args)?;
    Ok(string(ip_arg(ip.as_ref())?.to_string()))
}

fn family<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [ip] = take(args)?;
    Ok(int(match ip_arg(ip.as_ref())? {
        Addr::V4(_) => 4,
        Addr::V6(..) => 6,
    }))
}

fn test<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    f: fn(&Addr) -> bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [ip] = take(args)?;
    Ok(boolean(f(ip_arg(ip.as_ref())?)))
}

fn is_unspecified<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    test(args, Addr::is_unspecified)
}

fn is_loopback<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    test(args, Addr::is_loopback)
}

fn is_link_local_multicast<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    test(args, Addr::is_link_local_multicast)
}

fn is_link_local_unicast<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    test(args, Addr::is_link_local_unicast)
}

fn is_global_unicast<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    test(args, Addr::is_global_unicast)
}

fn to_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    Ok(CowVal::owned(Cidr(cidr_from(string_arg(s.as_ref())?)?)))
}

/// `cidr(<string>)`'s network, or its error (which repeats its prefix, as the server's).
fn cidr_from(raw: &str) -> Result<Prefix, ExecutionError> {
    parse_cidr(raw).map_err(|e| {
        fail(format!(
            "network address parse error during conversion from string: {e}"
        ))
    })
}

fn is_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    Ok(boolean(parse_cidr(string_arg(s.as_ref())?).is_ok()))
}

fn cidr_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [cidr] = take(args)?;
    Ok(string(cidr_arg(cidr.as_ref())?.to_string()))
}

/// Go's `Prefix.Contains`: same family, no zone, and the first bits equal.
fn contains_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [cidr, ip] = take(args)?;
    let prefix = cidr_arg(cidr.as_ref())?;
    let addr = match ip.downcast_ref::<CelString<'_>>() {
        // A string that is no address: the server's library answers "no such overload".
        Some(s) => parse_ip(s.inner()).map_err(|_| fail("no such overload"))?,
        None => ip_arg(ip.as_ref())?.clone(),
    };
    let inside = addr.zone().is_none()
        && addr.bit_len() == prefix.addr.bit_len()
        && addr.masked(prefix.bits) == prefix.addr.masked(prefix.bits);
    Ok(boolean(inside))
}

/// The library's `cidrContainsCIDR`: the network, masked, equals the other's address
/// paired with this network's length, and this network is no longer than the other.
fn contains_cidr<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [cidr, other] = take(args)?;
    let prefix = cidr_arg(cidr.as_ref())?;
    let other = match other.downcast_ref::<CelString<'_>>() {
        Some(s) => cidr_from(s.inner())?,
        None => cidr_arg(other.as_ref())?.clone(),
    };
    let masked = prefix.addr.masked(prefix.bits);
    let same = masked == other.addr.masked(prefix.bits) && other.addr.bit_len() == masked.bit_len();
    Ok(boolean(same && prefix.bits <= other.bits))
}

fn cidr_ip<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [cidr] = take(args)?;
    Ok(CowVal::owned(Ip(cidr_arg(cidr.as_ref())?.addr.clone())))
}

fn masked<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [cidr] = take(args)?;
    let prefix = cidr_arg(cidr.as_ref())?;
    Ok(CowVal::owned(Cidr(Prefix {
        addr: prefix.addr.masked(prefix.bits),
        bits: prefix.bits,
    })))
}

fn prefix_length<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [cidr] = take(args)?;
    Ok(int(i64::from(cidr_arg(cidr.as_ref())?.bits)))
}
