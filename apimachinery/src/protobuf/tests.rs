//! Tests of the wire reader and writer and the hand-written messages: exact bytes, every error
//! kind, and mutated inputs (truncation, bit flips, huge lengths) that must fail cleanly.

use super::*;
use crate::meta::{FieldsV1, IntOrString, MicroTime, Quantity, RawJson, Time};
use crate::{ListMeta, Status, StatusCause, StatusDetails};

fn sample_status() -> Status {
    Status {
        metadata: ListMeta {
            resource_version: "42".into(),
            remaining_item_count: Some(3),
            ..Default::default()
        },
        status: "Failure".into(),
        message: "pods \"web\" not found".into(),
        reason: "NotFound".into(),
        details: Some(StatusDetails {
            name: "web".into(),
            kind: "pods".into(),
            causes: vec![
                StatusCause {
                    cause_type: "FieldValueInvalid".into(),
                    message: "bad".into(),
                    field: "spec.x".into(),
                },
                StatusCause::default(),
            ],
            retry_after_seconds: 7,
            ..Default::default()
        }),
        code: 404,
        ..Default::default()
    }
}

#[test]
fn varints_round_trip_and_are_minimal() {
    for v in [
        0u64,
        1,
        127,
        128,
        300,
        16_383,
        16_384,
        u32::MAX as u64,
        u64::MAX,
    ] {
        let mut w = Writer::new();
        w.varint(v);
        let bytes = w.into_vec();
        let expected_len = if v == 0 {
            1
        } else {
            (64 - v.leading_zeros() as usize).div_ceil(7)
        };
        assert_eq!(bytes.len(), expected_len, "{v}");
        let mut r = Reader::new(&bytes);
        assert_eq!(r.varint().unwrap(), v);
        assert!(r.is_empty());
    }
    // Negative int32 is sign-extended to ten bytes, as Go writes it.
    let mut w = Writer::new();
    (-1i32).write(&mut w);
    assert_eq!(w.into_vec().len(), 10);
}

#[test]
fn status_round_trips_with_gos_bytes() {
    let status = sample_status();
    let bytes = status.encode_protobuf();
    assert_eq!(Status::decode_protobuf(&bytes).unwrap(), status);
    // Field 6 (code 404) is the last: tag 0x30, varint 404 = 0x94 0x03.
    assert_eq!(&bytes[bytes.len() - 3..], &[0x30, 0x94, 0x03]);
}

