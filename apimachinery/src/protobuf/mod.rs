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
//! - a message field seen twice merges, a scalar field seen twice keeps the last value; a map,
//!   list or message field that comes back after other fields (Go never writes that) is read
//!   with all its later occurrences at once, so that N occurrences cost O(N log N) in all
//!   rather than a rebuild of the frozen map or list each (see [`Reader`]);
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
    CONTENT_TYPE_PROTOBUF, MAGIC, Unknown, decode_object, decode_object_of_kind, decode_status,
    decode_watch_event, encode, encode_watch_frame, split_watch_event,
};
pub use error::{ProtoError, ProtoErrorKind};
pub use wire::{MAX_DEPTH, Reader, WireType, Writer};

use wire::Occurrence;

use crate::meta::{IStr, List, Map};

#[cfg(test)]
thread_local! {
    /// The elements this thread's decoding has placed in frozen maps and lists (each freezing
    /// counts the whole map or list): what repeated fields cost in copying, for the tests.
    static FROZEN: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts `n` elements placed in a frozen map or list (tests only).
#[inline(always)]
fn count_frozen(n: usize) {
    #[cfg(test)]
    FROZEN.with(|c| c.set(c.get() + n));
    #[cfg(not(test))]
    let _ = n;
}

/// A list as a map value (`map<string, ExtraValue>`): a message wrapping the list as
/// `repeated T items = 1`.
impl<T: Value> Value for List<T> {
    const WIRE: WireType = WireType::Len;

    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        let mut list = List::new();
        read_wrapped_items(&mut list, &mut r.nested()?)?;
        Ok(list)
    }

    /// Another occurrence of the wrapper appends its items (a message seen twice merges, as
    /// Go's `Verbs.Unmarshal` appends); the wrapper seen again after other fields appends
    /// the items of every later occurrence at once, as [`merge`](Message::merge) does.
    fn merge_from(&mut self, field: u32, r: &mut Reader<'_>) -> Result<(), ProtoError> {
        read_occurrence(field, r, |m| read_wrapped_items(self, m))
    }

    fn read_into(
        field: u32,
        r: &mut Reader<'_>,
        slot: &mut Option<Self>,
    ) -> Result<(), ProtoError> {
        slot.insert(List::new()).merge_from(field, r)
    }

    fn write(&self, w: &mut Writer) {
        w.nested(|w| put_list(w, 1, self));
    }
}

/// Appends the items of a list wrapper read by `m` to `list`.
fn read_wrapped_items<T: Value>(list: &mut List<T>, m: &mut Reader<'_>) -> Result<(), ProtoError> {
    while let Some((f, wire)) = m.next_field()? {
        if f == 1 {
            // The wrapper's own field 1 (not the map's number): its run of items.
            merge_list(list, 1, wire, m)?;
        } else {
            m.skip(wire)?;
        }
    }
    Ok(())
}

