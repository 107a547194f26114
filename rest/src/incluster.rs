//! The in-cluster config: the service account a pod runs as, client-go's `rest.InClusterConfig`.
//!
//! Reads the environment variables `KUBERNETES_SERVICE_HOST` and `KUBERNETES_SERVICE_PORT`
//! (both required) and the files under `/var/run/secrets/kubernetes.io/serviceaccount/`: the
//! token (used as a token file, so it is re-read every minute and rotation is picked up), the CA
//! bundle and the namespace. `POD_NAMESPACE` overrides the namespace file, as in client-go's
//! in-cluster `Namespace()`.
//!
//! A missing token is an error. A CA bundle (`ca.crt`) that is missing, unreadable or holds no
//! PEM certificate is not: as client-go's `InClusterConfig`, it is logged (at error level) and
//! the config has no CA, so the system roots verify the server.

use std::net::IpAddr;
use std::path::Path;

use crate::config::Config;
use crate::config_error::{ConfigError, Kind};

/// Where a pod's service-account credentials are mounted.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

impl Config {
    /// The config of a pod's service account. Fails with
    /// [`ConfigError::is_not_in_cluster`] outside a cluster, and with an I/O error when the
    /// token cannot be read. A `ca.crt` that cannot be loaded is only logged: the config then
    /// has no CA and the system roots are used, as in client-go.
    pub fn in_cluster() -> Result<Config, ConfigError> {
        let host = std::env::var("KUBERNETES_SERVICE_HOST").ok();
        let port = std::env::var("KUBERNETES_SERVICE_PORT").ok();
        let pod_namespace = std::env::var("POD_NAMESPACE").ok();
        in_cluster_from(
            host.as_deref(),
            port.as_deref(),
            pod_namespace.as_deref(),
            Path::new(SERVICE_ACCOUNT_DIR),
        )
    }
}

pub(crate) fn in_cluster_from(
    host: Option<&str>,
    port: Option<&str>,
    pod_namespace: Option<&str>,
    dir: &Path,
) -> Result<Config, ConfigError> {
    let (Some(host), Some(port)) = (
        host.filter(|h| !h.is_empty()),
        port.filter(|p| !p.is_empty()),
    ) else {
        return Err(ConfigError::new(
            Kind::NotInCluster,
            "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined",
        ));
    };
    let authority = if host.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv6()) {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let token_file = dir.join("token");
    // Read once now, as client-go does: a missing token fails early, and the token read
    // is the one sent if the file cannot be read later, before any later read succeeded.
    let token = std::fs::read(&token_file).map_err(|e| ConfigError::io(&token_file, e))?;
    let token = String::from_utf8_lossy(&token).trim().to_owned();
    let mut config = Config::new(String::new());
    config.host = crate::config::normalize_host(&format!("https://{authority}"))?;
    config.bearer_token = (!token.is_empty()).then(|| crate::secret::Secret::new(token));
    config.bearer_token_file = Some(token_file);
    // As client-go: a CA bundle that cannot be loaded is logged, not an error, and the system
    // roots verify the server.
    let ca_file = dir.join("ca.crt");
    let loaded = std::fs::read(&ca_file)
        .map_err(|e| ConfigError::io(&ca_file, e))
        .and_then(|pem| crate::tls::parse_certs(&pem, &ca_file.display().to_string()));
    match loaded {
        Ok(_) => config.tls.ca_file = Some(ca_file),
        Err(e) => tracing::error!(
            error = %e,
            "expected to load the in-cluster root CA from {}; using the system roots",
            ca_file.display()
        ),
    }
    config.namespace = match pod_namespace.filter(|n| !n.is_empty()) {
        Some(ns) => ns.to_string(),
        None => std::fs::read_to_string(dir.join("namespace"))
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "default".to_string()),
    };
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_cluster_reads_env_and_files() {
        let dir = tempfile::tempdir().unwrap();
        let err = in_cluster_from(None, Some("443"), None, dir.path()).unwrap_err();
        assert!(err.is_not_in_cluster());
        let err = in_cluster_from(Some("10.0.0.1"), Some("443"), None, dir.path()).unwrap_err();
        assert!(err.is_io() && err.to_string().contains("token"), "{err}");
        std::fs::write(dir.path().join("token"), "t").unwrap();
        std::fs::write(dir.path().join("ca.crt"), "c").unwrap();
        std::fs::write(dir.path().join("namespace"), "kube-system\n").unwrap();
        let c = in_cluster_from(Some("10.0.0.1"), Some("443"), None, dir.path()).unwrap();
        assert_eq!(
            c.host, "https://10.0.0.1:443",
            "as client-go's `https://` + JoinHostPort(host, port)"
        );
        assert_eq!(c.namespace, "kube-system");
        assert_eq!(
            c.bearer_token_file.as_deref(),
            Some(dir.path().join("token").as_path())
        );
        assert_eq!(
            c.bearer_token.as_ref().map(|t| t.expose().as_str()),
            Some("t"),
            "the token read at startup, sent if the file cannot be read later"
        );
        let c = in_cluster_from(Some("fd00::1"), Some("6443"), Some("mine"), dir.path()).unwrap();
        assert_eq!(c.host, "https://[fd00::1]:6443");
        assert_eq!(c.namespace, "mine");
    }

    /// client-go's `InClusterConfig` logs a `ca.crt` it cannot load as a certificate pool
    /// (missing, unreadable, or holding no certificate) and goes on with `CAFile` unset: the
    /// system roots verify the server.
    #[test]
    fn a_ca_that_cannot_be_loaded_leaves_the_system_roots() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("token"), "t").unwrap();
        let ca = dir.path().join("ca.crt");
        let load = || in_cluster_from(Some("10.0.0.1"), Some("443"), None, dir.path());
        let c = load().unwrap();
        assert_eq!(c.tls.ca_file, None, "missing");
        std::fs::create_dir(&ca).unwrap();
        let c = load().unwrap();
        assert_eq!(c.tls.ca_file, None, "unreadable (a folder)");
        std::fs::remove_dir(&ca).unwrap();
        for text in ["", "not a certificate"] {
            std::fs::write(&ca, text).unwrap();
            let c = load().unwrap();
            assert_eq!(c.tls.ca_file, None, "{text:?}");
        }
        std::fs::write(&ca, crate::tls::tests::TEST_CERT).unwrap();
        let c = load().unwrap();
        assert_eq!(c.tls.ca_file.as_deref(), Some(ca.as_path()));
        assert_eq!(
            c.bearer_token_file.as_deref(),
            Some(dir.path().join("token").as_path())
        );
    }
}
