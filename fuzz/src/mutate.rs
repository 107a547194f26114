//! The mutator: turns a corpus entry into a new input.
//!
//! Byte-level mutations work on any input: bit flips, interesting bytes, inserting, deleting
//! and duplicating ranges, splicing two corpus entries, truncation, dictionary tokens, long
//! runs of one token (deep nesting, huge strings and numbers, huge length prefixes) and
//! swapping a number's digits for an interesting number. Inputs that are JSON (or lines of
//! JSON) are also mutated as values: a random node's number, string, type, keys, elements or
//! nesting changes, or it is replaced by a node of another corpus entry. Several mutations are
//! stacked per input.

use serde_json::{Map, Value};

use crate::rng::Rng;

/// What an input is, which decides the mutations that suit it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InputKind {
    /// One JSON document.
    Json,
    /// Newline-separated JSON documents (a watch stream body).
    JsonLines,
    /// Short text: a selector, a quantity, a duration.
    Text,
    /// YAML (or JSON) text.
    Yaml,
    /// Raw bytes with no structure the mutator knows (an HTTP response).
    Bytes,
}

/// Numbers at the edges of the integer and float types, and spellings that trip parsers.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "0.0",
    "-0.0",
    "127",
    "128",
    "255",
    "256",
    "32767",
    "32768",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9007199254740993",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "-18446744073709551616",
    "340282366920938463463374607431768211456",
    "1e308",
    "1e309",
    "-1e309",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "2.2250738585072014e-308",
    "2.2250738585072011e-308",
    "4.9e-324",
    "2.4e-324",
    "1e-400",
    "-3.17565392679052e-309",
    "0.1",
    "0.30000000000000004",
    "1.5",
    "1E+2",
    "1e-7",
    "1.0e0",
    "123456789012345678901234567890",
    "0.000000000000000000000000000001",
    "1.00000000000000000000000000000000000000000000001",
    "00",
    "01",
    "1.",
    ".5",
    "1e",
    "-",
    "+1",
    "0x10",
    "NaN",
    "Infinity",
];

/// Strings that decoders of Kubernetes values treat specially.
const STRINGS: &[&str] = &[
    "",
    " ",
    "a",
    "null",
    "true",
    "0",
    "-1",
    "1.5",
    "1e3",
    "25%",
    "-25%",
    "100%",
    "9223372036854775807%",
    "%",
    "1Gi",
    "500m",
    "1.5Ki",
    "-1E",
    "9.999999999999999999999999999999e18",
    "1e400",
    "2024-11-02T10:11:12Z",
    "2024-11-02T10:11:12.123456789+14:00",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "9999-12-31T23:59:59.999999-23:59",
    "0000-01-01T00:00:00+00:01",
    "2024-02-30T25:61:61Z",
    "1h30m",
    "-2562047h47m16.854775808s",
    "2562047h47m16.854775808s",
    "1.5µs",
    "ADDED",
    "MODIFIED",
    "DELETED",
    "BOOKMARK",
    "ERROR",
    "v1",
    "apps/v1",
    "a/b/c",
    "/",
    "Status",
    "Failure",
    "Expired",
    "k8s.io/initial-events-end",
    "é✓\u{1F600}",
    "\u{0}",
    "\u{7f}\u{80}\u{ffff}",
    "line\nbreak",
    "quote\"backslash\\",
    "a,b=c!d in (e)",
    "metadata.name",
    "spec.containers[0].image",
    "$patch",
    "delete",
    "replace",
    "merge",
    "$retainKeys",
    "$setElementOrder/containers",
    "$deleteFromPrimitiveList/finalizers",
];

/// Bytes that are structural in JSON, YAML or HTTP, or edges of UTF-8.
const BYTES: &[u8] = &[
    0, 1, b'\t', b'\n', b'\r', b' ', b'"', b'\\', b'/', b',', b':', b'[', b']', b'{', b'}', b'-',
    b'+', b'.', b'e', b'0', b'9', b'\'', b'#', b'&', b'*', b'!', b'|', b'>', b'%', b'@', b'u',
    0x7f, 0x80, 0xbf, 0xc0, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xf5, 0xff,
];

