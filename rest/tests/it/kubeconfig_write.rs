//! Kubeconfig writing (`modify_config`) against kubectl: each case makes the same edit with
//! `kubectl config ...` on one copy of a multi-file KUBECONFIG and with kclient on another, then
//! compares every file: which exist, their permission bits and their YAML values.
//!
//! kubectl re-encodes each file it writes from its typed structs, so it adds
//! `current-context: ""`, `preferences: {}` and `null` lists to every file it touches, and drops
//! fields it does not know; kclient only edits the keys that changed. The comparison therefore
//! ignores top-level keys whose value is empty (`null`, `""`, `{}`, `[]`) and the order of the
//! entries in a list (kubectl sorts them by name, kclient keeps the file's order); the fixtures of the
//! comparison hold only fields kubectl knows (extensions included), and a separate test checks
//! that kclient keeps unknown fields and leaves the rest of a file as it was.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use kclient_rest::{AuthInfo, Cluster, Context, Kubeconfig, PathOptions, Secret, modify_config};
use serde_yaml_ng::Value;

const A: &str = r#"apiVersion: v1
kind: Config
current-context: ctx-a
clusters:
- name: shared
  cluster:
    server: https://a.example:6443
    certificate-authority: ca/a.crt
    extensions:
    - name: ext1
      extension: {foo: bar}
contexts:
- name: ctx-a
  context: {cluster: shared, user: alice, namespace: ns-a}
- name: ctx-b
  context: {cluster: only-b, user: bob}
users:
- name: alice
  user:
    token: alice-token
    extensions:
    - name: ext2
      extension: {level: 1}
"#;

const B: &str = r#"clusters:
- name: only-b
  cluster:
    server: https://only-b.example
users:
- name: bob
  user: {token: bob-token}
- name: alice
  user: {token: alice-from-b}
"#;

/// `A` with colours on in its preferences.
const A_WITH_COLORS: &str = r#"apiVersion: v1
kind: Config
current-context: ctx-a
preferences:
  colors: true
clusters:
- name: shared
  cluster: {server: https://a.example:6443}
contexts:
- name: ctx-a
  context: {cluster: shared, user: alice}
users:
- name: alice
  user: {token: alice-token}
"#;

/// One edit made both ways.
struct Case {
    name: &'static str,
    /// Files written before the edit: name, content, mode.
    files: &'static [(&'static str, &'static str, u32)],
    /// The KUBECONFIG list (file names in the case's folder; they need not exist).
    kubeconfig: &'static [&'static str],
    /// kubectl's arguments; `{dir}` is the case's folder.
    kubectl: &'static [&'static str],
    /// The same edit through kclient, given the starting config and the folder.
    edit: fn(&mut Kubeconfig, &Path),
}

