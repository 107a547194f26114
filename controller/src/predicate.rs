//! [`Predicate`]: which informer events of a source enqueue anything (controller-runtime's
//! `predicate` package).
//!
//! A source's predicates must all pass for an event to enqueue its keys. Each predicate has a
//! test for adds, one for updates (old and new object) and one for deletes; a test it does not
//! set passes. The ones in this table look at updates only, so adds and deletes always pass them:
//!
//! | predicate                                      | an update passes when                        |
//! |------------------------------------------------|----------------------------------------------|
//! | [`generation_changed`](Predicate::generation_changed) | `metadata.generation` changed (a spec change; status and metadata writes do not bump it) |
//! | [`labels_changed`](Predicate::labels_changed)  | the labels changed                           |
//! | [`annotations_changed`](Predicate::annotations_changed) | the annotations changed             |
//! | [`resource_version_changed`](Predicate::resource_version_changed) | the resourceVersion changed: skips periodic resyncs and unchanged relists |
//!
//! Labels and annotations are compared as controller-runtime compares them (`maps.Equal`): an
//! object without labels and one with an empty label map have the same labels.
//!
//! [`Predicate::new`] tests the object of every event (the new one for updates), and
//! [`Predicate::label_selector`] its labels; [`Predicate::on_update`] tests updates only.
//!
//! An [`EventFilter`], `Predicate<dyn Object>`, tests objects of any type with the same
//! constructors and combinators; [`ControllerBuilder::with_event_filter`](crate::ControllerBuilder::with_event_filter)
//! applies one to the sources of a controller (controller-runtime's `WithEventFilter`; see
//! there for the sources it leaves out).
//!
//! Predicates combine as controller-runtime's `And`, `Or` and `Not` do, event kind by event
//! kind, a test a predicate leaves unset counting as one that passes everything:
//! [`and`](Predicate::and) passes an event when both pass it, [`or`](Predicate::or) when either
//! does, and `!p` ([`Not`](std::ops::Not)) when `p` does not. So
//! `!Predicate::generation_changed()` passes the updates that keep the generation and *no* add
//! or delete, since `generation_changed` passes them all. A delete whose final state is
//! unknown (a tombstone without an object) passes every predicate, combined or not: there is no
//! object to test, and a lost delete is worse than a spurious one.
//!
//! ```
//! use kclient_api::core::v1::ConfigMap;
//! use kclient_apimachinery::Object;
//! use kclient_controller::Predicate;
//!
//! // Spec changes, or label changes.
//! let changed: Predicate<ConfigMap> =
//!     Predicate::generation_changed().or(Predicate::labels_changed());
//! // ... of objects not paused.
//! let paused = Predicate::new(|cm: &ConfigMap| cm.annotations().contains_key("example.com/paused"));
//! let p = changed.and(!paused);
//!
//! let cm = |json| serde_json::from_value::<ConfigMap>(json).unwrap();
//! let old = cm(serde_json::json!({"metadata": {"name": "a"}}));
//! let labelled = cm(serde_json::json!({"metadata": {"name": "a", "labels": {"app": "web"}}}));
//! let paused = cm(serde_json::json!({"metadata": {"name": "a", "labels": {"app": "web"},
//!     "annotations": {"example.com/paused": "true"}}}));
//! assert!(p.update(&old, &labelled));
//! assert!(!p.update(&old, &paused));
//! assert!(p.add(&old) && !p.add(&paused));
//! ```

use std::fmt;
use std::sync::Arc;

use kclient_apimachinery::{Object, Selector, StringMap};

type ObjectTest<K> = Arc<dyn Fn(&K) -> bool + Send + Sync>;
type UpdateTest<K> = Arc<dyn Fn(&K, &K) -> bool + Send + Sync>;

/// A predicate on objects of any type, for [`with_event_filter`](crate::ControllerBuilder::with_event_filter):
/// `Predicate<dyn Object>`, built with the same constructors (`EventFilter::generation_changed()`).
pub type EventFilter = Predicate<dyn Object>;

