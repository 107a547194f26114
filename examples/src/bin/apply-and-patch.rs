//! The seed's `kubectl apply` story, step by step: a Deployment is created from a
//! configuration "file" with the `last-applied-configuration` annotation, another writer
//! changes the live object, and a new version of the file is applied as a strategic merge
//! PATCH computed with the two-way merge patch against the last-applied configuration — so the
//! other writer's change survives, which a replace (PUT) would have wiped out. Then the same
//! is done the modern way, with server-side apply and a field manager, including the conflict
//! it reports when another manager owns a field. Last, the typed way, with the generated apply
//! configurations (client-go's `applyconfigurations`): a scaler applies only `spec.replicas`,
//! and `release-bot` extracts what it owns, changes the image and applies it back.
//!
//! Works in namespace `apply-demo` (created, and deleted at the end).
//!
//! ```sh
//! KUBECONFIG=... cargo run -p kclient-examples --bin apply-and-patch
//! ```

use std::convert::Infallible;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use kclient::api::applyconfigurations::apps::v1::{
    DeploymentSpecApplyConfiguration, deployment, extract_deployment,
};
use kclient::api::apps::v1::Deployment;
use kclient::api::core::v1::Namespace;
use kclient::apimachinery::meta::PatchMeta;
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::apimachinery::{
    CreateOptions, DeleteOptions, GetOptions, Object, PatchOptions, WatchEvent,
    create_two_way_merge_patch,
};
use kclient::cache::Indexer;
use kclient::informers::new_list_watch_from_client;
use kclient::kubernetes::{Api, Clientset, Patch};
use kclient::rest::{Client, Config};
use kclient::tools::watch::{condition, precondition, until_with_sync};
use kclient_examples::outln;
use kclient_examples::{error_chain, wait_out_namespace_deletion};
use serde_json::{Value, json};

const NAMESPACE: &str = "apply-demo";
const NAME: &str = "nginx-deployment";
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// The field manager kubectl's client-side apply records.
const KUBECTL: &str = "kubectl-client-side-apply";

type BoxError = Box<dyn std::error::Error>;

#[tokio::main]
async fn main() -> ExitCode {
    match run().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("apply-and-patch: {}", error_chain(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

/// The seed's `nginx-deployment.yaml`, with `image` as the one line that changes.
fn config_file(image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": {"app": "nginx"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {"containers": [
                    {"name": "nginx", "image": image, "ports": [{"containerPort": 80}]}
                ]}
            }
        }
    })
}

/// The configuration as `kubectl apply` sends it: with itself in the last-applied annotation.
fn with_last_applied(config: &Value) -> Value {
    let mut annotated = config.clone();
    annotated["metadata"]["annotations"] = json!({LAST_APPLIED: config.to_string()});
    annotated
}

