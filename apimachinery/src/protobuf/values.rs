//! [`Value`] for the scalars and the hand-written value types of [`meta`](crate::meta), in
//! the protobuf forms Kubernetes gives them, and [`Message`] for the hand-written messages
//! (`ListMeta`, `Status`, `StatusDetails`, `StatusCause`).

use compact_str::CompactString;

use super::{
    Message, ProtoError, Reader, Value, WireType, Writer, merge, merge_option, put, put_option,
};
use crate::meta::{ByteString, FieldsV1, IStr, IntOrString, MicroTime, Quantity, RawJson, Time};
use crate::{ListMeta, Status, StatusCause, StatusDetails};

impl Value for i32 {
    const WIRE: WireType = WireType::Varint;
    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        // Go writes a negative int32 sign-extended to 64 bits and reads it truncated.
        Ok(r.varint()? as i32)
    }
    fn write(&self, w: &mut Writer) {
        w.varint(i64::from(*self) as u64);
    }
    fn is_zero(&self) -> bool {
        *self == 0
    }
}

impl Value for i64 {
    const WIRE: WireType = WireType::Varint;
    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        Ok(r.varint()? as i64)
    }
    fn write(&self, w: &mut Writer) {
        w.varint(*self as u64);
    }
    fn is_zero(&self) -> bool {
        *self == 0
    }
}

impl Value for bool {
    const WIRE: WireType = WireType::Varint;
    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        Ok(r.varint()? != 0)
    }
    fn write(&self, w: &mut Writer) {
        w.varint(u64::from(*self));
    }
    fn is_zero(&self) -> bool {
        !*self
    }
}

impl Value for f64 {
    const WIRE: WireType = WireType::Fixed64;
    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        Ok(f64::from_bits(r.fixed64()?))
    }
    fn write(&self, w: &mut Writer) {
        w.fixed64(self.to_bits());
    }
    fn is_zero(&self) -> bool {
        *self == 0.0
    }
}

/// The text of a string field as Go reads it. Go's strings are bytes and its decoder does not
/// check them, so any Go client can store a string that is not UTF-8 (an annotation, a
/// ConfigMap value); such a string reads with each byte that does not start a valid sequence
/// replaced by U+FFFD, as the server's JSON encoder writes the same string. An error would
/// make the whole object, and every list and watch holding it, unreadable.
fn go_text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => {
            let mut text = String::with_capacity(bytes.len() + 8);
            crate::json_decode::push_go_text(&mut text, bytes);
            std::borrow::Cow::Owned(text)
        }
    }
}

/// A string field read as Go reads it ([`go_text`]).
fn read_go_text<'a>(r: &mut Reader<'a>) -> Result<std::borrow::Cow<'a, str>, ProtoError> {
    r.bytes().map(go_text)
}

impl Value for CompactString {
    const WIRE: WireType = WireType::Len;
    /// A string that is not UTF-8 reads with each bad byte replaced by U+FFFD, as Go's JSON
    /// shows it (`go_text`).
    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        read_go_text(r).map(CompactString::new)
    }
    fn write(&self, w: &mut Writer) {
        w.bytes(self.as_bytes());
    }
    fn is_zero(&self) -> bool {
        self.is_empty()
    }
}

impl Value for String {
    const WIRE: WireType = WireType::Len;
    /// A string that is not UTF-8 reads with each bad byte replaced by U+FFFD, as Go's JSON
    /// shows it (`go_text`).
    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        read_go_text(r).map(std::borrow::Cow::into_owned)
    }
    fn write(&self, w: &mut Writer) {
        w.bytes(self.as_bytes());
    }
    fn is_zero(&self) -> bool {
        self.is_empty()
    }
}

impl Value for IStr {
    const WIRE: WireType = WireType::Len;
    /// Interned like a string decoded from JSON. A short ASCII string (most of them, and
    /// every empty one, which Go writes for each unset value field) is built inline here, in
    /// the caller: a Pod has about 170 strings, and as a call of its own this path spent more
    /// instructions saving registers and returning through memory than building the string.
    /// The rest (long or non-ASCII) takes `read_istr_slow`, out of line; a string that is not
    /// UTF-8 reads as Go reads it (`go_text`).
    #[inline(always)]
    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        if let Some((bytes, end)) = r.peek_short_bytes()
            && let Some(s) = IStr::inline_ascii(bytes)
        {
            r.advance_to(end);
            return Ok(s);
        }
        read_istr_slow(r)
    }
    fn write(&self, w: &mut Writer) {
        w.bytes(self.as_bytes());
    }
    #[inline]
    fn is_zero(&self) -> bool {
        self.as_bytes().is_empty()
    }
}

