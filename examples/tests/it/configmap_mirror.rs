//! The `configmap-mirror` binary against the real apiserver, run as a user runs it: a child
//! process with a kubeconfig, watching one source namespace and writing into a target one,
//! stopped with SIGTERM.

use std::io::{BufRead as _, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::apimachinery::{CreateOptions, DeleteOptions, GetOptions, Object, PatchOptions};
use kclient::envtest::{Identity, TestEnv};
use kclient::kubernetes::{Api, Patch};
use serde_json::json;

use crate::eventually;

const TIMEOUT: Duration = Duration::from_secs(30);

/// A running `configmap-mirror`; killed if the test fails before stopping it.
struct Mirror {
    child: Child,
    /// Its stderr, line by line.
    lines: mpsc::Receiver<String>,
}

impl Mirror {
    /// Starts the binary and waits until it says its cache synced.
    fn start(env: &TestEnv, source: &str, target: &str) -> Mirror {
        let child = Command::new(env!("CARGO_BIN_EXE_configmap-mirror"))
            .args([target, source])
            .env("KUBECONFIG", env.kubeconfig_path(Identity::Admin))
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting configmap-mirror");
        let (lines_tx, lines) = mpsc::channel();
        // Owned by `Mirror` from here on, so a failure below kills and reaps it.
        let mut mirror = Mirror { child, lines };
        let stderr = mirror.child.stderr.take().expect("stderr is piped");
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[mirror] {line}");
                let _ = lines_tx.send(line);
            }
        });
        mirror.wait_for_line("synced");
        mirror
    }

    /// Waits until the program writes a line containing `text` to stderr.
    fn wait_for_line(&self, text: &str) -> String {
        loop {
            let line = self
                .lines
                .recv_timeout(TIMEOUT)
                .unwrap_or_else(|_| panic!("configmap-mirror did not say {text:?} within 30 s"));
            if line.contains(text) {
                return line;
            }
        }
    }

    /// Sends SIGTERM and checks that the program shuts down cleanly.
    fn stop(mut self) {
        let pid = self.child.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(killed.expect("running kill").success());
        let status = self.child.wait().expect("waiting for configmap-mirror");
        assert!(status.success(), "configmap-mirror exited with {status}");
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn config_map(name: &str, mirrored: bool, value: &str) -> ConfigMap {
    let labels = mirrored.then(|| [("mirror".into(), "true".into())].into());
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels,
            ..ObjectMeta::default()
        },
        data: Some([("value".into(), value.into())].into()),
        ..ConfigMap::default()
    }
}

/// The copy's `value`, or `None` while there is no copy.
async fn copy_value(copies: &Api<ConfigMap>, name: &str) -> Option<String> {
    match copies.get(name, &GetOptions::default()).await {
        Ok(cm) => Some(
            cm.data
                .and_then(|d| d.get("value").map(|v| v.to_string()))
                .unwrap_or_default(),
        ),
        Err(e) if e.is_not_found() => None,
        Err(e) => panic!("reading the copy {name}: {e}"),
    }
}

async fn wait_for_copy(copies: &Api<ConfigMap>, name: &str, value: &str) {
    eventually(&format!("copy {name} = {value:?}"), TIMEOUT, || async {
        (copy_value(copies, name).await.as_deref() == Some(value)).then_some(())
    })
    .await;
}

