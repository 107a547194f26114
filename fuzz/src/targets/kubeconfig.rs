//! The kubeconfig target: YAML (or JSON) text through `Kubeconfig::from_yaml` (serde_yaml_ng,
//! base64 data fields), then merging, context resolution (with overrides naming the file's
//! own contexts, clusters and users), `Config::from_kubeconfig` (server URL normalisation,
//! proxy URL, auth settings), and `Client::new`, which parses the PEM certificate authority,
//! client certificate and key and builds the transport.
//!
//! File paths named by the input (CA, certificate, key, token files) are cleared before
//! `Client::new` so the fuzzer never reads the machine's files, and `Client::new` runs only
//! when the input carries its CA (or skips verification): loading the system's trust roots
//! would cost milliseconds per input.
//!
//! Inputs are capped at 16 KiB: YAML parsing is quadratic in the depth of unclosed flow
//! collections (64 KiB of `[` takes about 10 s in serde_yaml_ng), which would otherwise eat the
//! target's time on one known slow shape.

use kclient_rest::{Client, Config, ConfigOverrides, Kubeconfig};

use super::{Target, err, mix, ok, text};
use crate::mutate::InputKind;

/// The kubeconfig target.
pub(super) fn targets() -> Vec<Target> {
    vec![Target {
        name: "kubeconfig",
        about: "Kubeconfig::from_yaml (serde_yaml_ng), merge, resolve with overrides, \
                Config::from_kubeconfig, Client::new (PEM CA, client cert and key, proxy URL, \
                impersonation headers), Debug of every config type",
        kind: InputKind::Yaml,
        max_len: 16 << 10,
        dict: &[
            "apiVersion: v1\n",
            "kind: Config\n",
            "current-context: ",
            "clusters:\n",
            "- name: ",
            "  cluster:\n",
            "    server: ",
            "https://127.0.0.1:6443",
            "http://[::1]:8080/prefix/",
            "    certificate-authority-data: ",
            "    insecure-skip-tls-verify: true\n",
            "    proxy-url: socks5://u:p@proxy:1080\n",
            "    tls-server-name: ",
            "contexts:\n",
            "  context:\n",
            "    namespace: ",
            "users:\n",
            "  user:\n",
            "    token: ",
            "    client-certificate-data: ",
            "    client-key-data: ",
            "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: x\n",
            "    as: ",
            "    as-groups: [a, b]\n",
            "    auth-provider:\n      name: gcp\n",
            "LS0tLS1CRUdJTi",
            "!!binary ",
            "&anchor ",
            "*anchor",
            "<<: *anchor\n",
            "---\n",
            "? ",
            "{",
            "[",
            "'",
            "|\n",
            ">-\n",
            "\t",
            "  ",
            "~",
            "0x1F",
            ".inf",
        ],
        run: kubeconfig,
    }]
}

fn kubeconfig(input: &[u8]) -> u64 {
    let yaml = text(input);
    let kc = match Kubeconfig::from_yaml(&yaml) {
        Ok(kc) => kc,
        Err(e) => return err("from_yaml", &e),
    };
    std::hint::black_box((format!("{kc:?}").len(), kc.is_empty()));
    let merged = Kubeconfig::merge([kc.clone(), kc.clone()]);
    std::hint::black_box(format!("{merged:?}").len());

    let mut overrides = vec![ConfigOverrides::default()];
    if let Some(c) = kc.contexts.first() {
        overrides.push(ConfigOverrides {
            context: Some(c.name.clone()),
            namespace: Some("override".into()),
            ..ConfigOverrides::default()
        });
    }
    if let (Some(cl), Some(u)) = (kc.clusters.last(), kc.auth_infos.last()) {
        overrides.push(ConfigOverrides {
            cluster: Some(cl.name.clone()),
            user: Some(u.name.clone()),
            ..ConfigOverrides::default()
        });
    }
    let mut parts = vec![ok("parsed")];
    for o in &overrides {
        std::hint::black_box((kc.context("x").is_some(), kc.cluster(""), kc.auth_info("u")));
        match kc.resolve(o) {
            Ok(r) => std::hint::black_box(format!("{r:?}").len()),
            Err(e) => {
                parts.push(err("resolve", &e));
                continue;
            }
        };
        let mut config = match Config::from_kubeconfig(&kc, o) {
            Ok(c) => c,
            Err(e) => {
                parts.push(err("from_kubeconfig", &e));
                continue;
            }
        };
        std::hint::black_box(format!("{config:?}").len());
        config.tls.ca_file = None;
        config.tls.cert_file = None;
        config.tls.key_file = None;
        config.bearer_token_file = None;
        config.qps = -1.0;
        if config.tls.ca_data.is_none() && !config.tls.insecure {
            parts.push(ok("config"));
            continue;
        }
        parts.push(match Client::new(config) {
            Ok(client) => {
                std::hint::black_box((client.base_url().len(), client.default_namespace().len()));
                ok("client")
            }
            Err(e) => err("Client::new", &e),
        });
    }
    mix(&parts)
}
