//! `Quantity` reads an amount from JSON as the API server does: every text the server accepts
//! has the amount of the canonical form the server answers with, and every text it refuses
//! has none.

use std::cmp::Ordering;

use kclient_apimachinery::decode_json;
use kclient_apimachinery::meta::Quantity;
use kclient_testenv::{Identity, TestEnv};
use serde_json::{Value, json};

/// Sends `text` as a ResourceQuota's `requests.cpu` in a dry-run create: the server's
/// canonical form of it, or `None` if the server cannot decode it. (A ResourceList's defaulting
/// rounds an amount up to whole thousandths, so the texts below have none finer.)
async fn server_reads(client: &kclient_rest::Client, ns: &str, text: &str) -> Option<String> {
    let sent = client
        .post()
        .group_version("", "v1")
        .namespace(ns)
        .resource("resourcequotas")
        .param("dryRun", "All")
        .json(&json!({"metadata": {"name": "q"}, "spec": {"hard": {"requests.cpu": text}}}))
        .send::<Value>()
        .await;
    match sent {
        Ok(quota) => Some(
            quota["spec"]["hard"]["requests.cpu"]
                .as_str()
                .expect("a canonical quantity")
                .to_owned(),
        ),
        Err(e) => {
            assert!(
                e.is_bad_request() && e.to_string().contains("cannot be handled"),
                "{text:?}: {e}"
            );
            None
        }
    }
}

#[tokio::test]
async fn amounts_are_the_ones_the_server_reads() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let client = env.client(Identity::Admin);
    let texts = [
        // Usual spellings.
        "1", "100m", "1.5", "1.5Gi", "1000m", "1e3", "1E-3", "250000u", "+2", "1.", ".5", "0",
        "00000", "1e+3", "16Ei", // No digits: Go's ParseQuantity reads these as zero.
        ".", "+", "m", "Ki", "e3", ".e3", "+.m",
        // Whitespace around the text: the server's JSON decoding trims it.
        " 1", "1 ", "\t2Gi\n", // Refused.
        "", " ", "1e", "--1", "+-1", "1 Gi", "0x1", "1,5", "1.2.3", "1i", "1mi", "1Ki2", "abc",
    ];
    for text in texts {
        // Decoded from the JSON the server decodes.
        let json = serde_json::to_string(text).unwrap();
        let ours: Quantity = decode_json(json.as_bytes()).unwrap();
        if text.trim() == text {
            assert_eq!(ours, Quantity::from(text), "{text:?}");
        }
        match server_reads(&client, ns.name(), text).await {
            Some(canonical) => {
                let canonical = Quantity::from(canonical.as_str());
                assert_eq!(
                    ours.cmp_amount(&canonical),
                    Some(Ordering::Equal),
                    "{text:?} is {canonical} to the server"
                );
                assert_eq!(ours.to_milli(), canonical.to_milli(), "{text:?}");
                assert_eq!(ours.to_i64_ceil(), canonical.to_i64_ceil(), "{text:?}");
                assert_eq!(ours.to_f64(), canonical.to_f64(), "{text:?}");
            }
            None => {
                assert_eq!(ours.to_milli(), None, "{text:?} is refused by the server");
                assert_eq!(ours.cmp_amount(&Quantity::from("0")), None, "{text:?}");
            }
        }
    }
}