const CASES: &[Case] = &[
    Case {
        name: "use-context writes the first existing file, not the one that set it",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["missing.yaml", "b.yaml", "a.yaml"],
        kubectl: &["config", "use-context", "ctx-b"],
        edit: |k, _| k.current_context = Some("ctx-b".into()),
    },
    Case {
        name: "set-context --namespace writes the context's own file",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["b.yaml", "a.yaml"],
        kubectl: &["config", "set-context", "ctx-a", "--namespace=new-ns"],
        edit: |k, _| k.context_mut("ctx-a").unwrap().namespace = Some("new-ns".into()),
    },
    Case {
        name: "set-context --current",
        files: &[("a.yaml", A, 0o600)],
        kubeconfig: &["a.yaml"],
        kubectl: &["config", "set-context", "--current", "--namespace=cur"],
        edit: |k, _| k.context_mut("ctx-a").unwrap().namespace = Some("cur".into()),
    },
    Case {
        name: "a new context goes to the default file",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["missing.yaml", "b.yaml", "a.yaml"],
        kubectl: &[
            "config",
            "set-context",
            "newctx",
            "--cluster=only-b",
            "--user=bob",
            "--namespace=n1",
        ],
        edit: |k, _| {
            let mut c = Context::default();
            c.cluster = "only-b".into();
            c.user = "bob".into();
            c.namespace = Some("n1".into());
            k.set_context("newctx", c);
        },
    },
    Case {
        name: "set-credentials of an existing user edits the first file's entry only",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["a.yaml", "b.yaml"],
        kubectl: &["config", "set-credentials", "alice", "--token=new-token"],
        edit: |k, _| k.auth_info_mut("alice").unwrap().token = Some(Secret::from("new-token")),
    },
    Case {
        name: "set-credentials of a new user with a certificate path inside the folder",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["b.yaml", "a.yaml"],
        kubectl: &[
            "config",
            "set-credentials",
            "carol",
            "--client-certificate={dir}/certs/carol.crt",
            "--client-key=/elsewhere/carol.key",
            "--username=carol",
            "--password=pw",
        ],
        edit: |k, dir| {
            let mut u = AuthInfo::default();
            u.client_certificate = Some(dir.join("certs/carol.crt"));
            u.client_key = Some(PathBuf::from("/elsewhere/carol.key"));
            u.username = Some("carol".into());
            u.password = Some(Secret::from("pw"));
            k.set_auth_info("carol", u);
        },
    },
    Case {
        name: "set-cluster keeps the cluster's extensions",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["b.yaml", "a.yaml"],
        kubectl: &[
            "config",
            "set-cluster",
            "shared",
            "--server=https://z.example:1",
            "--tls-server-name=z",
        ],
        edit: |k, _| {
            let c = k.cluster_mut("shared").unwrap();
            c.server = "https://z.example:1".into();
            c.tls_server_name = Some("z".into());
        },
    },
    Case {
        name: "a new cluster when no listed file exists goes to the last one",
        files: &[],
        kubeconfig: &["one.yaml", "two.yaml"],
        kubectl: &[
            "config",
            "set-cluster",
            "fresh",
            "--server=https://fresh.example",
            "--insecure-skip-tls-verify=true",
        ],
        edit: |k, _| {
            let mut c = Cluster::default();
            c.server = "https://fresh.example".into();
            c.insecure_skip_tls_verify = true;
            k.set_cluster("fresh", c);
        },
    },
    Case {
        name: "delete-context removes it from its file",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["b.yaml", "a.yaml"],
        kubectl: &["config", "delete-context", "ctx-b"],
        edit: |k, _| assert!(k.remove_context("ctx-b")),
    },
    Case {
        name: "preferences go to the first file whose own preferences differ",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["b.yaml", "a.yaml"],
        kubectl: &["config", "set", "preferences.colors", "true"],
        edit: |k, _| k.preferences.colors = true,
    },
    Case {
        name: "preferences set in the second file are cleared in the first that differs",
        files: &[("a.yaml", A_WITH_COLORS, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["b.yaml", "a.yaml"],
        kubectl: &["config", "set", "preferences.colors", "false"],
        edit: |k, _| {
            assert!(k.preferences.colors, "a.yaml turns colours on");
            k.preferences.colors = false
        },
    },
    Case {
        name: "unset current-context clears the first file that sets one",
        files: &[("a.yaml", A, 0o640), ("b.yaml", B, 0o644)],
        kubeconfig: &["b.yaml", "a.yaml"],
        kubectl: &["config", "unset", "current-context"],
        edit: |k, _| k.current_context = None,
    },
];

fn kubectl() -> String {
    let path = std::env::var("KCLIENT_KUBECTL").unwrap_or_else(|_| "kubectl".into());
    match Command::new(&path).arg("version").arg("--client").output() {
        Ok(out) if out.status.success() => path,
        other => panic!(
            "these tests compare with kubectl, which could not run ({path}: {other:?}); install it or set KCLIENT_KUBECTL"
        ),
    }
}

fn setup(dir: &Path, case: &Case) -> Vec<PathBuf> {
    for (name, text, mode) in case.files {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode)).unwrap();
    }
    case.kubeconfig.iter().map(|n| dir.join(n)).collect()
}

