//! Targets for the value types and the small grammars: `Quantity`, `IntOrString`,
//! `Time`/`MicroTime`, `Duration`, label selectors (text and `meta/v1` `LabelSelector`),
//! field selectors and field values, and the identifiers parsed from user or server text
//! (group/version, group/kind, resource arguments, `namespace/name` keys, JSON pointer tokens).
//!
//! Each is fed both as text (the parsers) and as a JSON document (the decoders). Where the
//! type promises a round trip (a parsed duration, time or selector prints as text that parses
//! back to the same value) the target checks it.

use std::collections::BTreeMap;
use std::time::SystemTime;

use kclient_apimachinery::meta::v1::LabelSelector;
use kclient_apimachinery::meta::{Duration, IStr, IntOrString, MicroTime, Quantity, Time};
use kclient_apimachinery::{
    FieldSelector, GroupKind, GroupResource, GroupVersion, GroupVersionKind, GroupVersionResource,
    Selector, decode_json, escape_field_value, escape_json_pointer_token, split_meta_namespace_key,
    unescape_field_value,
};

use super::{Target, err, mix, ok, text};
use crate::mutate::InputKind;

/// The value-type targets.
pub(super) fn targets() -> Vec<Target> {
    vec![
        Target {
            name: "quantity",
            about: "Quantity from text and from JSON (string or bare number): to_milli, \
                    to_i64_ceil, to_f64, Display, JSON round trip",
            kind: InputKind::Text,
            max_len: 512,
            dict: &[
                "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "m", "k", "M", "G", "E", "e", "E+", "e-", "\"",
            ],
            run: quantity,
        },
        Target {
            name: "int_or_string",
            about: "IntOrString from text and JSON: scaled_value against edge totals, rounding \
                    up and down (Go's GetScaledValueFromIntOrPercent)",
            kind: InputKind::Text,
            max_len: 512,
            dict: &["%", "\"", "-", "2147483647", "9223372036854775807"],
            run: int_or_string,
        },
        Target {
            name: "time",
            about: "Time and MicroTime: parse RFC 3339 text and JSON, Display/parse round trip, \
                    conversion to SystemTime",
            kind: InputKind::Text,
            max_len: 512,
            dict: &[
                "T",
                "Z",
                "z",
                "+14:00",
                "-23:59",
                ".999999999",
                "0001-01-01",
                "9999-12-31",
                "\"",
            ],
            run: time,
        },
        Target {
            name: "duration",
            about: "metav1 Duration: Go ParseDuration grammar from text and JSON, Display/parse \
                    round trip, to_std",
            kind: InputKind::Text,
            max_len: 512,
            dict: &[
                "ns", "us", "µs", "μs", "ms", "s", "m", "h", ".", "-", "+", "\"",
            ],
            run: duration,
        },
        Target {
            name: "label_selector",
            about: "label selectors: Selector::parse (client-go's full grammar), Display/parse \
                    round trip, matching, and meta/v1 LabelSelector JSON converted to a Selector",
            kind: InputKind::Text,
            max_len: 4096,
            dict: &[
                ",",
                "=",
                "==",
                "!=",
                "!",
                " in ",
                " notin ",
                "(",
                ")",
                "gt",
                " < ",
                " > ",
                "app",
                "example.com/tier",
                "{\"matchLabels\":{",
                "{\"matchExpressions\":[{\"key\":\"a\",\"operator\":\"In\",\"values\":[\"x\"]}]}",
                "Exists",
                "DoesNotExist",
                "NotIn",
            ],
            run: label_selector,
        },
        Target {
            name: "field_selector",
            about: "field selectors: FieldSelector::parse, Display/parse round trip, matching; \
                    escape_field_value/unescape_field_value round trip",
            kind: InputKind::Text,
            max_len: 4096,
            dict: &[
                ",",
                "=",
                "==",
                "!=",
                "\\",
                "\\,",
                "\\=",
                "\\\\",
                "metadata.name",
                "spec.nodeName",
                "status.phase",
            ],
            run: field_selector,
        },
        Target {
            name: "identifiers",
            about: "GroupVersion::parse, GroupKind/GroupResource::parse, \
                    GroupVersionResource::parse_resource_arg, GroupVersionKind from apiVersion, \
                    split_meta_namespace_key, escape_json_pointer_token",
            kind: InputKind::Text,
            max_len: 1024,
            dict: &[
                "/",
                ".",
                "apps",
                "v1",
                "deployments.v1.apps",
                "ns/name",
                "~",
                "~0",
                "~1",
            ],
            run: identifiers,
        },
    ]
}