/// [`IStr`]'s read of a string that is long, not ASCII, or has a multi-byte length prefix:
/// kept out of line so that the inline fast path of [`IStr::read`](Value::read) stays small.
/// A string that is not UTF-8 reads as Go reads it ([`go_text`]).
#[inline(never)]
fn read_istr_slow(r: &mut Reader<'_>) -> Result<IStr, ProtoError> {
    let bytes = r.bytes()?;
    match IStr::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(_) => Ok(IStr::new(&go_text(bytes))),
    }
}

impl Value for ByteString {
    const WIRE: WireType = WireType::Len;
    fn read(_field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        r.bytes().map(ByteString::from)
    }
    fn write(&self, w: &mut Writer) {
        w.bytes(self.as_bytes());
    }
}

/// Reads a message of one field `1` holding bytes (`Quantity`'s `string`, `RawExtension`'s and
/// `FieldsV1`'s `raw`); `None` when absent.
fn read_wrapped_bytes<'a>(field: u32, r: &mut Reader<'a>) -> Result<Option<&'a [u8]>, ProtoError> {
    let mut m = r.nested()?;
    let mut out = None;
    while let Some((f, wire)) = m.next_field()? {
        if f == 1 {
            m.expect(field, wire, WireType::Len)?;
            out = Some(m.bytes()?);
        } else {
            m.skip(wire)?;
        }
    }
    Ok(out)
}

fn write_wrapped_bytes(w: &mut Writer, bytes: &[u8]) {
    w.nested(|w| {
        w.tag(1, WireType::Len);
        w.bytes(bytes);
    });
}

/// `resource.Quantity`: `message Quantity { optional string string = 1; }`. A message without
/// its string, and a map entry without its value, is Go's zero `Quantity`, which Go writes as
/// `"0"`.
impl Value for Quantity {
    const WIRE: WireType = WireType::Len;
    fn read(field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        let start = r.error(super::ProtoErrorKind::InvalidUtf8 { field });
        let Some(bytes) = read_wrapped_bytes(field, r)? else {
            return Ok(Self::zero());
        };
        // Most quantities ("100m", "128Mi") are short ASCII: built inline, with no UTF-8 pass.
        if let Some(s) = IStr::inline_ascii(bytes) {
            return Ok(Quantity(s));
        }
        IStr::from_utf8(bytes).map(Quantity).map_err(|_| start)
    }
    fn write(&self, w: &mut Writer) {
        write_wrapped_bytes(w, self.as_str().as_bytes());
    }
    fn zero() -> Self {
        Quantity::from("0")
    }
}

/// `intstr.IntOrString`: `type` (0 int, 1 string) = 1, `intVal` = 2, `strVal` = 3; Go writes
/// all three. Another type reads as the int, as Go's accessors (`IntValue`, `String`) take any
/// type but 1 for one: Go decodes the message, so an error here would make the whole object,
/// and every list and watch holding it, unreadable where client-go reads it.
impl Value for IntOrString {
    const WIRE: WireType = WireType::Len;
    fn read(field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        let mut m = r.nested()?;
        let (mut kind, mut int, mut string) = (0i64, 0i32, IStr::empty());
        while let Some((f, wire)) = m.next_field()? {
            match f {
                1 => merge(&mut kind, field, wire, &mut m)?,
                2 => merge(&mut int, field, wire, &mut m)?,
                3 => merge(&mut string, field, wire, &mut m)?,
                _ => m.skip(wire)?,
            }
        }
        Ok(if kind == 1 {
            IntOrString::String(string)
        } else {
            IntOrString::Int(int)
        })
    }
    fn write(&self, w: &mut Writer) {
        w.nested(|w| match self {
            IntOrString::Int(i) => {
                put(w, 1, &0i64);
                put(w, 2, i);
                put(w, 3, &IStr::empty());
            }
            IntOrString::String(s) => {
                put(w, 1, &1i64);
                put(w, 2, &0i32);
                put(w, 3, s);
            }
        });
    }
}

/// A `Timestamp` (`seconds` = 1, `nanos` = 2): `None` when empty (Go's zero time writes an
/// empty message).
fn read_timestamp(field: u32, r: &mut Reader<'_>) -> Result<Option<(i64, i32)>, ProtoError> {
    let mut m = r.nested()?;
    if m.is_empty() {
        return Ok(None);
    }
    let (mut seconds, mut nanos) = (0i64, 0i32);
    while let Some((f, wire)) = m.next_field()? {
        match f {
            1 => merge(&mut seconds, field, wire, &mut m)?,
            2 => merge(&mut nanos, field, wire, &mut m)?,
            _ => m.skip(wire)?,
        }
    }
    Ok(Some((seconds, nanos)))
}

