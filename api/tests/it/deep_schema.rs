//! Decoding a CustomResourceDefinition whose schema nests as deep as the decoder allows: it
//! decodes, or is refused with an error, on a thread with tokio's 2 MiB worker stack; it never
//! overflows the stack.

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

/// The deepest schema that decodes, decoded on a 2 MiB stack (a debug build's deepest frames
/// are the ones at risk), or the first error's text.
fn deepest(through: &'static str) -> Result<usize, String> {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let mut deepest = 0;
            for levels in 1..=64 {
                match decode_json::<CustomResourceDefinition>(crd(levels, through).as_bytes()) {
                    Ok(_) => deepest = levels,
                    Err(e) if e.to_string().starts_with("recursion limit exceeded") => break,
                    Err(e) => return Err(format!("{levels} levels: {e}")),
                }
            }
            Ok(deepest)
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn a_schema_nested_through_properties_decodes_up_to_the_nesting_limit() {
    // Five levels of the CRD around the schema, two per schema wrapping another (the schema
    // and its `properties`, or its `allOf`), and the innermost schema: 5 + 2 * 60 + 1 = 126
    // levels; one more schema would make 128, beyond the limit of 127.
    assert_eq!(deepest("properties"), Ok(60));
}

#[test]
fn a_schema_nested_through_all_of_decodes_up_to_the_nesting_limit() {
    assert_eq!(deepest("allOf"), Ok(60));
}