/// A filter on one source's events (or, as an [`EventFilter`], on a controller's sources').
pub struct Predicate<K: ?Sized> {
    add: Option<ObjectTest<K>>,
    update: Option<UpdateTest<K>>,
    delete: Option<ObjectTest<K>>,
}

impl<K: ?Sized> Clone for Predicate<K> {
    fn clone(&self) -> Self {
        Predicate {
            add: self.add.clone(),
            update: self.update.clone(),
            delete: self.delete.clone(),
        }
    }
}

impl<K: ?Sized> fmt::Debug for Predicate<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Predicate")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K: Object + ?Sized> Predicate<K> {
    /// Passes the events whose object satisfies `test`: the added object, the new object of
    /// an update, the deleted object (a delete whose final state is unknown always passes).
    pub fn new(test: impl Fn(&K) -> bool + Send + Sync + 'static) -> Self {
        let test: ObjectTest<K> = Arc::new(test);
        let on_new = Arc::clone(&test);
        Predicate {
            add: Some(Arc::clone(&test)),
            update: Some(Arc::new(move |_old: &K, new: &K| on_new(new))),
            delete: Some(test),
        }
    }

    /// Passes every add and delete, and the updates for which `test(old, new)` holds.
    pub fn on_update(test: impl Fn(&K, &K) -> bool + Send + Sync + 'static) -> Self {
        Predicate {
            add: None,
            update: Some(Arc::new(test)),
            delete: None,
        }
    }

    /// Passes the events whose object has labels `selector` matches (controller-runtime's
    /// `LabelSelectorPredicate`), as [`Predicate::new`] tests them: the added object, the new
    /// object of an update, the deleted object. [`Selector::parse`] reads `app=web,!paused`;
    /// [`Selector::from_label_selector`] takes a `matchLabels`/`matchExpressions` struct, an
    /// empty one matching every object.
    pub fn label_selector(selector: Selector) -> Self {
        Predicate::new(move |obj: &K| selector.matches(obj.labels()))
    }

    /// Passes updates that change `metadata.generation` (controller-runtime's
    /// `GenerationChangedPredicate`). Resources without a generation (ConfigMaps, for
    /// example) keep it at 0, so none of their updates pass.
    pub fn generation_changed() -> Self {
        Predicate::on_update(|old: &K, new: &K| old.generation() != new.generation())
    }

    /// Passes updates that change the labels (`LabelChangedPredicate`).
    pub fn labels_changed() -> Self {
        Predicate::on_update(|old: &K, new: &K| !same_map(old.labels(), new.labels()))
    }

    /// Passes updates that change the annotations (`AnnotationChangedPredicate`).
    pub fn annotations_changed() -> Self {
        Predicate::on_update(|old: &K, new: &K| !same_map(old.annotations(), new.annotations()))
    }

    /// Passes updates that change the resourceVersion (`ResourceVersionChangedPredicate`):
    /// drops the informer's periodic resyncs and the re-deliveries of unchanged objects.
    pub fn resource_version_changed() -> Self {
        Predicate::on_update(|old: &K, new: &K| old.resource_version() != new.resource_version())
    }

    /// Passes an event when `self` or `other` passes it.
    pub fn or(self, other: Predicate<K>) -> Self {
        self.join(other, true)
    }

    /// Passes an event when both `self` and `other` pass it (controller-runtime's `And`).
    pub fn and(self, other: Predicate<K>) -> Self {
        self.join(other, false)
    }

    /// `self` or (`either`) and (not `either`) `other`, test by test.
    fn join(self, other: Predicate<K>, either: bool) -> Self {
        fn pair<T: ?Sized>(
            a: Option<Arc<T>>,
            b: Option<Arc<T>>,
            either: bool,
            join: impl FnOnce(Arc<T>, Arc<T>) -> Arc<T>,
        ) -> Option<Arc<T>> {
            match (a, b) {
                (Some(a), Some(b)) => Some(join(a, b)),
                // An unset test passes everything: so does "either" with it, and "both" is
                // the other test.
                _ if either => None,
                (a, b) => a.or(b),
            }
        }
        let join = move |a: bool, b: &dyn Fn() -> bool| if either { a || b() } else { a && b() };
        Predicate {
            add: pair(self.add, other.add, either, |a, b| {
                Arc::new(move |o: &K| join(a(o), &|| b(o)))
            }),
            update: pair(self.update, other.update, either, |a, b| {
                Arc::new(move |o: &K, n: &K| join(a(o, n), &|| b(o, n)))
            }),
            delete: pair(self.delete, other.delete, either, |a, b| {
                Arc::new(move |o: &K| join(a(o), &|| b(o)))
            }),
        }
    }

    /// Whether an add of `obj` passes.
    pub fn add(&self, obj: &K) -> bool {
        self.add.as_ref().is_none_or(|t| t(obj))
    }

    /// Whether an update from `old` to `new` passes.
    pub fn update(&self, old: &K, new: &K) -> bool {
        self.update.as_ref().is_none_or(|t| t(old, new))
    }

    /// Whether a delete of `obj` passes; `None` is a delete whose final state is unknown,
    /// which always passes.
    pub fn delete(&self, obj: Option<&K>) -> bool {
        match (obj, &self.delete) {
            (Some(obj), Some(t)) => t(obj),
            _ => true,
        }
    }
}

