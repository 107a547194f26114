//! `LineStream`: a streamed text body (a followed pod log) read line by line, with bounded
//! memory.
//!
//! Lines are split as chunks arrive by the watch decoder's line buffer, so at most one line
//! and one chunk are held. The body is read only when the next line is asked for: a slow
//! reader leaves data in the connection's flow-control window (HTTP/2) or the socket (HTTP/1),
//! which makes the server wait, rather than in memory.
//!
//! - Each line is yielded without its `\n` (or `\r\n`); empty lines are kept.
//! - When the body ends, a last line without a newline is yielded too.
//! - A line longer than the limit ([`DEFAULT_MAX_OBJECT_SIZE`](crate::DEFAULT_MAX_OBJECT_SIZE)
//!   unless set) yields a decode error naming the limit, and the stream ends.
//! - A transport error (a cut connection) is yielded once, after the complete lines received
//!   before it, and the stream ends; the partial line it cut is dropped.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use kclient_apimachinery::Error;

use crate::body::{DEFAULT_MAX_OBJECT_SIZE, ObjectPart};
use crate::byte_stream::ByteStream;
use crate::watch::LineBuffer;

/// The lines of a [`ByteStream`], from [`ByteStream::lines`].
pub struct LineStream {
    body: ByteStream,
    lines: LineBuffer,
    /// The body has ended (cleanly): drain the buffer.
    ended: bool,
    done: bool,
}

impl ByteStream {
    /// This body's lines (see [`LineStream`]), each at most
    /// [`DEFAULT_MAX_OBJECT_SIZE`](crate::DEFAULT_MAX_OBJECT_SIZE) bytes.
    pub fn lines(self) -> LineStream {
        self.lines_with_limit(DEFAULT_MAX_OBJECT_SIZE)
    }

    /// This body's lines, each at most `max_line` bytes.
    pub fn lines_with_limit(self, max_line: usize) -> LineStream {
        LineStream {
            body: self,
            lines: LineBuffer::of(max_line, ObjectPart::Line),
            ended: false,
            done: false,
        }
    }
}

impl Stream for LineStream {
    type Item = Result<Bytes, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        loop {
            if this.done {
                return Poll::Ready(None);
            }
            match this.lines.next_line() {
                Ok(Some(line)) => return Poll::Ready(Some(Ok(line))),
                Ok(None) => {}
                Err(e) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(Error::decode("a streamed line", e))));
                }
            }
            if this.ended {
                this.done = true;
                return Poll::Ready(this.lines.take_rest().map(Ok));
            }
            match Pin::new(&mut this.body).poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(chunk))) => this.lines.push(chunk),
                Poll::Ready(None) => this.ended = true,
                Poll::Ready(Some(Err(e))) => {
                    this.done = true;
                    return Poll::Ready(Some(Err(e)));
                }
            }
        }
    }
}

impl std::fmt::Debug for LineStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineStream").finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt as _;
    use kclient_apimachinery::TransportErrorKind;

    use super::*;

    fn body(chunks: Vec<Result<&'static [u8], Error>>) -> ByteStream {
        ByteStream::new(futures_util::stream::iter(
            chunks.into_iter().map(|c| c.map(Bytes::from_static)),
        ))
    }

    fn texts(items: &[Result<Bytes, Error>]) -> Vec<String> {
        items
            .iter()
            .map(|i| match i {
                Ok(l) => String::from_utf8_lossy(l).into_owned(),
                Err(e) => format!("error: {e}"),
            })
            .collect()
    }

    #[tokio::test]
    async fn lines_across_chunks_blank_lines_and_a_last_line_without_newline() {
        let items: Vec<_> = body(vec![
            Ok(b"one\ntw"),
            Ok(b"o\r\n\nth"),
            Ok(b"r"),
            Ok(b"ee\nlast"),
        ])
        .lines()
        .collect()
        .await;
        assert_eq!(texts(&items), ["one", "two", "", "three", "last"]);
    }

    #[tokio::test]
    async fn a_cut_ends_with_the_error_after_the_complete_lines() {
        let cut = Error::transport(TransportErrorKind::ConnectionReset, "cut");
        let items: Vec<_> = body(vec![Ok(b"a\nb\npart"), Err(cut), Ok(b"never\n")])
            .lines()
            .collect()
            .await;
        assert_eq!(items.len(), 3);
        assert_eq!(texts(&items[..2]), ["a", "b"]);
        assert!(items[2].as_ref().unwrap_err().is_connection_reset());
    }

    #[tokio::test]
    async fn a_line_over_the_limit_is_an_error_and_ends_the_stream() {
        let items: Vec<_> = body(vec![Ok(b"short\n0123456789"), Ok(b"abc\nafter\n")])
            .lines_with_limit(8)
            .collect()
            .await;
        assert_eq!(items.len(), 2);
        assert_eq!(texts(&items[..1]), ["short"]);
        let err = items[1].as_ref().unwrap_err();
        assert!(err.is_decode(), "{err:?}");
        assert!(err.to_string().contains("a line is larger than"), "{err}");
    }

    /// Nothing is read from the body until a line is asked for, so a reader that stops
    /// leaves the rest with the server.
    #[tokio::test]
    async fn the_body_is_read_only_as_lines_are_asked_for() {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let pulled = Arc::new(AtomicUsize::new(0));
        let counter = pulled.clone();
        let chunks = futures_util::stream::iter(0..1000).map(move |_| {
            counter.fetch_add(1, Ordering::Relaxed);
            Ok(Bytes::from_static(b"line\n"))
        });
        let mut lines = ByteStream::new(chunks).lines();
        for _ in 0..3 {
            assert_eq!(&lines.next().await.unwrap().unwrap()[..], b"line");
        }
        assert_eq!(pulled.load(Ordering::Relaxed), 3);
    }
}
