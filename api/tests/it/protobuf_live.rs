//! Every object the shared testenv holds, of every watchable built-in kind, listed once as
//! protobuf and once as JSON: the two decodes must be equal, object by object. The conformance
//! suite checks fixtures written by hand; this checks what the API server and its controllers
//! write themselves (bootstrap RBAC and flow control, APIServices, leases renewed by Go
//! components through protobuf, events, the namespaces and objects of other tests).

use kclient_apimachinery::protobuf::{CONTENT_TYPE_PROTOBUF, Message};
use kclient_apimachinery::{ObjectList, Resource};
use kclient_rest::Client;
use kclient_testenv::{Identity, TestEnv};

/// Lists `K` in every namespace as protobuf and as JSON and compares the objects seen at the
/// same resourceVersion in both; returns how many were compared.
async fn compare<K>(client: &Client) -> usize
where
    K: Resource + Message + PartialEq + std::fmt::Debug,
{
    let list = |accept: &'static str| {
        client
            .get()
            .group_version(K::GROUP, K::VERSION)
            .resource(K::PLURAL)
            .header("Accept", accept)
            .bytes()
    };
    let proto = list(CONTENT_TYPE_PROTOBUF)
        .await
        .unwrap_or_else(|e| panic!("listing {} as protobuf: {e}", K::KIND));
    let json = list("application/json")
        .await
        .unwrap_or_else(|e| panic!("listing {} as JSON: {e}", K::KIND));
    let codec = K::protobuf().expect("a built-in kind has a protobuf form");
    let from_proto = codec
        .decode_list(&proto)
        .unwrap_or_else(|e| panic!("decoding the {} list from protobuf: {e}", K::KIND));
    let from_json: ObjectList<K> = kclient_apimachinery::decode_json(&json)
        .unwrap_or_else(|e| panic!("decoding the {} list from JSON: {e}", K::KIND));
    let mut compared = 0;
    for p in &from_proto.items {
        let Some(j) = from_json
            .items
            .iter()
            .find(|j| j.namespace() == p.namespace() && j.name() == p.name())
        else {
            continue;
        };
        if j.resource_version() != p.resource_version() {
            continue;
        }
        if p != j {
            let (a, b) = (format!("{p:?}"), format!("{j:?}"));
            let at = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
            let from = at.saturating_sub(200);
            panic!(
                "{} {}/{}: protobuf decode vs JSON decode differ from byte {from} of Debug:\n  protobuf {}\n  json     {}",
                K::KIND,
                p.namespace(),
                p.name(),
                a.get(from..(at + 200).min(a.len())).unwrap_or(""),
                b.get(from..(at + 200).min(b.len())).unwrap_or(""),
            );
        }
        compared += 1;
    }
    compared
}

macro_rules! compare_all {
    ($($feature:literal $group:ident :: $version:ident :: $ty:ident;)*) => {
        async fn compare_all(client: &Client) -> Vec<(&'static str, usize)> {
            let mut out = Vec::new();
            $(
                #[cfg(feature = $feature)]
                out.push((
                    stringify!($group::$version::$ty),
                    compare::<kclient_api::$group::$version::$ty>(client).await,
                ));
            )*
            out
        }
    };
}
kclient_api::watchable_resources!(compare_all);

#[tokio::test(flavor = "multi_thread")]
async fn every_object_the_server_holds_decodes_the_same_from_protobuf_and_json() {
    let env = TestEnv::connect().await;
    let client = env.client(Identity::Admin);
    let counts = compare_all(&client).await;
    let total: usize = counts.iter().map(|(_, n)| n).sum();
    eprintln!("{counts:?}");
    assert!(total > 100, "only {total} objects compared: {counts:?}");
}
