//! A complete controller on kclient-controller: for every ConfigMap labelled `mirror=true`,
//! a Secret of the same name holding its data, owned by the ConfigMap (so the garbage
//! collector deletes it with the ConfigMap, and a change to the Secret wakes the controller,
//! which puts it back).
//!
//! ```sh
//! cargo run -p kclient-controller --example configmap-mirror -- --namespace default
//! cargo run -p kclient-controller --example configmap-mirror -- --namespace default --demo
//! ```
//!
//! It uses the current kubeconfig (`KUBECONFIG`, `~/.kube/config` or in-cluster). Without
//! `--demo` it runs until Ctrl-C. With `--demo` it also creates a ConfigMap, waits for its
//! Secret, changes the ConfigMap, waits for the Secret to follow, deletes the ConfigMap and
//! exits.

use std::sync::Arc;
use std::time::Duration;

use kclient_api::core::v1::{ConfigMap, Secret};
use kclient_apimachinery::{CreateOptions, DeleteOptions, GetOptions, Object, PatchOptions};
use kclient_cache::CancellationToken;
use kclient_clientset::{Api, Patch};
use kclient_controller::{Action, ControllerBuilder, ControllerEvents, Predicate, apply_owned};
use kclient_informers::SharedInformerFactory;
use kclient_rest::Client;
use kclient_tools::{EventRecorder, EventType};

const NAME: &str = "configmap-mirror";

/// What every reconcile gets.
struct Ctx {
    client: Client,
    recorder: EventRecorder,
}

/// Makes the Secret of a `mirror=true` ConfigMap hold its data.
async fn reconcile(
    cm: Arc<ConfigMap>,
    ctx: Arc<Ctx>,
) -> Result<Action, kclient_apimachinery::Error> {
    if cm.labels().get("mirror") != Some("true") {
        return Ok(Action::done());
    }
    let data = serde_json::to_value(&cm.data).unwrap_or_default();
    let _secret: Secret = apply_owned(
        &ctx.client,
        NAME,
        &*cm,
        serde_json::json!({"metadata": {"name": cm.name()}, "stringData": data}),
    )
    .await?;
    ctx.recorder.event(
        &*cm,
        EventType::Normal,
        "Mirrored",
        "the Secret holds the ConfigMap's data",
    );
    Ok(Action::done())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let (mut namespace, mut demo) = (None, false);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--namespace" => namespace = args.next(),
            "--demo" => demo = true,
            other => {
                return Err(
                    format!("unknown argument {other}; use --namespace NS and --demo").into(),
                );
            }
        }
    }
    let client = Client::try_default()?;
    let namespace = namespace.unwrap_or_else(|| client.default_namespace().to_owned());

    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO)
        .with_namespace(namespace.clone());
    let controller = ControllerBuilder::new(NAME, &factory)
        .for_::<ConfigMap>()
        .with_predicate(Predicate::resource_version_changed())
        .owns::<Secret>()
        .workers(2)
        .reconcile(reconcile);
    factory.start();

    let events = ControllerEvents::new(client.clone(), NAME);
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        recorder: events.recorder(),
    });
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(ctx, shutdown.clone()));

    if demo {
        run_demo(&client, &namespace).await?;
    } else {
        tokio::signal::ctrl_c().await?;
    }
    shutdown.cancel();
    run.await??;
    events.shutdown().await;
    factory.shutdown().await;
    Ok(())
}

/// Creates, changes and deletes a mirrored ConfigMap, checking the Secret follows.
async fn run_demo(client: &Client, namespace: &str) -> Result<(), Box<dyn std::error::Error>> {
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), namespace);
    let secrets: Api<Secret> = Api::namespaced(client.clone(), namespace);
    let cm: ConfigMap = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "mirror-demo", "labels": {"mirror": "true"}},
        "data": {"greeting": "hello"},
    }))?;
    config_maps.create(&cm, &CreateOptions::default()).await?;
    wait_for_secret(&secrets, "hello").await?;
    println!("Secret mirror-demo created with greeting=hello");

    config_maps
        .patch(
            "mirror-demo",
            &Patch::Merge(serde_json::json!({"data": {"greeting": "bonjour"}})),
            &PatchOptions::default(),
        )
        .await?;
    wait_for_secret(&secrets, "bonjour").await?;
    println!("Secret mirror-demo updated to greeting=bonjour");

    config_maps
        .delete("mirror-demo", &DeleteOptions::default())
        .await?;
    println!("ConfigMap deleted; the garbage collector deletes the Secret");
    Ok(())
}

async fn wait_for_secret(
    secrets: &Api<Secret>,
    greeting: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    for _ in 0..300 {
        if let Ok(secret) = secrets.get("mirror-demo", &GetOptions::default()).await {
            let value = secret.data.as_ref().and_then(|d| d.get("greeting"));
            if value.is_some_and(|v| &*v.0 == greeting.as_bytes()) {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("the Secret did not get greeting={greeting} within 30s").into())
}
