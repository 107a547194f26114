//! Authentication against the real server: client certificates and exec plugins.

use std::os::unix::fs::PermissionsExt as _;

use kclient_rest::{Client, Config, ConfigOverrides, ExecConfig, ExecEnvVar, Kubeconfig};
use kclient_testenv::{Identity, TestEnv};
use serde_json::Value;

async fn whoami(client: &Client) -> Result<String, kclient_rest::Error> {
    let review: Value = client
        .post()
        .group_version("authentication.k8s.io", "v1")
        .resource("selfsubjectreviews")
        .json(&serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .send()
        .await?;
    Ok(review["status"]["userInfo"]["username"]
        .as_str()
        .unwrap_or("")
        .to_string())
}

#[tokio::test]
async fn client_certificate_auth() {
    let env = TestEnv::connect().await;
    let config = env.config(Identity::Cert);
    assert!(config.bearer_token.is_none());
    assert!(config.tls.cert_data.is_some() || config.tls.cert_file.is_some());
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "kclient-cert-user");
}

fn admin_token(env: &TestEnv) -> String {
    let k = Kubeconfig::read_from(env.kubeconfig_path(Identity::Admin)).unwrap();
    let user = &k.auth_infos[0].user;
    user.token.as_ref().unwrap().expose().clone()
}

fn script(dir: &std::path::Path, body: &str) -> String {
    let path = dir.join("plugin.sh");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.to_string_lossy().into_owned()
}

/// The plugin config that runs `script` through `/bin/sh`. Executing the script file itself
/// can fail with "text file busy" when another test forks while the file is still open for
/// writing in this process; the shell only reads it.
fn sh(script: String, api_version: &str) -> ExecConfig {
    let mut exec = ExecConfig::new("/bin/sh", api_version);
    exec.args = vec![script];
    exec
}

#[tokio::test]
async fn exec_plugin_supplies_the_token_and_reruns_after_401() {
    let env = TestEnv::connect().await;
    let dir = tempfile::tempdir().unwrap();
    let count = dir.path().join("count");
    // The first run returns a wrong token, later runs the admin token from the environment.
    let cmd = script(
        dir.path(),
        &format!(
            r#"echo run >> {count}
if [ "$(wc -l < {count})" -eq 1 ]; then t=wrong-token; else t=$ADMIN_TOKEN; fi
cat <<EOF
{{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{{"token":"$t"}}}}
EOF"#,
            count = count.display()
        ),
    );
    let mut config: Config = env.config(Identity::Admin);
    config.bearer_token = None;
    let mut exec = sh(cmd, "client.authentication.k8s.io/v1");
    exec.interactive_mode = Some("Never".into());
    exec.env = vec![ExecEnvVar::new("ADMIN_TOKEN", admin_token(&env))];
    config.exec_provider = Some(exec);
    let client = Client::new(config).unwrap();

    let err = whoami(&client).await.unwrap_err();
    assert!(err.is_unauthorized(), "the 401 is returned: {err:?}");
    assert_eq!(whoami(&client).await.unwrap(), "kclient-admin");
    assert_eq!(whoami(&client).await.unwrap(), "kclient-admin");
    let runs = std::fs::read_to_string(&count).unwrap().lines().count();
    assert_eq!(runs, 2, "run once, re-run once after the 401, then cached");
}

#[tokio::test]
async fn token_file_auth() {
    let env = TestEnv::connect().await;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("token");
    std::fs::write(&file, format!("{}\n", admin_token(&env))).unwrap();
    let mut config = env.config(Identity::Admin);
    config.bearer_token = None;
    config.bearer_token_file = Some(file);
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "kclient-admin");
}

