//! Kubernetes' URL functions: `isURL(<string>)`, `url(<string>)` and, on the URL,
//! `getScheme()`, `getHost()`, `getHostname()`, `getPort()`, `getEscapedPath()` and
//! `getQuery()`.
//!
//! A string is a URL when Go's `url.ParseRequestURI` takes it (an absolute URL or an
//! absolute path, no fragment); `url()` then reads it with `url.Parse`, which splits off a
//! fragment. Both are written out here after Go's `net/url`, since the WHATWG rules of the
//! `url` crate take and refuse other strings (`http://a b` and `http:/x` among them).

use std::collections::HashMap;

use cel::common::types::{CelList, CelMap, CelMapKey, CelString, STRING_TYPE, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::environment::{boolean, fail, library_value, no_overload, string, string_arg, take};
use super::netip::{Addr, parse_addr};
use crate::schema::validation::go_quote;

/// The CEL type of a URL value.
static URL_TYPE: Type = Type::new_unspecified_type("kubernetes.URL");

/// Registers the type and the functions on `env`.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(URL_TYPE.to_owned())?;
    env.add_overload("isURL", "k8s.isURL(string)", vec![STRING_TYPE], is_url)?;
    env.add_overload("url", "k8s.url(string)", vec![STRING_TYPE], to_url)?;
    let getters: [(&str, Getter); 6] = [
        ("getScheme", get_scheme),
        ("getHost", get_host),
        ("getHostname", get_hostname),
        ("getPort", get_port),
        ("getEscapedPath", get_escaped_path),
        ("getQuery", get_query),
    ];
    for (name, getter) in getters {
        env.add_member_overload(
            name,
            &format!("k8s.url.{name}()"),
            URL_TYPE.to_owned(),
            vec![],
            getter,
        )?;
    }
    Ok(())
}

type Getter = for<'b, 'v> fn(Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError>;

/// A URL as Go's `url.URL` holds the parts these functions read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Url {
    scheme: String,
    /// The host and port, unescaped (`[::1]:80`).
    host: String,
    /// The path, unescaped, and the text it was read from.
    path: String,
    raw_path: String,
    raw_query: String,
}

library_value!(Url, URL_TYPE, |a, b| a == b);

fn url_arg(val: &dyn Val) -> Result<&Url, ExecutionError> {
    val.downcast_ref::<Url>().ok_or_else(|| no_overload(val))
}

fn is_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    let ok = parse(string_arg(s.as_ref())?, true).is_ok();
    Ok(boolean(ok))
}

fn to_url<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s] = take(args)?;
    let raw = string_arg(s.as_ref())?;
    let refused = |part: &str, e: &str| {
        fail(format!(
            "URL parse error during conversion from string: parse {}: {e}",
            go_quote(part)
        ))
    };
    parse(raw, true).map_err(|e| refused(raw, &e))?;
    // Go's `url.Parse`: the fragment is cut off first, and the rest parsed.
    let (rest, _fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let url = parse(rest, false).map_err(|e| refused(rest, &e))?;
    Ok(CowVal::owned(url))
}

fn get_scheme<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [u] = take(args)?;
    Ok(string(url_arg(u.as_ref())?.scheme.clone()))
}

fn get_host<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [u] = take(args)?;
    Ok(string(url_arg(u.as_ref())?.host.clone()))
}

fn get_hostname<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [u] = take(args)?;
    Ok(string(split_host_port(&url_arg(u.as_ref())?.host).0))
}

fn get_port<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [u] = take(args)?;
    Ok(string(split_host_port(&url_arg(u.as_ref())?.host).1))
}

fn get_escaped_path<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [u] = take(args)?;
    Ok(string(url_arg(u.as_ref())?.escaped_path()))
}

