//! Kubernetes protobuf (`application/vnd.kubernetes.protobuf`): the wire format, the traits
//! that generated types implement, and the field helpers their generated code calls.
//!
//! kclient decodes protobuf into the same types it decodes JSON into: `api/gen` emits, for every
//! generated struct, an implementation of [`Message`] whose field numbers and wire types come
//! from the `generated.proto` files of Kubernetes (checked in under `api/proto/`). Values follow
//! Go's (gogo) encoding of `k8s.io/api`:
//!
//! - a Go value field (not a pointer) is always written, even when empty; a pointer only when set;
//! - repeated fields are written unpacked, one tag per element (packed input is accepted);
//! - maps are repeated entry messages (`key = 1`, `value = 2`), sorted by key;
//! - a message field seen twice merges, a scalar field seen twice keeps the last value;
//! - unknown fields (from a newer server) are skipped, groups too (as Go skips them);
//! - a string that is not UTF-8 (Go's strings are bytes, unchecked) reads with each bad byte
//!   replaced by U+FFFD, as the server's JSON shows it.
//!
//! Decoding never panics: truncated input, lengths past the end, wrong wire types and nesting
//! beyond [`MAX_DEPTH`] are [`ProtoError`]s, and nothing is allocated from a length prefix
//! before the bytes it announces are known to be there.
//!
//! Only compiled with the `protobuf` feature.

mod codec;
mod envelope;
mod error;
mod values;
mod wire;

pub use codec::ProtobufCodec;
pub use envelope::{
    CONTENT_TYPE_PROTOBUF, MAGIC, Unknown, decode_object, decode_status, decode_watch_event,
    encode, encode_watch_frame, split_watch_event,
};
pub use error::{ProtoError, ProtoErrorKind};
pub use wire::{MAX_DEPTH, Reader, WireType, Writer};

use crate::meta::{IStr, List, Map};

/// A list as a map value (`map<string, ExtraValue>`): a message wrapping the list as
/// `repeated T items = 1`.
impl<T: Value> Value for List<T> {
    const WIRE: WireType = WireType::Len;

    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        let mut m = r.nested()?;
        let mut list = List::new();
        while let Some((f, wire)) = m.next_field()? {
            if f == 1 {
                // The wrapper's own field 1 (not the map's number): its run of items.
                merge_list(&mut list, 1, wire, &mut m)?;
            } else {
                m.skip(wire)?;
            }
        }
        Ok(list)
    }

    /// Another occurrence of the wrapper appends its items (a message seen twice merges, as
    /// Go's `Verbs.Unmarshal` appends).
    fn merge_from(&mut self, field: u32, r: &mut Reader<'_>) -> Result<(), ProtoError> {
        let more = Self::read(field, r)?;
        if self.is_empty() {
            *self = more;
        } else if !more.is_empty() {
            let mut all = std::mem::take(self).into_vec();
            all.extend(more.into_vec());
            *self = List::from(all);
        }
        Ok(())
    }

    fn write(&self, w: &mut Writer) {
        w.nested(|w| put_list(w, 1, self));
    }
}

/// A protobuf message: a generated struct or a hand-written one (`Status`, `ListMeta`, ...).
pub trait Message: Default {
    /// Reads one field whose tag has been read: `field` number, `wire` type. Unknown fields
    /// are skipped.
    fn merge_field(
        &mut self,
        field: u32,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), ProtoError>;

    /// Writes every field, as Go would.
    fn encode_fields(&self, w: &mut Writer);

    /// Reads fields until the end of `r`, merging them into `self`.
    fn merge(&mut self, r: &mut Reader<'_>) -> Result<(), ProtoError> {
        while let Some((field, wire)) = r.next_field()? {
            self.merge_field(field, wire, r)?;
        }
        Ok(())
    }

    /// Decodes a whole buffer as one message.
    fn decode_protobuf(buf: &[u8]) -> Result<Self, ProtoError> {
        let mut value = Self::default();
        value.merge(&mut Reader::new(buf))?;
        Ok(value)
    }

    /// Encodes the message.
    fn encode_protobuf(&self) -> Vec<u8> {
        let mut w = Writer::new();
        self.encode_fields(&mut w);
        w.into_vec()
    }
}

/// A value that one field occurrence holds: a scalar, a string, a value type (`Quantity`,
/// `Time`, ...) or a message. Generated code reads and writes fields through it.
pub trait Value: Sized {
    /// The wire type of one occurrence.
    const WIRE: WireType;

