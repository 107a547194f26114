//! The serde half of the decoder: [`Deserializer`] drives a `Deserialize` implementation over
//! the scanner in [`scan`](super::scan), the way `serde_json::Deserializer` does.

use std::borrow::Cow;

use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;

use super::RAW_TOKEN;
use super::error::{Category, JsonError};
use super::scan::{GROW_STACK_FROM, MAX_DEPTH, Str};

/// A JSON deserializer over bytes, read as text where they are UTF-8.
pub(crate) struct Deserializer<'de> {
    /// The input as text, when all of it is UTF-8 (checked once, up front); `None` when some
    /// string in it is not, and each slice taken is checked (see [`slice`](Self::slice)).
    pub(super) text: Option<&'de str>,
    pub(super) bytes: &'de [u8],
    /// The next byte to read.
    pub(super) pos: usize,
    /// How many more levels arrays and objects may nest.
    pub(super) depth: u32,
    /// Where strings with escapes are unescaped.
    pub(super) scratch: String,
    /// The last raw objects and arrays captured (see [`raw`](Self::raw)).
    recent_raw: [RecentRaw; RECENT_RAW],
    /// The slot of `recent_raw` the next new value replaces.
    recent_next: usize,
}

/// The stack a deeply nested array or object needs left before it is read (see
/// [`Deserializer::on_grown_stack`]): room for one level's frames, those of the largest
/// generated type (a JSON schema) in a debug build among them, many times over.
const STACK_RED_ZONE: usize = 256 * 1024;

/// The size of each stack segment the decoder adds for deeply nested input.
const STACK_SEGMENT: usize = 2 * 1024 * 1024;

/// How many captured raw values the decoder remembers.
const RECENT_RAW: usize = 4;

/// A raw object or array the decoder captured and checked: where its text is in the input, and
/// how many levels it could still nest then.
#[derive(Clone, Copy, Default)]
struct RecentRaw {
    start: usize,
    end: usize,
    depth: u32,
}

impl<'de> Deserializer<'de> {
    /// A deserializer over `text`, known to be UTF-8.
    pub(crate) fn new(text: &'de str) -> Self {
        Self::over(Some(text), text.as_bytes())
    }

    /// A deserializer over `bytes`, some of which are not UTF-8: a string holding such bytes
    /// reads as Go reads it (see [`push_go_text`](super::push_go_text)).
    pub(crate) fn new_not_utf8(bytes: &'de [u8]) -> Self {
        Self::over(None, bytes)
    }

    fn over(text: Option<&'de str>, bytes: &'de [u8]) -> Self {
        Deserializer {
            text,
            bytes,
            pos: 0,
            depth: MAX_DEPTH,
            scratch: String::new(),
            recent_raw: [RecentRaw::default(); RECENT_RAW],
            recent_next: 0,
        }
    }