/// The file's YAML value with `dir` replaced by `DIR`, empty top-level values dropped and the
/// entry lists sorted by name (kubectl keeps entries in maps and writes them sorted; kclient
/// keeps the file's order).
fn normalized(path: &Path, dir: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let text = text.replace(&dir.display().to_string(), "DIR");
    let mut value: Value = serde_yaml_ng::from_str(&text).unwrap();
    if let Value::Mapping(m) = &mut value {
        m.retain(|_, v| match v {
            Value::Null => false,
            Value::String(s) => !s.is_empty(),
            Value::Mapping(x) => !x.is_empty(),
            Value::Sequence(x) => !x.is_empty(),
            _ => true,
        });
        for list in ["clusters", "contexts", "users"] {
            if let Some(Value::Sequence(items)) = m.get_mut(list) {
                items.sort_by_key(|i| i.get("name").and_then(Value::as_str).map(str::to_string));
            }
        }
    }
    value
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

#[test]
fn modify_config_writes_what_kubectl_writes() {
    let kubectl = kubectl();
    for case in CASES {
        let kdir = tempfile::tempdir().unwrap();
        let odir = tempfile::tempdir().unwrap();
        let kfiles = setup(kdir.path(), case);
        let ofiles = setup(odir.path(), case);

        let args: Vec<String> = case
            .kubectl
            .iter()
            .map(|a| a.replace("{dir}", &kdir.path().display().to_string()))
            .collect();
        let out = Command::new(&kubectl)
            .args(&args)
            .env("KUBECONFIG", std::env::join_paths(&kfiles).unwrap())
            .env("HOME", kdir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: kubectl {args:?}: {}",
            case.name,
            String::from_utf8_lossy(&out.stderr)
        );

        let options = PathOptions::with_env_var_files(&ofiles);
        let mut config = options.starting_config().unwrap();
        (case.edit)(&mut config, odir.path());
        modify_config(&options, &config, true)
            .unwrap_or_else(|e| panic!("{}: modify_config: {e}", case.name));

        let names = files_in(kdir.path());
        assert_eq!(names, files_in(odir.path()), "{}: files", case.name);
        for name in &names {
            let k = kdir.path().join(name);
            let o = odir.path().join(name);
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&k), mode(&o), "{}: {name}: mode", case.name);
            assert_eq!(
                normalized(&o, odir.path()),
                normalized(&k, kdir.path()),
                "{}: {name}: content (kclient left, kubectl right)\nkclient:\n{}\nkubectl:\n{}",
                case.name,
                std::fs::read_to_string(&o).unwrap(),
                std::fs::read_to_string(&k).unwrap(),
            );
        }
        // kclient agrees with kubectl on the result, read back through the loader.
        let reread = options.starting_config().unwrap();
        assert_eq!(
            reread.current_context.unwrap_or_default(),
            config.current_context.clone().unwrap_or_default(),
            "{}",
            case.name
        );
    }
}

const UNKNOWN: &str = r#"# a comment (not kept)
kind: Config
apiVersion: v1
x-top-level: {keep: me}
current-context: ctx-a
clusters:
- name: shared
  x-entry-field: 1
  cluster:
    server: https://a.example:6443
    x-cluster-field: [1, 2]
    extensions:
    - name: ext1
      extension: {foo: bar}
contexts:
- name: ctx-a
  context: {user: alice, cluster: shared, x-ctx: y}
users:
- name: alice
  user:
    auth-provider:
      name: oidc
      config: {client-id: abc, refresh-token: secret-refresh}
    exec:
      command: ./bin/plugin
      apiVersion: client.authentication.k8s.io/v1
      x-exec: z
"#;

#[test]
fn unknown_fields_key_order_and_untouched_files_are_kept() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.yaml");
    let other = dir.path().join("other.yaml");
    std::fs::write(&main, UNKNOWN).unwrap();
    std::fs::write(&other, B).unwrap();
    std::fs::set_permissions(&main, std::fs::Permissions::from_mode(0o604)).unwrap();
    let options = PathOptions::with_env_var_files([&main, &other]);
    let mut config = options.starting_config().unwrap();
    config.context_mut("ctx-a").unwrap().namespace = Some("ns".into());
    config.cluster_mut("shared").unwrap().server = "https://b.example".into();
    config
        .auth_info_mut("alice")
        .unwrap()
        .exec
        .as_mut()
        .unwrap()
        .args = vec!["--flag".into()];
    modify_config(&options, &config, true).unwrap();

    let text = std::fs::read_to_string(&main).unwrap();
    let want = r#"kind: Config
apiVersion: v1
x-top-level:
  keep: me
current-context: ctx-a
clusters:
- name: shared
  x-entry-field: 1
  cluster:
    server: https://b.example
    x-cluster-field:
    - 1
    - 2
    extensions:
    - name: ext1
      extension:
        foo: bar
contexts:
- name: ctx-a
  context:
    user: alice
    cluster: shared
    x-ctx: y
    namespace: ns
users:
- name: alice
  user:
    auth-provider:
      name: oidc
      config:
        client-id: abc
        refresh-token: secret-refresh
    exec:
      command: ./bin/plugin
      apiVersion: client.authentication.k8s.io/v1
      x-exec: z
      args:
      - --flag
"#;
    assert_eq!(text, want);
    assert_eq!(
        std::fs::metadata(&main).unwrap().permissions().mode() & 0o777,
        0o604
    );
    // The other file had nothing to change and is byte for byte as it was.
    assert_eq!(std::fs::read_to_string(&other).unwrap(), B);
    // No temporary or lock file is left behind.
    assert_eq!(files_in(dir.path()), ["main.yaml", "other.yaml"]);
    let hidden: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')
        })
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    // Nothing to change: no write at all.
    let before = std::fs::metadata(&main).unwrap().modified().unwrap();
    let same = options.starting_config().unwrap();
    modify_config(&options, &same, true).unwrap();
    assert_eq!(
        std::fs::metadata(&main).unwrap().modified().unwrap(),
        before
    );
}