    /// Reads one occurrence (its tag read and checked to be [`WIRE`](Self::WIRE)).
    fn read(field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError>;

    /// Reads another occurrence into `self`: a message merges, anything else is replaced.
    fn merge_from(&mut self, field: u32, r: &mut Reader<'_>) -> Result<(), ProtoError> {
        *self = Self::read(field, r)?;
        Ok(())
    }

    /// Reads one occurrence onto the end of `list`. A message is decoded where it stays
    /// rather than built aside and moved there (a `Container` is 512 bytes).
    #[inline]
    fn read_push(field: u32, r: &mut Reader<'_>, list: &mut Vec<Self>) -> Result<(), ProtoError> {
        list.push(Self::read(field, r)?);
        Ok(())
    }

    /// Reads one occurrence into the empty `slot`, a message in place as [`read_push`]
    /// does.
    ///
    /// [`read_push`]: Self::read_push
    #[inline]
    fn read_into(
        field: u32,
        r: &mut Reader<'_>,
        slot: &mut Option<Self>,
    ) -> Result<(), ProtoError> {
        *slot = Some(Self::read(field, r)?);
        Ok(())
    }

    /// Writes the value (after its tag; a length-delimited value with its length).
    fn write(&self, w: &mut Writer);

    /// Whether this is the zero value Go leaves out of JSON (`""`, `0`, `false`, zero time,
    /// empty raw JSON): a field that Go's JSON omits when zero decodes it as unset.
    fn is_zero(&self) -> bool {
        false
    }
}

impl<T: Message> Value for T {
    const WIRE: WireType = WireType::Len;

    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        let mut value = T::default();
        value.merge(&mut r.nested()?)?;
        Ok(value)
    }

    fn merge_from(&mut self, _field: u32, r: &mut Reader<'_>) -> Result<(), ProtoError> {
        self.merge(&mut r.nested()?)
    }

    #[inline]
    fn read_push(_field: u32, r: &mut Reader<'_>, list: &mut Vec<Self>) -> Result<(), ProtoError> {
        let mut m = r.nested()?;
        list.push(T::default());
        match list.last_mut() {
            Some(value) => value.merge(&mut m),
            None => Ok(()),
        }
    }

    #[inline]
    fn read_into(
        _field: u32,
        r: &mut Reader<'_>,
        slot: &mut Option<Self>,
    ) -> Result<(), ProtoError> {
        let mut m = r.nested()?;
        slot.insert(T::default()).merge(&mut m)
    }

    fn write(&self, w: &mut Writer) {
        w.nested(|w| self.encode_fields(w));
    }
}

/// Writes the zero value of a `T` field: what Go writes for an unset value field.
fn write_zero<T: Value>(w: &mut Writer) {
    match T::WIRE {
        WireType::Varint | WireType::Len => w.varint(0),
        WireType::Fixed64 => w.fixed64(0),
        WireType::Fixed32 => w.fixed64(0), // no Kubernetes field is fixed32
        WireType::StartGroup => {}         // nor a group
    }
}

// ---- decoding helpers called by generated code ----

/// Reads field `field` into a required value.
#[inline]
pub fn merge<T: Value>(
    slot: &mut T,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    r.expect(field, wire, T::WIRE)?;
    slot.merge_from(field, r)
}

/// Reads field `field` into an optional value. With `zero_is_unset` (a Go value field that
/// JSON omits when zero, or a type whose zero JSON writes as `null`), a zero value reads as
/// `None`, as the same object decodes from JSON.
#[inline]
pub fn merge_option<T: Value>(
    slot: &mut Option<T>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
    zero_is_unset: bool,
) -> Result<(), ProtoError> {
    r.expect(field, wire, T::WIRE)?;
    match slot {
        Some(value) => value.merge_from(field, r)?,
        None => T::read_into(field, r, slot)?,
    }
    if zero_is_unset && slot.as_ref().is_some_and(Value::is_zero) {
        *slot = None;
    }
    Ok(())
}

/// Reads field `field` into an optional boxed message.
#[inline]
pub fn merge_boxed<T: Message>(
    slot: &mut Option<Box<T>>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    r.expect(field, wire, WireType::Len)?;
    slot.get_or_insert_with(Box::default)
        .merge(&mut r.nested()?)
}

/// Reads the elements of repeated field `field` that follow one another (usually all of them)
/// and appends them to `slot`. Packed scalars (one length-delimited run) are accepted too.
pub fn merge_list<T: Value>(
    slot: &mut List<T>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    let mut items = Vec::new();
    if wire == WireType::Len && T::WIRE == WireType::Len {
        // One allocation at the list's size, as the JSON decoder makes.
        items.reserve_exact(r.count_len_run(field));
    }
    if wire == WireType::Len && T::WIRE != WireType::Len {
        let mut packed = r.nested()?;
        while !packed.is_empty() {
            items.push(T::read(field, &mut packed)?);
        }
    } else {
        r.expect(field, wire, T::WIRE)?;
        T::read_push(field, r, &mut items)?;
        while r.next_is(field, T::WIRE) {
            T::read_push(field, r, &mut items)?;
        }
    }
    if slot.is_empty() {
        *slot = List::from(items);
    } else {
        let mut all = std::mem::take(slot).into_vec();
        all.append(&mut items);
        *slot = List::from(all);
    }
    Ok(())
}

/// [`merge_list`] into an optional list.
#[inline]
pub fn merge_option_list<T: Value>(
    slot: &mut Option<List<T>>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    merge_list(slot.get_or_insert_with(List::new), field, wire, r)
}

