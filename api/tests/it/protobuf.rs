//! Protobuf decoding of generated types under damage: a rich Pod, enveloped as the server
//! sends it, is truncated, bit-flipped and given huge length prefixes 3,000 ways; decoding must
//! return (an error or a value), never panic, and nested objects must decode to the same value
//! they were encoded from.

use kclient_api::core::v1::Pod;
use kclient_apimachinery::protobuf::{Message, decode_object, encode};
#[cfg(feature = "apiextensions")]
use kclient_apimachinery::protobuf::{WireType, Writer};

const POD: &str = r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web-0","namespace":"shop",
"labels":{"app":"web","pod-template-hash":"5d8f7c"},"annotations":{"note":"x"},
"creationTimestamp":"2024-01-02T03:04:05Z","uid":"0b1e2c3d","resourceVersion":"42",
"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5d8f7c","uid":"u1","controller":true}],
"managedFields":[{"manager":"kubectl","operation":"Update","apiVersion":"v1","time":"2024-01-02T03:04:05Z",
"fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:labels":{"f:app":{}}}}}]},
"spec":{"containers":[{"name":"app","image":"nginx:1.27","ports":[{"containerPort":8080,"protocol":"TCP"}],
"resources":{"limits":{"cpu":"500m","memory":"128Mi"}},"env":[{"name":"A","value":"b"}],
"readinessProbe":{"httpGet":{"path":"/","port":"http"},"periodSeconds":10}}],
"volumes":[{"name":"cfg","configMap":{"name":"cfg","defaultMode":420}}],
"tolerations":[{"key":"k","operator":"Exists","effect":"NoSchedule","tolerationSeconds":30}]},
"status":{"phase":"Running","podIP":"10.1.2.3","conditions":[{"type":"Ready","status":"True",
"lastTransitionTime":"2024-01-02T03:04:05Z"}]}}"#;

#[test]
fn a_pod_round_trips_through_the_envelope() {
    let pod: Pod = kclient_apimachinery::decode_json(POD.as_bytes()).expect("JSON");
    let body = encode("v1", "Pod", &pod);
    let back: Pod = decode_object(&body).expect("protobuf");
    assert_eq!(back, pod);
    assert_eq!(
        Pod::decode_protobuf(&pod.encode_protobuf()).expect("bare"),
        pod
    );
}

