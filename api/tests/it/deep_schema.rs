//! Decoding a CustomResourceDefinition whose schema nests as deep as the decoder allows: it
//! decodes, or is refused with an error, on a thread with tokio's 2 MiB worker stack; it never
//! overflows the stack (the decoder grows it).

use kclient_api::apiextensions::v1::CustomResourceDefinition;
use kclient_apimachinery::decode_json;

/// A CRD whose `openAPIV3Schema` nests `levels` schemas, each in the one before through
/// `through` (`properties` or `allOf`).
fn crd(levels: usize, through: &str) -> String {
    let mut schema = String::from(r#"{"type":"string"}"#);
    for _ in 0..levels {
        schema = match through {
            "properties" => format!(r#"{{"type":"object","properties":{{"a":{schema}}}}}"#),
            _ => format!(r#"{{"allOf":[{schema}]}}"#),
        };
    }
    format!(
        r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
        "metadata":{{"name":"as.example.com"}},"spec":{{"group":"example.com",
        "names":{{"plural":"as","kind":"A"}},"scope":"Namespaced","versions":[{{"name":"v1",
        "served":true,"storage":true,"schema":{{"openAPIV3Schema":{schema}}}}}]}}}}"#
    )
}

/// Decodes a CRD of `levels` schemas nested through `through` on a thread with tokio's 2 MiB
/// worker stack (a debug build's deepest frames are the ones at risk): the CRD's name, or the
/// error's text.
fn decode(levels: usize, through: &'static str) -> Result<String, String> {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            decode_json::<CustomResourceDefinition>(crd(levels, through).as_bytes())
                .map(|crd| crd.metadata.name.unwrap_or_default().to_string())
                .map_err(|e| e.to_string())
        })
        .unwrap()
        .join()
        .unwrap()
}

// Five levels of the CRD around the schema, two per schema wrapping another (the schema and
// its `properties`, or its `allOf`), and the innermost schema: 5 + 2 * 4,998 + 1 = 10,002
// levels, within the decoder's limit of 10,003 (the apiserver's 10,000 for an object, and the
// envelope of a list around it); one more schema would make 10,004.

#[test]
fn a_schema_nested_through_properties_decodes_up_to_the_nesting_limit() {
    for levels in [60, 64, 1_000, 4_998] {
        assert_eq!(
            decode(levels, "properties").as_deref(),
            Ok("as.example.com")
        );
    }
    let err = decode(4_999, "properties").unwrap_err();
    assert!(err.starts_with("recursion limit exceeded"), "{err}");
}

#[test]
fn a_schema_nested_through_all_of_decodes_up_to_the_nesting_limit() {
    for levels in [60, 64, 1_000, 4_998] {
        assert_eq!(decode(levels, "allOf").as_deref(), Ok("as.example.com"));
    }
    let err = decode(4_999, "allOf").unwrap_err();
    assert!(err.starts_with("recursion limit exceeded"), "{err}");
}
