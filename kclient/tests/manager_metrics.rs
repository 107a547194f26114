//! A controller manager serving `kclient::metrics`'s registry with
//! `kclient::metrics::manager_renderer` against the real kube-apiserver: a controller under
//! the manager reconciles a ConfigMap, and the manager's `/metrics` serves its reconcile count
//! and workqueue metrics as OpenMetrics text.
//!
//! Its own test binary with one test, because the metrics providers are process-wide.

mod metrics_common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::CreateOptions;
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::cache::CancellationToken;
use kclient::controller::manager::Manager;
use kclient::controller::{Action, ControllerBuilder};
use kclient::envtest::{Identity, TestEnv};
use kclient::informers::SharedInformerFactory;
use kclient::kubernetes::Api;
use kclient::metrics::Registry;

use metrics_common::{scrape, series};

const CONTROLLER: &str = "manager-metrics";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manager_serves_the_registry() {
    let mut registry = Registry::default();
    assert!(kclient::metrics::register(&mut registry));
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), ns.name());
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("cm".into()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    config_maps
        .create(&cm, &CreateOptions::default())
        .await
        .expect("creating the ConfigMap");

    let factory = SharedInformerFactory::new(client, Duration::ZERO).with_namespace(ns.name());
    let mut manager = Manager::builder(factory)
        .metrics_bind_address(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            kclient::metrics::manager_renderer(Arc::new(registry)),
        )
        .build()
        .expect("building the manager");
    let controller = ControllerBuilder::new(CONTROLLER, manager.factory())
        .for_::<ConfigMap>()
        .reconcile(|_cm: Arc<ConfigMap>, _ctx: Arc<()>| async {
            Ok::<_, kclient::Error>(Action::done())
        });
    manager
        .add_controller(controller, Arc::new(()))
        .expect("adding the controller");
    let address = manager.metrics_addr().expect("a metrics address");
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run(shutdown.clone()));

    let label = format!("controller=\"{CONTROLLER}\"");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        // `scrape` checks the OpenMetrics content type and `# EOF`.
        let samples = scrape(address).await;
        let reconciled = series(
            &samples,
            "controller_runtime_reconcile_total",
            &[&label, "result=\"success\""],
        );
        if reconciled.iter().any(|(_, v)| *v >= 1.0) {
            let adds = series(
                &samples,
                "workqueue_adds_total",
                &[&format!("name=\"{CONTROLLER}\"")],
            );
            assert!(
                adds.iter().any(|(_, v)| *v >= 1.0),
                "the controller's queue metrics: {adds:?}"
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no successful reconcile counted on the manager's /metrics within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    shutdown.cancel();
    run.await.unwrap().expect("the manager stops cleanly");
}
