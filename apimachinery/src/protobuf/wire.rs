//! The protobuf wire format: [`Reader`] reads tags, varints, fixed values and length-delimited
//! bytes from a borrowed buffer, checking every length against what is left; [`Writer`]
//! appends them to a `Vec<u8>`.
//!
//! Nothing is allocated on the strength of a length prefix: a length is first checked against
//! the bytes left, so what a decoder allocates is bounded by the input's size.

use super::error::{ProtoError, ProtoErrorKind};

/// How deep messages may nest (a CRD's schema is the deepest built-in structure; each level of
/// it is one to three messages: `not`, a map entry and its value, an `items` wrapper and its
/// schema). Decoding recurses once per message, so the limit is what fits on a tokio worker's
/// 2 MiB stack in a debug build, whichever way a schema nests (a level of `properties` takes
/// about 23 KB there), with room to spare; it is about the JSON decoder's limit (127 levels).
pub const MAX_DEPTH: u32 = 128;

/// The wire types of protobuf: those Kubernetes' messages use, and groups, which are only
/// skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireType {
    /// 0: a varint (`int32`, `int64`, `bool`).
    Varint = 0,
    /// 1: eight little-endian bytes (`double`).
    Fixed64 = 1,
    /// 2: a length, then that many bytes (strings, bytes, messages, packed repeated values).
    Len = 2,
    /// 5: four little-endian bytes (`float`; Kubernetes has none, accepted for skipping).
    Fixed32 = 5,
    /// 3: the start of a group (proto2's deprecated groups; Kubernetes has none, accepted for
    /// skipping, as Go's generated code skips them): fields up to the matching end group (4).
    StartGroup = 3,
}

/// Reads one protobuf message from a borrowed buffer.
///
/// A field that accumulates (a map, a list, a message, which merges when seen again) may come
/// back after other fields: protobuf allows it, though Go never writes it. The field helpers
/// read such a field's first run of occurrences as they come; when the field comes back, they
/// read that occurrence and every later one at once (the reader marks the field) and skip the
/// later ones when the message's loop reaches them. A frozen map or list is thus rebuilt at
/// most twice per message, not once per occurrence, and N occurrences cost O(N log N), not
/// O(N^2).
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Offset of `buf[0]` in the whole input, for error messages.
    base: usize,
    depth: u32,
    /// The occurrences after `buf` of a message read as one ([`gather`](Self::gather)), read
    /// in turn once `buf` is done; a field never spans two of them. Empty otherwise.
    rest: &'a [Chunk<'a>],
    /// The accumulating fields (numbers 1 to 63) whose occurrences a field helper has read
    /// ([`occurrence`](Self::occurrence)); larger numbers, which Kubernetes does not use, are
    /// not tracked and read occurrence by occurrence.
    seen: u64,
    /// The fields among `seen` whose later occurrences have been read already.
    drained: u64,
}

/// One occurrence of a message field: its bytes and their offset in the whole input.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Chunk<'a> {
    bytes: &'a [u8],
    base: usize,
}

/// How a field helper meets an occurrence of an accumulating field ([`Reader::occurrence`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Occurrence {
    /// The field's first occurrence in this message (or an untracked field): read it and those
    /// right after it.
    First,
    /// The field is back after other fields: read this occurrence and every later one now.
    Again,
    /// Every occurrence from here on has been read: skip it.
    Drained,
}

