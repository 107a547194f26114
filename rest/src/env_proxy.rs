//! The proxy the environment gives a request, chosen as Go's `http.ProxyFromEnvironment`
//! (golang.org/x/net/http/httpproxy) chooses it under client-go, when no `proxy-url` is set:
//!
//! - `HTTPS_PROXY` for `https` URLs, `HTTP_PROXY` for `http` ones (never the other, and never
//!   `ALL_PROXY`); the upper-case name first, an empty value counting as unset. A value with
//!   no `http`, `https` or `socks5` scheme is read as `http://` followed by the value.
//!   `socks5h` is taken as what it says too (Go's parser would read it as an HTTP proxy host
//!   named `socks5h`).
//! - In a CGI process (`REQUEST_METHOD` set), `HTTP_PROXY` is not used (Go fails such a
//!   request instead).
//! - Never for `localhost` or a loopback address.
//! - `NO_PROXY` (or `no_proxy`): comma-separated, case-insensitive entries: `*` (no proxy at
//!   all), an IP address or CIDR block, a domain name (`foo.com` matches it and its
//!   subdomains; `.foo.com` and `*.foo.com` its subdomains only). An address or name may carry
//!   a port (`foo.com:6443`, `[::1]:6443`), which the request's port (the scheme's default
//!   when the URL has none) must then equal. A name entry never matches a host that is an IP
//!   address, as in current x/net.
//! - A `socks5` proxy is given the server's name to resolve, as Go's SOCKS5 dialer does
//!   (reqwest's `socks5h`).

use std::net::IpAddr;

/// The proxy settings read from the environment (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct EnvProxy {
    http: Option<url::Url>,
    https: Option<url::Url>,
    cgi: bool,
    no_proxy: Vec<NoProxy>,
}

/// One `NO_PROXY` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
enum NoProxy {
    All,
    Cidr(IpAddr, u8),
    Ip(IpAddr, Option<String>),
    /// `suffix` starts with a dot; `exact` also matches the name without it.
    Domain {
        suffix: String,
        port: Option<String>,
        exact: bool,
    },
}

impl EnvProxy {
    /// The settings of this process's environment.
    pub(crate) fn from_env() -> EnvProxy {
        EnvProxy::from_lookup(|name| std::env::var(name).ok())
    }

    /// The settings of an environment whose variables `var` looks up.
    pub(crate) fn from_lookup(var: impl Fn(&str) -> Option<String>) -> EnvProxy {
        let any = |names: [&str; 2]| {
            names
                .into_iter()
                .find_map(|n| var(n).filter(|v| !v.is_empty()))
        };
        let no_proxy = any(["NO_PROXY", "no_proxy"]).unwrap_or_default();
        EnvProxy {
            http: any(["HTTP_PROXY", "http_proxy"]).and_then(|v| parse_proxy(&v)),
            https: any(["HTTPS_PROXY", "https_proxy"]).and_then(|v| parse_proxy(&v)),
            cgi: var("REQUEST_METHOD").is_some_and(|v| !v.is_empty()),
            no_proxy: parse_no_proxy(&no_proxy),
        }
    }

    /// True when no proxy is set at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    /// The proxy for a request to `url`, if any, as reqwest takes it (`socks5` as
    /// `socks5h`).
    pub(crate) fn proxy_for(&self, url: &url::Url) -> Option<url::Url> {
        let proxy = match url.scheme() {
            "https" => self.https.as_ref()?,
            "http" if !self.cgi => self.http.as_ref()?,
            _ => return None,
        };
        let host = url.host_str()?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let port = url.port_or_known_default()?.to_string();
        if !self.use_proxy(&host.to_ascii_lowercase(), &port) {
            return None;
        }
        let mut proxy = proxy.clone();
        if proxy.scheme() == "socks5" && proxy.set_scheme("socks5h").is_err() {
            return None;
        }
        Some(proxy)
    }

    fn use_proxy(&self, host: &str, port: &str) -> bool {
        if host == "localhost" {
            return false;
        }
        let ip = host.parse::<IpAddr>().ok().map(|ip| ip.to_canonical());
        if ip.is_some_and(|ip| ip.is_loopback()) {
            return false;
        }
        let port_ok = |p: &Option<String>| p.as_deref().is_none_or(|p| p == port);
        !self.no_proxy.iter().any(|entry| match entry {
            NoProxy::All => true,
            NoProxy::Cidr(net, bits) => ip.is_some_and(|ip| in_cidr(ip, *net, *bits)),
            NoProxy::Ip(want, p) => ip == Some(*want) && port_ok(p),
            NoProxy::Domain {
                suffix,
                port: p,
                exact,
            } => {
                ip.is_none()
                    && (host.ends_with(suffix.as_str()) || (*exact && host == &suffix[1..]))
                    && port_ok(p)
            }
        })
    }
}

