//! Two-way strategic merge patches (client-go's `strategicpatch.CreateTwoWayMergePatch`): the
//! patch that turns one object into another, merging lists by key where the type's schema says
//! so, in the exact form client-go emits.
//!
//! What the schema says per field ([`PatchSchema`]):
//!
//! - no strategy: objects are diffed key by key (a removed key becomes `null`), lists are
//!   replaced whole;
//! - `patchStrategy: merge` on a list of objects with `patchMergeKey` (containers by `name`):
//!   changed and added items are listed (changed ones with only their changes plus the key),
//!   removed ones as `{"$patch": "delete", <key>: <value>}`, and `$setElementOrder/<field>`
//!   gives the full order (merge keys only) whenever the list's content or order changed;
//! - `patchStrategy: merge` on a list of scalars (finalizers): added values are listed,
//!   removed ones go to `$deleteFromPrimitiveList/<field>`, and `$setElementOrder/<field>` holds
//!   the modified list;
//! - `patchStrategy: replace` on an object: the object is replaced whole;
//! - `retainKeys` (a Deployment's `strategy`, the items of `volumes`): a changed object also
//!   lists the keys to keep in `$retainKeys`.
//!
//! Fields the schema does not describe are treated as having no strategy (client-go fails
//! instead when such a field changed); with the `()` schema the result is a JSON merge patch
//! that diffs nested objects, suitable for custom resources.
//!
//! [`apply_strategic_merge_patch`] applies such a patch as the API server does
//! (client-go's `StrategicMergePatch`), which lets code check a patch locally and lets fakes
//! serve `PATCH` requests.

mod apply;
mod diff;
mod lists;
mod schema;

use std::fmt;

pub use apply::apply_strategic_merge_patch;
pub use diff::create_two_way_merge_patch;
pub use schema::{FieldPatchMeta, PatchSchema, PatchStrategy, PatchTable};

/// The key of a directive inside an object: `$patch: replace|delete|merge`.
const DIRECTIVE_MARKER: &str = "$patch";
/// `$patch: delete`.
const DELETE_DIRECTIVE: &str = "delete";
/// `$patch: replace`.
const REPLACE_DIRECTIVE: &str = "replace";
/// `$patch: merge`.
const MERGE_DIRECTIVE: &str = "merge";
/// The list of keys an object keeps (`retainKeys` strategy).
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
/// The prefix of the parallel list of scalars to delete from a merged list.
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
/// The prefix of the parallel list giving a merged list's order.
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

/// A strategic merge patch that could not be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrategicPatchError {
    message: String,
}

impl StrategicPatchError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        StrategicPatchError {
            message: message.into(),
        }
    }
}

impl fmt::Display for StrategicPatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StrategicPatchError {}

#[cfg(test)]
mod test_schema;