    /// Requires that only whitespace follows the value.
    pub(crate) fn end(&mut self) -> Result<(), JsonError> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.syntax("trailing characters")),
        }
    }

    /// Gives `error` the current position unless it has one (errors raised by a visitor, such
    /// as "missing field", know nothing of where they happened).
    pub(crate) fn locate(&self, error: JsonError) -> JsonError {
        error.at(self.bytes, self.pos)
    }

    /// Reads a number whose first byte was peeked and hands it to `visitor` as `serde_json`
    /// does: `u64` if it is a non-negative integer that fits, `i64` if negative, else `f64`.
    fn number<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, JsonError> {
        let start = self.pos;
        // The common case in one pass: an integer of at most 19 digits (it cannot overflow a
        // `u64`), without a leading zero, fraction or exponent.
        let negative = self.bytes.get(start) == Some(&b'-');
        let digits = start + usize::from(negative);
        let mut end = digits;
        let mut magnitude: u64 = 0;
        while let Some(&b) = self.bytes.get(end) {
            if !b.is_ascii_digit() {
                break;
            }
            magnitude = magnitude.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
            end += 1;
        }
        let count = end - digits;
        if (1..=19).contains(&count)
            && !matches!(self.bytes.get(end), Some(b'.' | b'e' | b'E'))
            && (count == 1 || self.bytes.get(digits) != Some(&b'0'))
        {
            if !negative {
                self.pos = end;
                return visitor.visit_u64(magnitude);
            }
            // `-0` is a float, as serde_json reads it.
            if magnitude != 0 && magnitude <= i64::MIN.unsigned_abs() {
                self.pos = end;
                return visitor.visit_i64(0i64.wrapping_sub_unsigned(magnitude));
            }
        }
        // Everything else: check the grammar, then let the standard library parse the text.
        let float = self.scan_number()?;
        let text = self.slice(start, self.pos).unwrap_or_default();
        if !float {
            let (negative, digits) = match text.strip_prefix('-') {
                Some(digits) => (true, digits),
                None => (false, text),
            };
            if let Ok(magnitude) = digits.parse::<u64>() {
                if !negative {
                    return visitor.visit_u64(magnitude);
                }
                // `-0` is a float, as serde_json reads it.
                if magnitude != 0 && magnitude <= i64::MIN.unsigned_abs() {
                    return visitor.visit_i64(0i64.wrapping_sub_unsigned(magnitude));
                }
            }
        }
        match text.parse::<f64>() {
            Ok(value) if value.is_finite() => visitor.visit_f64(value),
            _ => {
                self.pos = start;
                Err(self.syntax("number out of range"))
            }
        }
    }

    /// Reads the value after a `{` has been peeked: consumes it, lets `visitor` read the
    /// entries, and requires the closing `}`.
    fn object<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, JsonError> {
        if !self.shallow() {
            return self.on_grown_stack(|de| de.object_here(visitor));
        }
        self.object_here(visitor)
    }

    /// [`object`](Self::object) on the current stack. Inlined, so that the path of every
    /// shallow object stays the one function it was before deep input was read.
    #[inline(always)]
    fn object_here<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, JsonError> {
        self.enter()?;
        self.pos += 1;
        let mut access = MapAccess {
            de: self,
            first: true,
            done: false,
        };
        let value = visitor.visit_map(&mut access)?;
        let done = access.done;
        self.leave();
        // A visitor may stop after the entries it wants; only the end may follow them.
        if !done {
            self.expect(b'}', "expected `}`: the object has entries left unread")?;
        }
        Ok(value)
    }

    /// Reads the value after a `[` has been peeked, like [`object`](Self::object).
    fn array<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, JsonError> {
        if !self.shallow() {
            return self.on_grown_stack(|de| de.array_here(visitor));
        }
        self.array_here(visitor)
    }

    /// [`array`](Self::array) on the current stack, as [`object_here`](Self::object_here).
    #[inline(always)]
    fn array_here<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, JsonError> {
        self.enter()?;
        self.pos += 1;
        let mut access = SeqAccess {
            de: self,
            first: true,
            done: false,
        };
        let value = visitor.visit_seq(&mut access)?;
        let done = access.done;
        self.leave();
        // A tuple's visitor stops after its last element; only the end may follow it.
        if !done {
            self.expect(b']', "expected `]`: the list has elements left unread")?;
        }
        Ok(value)
    }

    /// Whether an array or object entered now is one of the first [`GROW_STACK_FROM`] levels,
    /// which are read on the caller's stack without a check (`depth` counts down as the
    /// decoder enters them).
    #[inline(always)]
    fn shallow(&self) -> bool {
        self.depth > MAX_DEPTH - GROW_STACK_FROM
    }

    /// Reads an enum given as `{"variant": value}` after its `{` has been peeked.
    #[inline(always)]
    fn variant<V: Visitor<'de>>(&mut self, visitor: V) -> Result<V::Value, JsonError> {
        self.enter()?;
        self.pos += 1;
        let value = visitor.visit_enum(VariantAccess { de: self })?;
        self.leave();
        self.expect(b'}', "expected `}` after the variant's value")?;
        Ok(value)
    }

    /// Runs `read` (the reading of a deeply nested array or object, which recurses into its
    /// items) where the stack has [`STACK_RED_ZONE`] left, on a new stack segment of
    /// [`STACK_SEGMENT`] bytes if the current one has less. Each level past
    /// [`GROW_STACK_FROM`] checks again, so every depth the decoder accepts fits, on a 2 MiB
    /// tokio worker or test thread as on any other.
    #[cold]
    #[inline(never)]
    fn on_grown_stack<R>(&mut self, read: impl FnOnce(&mut Self) -> R) -> R {
        stacker::maybe_grow(STACK_RED_ZONE, STACK_SEGMENT, || read(self))
    }

    /// If the next value is an integer (no fraction, no exponent), consumes it and parses it as
    /// `T` (`i128`/`u128`, which `f64` cannot hold exactly; `name` names it in the error).
    fn wide_integer<T: std::str::FromStr>(&mut self, name: &str) -> Result<Option<T>, JsonError> {
        if !matches!(self.peek(), Some(b'-' | b'0'..=b'9')) {
            return Ok(None);
        }
        let start = self.pos;
        if self.scan_number()? {
            self.pos = start;
            return Ok(None);
        }
        match self.slice(start, self.pos).map(str::parse) {
            Some(Ok(value)) => Ok(Some(value)),
            _ => Err(self.syntax(&format!("number out of range for {name}"))),
        }
    }

    /// Captures the next value's exact text, checking its grammar.
    ///
    /// Raw values repeat within a document: every ConfigMap of a chart, every Pod of a
    /// ReplicaSet carries the same managed-field sets. So the last few objects and arrays
    /// captured are remembered, and a value whose text starts with one of them *is* that value
    /// (a complete object or array ends at its closing bracket, whatever follows), already
    /// checked: it is taken without skipping it again. It is only taken where it could nest as
    /// deep as where it was checked.
    ///
    /// Text that is not UTF-8 is copied, each byte that does not start a valid sequence
    /// replaced by U+FFFD (see [`push_go_text`](super::push_go_text)).
    fn raw(&mut self) -> Result<Cow<'de, str>, JsonError> {
        let Some(first) = self.peek() else {
            return Err(self.eof("a value"));
        };
        let start = self.pos;
        let container = matches!(first, b'{' | b'[');
        if container {
            let rest = self.bytes.get(start..).unwrap_or_default();
            let seen = self.recent_raw.iter().find(|seen| {
                seen.end > seen.start
                    && self.depth >= seen.depth
                    && self
                        .bytes
                        .get(seen.start..seen.end)
                        .is_some_and(|text| rest.starts_with(text))
            });
            if let Some(seen) = seen {
                self.pos = start + (seen.end - seen.start);
                return Ok(self.text_of(start, self.pos));
            }
        }
        self.skip_value()?;
        if container {
            self.recent_raw[self.recent_next] = RecentRaw {
                start,
                end: self.pos,
                depth: self.depth,
            };
            self.recent_next = (self.recent_next + 1) % RECENT_RAW;
        }
        Ok(self.text_of(start, self.pos))
    }

    /// The input's bytes `start..end` as text: borrowed where they are UTF-8, else copied as
    /// Go reads them.
    fn text_of(&self, start: usize, end: usize) -> Cow<'de, str> {
        match self.slice(start, end) {
            Some(text) => Cow::Borrowed(text),
            None => {
                let mut text = String::new();
                super::push_go_text(&mut text, self.bytes.get(start..end).unwrap_or_default());
                Cow::Owned(text)
            }
        }
    }
}