/// `metav1.Time`: a `Timestamp` of whole seconds (Go drops the nanoseconds on both sides); the
/// zero time is an empty message.
impl Value for Time {
    const WIRE: WireType = WireType::Len;
    fn read(field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        Ok(read_timestamp(field, r)?.map_or(Time::ZERO, |(s, _)| Time(s)))
    }
    fn write(&self, w: &mut Writer) {
        w.nested(|w| {
            // Go writes both fields of a set Timestamp (nanos always 0 for Time).
            if *self != Time::ZERO {
                put(w, 1, &self.0);
                put(w, 2, &0i32);
            }
        });
    }
    fn is_zero(&self) -> bool {
        *self == Time::ZERO
    }
}

/// `metav1.MicroTime`: a `Timestamp` with nanoseconds (kept to the microsecond, as Go's JSON
/// form is); the zero time is an empty message.
impl Value for MicroTime {
    const WIRE: WireType = WireType::Len;
    fn read(field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        Ok(read_timestamp(field, r)?.map_or(MicroTime::ZERO, |(s, n)| {
            MicroTime(
                s.saturating_mul(1_000_000)
                    .saturating_add(i64::from(n) / 1_000),
            )
        }))
    }
    fn write(&self, w: &mut Writer) {
        w.nested(|w| {
            if *self != MicroTime::ZERO {
                put(w, 1, &self.0.div_euclid(1_000_000));
                put(w, 2, &((self.0.rem_euclid(1_000_000) * 1_000) as i32));
            }
        });
    }
    fn is_zero(&self) -> bool {
        *self == MicroTime::ZERO
    }
}

/// Checks that `bytes` hold one JSON value and returns its text without surrounding spaces.
/// Bytes that are not UTF-8 read as Go's JSON decoder reads them ([`go_text`]): the server
/// keeps what a client stored in a raw field, and writes it back the same in JSON.
fn json_text(field: u32, r: &Reader<'_>, bytes: &[u8]) -> Result<RawJson, ProtoError> {
    let text = go_text(bytes);
    check_json(field, r, &text)?;
    Ok(crate::meta::raw::raw_json_unchecked(
        text.trim_matches(|c| matches!(c, ' ' | '\t' | '\n' | '\r')),
    ))
}

/// Checks that `text` is one JSON value, with kclient's own scanner (which skips a value
/// checking its grammar, without building it).
fn check_json(field: u32, r: &Reader<'_>, text: &str) -> Result<(), ProtoError> {
    crate::decode_json::<serde::de::IgnoredAny>(text.as_bytes())
        .map(drop)
        .map_err(|e| {
            let category = if e.is_eof() {
                "ends early"
            } else if e.is_data() {
                "unexpected data"
            } else {
                "syntax error"
            };
            r.invalid(format!(
                "field {field} (raw JSON) does not hold JSON: {category}"
            ))
        })
}

/// `runtime.RawExtension` and apiextensions `JSON`: `message { optional bytes raw = 1; }`
/// holding JSON text. Empty reads as unset (JSON `null`).
impl Value for RawJson {
    const WIRE: WireType = WireType::Len;
    fn read(field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        let bytes = read_wrapped_bytes(field, r)?.unwrap_or_default();
        if bytes.is_empty() {
            return Ok(RawJson::default());
        }
        json_text(field, r, bytes)
    }
    fn write(&self, w: &mut Writer) {
        if self.is_zero() {
            w.nested(|_| {});
        } else {
            write_wrapped_bytes(w, self.get().as_bytes());
        }
    }
    fn is_zero(&self) -> bool {
        self.get() == "null"
    }
}

/// `metav1.FieldsV1`: `message FieldsV1 { optional bytes Raw = 1; }` holding JSON text,
/// shared through the same table as decoded JSON.
impl Value for FieldsV1 {
    const WIRE: WireType = WireType::Len;
    fn read(field: u32, r: &mut Reader<'_>) -> Result<Self, ProtoError> {
        let bytes = read_wrapped_bytes(field, r)?.unwrap_or_default();
        if bytes.is_empty() {
            return Ok(FieldsV1::default());
        }
        // A set equal to one already shared was checked when it entered the table: most
        // objects of a kind repeat a few sets, so most are not scanned at all.
        crate::meta::fields_v1::share_checked(bytes, |bytes| {
            let text = simdutf8::basic::from_utf8(bytes)
                .map_err(|_| r.error(super::ProtoErrorKind::InvalidUtf8 { field }))?;
            check_json(field, r, text).map(|()| text)
        })
    }
    fn write(&self, w: &mut Writer) {
        write_wrapped_bytes(w, self.get().as_bytes());
    }
}