/// `!p` passes an event when `p` does not (controller-runtime's `Not`): an add, update or delete
/// that `p` leaves untested (passes) is refused. A delete whose final state is unknown still
/// passes.
impl<K: Object + ?Sized> std::ops::Not for Predicate<K> {
    type Output = Predicate<K>;

    fn not(self) -> Predicate<K> {
        fn negate_object<K: Object + ?Sized>(test: Option<ObjectTest<K>>) -> Option<ObjectTest<K>> {
            Some(match test {
                Some(test) => Arc::new(move |o: &K| !test(o)),
                None => Arc::new(|_: &K| false),
            })
        }
        let update: UpdateTest<K> = match self.update {
            Some(test) => Arc::new(move |o: &K, n: &K| !test(o, n)),
            None => Arc::new(|_: &K, _: &K| false),
        };
        Predicate {
            add: negate_object(self.add),
            update: Some(update),
            delete: negate_object(self.delete),
        }
    }
}

/// An [`EventFilter`] as one source's predicate, to use a filter written for every type on a
/// single source (`.owns_with::<Secret>(vec![filter.into()])`).
impl<K: Object> From<EventFilter> for Predicate<K> {
    fn from(filter: EventFilter) -> Predicate<K> {
        Predicate {
            add: filter
                .add
                .map(|t| -> ObjectTest<K> { Arc::new(move |o: &K| t(o as &dyn Object)) }),
            update: filter.update.map(|t| -> UpdateTest<K> {
                Arc::new(move |o: &K, n: &K| t(o as &dyn Object, n as &dyn Object))
            }),
            delete: filter
                .delete
                .map(|t| -> ObjectTest<K> { Arc::new(move |o: &K| t(o as &dyn Object)) }),
        }
    }
}

/// Whether two string maps hold the same entries.
fn same_map(a: &dyn StringMap, b: &dyn StringMap) -> bool {
    a.len() == b.len() && a.entries().all(|(k, v)| b.get(k) == Some(v))
}

#[cfg(test)]
mod tests {
    use kclient_apimachinery::meta::PartialObjectMetadata;
    use serde_json::json;

    use super::*;

