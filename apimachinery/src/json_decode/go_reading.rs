//! How Go's JSON decoder reads text that `serde_json` refuses, as a reference for the tests
//! that hold kclient's decoder to `serde_json` (`json_decode/tests.rs`, and the fuzz crate's
//! differential target, which includes this file by path): given the input as Go reads it,
//! `serde_json` must decode what kclient's decoder decodes from the input as it stands.
//! Written apart from the decoder, so that the tests do not check it against itself.

/// `input` as Go's JSON decoder reads it: each byte that does not start a valid UTF-8 sequence
/// replaced by U+FFFD (one per byte, as Go's `utf8.DecodeRune` takes them; `from_utf8_lossy`
/// replaces a cut sequence with one).
pub(crate) fn go_text(input: &[u8]) -> String {
    let mut text = String::with_capacity(input.len());
    for chunk in input.utf8_chunks() {
        text.push_str(chunk.valid());
        for _ in chunk.invalid() {
            text.push(char::REPLACEMENT_CHARACTER);
        }
    }
    text
}

/// `input` with each surrogate escape in a string that is not the first half of a pair
/// followed by its second half replaced by `\ufffd`, as Go reads it. Bytes are kept as they
/// are, UTF-8 or not.
pub(crate) fn go_escapes(input: &[u8]) -> Vec<u8> {
    let b = input;
    let hex = |at: usize| {
        let digits = b.get(at..at + 4)?;
        digits.iter().try_fold(0u16, |value, &c| {
            let digit = char::from(c).to_digit(16)?;
            Some((value << 4) | digit as u16)
        })
    };
    let mut out = Vec::with_capacity(b.len());
    let (mut i, mut in_string) = (0, false);
    while let Some(&c) = b.get(i) {
        match c {
            b'"' => {
                in_string = !in_string;
                out.push(c);
                i += 1;
            }
            b'\\' if in_string => {
                if b.get(i + 1) == Some(&b'u')
                    && let Some(first) = hex(i + 2)
                {
                    let pair = (0xD800..0xDC00).contains(&first)
                        && b.get(i + 6..i + 8) == Some(b"\\u")
                        && hex(i + 8).is_some_and(|second| (0xDC00..0xE000).contains(&second));
                    if pair {
                        out.extend_from_slice(&b[i..i + 12]);
                        i += 12;
                        continue;
                    }
                    if (0xD800..0xE000).contains(&first) {
                        out.extend_from_slice(b"\\ufffd");
                        i += 6;
                        continue;
                    }
                }
                // Any other escape: the backslash and the byte after it, as they are.
                out.extend_from_slice(b.get(i..i + 2).unwrap_or(&b[i..]));
                i += 2;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}