/// client-go's basic auth needs a username (`HasBasicAuth` is `len(Username) != 0`): a password
/// without one is no credential, so the token or exec plugin beside it is used, as kubectl uses
/// it.
#[tokio::test]
async fn a_password_without_a_username_is_not_basic_auth() {
    let env = TestEnv::connect().await;
    // A kubeconfig user with a token and `password: ""` (kubectl uses the token).
    let mut kubeconfig = Kubeconfig::read_from(env.kubeconfig_path(Identity::Admin)).unwrap();
    let user = &mut kubeconfig.auth_infos[0].user;
    assert!(user.token.is_some() && user.username.is_none());
    user.password = Some("".into());
    let config = Config::from_kubeconfig(&kubeconfig, &ConfigOverrides::default()).unwrap();
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "kclient-admin");

    // A Config with a token and a password but no username (client-go uses the token).
    let mut config = env.config(Identity::Admin);
    config.password = Some("pw".into());
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "kclient-admin");

    // A password alone does not keep the exec plugin from running (client-go's exec
    // `UpdateTransportConfig` checks `HasBasicAuth`).
    let dir = tempfile::tempdir().unwrap();
    let cmd = script(
        dir.path(),
        r#"cat <<EOF
{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1","status":{"token":"$ADMIN_TOKEN"}}
EOF"#,
    );
    let mut config = env.config(Identity::Admin);
    config.bearer_token = None;
    config.password = Some("pw".into());
    let mut exec = sh(cmd, "client.authentication.k8s.io/v1");
    exec.interactive_mode = Some("Never".into());
    exec.env = vec![ExecEnvVar::new("ADMIN_TOKEN", admin_token(&env))];
    config.exec_provider = Some(exec);
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "kclient-admin");
}

#[tokio::test]
async fn impersonation_headers_are_sent() {
    let env = TestEnv::connect().await;
    let mut config = env.config(Identity::Admin);
    config.impersonate.user_name = Some("jane".into());
    config.impersonate.groups = vec!["devs".into()];
    config
        .impersonate
        .extra
        .insert("scopes".into(), vec!["view".into()]);
    let client = Client::new(config).unwrap();
    let review: Value = client
        .post()
        .group_version("authentication.k8s.io", "v1")
        .resource("selfsubjectreviews")
        .json(&serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}))
        .send()
        .await
        .unwrap();
    let user = &review["status"]["userInfo"];
    assert_eq!(user["username"], "jane");
    assert!(
        user["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "devs"),
        "{user}"
    );
    assert_eq!(user["extra"]["scopes"][0], "view");
}

/// client-go's impersonating round tripper leaves a request that names a user to impersonate
/// itself (a non-empty `Impersonate-User`) alone: the request's impersonation replaces the
/// config's whole, groups and extras included, instead of the server reading the config's
/// user first.
#[tokio::test]
async fn a_request_impersonate_user_header_replaces_the_configs_impersonation() {
    let env = TestEnv::connect().await;
    let mut config = env.config(Identity::Admin);
    config.impersonate.user_name = Some("jane".into());
    config.impersonate.groups = vec!["devs".into()];
    config
        .impersonate
        .extra
        .insert("scopes".into(), vec!["view".into()]);
    let client = Client::new(config).unwrap();
    let review = |headers: &'static [(&'static str, &'static str)]| {
        let client = client.clone();
        async move {
            let mut request = client
                .post()
                .group_version("authentication.k8s.io", "v1")
                .resource("selfsubjectreviews")
                .json(&serde_json::json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}));
            for (name, value) in headers {
                request = request.header(name, value);
            }
            let review: Value = request.send().await.unwrap();
            review["status"]["userInfo"].clone()
        }
    };
    let user = review(&[("Impersonate-User", "bob"), ("Impersonate-Group", "ops")]).await;
    assert_eq!(user["username"], "bob", "{user}");
    let groups = user["groups"].as_array().unwrap();
    assert!(groups.iter().any(|g| g == "ops"), "{user}");
    assert!(!groups.iter().any(|g| g == "devs"), "{user}");
    assert!(user.get("extra").is_none(), "{user}");
    // Header names are case-insensitive.
    let user = review(&[("impersonate-user", "carol")]).await;
    assert_eq!(user["username"], "carol", "{user}");
    // Without one, or with an empty one, the config's impersonation applies.
    for headers in [&[][..], &[("Impersonate-User", "")][..]] {
        let user = review(headers).await;
        assert_eq!(user["username"], "jane", "{headers:?}: {user}");
        assert_eq!(user["extra"]["scopes"][0], "view", "{headers:?}: {user}");
    }
}