async fn run() -> Result<(), BoxError> {
    let client = Client::new(Config::infer()?)?;
    let clientset = Clientset::new(client);
    prepare_namespace(&clientset).await?;
    let deployments = clientset.apps_v1().deployments(NAMESPACE);

    outln!("1. `kubectl apply -f nginx-deployment.yaml` (image nginx:1.7.9): create");
    let v1 = config_file("nginx:1.7.9");
    let created: Deployment = serde_json::from_value(with_last_applied(&v1))?;
    deployments
        .create(&created, &CreateOptions::default().field_manager(KUBECTL))
        .await?;
    show(&deployments).await?;

    outln!("2. Another writer labels the live object (a merge PATCH of its own)");
    deployments
        .patch(
            NAME,
            &Patch::Merge(json!({"metadata": {"labels": {"team": "web"}}})),
            &PatchOptions::default().field_manager("label-bot"),
        )
        .await?;
    show(&deployments).await?;

    outln!("3. Edit the file (image nginx:1.21.6) and apply again: PATCH, not replace");
    let live = deployments.get(NAME, &GetOptions::default()).await?;
    let last_applied: Value = match live.annotations().get(LAST_APPLIED) {
        Some(text) => serde_json::from_str(text)?,
        None => return Err("the live object has no last-applied configuration".into()),
    };
    let v2 = config_file("nginx:1.21.6");
    // client-go's strategicpatch.CreateTwoWayMergePatch(original, modified, Deployment{}):
    // lists of containers merge by their `name`, as the type's patch metadata says.
    let patch = create_two_way_merge_patch(
        &last_applied,
        &with_last_applied(&v2),
        Deployment::patch_fields(),
    )?;
    let mut shown = patch.clone();
    if let Some(annotations) = shown["metadata"]["annotations"].as_object_mut() {
        annotations.insert(LAST_APPLIED.into(), json!("<the new configuration>"));
    }
    outln!("   the strategic merge patch: {shown}");
    deployments
        .patch(
            NAME,
            &Patch::StrategicMerge(patch),
            &PatchOptions::default().field_manager(KUBECTL),
        )
        .await?;
    show(&deployments).await?;
    outln!("   the other writer's label survived: only the difference was sent");

    outln!("4. Server-side apply with field manager `release-bot` (image nginx:1.27)");
    let v3 = config_file("nginx:1.27");
    match deployments
        .patch(
            NAME,
            &Patch::Apply(v3.clone()),
            &PatchOptions::apply("release-bot"),
        )
        .await
    {
        Err(e) if e.is_conflict() => {
            outln!("   refused with a Conflict, as expected: {e}");
        }
        Err(e) => return Err(e.into()),
        Ok(_) => outln!("   applied without conflict"),
    }
    outln!("   applying again with force: release-bot takes ownership of the image field");
    deployments
        .patch(
            NAME,
            &Patch::Apply(v3),
            &PatchOptions::apply("release-bot").force(true),
        )
        .await?;
    show(&deployments).await?;

    outln!("5. Typed apply configurations: `autoscaler` applies only spec.replicas = 5");
    // Only what is set is sent (a whole typed Deployment would also send, and claim, its
    // selector and template): {"apiVersion":"apps/v1","kind":"Deployment","metadata":{...},
    // "spec":{"replicas":5}}.
    let scale = deployment(NAME, NAMESPACE)
        .with_spec(DeploymentSpecApplyConfiguration::default().with_replicas(5));
    outln!("   the body: {}", serde_json::to_string(&scale)?);
    deployments
        .apply(&scale, &PatchOptions::apply("autoscaler").force(true))
        .await?;
    show(&deployments).await?;

    outln!("6. `release-bot` extracts what it owns, changes the image to nginx:1.28, applies it");
    let live = deployments.get(NAME, &GetOptions::default()).await?;
    // client-go's appsv1.ExtractDeployment: exactly release-bot's fields (no longer
    // spec.replicas, which the autoscaler took), ready to change and apply back.
    let mut owned = extract_deployment(&live, "release-bot")?;
    let container = owned
        .spec
        .as_mut()
        .and_then(|spec| spec.template.as_mut())
        .and_then(|template| template.spec.as_mut())
        .and_then(|pod| pod.containers.as_mut())
        .and_then(|containers| containers.first_mut())
        .ok_or("release-bot owns no container")?;
    container.image = Some("nginx:1.28".into());
    deployments
        .apply(&owned, &PatchOptions::apply("release-bot"))
        .await?;
    show(&deployments).await?;
    outln!("   the autoscaler's replicas stayed: release-bot sent only what it owns");

    clientset
        .core_v1()
        .namespaces()
        .delete(NAMESPACE, &DeleteOptions::default())
        .await?;
    outln!("deleted namespace {NAMESPACE}");
    Ok(())
}

/// Prints the live Deployment's image, labels and field managers.
async fn show(deployments: &Api<Deployment>) -> Result<(), BoxError> {
    let live = serde_json::to_value(deployments.get(NAME, &GetOptions::default()).await?)?;
    let image = live["spec"]["template"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap_or("?");
    let mut labels: Vec<String> = live["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    labels.sort();
    let managers: Vec<String> = live["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            format!(
                "{} ({})",
                m["manager"].as_str().unwrap_or("?"),
                m["operation"].as_str().unwrap_or("?")
            )
        })
        .collect();
    outln!(
        "   live: image {image}; labels {}; generation {}; field managers: {}",
        labels.join(","),
        live["metadata"]["generation"],
        managers.join(", ")
    );
    Ok(())
}

/// Creates the namespace, first waiting out a previous run's deletion, and removes a
/// Deployment left by an interrupted run.
async fn prepare_namespace(clientset: &Clientset) -> Result<(), BoxError> {
    wait_out_namespace_deletion(clientset, NAMESPACE).await?;
    let namespaces = clientset.core_v1().namespaces();
    match namespaces.get(NAMESPACE, &GetOptions::default()).await {
        Ok(_) => {}
        Err(e) if e.is_not_found() => {
            let ns = Namespace {
                metadata: ObjectMeta {
                    name: Some(NAMESPACE.into()),
                    ..ObjectMeta::default()
                },
                ..Namespace::default()
            };
            match namespaces.create(&ns, &CreateOptions::default()).await {
                Ok(_) => {}
                Err(e) if e.is_already_exists() => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(e) => return Err(e.into()),
    }
    let deployments = clientset.apps_v1().deployments(NAMESPACE);
    match deployments.delete(NAME, &DeleteOptions::default()).await {
        Ok(()) => {
            // Wait until it is gone, with a watch of that one Deployment.
            let lw = new_list_watch_from_client::<Deployment>(
                clientset.rest_client().clone(),
                Some(NAMESPACE),
                &format!("metadata.name={NAME}"),
            );
            until_with_sync(
                Duration::from_secs(60),
                Arc::new(lw),
                Some(precondition(|store: &Indexer<Deployment>| {
                    Ok::<_, Infallible>(store.is_empty())
                })),
                vec![condition(|event: &WatchEvent<Arc<Deployment>>| {
                    Ok::<_, Infallible>(matches!(event, WatchEvent::Deleted(_)))
                })],
            )
            .await?;
        }
        Err(e) if e.is_not_found() => {}
        Err(e) => return Err(e.into()),
    }
    Ok(())
}