/// One map entry: `key = 1`, `value = 2` (either may be absent: Go reads it as zero; either
/// seen twice is the last one).
fn read_entry<V: Value + Default>(field: u32, r: &mut Reader<'_>) -> Result<(IStr, V), ProtoError> {
    let mut entry = r.nested()?;
    // Go writes the key, then the value: read them so without the loop, which takes over
    // from wherever the entry stops looking like that.
    if entry.next_is(1, WireType::Len) {
        let key = IStr::read(field, &mut entry)?;
        if entry.next_is(2, V::WIRE) {
            let value = V::read(field, &mut entry)?;
            if entry.is_empty() {
                return Ok((key, value));
            }
            return read_entry_rest(field, entry, key, Some(value));
        }
        return read_entry_rest(field, entry, key, None);
    }
    read_entry_rest(field, entry, IStr::empty(), None)
}

/// The fields of a map entry from `entry`'s position on, after `key` and `value` so far.
fn read_entry_rest<V: Value + Default>(
    field: u32,
    mut entry: Reader<'_>,
    mut key: IStr,
    mut value: Option<V>,
) -> Result<(IStr, V), ProtoError> {
    while let Some((f, wire)) = entry.next_field()? {
        match f {
            1 => {
                entry.expect(field, wire, WireType::Len)?;
                key = IStr::read(field, &mut entry)?;
            }
            2 => {
                // A value seen twice is the last one: Go reads each into a fresh value.
                entry.expect(field, wire, V::WIRE)?;
                value = Some(V::read(field, &mut entry)?);
            }
            _ => entry.skip(wire)?,
        }
    }
    Ok((key, value.unwrap_or_default()))
}

/// Reads the entries of map field `field` that follow one another and adds them to `slot`
/// (a later equal key wins, as in Go).
pub fn merge_map<V: Value + Default>(
    slot: &mut Map<IStr, V>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    r.expect(field, wire, WireType::Len)?;
    let mut entries = std::mem::take(slot).into_vec();
    entries.reserve_exact(r.count_len_run(field));
    entries.push(read_entry(field, r)?);
    while r.next_is(field, WireType::Len) {
        entries.push(read_entry(field, r)?);
    }
    // Go writes map entries sorted by key: then the entries become the map as they are.
    *slot = Map::from_pairs(entries.into_boxed_slice());
    Ok(())
}

/// [`merge_map`] into an optional map.
#[inline]
pub fn merge_option_map<V: Value + Default>(
    slot: &mut Option<Map<IStr, V>>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    merge_map(slot.get_or_insert_with(Map::new), field, wire, r)
}

// ---- encoding helpers called by generated code ----

/// Writes a required value (always, as Go writes a value field).
#[inline]
pub fn put<T: Value>(w: &mut Writer, field: u32, value: &T) {
    w.tag(field, T::WIRE);
    value.write(w);
}

/// Writes an optional value when set; when unset, writes the zero value if `zero_when_unset`
/// (a Go value field, which Go always writes).
#[inline]
pub fn put_option<T: Value>(w: &mut Writer, field: u32, value: &Option<T>, zero_when_unset: bool) {
    match value {
        Some(v) => put(w, field, v),
        None if zero_when_unset => {
            w.tag(field, T::WIRE);
            write_zero::<T>(w);
        }
        None => {}
    }
}

/// Writes an optional boxed message when set; when unset, an empty message if
/// `empty_when_unset` (a Go value field, which Go always writes).
#[inline]
pub fn put_boxed<T: Message>(
    w: &mut Writer,
    field: u32,
    value: &Option<Box<T>>,
    empty_when_unset: bool,
) {
    match value {
        Some(v) => put(w, field, &**v),
        None if empty_when_unset => {
            w.tag(field, WireType::Len);
            w.varint(0);
        }
        None => {}
    }
}

/// Writes every element of a repeated field, unpacked as Kubernetes does.
pub fn put_list<T: Value>(w: &mut Writer, field: u32, list: &[T]) {
    for v in list {
        put(w, field, v);
    }
}

/// Writes an optional repeated field.
#[inline]
pub fn put_option_list<T: Value>(w: &mut Writer, field: u32, list: &Option<List<T>>) {
    if let Some(list) = list {
        put_list(w, field, list);
    }
}

/// Writes every entry of a map field (key and value always, in key order).
pub fn put_map<V: Value>(w: &mut Writer, field: u32, map: &Map<IStr, V>) {
    for (key, value) in map {
        w.tag(field, WireType::Len);
        w.nested(|w| {
            put(w, 1, key);
            put(w, 2, value);
        });
    }
}

/// Writes an optional map field.
#[inline]
pub fn put_option_map<V: Value>(w: &mut Writer, field: u32, map: &Option<Map<IStr, V>>) {
    if let Some(map) = map {
        put_map(w, field, map);
    }
}

#[cfg(test)]
mod tests;