#[test]
fn nested_lengths_over_127_are_patched() {
    let long = "x".repeat(20_000);
    let status = Status {
        message: long.clone(),
        details: Some(StatusDetails {
            name: long.clone(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let bytes = status.encode_protobuf();
    assert_eq!(Status::decode_protobuf(&bytes).unwrap(), status);
}

#[test]
fn unknown_fields_are_skipped() {
    let mut w = Writer::new();
    w.tag(99, WireType::Len);
    w.bytes(b"future");
    w.tag(98, WireType::Varint);
    w.varint(5);
    w.tag(97, WireType::Fixed64);
    w.fixed64(1);
    let mut bytes = w.into_vec();
    bytes.extend([0x85, 0x06, 1, 2, 3, 4]); // field 96, wire type 5 (fixed32): tag 773
    let mut tail = Writer::new();
    put(&mut tail, 6, &410i32);
    bytes.extend(tail.into_vec());
    let status = Status::decode_protobuf(&bytes).unwrap();
    assert_eq!(status.code, 410);
}

/// An unknown field of the group wire types (start 3, end 4) is skipped as Go's generated
/// `skipGenerated` skips it: to the end group that closes it, over any fields and nested
/// groups inside. A group where a known field is, an end group without a start and a group
/// cut short are errors, as in Go.
#[test]
fn unknown_groups_are_skipped_as_go_skips_them() {
    // Status { message (3) = "a", field 9 = group { field 1 = 7, field 2 = "xy", field 5 =
    // group { field 1 = fixed32 } end, field 6 = fixed64 } end, code (6) = 410 }.
    let group: &[u8] = &[
        0x4b, // field 9, start group
        0x08, 0x07, // field 1 = 7
        0x12, 0x02, b'x', b'y', // field 2 = "xy"
        0x2b, // field 5, start group
        0x0d, 1, 2, 3, 4,    // field 1, fixed32
        0x2c, // field 5, end group
        0x31, 1, 2, 3, 4, 5, 6, 7, 8,    // field 6, fixed64
        0x4c, // field 9, end group
    ];
    let bytes = [&[0x1a, 0x01, b'a'][..], group, &[0x30, 0x9a, 0x03]].concat();
    let status = Status::decode_protobuf(&bytes).unwrap();
    assert_eq!((status.message.as_str(), status.code), ("a", 410));
    // In a list item and in a map entry, and in the envelope.
    let mut list = Writer::new();
    list.tag(2, WireType::Len);
    list.bytes(&bytes);
    let list = crate::ObjectList::<Status>::decode_protobuf(&list.into_vec()).unwrap();
    assert_eq!(list.items[0].code, 410);
    let mut entry = Writer::new();
    entry.tag(1, WireType::Len);
    entry.nested(|w| {
        w.tag(1, WireType::Len);
        w.bytes(b"k");
        w.tag(2, WireType::Len);
        w.bytes(b"v");
    });
    let mut entry = entry.into_vec();
    entry.splice(2..2, group.iter().copied());
    entry[1] += group.len() as u8;
    assert_eq!(read_str_map(&entry).unwrap(), [("k".into(), "v".into())]);
    let mut enveloped = crate::protobuf::encode("v1", "Status", &sample_status());
    enveloped.extend(group);
    assert_eq!(
        decode_object::<Status>(&enveloped).unwrap(),
        sample_status()
    );

    // A known field (code, 6) as a group: the wire type is wrong.
    let e = Status::decode_protobuf(&[0x33, 0x34]).unwrap_err();
    assert!(
        matches!(
            e.kind(),
            ProtoErrorKind::WrongWireType {
                field: 6,
                found: 3,
                ..
            }
        ),
        "{e}"
    );
    // An end group with no start, and a group that never ends.
    for bad in [
        &[0x4c][..],
        &[0x4b, 0x08, 0x07][..],
        &[0x4b, 0x2b, 0x2c][..],
    ] {
        assert!(Status::decode_protobuf(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn each_error_kind() {
    // Truncated varint.
    let e = Status::decode_protobuf(&[0x30, 0x94]).unwrap_err();
    assert_eq!(e.kind(), &ProtoErrorKind::Truncated);
    assert_eq!(e.offset(), 2);
    // Length past the end.
    let e = Status::decode_protobuf(&[0x1a, 0x05, b'a']).unwrap_err();
    assert!(matches!(
        e.kind(),
        ProtoErrorKind::LengthPastEnd {
            length: 5,
            remaining: 1
        }
    ));
    // A huge length.
    let e = Status::decode_protobuf(&[0x1a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])
        .unwrap_err();
    assert!(
        matches!(e.kind(), ProtoErrorKind::LengthPastEnd { .. }),
        "{e}"
    );
    // Varint overflow.
    let e = Status::decode_protobuf(&[
        0x30, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02,
    ])
    .unwrap_err();
    assert_eq!(e.kind(), &ProtoErrorKind::VarintOverflow);
    // Wrong wire type: message (field 3) sent as a varint.
    let e = Status::decode_protobuf(&[0x18, 0x01]).unwrap_err();
    assert_eq!(
        e.kind(),
        &ProtoErrorKind::WrongWireType {
            field: 3,
            expected: 2,
            found: 0
        }
    );
    assert!(
        e.to_string()
            .contains("field 3 has wire type 0, expected 2"),
        "{e}"
    );
    // Invalid tags: field 0, an end group with no start, wire types 6 and 7.
    for bad in [[0x00u8, 0x00], [0x0c, 0x00], [0x0e, 0x00], [0x0f, 0x00]] {
        let e = Status::decode_protobuf(&bad).unwrap_err();
        assert!(
            matches!(e.kind(), ProtoErrorKind::InvalidTag { .. }),
            "{bad:?}: {e}"
        );
    }
    // Invalid UTF-8 in the envelope's kind (a string field of a message reads as Go's JSON
    // shows it instead: `strings_that_are_not_utf8_read_as_gos_json_shows_them`).
    let e = Unknown::decode(b"k8s\0\x0a\x03\x12\x01\xff").unwrap_err();
    assert_eq!(e.kind(), &ProtoErrorKind::InvalidUtf8 { field: 2 });
    assert!(!e.to_string().contains("\u{fffd}"));
}

/// Messages nested one deeper than [`MAX_DEPTH`] fail with `TooDeep` (through `Reader::nested`,
/// which every message read goes through); exactly `MAX_DEPTH` levels decode.
#[test]
fn nesting_past_the_depth_limit_fails() {
    fn nest(depth: usize) -> Vec<u8> {
        let mut inner: Vec<u8> = Vec::new();
        for _ in 0..depth {
            let mut w = Writer::new();
            w.tag(1, WireType::Len);
            w.bytes(&inner);
            inner = w.into_vec();
        }
        inner
    }
    fn descend(r: &mut Reader<'_>) -> Result<usize, ProtoError> {
        let mut deepest = 0;
        while let Some((_, wire)) = r.next_field()? {
            r.expect(1, wire, WireType::Len)?;
            deepest = deepest.max(1 + descend(&mut r.nested()?)?);
        }
        Ok(deepest)
    }
    let ok = nest(MAX_DEPTH as usize);
    assert_eq!(descend(&mut Reader::new(&ok)).unwrap(), MAX_DEPTH as usize);
    let deep = nest(MAX_DEPTH as usize + 1);
    let e = descend(&mut Reader::new(&deep)).unwrap_err();
    assert_eq!(e.kind(), &ProtoErrorKind::TooDeep);
}

#[test]
fn value_types_round_trip() {
    fn round<T: Value + PartialEq + std::fmt::Debug>(v: T) -> Vec<u8> {
        let mut w = Writer::new();
        put(&mut w, 1, &v);
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes);
        let (field, wire) = r.next_field().unwrap().unwrap();
        assert_eq!((field, wire), (1, T::WIRE));
        assert_eq!(T::read(1, &mut r).unwrap(), v);
        assert!(r.is_empty());
        bytes
    }
    round(Quantity::from("500m"));
    round(IntOrString::Int(-3));
    round(IntOrString::String("25%".into()));
    // A type Go does not write reads as the int, as Go's accessors read it.
    let mut w = Writer::new();
    w.tag(1, WireType::Len);
    w.nested(|w| {
        put(w, 1, &7i64);
        put(w, 2, &8i32);
        put(w, 3, &"x".to_string());
    });
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    r.next_field().unwrap();
    assert_eq!(IntOrString::read(1, &mut r).unwrap(), IntOrString::Int(8));
    round(Time(1_700_000_000));
    // Go's zero time is an empty message.
    assert_eq!(round(Time::ZERO), [0x0a, 0x00]);
    round(MicroTime(1_700_000_000_123_456));
    round(MicroTime(-1_500_001));
    round(RawJson::from_string(r#"{"a":[1,2]}"#.into()).unwrap());
    round(RawJson::default());
    let set = round(FieldsV1::from_string(r#"{"f:metadata":{}}"#.into()).unwrap());
    // FieldsV1 read twice shares one allocation.
    let read = |bytes: &[u8]| {
        let mut r = Reader::new(bytes);
        r.next_field().unwrap();
        FieldsV1::read(1, &mut r).unwrap()
    };
    assert!(read(&set).ptr_eq(&read(&set)));
    round(1.5f64);
    round(true);
    round(i64::MIN);
}

/// A raw field holds the bytes a client stored, which the server does not check for UTF-8:
/// they read as Go's JSON decoder reads them (as the same object's JSON does), not as an error
/// that would make every list holding the object unreadable.
#[test]
fn raw_json_that_is_not_utf8_reads_as_go_reads_it() {
    let mut w = Writer::new();
    w.tag(1, WireType::Len);
    w.nested(|w| {
        w.tag(1, WireType::Len);
        w.bytes(b" {\"a\":\"x\xffy\xe2\x82\",\"b\":\"\\ud800\"}\n");
    });
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    r.next_field().unwrap();
    let raw = RawJson::read(1, &mut r).unwrap();
    assert_eq!(
        raw.get(),
        "{\"a\":\"x\u{fffd}y\u{fffd}\u{fffd}\",\"b\":\"\\ud800\"}"
    );
    assert!(r.is_empty());
}

#[test]
fn raw_json_that_is_not_json_is_an_error_without_the_text() {
    let mut w = Writer::new();
    w.tag(1, WireType::Len);
    w.nested(|w| {
        w.tag(1, WireType::Len);
        w.bytes(b"{secret");
    });
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    r.next_field().unwrap();
    let e = RawJson::read(1, &mut r).unwrap_err();
    assert!(e.to_string().contains("does not hold JSON"), "{e}");
    assert!(!e.to_string().contains("secret"), "{e}");
    // A field set is checked too (unless an equal, checked set is already shared).
    let mut r = Reader::new(&bytes);
    r.next_field().unwrap();
    let e = FieldsV1::read(1, &mut r).unwrap_err();
    assert!(e.to_string().contains("does not hold JSON"), "{e}");
    assert!(!e.to_string().contains("secret"), "{e}");
    for not_json in [&b"{\"f:a\":{}"[..], b"{} {}", b"{\"f:a\":tru}", b"\"\\x\""] {
        let mut w = Writer::new();
        w.tag(1, WireType::Len);
        w.nested(|w| {
            w.tag(1, WireType::Len);
            w.bytes(not_json);
        });
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes);
        r.next_field().unwrap();
        assert!(
            FieldsV1::read(1, &mut r).is_err(),
            "{:?} was taken for JSON",
            String::from_utf8_lossy(not_json)
        );
    }
}

/// A small deterministic generator (xorshift), so the mutation cases are the same every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Mutates `bytes` 3,000 ways (truncation, bit flips, huge length prefixes spliced in) and
/// decodes each with `decode` (true when it decoded): it must return, never panic, and a good
/// share of the mutations must be rejected.
pub(crate) fn mutate_and_decode(bytes: &[u8], decode: impl Fn(&[u8]) -> bool) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut errors = 0;
    for i in 0..3_000 {
        let mut input = bytes.to_vec();
        match i % 3 {
            0 => {
                let cut = rng.below(input.len());
                input.truncate(cut);
            }
            1 => {
                for _ in 0..1 + rng.below(4) {
                    let at = rng.below(input.len());
                    input[at] ^= 1 << rng.below(8);
                }
            }
            _ => {
                let at = rng.below(input.len());
                let huge = [0xff, 0xff, 0xff, 0xff, 0x0f];
                input.splice(at..at, huge);
            }
        }
        if !decode(&input) {
            errors += 1;
        }
    }
    assert!(
        errors > 500,
        "only {errors} of 3000 mutations failed to decode"
    );
}

#[test]
fn mutated_status_never_panics() {
    let bytes = sample_status().encode_protobuf();
    mutate_and_decode(&bytes, |b| Status::decode_protobuf(b).is_ok());
}

#[test]
fn envelope_round_trips_and_rejects_json() {
    let status = sample_status();
    let body = encode("v1", "Status", &status);
    assert!(body.starts_with(b"k8s\0"));
    let u = Unknown::decode(&body).unwrap();
    assert_eq!((u.api_version, u.kind), ("v1", "Status"));
    let decoded = decode_status(&body).unwrap().unwrap();
    assert_eq!(decoded.kind, "Status");
    assert_eq!(decoded.code, 404);
    let err = crate::Error::from_status(decoded);
    assert!(err.is_not_found());
    let e = Unknown::decode(br#"{"kind":"Status"}"#).unwrap_err();
    assert!(e.to_string().contains("k8s\\0 prefix"), "{e}");
    // Another kind is not a Status.
    let other = encode("v1", "ListMeta", &ListMeta::default());
    assert!(decode_status(&other).is_none());
}

#[test]
fn list_envelope_round_trips() {
    let list = crate::ObjectList {
        metadata: ListMeta {
            resource_version: "9".into(),
            continue_token: "next".into(),
            ..Default::default()
        },
        items: vec![sample_status(), Status::default()],
    };
    let body = encode("v1", "StatusList", &list);
    let back: crate::ObjectList<Status> = decode_object(&body).unwrap();
    assert_eq!(back, list);
}

#[test]
fn watch_frames_split_and_decode_every_event_type() {
    use crate::meta::v1::ObjectMeta;
    use crate::{WatchEvent, meta::StrMap};
    let meta = |rv: &str| ObjectMeta {
        name: Some("a".into()),
        resource_version: Some(rv.into()),
        ..Default::default()
    };
    let mut stream = Vec::new();
    for (t, rv) in [("ADDED", "1"), ("MODIFIED", "2"), ("DELETED", "3")] {
        stream.extend(encode_watch_frame(
            t,
            &encode("v1", "ObjectMeta", &meta(rv)),
        ));
    }
    let bookmark = ObjectMeta {
        resource_version: Some("4".into()),
        annotations: Some(StrMap::from([(
            crate::INITIAL_EVENTS_END_ANNOTATION.into(),
            "true".into(),
        )])),
        ..Default::default()
    };
    // A bookmark's object is a whole kind whose field 1 is its metadata.
    let mut w = Writer::new();
    put(&mut w, 1, &bookmark);
    let mut object = MAGIC.to_vec();
    let mut env = Writer::new();
    env.tag(2, WireType::Len);
    env.bytes(&w.into_vec());
    object.extend(env.into_vec());
    stream.extend(encode_watch_frame("BOOKMARK", &object));
    let mut expired = sample_status();
    expired.code = 410;
    expired.reason = "Expired".into();
    stream.extend(encode_watch_frame(
        "ERROR",
        &encode("v1", "Status", &expired),
    ));

    // The frames, split by their length prefixes (rest's watch stream does it as chunks
    // arrive; its tests feed it in awkward pieces).
    let mut events = Vec::new();
    let mut rest = &stream[..];
    while !rest.is_empty() {
        let len = u32::from_be_bytes(rest[..4].try_into().unwrap()) as usize;
        events.push(decode_watch_event::<ObjectMeta>(&rest[4..4 + len]).unwrap());
        rest = &rest[4 + len..];
    }
    assert_eq!(events.len(), 5);
    assert!(
        matches!(&events[0], WatchEvent::Added(m) if m.resource_version.as_deref() == Some("1"))
    );
    assert!(matches!(&events[1], WatchEvent::Modified(_)));
    assert!(
        matches!(&events[2], WatchEvent::Deleted(m) if m.resource_version.as_deref() == Some("3"))
    );
    match &events[3] {
        WatchEvent::Bookmark(b) => {
            assert_eq!(b.resource_version, "4");
            assert!(b.is_initial_events_end());
        }
        other => panic!("expected a bookmark, got {other:?}"),
    }
    match &events[4] {
        WatchEvent::Error(status) => {
            assert!(crate::Error::from_status((**status).clone()).is_resource_expired());
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn mutated_watch_frames_never_panic() {
    use crate::meta::v1::ObjectMeta;
    let meta = ObjectMeta {
        name: Some("web".into()),
        labels: Some(crate::meta::StrMap::from([("app".into(), "web".into())])),
        creation_timestamp: Some(Time(1_700_000_000)),
        ..Default::default()
    };
    let frame = encode_watch_frame("ADDED", &encode("v1", "ObjectMeta", &meta));
    // Without its length prefix (rest's watch stream splits frames; its tests mutate those).
    mutate_and_decode(&frame[4..], |b| decode_watch_event::<ObjectMeta>(b).is_ok());
}

#[test]
fn varints_cut_short_are_truncated_at_every_length() {
    for v in [128u64, 16_383, 16_384, u64::MAX] {
        let mut w = Writer::new();
        w.varint(v);
        let bytes = w.into_vec();
        for cut in 0..bytes.len() {
            let err = Reader::new(&bytes[..cut]).varint().unwrap_err();
            assert_eq!(err.kind(), &ProtoErrorKind::Truncated, "{v} cut at {cut}");
        }
    }
}

#[test]
fn next_is_matches_one_and_two_byte_tags_and_reads_overlong_ones_the_slow_way() {
    // Field 2 (one-byte tag), field 20 (two bytes), field 3000 (three bytes).
    for field in [2u32, 20, 3000] {
        let mut w = Writer::new();
        for item in ["a", "b"] {
            put(&mut w, field, &item.to_string());
        }
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes);
        assert_eq!(r.next_field().unwrap(), Some((field, WireType::Len)));
        r.bytes().unwrap();
        assert!(!r.next_is(field + 1, WireType::Len), "another field");
        assert!(!r.next_is(field, WireType::Varint), "another wire type");
        assert!(r.next_is(field, WireType::Len), "field {field}");
        assert_eq!(r.bytes().unwrap(), b"b");
        assert!(r.is_empty());
        assert!(!r.next_is(field, WireType::Len), "the end");
    }
    // Tag 2/Len written overlong (0x92 0x00 rather than 0x12): not a repeat for `next_is`,
    // but the next `next_field` reads it, so a list split there still gets both values.
    let bytes = [0x12, 1, b'a', 0x92, 0x00, 1, b'b'];
    let mut r = Reader::new(&bytes);
    let mut list = crate::meta::List::<String>::new();
    while let Some((field, wire)) = r.next_field().unwrap() {
        assert_eq!(field, 2);
        merge_list(&mut list, field, wire, &mut r).unwrap();
    }
    assert_eq!(&*list, ["a", "b"]);
}

#[test]
fn strings_read_as_istr_keep_their_text() {
    use crate::meta::IStr;
    let long = "registry.example.com/team/app:v1.2.3";
    for text in [
        "",
        "web",
        "fourteen bytes",
        "zone-b \u{e9}t\u{e9}",
        long,
        "\u{1f600} long emoji text here",
    ] {
        let mut w = Writer::new();
        put(&mut w, 1, &text.to_string());
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes);
        r.next_field().unwrap();
        assert_eq!(IStr::read(1, &mut r).unwrap(), text);
    }
}

/// Go's strings are bytes and its decoder does not check them: a string that is not UTF-8
/// (which any Go client can store, in an annotation or a ConfigMap value) reads with each byte
/// that does not start a valid sequence replaced by U+FFFD, as Go's JSON encoder writes it
/// (checked against the apiserver in kclient-rest's `protobuf_strings` test), into every
/// string type, short (inline) and long (interned; also when the same bytes' valid prefix is
/// interned already).
#[test]
fn strings_that_are_not_utf8_read_as_gos_json_shows_them() {
    use crate::meta::IStr;
    use compact_str::CompactString;
    let long = "registry.example.com/team/app:v1.2.3";
    let _ = IStr::new(long);
    let cases: [(Vec<u8>, String); 6] = [
        (b"a\xff".to_vec(), "a\u{fffd}".into()),
        (b"\xc3".to_vec(), "\u{fffd}".into()),
        // A cut three-byte sequence is two bad bytes; a surrogate's encoding three.
        (
            b"a\x80b\xe2\x82c\xffd".to_vec(),
            "a\u{fffd}b\u{fffd}\u{fffd}c\u{fffd}d".into(),
        ),
        (b"\xed\xa0\x80".to_vec(), "\u{fffd}\u{fffd}\u{fffd}".into()),
        (
            b"caf\xc3\xa9 \xf0\x9f".to_vec(),
            "caf\u{e9} \u{fffd}\u{fffd}".into(),
        ),
        (
            [long.as_bytes(), b"\xff"].concat(),
            format!("{long}\u{fffd}"),
        ),
    ];
    for (bad, want) in cases {
        let bad = bad.as_slice();
        let mut w = Writer::new();
        w.tag(7, WireType::Len);
        w.bytes(bad);
        put(&mut w, 8, &"next".to_string());
        let bytes = w.into_vec();
        let read = |check: &dyn Fn(&mut Reader<'_>)| {
            let mut r = Reader::new(&bytes);
            r.next_field().unwrap();
            check(&mut r);
            assert_eq!(r.next_field().unwrap(), Some((8, WireType::Len)), "{bad:?}");
        };
        read(&|r| assert_eq!(IStr::read(7, r).unwrap(), want.as_str(), "{bad:?}"));
        read(&|r| assert_eq!(String::read(7, r).unwrap(), want, "{bad:?}"));
        read(&|r| assert_eq!(CompactString::read(7, r).unwrap(), want, "{bad:?}"));
    }
    // A Status whose message is not UTF-8 still reads (and so keeps its code and reason).
    let status = Status::decode_protobuf(b"\x1a\x02a\xff\x30\x94\x03").unwrap();
    assert_eq!((status.message.as_str(), status.code), ("a\u{fffd}", 404));
}

#[test]
fn a_run_of_repeated_values_is_counted_ahead_without_reading_it() {
    let mut w = Writer::new();
    for item in ["a", "bb", "ccc"] {
        put(&mut w, 2, &item.to_string());
    }
    put(&mut w, 3, &"other".to_string());
    put(&mut w, 2, &"later".to_string());
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    assert_eq!(r.next_field().unwrap(), Some((2, WireType::Len)));
    assert_eq!(r.count_len_run(2), 3, "the run stops at field 3");
    // Counting moved nothing: the three values still read in order.
    let mut list = crate::meta::List::<String>::new();
    merge_list(&mut list, 2, WireType::Len, &mut r).unwrap();
    assert_eq!(&*list, ["a", "bb", "ccc"]);
    // A length past the end stops the count (the read then fails as before).
    let cut = &bytes[..bytes.len() - 10];
    let mut r = Reader::new(cut);
    r.next_field().unwrap();
    assert!(r.count_len_run(2) <= 3);
    assert!(r.count_len_run(2) >= 1);
}

/// Reads `bytes`, one map field's run of entries, as a string map: its pairs in order. The
/// run must be all of `bytes`.
fn read_str_map(bytes: &[u8]) -> Result<Vec<(String, String)>, ProtoError> {
    let mut r = Reader::new(bytes);
    let (field, wire) = r.next_field()?.expect("a map field");
    let mut map = crate::meta::StrMap::new();
    merge_map(&mut map, field, wire, &mut r)?;
    assert!(r.is_empty(), "bytes left after the map");
    Ok(map
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect())
}

#[test]
fn map_entries_out_of_order_or_repeated_read_as_go_reads_them() {
    let mut w = Writer::new();
    for (k, v) in [("b", "2"), ("a", "1"), ("b", "3")] {
        w.tag(1, WireType::Len);
        w.nested(|w| {
            put(w, 1, &k.to_string());
            put(w, 2, &v.to_string());
        });
    }
    assert_eq!(
        read_str_map(&w.into_vec()).unwrap(),
        [("a".into(), "1".into()), ("b".into(), "3".into())],
        "sorted, the later of two equal keys kept"
    );
}

#[test]
fn strings_past_the_short_path_and_cut_short_still_read_or_fail_as_before() {
    use crate::meta::IStr;
    // A one-byte length and a two-byte one (128 bytes and more), inline and interned sizes.
    for len in [0usize, 1, 14, 15, 127, 128, 300] {
        let text = "x".repeat(len);
        let mut w = Writer::new();
        put(&mut w, 1, &text);
        put(&mut w, 2, &"next".to_string());
        let bytes = w.into_vec();
        let mut r = Reader::new(&bytes);
        r.next_field().unwrap();
        assert_eq!(
            IStr::read(1, &mut r).unwrap(),
            text.as_str(),
            "length {len}"
        );
        assert_eq!(
            r.next_field().unwrap(),
            Some((2, WireType::Len)),
            "after length {len}"
        );
    }
    // A length past the end: the same error, at the length's offset, whatever its size.
    for cut in [&[0x0a, 5, b'a', b'b'][..], &[0x0a, 0x80, 0x01, b'a'][..]] {
        let mut r = Reader::new(cut);
        r.next_field().unwrap();
        let err = IStr::read(1, &mut r).unwrap_err();
        assert!(
            matches!(err.kind(), ProtoErrorKind::LengthPastEnd { .. }),
            "{err:?}"
        );
        assert_eq!(err.offset(), 1 + if cut[1] == 5 { 1 } else { 2 }, "{err:?}");
    }
}

#[test]
fn map_entries_of_any_shape_read_as_the_general_loop_reads_them() {
    // (fields of one entry as written, the entry read): Go writes key then value; anything
    // else must still read as Go reads it (missing parts are zero, a later field wins,
    // unknown fields are skipped).
    type Field<'a> = (u32, &'a str);
    let cases: [(&[Field<'_>], (&str, &str)); 7] = [
        (&[(1, "k"), (2, "v")], ("k", "v")),
        (&[(2, "v"), (1, "k")], ("k", "v")),
        (&[(1, "k")], ("k", "")),
        (&[(2, "v")], ("", "v")),
        (&[], ("", "")),
        (&[(1, "k"), (2, "v"), (9, "skipped"), (2, "w")], ("k", "w")),
        (&[(1, "k"), (1, "l"), (2, "v")], ("l", "v")),
    ];
    for (fields, want) in cases {
        let mut w = Writer::new();
        w.tag(1, WireType::Len);
        w.nested(|w| {
            for (f, text) in fields {
                put(w, *f, &text.to_string());
            }
        });
        assert_eq!(
            read_str_map(&w.into_vec()).unwrap(),
            [(want.0.into(), want.1.into())],
            "{fields:?}"
        );
    }
    // A value of the wrong wire type is an error in every position.
    for value_first in [false, true] {
        let mut w = Writer::new();
        w.tag(1, WireType::Len);
        w.nested(|w| {
            if !value_first {
                put(w, 1, &"k".to_string());
            }
            w.tag(2, WireType::Varint);
            w.varint(7);
            if value_first {
                put(w, 1, &"k".to_string());
            }
        });
        let err = read_str_map(&w.into_vec()).unwrap_err();
        assert!(
            matches!(err.kind(), ProtoErrorKind::WrongWireType { .. }),
            "{err:?}"
        );
    }
}

#[test]
fn a_zero_timestamp_reads_as_absent_from_protobuf_and_from_json() {
    use crate::meta::v1::ObjectMeta;
    // Go writes a zero time in an optional field as an empty message (field 8,
    // creationTimestamp), and as JSON `null`, which some writers spell as the date itself.
    let mut w = Writer::new();
    w.tag(1, WireType::Len);
    w.bytes(b"a");
    w.tag(8, WireType::Len);
    w.nested(|_| {});
    let from_protobuf = ObjectMeta::decode_protobuf(&w.into_vec()).unwrap();
    for json in [
        r#"{"name":"a","creationTimestamp":"0001-01-01T00:00:00Z"}"#,
        r#"{"name":"a","creationTimestamp":null}"#,
    ] {
        let from_json: ObjectMeta = crate::decode_json(json.as_bytes()).unwrap();
        assert_eq!(from_json, from_protobuf, "{json}");
    }
    assert_eq!(from_protobuf.creation_timestamp, None);
    assert_eq!(from_protobuf.name.as_deref(), Some("a"));
}

/// A list as a map value (`ExtraValue`, `Verbs`) is a message whose items are its field 1,
/// whatever field number the map has: another field of the wrapper, even one numbered as the
/// map, is unknown and skipped (as Go's `ExtraValue.Unmarshal` skips it), not an item.
#[test]
fn a_wrapped_list_reads_only_field_1_of_its_message_as_items() {
    use crate::meta::{IStr, List};
    let mut w = Writer::new();
    w.tag(6, WireType::Len);
    w.nested(|w| {
        put(w, 1, &"a".to_string());
        put(w, 6, &"not an item".to_string());
        put(w, 1, &"b".to_string());
        put(w, 1, &"c".to_string());
    });
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    assert_eq!(r.next_field().unwrap(), Some((6, WireType::Len)));
    let list = List::<IStr>::read(6, &mut r).unwrap();
    assert_eq!(&*list, ["a", "b", "c"]);
    assert!(r.is_empty());
}

/// A message field seen twice merges: a wrapped list (`Verbs`) appends the second one's items,
/// as Go's `Verbs.Unmarshal` appends. A map entry's value seen twice is the last one, as Go
/// reads each into a fresh value (`mapvalue := &ExtraValue{}`), whatever its type.
#[test]
fn a_wrapped_list_seen_twice_appends_and_a_map_value_seen_twice_is_the_last() {
    use crate::meta::v1::APIResource;
    use crate::meta::{IStr, List, Map};
    let mut w = Writer::new();
    put(&mut w, 1, &"pods".to_string());
    for verbs in [&["get", "list"][..], &["watch"][..]] {
        w.tag(4, WireType::Len);
        w.nested(|w| {
            for verb in verbs {
                put(w, 1, &verb.to_string());
            }
        });
    }
    let resource = APIResource::decode_protobuf(&w.into_vec()).unwrap();
    assert_eq!(&*resource.verbs, ["get", "list", "watch"]);

    let mut w = Writer::new();
    w.tag(6, WireType::Len);
    w.nested(|w| {
        put(w, 1, &"k".to_string());
        for value in ["a", "b"] {
            w.tag(2, WireType::Len);
            w.nested(|w| put(w, 1, &value.to_string()));
        }
    });
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    let (field, wire) = r.next_field().unwrap().unwrap();
    let mut map: Map<IStr, List<IStr>> = Map::new();
    merge_map(&mut map, field, wire, &mut r).unwrap();
    assert_eq!(map.get("k").map(|l| &**l), Some(&["b".into()][..]));
}

/// Go's zero `Quantity` is `"0"` (its `String()`): a Quantity message without its string, and a
/// map entry without its value, read as that, as Go's `Quantity.Unmarshal` and a generated
/// map entry (`mapvalue := &resource.Quantity{}`) leave them. An empty string stays empty.
#[test]
fn a_quantity_without_its_string_is_go_s_zero_quantity() {
    use crate::meta::{IStr, Map};
    let read = |bytes: &[u8]| {
        let mut r = Reader::new(bytes);
        r.next_field().unwrap();
        Quantity::read(1, &mut r).unwrap()
    };
    assert_eq!(read(&[0x0a, 0x00]).as_str(), "0");
    assert_eq!(read(&[0x0a, 0x02, 0x0a, 0x00]).as_str(), "");

    let mut w = Writer::new();
    for (key, value) in [("cpu", None), ("memory", Some("1Gi"))] {
        w.tag(1, WireType::Len);
        w.nested(|w| {
            put(w, 1, &key.to_string());
            if let Some(value) = value {
                put(w, 2, &Quantity::from(value));
            }
        });
    }
    let bytes = w.into_vec();
    let mut r = Reader::new(&bytes);
    let (field, wire) = r.next_field().unwrap().unwrap();
    let mut map: Map<IStr, Quantity> = Map::new();
    merge_map(&mut map, field, wire, &mut r).unwrap();
    assert_eq!(map.get("cpu").map(Quantity::as_str), Some("0"));
    assert_eq!(map.get("memory").map(Quantity::as_str), Some("1Gi"));
}

// ---- fields repeated out of line ----
//
// Protobuf lets a field come back after other fields (a map's entries, a list's elements, a
// message seen again merges into the first), though Go never writes that. A hostile or buggy
// server's message of N such occurrences must cost about what the same content costs written
// in line: rebuilding a frozen map or list for every occurrence copies it whole each time,
// O(N^2) in all. The cost is counted deterministically, as the elements the decoder places in
// frozen maps and lists on this thread (`FROZEN`).

mod out_of_line {
    use super::*;
    use crate::meta::PartialObjectMetadata;
    use crate::meta::v1::ObjectMeta;

    /// Occurrences in each message: enough that O(N^2) is thousands of times O(N).
    const N: usize = 10_000;

    /// Decodes `bytes` as a `T`, with the elements placed in frozen maps and lists meanwhile.
    fn decode_counting<T: Message>(bytes: &[u8]) -> (T, usize) {
        let before = FROZEN.with(std::cell::Cell::get);
        let value = T::decode_protobuf(bytes).expect("decodes");
        (value, FROZEN.with(std::cell::Cell::get) - before)
    }

    fn put_str(w: &mut Writer, field: u32, text: &str) {
        w.tag(field, WireType::Len);
        w.bytes(text.as_bytes());
    }

    fn put_entry(w: &mut Writer, field: u32, key: &str, value: &str) {
        w.tag(field, WireType::Len);
        w.nested(|w| {
            put_str(w, 1, key);
            put_str(w, 2, value);
        });
    }

    /// The `i`th label's key: half as many keys as labels, so that each key comes twice and
    /// the later value must win.
    fn key(i: usize) -> String {
        format!("key-{:05}", i % (N / 2))
    }

    /// ObjectMeta fields of occurrence `i`: a label (11), a finalizer (14) and the name (1);
    /// written one occurrence after another, each field's occurrences interleave.
    fn put_meta_fields(w: &mut Writer, i: usize) {
        put_entry(w, 11, &key(i), &format!("value-{i}"));
        put_str(w, 14, &format!("finalizer-{i}"));
        put_str(w, 1, &format!("name-{i}"));
    }

    /// The in-line form of occurrences `0..N`: the name, the labels, the finalizers, each
    /// field's occurrences together.
    fn in_line() -> Vec<u8> {
        let mut w = Writer::new();
        put_str(&mut w, 1, &format!("name-{}", N - 1));
        for i in 0..N {
            put_entry(&mut w, 11, &key(i), &format!("value-{i}"));
        }
        for i in 0..N {
            put_str(&mut w, 14, &format!("finalizer-{i}"));
        }
        w.into_vec()
    }

    /// What occurrences `0..N` decode to in any layout (the last name, each key's last value,
    /// every finalizer in order), and what that costs in line.
    fn expected() -> (ObjectMeta, usize) {
        let (meta, cost) = decode_counting::<ObjectMeta>(&in_line());
        assert_eq!(
            meta.name.as_deref(),
            Some(format!("name-{}", N - 1).as_str())
        );
        let labels = meta.labels.as_ref().expect("labels");
        assert_eq!(labels.len(), N / 2);
        assert_eq!(
            labels.get(&key(0)).map(|v| v.as_str()),
            Some(format!("value-{}", N / 2).as_str()),
            "the later of two equal keys wins"
        );
        assert_eq!(meta.finalizers.as_ref().map(|f| f.len()), Some(N));
        (meta, cost)
    }

    #[test]
    fn interleaved_map_entries_and_list_elements_cost_what_in_line_ones_cost() {
        let mut w = Writer::new();
        for i in 0..N {
            put_meta_fields(&mut w, i);
        }
        let (meta, cost) = decode_counting::<ObjectMeta>(&w.into_vec());
        let (want, in_line) = expected();
        assert_eq!(meta, want, "protobuf's merge: later keys and scalars win");
        assert!(
            cost <= 2 * in_line,
            "{N} interleaved occurrences placed {cost} elements, in line {in_line}"
        );
    }

    /// A message field seen again merges into the first: `metadata` written N times, one
    /// label and one finalizer each, costs what one `metadata` holding them all costs.
    #[test]
    fn a_message_seen_many_times_costs_what_it_costs_once() {
        let mut w = Writer::new();
        for i in 0..N {
            w.tag(1, WireType::Len);
            w.nested(|w| put_meta_fields(w, i));
        }
        let (object, cost) = decode_counting::<PartialObjectMetadata>(&w.into_vec());
        let (want, in_line) = expected();
        assert_eq!(
            object.metadata, want,
            "each occurrence merges into the first"
        );
        assert!(
            cost <= 2 * in_line,
            "{N} occurrences of metadata placed {cost} elements, one of them all {in_line}"
        );
    }

    /// A message of the tests: a repeated scalar (2), a repeated string numbered past the
    /// tracked fields (70), a string (1).
    #[derive(Debug, Default, PartialEq)]
    struct Probe {
        name: String,
        ints: List<i64>,
        far: List<IStr>,
    }

    impl Message for Probe {
        fn merge_field(
            &mut self,
            field: u32,
            wire: WireType,
            r: &mut Reader<'_>,
        ) -> Result<(), ProtoError> {
            match field {
                1 => merge(&mut self.name, field, wire, r),
                2 => merge_list(&mut self.ints, field, wire, r),
                70 => merge_list(&mut self.far, field, wire, r),
                _ => r.skip(wire),
            }
        }
        fn encode_fields(&self, _: &mut Writer) {}
    }

    use crate::meta::{IStr, List};

    #[test]
    fn packed_and_unpacked_elements_and_untracked_fields_interleaved_read_in_order() {
        let mut w = Writer::new();
        let packed = |w: &mut Writer, values: &[u64]| {
            w.tag(2, WireType::Len);
            w.nested(|w| values.iter().for_each(|v| w.varint(*v)));
        };
        packed(&mut w, &[1, 2]);
        put_str(&mut w, 70, "a");
        put_str(&mut w, 1, "x");
        w.tag(2, WireType::Varint);
        w.varint(3);
        put_str(&mut w, 70, "b");
        put_str(&mut w, 1, "y");
        packed(&mut w, &[4, 5]);
        w.tag(2, WireType::Varint);
        w.varint(6);
        put_str(&mut w, 1, "z");
        put_str(&mut w, 70, "c");
        packed(&mut w, &[]);
        let probe = Probe::decode_protobuf(&w.into_vec()).unwrap();
        assert_eq!(&*probe.ints, [1, 2, 3, 4, 5, 6]);
        assert_eq!(&*probe.far, ["a", "b", "c"], "untracked, read one by one");
        assert_eq!(probe.name, "z");
    }

    /// A list wrapper (`Verbs`, field 4 of APIResource) seen again after other fields appends.
    #[test]
    fn a_list_wrapper_back_after_other_fields_appends() {
        use crate::meta::v1::APIResource;
        let mut w = Writer::new();
        for (i, verb) in ["get", "list", "watch"].iter().enumerate() {
            w.tag(4, WireType::Len);
            w.nested(|w| put_str(w, 1, verb));
            put_str(&mut w, 1, &format!("pods{i}"));
        }
        let resource = APIResource::decode_protobuf(&w.into_vec()).unwrap();
        assert_eq!(&*resource.verbs, ["get", "list", "watch"]);
        assert_eq!(resource.name, "pods2");
    }

    /// Errors in an occurrence read with others still fail, at their offset in the input;
    /// an empty occurrence reads as nothing.
    #[test]
    fn occurrences_read_together_fail_where_they_are_malformed() {
        // metadata three times, the last holding a label whose value has the wrong wire type:
        // the error is at the value's tag, the input's last byte but one.
        let mut w = Writer::new();
        w.tag(1, WireType::Len);
        w.nested(|w| put_str(w, 1, "a"));
        w.tag(1, WireType::Len);
        w.nested(|_| {});
        w.tag(1, WireType::Len);
        w.nested(|w| {
            w.tag(11, WireType::Len);
            w.nested(|w| {
                put_str(w, 1, "k");
                w.tag(2, WireType::Varint);
                w.varint(7);
            });
        });
        let bytes = w.into_vec();
        let err = PartialObjectMetadata::decode_protobuf(&bytes).unwrap_err();
        assert!(
            matches!(err.kind(), ProtoErrorKind::WrongWireType { field: 11, .. }),
            "{err:?}"
        );
        assert_eq!(err.offset(), bytes.len() - 1, "{err:?}");

        // The same message without the bad label: the empty occurrence adds nothing.
        let mut w = Writer::new();
        for body in [&b"\x0a\x01a"[..], b"", b"\x0a\x01b"] {
            w.tag(1, WireType::Len);
            w.bytes(body);
        }
        let object = PartialObjectMetadata::decode_protobuf(&w.into_vec()).unwrap();
        assert_eq!(object.metadata.name.as_deref(), Some("b"));

        // A later occurrence of the wrong wire type, or one cut short.
        let mut w = Writer::new();
        for name in ["a", "b"] {
            w.tag(1, WireType::Len);
            w.nested(|w| put_str(w, 1, name));
        }
        let good = w.into_vec();
        let mut wrong = good.clone();
        wrong.extend([1 << 3, 5]);
        let err = PartialObjectMetadata::decode_protobuf(&wrong).unwrap_err();
        assert!(
            matches!(err.kind(), ProtoErrorKind::WrongWireType { field: 1, .. }),
            "{err:?}"
        );
        let mut cut = good;
        cut.extend([(1 << 3) | 2, 9, 0x0a]);
        let err = PartialObjectMetadata::decode_protobuf(&cut).unwrap_err();
        assert!(
            matches!(err.kind(), ProtoErrorKind::LengthPastEnd { .. }),
            "{err:?}"
        );

        // Map entries and list elements back after other fields, one of them malformed.
        for field in [11u32, 14] {
            let mut w = Writer::new();
            for i in 0..3 {
                put_meta_fields(&mut w, i);
            }
            w.tag(field, WireType::Varint);
            w.varint(1);
            let err = ObjectMeta::decode_protobuf(&w.into_vec()).unwrap_err();
            assert!(
                matches!(err.kind(), ProtoErrorKind::WrongWireType { .. }),
                "field {field}: {err:?}"
            );
        }
    }

    /// A message embedding another's fields (field 3, a Go struct embedded in a protobuf
    /// message: a list, field 2), as the generated code reads one.
    #[derive(Debug, Default, PartialEq)]
    struct Embedding {
        name: String,
        ints: List<i64>,
    }

    impl Message for Embedding {
        fn merge_field(
            &mut self,
            field: u32,
            wire: WireType,
            r: &mut Reader<'_>,
        ) -> Result<(), ProtoError> {
            match field {
                1 => merge(&mut self.name, field, wire, r),
                3 => merge_embedded(field, wire, r, |field, wire, r| match field {
                    2 => merge_list(&mut self.ints, field, wire, r),
                    _ => r.skip(wire),
                }),
                _ => r.skip(wire),
            }
        }
        fn encode_fields(&self, _: &mut Writer) {}
    }

    /// An embedded message seen N times, one element each, costs what it costs once.
    #[test]
    fn an_embedded_message_seen_many_times_costs_what_it_costs_once() {
        let mut w = Writer::new();
        for i in 0..N {
            w.tag(3, WireType::Len);
            w.nested(|w| {
                w.tag(2, WireType::Varint);
                w.varint(i as u64);
            });
            put_str(&mut w, 1, &format!("name-{i}"));
        }
        let (embedding, cost) = decode_counting::<Embedding>(&w.into_vec());
        assert_eq!(embedding.ints.len(), N);
        assert!(
            embedding
                .ints
                .iter()
                .enumerate()
                .all(|(i, v)| *v == i as i64)
        );
        assert_eq!(embedding.name, format!("name-{}", N - 1));
        assert!(cost <= 2 * N, "{N} occurrences placed {cost} elements");
    }
}