#[tokio::test]
async fn tls_server_name_and_insecure_skip_verify() {
    let env = TestEnv::connect().await;
    // The serving certificate names localhost: verifying against it works, a wrong name fails.
    let mut config = env.config(Identity::Admin);
    config.tls.server_name = Some("localhost".into());
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "kclient-admin");

    let mut config = env.config(Identity::Admin);
    config.tls.server_name = Some("wrong.example".into());
    let err = whoami(&Client::new(config).unwrap()).await.unwrap_err();
    assert!(err.is_transport(), "{err:?}");

    // Without the CA, the system roots do not trust the test CA...
    let mut config = env.config(Identity::Admin);
    config.tls.ca_data = None;
    config.tls.ca_file = None;
    let err = whoami(&Client::new(config.clone()).unwrap())
        .await
        .unwrap_err();
    assert!(err.is_transport(), "{err:?}");
    // ...unless verification is explicitly skipped.
    config.tls.insecure = true;
    assert_eq!(
        whoami(&Client::new(config).unwrap()).await.unwrap(),
        "kclient-admin"
    );
}

#[tokio::test]
async fn exec_plugin_supplies_a_client_certificate() {
    let env = TestEnv::connect().await;
    let pki = env.data_dir().join("pki");
    let dir = tempfile::tempdir().unwrap();
    // PEM in JSON: newlines escaped by awk.
    let cmd = script(
        dir.path(),
        &format!(
            r#"cert=$(awk '{{printf "%s\\n", $0}}' {crt})
key=$(awk '{{printf "%s\\n", $0}}' {key})
printf '{{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","status":{{"clientCertificateData":"%s","clientKeyData":"%s"}}}}' "$cert" "$key""#,
            crt = pki.join("cert-user.crt").display(),
            key = pki.join("cert-user.key").display(),
        ),
    );
    let mut config = env.config(Identity::Admin);
    config.bearer_token = None;
    config.exec_provider = Some(sh(cmd, "client.authentication.k8s.io/v1beta1"));
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "kclient-cert-user");
}

/// A SOCKS5 proxy on loopback (no authentication) that records the address of each CONNECT
/// as the client sent it (`name:port` for a host name, `ip:port` for an address) and
/// connects every one to `127.0.0.1` on the requested port.
async fn socks5_proxy() -> (u16, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = seen.clone();
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let record = record.clone();
            tokio::spawn(async move {
                // Greeting: version, method count, methods; answer "no authentication".
                let mut head = [0u8; 2];
                conn.read_exact(&mut head).await?;
                let mut methods = vec![0u8; usize::from(head[1])];
                conn.read_exact(&mut methods).await?;
                conn.write_all(&[5, 0]).await?;
                // Request: version, CONNECT, reserved, address type, address, port.
                let mut req = [0u8; 4];
                conn.read_exact(&mut req).await?;
                let host = match req[3] {
                    1 => {
                        let mut ip = [0u8; 4];
                        conn.read_exact(&mut ip).await?;
                        std::net::Ipv4Addr::from(ip).to_string()
                    }
                    3 => {
                        let len = conn.read_u8().await?;
                        let mut name = vec![0u8; usize::from(len)];
                        conn.read_exact(&mut name).await?;
                        String::from_utf8_lossy(&name).into_owned()
                    }
                    _ => return Ok::<(), std::io::Error>(()),
                };
                let target_port = conn.read_u16().await?;
                record.lock().unwrap().push(format!("{host}:{target_port}"));
                let mut upstream =
                    tokio::net::TcpStream::connect(("127.0.0.1", target_port)).await?;
                conn.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
                tokio::io::copy_bidirectional(&mut conn, &mut upstream).await?;
                Ok(())
            });
        }
    });
    (port, seen)
}

