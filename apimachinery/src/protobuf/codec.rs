//! [`ProtobufCodec`]: a kind's protobuf form as a table of functions, so that clients which only
//! know `K: Resource` can negotiate protobuf for the kinds that have it (client-go's
//! `PrefersProtobuf` for built-in types) and stay JSON for the others (custom resources).

use super::{Message, ProtoError, decode_object_of_kind, decode_watch_event, encode};
use crate::meta::PartialObjectMetadata;
use crate::{ObjectList, Resource, WatchEvent};

/// How objects, lists and watch events of `K` are read and written as protobuf.
///
/// Obtained from [`Resource::protobuf`]; every built-in kind of kclient-api returns one when its
/// `protobuf` feature is on.
///
/// ```
/// # use kclient_apimachinery::protobuf::ProtobufCodec;
/// # use kclient_apimachinery::Status;
/// // Any `Message` has a codec; built-in kinds hand theirs out through `Resource::protobuf`.
/// fn round_trip<K: kclient_apimachinery::Resource + kclient_apimachinery::protobuf::Message>(obj: &K) -> K {
///     let codec = ProtobufCodec::<K>::of();
///     codec.decode_object(&codec.encode(obj)).unwrap()
/// }
/// ```
pub struct ProtobufCodec<K> {
    decode_object: fn(&[u8]) -> Result<K, ProtoError>,
    decode_list: fn(&[u8]) -> Result<ObjectList<K>, ProtoError>,
    decode_watch_event: fn(&[u8]) -> Result<WatchEvent<K>, ProtoError>,
    encode: fn(&K) -> Vec<u8>,
}

impl<K> Clone for ProtobufCodec<K> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<K> Copy for ProtobufCodec<K> {}

impl<K> std::fmt::Debug for ProtobufCodec<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProtobufCodec")
            .field("type", &std::any::type_name::<K>())
            .finish()
    }
}

impl<K: Resource + Message> ProtobufCodec<K> {
    /// The codec of a kind that implements [`Message`].
    pub fn of() -> Self {
        ProtobufCodec {
            decode_object: |body| decode_object_of_kind(body, K::KIND),
            decode_list: |body| decode_object_of_kind(body, &format!("{}List", K::KIND)),
            decode_watch_event: decode_watch_event::<K>,
            encode: encode_object::<K>,
        }
    }
}

fn encode_object<K: Resource + Message>(obj: &K) -> Vec<u8> {
    encode(K::API_VERSION, K::KIND, obj)
}

impl ProtobufCodec<PartialObjectMetadata> {
    /// The codec of metadata-only responses (`;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`,
    /// see [`ACCEPT_METADATA_PROTOBUF`](crate::meta::ACCEPT_METADATA_PROTOBUF)). Objects, list
    /// items and watch events get the `apiVersion` and `kind` their JSON form carries.
    pub fn partial_object_metadata() -> Self {
        ProtobufCodec {
            decode_object: decode_metadata,
            decode_list: |body| {
                let mut list = decode_object_of_kind::<ObjectList<PartialObjectMetadata>>(
                    body,
                    METADATA_LIST_KIND,
                )?;
                list.items = std::mem::take(&mut list.items)
                    .into_iter()
                    .map(with_type_meta)
                    .collect();
                Ok(list)
            },
            decode_watch_event: |frame| {
                Ok(match decode_watch_event::<PartialObjectMetadata>(frame)? {
                    WatchEvent::Added(m) => WatchEvent::Added(with_type_meta(m)),
                    WatchEvent::Modified(m) => WatchEvent::Modified(with_type_meta(m)),
                    WatchEvent::Deleted(m) => WatchEvent::Deleted(with_type_meta(m)),
                    other => other,
                })
            },
            encode: |m| encode(METADATA_API_VERSION, METADATA_KIND, m),
        }
    }
}

const METADATA_API_VERSION: &str = "meta.k8s.io/v1";
const METADATA_KIND: &str = "PartialObjectMetadata";
const METADATA_LIST_KIND: &str = "PartialObjectMetadataList";

fn decode_metadata(body: &[u8]) -> Result<PartialObjectMetadata, ProtoError> {
    decode_object_of_kind::<PartialObjectMetadata>(body, METADATA_KIND).map(with_type_meta)
}

fn with_type_meta(mut m: PartialObjectMetadata) -> PartialObjectMetadata {
    m.api_version = Some(METADATA_API_VERSION.into());
    m.kind = Some(METADATA_KIND.into());
    m
}

impl<K> ProtobufCodec<K> {
    /// Decodes an enveloped object (the body of a get, create, update or patch).
    pub fn decode_object(&self, body: &[u8]) -> Result<K, ProtoError> {
        (self.decode_object)(body)
    }

    /// Decodes an enveloped list (the body of a list).
    pub fn decode_list(&self, body: &[u8]) -> Result<ObjectList<K>, ProtoError> {
        (self.decode_list)(body)
    }

    /// Decodes one watch frame, without its length prefix.
    pub fn decode_watch_event(&self, frame: &[u8]) -> Result<WatchEvent<K>, ProtoError> {
        (self.decode_watch_event)(frame)
    }

    /// Encodes an object in its envelope, with `K`'s apiVersion and kind (a create or update
    /// body).
    pub fn encode(&self, obj: &K) -> Vec<u8> {
        (self.encode)(obj)
    }
}