async fn wait_for_no_copy(copies: &Api<ConfigMap>, name: &str) {
    eventually(&format!("copy {name} to be deleted"), TIMEOUT, || async {
        copy_value(copies, name).await.is_none().then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mirrors_labelled_config_maps_and_deletes_copies_whose_source_goes() {
    let env = TestEnv::connect().await;
    let (source_ns, target_ns) = (env.namespace().await, env.namespace().await);
    let (source, target) = (source_ns.name().to_owned(), target_ns.name().to_owned());
    let client = env.client(Identity::Admin);
    let sources: Api<ConfigMap> = Api::namespaced(client.clone(), &source);
    let copies: Api<ConfigMap> = Api::namespaced(client, &target);
    let create = CreateOptions::default();
    let copy_of = |name: &str| format!("{source}.{name}");

    // A labelled ConfigMap that exists before the mirror starts is copied from the initial list.
    sources
        .create(&config_map("early", true, "1"), &create)
        .await
        .unwrap();
    let mirror = Mirror::start(&env, &source, &target);
    wait_for_copy(&copies, &copy_of("early"), "1").await;
    let copy = copies
        .get(&copy_of("early"), &GetOptions::default())
        .await
        .unwrap();
    assert_eq!(copy.labels().get("kclient.io/mirror-copy"), Some("true"));
    assert_eq!(
        copy.annotations().get("kclient.io/mirrored-from"),
        Some(&*format!("{source}/early"))
    );

    // New labelled ConfigMaps are copied; unlabelled ones are not.
    sources
        .create(&config_map("plain", false, "x"), &create)
        .await
        .unwrap();
    sources
        .create(&config_map("web", true, "a"), &create)
        .await
        .unwrap();
    wait_for_copy(&copies, &copy_of("web"), "a").await;
    assert_eq!(copy_value(&copies, &copy_of("plain")).await, None);

    // A change of the source reaches the copy.
    let change = Patch::Merge(json!({"data": {"value": "b"}}));
    sources
        .patch("web", &change, &PatchOptions::default())
        .await
        .unwrap();
    wait_for_copy(&copies, &copy_of("web"), "b").await;

    // A copy edited by hand is put back when its source next changes.
    let drift = Patch::Merge(json!({"data": {"value": "edited"}}));
    copies
        .patch(&copy_of("web"), &drift, &PatchOptions::default())
        .await
        .unwrap();
    let change = Patch::Merge(json!({"data": {"value": "c"}}));
    sources
        .patch("web", &change, &PatchOptions::default())
        .await
        .unwrap();
    wait_for_copy(&copies, &copy_of("web"), "c").await;

    // Losing the label, or being deleted, deletes the copy.
    let unlabel = Patch::Merge(json!({"metadata": {"labels": {"mirror": null}}}));
    sources
        .patch("early", &unlabel, &PatchOptions::default())
        .await
        .unwrap();
    wait_for_no_copy(&copies, &copy_of("early")).await;
    sources
        .delete("web", &DeleteOptions::default())
        .await
        .unwrap();
    wait_for_no_copy(&copies, &copy_of("web")).await;

    // A source deleted while no mirror runs: the next mirror finds its copy and deletes it.
    sources
        .create(&config_map("late", true, "z"), &create)
        .await
        .unwrap();
    wait_for_copy(&copies, &copy_of("late"), "z").await;
    mirror.stop();
    sources
        .delete("late", &DeleteOptions::default())
        .await
        .unwrap();
    let mirror = Mirror::start(&env, &source, &target);
    wait_for_no_copy(&copies, &copy_of("late")).await;

    // A ConfigMap of a copy's name that another writer owns is not taken over.
    let foreign = config_map(&copy_of("taken"), false, "theirs");
    copies.create(&foreign, &create).await.unwrap();
    sources
        .create(&config_map("taken", true, "ours"), &create)
        .await
        .unwrap();
    sources
        .create(&config_map("after", true, "ok"), &create)
        .await
        .unwrap();
    wait_for_copy(&copies, &copy_of("after"), "ok").await;
    assert_eq!(
        copy_value(&copies, &copy_of("taken")).await.as_deref(),
        Some("theirs")
    );
    // Nor when it has none of the source's fields (server-side apply would merge into it
    // without a conflict).
    let mut other = config_map(&copy_of("other-keys"), false, "");
    other.data = Some([("theirs".into(), "x".into())].into());
    copies.create(&other, &create).await.unwrap();
    sources
        .create(&config_map("other-keys", true, "ours"), &create)
        .await
        .unwrap();
    let said = mirror.wait_for_line("other-keys is not its copy; left alone");
    assert!(said.contains(&copy_of("other-keys")), "{said}");
    let other = copies
        .get(&copy_of("other-keys"), &GetOptions::default())
        .await
        .unwrap();
    assert!(other.annotations().is_empty(), "{other:?}");
    assert_eq!(other.data.map(|d| d.len()), Some(1));
    // Nor deleted when the source of that name goes: it is not a copy.
    sources
        .delete("taken", &DeleteOptions::default())
        .await
        .unwrap();
    let said = mirror.wait_for_line("gone, but");
    assert!(said.contains(&copy_of("taken")), "{said}");
    assert_eq!(
        copy_value(&copies, &copy_of("taken")).await.as_deref(),
        Some("theirs")
    );
    mirror.stop();
}