/// Tokens for every kind of input, beside the target's own dictionary.
const TOKENS: &[&str] = &[
    "null",
    "true",
    "false",
    "{}",
    "[]",
    "\"\"",
    "\\u0000",
    "\\ud800",
    "\\udc00",
    "\\ud83d\\ude00",
    "\\u00e9",
    "\\uZZZZ",
    "\\x41",
    "\\",
    "\":",
    ",\"",
    "\r\n",
    "\u{feff}",
];

/// A mutated copy of `base`, at most `max_len` bytes long. `corpus` supplies splices and
/// replacement nodes; `dict` holds the target's own tokens.
pub(crate) fn mutate(
    rng: &mut Rng,
    base: &[u8],
    corpus: &[Vec<u8>],
    kind: InputKind,
    dict: &[&str],
    max_len: usize,
) -> Vec<u8> {
    let mut data = base.to_vec();
    let most = if rng.one_in(8) { 8 } else { 3 };
    let rounds = 1 + rng.below(most);
    for _ in 0..rounds {
        let structured = match kind {
            InputKind::Json => {
                rng.below(3) != 0 && mutate_json_document(rng, &mut data, corpus, dict)
            }
            InputKind::JsonLines => rng.below(3) != 0 && mutate_lines(rng, &mut data, corpus, dict),
            InputKind::Text | InputKind::Yaml | InputKind::Bytes => false,
        };
        if !structured {
            mutate_bytes(rng, &mut data, corpus, dict, max_len);
        }
        if data.len() > max_len {
            data.truncate(max_len);
        }
    }
    data
}

/// A token from the target's dictionary or the common lists.
fn token<'a>(rng: &mut Rng, dict: &[&'a str]) -> &'a str {
    match rng.below(4) {
        0 if !dict.is_empty() => rng.choose(dict),
        0 | 1 => rng.choose(NUMBERS),
        2 => rng.choose(STRINGS),
        _ => rng.choose(TOKENS),
    }
}

/// One byte-level mutation.
fn mutate_bytes(
    rng: &mut Rng,
    data: &mut Vec<u8>,
    corpus: &[Vec<u8>],
    dict: &[&str],
    max_len: usize,
) {
    let len = data.len();
    let at = rng.below(len + 1);
    match rng.below(13) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = rng.choose(BYTES);
        }
        2 => {
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.next_u64() as u8).collect();
            data.splice(at..at, bytes);
        }
        3 if len > 0 => {
            let n = rng.len_upto(len - at.min(len));
            data.drain(at.min(len)..(at + n).min(len));
        }
        4 if len > 0 => {
            let from = rng.below(len);
            let n = 1 + rng.len_upto(len - from - 1);
            let chunk = data[from..from + n].to_vec();
            data.splice(at..at, chunk);
        }
        5 if !corpus.is_empty() => {
            let other = rng.pick(corpus);
            let j = rng.below(other.len() + 1);
            data.truncate(at);
            data.extend_from_slice(&other[j..]);
        }
        6 => data.truncate(at),
        7 => {
            let t = token(rng, dict).as_bytes().to_vec();
            data.splice(at..at, t);
        }
        8 if len > 0 => {
            let n = rng.len_upto(len - at.min(len));
            let t = token(rng, dict).as_bytes().to_vec();
            data.splice(at.min(len)..(at + n).min(len), t);
        }
        9 => {
            // A long run: deep nesting, a huge string or number, a huge length prefix.
            let unit: Vec<u8> = match rng.below(5) {
                0 => vec![rng.choose(b"[{\"0a \\".as_slice())],
                1 => b"[".to_vec(),
                2 => b"{\"a\":".to_vec(),
                3 => token(rng, dict).as_bytes().to_vec(),
                _ => vec![b'9'],
            };
            let room = max_len.saturating_sub(len) / unit.len().max(1);
            let n = (rng.choose(&[2usize, 16, 127, 128, 129, 1000, 10_000, 100_000, 1 << 20]))
                .min(room);
            let run = unit.repeat(n);
            data.splice(at..at, run);
        }
        10 => replace_number(rng, data),
        11 if len > 1 => {
            // Overwrite a range with a copy of another range of the same input.
            let a = rng.below(len);
            let b = rng.below(len);
            let n = rng.len_upto(len - a.max(b));
            let chunk = data[a..a + n].to_vec();
            data[b..b + n].copy_from_slice(&chunk);
        }
        _ => {
            if !corpus.is_empty() && rng.one_in(2) {
                // Insert a piece of another corpus entry.
                let other = rng.pick(corpus);
                let from = rng.below(other.len() + 1);
                let n = rng.len_upto(other.len() - from);
                data.splice(at..at, other[from..from + n].iter().copied());
            } else if len > 0 {
                let i = rng.below(len);
                data[i] = rng.next_u64() as u8;
            }
        }
    }
}