/// A kubeconfig's `proxy-url: socks5://...` has the proxy resolve the server's name, as Go's
/// SOCKS5 dialer under kubectl does (it sends the name, never a locally resolved address): the
/// usual `ssh -D` tunnel to a cluster whose API name only resolves behind the bastion.
#[tokio::test]
async fn a_socks5_proxy_resolves_the_server_name() {
    let env = TestEnv::connect().await;
    let (proxy_port, seen) = socks5_proxy().await;
    let mut kubeconfig = Kubeconfig::read_from(env.kubeconfig_path(Identity::Admin)).unwrap();
    let cluster = &mut kubeconfig.clusters[0].cluster;
    let port = url::Url::parse(&cluster.server).unwrap().port().unwrap();
    // `.invalid` never resolves (RFC 6761); the serving certificate names localhost.
    cluster.server = format!("https://kclient-behind-bastion.invalid:{port}");
    cluster.tls_server_name = Some("localhost".into());
    cluster.proxy_url = Some(format!("socks5://127.0.0.1:{proxy_port}"));
    let config = Config::from_kubeconfig(&kubeconfig, &Default::default()).unwrap();
    let client = Client::new(config).unwrap();
    assert_eq!(whoami(&client).await.unwrap(), "kclient-admin");
    assert_eq!(
        seen.lock().unwrap().first().map(String::as_str),
        Some(format!("kclient-behind-bastion.invalid:{port}").as_str()),
        "the proxy is asked for the server's name"
    );
}

/// With no `proxy-url`, the environment's proxy is chosen as Go's `ProxyFromEnvironment`
/// chooses it under kubectl: `HTTPS_PROXY=socks5://...` has the proxy resolve the server's
/// name (Go's SOCKS5 dialer sends the name), and a server on a loopback address is reached
/// directly, never through the proxy. Runs itself in a child process that has the variable.
#[tokio::test]
async fn an_environment_socks5_proxy_resolves_the_name_and_loopback_goes_direct() {
    const CHILD: &str = "KCLIENT_TEST_ENV_SOCKS5_CHILD";
    const NAME: &str =
        "auth::an_environment_socks5_proxy_resolves_the_name_and_loopback_goes_direct";
    let env = TestEnv::connect().await;
    let kubeconfig = Kubeconfig::read_from(env.kubeconfig_path(Identity::Admin)).unwrap();
    let server = kubeconfig.clusters[0].cluster.server.clone();
    let port = url::Url::parse(&server).unwrap().port().unwrap();
    if std::env::var_os(CHILD).is_none() {
        let (proxy_port, seen) = socks5_proxy().await;
        let mut child = tokio::process::Command::new(std::env::current_exe().unwrap());
        child
            .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD, "1")
            .env("HTTPS_PROXY", format!("socks5://127.0.0.1:{proxy_port}"));
        for unset in [
            "https_proxy",
            "NO_PROXY",
            "no_proxy",
            "ALL_PROXY",
            "all_proxy",
        ] {
            child.env_remove(unset);
        }
        let out = child.output().await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            *seen.lock().unwrap(),
            [format!("kclient-behind-bastion.invalid:{port}")],
            "the proxy is asked for the server's name, and only for it"
        );
        return;
    }
    // The server on loopback, as the kubeconfig has it: direct.
    assert!(
        server.starts_with("https://127.0.0.1:") || server.starts_with("https://localhost:"),
        "{server}"
    );
    let config = Config::from_kubeconfig(&kubeconfig, &Default::default()).unwrap();
    assert_eq!(
        whoami(&Client::new(config).unwrap()).await.unwrap(),
        "kclient-admin"
    );
    // A name only the proxy knows: `.invalid` never resolves (RFC 6761); the serving
    // certificate names localhost.
    let mut kubeconfig = kubeconfig;
    let cluster = &mut kubeconfig.clusters[0].cluster;
    cluster.server = format!("https://kclient-behind-bastion.invalid:{port}");
    cluster.tls_server_name = Some("localhost".into());
    let config = Config::from_kubeconfig(&kubeconfig, &Default::default()).unwrap();
    assert_eq!(
        whoami(&Client::new(config).unwrap()).await.unwrap(),
        "kclient-admin"
    );
}