fn quantity(input: &[u8]) -> u64 {
    fn read(q: &Quantity) -> u64 {
        let milli = q.to_milli();
        let ceil = q.to_i64_ceil();
        let float = q.to_f64();
        std::hint::black_box((q.to_string(), q.as_str().len()));
        ok(match (milli, ceil, float) {
            (Some(_), Some(_), Some(_)) => "valid",
            (Some(_), None, _) => "milli only",
            (None, _, Some(_)) => "float only",
            (None, None, None) => "invalid",
            _ => "partial",
        })
    }
    let from_text = read(&Quantity(IStr::new(&text(input))));
    let from_json = match decode_json::<Quantity>(input) {
        Ok(q) => {
            let encoded = serde_json::to_vec(&q).expect("a Quantity encodes");
            let again: Quantity =
                decode_json(&encoded).expect("kclient decodes the Quantity it encoded");
            assert_eq!(again, q, "Quantity JSON round trip");
            read(&q)
        }
        Err(e) => err("Quantity", &e),
    };
    mix(&[from_text, from_json])
}

fn int_or_string(input: &[u8]) -> u64 {
    const TOTALS: [i32; 9] = [0, 1, 3, 10, 100, 1000, -1, i32::MAX, i32::MIN];
    fn scale(v: &IntOrString) -> u64 {
        let mut some = 0;
        for total in TOTALS {
            for round_up in [false, true] {
                some += usize::from(v.scaled_value(total, round_up).is_some());
            }
        }
        std::hint::black_box(v.to_string());
        ok(if some == 0 { "none" } else { "some" })
    }
    let from_text = scale(&IntOrString::from(&*text(input)));
    let from_json = match decode_json::<IntOrString>(input) {
        Ok(v) => {
            let encoded = serde_json::to_vec(&v).expect("an IntOrString encodes");
            let again: IntOrString =
                decode_json(&encoded).expect("kclient decodes the IntOrString it encoded");
            assert_eq!(again, v, "IntOrString JSON round trip");
            scale(&v)
        }
        Err(e) => err("IntOrString", &e),
    };
    mix(&[from_text, from_json])
}

fn time(input: &[u8]) -> u64 {
    let s = text(input);
    let mut parts = Vec::new();
    match Time::parse(&s) {
        Some(t) => {
            let shown = t.to_string();
            assert_eq!(
                Time::parse(&shown),
                Some(t),
                "Time {s:?} prints as {shown:?}, which does not parse back"
            );
            std::hint::black_box(SystemTime::from(t));
            parts.push(ok("Time"));
        }
        None => parts.push(ok("Time none")),
    }
    match MicroTime::parse(&s) {
        Some(t) => {
            let shown = t.to_string();
            assert_eq!(
                MicroTime::parse(&shown),
                Some(t),
                "MicroTime {s:?} prints as {shown:?}, which does not parse back"
            );
            std::hint::black_box((
                SystemTime::from(t),
                MicroTime::from(Time::parse(&s).unwrap_or_default()),
            ));
            parts.push(ok("MicroTime"));
        }
        None => parts.push(ok("MicroTime none")),
    }
    match decode_json::<Time>(input) {
        Ok(t) => {
            let encoded = serde_json::to_vec(&t).expect("a Time encodes");
            let again: Time = decode_json(&encoded).expect("kclient decodes the Time it encoded");
            assert_eq!(
                again,
                t,
                "Time JSON round trip via {}",
                String::from_utf8_lossy(&encoded)
            );
            parts.push(ok("Time json"));
        }
        Err(e) => parts.push(err("Time", &e)),
    }
    match decode_json::<MicroTime>(input) {
        Ok(t) => {
            let encoded = serde_json::to_vec(&t).expect("a MicroTime encodes");
            let again: MicroTime =
                decode_json(&encoded).expect("kclient decodes the MicroTime it encoded");
            assert_eq!(
                again,
                t,
                "MicroTime JSON round trip via {}",
                String::from_utf8_lossy(&encoded)
            );
            parts.push(ok("MicroTime json"));
        }
        Err(e) => parts.push(err("MicroTime", &e)),
    }
    mix(&parts)
}

fn duration(input: &[u8]) -> u64 {
    let s = text(input);
    let from_text = match Duration::parse(&s) {
        Ok(d) => {
            let shown = d.to_string();
            assert_eq!(
                Duration::parse(&shown).ok(),
                Some(d),
                "Duration {s:?} prints as {shown:?}, which does not parse back to it"
            );
            std::hint::black_box(d.to_std());
            ok("Duration")
        }
        Err(e) => err("Duration", &e),
    };
    let from_json = match decode_json::<Duration>(input) {
        Ok(d) => {
            let encoded = serde_json::to_vec(&d).expect("a Duration encodes");
            let again: Duration =
                decode_json(&encoded).expect("kclient decodes the Duration it encoded");
            assert_eq!(again, d, "Duration JSON round trip");
            ok("Duration json")
        }
        Err(e) => err("Duration json", &e),
    };
    mix(&[from_text, from_json])
}