/// Replaces the run of number characters at or after a random position with an interesting
/// number (or, if there is none, inserts one).
fn replace_number(rng: &mut Rng, data: &mut Vec<u8>) {
    let is_num = |b: u8| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E');
    let start = rng.below(data.len() + 1);
    let Some(first) = data[start..].iter().position(|b| b.is_ascii_digit()) else {
        let at = rng.below(data.len() + 1);
        data.splice(at..at, rng.pick(NUMBERS).bytes());
        return;
    };
    let mut a = start + first;
    while a > 0 && is_num(data[a - 1]) {
        a -= 1;
    }
    let mut b = start + first;
    while b < data.len() && is_num(data[b]) {
        b += 1;
    }
    data.splice(a..b, rng.pick(NUMBERS).bytes());
}

/// Parses `data` as JSON and applies one value mutation; false if it is not JSON.
fn mutate_json_document(
    rng: &mut Rng,
    data: &mut Vec<u8>,
    corpus: &[Vec<u8>],
    dict: &[&str],
) -> bool {
    let Ok(mut value) = serde_json::from_slice::<Value>(data) else {
        return false;
    };
    let donor = donor_value(rng, corpus);
    mutate_value(rng, &mut value, donor.as_ref(), dict);
    *data = serialize(rng, &value);
    true
}

/// A parsed JSON value of a random corpus entry (or of one of its lines), for splicing nodes.
fn donor_value(rng: &mut Rng, corpus: &[Vec<u8>]) -> Option<Value> {
    if corpus.is_empty() {
        return None;
    }
    let entry = rng.pick(corpus);
    serde_json::from_slice(entry).ok().or_else(|| {
        let lines: Vec<&[u8]> = entry
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .collect();
        if lines.is_empty() {
            return None;
        }
        serde_json::from_slice(rng.choose(&lines)).ok()
    })
}

/// Compact most of the time, sometimes pretty (whitespace in odd places).
fn serialize(rng: &mut Rng, value: &Value) -> Vec<u8> {
    let out = if rng.one_in(6) {
        serde_json::to_vec_pretty(value)
    } else {
        serde_json::to_vec(value)
    };
    out.unwrap_or_default()
}

