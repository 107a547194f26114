//! [`semantic_eq`], apimachinery's `equality.Semantic.DeepEqual`: whether two API objects say
//! the same thing, even where their JSON differs.
//!
//! Two objects are semantically equal when their serialized forms match, with Go's
//! allowances:
//!
//! - a [`Quantity`] is compared by amount ([`Quantity::cmp_amount`]): `1000m` equals `1`, and
//!   an empty quantity (Go's uninitialized one) equals `0`. The API server stores quantities in
//!   their canonical form, so a controller that writes `0.5` reads back `500m`;
//! - an empty list or map equals an absent one (`None`, or a field left out): Go's nil and
//!   empty slices and maps are equal. An `Option` of a list or map is taken as Go's slice or
//!   map, not as a pointer to one, whose nil Go tells from empty (a `serde_json::Value`
//!   object is a map too). An empty list is not an empty map, and neither is JSON's `null` (a
//!   `serde_json::Value::Null`), as Go tells an interface's types apart. An empty struct is not an absent one (Go's pointer to a zero
//!   struct is not nil), but a struct with a `#[serde(flatten)]` field serializes, and so
//!   compares, as a map.
//!
//! Raw JSON (`managedFields`, `RawExtension`, `JSON` fields) is compared as parsed JSON, with
//! no allowances inside it; Go compares its bytes, which also tells apart the same JSON written
//! with other spacing or key order. Text that does not parse (deeper than `serde_json` reads)
//! compares as text. Times need no allowance: kclient writes every time in UTC, so equal
//! instants have equal text.
//!
//! A field set to its zero value where Go's `omitempty` leaves it out (`Some(0)` for an
//! `Option<i32>` the server stores as absent) is not equal to the absent field: Rust's `None`
//! may mean something else than zero (a Deployment's `replicas`), which only the type's own
//! defaults know.
//!
//! The walk goes through the types' `Serialize` impls with a serializer of its own: a
//! [`Quantity`] announces itself there as a newtype named [`QUANTITY_NAME`], which every
//! other serializer (JSON, YAML) writes as its plain text.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;
use serde::ser::{self, Impossible};
use serde_json::Value;

use crate::meta::Quantity;

/// The newtype name [`Quantity`]'s `Serialize` impl passes to `serialize_newtype_struct`, by
/// which [`semantic_eq`] tells quantities from other strings.
pub(crate) const QUANTITY_NAME: &str = "$kclient::Quantity";

/// serde_json's name for its `RawValue`, serialized as a struct of one field by that name
/// holding the raw text.
const RAW_VALUE_NAME: &str = "$serde_json::private::RawValue";

/// Whether `a` and `b` are semantically equal, as apimachinery's `equality.Semantic.DeepEqual`
/// tells: quantities compare by amount ([`Quantity::cmp_amount`], an empty one as `0`), and
/// empty lists and maps equal absent ones, but an empty struct is not an absent one; raw JSON
/// compares as parsed JSON. The module `equality` (this function's source) gives the details.
///
/// Values of any depth are compared without overflowing the stack (an `Unstructured` may nest
/// 10,000 levels, as the API server stores).
///
/// A value whose serialization fails (a map with keys that are not strings, say) is equal to
/// nothing, so that a caller deciding whether to write goes on and meets the error there.
///
/// ```
/// use kclient_apimachinery::meta::Quantity;
/// use kclient_apimachinery::semantic_eq;
/// use std::collections::BTreeMap;
///
/// let ours = BTreeMap::from([("cpu", Quantity::from("0.5"))]);
/// let stored = BTreeMap::from([("cpu", Quantity::from("500m"))]);
/// assert!(semantic_eq(&ours, &stored));
/// assert_ne!(ours, stored); // `==` compares the text
///
/// let none: Option<Vec<String>> = None;
/// assert!(semantic_eq(&Some(Vec::<String>::new()), &none));
/// ```
pub fn semantic_eq<T: Serialize + ?Sized>(a: &T, b: &T) -> bool {
    let (Ok(a), Ok(b)) = (Tree::of(a), Tree::of(b)) else {
        return false;
    };
    // Comparing and dropping recurse once per level: on a stack as deep as the trees.
    let levels = a.levels().max(b.levels());
    let levels = u32::try_from(levels).unwrap_or(u32::MAX);
    crate::unstructured::deep::with_room(crate::unstructured::deep::room_for_levels(levels), || {
        let equal = a == b;
        drop((a, b));
        equal
    })
}

