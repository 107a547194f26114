//! Strategic-merge-patch metadata of generated types: for each field, the patch strategy and
//! merge key (`x-kubernetes-patch-strategy`, `x-kubernetes-patch-merge-key`), the list type
//! and map keys (`x-kubernetes-list-type`, `x-kubernetes-list-map-keys`) and the map type, as
//! data a strategic merge patch implementation can walk.
//!
//! Every generated struct implements [`PatchMeta`]. Its table lists the fields that carry any
//! of that metadata or whose value (or list element, or map value) is itself a struct, with a
//! link to that struct's table so the walk can descend.

/// The patch metadata of one field.
#[derive(Debug, Clone, Copy)]
pub struct FieldMeta {
    /// The field's JSON name.
    pub name: &'static str,
    /// `x-kubernetes-patch-strategy`, such as `merge` or `merge,retainKeys`.
    pub patch_strategy: Option<&'static str>,
    /// `x-kubernetes-patch-merge-key`, such as `name` for containers.
    pub patch_merge_key: Option<&'static str>,
    /// `x-kubernetes-list-type`: `atomic`, `set` or `map`.
    pub list_type: Option<&'static str>,
    /// `x-kubernetes-list-map-keys` of a `map` list.
    pub list_map_keys: &'static [&'static str],
    /// `x-kubernetes-map-type` of the field: `atomic` or `granular`. A field that is a
    /// struct has its struct's map type (every `LabelSelector` field is `atomic`) unless it
    /// names its own.
    pub map_type: Option<&'static str>,
    /// The table of the struct this field holds (directly, as list elements or as map values).
    pub fields: Option<fn() -> &'static [FieldMeta]>,
}

impl FieldMeta {
    /// A field with no patch metadata (for building tables by hand).
    pub const fn plain(name: &'static str) -> Self {
        FieldMeta {
            name,
            patch_strategy: None,
            patch_merge_key: None,
            list_type: None,
            list_map_keys: &[],
            map_type: None,
            fields: None,
        }
    }

    /// Whether the patch strategy includes `merge`.
    pub fn is_merge(&self) -> bool {
        self.patch_strategy
            .is_some_and(|s| s.split(',').any(|p| p == "merge"))
    }

    /// Whether the patch strategy includes `retainKeys`.
    pub fn is_retain_keys(&self) -> bool {
        self.patch_strategy
            .is_some_and(|s| s.split(',').any(|p| p == "retainKeys"))
    }

    /// The nested struct's table, if the field holds a struct.
    pub fn nested(&self) -> &'static [FieldMeta] {
        self.fields.map_or(&[], |f| f())
    }
}

/// Patch metadata of a type; see the [`meta`](crate::meta) module documentation.
pub trait PatchMeta {
    /// `x-kubernetes-map-type` of the struct itself (`atomic` means replace it whole).
    const MAP_TYPE: Option<&'static str> = None;

    /// The fields that carry patch metadata or hold structs.
    fn patch_fields() -> &'static [FieldMeta];

    /// The metadata of the field with JSON name `name`.
    fn patch_field(name: &str) -> Option<&'static FieldMeta> {
        Self::patch_fields().iter().find(|f| f.name == name)
    }
}