/// A proxy variable's value as Go's `parseProxy` reads it.
fn parse_proxy(value: &str) -> Option<url::Url> {
    match url::Url::parse(value) {
        Ok(u) if matches!(u.scheme(), "http" | "https" | "socks5" | "socks5h") => Some(u),
        parsed => url::Url::parse(&format!("http://{value}"))
            .ok()
            .or_else(|| parsed.ok()),
    }
}

fn parse_no_proxy(value: &str) -> Vec<NoProxy> {
    let mut entries = Vec::new();
    for entry in value.split(',') {
        let entry = entry.trim().to_ascii_lowercase();
        if entry.is_empty() {
            continue;
        }
        if entry == "*" {
            return vec![NoProxy::All];
        }
        if let Some((ip, bits)) = entry.split_once('/') {
            if let (Ok(ip), Ok(bits)) = (ip.parse::<IpAddr>(), bits.parse::<u8>()) {
                let max = if ip.is_ipv4() { 32 } else { 128 };
                if bits <= max {
                    entries.push(NoProxy::Cidr(ip, bits));
                }
            }
            continue;
        }
        let (host, port) = split_host_port(&entry);
        if let Ok(ip) = host.parse::<IpAddr>() {
            entries.push(NoProxy::Ip(ip.to_canonical(), port));
            continue;
        }
        if host.is_empty() {
            continue;
        }
        let host = host
            .strip_prefix('*')
            .filter(|h| h.starts_with('.'))
            .unwrap_or(host);
        let (suffix, exact) = match host.strip_prefix('.') {
            Some(_) => (host.to_string(), false),
            None => (format!(".{host}"), true),
        };
        // A name in Unicode is compared in its ASCII form, as URLs carry it.
        let suffix = if suffix.is_ascii() {
            suffix
        } else {
            match url::Host::parse(&suffix[1..]) {
                Ok(url::Host::Domain(d)) => format!(".{d}"),
                _ => suffix,
            }
        };
        entries.push(NoProxy::Domain {
            suffix,
            port,
            exact,
        });
    }
    entries
}

/// `host:port`, `[v6]:port` or a bare host, as Go's `net.SplitHostPort` falls back to the
/// whole entry when it is not `host:port`.
/// An empty port (`foo.com:`) matches any, as in Go.
fn split_host_port(entry: &str) -> (&str, Option<String>) {
    let port = |p: &str| (!p.is_empty()).then(|| p.to_string());
    if let Some(rest) = entry.strip_prefix('[')
        && let Some((host, after)) = rest.split_once(']')
    {
        return match after.strip_prefix(':') {
            Some(p) => (host, port(p)),
            None => (entry, None),
        };
    }
    match entry.rsplit_once(':') {
        // One colon: host and port; more is an IPv6 address without brackets.
        Some((host, p)) if !host.contains(':') => (host, port(p)),
        _ => (entry, None),
    }
}

