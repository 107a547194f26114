//! `ByteStream`: a response body read chunk by chunk (pod logs, watches), with transport
//! errors already mapped to [`Error`].

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use kclient_apimachinery::Error;

/// The body of a streaming response, as it arrives. Dropping it closes the request.
pub struct ByteStream {
    inner: Pin<Box<dyn Stream<Item = Result<Bytes, Error>> + Send>>,
}

impl ByteStream {
    /// Wraps any stream of chunks (used by the client, and by tests feeding bytes from memory).
    pub fn new(stream: impl Stream<Item = Result<Bytes, Error>> + Send + 'static) -> Self {
        ByteStream {
            inner: Box::pin(stream),
        }
    }
}

impl std::fmt::Debug for ByteStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ByteStream").finish_non_exhaustive()
    }
}

impl Stream for ByteStream {
    type Item = Result<Bytes, Error>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}
