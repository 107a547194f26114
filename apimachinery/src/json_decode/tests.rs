//! Differential tests: kclient's decoder must read what `serde_json` reads, to the same values,
//! and reject what it rejects.

use std::collections::{BTreeMap, HashMap};

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::Value;

use super::scan::{MAX_DEPTH, SERVER_MAX_DEPTH};
use super::*;
use crate::json_decode::go_reading::{go_escapes, go_text};
use crate::meta::{FieldsV1, RawJson};
use crate::test_support::{dismantle, nested_objects, on_small_stack};

/// Both decoders' results for `text`, as `serde_json::Value`s. `serde_json` reads the text as
/// Go reads it ([`go_text`], [`go_escapes`]), which kclient's decoder reads as it stands.
fn both(text: &[u8]) -> (Result<Value, JsonError>, Result<Value, serde_json::Error>) {
    (
        decode_json::<Value>(text),
        serde_json::from_slice::<Value>(&go_escapes(go_text(text).as_bytes())),
    )
}

/// Whether two values are equal, floats within two units in the last place: `serde_json`
/// without its `float_roundtrip` feature may round the last bit differently from Rust's
/// correctly rounded parser, which kclient's decoder uses (seen on a subnormal,
/// `-3.17565392679052e-309`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(x), Some(y)) => {
                    x == y
                        || (x.is_sign_negative() == y.is_sign_negative()
                            && x.to_bits().abs_diff(y.to_bits()) <= 2)
                }
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kx, x), (ky, y))| kx == ky && same(x, y))
        }
        _ => a == b,
    }
}

/// Requires that both decoders accept `text` with equal values, or both reject it.
fn agree(text: &[u8]) {
    match both(text) {
        (Ok(ours), Ok(theirs)) => assert!(
            same(&ours, &theirs),
            "{:?}: {ours} != {theirs}",
            String::from_utf8_lossy(text)
        ),
        (Err(_), Err(_)) => {}
        (ours, theirs) => panic!(
            "{:?}: kclient {ours:?}, serde_json {theirs:?}",
            String::from_utf8_lossy(text)
        ),
    }
}

#[test]
fn reads_what_serde_json_reads() {
    let texts = [
        r#"{"name":"web","n":[1,-2,3.5,0,-0,1e3,1E-3,-1.5e+2,0.0]}"#,
        r#"  { "a" : [ true , false , null ] , "b" : { } , "c" : [ ] }  "#,
        "\n\t{\r\n\"x\"\t:\n1}\n",
        r#""caf\u00e9 \ud83d\ude00 \" \\ \/ \b \f \n \r \t""#,
        r#"["é", "日本語", "😀", "a\u0000b"]"#,
        r#"{"a":{"a":{"a":{"a":[[[[{}]]]]}}}}"#,
        "18446744073709551615",
        "9999999999999999999",
        "-999999999999999999",
        "[0,-1,7,-0,0.5]",
        "18446744073709551616",
        "-9223372036854775808",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "1.7976931348623157e308",
        "5e-324",
        "0.1",
        "-0",
        "-0.0",
        r#"{"dup":1,"dup":2}"#,
        r#""""#,
        r#""\u0041\u00DF\uFFFF""#,
    ];
    for text in texts {
        agree(text.as_bytes());
        assert!(decode_json::<Value>(text.as_bytes()).is_ok(), "{text}");
    }
}

