//! The Kubernetes protobuf envelope and watch frames.
//!
//! Every protobuf body the apiserver sends (an object, a list, a `Status`) is the four bytes
//! `k8s\0` followed by a `runtime.Unknown` message: `typeMeta` (apiVersion, kind) = 1, `raw`
//! (the object's own message) = 2, `contentEncoding` = 3, `contentType` = 4. A watch stream is
//! a sequence of frames, each a four-byte big-endian length and a `metav1.WatchEvent` message
//! (`type` = 1, `object` = 2, a `RawExtension` whose bytes are an enveloped object).

use std::collections::BTreeMap;

use super::{Message, ProtoError, ProtoErrorKind, Reader, WireType, Writer, merge, put};
use crate::meta::PartialObjectMetadata;
use crate::{Bookmark, ObjectList, Status, WatchEvent};

/// The media type of Kubernetes protobuf.
pub const CONTENT_TYPE_PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The four bytes every protobuf body starts with.
pub const MAGIC: [u8; 4] = *b"k8s\0";

/// A decoded envelope (`runtime.Unknown`), borrowing the body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unknown<'a> {
    /// `typeMeta.apiVersion`, such as `v1` or `apps/v1`.
    pub api_version: &'a str,
    /// `typeMeta.kind`, such as `Pod`, `PodList` or `Status`.
    pub kind: &'a str,
    /// The object's own message.
    pub raw: &'a [u8],
    /// `contentEncoding`: empty (none) for everything the apiserver sends.
    pub content_encoding: &'a str,
    /// `contentType`: empty (protobuf) for everything the apiserver sends.
    pub content_type: &'a str,
}

impl<'a> Unknown<'a> {
    /// Decodes `body`, which must start with [`MAGIC`].
    pub fn decode(body: &'a [u8]) -> Result<Self, ProtoError> {
        let Some(message) = body.strip_prefix(&MAGIC) else {
            return Err(ProtoError::new(
                ProtoErrorKind::InvalidValue {
                    message: "protobuf body does not start with the k8s\\0 prefix (is it JSON?)"
                        .into(),
                },
                0,
            ));
        };
        let mut r = Reader::new(message);
        let mut out = Unknown::default();
        while let Some((field, wire)) = r.next_field()? {
            match field {
                1 => {
                    r.expect(field, wire, WireType::Len)?;
                    let mut t = r.nested()?;
                    while let Some((f, wire)) = t.next_field()? {
                        match f {
                            1 => {
                                t.expect(f, wire, WireType::Len)?;
                                out.api_version = t.str(f)?;
                            }
                            2 => {
                                t.expect(f, wire, WireType::Len)?;
                                out.kind = t.str(f)?;
                            }
                            _ => t.skip(wire)?,
                        }
                    }
                }
                2 => {
                    r.expect(field, wire, WireType::Len)?;
                    out.raw = r.bytes()?;
                }
                3 => {
                    r.expect(field, wire, WireType::Len)?;
                    out.content_encoding = r.str(field)?;
                }
                4 => {
                    r.expect(field, wire, WireType::Len)?;
                    out.content_type = r.str(field)?;
                }
                _ => r.skip(wire)?,
            }
        }
        if !out.content_encoding.is_empty()
            || !(out.content_type.is_empty() || out.content_type == CONTENT_TYPE_PROTOBUF)
        {
            return Err(r.invalid(format!(
                "protobuf envelope holds content type {:?} with encoding {:?}; only plain protobuf is supported",
                out.content_type, out.content_encoding
            )));
        }
        Ok(out)
    }

    /// Decodes the wrapped message as `T`.
    pub fn decode_raw<T: Message>(&self) -> Result<T, ProtoError> {
        T::decode_protobuf(self.raw)
    }

    /// The `Status` this envelope holds, if its kind is `Status`.
    pub fn status(&self) -> Option<Result<Status, ProtoError>> {
        (self.kind == "Status").then(|| {
            let mut status = Status::decode_protobuf(self.raw)?;
            status.kind = "Status".into();
            status.api_version = if self.api_version.is_empty() {
                "v1".into()
            } else {
                self.api_version.into()
            };
            Ok(status)
        })
    }
}

/// Writes `message` in an envelope of `api_version` and `kind` (a request body).
pub fn encode<T: Message>(api_version: &str, kind: &str, message: &T) -> Vec<u8> {
    let mut w = Writer::from_vec(MAGIC.to_vec());
    w.tag(1, WireType::Len);
    w.nested(|w| {
        put(w, 1, &api_version.to_string());
        put(w, 2, &kind.to_string());
    });
    w.tag(2, WireType::Len);
    w.nested(|w| message.encode_fields(w));
    // contentEncoding and contentType, empty, as Go writes them.
    put(&mut w, 3, &String::new());
    put(&mut w, 4, &String::new());
    w.into_vec()
}

/// Decodes an enveloped object of type `T` (a get, create or update response).
pub fn decode_object<T: Message>(body: &[u8]) -> Result<T, ProtoError> {
    Unknown::decode(body)?.decode_raw()
}

