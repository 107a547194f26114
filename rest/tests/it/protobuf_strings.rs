//! Strings that are not UTF-8 in protobuf responses. Go's strings are bytes and its protobuf
//! decoder does not check them, so any protobuf client can store such a string (an annotation,
//! a ConfigMap value); the server's JSON then shows each bad byte as U+FFFD. Read as protobuf,
//! the object must read as that same text, not fail: one such object would otherwise stop every
//! list and watch of its namespace that asks for protobuf.

use kclient_apimachinery::meta::{
    ACCEPT_METADATA, ACCEPT_METADATA_LIST, ACCEPT_METADATA_LIST_PROTOBUF, ACCEPT_METADATA_PROTOBUF,
    PartialObjectMetadata, PartialObjectMetadataList,
};
use kclient_apimachinery::protobuf::{MAGIC, ProtobufCodec, WireType, Writer};
use kclient_testenv::{Identity, TestEnv};

use super::configmaps;

/// An enveloped `ConfigMap { metadata: { name, annotations: { note: value } } }`, with
/// `value` as raw bytes.
fn config_map_with_note(name: &str, value: &[u8]) -> Vec<u8> {
    let mut w = Writer::from_vec(MAGIC.to_vec());
    w.tag(1, WireType::Len);
    w.nested(|w| {
        w.tag(1, WireType::Len);
        w.bytes(b"v1");
        w.tag(2, WireType::Len);
        w.bytes(b"ConfigMap");
    });
    w.tag(2, WireType::Len);
    w.nested(|w| {
        // ConfigMap.metadata = 1: ObjectMeta.name = 1, ObjectMeta.annotations = 12.
        w.tag(1, WireType::Len);
        w.nested(|w| {
            w.tag(1, WireType::Len);
            w.bytes(name.as_bytes());
            w.tag(12, WireType::Len);
            w.nested(|w| {
                w.tag(1, WireType::Len);
                w.bytes(b"note");
                w.tag(2, WireType::Len);
                w.bytes(value);
            });
        });
    });
    w.into_vec()
}

#[tokio::test]
async fn a_string_that_is_not_utf8_reads_from_protobuf_as_json_shows_it() {
    let env = TestEnv::connect().await;
    let ns = env.namespace().await;
    let ns = ns.name();
    let client = env.client(Identity::Admin);

    // A lone continuation byte, a cut three-byte sequence and an invalid lead byte.
    configmaps(client.post(), ns)
        .protobuf_body(config_map_with_note("not-utf8", b"a\x80b\xe2\x82c\xffd"))
        .bytes()
        .await
        .expect("the server stores a string that is not UTF-8");

    let json: PartialObjectMetadata = configmaps(client.get(), ns)
        .name("not-utf8")
        .header("Accept", ACCEPT_METADATA)
        .send()
        .await
        .expect("JSON get");
    let note = |m: &PartialObjectMetadata| {
        m.metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get("note"))
            .map(|v| v.to_string())
    };
    // Go's JSON encoder writes one U+FFFD per byte that does not start a valid sequence.
    assert_eq!(
        note(&json).as_deref(),
        Some("a\u{fffd}b\u{fffd}\u{fffd}c\u{fffd}d")
    );

    let codec = ProtobufCodec::partial_object_metadata();
    let proto: PartialObjectMetadata = configmaps(client.get(), ns)
        .name("not-utf8")
        .header("Accept", ACCEPT_METADATA_PROTOBUF)
        .send_protobuf(|body| codec.decode_object(body))
        .await
        .expect("protobuf get of an object holding a string that is not UTF-8");
    assert_eq!(proto, json);

    let json_list: PartialObjectMetadataList = configmaps(client.get(), ns)
        .header("Accept", ACCEPT_METADATA_LIST)
        .send()
        .await
        .expect("JSON list");
    let proto_list = configmaps(client.get(), ns)
        .header("Accept", ACCEPT_METADATA_LIST_PROTOBUF)
        .send_protobuf(|body| codec.decode_list(body))
        .await
        .expect("protobuf list of a namespace holding a string that is not UTF-8");
    let named = |l: &PartialObjectMetadataList| {
        l.items
            .iter()
            .find(|m| m.metadata.name.as_deref() == Some("not-utf8"))
            .and_then(note)
    };
    assert_eq!(named(&proto_list), named(&json_list));
    assert!(named(&proto_list).is_some());
}
