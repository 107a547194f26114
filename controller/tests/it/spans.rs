//! Each reconcile runs in a `reconcile` span carrying the controller's name and the key.

use std::sync::{Arc, OnceLock};

use kclient_api::core::v1::ConfigMap;
use kclient_cache::CancellationToken;
use kclient_controller::{Action, ControllerBuilder};
use parking_lot::Mutex;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

use crate::{Setup, eventually};

/// The `(controller, key)` fields of every `reconcile` span opened in this test binary.
fn spans() -> &'static Mutex<Vec<(String, String)>> {
    static SPANS: OnceLock<Mutex<Vec<(String, String)>>> = OnceLock::new();
    SPANS.get_or_init(Mutex::default)
}

struct RecordReconcileSpans;

#[derive(Default)]
struct Fields {
    controller: String,
    key: String,
}

impl Visit for Fields {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        match field.name() {
            "controller" => self.controller = format!("{value:?}"),
            "key" => self.key = format!("{value:?}"),
            _ => {}
        }
    }
}

impl<S: tracing::Subscriber> Layer<S> for RecordReconcileSpans {
    fn on_new_span(&self, attrs: &Attributes<'_>, _id: &Id, _ctx: Context<'_, S>) {
        if attrs.metadata().name() == "reconcile" {
            let mut fields = Fields::default();
            attrs.record(&mut fields);
            spans().lock().push((fields.controller, fields.key));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_reconcile_runs_in_a_span_with_the_controller_and_key() {
    // Workers run on the runtime's threads, so the subscriber is the process-wide one.
    let _ = tracing::subscriber::set_global_default(
        tracing_subscriber::registry().with(RecordReconcileSpans),
    );
    let s = Setup::new().await;
    s.create_config_map("traced", &[]).await;
    let controller = ControllerBuilder::new("span-test", &s.factory)
        .for_::<ConfigMap>()
        .reconcile(|_cm: Arc<ConfigMap>, _ctx: Arc<()>| async { Ok::<_, String>(Action::done()) });
    s.factory.start();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(controller.run(Arc::new(()), shutdown.clone()));
    let expected = ("span-test".to_owned(), format!("{}/traced", s.ns.name()));
    eventually("a reconcile span of span-test", || {
        spans().lock().contains(&expected)
    })
    .await;
    shutdown.cancel();
    run.await.unwrap().unwrap();
}
