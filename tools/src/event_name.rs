//! The name of a new Event, as both recorders make it (client-go's
//! `tools/record/util.GenerateEventName`): `<object name>.<unix nanoseconds in hex>`, or a
//! random UUID when that is not a valid object name.
//!
//! The name of the object an event is about need not be a DNS-1123 subdomain (lowercase
//! alphanumerics, `-` and `.`, at most 253 characters): RBAC objects are named
//! `system:controller:...`, and a name near 253 characters leaves no room for the suffix. The
//! events.k8s.io/v1 API refuses an Event so named as invalid, which is never retried, so the
//! event would be lost. The core/v1 API still accepts such names, for compatibility, but
//! client-go uses a UUID for both recorders, and so does this.

/// The name of a new Event about the object named `reference_name`, made at `unix_nanos`.
pub(crate) fn event_name(reference_name: &str, unix_nanos: u128) -> String {
    let name = format!("{reference_name}.{unix_nanos:x}");
    if kclient_apimachinery::is_dns1123_subdomain(&name) {
        name
    } else {
        random_uuid()
    }
}

/// A random (version 4) UUID in its usual lowercase form, as `github.com/google/uuid`'s
/// `New().String()`.
fn random_uuid() -> String {
    let mut b: [u8; 16] = rand::random();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex = |bytes: &[u8]| bytes.iter().map(|x| format!("{x:02x}")).collect::<String>();
    format!(
        "{}-{}-{}-{}-{}",
        hex(&b[0..4]),
        hex(&b[4..6]),
        hex(&b[6..8]),
        hex(&b[8..10]),
        hex(&b[10..16])
    )
}

/// Whether `name` is one [`event_name`] can return: a valid Event name.
#[cfg(test)]
pub(crate) fn is_valid_event_name(name: &str) -> bool {
    kclient_apimachinery::is_dns1123_subdomain(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The longest DNS-1123 subdomain.
    const MAX_SUBDOMAIN_LEN: usize = 253;

    #[test]
    fn a_valid_object_name_gets_the_nanosecond_suffix() {
        assert_eq!(event_name("web-0", 0x17a2b), "web-0.17a2b");
        let longest = "a".repeat(MAX_SUBDOMAIN_LEN - 6);
        assert_eq!(event_name(&longest, 0x12345), format!("{longest}.12345"));
    }

    #[test]
    fn an_invalid_one_gets_a_uuid() {
        let too_long = "a".repeat(MAX_SUBDOMAIN_LEN - 5);
        for reference in [
            "system:controller:job-controller",
            "Upper",
            "",
            "under_score",
            too_long.as_str(),
        ] {
            let name = event_name(reference, 0x12345);
            assert!(is_valid_event_name(&name), "{reference:?} -> {name:?}");
            assert_eq!(name.len(), 36, "{name}");
            let groups: Vec<usize> = name.split('-').map(str::len).collect();
            assert_eq!(groups, [8, 4, 4, 4, 12], "{name}");
            assert_eq!(&name[14..15], "4", "version 4: {name}");
            assert!("89ab".contains(&name[19..20]), "RFC 4122 variant: {name}");
        }
        assert_ne!(event_name("a:b", 1), event_name("a:b", 1), "random");
    }
}
