//! kubectl's check that the selected user and cluster of a kubeconfig are usable (clientcmd's
//! `ConfirmUsable`, its `validateAuthInfo` and `validateClusterInfo`), run by
//! [`Config::from_kubeconfig`](crate::Config::from_kubeconfig) before anything is built: a
//! kubeconfig kubectl refuses is refused here too, with client-go's message naming every
//! problem.
//!
//! Left to later steps, which fail with the file's name: files that cannot be read (kubectl
//! opens them here), and an exec plugin's `interactiveMode` and `apiVersion` values (checked
//! when its authenticator is built).

use crate::config::ResolvedContext;
use crate::config_error::{ConfigError, Kind};
use crate::kubeconfig::{AuthInfo, Cluster};

/// Every problem kubectl's `ConfirmUsable` finds in `r`'s user and cluster, as one error.
pub(crate) fn confirm_usable(r: &ResolvedContext) -> Result<(), ConfigError> {
    let mut problems = auth_info_problems(&r.user_name, &r.auth_info);
    problems.extend(cluster_problems(&r.cluster_name, &r.cluster));
    // client-go's `errConfigurationInvalid`, an aggregate: one message, or `[a, b]`.
    let joined = match problems.as_slice() {
        [] => return Ok(()),
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    Err(ConfigError::new(
        Kind::Invalid,
        format!("invalid configuration: {joined}"),
    ))
}

fn set<T: AsRef<[u8]>>(value: Option<T>) -> bool {
    value.is_some_and(|v| !v.as_ref().is_empty())
}

fn path_set(path: Option<&std::path::PathBuf>) -> bool {
    path.is_some_and(|p| !p.as_os_str().is_empty())
}

/// clientcmd's `validateAuthInfo`, but for reading the files.
pub(crate) fn auth_info_problems(name: &str, user: &AuthInfo) -> Vec<String> {
    let mut problems = Vec::new();
    let cert_file = path_set(user.client_certificate.as_ref());
    let cert_data = set(user.client_certificate_data.as_ref());
    let key_file = path_set(user.client_key.as_ref());
    let key_data = set(user.client_key_data.as_ref().map(|k| k.expose()));
    if cert_file || cert_data {
        if cert_file && cert_data {
            problems.push(format!(
                "client-cert-data and client-cert are both specified for {name}. client-cert-data will override."
            ));
        }
        if key_file && key_data {
            problems.push(format!(
                "client-key-data and client-key are both specified for {name}; client-key-data will override"
            ));
        }
        if !key_file && !key_data {
            problems.push(format!(
                "client-key-data or client-key must be specified for {name} to use the clientCert authentication method."
            ));
        }
    }
    if let Some(exec) = &user.exec {
        if exec.command.is_empty() {
            problems.push(format!(
                "command must be specified for {name} to use exec authentication plugin"
            ));
        }
        if exec.api_version.is_empty() {
            problems.push(format!(
                "apiVersion must be specified for {name} to use exec authentication plugin"
            ));
        }
        for var in &exec.env {
            if var.name.is_empty() {
                problems.push(format!(
                    "env variable name must be specified for {name} to use exec authentication plugin"
                ));
            }
        }
    }
    let token = set(user.token.as_ref().map(|t| t.expose()));
    let basic = set(user.username.as_deref()) || set(user.password.as_ref().map(|p| p.expose()));
    if token && basic {
        problems.push(format!(
            "more than one authentication method found for {name}; found [token basicAuth], only one is allowed"
        ));
    }
    let impersonates_more = set(user.impersonate_uid.as_deref())
        || !user.impersonate_groups.is_empty()
        || !user.impersonate_user_extra.is_empty();
    if impersonates_more && !set(user.impersonate.as_deref()) {
        problems.push(format!(
            "requesting uid, groups or user-extra for {name} without impersonating a user"
        ));
    }
    problems
}

/// clientcmd's `validateClusterInfo`, but for reading the CA file (a cluster without a server
/// is refused by the caller).
fn cluster_problems(name: &str, cluster: &Cluster) -> Vec<String> {
    let mut problems = Vec::new();
    if path_set(cluster.certificate_authority.as_ref())
        && set(cluster.certificate_authority_data.as_ref())
    {
        problems.push(format!(
            "certificate-authority-data and certificate-authority are both specified for {name}. certificate-authority-data will override."
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use crate::config::{Config, ConfigOverrides};
    use crate::kubeconfig::Kubeconfig;

    fn kubeconfig(cluster: &str, user: &str) -> Kubeconfig {
        Kubeconfig::from_yaml(&format!(
            "
clusters:
- name: c
  cluster: {{server: 'https://api.example:6443', {cluster}}}
users:
- name: u
  user: {{{user}}}
contexts:
- name: x
  context: {{cluster: c, user: u}}
current-context: x
"
        ))
        .unwrap()
    }

    fn confirm(cluster: &str, user: &str) -> Result<Config, String> {
        Config::from_kubeconfig(&kubeconfig(cluster, user), &ConfigOverrides::default()).map_err(
            |e| {
                assert!(e.is_invalid(), "{e}");
                e.to_string()
            },
        )
    }

    /// Each kubeconfig here is refused by kubectl v1.32 with the message given (checked on
    /// the testenv server's kubeconfig with each change made); the error is client-go's,
    /// `invalid configuration: ` and the message.
    #[test]
    fn what_kubectl_refuses_is_refused_with_its_words() {
        let cases = [
            (
                "certificate-authority: /ca.pem, certificate-authority-data: Zm9v",
                "",
                "certificate-authority-data and certificate-authority are both specified for c. certificate-authority-data will override.",
            ),
            (
                "",
                "client-certificate: /c.pem, client-certificate-data: Zm9v, client-key-data: Zm9v",
                "client-cert-data and client-cert are both specified for u. client-cert-data will override.",
            ),
            (
                "",
                "client-certificate-data: Zm9v, client-key: /k.pem, client-key-data: Zm9v",
                "client-key-data and client-key are both specified for u; client-key-data will override",
            ),
            (
                "",
                "client-certificate-data: Zm9v",
                "client-key-data or client-key must be specified for u to use the clientCert authentication method.",
            ),
            (
                "",
                "as-groups: [g]",
                "requesting uid, groups or user-extra for u without impersonating a user",
            ),
            (
                "",
                "as-uid: '42'",
                "requesting uid, groups or user-extra for u without impersonating a user",
            ),
            (
                "",
                "as-user-extra: {scopes: [a]}",
                "requesting uid, groups or user-extra for u without impersonating a user",
            ),
            (
                "",
                "exec: {command: x, apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never, env: [{name: '', value: v}]}",
                "env variable name must be specified for u to use exec authentication plugin",
            ),
            (
                "",
                "exec: {command: '', apiVersion: client.authentication.k8s.io/v1, interactiveMode: Never}",
                "command must be specified for u to use exec authentication plugin",
            ),
            (
                "",
                "exec: {command: x, interactiveMode: Never}",
                "apiVersion must be specified for u to use exec authentication plugin",
            ),
            (
                "",
                "token: T, username: admin",
                "more than one authentication method found for u; found [token basicAuth], only one is allowed",
            ),
        ];
        for (cluster, user, want) in cases {
            assert_eq!(
                confirm(cluster, user).unwrap_err(),
                format!("invalid configuration: {want}"),
                "{cluster} {user}"
            );
        }
        // Several problems: all of them, as kubectl lists them.
        let err = confirm(
            "certificate-authority: /ca.pem, certificate-authority-data: Zm9v",
            "as-groups: [g]",
        )
        .unwrap_err();
        assert_eq!(
            err,
            "invalid configuration: [requesting uid, groups or user-extra for u without \
             impersonating a user, certificate-authority-data and certificate-authority are \
             both specified for c. certificate-authority-data will override.]"
        );
    }

    /// What kubectl accepts: impersonation with a user, a client key without a certificate
    /// (client-go then uses no client certificate), empty values that count as unset.
    #[test]
    fn what_kubectl_accepts_is_accepted() {
        for user in [
            "as: jane, as-groups: [g], as-uid: '42'",
            "client-key-data: Zm9v",
            "token: T, username: '', password: ''",
            "client-certificate: '', client-certificate-data: Zm9v, client-key-data: Zm9v",
        ] {
            let config = confirm("", user).unwrap_or_else(|e| panic!("{user}: {e}"));
            if user.starts_with("client-key-data") {
                assert_eq!(config.tls.key_data, None, "a lone key is not used");
            }
        }
    }
}
