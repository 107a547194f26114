//! [`JsonError`], why a JSON text did not decode, and where.

use std::fmt;

/// Why [`decode_json`](crate::decode_json) failed, with the position in the input.
///
/// The message names what was wrong (`expected ':'`, `invalid type: string, expected u32`,
/// ...) and, when known, the line and column, like `serde_json`'s errors. Messages from serde
/// about a value of the wrong type quote that value, as `serde_json`'s do, so code decoding
/// secrets should report only [`line`](Self::line) and [`column`](Self::column).
#[derive(Clone, PartialEq, Eq)]
pub struct JsonError {
    inner: Box<Inner>,
}

#[derive(Clone, PartialEq, Eq)]
struct Inner {
    category: Category,
    message: String,
    /// 1-based line and column of the error, or 0 if unknown.
    line: usize,
    column: usize,
}

/// What kind of failure a [`JsonError`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Category {
    /// The bytes are not JSON.
    Syntax,
    /// The input ended inside a value.
    Eof,
    /// Well-formed JSON that does not fit the type decoded into.
    Data,
}

impl JsonError {
    pub(crate) fn new(category: Category, message: impl Into<String>) -> JsonError {
        JsonError {
            inner: Box::new(Inner {
                category,
                message: message.into(),
                line: 0,
                column: 0,
            }),
        }
    }

    /// The error at byte `offset` of `text`, unless it already has a position.
    pub(crate) fn at(mut self, text: &[u8], offset: usize) -> JsonError {
        if self.inner.line == 0 {
            let before = text.get(..offset).unwrap_or(text);
            let line_start = before
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |i| i + 1);
            self.inner.line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            self.inner.column = before.len() - line_start + 1;
        }
        self
    }

    /// The 1-based line of the error, or 0 when the error has no position.
    pub fn line(&self) -> usize {
        self.inner.line
    }

    /// The 1-based column of the byte where the error was found, counted in bytes as
    /// `serde_json` counts, or 0 when the error has no position.
    pub fn column(&self) -> usize {
        self.inner.column
    }

    /// Whether the input is not JSON (a missing `:`, a bad escape, trailing characters, ...).
    pub fn is_syntax(&self) -> bool {
        self.inner.category == Category::Syntax
    }

    /// Whether the input ended before the value did.
    pub fn is_eof(&self) -> bool {
        self.inner.category == Category::Eof
    }

    /// Whether the input is JSON but does not fit the type (a missing field, a string where a
    /// number belongs, ...).
    pub fn is_data(&self) -> bool {
        self.inner.category == Category::Data
    }
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.inner.message)?;
        if self.inner.line != 0 {
            write!(
                f,
                " at line {} column {}",
                self.inner.line, self.inner.column
            )?;
        }
        Ok(())
    }
}

impl fmt::Debug for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JsonError({self})")
    }
}

impl std::error::Error for JsonError {}

impl serde::de::Error for JsonError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        JsonError::new(Category::Data, message.to_string())
    }
}
