//! Checking a [`NetworkSpec`]: `cidr` must be an IPv4 or IPv6 range in CIDR notation and
//! `gateway` an address of the same family inside it.
//!
//! The Network's name is checked too: its ConfigMap is named `network-<name>`, and that name
//! must fit the API server's limit for object names.
//!
//! A spec that fails these checks will not become valid by retrying, so the controller puts
//! the message in the Network's status and does not requeue it; the next edit of the spec
//! brings it back.

use std::fmt;
use std::net::IpAddr;

use crate::network::config_map::CONFIG_MAP_PREFIX;
use crate::network::types::NetworkSpec;

/// The longest object name the API server accepts for a ConfigMap (a DNS subdomain,
/// `validation.DNS1123SubdomainMaxLength`).
const MAX_NAME_LEN: usize = 253;

/// An address range parsed from CIDR notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    /// The address as written (host bits may be set, as Go's `net.ParseCIDR` allows).
    pub address: IpAddr,
    /// The prefix length.
    pub prefix_len: u8,
}

impl Cidr {
    /// Parses `10.1.0.0/16` or `fd00::/64`.
    pub fn parse(text: &str) -> Result<Cidr, InvalidSpec> {
        let invalid = |why: &str| InvalidSpec(format!("cidr {text:?} is not valid: {why}"));
        let (address, prefix) = text
            .split_once('/')
            .ok_or_else(|| invalid("expected an address and a prefix length, like 10.1.0.0/16"))?;
        let address: IpAddr = address
            .parse()
            .map_err(|_| invalid("the address is neither IPv4 nor IPv6"))?;
        let max = if address.is_ipv4() { 32 } else { 128 };
        let prefix_len: u8 = prefix
            .parse()
            .ok()
            .filter(|p| *p <= max && !prefix.starts_with('+'))
            .ok_or_else(|| invalid(&format!("the prefix length must be 0 to {max}")))?;
        Ok(Cidr {
            address,
            prefix_len,
        })
    }

    /// Whether `ip` lies inside the range.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.address, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix_len))
                    .unwrap_or(0);
                u32::from(net) & mask == u32::from(ip) & mask
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix_len))
                    .unwrap_or(0);
                u128::from(net) & mask == u128::from(ip) & mask
            }
            _ => false,
        }
    }
}

/// Why a spec is invalid, as a sentence for the Network's status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidSpec(String);

impl fmt::Display for InvalidSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidSpec {}

/// Checks a spec; the error says what is wrong in words a user can act on.
pub fn validate_spec(spec: &NetworkSpec) -> Result<(), InvalidSpec> {
    if spec.cidr.is_empty() {
        return Err(InvalidSpec("spec.cidr is required".into()));
    }
    let cidr = Cidr::parse(&spec.cidr)?;
    if spec.gateway.is_empty() {
        return Err(InvalidSpec("spec.gateway is required".into()));
    }
    let gateway: IpAddr = spec.gateway.parse().map_err(|_| {
        InvalidSpec(format!(
            "gateway {:?} is not an IPv4 or IPv6 address",
            spec.gateway
        ))
    })?;
    if gateway.is_ipv4() != cidr.address.is_ipv4() {
        return Err(InvalidSpec(format!(
            "gateway {} and cidr {} are not of the same address family",
            spec.gateway, spec.cidr
        )));
    }
    if !cidr.contains(gateway) {
        return Err(InvalidSpec(format!(
            "gateway {} is outside cidr {}",
            spec.gateway, spec.cidr
        )));
    }
    Ok(())
}

/// Checks that a Network named `name` can have its ConfigMap `network-<name>`: a Network
/// name may be 253 characters long, the ConfigMap's may not be longer, so a name of more than
/// 245 characters is refused here rather than by every create the API server rejects.
pub(crate) fn validate_name(name: &str) -> Result<(), InvalidSpec> {
    let cm_len = CONFIG_MAP_PREFIX.len() + name.len();
    if cm_len > MAX_NAME_LEN {
        return Err(InvalidSpec(format!(
            "the name is {} characters long, so its ConfigMap's name {CONFIG_MAP_PREFIX}<name> \
             would be {cm_len}, more than the {MAX_NAME_LEN} the API server allows; recreate \
             the Network with a name of at most {} characters",
            name.len(),
            MAX_NAME_LEN - CONFIG_MAP_PREFIX.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(cidr: &str, gateway: &str) -> NetworkSpec {
        NetworkSpec {
            cidr: cidr.into(),
            gateway: gateway.into(),
        }
    }

    #[test]
    fn valid_specs_pass() {
        for (cidr, gateway) in [
            ("192.168.0.0/16", "192.168.1.1"), // the seed's example after its edit
            ("10.0.0.0/8", "10.255.255.254"),
            ("10.1.2.3/16", "10.1.0.1"), // host bits set, as Go accepts
            ("0.0.0.0/0", "8.8.8.8"),
            ("10.0.0.1/32", "10.0.0.1"),
            ("fd00::/64", "fd00::1"),
            ("::/0", "2001:db8::1"),
        ] {
            assert_eq!(
                validate_spec(&spec(cidr, gateway)),
                Ok(()),
                "{cidr} {gateway}"
            );
        }
    }

    #[test]
    fn invalid_specs_say_why() {
        let cases = [
            ("", "10.0.0.1", "spec.cidr is required"),
            (
                "10.0.0.0",
                "10.0.0.1",
                "expected an address and a prefix length",
            ),
            ("10.0.0.0/33", "10.0.0.1", "prefix length must be 0 to 32"),
            ("10.0.0.0/+8", "10.0.0.1", "prefix length"),
            ("fd00::/129", "fd00::1", "prefix length must be 0 to 128"),
            ("10.0.0/8", "10.0.0.1", "neither IPv4 nor IPv6"),
            ("10.0.0.0/8", "", "spec.gateway is required"),
            ("10.0.0.0/8", "gateway", "is not an IPv4 or IPv6 address"),
            ("10.0.0.0/8", "fd00::1", "same address family"),
            (
                "10.0.0.0/8",
                "11.0.0.1",
                "gateway 11.0.0.1 is outside cidr 10.0.0.0/8",
            ),
            ("fd00::/64", "fd00:0:0:1::1", "outside cidr"),
            ("10.0.0.1/32", "10.0.0.2", "outside cidr"),
        ];
        for (cidr, gateway, want) in cases {
            let err = validate_spec(&spec(cidr, gateway)).unwrap_err();
            assert!(err.to_string().contains(want), "{cidr} {gateway}: {err}");
        }
    }

    #[test]
    fn a_name_too_long_for_its_config_map_is_refused() {
        assert_eq!(validate_name("net-a"), Ok(()));
        assert_eq!(validate_name(&"a".repeat(245)), Ok(()));
        let err = validate_name(&"a".repeat(246)).unwrap_err().to_string();
        assert!(err.contains("would be 254"), "{err}");
        assert!(err.contains("at most 245 characters"), "{err}");
    }
}