/// Whether `ip` lies in `net/bits`.
fn in_cidr(ip: IpAddr, net: IpAddr, bits: u8) -> bool {
    match (ip, net.to_canonical()) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(bits)).unwrap_or(0);
            u32::from(ip) & mask == u32::from(net) & mask
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(bits)).unwrap_or(0);
            u128::from(ip) & mask == u128::from(net) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> EnvProxy {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        EnvProxy::from_lookup(|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    }

    /// Environment variables, a request URL, and the proxy it gets.
    type Case = (
        &'static [(&'static str, &'static str)],
        &'static str,
        Option<String>,
    );

    fn proxied(e: &EnvProxy, url: &str) -> Option<String> {
        e.proxy_for(&url::Url::parse(url).unwrap())
            .map(|u| u.to_string())
    }

    /// Which proxy a request gets, as golang.org/x/net/http/httpproxy decides it.
    #[test]
    fn the_environment_proxy_is_chosen_as_go_chooses_it() {
        let p = Some("http://proxy:3128/".to_string());
        let cases: &[Case] = &[
            // HTTPS_PROXY for https, HTTP_PROXY for http, never ALL_PROXY or the other.
            (
                &[("HTTPS_PROXY", "proxy:3128")],
                "https://api.example",
                p.clone(),
            ),
            (&[("HTTPS_PROXY", "proxy:3128")], "http://api.example", None),
            (&[("HTTP_PROXY", "proxy:3128")], "https://api.example", None),
            (
                &[("HTTP_PROXY", "proxy:3128")],
                "http://api.example",
                p.clone(),
            ),
            (
                &[("ALL_PROXY", "http://proxy:3128")],
                "https://api.example",
                None,
            ),
            (
                &[("all_proxy", "http://proxy:3128")],
                "http://api.example",
                None,
            ),
            // An empty upper-case variable counts as unset.
            (
                &[("HTTPS_PROXY", ""), ("https_proxy", "http://proxy:3128")],
                "https://api.example",
                p.clone(),
            ),
            // CGI: no HTTP_PROXY, HTTPS_PROXY still.
            (
                &[("HTTP_PROXY", "proxy:3128"), ("REQUEST_METHOD", "GET")],
                "http://api.example",
                None,
            ),
            (
                &[("HTTPS_PROXY", "proxy:3128"), ("REQUEST_METHOD", "GET")],
                "https://api.example",
                p.clone(),
            ),
            // localhost and loopback addresses are never proxied.
            (
                &[("HTTPS_PROXY", "proxy:3128")],
                "https://localhost:6443",
                None,
            ),
            (
                &[("HTTPS_PROXY", "proxy:3128")],
                "https://127.0.0.1:6443",
                None,
            ),
            (&[("HTTPS_PROXY", "proxy:3128")], "https://127.3.2.1", None),
            (&[("HTTPS_PROXY", "proxy:3128")], "https://[::1]:6443", None),
            (
                &[("HTTPS_PROXY", "proxy:3128")],
                "https://10.0.0.1:6443",
                p.clone(),
            ),
            // socks5 is resolved by the proxy.
            (
                &[("HTTPS_PROXY", "socks5://u:pw@bastion:1080")],
                "https://api.internal",
                Some("socks5h://u:pw@bastion:1080".into()),
            ),
            (
                &[("HTTPS_PROXY", "socks5h://bastion:1080")],
                "https://api.internal",
                Some("socks5h://bastion:1080".into()),
            ),
        ];
        for (vars, url, want) in cases {
            assert_eq!(&proxied(&env(vars), url), want, "{vars:?} {url}");
        }
    }

    #[test]
    fn no_proxy_entries_match_as_in_go() {
        // (NO_PROXY, URL, goes through the proxy)
        let cases = [
            ("*", "https://api.example", false),
            ("foo.com", "https://foo.com", false),
            ("foo.com", "https://bar.foo.com", false),
            ("foo.com", "https://barfoo.com", true),
            (".foo.com", "https://foo.com", true),
            (".foo.com", "https://bar.foo.com", false),
            ("*.foo.com", "https://foo.com", true),
            ("*.foo.com", "https://bar.foo.com", false),
            ("FOO.com", "https://Bar.foo.COM", false),
            (" a.com , foo.com ", "https://foo.com", false),
            ("foo.com:6443", "https://foo.com:6443", false),
            ("foo.com:6443", "https://foo.com", true),
            ("foo.com:443", "https://foo.com", false),
            ("foo.com:", "https://foo.com:6443", false),
            ("10.0.0.1", "https://10.0.0.1:6443", false),
            ("10.0.0.1:6443", "https://10.0.0.1:6443", false),
            ("10.0.0.1:443", "https://10.0.0.1:6443", true),
            ("10.0.0.0/8", "https://10.1.2.3", false),
            ("10.0.0.0/8", "https://11.1.2.3", true),
            ("10.0.0.0/8", "https://ten.example", true),
            ("fd00::/8", "https://[fd12::1]", false),
            ("[fd12::1]:6443", "https://[fd12::1]:6443", false),
            ("fd12::1", "https://[fd12::1]:6443", false),
            // A name entry never matches an address (x/net's `domainMatch` skips them).
            ("1.2.3", "https://10.1.2.3", true),
            ("example", "https://[fd12::1]", true),
            // Names in Unicode are compared in their ASCII form.
            ("bücher.example", "https://www.bücher.example", false),
            ("", "https://foo.com", true),
            (",,", "https://foo.com", true),
        ];
        for (no_proxy, url, want) in cases {
            let e = env(&[("HTTPS_PROXY", "proxy:3128"), ("NO_PROXY", no_proxy)]);
            assert_eq!(
                proxied(&e, url).is_some(),
                want,
                "NO_PROXY={no_proxy:?} {url}"
            );
        }
        let lower = env(&[("HTTPS_PROXY", "proxy:3128"), ("no_proxy", "foo.com")]);
        assert_eq!(proxied(&lower, "https://foo.com"), None);
    }
}