/// Decodes an enveloped object of type `T` whose kind is `kind` (`Pod`, `PodList`). An
/// envelope naming another kind is an error: protobuf messages carry no field names, so another
/// kind's fields would be read as `T`'s (a `Status`'s `ListMeta` as a Pod's `ObjectMeta`), and
/// client-go's decoder does not fill a typed object from another kind either. An envelope
/// without a kind reads as `kind`, as Go's decoder takes the expected one then.
pub fn decode_object_of_kind<T: Message>(body: &[u8], kind: &str) -> Result<T, ProtoError> {
    let envelope = Unknown::decode(body)?;
    if !envelope.kind.is_empty() && envelope.kind != kind {
        return Err(ProtoError::new(
            ProtoErrorKind::InvalidValue {
                message: format!(
                    "protobuf envelope holds a {:?}, expected a {kind:?}",
                    envelope.kind
                ),
            },
            0,
        ));
    }
    envelope.decode_raw()
}

/// Decodes an enveloped `Status` (an error response); `None` if the body is an envelope of
/// another kind.
pub fn decode_status(body: &[u8]) -> Option<Result<Status, ProtoError>> {
    match Unknown::decode(body) {
        Ok(u) => u.status(),
        Err(e) => Some(Err(e)),
    }
}

/// Every Kubernetes list message: `metadata` (ListMeta) = 1, `items` = 2.
impl<T: Message> Message for ObjectList<T> {
    fn merge_field(
        &mut self,
        field: u32,
        wire: WireType,
        r: &mut Reader<'_>,
    ) -> Result<(), ProtoError> {
        match field {
            1 => merge(&mut self.metadata, field, wire, r),
            2 => {
                r.expect(field, wire, WireType::Len)?;
                let mut item = T::default();
                item.merge(&mut r.nested()?)?;
                self.items.push(item);
                Ok(())
            }
            _ => r.skip(wire),
        }
    }

    fn encode_fields(&self, w: &mut Writer) {
        put(w, 1, &self.metadata);
        for item in &self.items {
            put(w, 2, item);
        }
    }
}

/// Writes one watch frame: length prefix and `WatchEvent { type, object: enveloped }`.
pub fn encode_watch_frame(event_type: &str, enveloped_object: &[u8]) -> Vec<u8> {
    let mut w = Writer::new();
    put(&mut w, 1, &event_type.to_string());
    w.tag(2, WireType::Len);
    w.nested(|w| {
        w.tag(1, WireType::Len);
        w.bytes(enveloped_object);
    });
    let body = w.into_vec();
    let mut out = (body.len() as u32).to_be_bytes().to_vec();
    out.extend(body);
    out
}

/// Decodes one watch frame (without its length prefix) into an event of `T`.
pub fn decode_watch_event<T: Message>(frame: &[u8]) -> Result<WatchEvent<T>, ProtoError> {
    let (event_type, envelope, r) = read_watch_event(frame)?;
    decode_event_object(event_type, envelope, &r)
}

/// Splits one watch frame (without its length prefix) into its event type and its object's
/// envelope, whose `api_version` and `kind` name the object's type, without decoding the
/// object (a reflector checks them against the type it expects).
pub fn split_watch_event(frame: &[u8]) -> Result<(&str, Unknown<'_>), ProtoError> {
    read_watch_event(frame).map(|(event_type, envelope, _)| (event_type, envelope))
}

fn read_watch_event(frame: &[u8]) -> Result<(&str, Unknown<'_>, Reader<'_>), ProtoError> {
    let mut r = Reader::new(frame);
    let mut event_type = "";
    let mut object: &[u8] = &[];
    while let Some((field, wire)) = r.next_field()? {
        match field {
            1 => {
                r.expect(field, wire, WireType::Len)?;
                event_type = r.str(field)?;
            }
            2 => {
                r.expect(field, wire, WireType::Len)?;
                let mut raw = r.nested()?;
                while let Some((f, wire)) = raw.next_field()? {
                    if f == 1 {
                        raw.expect(f, wire, WireType::Len)?;
                        object = raw.bytes()?;
                    } else {
                        raw.skip(wire)?;
                    }
                }
            }
            _ => r.skip(wire)?,
        }
    }
    let envelope = Unknown::decode(object)?;
    Ok((event_type, envelope, r))
}

fn decode_event_object<T: Message>(
    event_type: &str,
    envelope: Unknown<'_>,
    r: &Reader<'_>,
) -> Result<WatchEvent<T>, ProtoError> {
    Ok(match event_type {
        "ADDED" => WatchEvent::Added(envelope.decode_raw()?),
        "MODIFIED" => WatchEvent::Modified(envelope.decode_raw()?),
        "DELETED" => WatchEvent::Deleted(envelope.decode_raw()?),
        "BOOKMARK" => {
            // Field 1 of every kind is its metadata: read the bookmark as metadata only.
            let meta = envelope.decode_raw::<PartialObjectMetadata>()?.metadata;
            WatchEvent::Bookmark(Bookmark {
                resource_version: meta
                    .resource_version
                    .map(|v| v.to_string())
                    .unwrap_or_default(),
                annotations: meta
                    .annotations
                    .map(|a| {
                        a.iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect::<BTreeMap<_, _>>()
                    })
                    .unwrap_or_default(),
            })
        }
        "ERROR" => match envelope.status() {
            Some(status) => WatchEvent::Error(Box::new(status?)),
            None => {
                return Err(r.invalid(format!(
                    "watch ERROR event holds a {:?}, not a Status",
                    envelope.kind
                )));
            }
        },
        other => {
            return Err(r.invalid(format!("unknown watch event type {other:?}")));
        }
    })
}