/// Reads an occurrence of message field `field` (its tag read and checked) with `body`, which
/// reads the fields of the message it is given. The first occurrence in this message is read
/// alone; one that comes back after other fields is read together with every later one, as
/// one message (a message seen again merges, as if its occurrences came one after another),
/// and the later ones are then skipped. So N occurrences cost one merge, not N.
fn read_occurrence(
    field: u32,
    r: &mut Reader<'_>,
    body: impl FnOnce(&mut Reader<'_>) -> Result<(), ProtoError>,
) -> Result<(), ProtoError> {
    match r.occurrence(field) {
        Occurrence::First => body(&mut r.nested()?),
        Occurrence::Drained => r.skip(WireType::Len),
        Occurrence::Again => {
            let chunks = r.gather(field)?;
            body(&mut r.joined(&chunks))
        }
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

    /// Go's zero value of the type, which a map entry without its value reads as: [`Default`]'s
    /// for all but `Quantity`, whose zero Go writes as `"0"`.
    fn zero() -> Self
    where
        Self: Default,
    {
        Self::default()
    }

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

    fn merge_from(&mut self, field: u32, r: &mut Reader<'_>) -> Result<(), ProtoError> {
        read_occurrence(field, r, |m| self.merge(m))
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
        field: u32,
        r: &mut Reader<'_>,
        slot: &mut Option<Self>,
    ) -> Result<(), ProtoError> {
        slot.insert(T::default()).merge_from(field, r)
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
    slot.get_or_insert_with(Box::default).merge_from(field, r)
}

/// Reads field `field`, a message whose fields the generated struct holds itself (a Go struct
/// embedded in another's protobuf message), passing each of its fields to `each`. An
/// occurrence seen again after other fields is read with every later one, as a message's is.
pub fn merge_embedded(
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
    mut each: impl FnMut(u32, WireType, &mut Reader<'_>) -> Result<(), ProtoError>,
) -> Result<(), ProtoError> {
    r.expect(field, wire, WireType::Len)?;
    read_occurrence(field, r, |m| {
        while let Some((field, wire)) = m.next_field()? {
            each(field, wire, m)?;
        }
        Ok(())
    })
}

/// Reads the elements of repeated field `field` that follow one another (usually all of them)
/// and appends them to `slot`. Packed scalars (one length-delimited run) are accepted too.
/// Elements that come back after other fields are read with every later element at once (the
/// later ones then skipped), as [`merge_map`] reads entries.
pub fn merge_list<T: Value>(
    slot: &mut List<T>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    match r.occurrence(field) {
        Occurrence::First => {}
        Occurrence::Drained => return r.skip(wire),
        Occurrence::Again => {
            // Back after other fields: this occurrence and every later one, appended at once.
            let mut items = std::mem::take(slot).into_vec();
            read_list_occurrence(&mut items, field, wire, r)?;
            r.drain_later(field, |wire, scan| {
                read_list_occurrence(&mut items, field, wire, scan)
            })?;
            count_frozen(items.len());
            *slot = List::from(items);
            return Ok(());
        }
    }
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
        count_frozen(items.len());
        *slot = List::from(items);
    } else {
        let mut all = std::mem::take(slot).into_vec();
        all.append(&mut items);
        count_frozen(all.len());
        *slot = List::from(all);
    }
    Ok(())
}

/// Reads one occurrence of repeated field `field` (its tag read) onto the end of `items`: an
/// element, or a packed run of scalars.
fn read_list_occurrence<T: Value>(
    items: &mut Vec<T>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    if wire == WireType::Len && T::WIRE != WireType::Len {
        let mut packed = r.nested()?;
        while !packed.is_empty() {
            items.push(T::read(field, &mut packed)?);
        }
        Ok(())
    } else {
        r.expect(field, wire, T::WIRE)?;
        T::read_push(field, r, items)
    }
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
    Ok((key, value.unwrap_or_else(V::zero)))
}

/// Reads the entries of map field `field` that follow one another and adds them to `slot`
/// (a later equal key wins, as in Go). Entries that come back after other fields are read
/// with every later entry at once (the later ones then skipped), so that a map rebuilt per
/// run of entries is rebuilt at most twice per message.
pub fn merge_map<V: Value + Default>(
    slot: &mut Map<IStr, V>,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    r.expect(field, wire, WireType::Len)?;
    let again = match r.occurrence(field) {
        Occurrence::First => false,
        Occurrence::Again => true,
        Occurrence::Drained => return r.skip(wire),
    };
    let mut entries = std::mem::take(slot).into_vec();
    if again {
        // Back after other fields: this entry and every later one, added at once (sorted
        // below, the later of equal keys kept).
        entries.push(read_entry(field, r)?);
        r.drain_later(field, |wire, scan| {
            scan.expect(field, wire, WireType::Len)?;
            entries.push(read_entry(field, scan)?);
            Ok(())
        })?;
    } else {
        entries.reserve_exact(r.count_len_run(field));
        entries.push(read_entry(field, r)?);
        while r.next_is(field, WireType::Len) {
            entries.push(read_entry(field, r)?);
        }
    }
    // Go writes map entries sorted by key: then the entries become the map as they are.
    count_frozen(entries.len());
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