    #[test]
    fn an_event_filter_becomes_a_typed_predicate_that_tests_the_same() {
        let filter = EventFilter::generation_changed().and(!EventFilter::new(|o: &dyn Object| {
            o.name().starts_with("skip")
        }));
        let typed: Predicate<PartialObjectMetadata> = filter.into();
        let at = |name: &str, generation: i64| obj(json!({"name": name, "generation": generation}));
        assert!(typed.add(&at("a", 1)));
        assert!(!typed.add(&at("skip-me", 1)));
        assert!(typed.update(&at("a", 1), &at("a", 2)));
        assert!(!typed.update(&at("a", 1), &at("a", 1)));
        assert!(!typed.update(&at("skip-me", 1), &at("skip-me", 2)));
        assert!(typed.delete(Some(&at("a", 1))));
        assert!(!typed.delete(Some(&at("skip-me", 1))));
        assert!(typed.delete(None));
    }

    fn obj(metadata: serde_json::Value) -> PartialObjectMetadata {
        serde_json::from_value(json!({ "metadata": metadata })).unwrap()
    }

    #[test]
    fn built_in_predicates_judge_updates_and_pass_adds_and_deletes() {
        let base = obj(json!({"name": "a", "generation": 1, "resourceVersion": "5",
            "labels": {"app": "web"}, "annotations": {"note": "x"}}));
        let same = base.clone();
        let bumped = obj(json!({"name": "a", "generation": 2, "resourceVersion": "6",
            "labels": {"app": "web"}, "annotations": {"note": "x"}}));
        let relabelled = obj(json!({"name": "a", "generation": 1, "resourceVersion": "7",
            "labels": {"app": "db"}, "annotations": {"note": "x"}}));
        let annotated = obj(json!({"name": "a", "generation": 1, "resourceVersion": "8",
            "labels": {"app": "web"}, "annotations": {"note": "y"}}));

        let generation = Predicate::generation_changed();
        assert!(generation.update(&base, &bumped));
        assert!(!generation.update(&base, &relabelled));
        assert!(generation.add(&base) && generation.delete(Some(&base)) && generation.delete(None));

        let labels = Predicate::labels_changed();
        assert!(labels.update(&base, &relabelled));
        assert!(!labels.update(&base, &bumped));

        let annotations = Predicate::annotations_changed();
        assert!(annotations.update(&base, &annotated));
        assert!(!annotations.update(&base, &relabelled));

        let resync = Predicate::resource_version_changed();
        assert!(!resync.update(&base, &same));
        assert!(resync.update(&base, &annotated));

        let either = Predicate::generation_changed().or(Predicate::labels_changed());
        assert!(either.update(&base, &bumped) && either.update(&base, &relabelled));
        assert!(!either.update(&base, &annotated));
    }

    #[test]
    fn custom_predicate_tests_every_event_object() {
        let web = Predicate::new(|o: &PartialObjectMetadata| o.labels().get("app") == Some("web"));
        let a = obj(json!({"name": "a", "labels": {"app": "web"}}));
        let b = obj(json!({"name": "b", "labels": {"app": "db"}}));
        assert!(web.add(&a) && !web.add(&b));
        assert!(web.update(&b, &a) && !web.update(&a, &b));
        assert!(web.delete(Some(&a)) && !web.delete(Some(&b)) && web.delete(None));
        // `or` with a predicate that leaves adds unset passes every add.
        assert!(web.clone().or(Predicate::generation_changed()).add(&b));
    }

    #[test]
    fn and_passes_what_both_pass_an_unset_test_passing_everything() {
        let base = obj(json!({"name": "a", "generation": 1, "labels": {"app": "web"}}));
        let bumped = obj(json!({"name": "a", "generation": 2, "labels": {"app": "web"}}));
        let relabelled = obj(json!({"name": "a", "generation": 1, "labels": {"app": "db"}}));
        let both_changed = obj(json!({"name": "a", "generation": 2, "labels": {"app": "db"}}));

        let both = Predicate::generation_changed().and(Predicate::labels_changed());
        assert!(both.update(&base, &both_changed));
        assert!(!both.update(&base, &bumped) && !both.update(&base, &relabelled));
        // Neither tests adds or deletes: both pass them.
        assert!(both.add(&base) && both.delete(Some(&base)));

        // One side tests every event, the other only updates: adds and deletes are the first
        // one's to judge.
        let web = Predicate::new(|o: &PartialObjectMetadata| o.labels().get("app") == Some("web"));
        let web_and_bumped = web.clone().and(Predicate::generation_changed());
        assert!(web_and_bumped.add(&base) && !web_and_bumped.add(&relabelled));
        assert!(web_and_bumped.delete(Some(&bumped)) && !web_and_bumped.delete(Some(&relabelled)));
        assert!(web_and_bumped.update(&base, &bumped));
        assert!(
            !web_and_bumped.update(&base, &both_changed),
            "the new object is not web"
        );
        assert!(
            !web_and_bumped.update(&base, &base),
            "the generation did not change"
        );
        // A delete without a final state passes whatever the predicates say.
        let nothing = web.clone().and(!web);
        assert!(!nothing.add(&base) && !nothing.add(&relabelled));
        assert!(nothing.delete(None));
    }