impl<'de> Str<'de, '_> {
    /// Hands the string to `visitor`, borrowed from the input when it can be.
    #[inline]
    fn visit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self {
            Str::Borrowed(s) => visitor.visit_borrowed_str(s),
            Str::Copied(s) => visitor.visit_str(s),
        }
    }

    /// Hands the string to `visitor` as the name of a unit variant.
    fn visit_enum<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self {
            Str::Borrowed(s) => visitor.visit_enum(BorrowedStrDeserializer::<JsonError>::new(s)),
            Str::Copied(s) => visitor.visit_enum(s.into_deserializer()),
        }
    }
}

impl<'de> de::Deserializer<'de> for &mut Deserializer<'de> {
    type Error = JsonError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self.peek() {
            Some(b'"') => {
                self.pos += 1;
                self.string()?.visit(visitor)
            }
            Some(b'{') => self.object(visitor),
            Some(b'[') => self.array(visitor),
            Some(b'-' | b'0'..=b'9') => self.number(visitor),
            Some(b'n') => {
                self.literal(b"null")?;
                visitor.visit_unit()
            }
            Some(b't') => {
                self.literal(b"true")?;
                visitor.visit_bool(true)
            }
            Some(b'f') => {
                self.literal(b"false")?;
                visitor.visit_bool(false)
            }
            Some(_) => Err(self.syntax("expected a value")),
            None => Err(self.eof("a value")),
        }
    }

    // The entry points a type names are specialized, as in serde_json, so that a struct's
    // visitor is not instantiated with the code for every other kind of value.

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(visitor),
            Some(b'[') => self.array(visitor),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(visitor),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self.peek() {
            Some(b'[') => self.array(visitor),
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self.peek() {
            Some(b'"') => {
                self.pos += 1;
                self.string()?.visit(visitor)
            }
            _ => self.deserialize_any(visitor),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        self.deserialize_str(visitor)
    }

    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self.wide_integer::<i128>("i128")? {
            Some(value) => visitor.visit_i128(value),
            None => self.deserialize_any(visitor),
        }
    }

    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        match self.wide_integer::<u128>("u128")? {
            Some(value) => visitor.visit_u128(value),
            None => self.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            visitor.visit_none()
        } else {
            visitor.visit_some(self)
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        if name == RAW_TOKEN {
            let raw = self.raw()?;
            return visitor.visit_map(RawAccess { raw: Some(raw) });
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        if self.peek() == Some(b'"') {
            self.pos += 1;
            match self.string()? {
                Str::Borrowed(s) => visitor.visit_borrowed_bytes(s.as_bytes()),
                Str::Copied(s) => visitor.visit_bytes(s.as_bytes()),
            }
        } else {
            self.deserialize_any(visitor)
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        self.deserialize_bytes(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        match self.peek() {
            Some(b'"') => {
                self.pos += 1;
                self.string()?.visit_enum(visitor)
            }
            Some(b'{') if self.shallow() => self.variant(visitor),
            Some(b'{') => self.on_grown_stack(|de| de.variant(visitor)),
            Some(_) => Err(self.syntax("expected a string or an object for an enum")),
            None => Err(self.eof("a value")),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        self.skip_value()?;
        visitor.visit_unit()
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 char unit unit_struct tuple tuple_struct
    }
}

impl Deserializer<'_> {
    /// Reads what stands before an object's next entry or an array's next element: `close`
    /// (consumed; `false`: the container ended), or, unless it is the `first`, a `,` (consumed;
    /// `true`, with the entry or element next). `expected` is the error for anything else after
    /// an item, `what` names the container when the input ends.
    #[inline]
    fn before_item(
        &mut self,
        first: bool,
        close: u8,
        expected: &str,
        what: &str,
    ) -> Result<bool, JsonError> {
        match self.peek() {
            Some(b) if b == close => {
                self.pos += 1;
                Ok(false)
            }
            Some(b',') if !first => {
                self.pos += 1;
                if self.peek() == Some(close) {
                    return Err(self.syntax("trailing comma"));
                }
                Ok(true)
            }
            Some(_) if !first => Err(self.syntax(expected)),
            Some(_) => Ok(true),
            None => Err(self.eof(what)),
        }
    }
}

/// The entries of an object, for a visitor's `visit_map`.
struct MapAccess<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
    /// Whether the closing `}` was read.
    done: bool,
}

impl<'de> de::MapAccess<'de> for MapAccess<'_, 'de> {
    type Error = JsonError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, JsonError> {
        if self.done {
            return Ok(None);
        }
        let de = &mut *self.de;
        if !de.before_item(self.first, b'}', "expected `,` or `}`", "an object")? {
            self.done = true;
            return Ok(None);
        }
        self.first = false;
        match de.peek() {
            Some(b'"') => {
                de.pos += 1;
                let key = de.string()?;
                seed.deserialize(KeyDeserializer { key }).map(Some)
            }
            Some(_) => Err(de.syntax("key must be a string")),
            None => Err(de.eof("an object")),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, JsonError> {
        self.de.expect(b':', "expected `:`")?;
        seed.deserialize(&mut *self.de)
    }
}

/// The elements of an array, for a visitor's `visit_seq`.
struct SeqAccess<'a, 'de> {
    de: &'a mut Deserializer<'de>,
    first: bool,
    /// Whether the closing `]` was read.
    done: bool,
}

impl<'de> de::SeqAccess<'de> for SeqAccess<'_, 'de> {
    type Error = JsonError;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, JsonError> {
        if self.done {
            return Ok(None);
        }
        if !self
            .de
            .before_item(self.first, b']', "expected `,` or `]`", "a list")?
        {
            self.done = true;
            return Ok(None);
        }
        self.first = false;
        seed.deserialize(&mut *self.de).map(Some)
    }
}

/// An object key: a string, also readable as a number or bool for maps keyed by those (as
/// `serde_json` reads `{"1": ...}` into a `HashMap<u32, _>`).
struct KeyDeserializer<'de, 's> {
    key: Str<'de, 's>,
}

impl KeyDeserializer<'_, '_> {
    fn text(&self) -> &str {
        match self.key {
            Str::Borrowed(s) => s,
            Str::Copied(s) => s,
        }
    }

    fn parse<T: std::str::FromStr>(&self) -> Result<T, JsonError> {
        self.text().parse().map_err(|_| {
            JsonError::new(
                Category::Data,
                format!("invalid type: map key {:?}, expected a number", self.text()),
            )
        })
    }
}

macro_rules! parsed_key {
    ($($method:ident => $visit:ident),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
                let value = self.parse()?;
                visitor.$visit(value)
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for KeyDeserializer<'de, '_> {
    type Error = JsonError;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        self.key.visit(visitor)
    }

    parsed_key! {
        deserialize_i8 => visit_i8, deserialize_i16 => visit_i16, deserialize_i32 => visit_i32,
        deserialize_i64 => visit_i64, deserialize_i128 => visit_i128,
        deserialize_u8 => visit_u8, deserialize_u16 => visit_u16, deserialize_u32 => visit_u32,
        deserialize_u64 => visit_u64, deserialize_u128 => visit_u128,
        deserialize_f32 => visit_f32, deserialize_f64 => visit_f64,
        deserialize_bool => visit_bool,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, JsonError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        self.key.visit_enum(visitor)
    }

    forward_to_deserialize_any! {
        char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// An enum written as `{"Variant": value}`; the `{` was consumed.
struct VariantAccess<'a, 'de> {
    de: &'a mut Deserializer<'de>,
}

impl<'de> de::EnumAccess<'de> for VariantAccess<'_, 'de> {
    type Error = JsonError;
    type Variant = Self;

    fn variant_seed<V: DeserializeSeed<'de>>(self, seed: V) -> Result<(V::Value, Self), JsonError> {
        self.de.expect(b'"', "expected the variant's name")?;
        let key = self.de.string()?;
        let variant = seed.deserialize(KeyDeserializer { key })?;
        self.de.expect(b':', "expected `:`")?;
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for VariantAccess<'_, 'de> {
    type Error = JsonError;

    fn unit_variant(self) -> Result<(), JsonError> {
        de::Deserialize::deserialize(self.de)
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, JsonError> {
        seed.deserialize(self.de)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        de::Deserializer::deserialize_seq(self.de, visitor)
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, JsonError> {
        de::Deserializer::deserialize_map(self.de, visitor)
    }
}

/// A raw value handed to [`RawJson`](crate::meta::RawJson)'s and
/// [`FieldsV1`](crate::meta::FieldsV1)'s visitor: one entry, the private token as key and the
/// value's text, borrowed from the input (copied where the input is not UTF-8).
struct RawAccess<'de> {
    raw: Option<Cow<'de, str>>,
}

impl<'de> de::MapAccess<'de> for RawAccess<'de> {
    type Error = JsonError;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, JsonError> {
        if self.raw.is_none() {
            return Ok(None);
        }
        seed.deserialize(BorrowedStrDeserializer::new(RAW_TOKEN))
            .map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, JsonError> {
        match self.raw.take() {
            Some(Cow::Borrowed(raw)) => seed.deserialize(BorrowedStrDeserializer::new(raw)),
            Some(Cow::Owned(raw)) => seed.deserialize(StringDeserializer::new(raw)),
            None => Err(JsonError::new(Category::Data, "a raw value was read twice")),
        }
    }
}
