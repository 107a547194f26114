//! The byte-level half of the decoder: whitespace, strings, numbers, literals, and skipping a
//! whole value while checking its grammar (for ignored fields and raw values).
//!
//! The input is scanned as bytes: every byte the grammar stops at is ASCII, so when the input
//! is UTF-8 (checked once, up front) every slice taken between two of them is a `str` slice on
//! character boundaries. When it is not, each slice is checked as it is taken.

use super::deserializer::Deserializer;
use super::error::{Category, JsonError};

/// How deep the apiserver lets an object nest: its JSON decoder (Go's `encoding/json`) refuses
/// a request body whose arrays and objects open a 10,001st level, so a stored object nests at
/// most 10,000 levels. A custom resource whose schema keeps unknown fields can be that deep.
pub(super) const SERVER_MAX_DEPTH: u32 = 10_000;

/// How deep arrays and objects may nest before decoding stops: every object the server holds,
/// inside the envelope an answer puts around it (a list's `items`, two levels; a watch event's
/// `object`, one; a Table's `rows[].object`, three). Deeper input is an error, never a stack
/// overflow: past [`GROW_STACK_FROM`] levels the decoder grows the stack as it goes.
pub(super) const MAX_DEPTH: u32 = SERVER_MAX_DEPTH + 3;