/// A kind's codec reads only envelopes of that kind (or of none, which Go reads as the
/// expected one): a `Status` or a `ConfigMap` read as a Pod would have its fields misread.
#[test]
fn a_codec_refuses_an_envelope_of_another_kind() {
    use kclient_apimachinery::{ObjectList, Resource, Status};
    let codec = Pod::protobuf().expect("Pod has a protobuf form");
    let pod: Pod = kclient_apimachinery::decode_json(POD.as_bytes()).expect("JSON");
    assert_eq!(
        codec.decode_object(&encode("v1", "Pod", &pod)).unwrap(),
        pod
    );
    assert_eq!(codec.decode_object(&encode("", "", &pod)).unwrap(), pod);
    let status = Status {
        message: "gone".into(),
        ..Status::default()
    };
    let e = codec
        .decode_object(&encode("v1", "Status", &status))
        .expect_err("a Status is not a Pod");
    assert!(
        e.to_string()
            .contains(r#"holds a "Status", expected a "Pod""#),
        "{e}"
    );

    let list = ObjectList {
        items: vec![pod.clone()],
        ..ObjectList::default()
    };
    assert_eq!(
        codec
            .decode_list(&encode("v1", "PodList", &list))
            .unwrap()
            .items,
        list.items
    );
    let e = codec
        .decode_list(&encode("v1", "ConfigMapList", &list))
        .expect_err("a ConfigMapList is not a PodList");
    assert!(e.to_string().contains(r#"expected a "PodList""#), "{e}");
    let e = codec
        .decode_list(&encode("v1", "Pod", &pod))
        .expect_err("a Pod is not a PodList");
    assert!(e.to_string().contains(r#"holds a "Pod""#), "{e}");
}

#[test]
fn mutated_pods_never_panic() {
    let pod: Pod = kclient_apimachinery::decode_json(POD.as_bytes()).expect("JSON");
    let body = encode("v1", "Pod", &pod);
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = |n: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % n as u64) as usize
    };
    let mut failed = 0;
    for i in 0..3_000 {
        let mut input = body.clone();
        match i % 3 {
            0 => input.truncate(next(body.len())),
            1 => {
                for _ in 0..1 + next(4) {
                    let at = next(input.len());
                    input[at] ^= 1 << next(8);
                }
            }
            _ => {
                let at = next(input.len());
                input.splice(at..at, [0xff, 0xff, 0xff, 0xff, 0x0f]);
            }
        }
        if decode_object::<Pod>(&input).is_err() {
            failed += 1;
        }
    }
    assert!(
        failed > 1_000,
        "only {failed} of 3000 damaged Pods failed to decode"
    );
}

/// Every way a CRD schema (`JSONSchemaProps`, the one recursive built-in type) nests, with the
/// messages each level of it takes: the field number, and a writer of one level around the
/// bytes of the schema inside.
#[cfg(feature = "apiextensions")]
type Nesting = (&'static str, usize, fn(&mut Writer, &[u8]));

#[cfg(feature = "apiextensions")]
const NESTINGS: [Nesting; 6] = [
    ("not", 1, |w, inner| {
        w.tag(28, WireType::Len);
        w.bytes(inner);
    }),
    ("allOf", 1, |w, inner| {
        w.tag(25, WireType::Len);
        w.bytes(inner);
    }),
    ("properties", 2, |w, inner| {
        w.tag(29, WireType::Len);
        w.nested(|w| {
            w.tag(1, WireType::Len);
            w.bytes(b"a");
            w.tag(2, WireType::Len);
            w.bytes(inner);
        });
    }),
    ("items", 2, |w, inner| {
        w.tag(24, WireType::Len);
        w.nested(|w| {
            w.tag(1, WireType::Len);
            w.bytes(inner);
        });
    }),
    ("additionalProperties", 2, |w, inner| {
        w.tag(30, WireType::Len);
        w.nested(|w| {
            w.tag(2, WireType::Len);
            w.bytes(inner);
        });
    }),
    ("dependencies", 3, |w, inner| {
        w.tag(32, WireType::Len);
        w.nested(|w| {
            w.tag(1, WireType::Len);
            w.bytes(b"a");
            w.tag(2, WireType::Len);
            w.nested(|w| {
                w.tag(1, WireType::Len);
                w.bytes(inner);
            });
        });
    }),
];

/// A schema nested `levels` deep by `wrap`, as bytes (built without recursion).
#[cfg(feature = "apiextensions")]
fn nested_schema(levels: usize, wrap: fn(&mut Writer, &[u8])) -> Vec<u8> {
    let mut bytes = Vec::new();
    for _ in 0..levels {
        let mut w = Writer::new();
        // JSONSchemaProps.type = 5.
        w.tag(5, WireType::Len);
        w.bytes(b"object");
        wrap(&mut w, &bytes);
        bytes = w.into_vec();
    }
    bytes
}

/// A CRD schema nested as deep as the reader allows decodes, and one level more fails with
/// `TooDeep`, on a thread with the 2 MiB stack of a tokio worker (where clients and informers
/// decode), whichever way it nests: the depth limit stops decoding before the stack runs out
/// (a stack overflow aborts the whole process).
#[cfg(feature = "apiextensions")]
#[test]
fn a_schema_nested_to_the_depth_limit_decodes_on_a_workers_stack() {
    use kclient_api::apiextensions::v1::JSONSchemaProps;
    use kclient_apimachinery::protobuf::{MAX_DEPTH, ProtoErrorKind};
    for (name, messages_per_level, wrap) in NESTINGS {
        let deepest = MAX_DEPTH as usize / messages_per_level;
        for levels in [deepest, deepest + 1] {
            let bytes = nested_schema(levels, wrap);
            let result = std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(move || JSONSchemaProps::decode_protobuf(&bytes).map(drop))
                .expect("a thread")
                .join()
                .expect("decoding did not panic");
            match result {
                Ok(()) => assert_eq!(levels, deepest, "{name}: {levels} levels decoded"),
                Err(e) => assert!(
                    levels > deepest && e.kind() == &ProtoErrorKind::TooDeep,
                    "{name}: {levels} levels: {e}"
                ),
            }
        }
    }
}

/// An IngressRule's `ingressRuleValue` (field 2) is a Go struct embedded in the rule's
/// message, its `http` (field 1) held by the rule itself. Written again after other fields, it
/// merges as a message seen again does: each occurrence's paths appended in order, the last
/// host kept.
#[cfg(feature = "networking")]
#[test]
fn an_embedded_message_seen_again_merges_as_a_message() {
    use kclient_api::networking::v1::IngressRule;
    let mut w = Writer::new();
    for i in 0..5 {
        w.tag(2, WireType::Len);
        w.nested(|w| {
            // http = 1, its paths = 1, a path's `path` = 1.
            w.tag(1, WireType::Len);
            w.nested(|w| {
                w.tag(1, WireType::Len);
                w.nested(|w| {
                    w.tag(1, WireType::Len);
                    w.bytes(format!("/p{i}").as_bytes());
                });
            });
        });
        w.tag(1, WireType::Len);
        w.bytes(format!("host-{i}").as_bytes());
    }
    let rule = IngressRule::decode_protobuf(&w.into_vec()).expect("decodes");
    assert_eq!(rule.host.as_deref(), Some("host-4"));
    let paths: Vec<&str> = rule
        .http
        .as_ref()
        .expect("http")
        .paths
        .iter()
        .map(|p| p.path.as_deref().unwrap_or_default())
        .collect();
    assert_eq!(paths, ["/p0", "/p1", "/p2", "/p3", "/p4"]);
}