impl<'a> Reader<'a> {
    /// A reader of a whole message.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader {
            buf,
            pos: 0,
            base: 0,
            depth: 0,
            rest: &[],
            seen: 0,
            drained: 0,
        }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.buf.len() && self.rest.is_empty()
    }

    /// Records an occurrence of accumulating field `field` (its tag read) and says how to
    /// read it.
    #[inline]
    pub(crate) fn occurrence(&mut self, field: u32) -> Occurrence {
        let Some(bit) = 1u64.checked_shl(field) else {
            return Occurrence::First;
        };
        if self.drained & bit != 0 {
            Occurrence::Drained
        } else if self.seen & bit != 0 {
            Occurrence::Again
        } else {
            self.seen |= bit;
            Occurrence::First
        }
    }

    /// Calls `each` on every later occurrence of `field` in this message, in order, with its
    /// wire type (its tag read; `each` reads the value), skipping the fields between; then
    /// marks `field` drained, so that those occurrences are skipped when the message's loop
    /// reaches them. Fails if a field between is malformed, as the loop would.
    pub(crate) fn drain_later(
        &mut self,
        field: u32,
        mut each: impl FnMut(WireType, &mut Reader<'a>) -> Result<(), ProtoError>,
    ) -> Result<(), ProtoError> {
        let mut scan = Reader {
            buf: self.buf,
            pos: self.pos,
            base: self.base,
            depth: self.depth,
            rest: self.rest,
            seen: 0,
            drained: 0,
        };
        while let Some((f, wire)) = scan.next_field()? {
            if f == field {
                each(wire, &mut scan)?;
            } else {
                scan.skip(wire)?;
            }
        }
        if let Some(bit) = 1u64.checked_shl(field) {
            self.drained |= bit;
        }
        Ok(())
    }

    /// The bytes of this occurrence of message field `field` (its tag read, its length next)
    /// and of every later one in this message, to be read as one message with
    /// [`joined`](Self::joined): protobuf reads a message seen again as if its occurrences
    /// came one after another. Marks `field` drained ([`drain_later`](Self::drain_later)).
    pub(crate) fn gather(&mut self, field: u32) -> Result<Vec<Chunk<'a>>, ProtoError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(ProtoErrorKind::TooDeep));
        }
        let mut chunks = Vec::new();
        let mut add = |r: &mut Reader<'a>| -> Result<(), ProtoError> {
            let bytes = r.bytes()?;
            // An empty occurrence adds nothing; leaving it out keeps every chunk non-empty,
            // which `next_field` counts on.
            if !bytes.is_empty() {
                let base = r.base + r.pos - bytes.len();
                chunks.push(Chunk { bytes, base });
            }
            Ok(())
        };
        add(self)?;
        self.drain_later(field, |wire, scan| {
            scan.expect(field, wire, WireType::Len)?;
            add(scan)
        })?;
        Ok(chunks)
    }

    /// A reader of `chunks` (from [`gather`](Self::gather)) as one message, one level deeper.
    pub(crate) fn joined<'b>(&self, chunks: &'b [Chunk<'a>]) -> Reader<'b> {
        let (buf, base, rest): (&[u8], usize, &[Chunk<'_>]) = match chunks.split_first() {
            Some((first, rest)) => (first.bytes, first.base, rest),
            None => (&[], self.base + self.pos, &[]),
        };
        Reader {
            buf,
            pos: 0,
            base,
            depth: self.depth + 1,
            rest,
            seen: 0,
            drained: 0,
        }
    }

    /// Moves on to the next of `rest`, at the end of `buf`; false if there is none.
    #[cold]
    #[inline(never)]
    fn next_chunk(&mut self) -> bool {
        match self.rest.split_first() {
            Some((next, rest)) => {
                self.buf = next.bytes;
                self.pos = 0;
                self.base = next.base;
                self.rest = rest;
                true
            }
            None => false,
        }
    }

    /// An error of `kind` at the current position.
    pub fn error(&self, kind: ProtoErrorKind) -> ProtoError {
        ProtoError::new(kind, self.base + self.pos)
    }

    /// A [`ProtoErrorKind::InvalidValue`] at the current position.
    pub fn invalid(&self, message: impl Into<String>) -> ProtoError {
        self.error(ProtoErrorKind::InvalidValue {
            message: message.into(),
        })
    }

    /// Reads a varint.
    #[inline]
    pub fn varint(&mut self) -> Result<u64, ProtoError> {
        // Fast paths: one byte (tags, small numbers, short lengths) and two (the lengths of
        // most strings and nested messages).
        if let Some(&b0) = self.buf.get(self.pos) {
            if b0 < 0x80 {
                self.pos += 1;
                return Ok(u64::from(b0));
            }
            if let Some(&b1) = self.buf.get(self.pos + 1)
                && b1 < 0x80
            {
                self.pos += 2;
                return Ok(u64::from(b0 & 0x7f) | u64::from(b1) << 7);
            }
        }
        self.varint_long()
    }

    /// [`varint`](Self::varint) past its fast paths: three bytes or more, or the end.
    #[inline(never)]
    fn varint_long(&mut self) -> Result<u64, ProtoError> {
        let mut value = 0u64;
        for i in 0..10 {
            let Some(&b) = self.buf.get(self.pos) else {
                return Err(self.error(ProtoErrorKind::Truncated));
            };
            self.pos += 1;
            if i == 9 && b > 1 {
                return Err(self.error(ProtoErrorKind::VarintOverflow));
            }
            value |= u64::from(b & 0x7f) << (7 * i);
            if b < 0x80 {
                return Ok(value);
            }
        }
        Err(self.error(ProtoErrorKind::VarintOverflow))
    }

    /// Reads the next field's tag: `None` at the end of the message.
    #[inline(always)]
    pub fn next_field(&mut self) -> Result<Option<(u32, WireType)>, ProtoError> {
        if self.pos >= self.buf.len() && !self.next_chunk() {
            return Ok(None);
        }
        let start = self.pos;
        let tag = self.varint()?;
        let field = tag >> 3;
        let wire = match tag & 7 {
            0 => WireType::Varint,
            1 => WireType::Fixed64,
            2 => WireType::Len,
            3 => WireType::StartGroup,
            5 => WireType::Fixed32,
            // 4 (an end group outside a group, which `skip` consumes), 6 and 7.
            _ => {
                self.pos = start;
                return Err(self.error(ProtoErrorKind::InvalidTag { tag }));
            }
        };
        if field == 0 || field > u64::from(u32::MAX >> 3) {
            self.pos = start;
            return Err(self.error(ProtoErrorKind::InvalidTag { tag }));
        }
        Ok(Some((field as u32, wire)))
    }

    /// Whether the next tag is `field` with wire type `wire` (a repeated field's next element);
    /// if so, it is consumed.
    #[inline(always)]
    pub fn next_is(&mut self, field: u32, wire: WireType) -> bool {
        // Compares the tag's encoding with the next bytes rather than decoding a varint: one
        // byte for fields 1 to 15 (inlined), two up to 2047 (every Kubernetes field number).
        let tag = (u64::from(field) << 3) | wire as u64;
        if tag < 0x80 {
            let next = self.buf.get(self.pos) == Some(&(tag as u8));
            self.pos += usize::from(next);
            return next;
        }
        self.next_is_long(tag)
    }

    /// [`next_is`](Self::next_is) for a tag of two bytes or more.
    #[inline(never)]
    fn next_is_long(&mut self, tag: u64) -> bool {
        let rest = self.buf.get(self.pos..).unwrap_or_default();
        let len = if tag < 0x4000 {
            let encoded = [(tag as u8) | 0x80, (tag >> 7) as u8];
            rest.starts_with(&encoded).then_some(2)
        } else {
            let mut probe = Reader::new(rest);
            (probe.varint().ok() == Some(tag)).then_some(probe.pos)
        };
        match len {
            Some(len) => {
                self.pos += len;
                true
            }
            None => false,
        }
    }

    /// How many length-delimited values of field `field` follow one another from here, the
    /// first one's tag already read: 1 plus the repeats right after it (Go writes a repeated
    /// field's elements and a map's entries together). Only looks ahead, on a copy of the
    /// reader, so that a list is allocated once at its size; never more than the bytes left.
    pub fn count_len_run(&self, field: u32) -> usize {
        let mut scan = Reader {
            buf: self.buf,
            pos: self.pos,
            base: self.base,
            depth: self.depth,
            rest: &[],
            seen: 0,
            drained: 0,
        };
        let mut n = 0;
        while let Ok(len) = scan.varint() {
            let end = usize::try_from(len)
                .ok()
                .and_then(|len| scan.pos.checked_add(len))
                .filter(|end| *end <= scan.buf.len());
            let Some(end) = end else { break };
            scan.pos = end;
            n += 1;
            if !scan.next_is(field, WireType::Len) {
                break;
            }
        }
        n.max(1)
    }

    /// Fails unless `wire` is `expected` (for field `field`).
    #[inline]
    pub fn expect(&self, field: u32, wire: WireType, expected: WireType) -> Result<(), ProtoError> {
        if wire == expected {
            Ok(())
        } else {
            Err(self.error(ProtoErrorKind::WrongWireType {
                field,
                expected: expected as u8,
                found: wire as u8,
            }))
        }
    }

    /// The bytes of the length-delimited value at the reader's position when its length
    /// prefix is one byte (under 128: most strings) and they are all there, with the position
    /// after them; the reader does not move. `None` means "take [`bytes`](Self::bytes)".
    #[inline(always)]
    pub(crate) fn peek_short_bytes(&self) -> Option<(&'a [u8], usize)> {
        let len = *self.buf.get(self.pos)?;
        if len >= 0x80 {
            return None;
        }
        let end = self.pos + 1 + usize::from(len);
        Some((self.buf.get(self.pos + 1..end)?, end))
    }

    /// Moves the reader to `pos`, a position [`peek_short_bytes`](Self::peek_short_bytes)
    /// returned.
    #[inline(always)]
    pub(crate) fn advance_to(&mut self, pos: usize) {
        debug_assert!(pos >= self.pos && pos <= self.buf.len());
        self.pos = pos;
    }

    /// Reads a length prefix and the bytes it covers.
    #[inline]
    pub fn bytes(&mut self) -> Result<&'a [u8], ProtoError> {
        let len = self.varint()?;
        let remaining = self.buf.len() - self.pos;
        if len > remaining as u64 {
            return Err(self.error(ProtoErrorKind::LengthPastEnd {
                length: len,
                remaining,
            }));
        }
        let start = self.pos;
        self.pos += len as usize;
        Ok(&self.buf[start..self.pos])
    }

    /// Reads a UTF-8 string of field `field`.
    #[inline]
    pub fn str(&mut self, field: u32) -> Result<&'a str, ProtoError> {
        self.text(field, simdutf8::basic::from_utf8)
    }

    /// Reads a length-delimited text of field `field` and makes a `T` of it with `convert`,
    /// which validates the bytes as UTF-8 as far as it needs to (for example
    /// [`IStr::from_utf8`](crate::meta::IStr::from_utf8)); its error is reported as invalid
    /// UTF-8 at the text's start.
    #[inline]
    pub fn text<T, E>(
        &mut self,
        field: u32,
        convert: impl FnOnce(&'a [u8]) -> Result<T, E>,
    ) -> Result<T, ProtoError> {
        let start = self.pos;
        let bytes = self.bytes()?;
        convert(bytes)
            .map_err(|_| ProtoError::new(ProtoErrorKind::InvalidUtf8 { field }, self.base + start))
    }

    /// Reads eight little-endian bytes.
    pub fn fixed64(&mut self) -> Result<u64, ProtoError> {
        let Some(bytes) = self.buf.get(self.pos..self.pos + 8) else {
            return Err(self.error(ProtoErrorKind::Truncated));
        };
        let mut word = [0u8; 8];
        word.copy_from_slice(bytes);
        self.pos += 8;
        Ok(u64::from_le_bytes(word))
    }

    /// A reader of the length-delimited message that follows, one level deeper.
    #[inline]
    pub fn nested(&mut self) -> Result<Reader<'a>, ProtoError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(ProtoErrorKind::TooDeep));
        }
        let bytes = self.bytes()?;
        Ok(Reader {
            buf: bytes,
            pos: 0,
            base: self.base + self.pos - bytes.len(),
            depth: self.depth + 1,
            rest: &[],
            seen: 0,
            drained: 0,
        })
    }

    /// Skips a value of wire type `wire` (an unknown field from a newer server).
    pub fn skip(&mut self, wire: WireType) -> Result<(), ProtoError> {
        match wire {
            WireType::Varint => self.varint().map(drop),
            WireType::Fixed64 => self.fixed64().map(drop),
            WireType::Len => self.bytes().map(drop),
            WireType::Fixed32 => {
                if self.buf.len() - self.pos < 4 {
                    return Err(self.error(ProtoErrorKind::Truncated));
                }
                self.pos += 4;
                Ok(())
            }
            WireType::StartGroup => self.skip_group(),
        }
    }

    /// Skips a group whose start tag has been read: its fields and the groups nested in it,
    /// through the end group that closes it. Like Go's `skipGenerated`, it counts starts and
    /// ends without matching their field numbers; the input ending first is an error.
    fn skip_group(&mut self) -> Result<(), ProtoError> {
        let mut open = 1u64;
        while open > 0 {
            if self.is_empty() {
                return Err(self.error(ProtoErrorKind::Truncated));
            }
            let start = self.pos;
            let tag = self.varint()?;
            match tag & 7 {
                0 => self.skip(WireType::Varint)?,
                1 => self.skip(WireType::Fixed64)?,
                2 => self.skip(WireType::Len)?,
                3 => open += 1,
                4 => open -= 1,
                5 => self.skip(WireType::Fixed32)?,
                _ => {
                    self.pos = start;
                    return Err(self.error(ProtoErrorKind::InvalidTag { tag }));
                }
            }
        }
        Ok(())
    }
}