/// The query's values by name (Go's `URL.Query`: pairs that do not decode are left out).
fn get_query<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [u] = take(args)?;
    let mut values: Vec<(String, Vec<String>)> = Vec::new();
    for pair in url_arg(u.as_ref())?.raw_query.split('&') {
        if pair.is_empty() || pair.contains(';') {
            continue;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (Ok(key), Ok(value)) = (unescape(key, Mode::Query), unescape(value, Mode::Query))
        else {
            continue;
        };
        match values.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(value),
            None => values.push((key, vec![value])),
        }
    }
    let map: HashMap<CelMapKey<'v>, Box<dyn Val + 'v>> = values
        .into_iter()
        .map(|(key, list)| {
            let list: Vec<Box<dyn Val + 'v>> = list
                .into_iter()
                .map(|v| Box::new(CelString::from(v)) as Box<dyn Val + 'v>)
                .collect();
            (
                CelMapKey::from(key),
                Box::new(CelList::from(list)) as Box<dyn Val + 'v>,
            )
        })
        .collect();
    Ok(CowVal::owned(CelMap::from(map)))
}

/// Go's `splitHostPort`: the host without its port and brackets, and the port.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, mut port) = (host_port, "");
    if let Some(colon) = host.rfind(':')
        && valid_optional_port(&host[colon..])
    {
        (host, port) = (&host[..colon], &host[colon + 1..]);
    }
    if host.starts_with('[') && host.ends_with(']') && host.len() >= 2 {
        host = &host[1..host.len() - 1];
    }
    (host, port)
}

/// Go's `validOptionalPort`: empty, or a colon and digits.
fn valid_optional_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
        None => port.is_empty(),
    }
}

/// Go's `url.parse`: `via_request` for `ParseRequestURI`, which takes no relative path.
/// An error is Go's text for it.
pub(super) fn parse(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = Url {
        scheme: String::new(),
        host: String::new(),
        path: String::new(),
        raw_path: String::new(),
        raw_query: String::new(),
    };
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // A rootless path: opaque, no host and no path.
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let authority = &rest[2..];
        let (authority, path) = match authority.find('/') {
            Some(i) => (&authority[..i], &authority[i..]),
            None => (authority, ""),
        };
        url.host = parse_authority(&url.scheme, authority)?;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    url.raw_path = rest.to_owned();
    Ok(url)
}

/// Go's `getScheme`.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: the host, after checking the user information.
fn parse_authority(scheme: &str, authority: &str) -> Result<String, String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = parse_host(scheme, host)?;
    if let Some(userinfo) = userinfo {
        let valid = userinfo
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c));
        if !valid {
            return Err("net/url: invalid userinfo".into());
        }
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        unescape(user, Mode::UserPassword)?;
        unescape(password, Mode::UserPassword)?;
    }
    Ok(host)
}

/// Go's `parseHost` (Go 1.26): an IP literal in brackets must be an IPv6 address (or an
/// IPv4-mapped one), with an optional zone; any other host has at most one colon before
/// its port when the scheme is `http` or `https` (its first colon starts the port; for
/// other schemes, its last); the port must be digits, and the host unescapes.
fn parse_host(scheme: &str, host: &str) -> Result<String, String> {
    match host.rfind('[') {
        Some(open) if open > 0 => return Err("invalid IP-literal".into()),
        Some(_) => {
            let Some(close) = host.rfind(']') else {
                return Err("missing ']' in host".into());
            };
            let colon_port = &host[close + 1..];
            if !valid_optional_port(colon_port) {
                return Err(format!("invalid port {} after host", go_quote(colon_port)));
            }
            let port = unescape(colon_port, Mode::Host)?;
            let hostname = &host[1..close];
            // `%25` starts the zone, which unescapes in its own mode.
            let literal = match hostname.find("%25") {
                Some(zone) => {
                    unescape(&hostname[..zone], Mode::Host)?
                        + &unescape(&hostname[zone..], Mode::Zone)?
                }
                None => unescape(hostname, Mode::Host)?,
            };
            check_ip_literal(&literal)?;
            return Ok(format!("[{literal}]{port}"));
        }
        None => {}
    }
    if let Some(first) = host.find(':') {
        let colon = if scheme == "http" || scheme == "https" {
            first
        } else {
            host.rfind(':').unwrap_or(first)
        };
        let colon_port = &host[colon..];
        if !valid_optional_port(colon_port) {
            return Err(format!("invalid port {} after host", go_quote(colon_port)));
        }
    }
    unescape(host, Mode::Host)
}