/// Applies one mutation to a random node of `value`.
fn mutate_value(rng: &mut Rng, value: &mut Value, donor: Option<&Value>, dict: &[&str]) {
    let count = count_nodes(value);
    let mut target = rng.below(count);
    let node = nth_node(value, &mut target).expect("a node index below the node count");
    match rng.below(9) {
        0 => {
            // A number: an interesting one (those serde_json cannot hold are left to the byte
            // mutations).
            if let Ok(v) = serde_json::from_str::<Value>(rng.choose(NUMBERS)) {
                *node = v;
            }
        }
        1 => {
            let new = match rng.below(4) {
                0 if !dict.is_empty() => (rng.choose(dict)).to_owned(),
                1 => {
                    let s = match &*node {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    let n = rng.choose(&[2usize, 10, 1000, 100_000]);
                    s.repeat(n.min(200_000 / s.len().max(1)))
                }
                _ => (rng.choose(STRINGS)).to_owned(),
            };
            *node = Value::String(new);
        }
        2 => {
            *node = match rng.below(7) {
                0 => Value::Null,
                1 => Value::Bool(rng.one_in(2)),
                2 => Value::from(rng.next_u64() as i64),
                3 => Value::String(String::new()),
                4 => Value::Array(Vec::new()),
                5 => Value::Object(Map::new()),
                _ => Value::from(f64::from_bits(rng.next_u64())),
            };
        }
        3 => match node {
            Value::Object(map) if !map.is_empty() => {
                let key = map
                    .keys()
                    .nth(rng.below(map.len()))
                    .cloned()
                    .unwrap_or_default();
                match rng.below(3) {
                    0 => {
                        map.remove(&key);
                    }
                    1 => {
                        if let Some(v) = map.remove(&key) {
                            map.insert(format!("{key}{}", token(rng, dict)), v);
                        }
                    }
                    _ => {
                        let v = map.get(&key).cloned().unwrap_or(Value::Null);
                        map.insert(token(rng, dict).to_owned(), v);
                    }
                }
            }
            Value::Array(items) if !items.is_empty() => {
                let i = rng.below(items.len());
                match rng.below(4) {
                    0 => {
                        items.remove(i);
                    }
                    1 => {
                        let copy = items[i].clone();
                        items.insert(rng.below(items.len() + 1), copy);
                    }
                    2 => {
                        let j = rng.below(items.len());
                        items.swap(i, j);
                    }
                    _ => {
                        let copy = items[i].clone();
                        let n = rng.choose(&[2usize, 10, 100, 1000]);
                        items.extend(std::iter::repeat_n(copy, n));
                    }
                }
            }
            other => *other = Value::Array(vec![other.take()]),
        },
        4 => {
            // Nesting: wrap the node in arrays or objects, around the 128 recursion limit too.
            let depth = rng.choose(&[1usize, 2, 5, 60, 126, 127, 128, 129, 200]);
            let mut v = node.take();
            for _ in 0..depth {
                v = if rng.one_in(2) {
                    Value::Array(vec![v])
                } else {
                    Value::Object(Map::from_iter([(token(rng, dict).to_owned(), v)]))
                };
            }
            *node = v;
        }
        5 | 6 if donor.is_some() => {
            // A node of another corpus entry, or (for an object) one of its members.
            let donor = donor.expect("checked above");
            let mut k = rng.below(count_nodes(donor));
            let picked = nth_node_ref(donor, &mut k).cloned().unwrap_or(Value::Null);
            match (node, picked) {
                (Value::Object(map), Value::Object(other))
                    if rng.one_in(2) && !other.is_empty() =>
                {
                    let (k, v) = other.into_iter().nth(rng.below(2)).unwrap_or_default();
                    map.insert(k, v);
                }
                (node, picked) => *node = picked,
            }
        }
        7 => {
            if let Value::String(s) = node {
                // Edit characters inside the string.
                let mut chars: Vec<char> = s.chars().collect();
                let at = rng.below(chars.len() + 1);
                match rng.below(3) {
                    0 => chars.truncate(at),
                    1 => chars.insert(
                        at,
                        rng.choose(&[
                            '\0', '"', '\\', '\n', 'é', '\u{ffff}', '%', '/', '.', '-', ':',
                        ]),
                    ),
                    _ => {
                        if at < chars.len() {
                            chars.remove(at);
                        }
                    }
                }
                *s = chars.into_iter().collect();
            } else if let Value::Number(_) = node {
                *node = Value::String(node.to_string());
            } else {
                *node = Value::String(token(rng, dict).to_owned());
            }
        }
        _ => {
            // A string holding a number, or a number where a string was.
            *node = match &*node {
                Value::String(s) => {
                    serde_json::from_str::<Value>(s).unwrap_or(Value::from(s.len()))
                }
                Value::Number(n) => Value::String(n.to_string()),
                other => Value::String(other.to_string()),
            };
        }
    }
}

/// The number of nodes of `value` (itself included).
fn count_nodes(value: &Value) -> usize {
    1 + match value {
        Value::Array(items) => items.iter().map(count_nodes).sum(),
        Value::Object(map) => map.values().map(count_nodes).sum(),
        _ => 0,
    }
}

/// The `n`-th node of `value` in pre-order.
fn nth_node<'a>(value: &'a mut Value, n: &mut usize) -> Option<&'a mut Value> {
    if *n == 0 {
        return Some(value);
    }
    *n -= 1;
    match value {
        Value::Array(items) => items.iter_mut().find_map(|v| nth_node(v, n)),
        Value::Object(map) => map.values_mut().find_map(|v| nth_node(v, n)),
        _ => None,
    }
}