/// Labels to match selectors against.
fn labels() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app".to_owned(), "web".to_owned()),
        ("tier".to_owned(), "backend".to_owned()),
        ("example.com/version".to_owned(), "3".to_owned()),
        ("empty".to_owned(), String::new()),
    ])
}

fn label_selector(input: &[u8]) -> u64 {
    let check = |selector: &Selector, what: &str| {
        let shown = selector.to_string();
        match Selector::parse(&shown) {
            Ok(again) => assert_eq!(
                again.to_string(),
                shown,
                "{what}: the selector printed as {shown:?} parses back to something else"
            ),
            Err(e) => panic!("{what}: the selector printed as {shown:?} does not parse back: {e}"),
        }
        std::hint::black_box((
            selector.matches(&labels()),
            selector.is_empty(),
            selector.matches_nothing(),
            selector.requirements().map(<[_]>::len),
            selector.requires_exact_match("app"),
        ));
    };
    let s = text(input);
    let parsed = match Selector::parse(&s) {
        Ok(selector) => {
            check(&selector, "Selector::parse");
            ok("Selector")
        }
        Err(e) => {
            std::hint::black_box((e.position(), e.message()));
            err("Selector", &e)
        }
    };
    let converted = match decode_json::<LabelSelector>(input) {
        Ok(spec) => match Selector::from_label_selector(Some(&spec)) {
            Ok(selector) => {
                check(&selector, "LabelSelector");
                ok("LabelSelector")
            }
            Err(e) => err("LabelSelector conversion", &e),
        },
        Err(e) => err("LabelSelector", &e),
    };
    mix(&[parsed, converted])
}

fn field_selector(input: &[u8]) -> u64 {
    let s = text(input);
    let escaped = escape_field_value(&s);
    assert_eq!(
        unescape_field_value(&escaped).ok().as_deref(),
        Some(&*s),
        "escape_field_value({s:?}) = {escaped:?} does not unescape back"
    );
    let unescaped = match unescape_field_value(&s) {
        Ok(v) => ok(if v == *s { "unescape same" } else { "unescape" }),
        Err(e) => err("unescape", &e),
    };
    let fields = labels();
    let parsed = match FieldSelector::parse(&s) {
        Ok(selector) => {
            let shown = selector.to_string();
            match FieldSelector::parse(&shown) {
                Ok(again) => assert_eq!(
                    again.to_string(),
                    shown,
                    "the field selector printed as {shown:?} parses back to something else"
                ),
                Err(e) => {
                    panic!("the field selector printed as {shown:?} does not parse back: {e}")
                }
            }
            std::hint::black_box((
                selector.matches(&fields),
                selector.matches_with(|f| fields.get(f).map(String::as_str)),
                selector.requires_exact_match("metadata.name"),
                selector.requirements().len(),
                selector.is_empty(),
            ));
            ok("FieldSelector")
        }
        Err(e) => err("FieldSelector", &e),
    };
    mix(&[unescaped, parsed])
}

fn identifiers(input: &[u8]) -> u64 {
    let s = text(input);
    let gv = match GroupVersion::parse(&s) {
        Ok(gv) => {
            std::hint::black_box((
                gv.api_version(),
                gv.api_path(),
                gv.with_kind("Pod"),
                gv.is_empty(),
            ));
            ok("GroupVersion")
        }
        Err(e) => err("GroupVersion", &e),
    };
    let (gvr, gr) = GroupVersionResource::parse_resource_arg(&s);
    std::hint::black_box((gvr.map(|g| g.group_version()), gr.with_version("v1")));
    std::hint::black_box((
        GroupKind::parse(&s).with_version("v1"),
        GroupResource::parse(&s).is_empty(),
    ));
    let (api_version, kind) = s.split_once('|').unwrap_or((&s, "Kind"));
    let gvk = GroupVersionKind::from_api_version_and_kind(api_version, kind);
    std::hint::black_box((gvk.api_version(), gvk.group_version(), gvk.group_kind()));
    let key = match split_meta_namespace_key(&s) {
        Ok((ns, name)) => ok(if ns.is_some() { "key ns" } else { "key" }) ^ (name.len() as u64 % 2),
        Err(e) => err("key", &e),
    };
    std::hint::black_box(escape_json_pointer_token(&s));
    mix(&[gv, key])
}