#[test]
fn rejects_what_serde_json_rejects() {
    let texts: &[&[u8]] = &[
        b"",
        b"   ",
        b"{",
        b"[",
        b"[1,]",
        b"[,1]",
        b"{,}",
        br#"{"a":1,}"#,
        br#"{"a" 1}"#,
        br#"{"a":}"#,
        br#"{1:2}"#,
        br#"{"a":1 "b":2}"#,
        b"[1 2]",
        b"nul",
        b"nulll",
        b"tru",
        b"fals",
        b"True",
        b"01",
        b"00.5",
        b"-01",
        b"-",
        b"-a",
        b"1.",
        b"1.e3",
        b"1e",
        b"1e+",
        b".5",
        b"+1",
        b"1e400",
        b"-1e400",
        b"\"abc",
        b"\"a\nb\"",
        b"\"\\x\"",
        b"\"\\u12\"",
        b"\"\\u12g4\"",
        b"\"\\ud800\\u12g4\"",
        b"\"\\ud800\\",
        b"\xff",
        b"[\xc3]",
        b"{\"a\"\xff:1}",
        b"1 2",
        b"{} x",
        b"[] ]",
        b"'a'",
        b"NaN",
        b"Infinity",
    ];
    for &text in texts {
        let (ours, theirs) = both(text);
        assert!(
            ours.is_err() && theirs.is_err(),
            "{:?}: kclient {ours:?}, serde_json {theirs:?}",
            String::from_utf8_lossy(text)
        );
    }
}