#[test]
fn a_symlinked_kubeconfig_is_written_through_and_a_held_lock_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.yaml");
    let link = dir.path().join("config");
    std::fs::write(&real, A).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let options = PathOptions::explicit(&link);
    let mut config = options.starting_config().unwrap();
    config.current_context = Some("ctx-b".into());
    modify_config(&options, &config, true).unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let written = Kubeconfig::from_yaml(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(written.current_context.as_deref(), Some("ctx-b"));

    // kubectl's lock convention: while `<file>.lock` exists, nobody else writes.
    let lock = dir.path().join("config.lock");
    std::fs::write(&lock, "").unwrap();
    config.current_context = Some("ctx-a".into());
    let err = modify_config(&options, &config, true).unwrap_err();
    assert!(err.is_io(), "{err:?}");
    assert!(err.to_string().contains("config.lock"), "{err}");
    assert!(lock.exists(), "someone else's lock is not removed");
}

#[test]
fn secrets_never_appear_in_write_errors() {
    let dir = tempfile::tempdir().unwrap();
    // A folder where the file should be: writing it fails.
    let blocked = dir.path().join("blocked");
    std::fs::create_dir(&blocked).unwrap();
    let options = PathOptions::explicit(&blocked);
    let mut config = Kubeconfig::default();
    let mut user = AuthInfo::default();
    user.token = Some(Secret::from("TOKEN-SECRET"));
    user.password = Some(Secret::from("PW-SECRET"));
    config.set_auth_info("u", user);
    let err = modify_config(&options, &config, true).unwrap_err();
    let text = format!("{err} {err:?}");
    assert!(text.contains("blocked"), "{text}");
    assert!(!text.contains("SECRET"), "{text}");
    assert!(!format!("{options:?}").contains("SECRET"));
}

#[test]
fn build_config_from_flags_follows_client_go() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.yaml");
    std::fs::write(
        &path,
        A.replace("    certificate-authority: ca/a.crt\n", ""),
    )
    .unwrap();
    // The kubeconfig alone: its current context.
    let c = kclient_rest::Config::build_config_from_flags("", &path).unwrap();
    assert_eq!(c.host, "https://a.example:6443");
    assert_eq!(c.namespace, "ns-a");
    assert_eq!(c.bearer_token.as_ref().unwrap().expose(), "alice-token");
    // A master URL replaces the server and keeps the credentials.
    let c = kclient_rest::Config::build_config_from_flags("https://m.example:8443", &path).unwrap();
    assert_eq!(c.host, "https://m.example:8443");
    assert_eq!(c.bearer_token.as_ref().unwrap().expose(), "alice-token");
    // A plain-http master gets no credentials (client-go reads them only over TLS).
    let c = kclient_rest::Config::build_config_from_flags("http://m.example:8080", &path).unwrap();
    assert_eq!(c.host, "http://m.example:8080");
    assert!(c.bearer_token.is_none());
    // A master URL alone: that server, no credentials.
    let c = kclient_rest::Config::build_config_from_flags("https://m.example", "").unwrap();
    assert_eq!(c.host, "https://m.example");
    assert!(c.bearer_token.is_none());
    assert_eq!(c.namespace, "default");
    // A current context whose cluster is not in the file: the master URL is that cluster, and
    // the context's user and namespace stay (client-go overrides the empty cluster it merges).
    let elsewhere = dir.path().join("elsewhere.yaml");
    std::fs::write(
        &elsewhere,
        A.replace(
            "{cluster: shared, user: alice",
            "{cluster: gone, user: alice",
        ),
    )
    .unwrap();
    let c = kclient_rest::Config::build_config_from_flags("https://m.example:8443", &elsewhere)
        .unwrap();
    assert_eq!(c.host, "https://m.example:8443");
    assert_eq!(c.namespace, "ns-a");
    assert_eq!(c.bearer_token.as_ref().unwrap().expose(), "alice-token");
    // A kubeconfig path that does not exist is an error naming it.
    let missing = dir.path().join("nope.yaml");
    let err = kclient_rest::Config::build_config_from_flags("", &missing).unwrap_err();
    assert!(err.to_string().contains("nope.yaml"), "{err}");
}
