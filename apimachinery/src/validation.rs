//! Validation of names, label keys and values, as apimachinery's `util/validation`
//! (`IsQualifiedName`, `IsValidLabelValue`, `IsDNS1123Subdomain`, `IsDNS1123Label`). Label
//! selectors use these to reject what the API server would reject; the name checks are public
//! for whoever must make a valid object name (an Event recorder, the fake API server).

/// The longest label value and the longest name part of a qualified name.
const MAX_NAME_LEN: usize = 63;
/// The longest DNS-1123 subdomain (the prefix of a qualified name).
const MAX_SUBDOMAIN_LEN: usize = 253;

/// Checks a label key (a qualified name, apimachinery's `IsQualifiedName`, also the rule for
/// annotation keys and finalizers): `[prefix/]name`, where the optional prefix is a DNS-1123
/// subdomain and the name is at most 63 characters of alphanumerics, `-`, `_` and `.`,
/// starting and ending with an alphanumeric. Returns what is wrong.
///
/// ```
/// use kclient_apimachinery::validate_label_key;
/// assert!(validate_label_key("app.kubernetes.io/name").is_ok());
/// assert!(validate_label_key("bad key").is_err());
/// ```
pub fn validate_label_key(key: &str) -> Result<(), String> {
    let (prefix, name) = match key.split_once('/') {
        None => (None, key),
        Some((prefix, name)) if !name.contains('/') => (Some(prefix), name),
        Some(_) => {
            return Err(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', \
                 and must start and end with an alphanumeric character, with an optional \
                 DNS subdomain prefix and '/'"
                    .to_owned(),
            );
        }
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            return Err("prefix part must be non-empty".to_owned());
        }
        validate_dns1123_subdomain(prefix).map_err(|e| format!("prefix part {e}"))?;
    }
    if name.is_empty() {
        return Err("name part must be non-empty".to_owned());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "name part must be no more than {MAX_NAME_LEN} characters"
        ));
    }
    if !is_qualified_name_part(name) {
        return Err(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must \
             start and end with an alphanumeric character"
                .to_owned(),
        );
    }
    Ok(())
}

/// Checks a label value (apimachinery's `IsValidLabelValue`): empty, or at most 63 characters
/// of alphanumerics, `-`, `_` and `.`, starting and ending with an alphanumeric. Returns what
/// is wrong.
///
/// ```
/// use kclient_apimachinery::validate_label_value;
/// assert!(validate_label_value("v1.2").is_ok());
/// assert!(validate_label_value("a/b").is_err());
/// ```
pub fn validate_label_value(value: &str) -> Result<(), String> {
    if value.len() > MAX_NAME_LEN {
        return Err(format!("must be no more than {MAX_NAME_LEN} characters"));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        return Err(
            "a valid label must be an empty string or consist of alphanumeric characters, \
             '-', '_' or '.', and must start and end with an alphanumeric character"
                .to_owned(),
        );
    }
    Ok(())
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_qualified_name_part(s: &str) -> bool {
    let bytes = s.as_bytes();
    let (Some(first), Some(last)) = (bytes.first(), bytes.last()) else {
        return false;
    };
    first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Whether `s` is a lowercase RFC 1123 subdomain, as apimachinery's `IsDNS1123Subdomain`
/// accepts it (the rule for most object names): dot-separated labels of
/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 253 characters in all.
///
/// ```
/// use kclient_apimachinery::is_dns1123_subdomain;
/// assert!(is_dns1123_subdomain("web-0.17a2b"));
/// assert!(!is_dns1123_subdomain("system:controller:job-controller"));
/// ```
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= MAX_SUBDOMAIN_LEN && s.split('.').all(is_label_pattern)
}

/// Whether `s` is a lowercase RFC 1123 label, as apimachinery's `IsDNS1123Label` accepts it
/// (the rule for the names of Namespaces, for example): `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at
/// most 63 characters.
///
/// ```
/// use kclient_apimachinery::is_dns1123_label;
/// assert!(is_dns1123_label("team-a"));
/// assert!(!is_dns1123_label("team.a"));
/// ```
pub fn is_dns1123_label(s: &str) -> bool {
    s.len() <= MAX_NAME_LEN && is_label_pattern(s)
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, of any length.
fn is_label_pattern(label: &str) -> bool {
    let b = label.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            alnum(first) && alnum(last) && b.iter().all(|c| alnum(c) || *c == b'-')
        }
        _ => false,
    }
}

/// [`is_dns1123_subdomain`], saying what is wrong.
fn validate_dns1123_subdomain(s: &str) -> Result<(), String> {
    if s.len() > MAX_SUBDOMAIN_LEN {
        return Err(format!(
            "must be no more than {MAX_SUBDOMAIN_LEN} characters"
        ));
    }
    if is_dns1123_subdomain(s) {
        Ok(())
    } else {
        Err(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
             characters, '-' or '.', and must start and end with an alphanumeric character"
                .to_owned(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_keys() {
        let long63 = "a".repeat(63);
        let long64 = "a".repeat(64);
        let valid = [
            "app",
            "a",
            "app.kubernetes.io/name",
            "k8s.io/initial-events-end",
            "a-b_c.d",
            "A9",
            long63.as_str(),
        ];
        for key in valid {
            assert_eq!(validate_label_key(key), Ok(()), "{key}");
        }
        let long_prefix = format!("{}/x", "a".repeat(254));
        let invalid = [
            "",
            "/name",
            "-app",
            "app-",
            "a b",
            "a/b/c",
            "Example.com/x",
            "ex_ample.com/x",
            "example.com/",
            long64.as_str(),
            long_prefix.as_str(),
        ];
        for key in invalid {
            assert!(validate_label_key(key).is_err(), "{key}");
        }
    }

    #[test]
    fn label_values() {
        for value in ["", "a", "web-1", "v1.2_3", "A"] {
            assert_eq!(validate_label_value(value), Ok(()), "{value}");
        }
        let long = "a".repeat(64);
        for value in ["-a", "a-", "a/b", "a b", "é", long.as_str()] {
            assert!(validate_label_value(value).is_err(), "{value}");
        }
    }
}
