//! The schema side of strategic merge patches: what a patch needs to know about each field
//! (strategy, merge key, nested schema), as the [`PatchSchema`] trait, with [`PatchTable`] as
//! a table built by hand, the generated tables of the API types (`&'static [FieldMeta]`), and
//! `()` as "no metadata".

use std::collections::BTreeMap;

use crate::meta::FieldMeta;

/// The patch strategy of a field (`x-kubernetes-patch-strategy`, without `retainKeys`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PatchStrategy {
    /// No strategy: objects merge key by key, lists are replaced.
    #[default]
    Default,
    /// Lists merge by their merge key (or, for scalars, by value).
    Merge,
    /// The value is replaced whole.
    Replace,
}

/// What a strategic merge patch needs to know about one field.
#[derive(Debug, Clone, Copy, Default)]
pub struct FieldPatchMeta<'a, S> {
    /// The strategy.
    pub strategy: PatchStrategy,
    /// Whether `retainKeys` is part of the strategy.
    pub retain_keys: bool,
    /// `x-kubernetes-patch-merge-key` of a merged list of objects.
    pub merge_key: Option<&'a str>,
    /// The schema of the object the field holds (directly, as list items or as map values).
    pub schema: S,
}

impl<S> FieldPatchMeta<'_, S> {
    /// Reads a `patchStrategy` tag such as `merge`, `replace`, `retainKeys` or
    /// `merge,retainKeys`.
    pub fn parse_strategy(tag: &str) -> (PatchStrategy, bool) {
        let mut strategy = PatchStrategy::Default;
        let mut retain_keys = false;
        for part in tag.split(',').map(str::trim) {
            match part {
                "merge" => strategy = PatchStrategy::Merge,
                "replace" => strategy = PatchStrategy::Replace,
                "retainKeys" => retain_keys = true,
                _ => {}
            }
        }
        (strategy, retain_keys)
    }
}

/// The patch metadata of an object type: for each field, its strategy, merge key and the
/// schema of what it holds. Implemented by [`PatchTable`] (built by hand or from generated
/// metadata) and by `()` (no metadata at all).
///
/// Schemas are small copyable handles (a reference to a table) so the walk can pass them down.
pub trait PatchSchema: Copy {
    /// The metadata of field `name`; unknown fields have no strategy and the empty schema.
    fn field(&self, name: &str) -> FieldPatchMeta<'_, Self>;
}

impl PatchSchema for () {
    fn field(&self, _name: &str) -> FieldPatchMeta<'_, Self> {
        FieldPatchMeta::default()
    }
}

/// Patch metadata as a table: fields by name, each with its strategy, merge key and nested
/// table.
///
/// ```
/// use kclient_apimachinery::PatchTable;
///
/// let container = PatchTable::new().merge_list("ports", "containerPort", PatchTable::new());
/// let pod_spec = PatchTable::new()
///     .merge_list("containers", "name", container)
///     .merge_list("volumes", "name", PatchTable::new())
///     .retain_keys("volumes");
/// let pod = PatchTable::new().object("spec", pod_spec);
/// # let _ = pod;
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PatchTable {
    fields: BTreeMap<String, TableField>,
}

#[derive(Debug, Clone, Default, PartialEq)]
struct TableField {
    strategy: PatchStrategy,
    retain_keys: bool,
    merge_key: Option<String>,
    nested: Option<Box<PatchTable>>,
}

static EMPTY_TABLE: PatchTable = PatchTable {
    fields: BTreeMap::new(),
};

impl PatchTable {
    /// A table with no fields.
    pub fn new() -> Self {
        PatchTable::default()
    }

    fn entry(&mut self, name: &str) -> &mut TableField {
        self.fields.entry(name.to_owned()).or_default()
    }

    /// Field `name` holds an object (or a list or map of objects) described by `nested`.
    pub fn object(mut self, name: &str, nested: PatchTable) -> Self {
        self.entry(name).nested = Some(Box::new(nested));
        self
    }

    /// Field `name` is a list of objects merged by `merge_key` (`patchStrategy: merge`), its
    /// items described by `item`.
    pub fn merge_list(mut self, name: &str, merge_key: &str, item: PatchTable) -> Self {
        let field = self.entry(name);
        field.strategy = PatchStrategy::Merge;
        field.merge_key = Some(merge_key.to_owned());
        field.nested = Some(Box::new(item));
        self
    }

    /// Field `name` is a list of scalars merged as a set (`patchStrategy: merge`).
    pub fn merge_scalars(mut self, name: &str) -> Self {
        self.entry(name).strategy = PatchStrategy::Merge;
        self
    }

    /// Field `name` is replaced whole (`patchStrategy: replace`).
    pub fn replace(mut self, name: &str) -> Self {
        self.entry(name).strategy = PatchStrategy::Replace;
        self
    }

    /// Field `name` also has the `retainKeys` strategy.
    pub fn retain_keys(mut self, name: &str) -> Self {
        self.entry(name).retain_keys = true;
        self
    }