/// The stack kept free while a tree is built, and grown by when less is left: the
/// serialization of a value recurses once per level of it, on the caller's stack.
const RED_ZONE: usize = 64 * 1024;
const STACK_SEGMENT: usize = 1024 * 1024;

/// A serialized value as [`semantic_eq`] compares it: what JSON holds, plus quantities and
/// absent values.
#[derive(Debug)]
enum Tree {
    /// `None`: an absent value. Struct fields that are absent are left out.
    Absent,
    /// A unit, such as JSON's `null` in a `serde_json::Value`.
    Null,
    /// A boolean, number or string.
    Scalar(Value),
    Quantity(Quantity),
    /// Raw JSON, compared as it parses.
    Json(Value),
    /// Raw JSON that does not parse, compared as text.
    RawText(String),
    List(Vec<Tree>),
    /// A map's entries.
    Map(BTreeMap<String, Tree>),
    /// A struct's fields that are not absent.
    Struct(BTreeMap<&'static str, Tree>),
}

impl Tree {
    fn of<T: Serialize + ?Sized>(value: &T) -> Result<Tree, Failed> {
        stacker::maybe_grow(RED_ZONE, STACK_SEGMENT, || value.serialize(TreeSerializer))
    }

    /// How many levels of lists, maps and structs the tree nests (without recursing).
    fn levels(&self) -> usize {
        let mut deepest = 0;
        let mut pending = vec![(self, 1)];
        while let Some((tree, level)) = pending.pop() {
            deepest = deepest.max(level);
            match tree {
                Tree::List(items) => pending.extend(items.iter().map(|t| (t, level + 1))),
                Tree::Map(entries) => pending.extend(entries.values().map(|t| (t, level + 1))),
                Tree::Struct(fields) => pending.extend(fields.values().map(|t| (t, level + 1))),
                _ => {}
            }
        }
        deepest
    }

    /// Whether this is absent, or a list or map that could stand for an absent one (Go's
    /// nil slice or map is equal to an empty one).
    fn is_absent_or_empty(&self) -> bool {
        match self {
            Tree::Absent => true,
            Tree::List(items) => items.is_empty(),
            Tree::Map(entries) => entries.is_empty(),
            _ => false,
        }
    }
}

impl PartialEq for Tree {
    fn eq(&self, other: &Tree) -> bool {
        match (self, other) {
            (Tree::Absent, other) | (other, Tree::Absent) => other.is_absent_or_empty(),
            (Tree::Null, Tree::Null) => true,
            (Tree::Scalar(a), Tree::Scalar(b)) | (Tree::Json(a), Tree::Json(b)) => a == b,
            (Tree::RawText(a), Tree::RawText(b)) => a == b,
            (Tree::Quantity(a), Tree::Quantity(b)) => same_amount(a, b),
            (Tree::List(a), Tree::List(b)) => a == b,
            (Tree::Map(a), Tree::Map(b)) => a == b,
            // A field one struct leaves out is absent there.
            (Tree::Struct(a), Tree::Struct(b)) => {
                let absent = Tree::Absent;
                a.iter()
                    .all(|(name, field)| *field == *b.get(name).unwrap_or(&absent))
                    && b.iter()
                        .filter(|(name, _)| !a.contains_key(*name))
                        .all(|(_, field)| field.is_absent_or_empty())
            }
            _ => false,
        }
    }
}

/// Go's `Quantity.Cmp(b) == 0`, where an uninitialized quantity (kclient's empty text) is
/// zero. Texts that are not quantities are equal only when they are the same text.
fn same_amount(a: &Quantity, b: &Quantity) -> bool {
    if a == b {
        return true;
    }
    let zero = Quantity::from("0");
    let amount = |q: &Quantity| {
        if q.as_str().is_empty() {
            zero.clone()
        } else {
            q.clone()
        }
    };
    amount(a).cmp_amount(&amount(b)) == Some(Ordering::Equal)
}

/// A `Serialize` impl's own error; [`semantic_eq`] only needs to know that one happened.
#[derive(Debug)]
struct Failed;

impl fmt::Display for Failed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the value could not be serialized")
    }
}

impl std::error::Error for Failed {}

