//! The public types are `Send + Sync` (they cross threads in caches, informers and watch
//! streams); this fails to compile if one stops being so.

use kclient_apimachinery::{
    ApiResource, Bookmark, CreateOptions, DeleteOptions, Error, FieldSelector, GetOptions,
    GroupVersionKind, GroupVersionResource, JsonPatch, ListMeta, ListOptions, ObjectList,
    PatchOptions, PatchTable, RawWatchEvent, Requirement, Selector, Status, Unstructured,
    UnstructuredList, UpdateOptions, WatchEvent,
};

fn is_send_sync<T: Send + Sync + 'static>() {}

#[test]
fn public_types_are_send_and_sync() {
    is_send_sync::<Error>();
    is_send_sync::<Status>();
    is_send_sync::<ListMeta>();
    is_send_sync::<WatchEvent<Unstructured>>();
    is_send_sync::<RawWatchEvent>();
    is_send_sync::<Bookmark>();
    is_send_sync::<ObjectList<Unstructured>>();
    is_send_sync::<Unstructured>();
    is_send_sync::<UnstructuredList>();
    is_send_sync::<Selector>();
    is_send_sync::<Requirement>();
    is_send_sync::<FieldSelector>();
    is_send_sync::<ListOptions>();
    is_send_sync::<GetOptions>();
    is_send_sync::<CreateOptions>();
    is_send_sync::<UpdateOptions>();
    is_send_sync::<PatchOptions>();
    is_send_sync::<DeleteOptions>();
    is_send_sync::<GroupVersionKind>();
    is_send_sync::<GroupVersionResource>();
    is_send_sync::<ApiResource>();
    is_send_sync::<JsonPatch>();
    is_send_sync::<PatchTable>();
    // The error stays one pointer wide, so `Result<T, Error>` costs little on the happy path.
    assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
}
