//! `?` across kclient's crates: every crate's error converts into `kclient::Error` (the API
//! error), keeping the `is_*` answers of API errors and giving back the original error of
//! anything else through `downcast_ref`.

use kclient::Error;
use kclient::api::core::v1::ConfigMap;
use kclient::apimachinery::{GroupVersionResource, Selector};
use kclient::cache::{Indexer, Indexers};
use kclient::discovery::DiscoveryRESTMapper;
use kclient::rest::{Config, ConfigError};

fn bad_kubeconfig() -> Result<Config, Error> {
    let dir = std::env::temp_dir().join(format!("kclient-errors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config");
    std::fs::write(&path, "clusters: [this is not: a kubeconfig").unwrap();
    Ok(Config::from_kubeconfig_file(&path)?)
}

fn missing_index() -> Result<usize, Error> {
    let indexer: Indexer<ConfigMap> = Indexer::new(Indexers::default());
    Ok(indexer.by_index("by-owner", "x")?.len())
}

fn unknown_resource() -> Result<(), Error> {
    let mapper = DiscoveryRESTMapper::new(&[]);
    mapper.kind_for(&GroupVersionResource::new("example.com", "v1", "widgets"))?;
    Ok(())
}

fn bad_key_and_selector(key: &str, selector: &str) -> Result<(), Error> {
    kclient::cache::split_meta_namespace_key(key)?;
    Selector::parse(selector)?;
    Ok(())
}

#[test]
fn config_errors_convert_and_come_back() {
    let err = bad_kubeconfig().unwrap_err();
    assert!(err.is_other(), "{err:?}");
    let config = err
        .downcast_ref::<ConfigError>()
        .expect("a ConfigError inside");
    assert_eq!(err.to_string(), config.to_string());
}

#[test]
fn cache_errors_convert_and_come_back() {
    let err = missing_index().unwrap_err();
    assert!(err.is_other() && !err.is_not_found(), "{err:?}");
    let cache = err
        .downcast_ref::<kclient::cache::Error>()
        .expect("a cache Error inside");
    assert!(cache.is_index_not_found());
    assert!(err.to_string().contains("by-owner"), "{err}");
}

#[test]
fn discovery_errors_convert_and_come_back() {
    let err = unknown_resource().unwrap_err();
    assert!(err.is_other(), "{err:?}");
    let discovery = err
        .downcast_ref::<kclient::discovery::Error>()
        .expect("a discovery Error inside");
    assert!(discovery.is_no_match(), "{discovery:?}");
}

#[test]
fn apimachinery_errors_convert() {
    let err = bad_key_and_selector("a/b/c", "app=x").unwrap_err();
    assert!(
        err.downcast_ref::<kclient::apimachinery::InvalidKeyError>()
            .is_some(),
        "{err:?}"
    );
    let err = bad_key_and_selector("ns/name", "app in (").unwrap_err();
    assert!(
        err.downcast_ref::<kclient::apimachinery::SelectorError>()
            .is_some(),
        "{err:?}"
    );
    assert!(bad_key_and_selector("ns/name", "app=x").is_ok());
}

/// A controller that cannot run (here: its leader election configuration is refused, which
/// `run` reports before it sends a request or waits for a cache).
#[cfg(feature = "tools")]
async fn run_controller() -> Result<(), Error> {
    use std::sync::Arc;
    use std::time::Duration;

    use kclient::api::coordination::v1::Lease;
    use kclient::controller::{Action, ControllerBuilder};
    use kclient::informers::SharedInformerFactory;
    use kclient::kubernetes::Api;
    use kclient::rest::Client;
    use kclient::tools::{LeaderCallbacks, LeaderElectionConfig, LeaseLock};

    let client = Client::new(Config::new("https://127.0.0.1:1"))?;
    let factory = SharedInformerFactory::new(client.clone(), Duration::ZERO);
    let leases: Api<Lease> = Api::namespaced(client, "default");
    let mut election = LeaderElectionConfig::new(
        LeaseLock::new(leases, "errors-test", "a"),
        LeaderCallbacks::new(),
    );
    // Not longer than the renew deadline: refused.
    election.lease_duration = Duration::from_secs(1);
    election.renew_deadline = Duration::from_secs(5);
    ControllerBuilder::new("errors-test", &factory)
        .for_::<ConfigMap>()
        .leader_election(election)
        .reconcile(|_: Arc<ConfigMap>, _: Arc<()>| async { Ok::<_, String>(Action::done()) })
        .run(Arc::new(()), kclient::prelude::CancellationToken::new())
        .await?;
    Ok(())
}

#[cfg(feature = "tools")]
#[tokio::test]
async fn controller_errors_convert_and_come_back() {
    let err = run_controller().await.unwrap_err();
    assert!(err.is_other(), "{err:?}");
    let controller = err
        .downcast_ref::<kclient::controller::Error>()
        .expect("a controller Error inside");
    assert!(controller.is_leader_election(), "{controller:?}");
    assert_eq!(err.to_string(), controller.to_string());
}

#[test]
fn quantity_and_json_errors_convert() {
    fn quantity(text: &str) -> Result<(), Error> {
        kclient::apimachinery::meta::Quantity::parse(text)?;
        Ok(())
    }
    fn json(text: &[u8]) -> Result<ConfigMap, Error> {
        Ok(kclient::apimachinery::decode_json(text)?)
    }
    let err = quantity("12 apples").unwrap_err();
    assert!(
        err.downcast_ref::<kclient::apimachinery::meta::ParseQuantityError>()
            .is_some(),
        "{err:?}"
    );
    let err = json(b"{\"a\" 1}").unwrap_err();
    assert!(err.is_decode(), "{err:?}");
    assert!(err.to_string().contains("line 1 column 6"), "{err}");
}

#[cfg(feature = "tools")]
#[test]
fn rollout_and_finalizer_errors_convert() {
    use kclient::controller::FinalizerError;
    use kclient::tools::rollout::RolloutError;

    fn rollout() -> Result<(), Error> {
        Err(RolloutError::Deleted { name: "web".into() })?
    }
    let err = rollout().unwrap_err();
    assert!(err.downcast_ref::<RolloutError>().is_some(), "{err:?}");

    // A failed finalizer patch is its request's error; a failed reconcile comes back whole.
    let patch: Error = FinalizerError::<String>::Patch {
        finalizer: "example.com/cleanup".into(),
        object: "ns/a".into(),
        source: Error::new_not_found("", "configmaps", "a"),
    }
    .into();
    assert!(patch.is_not_found(), "{patch:?}");
    let reconcile: Error = FinalizerError::Reconcile("the bucket is locked".to_string()).into();
    assert!(reconcile.is_other(), "{reconcile:?}");
    assert_eq!(reconcile.to_string(), "the bucket is locked");
}

#[cfg(feature = "apply")]
#[test]
fn extract_errors_convert() {
    use kclient::api::applyconfigurations::ExtractError;
    use kclient::api::applyconfigurations::core::v1::extract_config_map;

    fn extract(cm: &ConfigMap) -> Result<(), Error> {
        extract_config_map(cm, "mine")?;
        Ok(())
    }
    let cm: ConfigMap = kclient::apimachinery::decode_json(
        br#"{"metadata": {"name": "a", "managedFields": [{"manager": "mine",
            "operation": "Apply", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": 7}}]}}"#,
    )
    .unwrap();
    let err = extract(&cm).unwrap_err();
    assert!(err.downcast_ref::<ExtractError>().is_some(), "{err:?}");
}