fn nested(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

fn nested_mixed(depth: usize) -> String {
    let open: String = (0..depth)
        .map(|i| if i % 2 == 0 { "[" } else { r#"{"k":"# })
        .collect();
    let close: String = (0..depth)
        .rev()
        .map(|i| if i % 2 == 0 { "]" } else { "}" })
        .collect();
    format!("{open}0{close}")
}

/// Arrays and objects alternating, each with a sibling after the one it holds, so that a
/// skip must know, level by level on the way out, which kind of container it is in.
fn nested_with_siblings(depth: usize) -> String {
    let open: String = (0..depth)
        .map(|i| if i % 3 == 0 { r#"{"k":"# } else { "[" })
        .collect();
    let close: String = (0..depth)
        .rev()
        .map(|i| if i % 3 == 0 { r#","z":0}"# } else { ",1]" })
        .collect();
    format!("{open}0{close}")
}

/// How many levels `value` nests, walked without recursion (`Unstructured`'s own count).
fn depth_of(value: &Value) -> usize {
    crate::unstructured::deep::levels(std::iter::once(value), 0)
}

/// The four shapes of nesting the tests decode, each `depth` levels deep.
fn shapes(depth: usize) -> [String; 4] {
    [
        nested(depth),
        nested_objects(depth),
        nested_mixed(depth),
        nested_with_siblings(depth),
    ]
}

#[test]
fn shallow_nesting_decodes_as_serde_json_decodes_it() {
    for depth in 1..=127 {
        let texts = shapes(depth);
        for text in texts {
            match both(text.as_bytes()) {
                (Ok(ours), Ok(theirs)) => assert!(same(&ours, &theirs), "{depth}"),
                (ours, theirs) => panic!("{text}: kclient {ours:?}, serde_json {theirs:?}"),
            }
        }
    }
}

#[test]
fn nesting_as_deep_as_the_apiserver_stores_decodes_on_a_small_stack() {
    on_small_stack(|| {
        let max = MAX_DEPTH as usize;
        // Past each 128 levels the skip keeps its open containers in another word.
        for depth in [128, 129, 255, 256, 257, 385, 1_000, max - 1, max] {
            let texts = shapes(depth);
            for text in texts {
                let value = decode_json::<Value>(text.as_bytes())
                    .unwrap_or_else(|e| panic!("{depth} levels: {e}"));
                assert_eq!(depth_of(&value), depth);
                dismantle(value);
                // Skipped, and captured raw, at the same depth.
                #[derive(Deserialize)]
                struct Skips {}
                decode_json::<serde::de::IgnoredAny>(text.as_bytes())
                    .unwrap_or_else(|e| panic!("skipping {depth} levels: {e}"));
                if depth < max {
                    let field = format!(r#"{{"ignored":{text}}}"#);
                    decode_json::<Skips>(field.as_bytes())
                        .unwrap_or_else(|e| panic!("skipping a field of {depth} levels: {e}"));
                }
                let raw = decode_json::<RawJson>(text.as_bytes())
                    .unwrap_or_else(|e| panic!("{depth} levels raw: {e}"));
                assert_eq!(raw.get(), text);
            }
        }
        // A container closed by the other kind's bracket, however deep, is an error.
        for depth in [200, 300, 1_000] {
            let arrays = format!("{}{}}}", "[".repeat(depth), "]".repeat(depth - 1));
            let objects = format!("{}0{}]", r#"{"k":"#.repeat(depth), "}".repeat(depth - 1));
            let swapped = nested_with_siblings(depth).replacen(r#","z":0}"#, r#","z":0]"#, 1);
            for text in [arrays, objects, swapped] {
                let err = decode_json::<serde::de::IgnoredAny>(text.as_bytes()).unwrap_err();
                assert!(err.is_syntax(), "{depth}: {err}");
                assert!(decode_json::<RawJson>(text.as_bytes()).is_err());
            }
        }
        // A typed object around a deep free-form field, as a custom resource's is: the
        // object at the server's limit, in a list.
        #[derive(Deserialize)]
        struct Item {
            spec: Value,
        }
        #[derive(Deserialize)]
        struct List {
            items: Vec<Item>,
        }
        let object = format!(
            r#"{{"spec":{{"x":{}}}}}"#,
            nested(SERVER_MAX_DEPTH as usize - 2)
        );
        let list =
            decode_json::<List>(format!(r#"{{"items":[{object},{object}]}}"#).as_bytes()).unwrap();
        assert_eq!(list.items.len(), 2);
        assert_eq!(1 + depth_of(&list.items[0].spec), SERVER_MAX_DEPTH as usize);
    });
}

#[test]
fn nesting_deeper_than_the_limit_is_a_clear_error_not_a_stack_overflow() {
    on_small_stack(|| {
        let max = MAX_DEPTH as usize;
        #[derive(Debug, Deserialize)]
        struct Skips {}
        for depth in [max + 1, 100_000] {
            let texts = shapes(depth);
            for text in texts {
                let errors = [
                    decode_json::<Value>(text.as_bytes()).unwrap_err(),
                    decode_json::<RawJson>(text.as_bytes()).unwrap_err(),
                    decode_json::<Skips>(format!(r#"{{"ignored":{text}}}"#).as_bytes())
                        .unwrap_err(),
                    decode_json::<serde::de::IgnoredAny>(text.as_bytes()).unwrap_err(),
                ];
                for err in errors {
                    assert!(err.is_syntax(), "{err:?}");
                    let message = err.to_string();
                    assert!(
                        message.starts_with(
                            "recursion limit exceeded: arrays and objects nest more than \
                             10003 levels deep (the apiserver stores objects up to 10000 \
                             levels) at line 1 column "
                        ),
                        "{message}"
                    );
                }
            }
        }
    });
}

#[test]
fn errors_name_the_problem_and_where() {
    let err = decode_json::<Value>(b"{\"a\" 1}").unwrap_err();
    assert!(err.is_syntax(), "{err:?}");
    assert_eq!((err.line(), err.column()), (1, 6));
    assert_eq!(err.to_string(), "expected `:` at line 1 column 6");

    let err = decode_json::<Value>(b"{\"a\":\n  [1,\n   tru]}").unwrap_err();
    assert_eq!(err.to_string(), "expected a value at line 3 column 4");

    let err = decode_json::<Value>(b"[1,2").unwrap_err();
    assert!(err.is_eof(), "{err:?}");
    assert_eq!(
        err.to_string(),
        "EOF while parsing a list at line 1 column 5"
    );

    // Bytes that are not UTF-8 out of a string, where no byte of the kind may stand.
    let err = decode_json::<Value>(b"{\"a\":\n \xc3}").unwrap_err();
    assert_eq!(err.to_string(), "expected a value at line 2 column 2");

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Port {
        name: String,
        port: u16,
    }
    let err = decode_json::<Port>(br#"{"name":"http"}"#).unwrap_err();
    assert!(err.is_data(), "{err:?}");
    assert_eq!(err.to_string(), "missing field `port` at line 1 column 16");
    let err = decode_json::<Port>(br#"{"name":"http","port":70000}"#).unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid value: integer `70000`, expected u16 at line 1 column 28"
    );
    let err = decode_json::<Port>(br#"{"name":"http","port":"80"}"#).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("invalid type: string \"80\", expected u16")
    );

    // A visitor that stops before the end of an object or a list.
    let err = decode_json::<(u8,)>(b"[1,2]").unwrap_err();
    assert!(err.to_string().starts_with("expected `]`"), "{err}");
    let err = decode_json::<Port>(br#"{"name":"a","port":1} 2"#).unwrap_err();
    assert_eq!(err.to_string(), "trailing characters at line 1 column 23");
}

/// Strings that are not UTF-8 read as Go's decoder reads them: each byte that does not start a
/// valid sequence becomes U+FFFD (the apiserver writes such bytes back from raw fields).
#[test]
fn bytes_that_are_not_utf8_read_as_go_reads_them() {
    let cases: &[(&[u8], &str)] = &[
        (b"\"\xff\"", "\u{fffd}"),
        (b"\"a\xffb\"", "a\u{fffd}b"),
        // A cut sequence: a replacement per byte, as Go's `utf8.DecodeRune` takes them.
        (b"\"\xe2\x82z\"", "\u{fffd}\u{fffd}z"),
        (b"\"\xc3\"", "\u{fffd}"),
        // An encoded surrogate and an overlong encoding are not UTF-8 either.
        (b"\"\xed\xa0\x80\"", "\u{fffd}\u{fffd}\u{fffd}"),
        (b"\"\xc0\xaf\"", "\u{fffd}\u{fffd}"),
        // With escapes around and valid characters on either side.
        (b"\"\\n\xff\\t\"", "\n\u{fffd}\t"),
        (
            b"\"\xc3\xa9\xff\xe6\x97\xa5\\u00e9\"",
            "\u{e9}\u{fffd}\u{65e5}\u{e9}",
        ),
    ];
    for &(text, want) in cases {
        let got: String = decode_json(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(got, want, "{text:?}");
        agree(text);
    }
    // As keys and inside containers, in typed values, and in raw values (copied as Go reads
    // them, the rest of the input still borrowed).
    let text = b"{\"k\xff\":[\"v\xff\",1],\"raw\":{\"x\":\"\xff\"},\"ok\":\"plain\"}";
    let value: Value = decode_json(text).unwrap();
    assert_eq!(
        value,
        serde_json::json!({"k\u{fffd}": ["v\u{fffd}", 1], "raw": {"x": "\u{fffd}"}, "ok": "plain"})
    );
    #[derive(Deserialize)]
    struct Holder<'a> {
        raw: RawJson,
        ok: &'a str,
    }
    let holder: Holder<'_> = decode_json(text).unwrap();
    assert_eq!(holder.raw.get(), "{\"x\":\"\u{fffd}\"}");
    assert_eq!(holder.ok, "plain");
    // A raw value seen before (taken whole the second time) reads the same.
    let raws: Vec<RawJson> = decode_json(b"[{\"x\":\"\xff\"},{\"x\":\"\xff\"}]").unwrap();
    assert!(
        raws.iter().all(|raw| raw.get() == "{\"x\":\"\u{fffd}\"}"),
        "{raws:?}"
    );
    let set: FieldsV1 = decode_json(b"{\"f:\xff\":{}}").unwrap();
    assert_eq!(set.get(), "{\"f:\u{fffd}\":{}}");
    // Errors still name the line and column, in bytes.
    let err = decode_json::<Value>(b"[\"\xff\",\n x]").unwrap_err();
    assert_eq!(err.to_string(), "expected a value at line 2 column 2");
}

/// Surrogate escapes that are not a pair read as Go's decoder reads them: U+FFFD, and what
/// follows on its own (the apiserver writes them back from raw fields as a client sent them).
#[test]
fn lone_surrogate_escapes_read_as_go_reads_them() {
    let cases: &[(&str, &str)] = &[
        (r#""\ud800""#, "\u{fffd}"),
        (r#""\udc00""#, "\u{fffd}"),
        (r#""a\udbffb""#, "a\u{fffd}b"),
        // A first half followed by an escape that is not a second half: both read on their own.
        (r#""\ud800\u0041""#, "\u{fffd}A"),
        (r#""\ud800\n""#, "\u{fffd}\n"),
        (r#""\ud800\ud800\udc00""#, "\u{fffd}\u{10000}"),
        // A second half first, then a pair.
        (r#""\udc00\ud83d\ude00""#, "\u{fffd}\u{1f600}"),
        (r#""\ude00\ud83d""#, "\u{fffd}\u{fffd}"),
        // Pairs, lower and upper case.
        (r#""\ud83d\ude00""#, "\u{1f600}"),
        (r#""\uDBFF\uDFFF""#, "\u{10ffff}"),
    ];
    for &(text, want) in cases {
        let got: String = decode_json(text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(got, want, "{text}");
        // As a key, and in a value `serde_json` reads once given Go's reading.
        let object = format!("{{{text}:[{text}]}}");
        let value: Value = decode_json(object.as_bytes()).unwrap();
        assert_eq!(value, serde_json::json!({want: [want]}), "{object}");
        agree(object.as_bytes());
    }
    // A raw value keeps the escapes as they are.
    let raw: RawJson = decode_json(br#"{"a":"\ud800"}"#).unwrap();
    assert_eq!(raw.get(), r#"{"a":"\ud800"}"#);
    // An escape that is not four hex digits is still an error, after a surrogate too.
    for text in [r#""\ud800\u12g4""#, r#""\ud800\u12""#, r#""\ud800\"#] {
        assert!(decode_json::<Value>(text.as_bytes()).is_err(), "{text}");
    }
}

#[test]
fn decodes_typed_values_like_serde_json() {
    #[derive(Debug, PartialEq, Deserialize)]
    enum Shape {
        Point,
        Circle(f64),
        Rect { w: u32, h: u32 },
        Pair(i8, i8),
    }
    #[derive(Debug, PartialEq, Deserialize)]
    struct All {
        text: String,
        chars: Vec<char>,
        maybe: Option<u64>,
        absent: Option<u64>,
        shapes: Vec<Shape>,
        by_number: BTreeMap<u32, bool>,
        by_bool: HashMap<bool, i64>,
        by_float: BTreeMap<String, f32>,
        #[serde(with = "serde_bytes_like")]
        bytes: Vec<u8>,
        unit: (),
        tuple: (u8, String, Option<bool>),
        nested: Vec<Vec<i128>>,
        #[serde(flatten)]
        rest: BTreeMap<String, Value>,
    }
    /// Bytes through `deserialize_bytes`.
    mod serde_bytes_like {
        pub(super) fn deserialize<'de, D: serde::Deserializer<'de>>(
            d: D,
        ) -> Result<Vec<u8>, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Vec<u8>;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("bytes")
                }
                fn visit_bytes<E>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                    Ok(v.to_vec())
                }
                fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Vec<u8>, E> {
                    Ok(v.to_vec())
                }
            }
            d.deserialize_bytes(V)
        }
    }
    let text = r#"{
        "text": "a\"b", "chars": ["x", "é"], "maybe": 7, "shapes": ["Point", {"Circle": 1.5},
        {"Rect": {"w": 2, "h": 3}}, {"Pair": [-1, 1]}], "by_number": {"1": true, "20": false},
        "by_bool": {"true": -1}, "by_float": {"x": 0.25}, "bytes": "a\nb", "unit": null,
        "tuple": [1, "two", null], "nested": [[1, -170141183460469231731687303715884105728]],
        "extra": {"k": [1, 2]}, "more": "x"
    }"#;
    let ours: All = decode_json(text.as_bytes()).unwrap();
    let theirs: All = serde_json::from_str(text).unwrap();
    assert_eq!(ours, theirs);
    assert_eq!(ours.shapes[2], Shape::Rect { w: 2, h: 3 });
    assert_eq!(ours.bytes, b"a\nb");
    assert_eq!(ours.rest.len(), 2);
}

#[test]
fn borrows_unescaped_strings_from_the_input() {
    #[derive(Debug, Deserialize)]
    struct Borrowed<'a> {
        name: &'a str,
        #[serde(borrow)]
        labels: BTreeMap<&'a str, &'a str>,
    }
    let text = br#"{"name":"web","labels":{"app":"web"}}"#;
    let b: Borrowed<'_> = decode_json(text).unwrap();
    assert_eq!(b.name, "web");
    assert_eq!(b.labels["app"], "web");
    // An escaped string cannot be borrowed; serde says so, as with serde_json.
    let err = decode_json::<Borrowed<'_>>(br#"{"name":"w\"b","labels":{}}"#).unwrap_err();
    assert!(err.to_string().contains("borrowed string"), "{err}");
}

#[test]
fn raw_values_keep_their_exact_text() {
    #[derive(Debug, Deserialize)]
    struct Holder {
        raw: RawJson,
        fields: FieldsV1,
        list: Vec<RawJson>,
    }
    let text = r#"{"raw": {"a" : [1, 2.50, "x\u0041"]} ,"fields":{"f:spec":{".":{}}},"list":[ null ,"s",  -0.0]}"#;
    for holder in [
        decode_json::<Holder>(text.as_bytes()).unwrap(),
        serde_json::from_str::<Holder>(text).unwrap(),
    ] {
        assert_eq!(holder.raw.get(), r#"{"a" : [1, 2.50, "x\u0041"]}"#);
        assert_eq!(holder.fields.get(), r#"{"f:spec":{".":{}}}"#);
        let list: Vec<&str> = holder.list.iter().map(RawJson::get).collect();
        assert_eq!(list, ["null", r#""s""#, "-0.0"]);
    }
    // A raw value is checked as it is skipped.
    for bad in [
        r#"{"raw":{"a":},"fields":{},"list":[]}"#,
        r#"{"raw":"\x","fields":{},"list":[]}"#,
        r#"{"raw":1,"fields":{"a" "b"},"list":[]}"#,
        r#"{"raw":1,"fields":{},"list":[01]}"#,
    ] {
        assert!(decode_json::<Holder>(bad.as_bytes()).is_err(), "{bad}");
        assert!(serde_json::from_str::<Holder>(bad).is_err(), "{bad}");
    }
    // Raw values still decode from a serde_json::Value, through serde_json's RawValue.
    let value: Value = serde_json::from_str(text).unwrap();
    let holder: Holder = serde_json::from_value(value).unwrap();
    assert_eq!(holder.fields.get(), r#"{"f:spec":{".":{}}}"#);
}

#[test]
fn repeated_raw_values_are_taken_whole_and_stay_checked() {
    // The decoder remembers the raw objects and arrays it captured; a value starting with one
    // of their texts is that value. Each document is decoded by both decoders.
    let raws = |text: &str| -> Option<Vec<String>> {
        let ours = decode_json::<Vec<RawJson>>(text.as_bytes());
        let theirs = serde_json::from_str::<Vec<RawJson>>(text);
        assert_eq!(
            ours.is_ok(),
            theirs.is_ok(),
            "{text}: {ours:?} / {theirs:?}"
        );
        let (ours, theirs) = (ours.ok()?, theirs.ok()?);
        let texts: Vec<String> = ours.iter().map(|r| r.get().to_owned()).collect();
        let expected: Vec<String> = theirs.iter().map(|r| r.get().to_owned()).collect();
        assert_eq!(texts, expected, "{text}");
        Some(texts)
    };
    assert_eq!(
        raws(r#"[{"a":1},{"a":1},{"a":12},{"a":1} , {"a":1}]"#).unwrap(),
        [
            r#"{"a":1}"#,
            r#"{"a":1}"#,
            r#"{"a":12}"#,
            r#"{"a":1}"#,
            r#"{"a":1}"#
        ]
    );
    assert_eq!(
        raws("[[1],[1],[1,2],[1]]").unwrap(),
        ["[1]", "[1]", "[1,2]", "[1]"]
    );
    // More than the remembered few, then the first again.
    let many = r#"[{"a":0},{"b":0},{"c":0},{"d":0},{"e":0},{"a":0},{"e":0}]"#;
    assert_eq!(raws(many).unwrap().len(), 7);
    // A repeat followed by what cannot follow a value is still an error.
    for bad in [
        r#"[{"a":{}},{"a":{}}}]"#,
        r#"[{"a":{}},{"a":{}}{}]"#,
        "[[1],[1]1]",
        r#"[{"a":{}},{"a":{}"#,
        r#"[{"a":"x"},{"a":"x"#,
    ] {
        assert!(raws(bad).is_none(), "{bad}");
    }
    // A value checked where it could nest deep enough is rejected where it cannot.
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)] // The fields are only decoded.
    struct Deep {
        raw: Option<RawJson>,
        deeper: Option<Box<Deep>>,
    }
    // At the top, the raw value is one level short of the limit; ten objects deeper, past it.
    let nested = nested(MAX_DEPTH as usize - 5);
    let deep = format!(
        r#"{{"raw":{nested},"deeper":{}{{"raw":{nested}}}{}}}"#,
        r#"{"deeper":"#.repeat(10),
        "}".repeat(10)
    );
    // (serde_json skips raw values of any depth; kclient's decoder limits them as all values.)
    let ours = decode_json::<Deep>(deep.as_bytes()).unwrap_err();
    assert!(
        ours.to_string().starts_with("recursion limit exceeded"),
        "{ours}"
    );
    // Repeated one level down, it is still within the limit and taken.
    let shallow_second = format!(r#"{{"raw":{nested},"deeper":{{"raw":{nested}}}}}"#);
    assert!(decode_json::<Deep>(shallow_second.as_bytes()).is_ok());
}

/// Any JSON value, with strings that need escapes and numbers of every kind.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<u64>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        "[a-z\"\\\\/\u{0}-\u{1f}é😀]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::btree_map("[a-z\"\\\\é]{0,6}", inner, 0..8)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_value_reads_back_equal(value in any_value()) {
        for text in [serde_json::to_string(&value).unwrap(), serde_json::to_string_pretty(&value).unwrap()] {
            let ours: Value = decode_json(text.as_bytes()).unwrap();
            prop_assert_eq!(&ours, &value, "{}", text);
            let raw: RawJson = decode_json(text.as_bytes()).unwrap();
            prop_assert_eq!(raw.get(), text.trim());
            // Repeated, as raw values repeat in a list (the decoder takes a repeat whole).
            let list = format!("[{text},{text}, {text}]");
            let raws: Vec<RawJson> = decode_json(list.as_bytes()).unwrap();
            prop_assert!(raws.iter().all(|r| r.get() == text.trim()), "{}", list);
        }
    }

    #[test]
    fn damaged_values_are_read_or_rejected_as_serde_json_does(
        value in any_value(),
        cuts in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, any::<u8>()), 1..4),
    ) {
        let mut text = serde_json::to_vec(&value).unwrap();
        for (at, how, byte) in cuts {
            if text.is_empty() {
                break;
            }
            let i = at.index(text.len());
            match how {
                0 => { text.remove(i); }
                1 => text.insert(i, byte),
                2 => text.insert(i, b"{}[]:,\"\\0-.eE "[usize::from(byte) % 14]),
                _ => text.truncate(i),
            }
        }
        agree(&text);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        agree(&bytes);
    }
}