/// From this level on, each array or object is read on a stack with room left for it (see
/// [`Deserializer::nested`](super::deserializer::Deserializer)): shallower ones, every object
/// of a usual answer, cost no stack check at all.
pub(super) const GROW_STACK_FROM: u32 = 64;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// A decoded string: borrowed from the input when it has no escapes, else unescaped into the
/// decoder's scratch buffer.
pub(super) enum Str<'de, 's> {
    Borrowed(&'de str),
    Copied(&'s str),
}

/// The index of the first byte at or after `i` that ends a plain run of string bytes: a quote,
/// a backslash or a control character (or `bytes.len()`), found eight bytes at a time by
/// [`stop_bits`], two words per round.
#[inline]
fn plain_run_end(bytes: &[u8], mut i: usize) -> usize {
    // Sixteen bytes per round, as two independent words.
    while let Some(chunk) = bytes.get(i..).and_then(|rest| rest.first_chunk::<16>()) {
        let (low, high) = chunk.split_at(8);
        let low = stop_bits(u64::from_le_bytes(low.try_into().unwrap_or_default()));
        let high = stop_bits(u64::from_le_bytes(high.try_into().unwrap_or_default()));
        if low | high != 0 {
            let bits = if low != 0 {
                low.trailing_zeros()
            } else {
                64 + high.trailing_zeros()
            };
            return i + (bits / 8) as usize;
        }
        i += 16;
    }
    if let Some(chunk) = bytes.get(i..).and_then(|rest| rest.first_chunk::<8>()) {
        let hits = stop_bits(u64::from_le_bytes(*chunk));
        if hits != 0 {
            return i + (hits.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while let Some(&b) = bytes.get(i) {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return i;
        }
        i += 1;
    }
    i
}

/// Marks the bytes of `x` (eight string bytes, little-endian) that stop a plain run: the high
/// bit of the first one (in memory order) is set, and none below it.
///
/// The classic "has a byte less than n" trick sets the high bit of the first byte meeting it
/// (bits above may be false positives, the lowest is exact). XOR-ing every byte with 0x02 maps
/// the quote (0x22) to 0x20 and the control characters (0x00-0x1F) onto themselves, and no
/// other byte below 0x21, so "below 0x21 after the XOR" finds quotes and control characters at
/// once; "equal to 0x5C" finds backslashes.
#[inline(always)]
fn stop_bits(x: u64) -> u64 {
    let quote_or_control = x ^ (ONES * 0x02);
    let backslash = x ^ (ONES * u64::from(b'\\'));
    ((quote_or_control.wrapping_sub(ONES * 0x21) & !quote_or_control)
        | (backslash.wrapping_sub(ONES) & !backslash))
        & HIGHS
}

impl<'de> Deserializer<'de> {
    /// A syntax error at the current position.
    #[cold]
    pub(super) fn syntax(&self, message: &str) -> JsonError {
        JsonError::new(Category::Syntax, message).at(self.bytes, self.pos)
    }

    /// An end-of-input error at the current position.
    #[cold]
    pub(super) fn eof(&self, what: &str) -> JsonError {
        JsonError::new(Category::Eof, format!("EOF while parsing {what}")).at(self.bytes, self.pos)
    }

    /// Skips whitespace and returns the next byte without consuming it.
    #[inline]
    pub(super) fn peek(&mut self) -> Option<u8> {
        while let Some(&b) = self.bytes.get(self.pos) {
            match b {
                b' ' | b'\n' | b'\r' | b'\t' => self.pos += 1,
                _ => return Some(b),
            }
        }
        None
    }

    /// Skips whitespace, requires `expected` next and consumes it.
    #[inline]
    pub(super) fn expect(&mut self, expected: u8, message: &str) -> Result<(), JsonError> {
        match self.peek() {
            Some(b) if b == expected => {
                self.pos += 1;
                Ok(())
            }
            Some(_) => Err(self.syntax(message)),
            None => Err(self.eof("a value")),
        }
    }

    /// Consumes the literal `word` (`null`, `true`, `false`), whose first byte was peeked.
    pub(super) fn literal(&mut self, word: &[u8]) -> Result<(), JsonError> {
        let end = self.pos + word.len();
        match self.bytes.get(self.pos..end) {
            Some(found) if found == word => {
                self.pos = end;
                Ok(())
            }
            Some(_) => Err(self.syntax("expected a value")),
            None if word.starts_with(self.bytes.get(self.pos..).unwrap_or_default()) => {
                self.pos = self.bytes.len();
                Err(self.eof("a value"))
            }
            None => Err(self.syntax("expected a value")),
        }
    }

    /// The input's bytes `start..end` as text borrowed from it; `None` where they are not
    /// UTF-8 (only when the input as a whole is not: each slice is checked then).
    #[inline(always)]
    pub(super) fn slice(&self, start: usize, end: usize) -> Option<&'de str> {
        match self.text {
            Some(text) => text.get(start..end),
            None => std::str::from_utf8(self.bytes.get(start..end)?).ok(),
        }
    }

    /// Appends the plain string bytes `start..end` to the scratch buffer, as Go reads them
    /// (see [`push_go_text`](super::push_go_text)).
    fn push_run(&mut self, start: usize, end: usize) {
        match self.text {
            Some(text) => self
                .scratch
                .push_str(text.get(start..end).unwrap_or_default()),
            None => super::push_go_text(
                &mut self.scratch,
                self.bytes.get(start..end).unwrap_or_default(),
            ),
        }
    }

    /// Reads a string whose opening quote was consumed, up to and including its closing quote.
    #[inline]
    pub(super) fn string<'s>(&'s mut self) -> Result<Str<'de, 's>, JsonError> {
        let start = self.pos;
        let end = plain_run_end(self.bytes, start);
        match self.bytes.get(end) {
            Some(b'"') => {
                self.pos = end + 1;
                match self.slice(start, end) {
                    Some(s) => Ok(Str::Borrowed(s)),
                    None => {
                        self.scratch.clear();
                        self.push_run(start, end);
                        Ok(Str::Copied(&self.scratch))
                    }
                }
            }
            Some(b'\\') => self.escaped_string(start, end),
            _ => Err(self.string_stop_error(end)),
        }
    }

    /// The slow path of [`string`](Self::string): the string has escapes, so it is unescaped
    /// into the scratch buffer. `escape` is the index of its first backslash.
    #[cold]
    #[inline(never)]
    fn escaped_string<'s>(
        &'s mut self,
        start: usize,
        mut escape: usize,
    ) -> Result<Str<'de, 's>, JsonError> {
        self.scratch.clear();
        let mut run_start = start;
        loop {
            self.push_run(run_start, escape);
            self.pos = escape + 1;
            self.unescape_one()?;
            run_start = self.pos;
            let end = plain_run_end(self.bytes, run_start);
            match self.bytes.get(end) {
                Some(b'"') => {
                    self.push_run(run_start, end);
                    self.pos = end + 1;
                    return Ok(Str::Copied(&self.scratch));
                }
                Some(b'\\') => escape = end,
                _ => return Err(self.string_stop_error(end)),
            }
        }
    }

    /// The error for a plain run of string bytes that stopped at `end` on neither a quote nor a
    /// backslash: a control character, or the end of the input.
    #[cold]
    fn string_stop_error(&mut self, end: usize) -> JsonError {
        self.pos = end;
        if end < self.bytes.len() {
            self.syntax("control character (\\u0000-\\u001F) found while parsing a string")
        } else {
            self.eof("a string")
        }
    }

    /// Decodes the escape after a backslash (at `self.pos`) onto the scratch buffer.
    fn unescape_one(&mut self) -> Result<(), JsonError> {
        let Some(&b) = self.bytes.get(self.pos) else {
            return Err(self.eof("a string"));
        };
        self.pos += 1;
        let c = match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => self.unicode_escape()?,
            _ => {
                self.pos -= 1;
                return Err(self.syntax("invalid escape"));
            }
        };
        self.scratch.push(c);
        Ok(())
    }