    /// A field with a raw `patchStrategy` tag (`merge,retainKeys`) and merge key, as generated
    /// metadata carries them.
    pub fn tagged(
        mut self,
        name: &str,
        patch_strategy: &str,
        merge_key: Option<&str>,
        nested: Option<PatchTable>,
    ) -> Self {
        let (strategy, retain_keys) = FieldPatchMeta::<()>::parse_strategy(patch_strategy);
        let field = self.entry(name);
        field.strategy = strategy;
        field.retain_keys = retain_keys;
        field.merge_key = merge_key.map(str::to_owned);
        field.nested = nested.map(Box::new);
        self
    }
}

impl PatchSchema for &PatchTable {
    fn field(&self, name: &str) -> FieldPatchMeta<'_, Self> {
        match self.fields.get(name) {
            None => FieldPatchMeta {
                strategy: PatchStrategy::Default,
                retain_keys: false,
                merge_key: None,
                schema: &EMPTY_TABLE,
            },
            Some(field) => FieldPatchMeta {
                strategy: field.strategy,
                retain_keys: field.retain_keys,
                merge_key: field.merge_key.as_deref(),
                schema: field.nested.as_deref().unwrap_or(&EMPTY_TABLE),
            },
        }
    }
}

/// The tables generated for the API types ([`PatchMeta`](crate::meta::PatchMeta)): pass
/// `K::patch_fields()` as the schema of a `K`.
///
/// ```
/// use kclient_apimachinery::create_two_way_merge_patch;
/// use kclient_apimachinery::meta::PatchMeta;
/// use kclient_apimachinery::meta::v1::ObjectMeta;
/// use serde_json::json;
///
/// let original = json!({"name": "web", "finalizers": ["a", "b"]});
/// let modified = json!({"name": "web", "finalizers": ["b"]});
/// let patch = create_two_way_merge_patch(&original, &modified, ObjectMeta::patch_fields())?;
/// assert_eq!(
///     patch,
///     json!({"$deleteFromPrimitiveList/finalizers": ["a"], "$setElementOrder/finalizers": ["b"]})
/// );
/// # Ok::<(), kclient_apimachinery::StrategicPatchError>(())
/// ```
impl PatchSchema for &'static [FieldMeta] {
    fn field(&self, name: &str) -> FieldPatchMeta<'_, Self> {
        match self.iter().find(|f| f.name == name) {
            None => FieldPatchMeta {
                strategy: PatchStrategy::Default,
                retain_keys: false,
                merge_key: None,
                schema: &[],
            },
            Some(field) => {
                let (strategy, retain_keys) =
                    FieldPatchMeta::<()>::parse_strategy(field.patch_strategy.unwrap_or(""));
                FieldPatchMeta {
                    strategy,
                    retain_keys,
                    merge_key: field.patch_merge_key,
                    schema: field.nested(),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strategy_tags_parse() {
        type Meta<'a> = FieldPatchMeta<'a, ()>;
        assert_eq!(Meta::parse_strategy("merge"), (PatchStrategy::Merge, false));
        assert_eq!(
            Meta::parse_strategy("merge,retainKeys"),
            (PatchStrategy::Merge, true)
        );
        assert_eq!(
            Meta::parse_strategy("retainKeys"),
            (PatchStrategy::Default, true)
        );
        assert_eq!(
            Meta::parse_strategy("replace"),
            (PatchStrategy::Replace, false)
        );
        assert_eq!(Meta::parse_strategy(""), (PatchStrategy::Default, false));
    }

    #[test]
    fn tables_answer_field_lookups() {
        let table = PatchTable::new()
            .tagged(
                "volumes",
                "merge,retainKeys",
                Some("name"),
                Some(PatchTable::new().replace("x")),
            )
            .object("spec", PatchTable::new());
        let schema = &table;
        let volumes = schema.field("volumes");
        assert_eq!(volumes.strategy, PatchStrategy::Merge);
        assert!(volumes.retain_keys);
        assert_eq!(volumes.merge_key, Some("name"));
        assert_eq!(volumes.schema.field("x").strategy, PatchStrategy::Replace);
        let unknown = schema.field("nope");
        assert_eq!(unknown.strategy, PatchStrategy::Default);
        assert_eq!(unknown.merge_key, None);
        assert_eq!(unknown.schema.field("x").strategy, PatchStrategy::Default);
        assert_eq!(().field("anything").strategy, PatchStrategy::Default);
    }

    #[test]
    fn generated_tables_answer_field_lookups() {
        use crate::meta::PatchMeta;
        use crate::meta::v1::ObjectMeta;
        let schema = ObjectMeta::patch_fields();
        let owners = schema.field("ownerReferences");
        assert_eq!(owners.strategy, PatchStrategy::Merge);
        assert_eq!(owners.merge_key, Some("uid"));
        assert_eq!(schema.field("finalizers").strategy, PatchStrategy::Merge);
        assert_eq!(schema.field("labels").strategy, PatchStrategy::Default);
        assert!(schema.field("nope").schema.is_empty());
    }
}
