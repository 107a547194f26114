//! The facade's `schema` feature: a custom resource whose `#[derive(JsonSchema)]` names the
//! schemars that `kclient::kubernetes` re-exports (the program has no schemars dependency of
//! its own), and the CRD made from it.

use kclient::apimachinery::meta::IntOrString;
use kclient::apimachinery::meta::v1::ObjectMeta;
use kclient::kubernetes::schemars::JsonSchema;
use kclient::kubernetes::{CustomResource, custom_resource, structural_schema};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kclient::kubernetes::schemars")]
struct Website {
    metadata: ObjectMeta,
    spec: WebsiteSpec,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[schemars(crate = "kclient::kubernetes::schemars")]
#[serde(rename_all = "camelCase")]
struct WebsiteSpec {
    domain_name: String,
    port: Option<IntOrString>,
}

custom_resource!(Website {
    group: "example.com",
    version: "v1",
    kind: "Website",
    plural: "websites",
    singular: "website",
    scope: Namespaced,
});

#[test]
fn a_crd_schema_from_a_type_through_the_facade() {
    let schema = structural_schema::<Website>().unwrap();
    let spec = &schema["properties"]["spec"];
    assert_eq!(spec["required"], serde_json::json!(["domainName"]));
    assert_eq!(
        spec["properties"]["port"]["x-kubernetes-int-or-string"],
        true
    );
    assert_eq!(spec["properties"]["port"]["nullable"], true);
    let crd = Website::crd_json_from_type().unwrap();
    assert_eq!(crd["metadata"]["name"], "websites.example.com");
    assert_eq!(
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"],
        schema
    );
}