/// Go's check of a bracketed host: an IPv6 address (`netip.ParseAddr`), not an IPv4 one.
fn check_ip_literal(literal: &str) -> Result<(), String> {
    match parse_addr(literal) {
        Ok(Addr::V4(_)) => Err("invalid IP-literal".into()),
        Ok(Addr::V6(..)) => Ok(()),
        Err(e) => Err(format!("invalid host: {e}")),
    }
}

/// Which part of a URL a text is, for Go's `unescape` and `shouldEscape`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    Query,
}

/// Go's `unescape`: `%XX` decoded (and `+` as a space in a query); an error for a bad
/// escape, and in a host for a character a host cannot hold.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
                let (Some(hi), Some(lo)) = (hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) else {
                    let end = (i + 3).min(bytes.len());
                    return Err(format!(
                        "invalid URL escape {}",
                        go_quote(&String::from_utf8_lossy(&bytes[i..end]))
                    ));
                };
                // In a host, only bytes of UTF-8 sequences (and `%25`) may be escaped.
                if mode == Mode::Host && hi < 8 && &s[i..i + 3] != "%25" {
                    return Err(format!("invalid URL escape {}", go_quote(&s[i..i + 3])));
                }
                if mode == Mode::Zone {
                    let v = (hi * 16 + lo) as u8;
                    if &s[i..i + 3] != "%25" && v != b' ' && should_escape(v, Mode::Host) {
                        return Err(format!("invalid URL escape {}", go_quote(&s[i..i + 3])));
                    }
                }
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            b'+' if mode == Mode::Query => {
                out.push(b' ');
                i += 1;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&(c as char).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Go's `shouldEscape` for the modes read here.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone) && b"!$&'()*+,;=:[]<>\"".contains(&c) {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            Mode::UserPassword => matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::Query => true,
            Mode::Host | Mode::Zone => true,
        },
        _ => true,
    }
}

impl Url {
    /// Go's `URL.EscapedPath`: the path as it was written when that is a valid encoding
    /// of it, else the path escaped.
    fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty() && valid_encoded_path(&self.raw_path) {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".into();
        }
        let mut out = String::with_capacity(self.path.len());
        for &b in self.path.as_bytes() {
            if should_escape(b, Mode::Path) {
                out.push_str(&format!("%{b:02X}"));
            } else {
                out.push(b as char);
            }
        }
        out
    }
}

/// Go's `validEncoded` for a path.
fn valid_encoded_path(s: &str) -> bool {
    s.bytes()
        .all(|c| b"!$&'()*+,;=:@[]%".contains(&c) || !should_escape(c, Mode::Path))
}

#[cfg(test)]
mod tests {
    use super::{parse, split_host_port};

    #[test]
    fn request_uris_are_read_as_go_reads_them() {
        for ok in ["https://example.com", "/a/b", "*", "mailto:a@b"] {
            assert!(parse(ok, true).is_ok(), "{ok}");
        }
        assert_eq!(parse("", true).unwrap_err(), "empty url");
        assert_eq!(parse("a/b", true).unwrap_err(), "invalid URI for request");
        assert_eq!(parse(":x", true).unwrap_err(), "missing protocol scheme");
        assert_eq!(
            parse("http://a b", true).unwrap_err(),
            r#"invalid character " " in host name"#
        );
        assert_eq!(
            parse("http://a:x/", true).unwrap_err(),
            r#"invalid port ":x" after host"#
        );
        assert_eq!(
            parse("/%zz", true).unwrap_err(),
            r#"invalid URL escape "%zz""#
        );
        let url = parse("HTTP://[::1]:8080/a%20b?x=1&x=2", true).unwrap();
        assert_eq!(url.scheme, "http");
        assert_eq!(split_host_port(&url.host), ("::1", "8080"));
        assert_eq!(url.escaped_path(), "/a%20b");
    }
}