/// Appends a protobuf message to a buffer.
#[derive(Debug, Default)]
pub struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    /// An empty writer.
    pub fn new() -> Self {
        Writer::default()
    }

    /// A writer appending to `buf`.
    pub fn from_vec(buf: Vec<u8>) -> Self {
        Writer { buf }
    }

    /// The bytes written.
    pub fn into_vec(self) -> Vec<u8> {
        self.buf
    }

    /// Appends a varint.
    #[inline]
    pub fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.buf.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.buf.push(value as u8);
    }

    /// Appends a tag.
    #[inline]
    pub fn tag(&mut self, field: u32, wire: WireType) {
        self.varint((u64::from(field) << 3) | wire as u64);
    }

    /// Appends a length prefix and `bytes`.
    #[inline]
    pub fn bytes(&mut self, bytes: &[u8]) {
        self.varint(bytes.len() as u64);
        self.buf.extend_from_slice(bytes);
    }

    /// Appends eight little-endian bytes.
    pub fn fixed64(&mut self, value: u64) {
        self.buf.extend_from_slice(&value.to_le_bytes());
    }

    /// Appends a length-delimited message written by `body`: the length is patched in after
    /// (one byte reserved; a longer length moves the body up).
    #[inline]
    pub fn nested(&mut self, body: impl FnOnce(&mut Writer)) {
        let at = self.buf.len();
        self.buf.push(0);
        body(self);
        let len = self.buf.len() - at - 1;
        if len < 0x80 {
            self.buf[at] = len as u8;
            return;
        }
        let mut prefix = [0u8; 10];
        let mut n = 0;
        let mut value = len as u64;
        while value >= 0x80 {
            prefix[n] = (value as u8) | 0x80;
            value >>= 7;
            n += 1;
        }
        prefix[n] = value as u8;
        n += 1;
        self.buf
            .splice(at..at + 1, prefix[..n].iter().copied())
            .for_each(drop);
    }
}
