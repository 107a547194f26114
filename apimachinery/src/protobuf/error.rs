//! [`ProtoError`], why a protobuf message did not decode, and where.

use std::fmt;

/// Why a protobuf message did not decode: the input is cut short, declares a length past its
/// end, uses a wire type the field does not have, nests too deep, or holds a value that is not
/// what its field needs (raw JSON that is not JSON, an envelope's kind that is not UTF-8).
/// A string field that is not UTF-8 is not an error: it reads as Go's JSON shows it, each bad
/// byte replaced by U+FFFD.
///
/// The message names the field number and the byte offset in the whole input; it never quotes
/// the input's bytes, so decoding a Secret cannot leak its data into an error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtoError {
    kind: ProtoErrorKind,
    offset: usize,
}

/// What kind of failure a [`ProtoError`] is.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProtoErrorKind {
    /// The input ended inside a tag, a varint or a fixed-size value.
    Truncated,
    /// A length prefix points past the end of the enclosing message.
    LengthPastEnd {
        /// The declared length.
        length: u64,
        /// The bytes left in the enclosing message.
        remaining: usize,
    },
    /// A varint longer than ten bytes or overflowing 64 bits.
    VarintOverflow,
    /// A tag with field number 0, a wire type protobuf does not define (6, 7), or an end
    /// group (4) outside a group. (An unknown field that is a group is skipped, as in Go.)
    InvalidTag {
        /// The tag as read.
        tag: u64,
    },
    /// A known field arrived with another wire type than its `.proto` declares.
    WrongWireType {
        /// The field number.
        field: u32,
        /// The wire type the field needs.
        expected: u8,
        /// The wire type found.
        found: u8,
    },
    /// Messages nested deeper than [`MAX_DEPTH`](super::MAX_DEPTH).
    TooDeep,
    /// A text that must be UTF-8 and is not: the envelope's apiVersion, kind or content type,
    /// a watch event's type, a quantity, raw JSON. (A string field of an object is not checked,
    /// as Go does not check it: it reads with each bad byte replaced by U+FFFD.)
    InvalidUtf8 {
        /// The field number.
        field: u32,
    },
    /// A value its field cannot hold (raw JSON that is not JSON, an unknown enum value...).
    InvalidValue {
        /// What was wrong.
        message: String,
    },
}

impl ProtoError {
    pub(crate) fn new(kind: ProtoErrorKind, offset: usize) -> ProtoError {
        ProtoError { kind, offset }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ProtoErrorKind {
        &self.kind
    }

    /// The byte offset in the input where decoding stopped.
    pub fn offset(&self) -> usize {
        self.offset
    }
}

impl fmt::Display for ProtoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ProtoErrorKind::Truncated => f.write_str("protobuf input ends inside a value")?,
            ProtoErrorKind::LengthPastEnd { length, remaining } => write!(
                f,
                "protobuf length prefix {length} runs past the end of its message ({remaining} bytes left)"
            )?,
            ProtoErrorKind::VarintOverflow => f.write_str("protobuf varint longer than 64 bits")?,
            ProtoErrorKind::InvalidTag { tag } => write!(
                f,
                "invalid protobuf tag {tag} (field {}, wire type {})",
                tag >> 3,
                tag & 7
            )?,
            ProtoErrorKind::WrongWireType {
                field,
                expected,
                found,
            } => write!(
                f,
                "protobuf field {field} has wire type {found}, expected {expected} (is the server's API version the one these types were generated for?)"
            )?,
            ProtoErrorKind::TooDeep => write!(
                f,
                "protobuf messages nested deeper than {}",
                super::MAX_DEPTH
            )?,
            ProtoErrorKind::InvalidUtf8 { field } => {
                write!(f, "protobuf string field {field} is not UTF-8")?
            }
            ProtoErrorKind::InvalidValue { message } => f.write_str(message)?,
        }
        write!(f, " at byte {}", self.offset)
    }
}

impl std::error::Error for ProtoError {}