impl ser::Error for Failed {
    fn custom<M: fmt::Display>(_: M) -> Failed {
        Failed
    }
}

/// Serializes a value into a [`Tree`].
struct TreeSerializer;

fn scalar(value: impl Into<Value>) -> Result<Tree, Failed> {
    Ok(Tree::Scalar(value.into()))
}

/// `{variant: value}`, as serde_json writes an enum's variant with data.
fn variant(name: &str, value: Tree) -> Tree {
    Tree::Map(BTreeMap::from([(name.to_owned(), value)]))
}

impl ser::Serializer for TreeSerializer {
    type Ok = Tree;
    type Error = Failed;
    type SerializeSeq = SeqTree;
    type SerializeTuple = SeqTree;
    type SerializeTupleStruct = SeqTree;
    type SerializeTupleVariant = SeqTree;
    type SerializeMap = MapTree;
    type SerializeStruct = StructTree;
    type SerializeStructVariant = StructTree;

    fn serialize_bool(self, v: bool) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_i8(self, v: i8) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_i16(self, v: i16) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_i32(self, v: i32) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_i64(self, v: i64) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_u8(self, v: u8) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_u16(self, v: u16) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_u32(self, v: u32) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_u64(self, v: u64) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_f32(self, v: f32) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_f64(self, v: f64) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_char(self, v: char) -> Result<Tree, Failed> {
        scalar(v.to_string())
    }
    fn serialize_str(self, v: &str) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<Tree, Failed> {
        Ok(Tree::List(
            v.iter().map(|b| Tree::Scalar((*b).into())).collect(),
        ))
    }
    fn serialize_none(self) -> Result<Tree, Failed> {
        Ok(Tree::Absent)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Tree, Failed> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<Tree, Failed> {
        Ok(Tree::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Tree, Failed> {
        Ok(Tree::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
    ) -> Result<Tree, Failed> {
        scalar(v)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<Tree, Failed> {
        let tree = value.serialize(self)?;
        match tree {
            Tree::Scalar(Value::String(text)) if name == QUANTITY_NAME => {
                Ok(Tree::Quantity(Quantity::from(text)))
            }
            tree => Ok(tree),
        }
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        value: &T,
    ) -> Result<Tree, Failed> {
        Ok(variant(name, value.serialize(self)?))
    }
    fn serialize_seq(self, len: Option<usize>) -> Result<SeqTree, Failed> {
        Ok(SeqTree {
            items: Vec::with_capacity(len.unwrap_or(0)),
            variant: None,
        })
    }
    fn serialize_tuple(self, len: usize) -> Result<SeqTree, Failed> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<SeqTree, Failed> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        len: usize,
    ) -> Result<SeqTree, Failed> {
        Ok(SeqTree {
            items: Vec::with_capacity(len),
            variant: Some(name),
        })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<MapTree, Failed> {
        Ok(MapTree {
            entries: BTreeMap::new(),
            key: None,
        })
    }
    fn serialize_struct(self, name: &'static str, _: usize) -> Result<StructTree, Failed> {
        Ok(StructTree {
            fields: BTreeMap::new(),
            variant: None,
            raw: name == RAW_VALUE_NAME,
        })
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        name: &'static str,
        _: usize,
    ) -> Result<StructTree, Failed> {
        Ok(StructTree {
            fields: BTreeMap::new(),
            variant: Some(name),
            raw: false,
        })
    }
}

/// A list (or a tuple, or a tuple variant's data) being serialized.
struct SeqTree {
    items: Vec<Tree>,
    variant: Option<&'static str>,
}

impl SeqTree {
    fn push<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failed> {
        self.items.push(Tree::of(value)?);
        Ok(())
    }

    fn finish(self) -> Result<Tree, Failed> {
        let items = Tree::List(self.items);
        Ok(match self.variant {
            Some(name) => variant(name, items),
            None => items,
        })
    }
}

/// The four serde traits of a list-like value, each adding an element to a [`SeqTree`].
macro_rules! seq_tree {
    ($($serde_trait:ident :: $add:ident),*) => {$(
        impl ser::$serde_trait for SeqTree {
            type Ok = Tree;
            type Error = Failed;
            fn $add<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failed> {
                self.push(value)
            }
            fn end(self) -> Result<Tree, Failed> {
                self.finish()
            }
        }
    )*};
}

seq_tree!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

/// A map being serialized. Its keys must serialize as strings, as JSON's must.
struct MapTree {
    entries: BTreeMap<String, Tree>,
    key: Option<String>,
}

impl ser::SerializeMap for MapTree {
    type Ok = Tree;
    type Error = Failed;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Failed> {
        self.key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Failed> {
        let key = self.key.take().ok_or(Failed)?;
        self.entries.insert(key, Tree::of(value)?);
        Ok(())
    }
    fn end(self) -> Result<Tree, Failed> {
        Ok(Tree::Map(self.entries))
    }
}

/// A struct (or a struct variant's data) being serialized: its absent fields are left out, so
/// that `None` and a field skipped compare equal. serde_json's `RawValue` arrives as a struct
/// too.
struct StructTree {
    fields: BTreeMap<&'static str, Tree>,
    variant: Option<&'static str>,
    raw: bool,
}

impl StructTree {
    fn field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Failed> {
        let tree = Tree::of(value)?;
        let tree = match tree {
            // `RawValue`'s one field is its JSON text.
            Tree::Scalar(Value::String(text)) if self.raw => match serde_json::from_str(&text) {
                Ok(json) => Tree::Json(json),
                Err(_) => Tree::RawText(text),
            },
            tree => tree,
        };
        if !matches!(tree, Tree::Absent) {
            self.fields.insert(key, tree);
        }
        Ok(())
    }

    fn finish(mut self) -> Result<Tree, Failed> {
        if self.raw {
            return self.fields.remove(RAW_VALUE_NAME).ok_or(Failed);
        }
        let fields = Tree::Struct(self.fields);
        Ok(match self.variant {
            Some(name) => variant(name, fields),
            None => fields,
        })
    }
}

/// The two serde traits of a struct-like value, each adding a field to a [`StructTree`].
macro_rules! struct_tree {
    ($($serde_trait:ident),*) => {$(
        impl ser::$serde_trait for StructTree {
            type Ok = Tree;
            type Error = Failed;
            fn serialize_field<T: Serialize + ?Sized>(
                &mut self,
                key: &'static str,
                value: &T,
            ) -> Result<(), Failed> {
                self.field(key, value)
            }
            fn end(self) -> Result<Tree, Failed> {
                self.finish()
            }
        }
    )*};
}

struct_tree!(SerializeStruct, SerializeStructVariant);

/// Serializes a map key: a string, or a number or boolean written as its text (as serde_json
/// writes such keys); anything else fails.
struct KeySerializer;

macro_rules! text_key {
    ($($method:ident: $ty:ty),*) => {
        $(fn $method(self, v: $ty) -> Result<String, Failed> {
            Ok(v.to_string())
        })*
    };
}

impl ser::Serializer for KeySerializer {
    type Ok = String;
    type Error = Failed;
    type SerializeSeq = Impossible<String, Failed>;
    type SerializeTuple = Impossible<String, Failed>;
    type SerializeTupleStruct = Impossible<String, Failed>;
    type SerializeTupleVariant = Impossible<String, Failed>;
    type SerializeMap = Impossible<String, Failed>;
    type SerializeStruct = Impossible<String, Failed>;
    type SerializeStructVariant = Impossible<String, Failed>;

    text_key!(
        serialize_bool: bool, serialize_i8: i8, serialize_i16: i16, serialize_i32: i32,
        serialize_i64: i64, serialize_u8: u8, serialize_u16: u16, serialize_u32: u32,
        serialize_u64: u64, serialize_char: char, serialize_str: &str
    );

    fn serialize_f32(self, _: f32) -> Result<String, Failed> {
        Err(Failed)
    }
    fn serialize_f64(self, _: f64) -> Result<String, Failed> {
        Err(Failed)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, Failed> {
        Err(Failed)
    }
    fn serialize_none(self) -> Result<String, Failed> {
        Err(Failed)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, Failed> {
        Err(Failed)
    }
    fn serialize_unit(self) -> Result<String, Failed> {
        Err(Failed)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, Failed> {
        Err(Failed)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        v: &'static str,
    ) -> Result<String, Failed> {
        Ok(v.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<String, Failed> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Failed> {
        Err(Failed)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Failed> {
        Err(Failed)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Failed> {
        Err(Failed)
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Failed> {
        Err(Failed)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Failed> {
        Err(Failed)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Failed> {
        Err(Failed)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Failed> {
        Err(Failed)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Failed> {
        Err(Failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::v1::{ObjectMeta, OwnerReference};
    use crate::meta::{IStr, RawJson, StrMap};
    use serde_json::json;

    #[derive(Serialize, Default)]
    struct Resources {
        #[serde(skip_serializing_if = "Option::is_none")]
        limits: Option<BTreeMap<String, Quantity>>,
        requests: Option<BTreeMap<String, Quantity>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        claims: Option<Vec<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        security: Option<Security>,
        #[serde(skip_serializing_if = "Option::is_none")]
        raw: Option<RawJson>,
    }

    #[derive(Serialize, Default)]
    struct Security {
        #[serde(skip_serializing_if = "Option::is_none")]
        user: Option<i64>,
    }

    fn requests(pairs: &[(&str, &str)]) -> Resources {
        Resources {
            requests: Some(
                pairs
                    .iter()
                    .map(|(k, v)| (k.to_string(), Quantity::from(*v)))
                    .collect(),
            ),
            ..Resources::default()
        }
    }

    #[test]
    fn quantities_compare_by_amount() {
        let equal = [
            ("1000m", "1"),
            ("0.5", "500m"),
            ("1Gi", "1073741824"),
            ("1e3", "1k"),
            ("", "0"),
            ("0", "0m"),
            ("not a quantity", "not a quantity"),
        ];
        for (a, b) in equal {
            assert!(
                semantic_eq(&requests(&[("cpu", a)]), &requests(&[("cpu", b)])),
                "{a} = {b}"
            );
        }
        let different = [
            ("1001m", "1"),
            ("1Gi", "1G"),
            ("x", "y"),
            ("", "1"),
            ("1", "x"),
        ];
        for (a, b) in different {
            assert!(
                !semantic_eq(&requests(&[("cpu", a)]), &requests(&[("cpu", b)])),
                "{a} != {b}"
            );
        }
        // The keys still count.
        assert!(!semantic_eq(
            &requests(&[("cpu", "1")]),
            &requests(&[("memory", "1")])
        ));
    }

    #[test]
    fn strings_that_are_not_quantities_compare_by_text() {
        let labels = |v: &str| {
            let mut m = StrMap::default();
            m.insert("replicas", IStr::from(v));
            m
        };
        assert!(!semantic_eq(&labels("1000m"), &labels("1")));
        assert!(!semantic_eq(
            &json!({"cpu": "0.5"}),
            &json!({"cpu": "500m"})
        ));
        assert!(semantic_eq(&labels("1"), &labels("1")));
    }

    #[test]
    fn empty_lists_and_maps_equal_absent_ones_but_empty_structs_do_not() {
        let empty = Resources {
            limits: Some(BTreeMap::new()),
            requests: Some(BTreeMap::new()),
            claims: Some(Vec::new()),
            ..Resources::default()
        };
        // `requests: null` is written, `limits` and `claims` are left out.
        assert!(semantic_eq(&empty, &Resources::default()));
        let with_claim = Resources {
            claims: Some(vec!["gpu".into()]),
            ..Resources::default()
        };
        assert!(!semantic_eq(&with_claim, &Resources::default()));

        let zero_struct = Resources {
            security: Some(Security::default()),
            ..Resources::default()
        };
        assert!(!semantic_eq(&zero_struct, &Resources::default()));

        let mut meta = ObjectMeta {
            labels: Some(StrMap::default()),
            finalizers: Some(Vec::new().into()),
            owner_references: Some(Vec::<OwnerReference>::new().into()),
            ..ObjectMeta::default()
        };
        assert!(semantic_eq(&meta, &ObjectMeta::default()));
        meta.finalizers = Some(vec!["example.com/f".into()].into());
        assert!(!semantic_eq(&meta, &ObjectMeta::default()));
    }

    #[test]
    fn json_values_keep_their_kinds() {
        // Go compares an interface's dynamic type first: {} is not [] and neither is null.
        let kinds = [
            json!({"a": {}}),
            json!({"a": []}),
            json!({"a": null}),
            json!({}),
        ];
        for (i, a) in kinds.iter().enumerate() {
            for (j, b) in kinds.iter().enumerate() {
                assert_eq!(semantic_eq(a, b), i == j, "{a} vs {b}");
            }
        }
        // In a typed field, JSON's null is not an absent value either.
        #[derive(Serialize)]
        struct Config {
            #[serde(skip_serializing_if = "Option::is_none")]
            value: Option<Value>,
        }
        let null = Config {
            value: Some(Value::Null),
        };
        assert!(!semantic_eq(&null, &Config { value: None }));
        // A JSON object is a map, and an empty one stands for an absent one, as with a typed
        // map (what a `serde_json::Value` holds is told only as it serializes).
        let empty = Config {
            value: Some(json!({})),
        };
        assert!(semantic_eq(&empty, &Config { value: None }));
    }

    #[test]
    fn values_of_any_depth_compare_without_overflowing_the_stack() {
        // What an API server stores, and decode_json reads: 10,000 levels.
        let nested = |leaf: &str| {
            let text = format!(
                r#"{{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "deep"}}, "data": {}{}{}}}"#,
                "[".repeat(10_000),
                leaf,
                "]".repeat(10_000)
            );
            crate::decode_json::<crate::Unstructured>(text.as_bytes()).unwrap()
        };
        // On a thread with a small stack, as a runtime's workers have.
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                assert!(semantic_eq(&nested("1"), &nested("1")));
                assert!(!semantic_eq(&nested("1"), &nested("2")));
            })
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn raw_json_compares_as_parsed_json() {
        let raw = |text: &str| Resources {
            raw: Some(RawJson::from_string(text.to_owned()).unwrap()),
            ..Resources::default()
        };
        assert!(semantic_eq(
            &raw(r#"{"a": 1, "b": [2]}"#),
            &raw(r#"{"b":[2],"a":1}"#)
        ));
        assert!(!semantic_eq(&raw(r#"{"a": 1}"#), &raw(r#"{"a": 2}"#)));
        // No allowances inside: Go compares the bytes.
        assert!(!semantic_eq(&raw(r#"{"a": []}"#), &raw(r#"{}"#)));
        assert!(!semantic_eq(&raw("{}"), &Resources::default()));
        // Deeper than serde_json parses: compared as text.
        let deep = |leaf: &str| raw(&format!("{}{leaf}{}", "[".repeat(200), "]".repeat(200)));
        assert!(semantic_eq(&deep("1"), &deep("1")));
        assert!(!semantic_eq(&deep("1"), &deep("2")));
    }

    #[test]
    fn other_values_compare_as_their_json() {
        assert!(semantic_eq(
            &json!({"a": [1, "x", true]}),
            &json!({"a": [1, "x", true]})
        ));
        assert!(!semantic_eq(&json!({"a": [1, 2]}), &json!({"a": [2, 1]})));
        assert!(!semantic_eq(&json!(1), &json!("1")));
        assert!(!semantic_eq(&json!(1), &json!(1.5)));
        #[derive(Serialize)]
        enum Shape {
            Unit,
            Newtype(u8),
            Tuple(u8, u8),
            Struct { side: u8 },
        }
        let shapes = [
            Shape::Unit,
            Shape::Newtype(1),
            Shape::Tuple(1, 2),
            Shape::Struct { side: 1 },
        ];
        for (i, a) in shapes.iter().enumerate() {
            for (j, b) in shapes.iter().enumerate() {
                assert_eq!(semantic_eq(a, b), i == j, "{i} vs {j}");
            }
        }
        assert!(!semantic_eq(&Shape::Tuple(1, 2), &Shape::Tuple(1, 3)));
    }

    #[test]
    fn a_value_that_fails_to_serialize_equals_nothing() {
        let map = |k: Vec<u8>| std::collections::HashMap::from([(k, 1)]);
        assert!(!semantic_eq(&map(vec![1]), &map(vec![1])));
        // Number keys are text, as serde_json writes them.
        assert!(semantic_eq(
            &BTreeMap::from([(1, "a")]),
            &BTreeMap::from([(1, "a")])
        ));
    }

    #[test]
    fn quantity_json_is_still_its_text() {
        let q = Quantity::from("0.5");
        assert_eq!(serde_json::to_string(&q).unwrap(), r#""0.5""#);
        assert_eq!(serde_json::to_value(&q).unwrap(), json!("0.5"));
        assert_eq!(
            serde_yaml_ng::to_string(&q).unwrap(),
            serde_yaml_ng::to_string("0.5").unwrap()
        );
    }
}