    #[test]
    fn not_inverts_every_event_kind_an_unset_test_becoming_one_that_refuses() {
        let base = obj(json!({"name": "a", "generation": 1, "labels": {"app": "web"}}));
        let bumped = obj(json!({"name": "a", "generation": 2, "labels": {"app": "web"}}));
        let db = obj(json!({"name": "a", "generation": 1, "labels": {"app": "db"}}));

        // controller-runtime's Not(GenerationChangedPredicate{}): the updates that keep the
        // generation, and no add or delete (the predicate passed them all).
        let same_generation = !Predicate::<PartialObjectMetadata>::generation_changed();
        assert!(same_generation.update(&base, &db));
        assert!(!same_generation.update(&base, &bumped));
        assert!(!same_generation.add(&base) && !same_generation.delete(Some(&base)));
        assert!(same_generation.delete(None));

        let not_web =
            !Predicate::new(|o: &PartialObjectMetadata| o.labels().get("app") == Some("web"));
        assert!(not_web.add(&db) && !not_web.add(&base));
        assert!(not_web.update(&base, &db) && !not_web.update(&db, &base));
        assert!(not_web.delete(Some(&db)) && !not_web.delete(Some(&base)));

        // Twice is the original again, adds and deletes included.
        let twice = !!Predicate::<PartialObjectMetadata>::generation_changed();
        assert!(twice.add(&base) && twice.delete(Some(&base)));
        assert!(twice.update(&base, &bumped) && !twice.update(&base, &db));
    }

    #[test]
    fn missing_and_empty_label_and_annotation_maps_are_the_same() {
        // controller-runtime compares them with maps.Equal, for which a nil map equals an
        // empty one (since v0.18; reflect.DeepEqual before did not).
        let bare = obj(json!({"name": "a"}));
        let empty = obj(json!({"name": "a", "labels": {}, "annotations": {}}));
        for (old, new) in [(&bare, &empty), (&empty, &bare)] {
            assert!(!Predicate::labels_changed().update(old, new));
            assert!(!Predicate::annotations_changed().update(old, new));
        }
        let labelled = obj(json!({"name": "a", "labels": {"app": ""}}));
        assert!(Predicate::labels_changed().update(&empty, &labelled));
        assert!(Predicate::labels_changed().update(&labelled, &bare));
    }

    #[test]
    fn label_selector_tests_the_labels_of_every_event_object() {
        let selector = Selector::parse("app in (web,api),!paused").unwrap();
        let p = Predicate::label_selector(selector);
        let web = obj(json!({"name": "a", "labels": {"app": "web"}}));
        let paused = obj(json!({"name": "a", "labels": {"app": "web", "paused": ""}}));
        let bare = obj(json!({"name": "a"}));
        assert!(p.add(&web) && !p.add(&paused) && !p.add(&bare));
        assert!(p.update(&bare, &web) && !p.update(&web, &paused));
        assert!(p.delete(Some(&web)) && !p.delete(Some(&bare)) && p.delete(None));

        let everything = Selector::from_label_selector(Some(&Default::default())).unwrap();
        assert!(Predicate::label_selector(everything).add(&bare));
    }
}
