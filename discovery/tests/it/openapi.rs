//! The OpenAPI v3 client against the server: the index lists every served group version,
//! documents are cached by their hashed URL until invalidated, and a kind's schema and
//! fields read as kubectl reads them, a CRD's included.

use std::sync::Arc;
use std::time::{Duration, Instant};

use kclient_apimachinery::{GroupVersion, GroupVersionKind};
use kclient_discovery::{DiscoveryClient, OpenAPIV3Client, openapi_v3_path};
use kclient_testenv::{Identity, TestEnv};

use crate::crd::TestCrd;

#[tokio::test]
async fn index_documents_and_schemas_come_from_openapi_v3() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let openapi = OpenAPIV3Client::new(client.clone());

    // Every group version discovery reports has a document in the index.
    let index = openapi.paths().await.unwrap();
    let groups = DiscoveryClient::new(client.clone())
        .server_groups()
        .await
        .unwrap();
    for group in groups
        .groups
        .iter()
        .filter(|g| g.name.ends_with("k8s.io") || !g.name.contains('.'))
    {
        for v in &group.versions {
            let path = openapi_v3_path(&GroupVersion::new(&group.name, &v.version));
            let entry = index
                .get(&path)
                .unwrap_or_else(|| panic!("{path} not in the index"));
            assert!(entry.server_relative_url.contains("?hash="), "{entry:?}");
        }
    }

    // Cached: the same document until invalidated, then fetched again (equal content).
    let apps = GroupVersion::new("apps", "v1");
    let first = openapi.group_version_document(&apps).await.unwrap();
    let again = openapi.group_version_document(&apps).await.unwrap();
    assert!(
        Arc::ptr_eq(&first, &again),
        "second read comes from the cache"
    );
    openapi.invalidate();
    let fresh = openapi.group_version_document(&apps).await.unwrap();
    assert!(
        !Arc::ptr_eq(&first, &fresh),
        "invalidate drops the cached document"
    );
    assert_eq!(first, fresh);

    let deployment = openapi
        .resource_schema(&GroupVersionKind::new("apps", "v1", "Deployment"))
        .await
        .unwrap();
    assert_eq!(deployment.name(), "io.k8s.api.apps.v1.Deployment");
    let replicas = deployment.explain(&["spec", "replicas"]).unwrap();
    assert_eq!(replicas.type_name, "integer");
    assert!(
        replicas.description.starts_with("Number of desired pods."),
        "{replicas:?}"
    );
    let containers = openapi
        .resource_schema(&GroupVersionKind::new("", "v1", "Pod"))
        .await
        .unwrap()
        .explain(&["spec", "containers"])
        .unwrap();
    assert_eq!(containers.type_name, "[]Container");
    let name = containers.fields.iter().find(|f| f.name == "name").unwrap();
    assert!(name.required && name.type_name == "string", "{name:?}");
    assert!(deployment.explain(&["spec", "nope"]).is_err());
    let missing = openapi
        .resource_schema(&GroupVersionKind::new("no.such.group", "v1", "Nothing"))
        .await
        .unwrap_err();
    assert!(missing.to_string().contains("no document"), "{missing}");

    // A CRD's schema, once the server has published it (a new hash in a fresh index).
    let crd = TestCrd::create(&client, "openapi").await;
    let gvk = GroupVersionKind::new(&crd.group, "v1", "Widget");
    let deadline = Instant::now() + Duration::from_secs(60);
    let widget = loop {
        openapi.invalidate();
        match openapi.resource_schema(&gvk).await {
            Ok(schema) => break schema,
            Err(e) => {
                assert!(
                    Instant::now() < deadline,
                    "the CRD's schema never appeared: {e}"
                );
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
        }
    };
    crd.delete().await;
    let root = widget.explain(&[]).unwrap();
    assert!(
        root.fields
            .iter()
            .any(|f| f.name == "metadata" && f.type_name == "ObjectMeta")
    );
}

#[tokio::test]
async fn documents_are_kept_on_disk_by_path_and_hash() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let dir = tempfile::tempdir().unwrap();
    let apps = GroupVersion::new("apps", "v1");

    let first = OpenAPIV3Client::with_disk_cache(client.clone(), dir.path());
    let served = first.group_version_document(&apps).await.unwrap();
    let url = first.paths().await.unwrap()["apis/apps/v1"]
        .server_relative_url
        .clone();
    let hash = url.split("hash=").nth(1).expect("a hashed URL");
    let file = dir.path().join(format!("apis_apps_v1.{hash}.json"));
    let on_disk: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).expect("the document's file")).unwrap();
    assert_eq!(on_disk, *served, "the file holds the served document");

    // Another client (a later process, as far as caching goes) reads the file, not the
    // server: a mark put into the file comes back.
    let mut marked = on_disk.clone();
    marked["x-kclient-test"] = "from disk".into();
    std::fs::write(&file, serde_json::to_vec(&marked).unwrap()).unwrap();
    let second = OpenAPIV3Client::with_disk_cache(client.clone(), dir.path());
    let read = second.group_version_document(&apps).await.unwrap();
    assert_eq!(read["x-kclient-test"], "from disk");

    // A damaged file is fetched again and replaced.
    std::fs::write(&file, b"{not json").unwrap();
    let third = OpenAPIV3Client::with_disk_cache(client.clone(), dir.path());
    let fetched = third.group_version_document(&apps).await.unwrap();
    assert_eq!(*fetched, *served);
    let replaced: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&file).unwrap()).expect("the file is whole again");
    assert_eq!(replaced, *served);
}