/// Reads field `field` of a hand-written message into a `String`.
fn string(
    slot: &mut String,
    field: u32,
    wire: WireType,
    r: &mut Reader<'_>,
) -> Result<(), ProtoError> {
    merge(slot, field, wire, r)
}

/// `metav1.ListMeta` (`shardInfo` = 5, new in v1.36 and alpha, is skipped).
impl Message for ListMeta {
    fn merge_field(
        &mut self,
        field: u32,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), ProtoError> {
        match field {
            1 => string(&mut self.self_link, field, wire, r),
            2 => string(&mut self.resource_version, field, wire, r),
            3 => string(&mut self.continue_token, field, wire, r),
            4 => merge_option(&mut self.remaining_item_count, field, wire, r, false),
            _ => r.skip(wire),
        }
    }
    fn encode_fields(&self, w: &mut Writer) {
        put(w, 1, &self.self_link);
        put(w, 2, &self.resource_version);
        put(w, 3, &self.continue_token);
        put_option(w, 4, &self.remaining_item_count, false);
    }
}

/// `metav1.Status`; `kind` and `apiVersion` come from the envelope, not the message.
impl Message for Status {
    fn merge_field(
        &mut self,
        field: u32,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), ProtoError> {
        match field {
            1 => merge(&mut self.metadata, field, wire, r),
            2 => string(&mut self.status, field, wire, r),
            3 => string(&mut self.message, field, wire, r),
            4 => string(&mut self.reason, field, wire, r),
            5 => merge_option(&mut self.details, field, wire, r, false),
            6 => merge(&mut self.code, field, wire, r),
            _ => r.skip(wire),
        }
    }
    fn encode_fields(&self, w: &mut Writer) {
        put(w, 1, &self.metadata);
        put(w, 2, &self.status);
        put(w, 3, &self.message);
        put(w, 4, &self.reason);
        put_option(w, 5, &self.details, false);
        put(w, 6, &self.code);
    }
}

/// `metav1.PartialObjectMetadata`: `metadata` = 1; `kind` and `apiVersion` come from the
/// envelope, not the message.
impl Message for crate::meta::PartialObjectMetadata {
    fn merge_field(
        &mut self,
        field: u32,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), ProtoError> {
        match field {
            1 => merge(&mut self.metadata, field, wire, r),
            _ => r.skip(wire),
        }
    }
    fn encode_fields(&self, w: &mut Writer) {
        put(w, 1, &self.metadata);
    }
}

/// `metav1.StatusDetails`.
impl Message for StatusDetails {
    fn merge_field(
        &mut self,
        field: u32,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), ProtoError> {
        match field {
            1 => string(&mut self.name, field, wire, r),
            2 => string(&mut self.group, field, wire, r),
            3 => string(&mut self.kind, field, wire, r),
            4 => {
                r.expect(field, wire, WireType::Len)?;
                self.causes.push(StatusCause::read(field, r)?);
                Ok(())
            }
            5 => merge(&mut self.retry_after_seconds, field, wire, r),
            6 => string(&mut self.uid, field, wire, r),
            _ => r.skip(wire),
        }
    }
    fn encode_fields(&self, w: &mut Writer) {
        put(w, 1, &self.name);
        put(w, 2, &self.group);
        put(w, 3, &self.kind);
        for cause in &self.causes {
            put(w, 4, cause);
        }
        put(w, 5, &self.retry_after_seconds);
        put(w, 6, &self.uid);
    }
}

/// `metav1.StatusCause`.
impl Message for StatusCause {
    fn merge_field(
        &mut self,
        field: u32,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), ProtoError> {
        match field {
            1 => string(&mut self.cause_type, field, wire, r),
            2 => string(&mut self.message, field, wire, r),
            3 => string(&mut self.field, field, wire, r),
            _ => r.skip(wire),
        }
    }
    fn encode_fields(&self, w: &mut Writer) {
        put(w, 1, &self.cause_type);
        put(w, 2, &self.message);
        put(w, 3, &self.field);
    }
}