    /// Decodes `XXXX` after `\u` (and the second half of a surrogate pair) as Go's decoder
    /// does: a surrogate that is not the first half of a pair followed by its second half (a
    /// lone one, a second half first) reads as U+FFFD, and what follows it is read on its own.
    /// `serde_json` refuses it; the apiserver writes one back as a client sent it, inside a raw
    /// field, and Go's decoder (client-go's `Unstructured`) reads it.
    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let first = self.hex4()?;
        if !(0xD800..=0xDFFF).contains(&first) {
            // Not a surrogate: a scalar value.
            return char::from_u32(u32::from(first))
                .ok_or_else(|| self.syntax("invalid unicode code point"));
        }
        if (0xD800..=0xDBFF).contains(&first)
            && self.bytes.get(self.pos..self.pos + 2) == Some(b"\\u")
            && let Some(second) = self.hex4_at(self.pos + 2)
            && (0xDC00..=0xDFFF).contains(&second)
        {
            self.pos += 6;
            let code = 0x10000 + ((u32::from(first) - 0xD800) << 10) + (u32::from(second) - 0xDC00);
            // Every pair is a scalar value; the error only avoids a panic path.
            return char::from_u32(code).ok_or_else(|| self.syntax("invalid unicode code point"));
        }
        Ok(char::REPLACEMENT_CHARACTER)
    }

    /// The four hex digits at `at`, if there are four, without consuming them.
    fn hex4_at(&self, at: usize) -> Option<u16> {
        let digits = self.bytes.get(at..at + 4)?;
        digits.iter().try_fold(0u16, |value, &b| {
            let digit = char::from(b).to_digit(16)?;
            Some((value << 4) | digit as u16)
        })
    }

    /// Four hex digits.
    fn hex4(&mut self) -> Result<u16, JsonError> {
        let mut value: u16 = 0;
        for _ in 0..4 {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err(self.eof("a string"));
            };
            let digit = match b {
                b'0'..=b'9' => b - b'0',
                b'a'..=b'f' => b - b'a' + 10,
                b'A'..=b'F' => b - b'A' + 10,
                _ => return Err(self.syntax("invalid escape")),
            };
            value = (value << 4) | u16::from(digit);
            self.pos += 1;
        }
        Ok(value)
    }

    /// Skips a string whose opening quote was consumed, checking its escapes.
    #[inline(always)]
    fn skip_string(&mut self) -> Result<(), JsonError> {
        loop {
            let end = plain_run_end(self.bytes, self.pos);
            match self.bytes.get(end) {
                Some(b'"') => {
                    self.pos = end + 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos = end + 1;
                    match self.bytes.get(self.pos) {
                        Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
                            self.pos += 1;
                        }
                        Some(b'u') => {
                            self.pos += 1;
                            self.hex4()?;
                        }
                        Some(_) => return Err(self.syntax("invalid escape")),
                        None => return Err(self.eof("a string")),
                    }
                }
                _ => return Err(self.string_stop_error(end)),
            }
        }
    }

    /// Consumes the digits at the current position and returns how many there were.
    #[inline]
    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
        self.pos - start
    }

    /// Scans a number (its first byte was peeked) and checks its grammar: `-`? then `0` or a
    /// digit run not starting with `0`, then an optional fraction and exponent. Returns whether
    /// it has a fraction or an exponent.
    pub(super) fn scan_number(&mut self) -> Result<bool, JsonError> {
        if self.bytes.get(self.pos) == Some(&b'-') {
            self.pos += 1;
        }
        match self.bytes.get(self.pos) {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.bytes.get(self.pos) {
                    return Err(self.syntax("invalid number"));
                }
            }
            Some(b'1'..=b'9') => {
                self.digits();
            }
            Some(_) => return Err(self.syntax("invalid number")),
            None => return Err(self.eof("a number")),
        }
        let mut float = false;
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            if self.digits() == 0 {
                return Err(self.number_end_error());
            }
            float = true;
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.number_end_error());
            }
            float = true;
        }
        Ok(float)
    }

    #[cold]
    fn number_end_error(&self) -> JsonError {
        if self.pos >= self.bytes.len() {
            self.eof("a number")
        } else {
            self.syntax("invalid number")
        }
    }

    /// Skips one value (whitespace first), checking its grammar; arrays and objects nest at
    /// most as deep as the decoder still allows.
    ///
    /// A loop, not a recursion: the open containers are bits (1 for an object), the innermost
    /// 128 in a `u128`, the ones around them in a vector that only input nested deeper than
    /// that touches. Field sets, a third of a Pod's bytes, are skipped this way.
    pub(super) fn skip_value(&mut self) -> Result<(), JsonError> {
        let mut open: u128 = 0;
        let mut outer: Vec<u128> = Vec::new();
        let mut level: u32 = 0;
        loop {
            // A value is expected.
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    self.skip_string()?;
                }
                Some(b @ (b'{' | b'[')) => {
                    if level >= self.depth {
                        return Err(self.too_deep());
                    }
                    self.pos += 1;
                    let object = b == b'{';
                    let close = if object { b'}' } else { b']' };
                    if self.peek() == Some(close) {
                        self.pos += 1;
                    } else {
                        if level != 0 && level.is_multiple_of(128) {
                            outer.push(open);
                            open = 0;
                        }
                        open = (open << 1) | u128::from(object);
                        level += 1;
                        if object {
                            self.skip_key()?;
                        }
                        continue;
                    }
                }
                Some(b'n') => self.literal(b"null")?,
                Some(b't') => self.literal(b"true")?,
                Some(b'f') => self.literal(b"false")?,
                Some(b'-' | b'0'..=b'9') => {
                    self.scan_number()?;
                }
                Some(_) => return Err(self.syntax("expected a value")),
                None => return Err(self.eof("a value")),
            }
            // A value ended: close containers until one goes on with a `,`.
            loop {
                if level == 0 {
                    return Ok(());
                }
                let object = open & 1 == 1;
                match self.peek() {
                    Some(b',') => {
                        self.pos += 1;
                        if object {
                            self.skip_key()?;
                        }
                        break;
                    }
                    Some(b'}') if object => {}
                    Some(b']') if !object => {}
                    Some(_) if object => return Err(self.syntax("expected `,` or `}`")),
                    Some(_) => return Err(self.syntax("expected `,` or `]`")),
                    None if object => return Err(self.eof("an object")),
                    None => return Err(self.eof("a list")),
                }
                self.pos += 1;
                open >>= 1;
                level -= 1;
                if level != 0 && level.is_multiple_of(128) {
                    open = outer.pop().unwrap_or_default();
                }
            }
        }
    }

    /// The error for an array or object that would nest deeper than [`MAX_DEPTH`].
    #[cold]
    pub(super) fn too_deep(&self) -> JsonError {
        self.syntax(&format!(
            "recursion limit exceeded: arrays and objects nest more than {MAX_DEPTH} levels \
             deep (the apiserver stores objects up to {SERVER_MAX_DEPTH} levels)"
        ))
    }

    /// Skips an object's key and the `:` after it.
    #[inline(always)]
    fn skip_key(&mut self) -> Result<(), JsonError> {
        self.expect(b'"', "key must be a string")?;
        self.skip_string()?;
        self.expect(b':', "expected `:`")
    }

    /// Goes one level deeper into an array or object.
    #[inline]
    pub(super) fn enter(&mut self) -> Result<(), JsonError> {
        if self.depth == 0 {
            return Err(self.too_deep());
        }
        self.depth -= 1;
        Ok(())
    }

    /// Comes back out of an array or object.
    #[inline]
    pub(super) fn leave(&mut self) {
        self.depth += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::plain_run_end;

    #[test]
    fn a_plain_run_ends_at_the_first_quote_backslash_or_control_byte() {
        // Every position of every stop byte, in runs longer and shorter than eight bytes.
        for len in 0..20 {
            for stop in [b'"', b'\\', 0x00, 0x1f, b'\n'] {
                for at in 0..len {
                    let mut bytes = vec![b'a'; len];
                    bytes[at] = stop;
                    // Bytes that must not stop a run, after the stop byte.
                    bytes.extend_from_slice("é\u{7f} ~!".as_bytes());
                    assert_eq!(plain_run_end(&bytes, 0), at, "{bytes:?}");
                }
            }
            let bytes = "é\u{7f} ~!#[]{}".repeat(len);
            assert_eq!(plain_run_end(bytes.as_bytes(), 0), bytes.len());
        }
    }

    #[test]
    fn every_byte_value_at_every_position_stops_a_run_or_not() {
        for stop in 0..=u8::MAX {
            let stops = stop == b'"' || stop == b'\\' || stop < 0x20;
            for len in 0..20 {
                for at in 0..len {
                    // Runs of bytes that never stop one, around the byte under test.
                    for filler in [b'a', b' ', b'!', b'#', 0x21, 0x7f, 0x80, 0xff] {
                        let mut bytes = vec![filler; len];
                        bytes[at] = stop;
                        let want = if stops { at } else { len };
                        assert_eq!(
                            plain_run_end(&bytes, 0),
                            want,
                            "{stop:#x} at {at} in {bytes:?}"
                        );
                    }
                }
            }
        }
    }
}