/// The `n`-th node of `value` in pre-order, read-only.
fn nth_node_ref<'a>(value: &'a Value, n: &mut usize) -> Option<&'a Value> {
    if *n == 0 {
        return Some(value);
    }
    *n -= 1;
    match value {
        Value::Array(items) => items.iter().find_map(|v| nth_node_ref(v, n)),
        Value::Object(map) => map.values().find_map(|v| nth_node_ref(v, n)),
        _ => None,
    }
}

/// One mutation of a newline-separated stream of JSON documents: a line's value, or the lines
/// themselves (dropped, repeated, joined, split, blank, CRLF, taken from another entry).
fn mutate_lines(rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>], dict: &[&str]) -> bool {
    let mut lines: Vec<Vec<u8>> = data.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    if lines.is_empty() {
        return false;
    }
    let i = rng.below(lines.len());
    match rng.below(8) {
        0..=2 => {
            if !mutate_json_document(rng, &mut lines[i], corpus, dict) {
                return false;
            }
        }
        3 => {
            lines.remove(i);
        }
        4 => {
            let copy = lines[i].clone();
            lines.insert(rng.below(lines.len() + 1), copy);
        }
        5 => {
            // Join two lines, or split one at a random byte.
            if rng.one_in(2) && i + 1 < lines.len() {
                let next = lines.remove(i + 1);
                lines[i].extend_from_slice(&next);
            } else {
                let at = rng.below(lines[i].len() + 1);
                let tail = lines[i].split_off(at);
                lines.insert(i + 1, tail);
            }
        }
        6 => {
            let blank: &[u8] = rng.choose(&[b"".as_slice(), b"\r", b" ", b"\t \r"]);
            lines.insert(i, blank.to_vec());
        }
        _ => {
            let Some(other) = (!corpus.is_empty()).then(|| rng.pick(corpus)) else {
                return false;
            };
            let theirs: Vec<&[u8]> = other.split(|b| *b == b'\n').collect();
            lines.insert(i, rng.pick(&theirs).to_vec());
        }
    }
    *data = lines.join(&b'\n');
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic_and_bounded() {
        let base = br#"{"kind":"Pod","metadata":{"name":"a","labels":{"x":"1"}},"spec":{"n":[1,2.5,"x"]}}"#;
        let corpus = vec![base.to_vec(), b"{\"a\":[true,null]}\n{\"b\":1}".to_vec()];
        for kind in [
            InputKind::Json,
            InputKind::JsonLines,
            InputKind::Text,
            InputKind::Bytes,
        ] {
            let run = |seed| {
                let mut rng = Rng::new(seed);
                (0..300)
                    .map(|_| mutate(&mut rng, base, &corpus, kind, &["tok"], 4096))
                    .collect::<Vec<_>>()
            };
            let a = run(3);
            assert_eq!(a, run(3), "{kind:?}");
            assert!(a.iter().all(|m| m.len() <= 4096), "{kind:?}");
            assert!(
                a.iter().filter(|m| m.as_slice() != base).count() > 200,
                "{kind:?}"
            );
        }
    }
}
