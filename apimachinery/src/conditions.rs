//! Status conditions: apimachinery's `meta.SetStatusCondition` and its companions, for the
//! `status.conditions` lists of [`Condition`]s that custom resources and many built-in kinds
//! carry.
//!
//! A condition list holds at most one condition per `type`. [`set_status_condition`] adds or
//! updates the condition of a type and moves its `lastTransitionTime` only when its `status`
//! changes, so a controller can set its conditions on every reconcile and write the status
//! back only when [`set_status_condition`] says something changed.
//!
//! The functions take a `Vec<Condition>` (a custom resource's own status struct) or a
//! [`List<Condition>`] (the generated built-in types); an absent list
//! (`Option<List<Condition>>`) is made with `get_or_insert_default()`.
//!
//! ```
//! use kclient_apimachinery::meta::v1::Condition;
//! use kclient_apimachinery::{
//!     CONDITION_FALSE, CONDITION_TRUE, find_status_condition, is_status_condition_true,
//!     set_status_condition,
//! };
//!
//! let mut conditions: Vec<Condition> = Vec::new();
//! let ready = |status: &str, reason: &str| Condition {
//!     type_: "Ready".into(),
//!     status: status.into(),
//!     reason: reason.into(),
//!     ..Condition::default()
//! };
//! assert!(set_status_condition(&mut conditions, ready(CONDITION_FALSE, "Provisioning")));
//! let first = find_status_condition(&conditions, "Ready").unwrap().last_transition_time;
//! assert!(!first.is_zero());
//!
//! // The same again changes nothing: no status update to write.
//! assert!(!set_status_condition(&mut conditions, ready(CONDITION_FALSE, "Provisioning")));
//!
//! assert!(set_status_condition(&mut conditions, ready(CONDITION_TRUE, "Provisioned")));
//! assert!(is_status_condition_true(&conditions, "Ready"));
//! assert_eq!(conditions.len(), 1);
//! ```

use std::ops::DerefMut;

use crate::meta::List;
use crate::meta::Time;
use crate::meta::v1::Condition;

/// A condition's `status` when it holds (Go's `metav1.ConditionTrue`).
pub const CONDITION_TRUE: &str = "True";
/// A condition's `status` when it does not hold (`metav1.ConditionFalse`).
pub const CONDITION_FALSE: &str = "False";
/// A condition's `status` when it cannot be told whether it holds (`metav1.ConditionUnknown`).
pub const CONDITION_UNKNOWN: &str = "Unknown";

mod sealed {
    pub trait Sealed {}
    impl Sealed for Vec<super::Condition> {}
    impl Sealed for super::List<super::Condition> {}
}

/// A growable list of conditions: `Vec<Condition>` or [`List<Condition>`]. Sealed.
pub trait ConditionList: DerefMut<Target = [Condition]> + sealed::Sealed {
    /// Appends a condition.
    fn push_condition(&mut self, condition: Condition);
    /// Keeps only the conditions `keep` returns `true` for, in their order.
    fn retain_conditions(&mut self, keep: impl FnMut(&Condition) -> bool);
}

impl ConditionList for Vec<Condition> {
    fn push_condition(&mut self, condition: Condition) {
        self.push(condition);
    }

    fn retain_conditions(&mut self, keep: impl FnMut(&Condition) -> bool) {
        self.retain(keep);
    }
}

impl ConditionList for List<Condition> {
    fn push_condition(&mut self, condition: Condition) {
        self.push(condition);
    }

    fn retain_conditions(&mut self, keep: impl FnMut(&Condition) -> bool) {
        self.retain(keep);
    }
}

/// Sets the condition of `new`'s type to `new`, and returns whether that changed the list
/// (apimachinery's `meta.SetStatusCondition`).
///
/// - No condition of that type yet: `new` is appended, with `lastTransitionTime` set to now if
///   it is unset.
/// - One exists: its `status`, `reason`, `message` and `observedGeneration` become `new`'s.
///   Its `lastTransitionTime` moves only if the status changed: to `new`'s if set, else to
///   now. A `new` with the same status keeps the existing transition time, whatever its own.
pub fn set_status_condition(conditions: &mut impl ConditionList, mut new: Condition) -> bool {
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        if new.last_transition_time.is_zero() {
            new.last_transition_time = Time::now();
        }
        conditions.push_condition(new);
        return true;
    };
    let mut changed = false;
    if existing.status != new.status {
        existing.status = new.status;
        existing.last_transition_time = if new.last_transition_time.is_zero() {
            Time::now()
        } else {
            new.last_transition_time
        };
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation != new.observed_generation {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// Removes the conditions of type `type_`, and returns whether there was one
/// (`meta.RemoveStatusCondition`).
pub fn remove_status_condition(conditions: &mut impl ConditionList, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain_conditions(|c| c.type_ != type_);
    conditions.len() != before
}

/// The condition of type `type_`, if any (`meta.FindStatusCondition`).
pub fn find_status_condition<'a>(
    conditions: &'a [Condition],
    type_: &str,
) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// The condition of type `type_`, if any, to change in place.
pub fn find_status_condition_mut<'a>(
    conditions: &'a mut [Condition],
    type_: &str,
) -> Option<&'a mut Condition> {
    conditions.iter_mut().find(|c| c.type_ == type_)
}

/// Whether the condition of type `type_` is present with status `True`
/// (`meta.IsStatusConditionTrue`).
pub fn is_status_condition_true(conditions: &[Condition], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, CONDITION_TRUE)
}

/// Whether the condition of type `type_` is present with status `False`
/// (`meta.IsStatusConditionFalse`). An absent condition is neither true nor false.
pub fn is_status_condition_false(conditions: &[Condition], type_: &str) -> bool {
    is_status_condition_present_and_equal(conditions, type_, CONDITION_FALSE)
}

/// Whether the condition of type `type_` is present with status `status`
/// (`meta.IsStatusConditionPresentAndEqual`).
pub fn is_status_condition_present_and_equal(
    conditions: &[Condition],
    type_: &str,
    status: &str,
) -> bool {
    find_status_condition(conditions, type_).is_some_and(|c| c.status == status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn condition(type_: &str, status: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            ..Condition::default()
        }
    }

    #[test]
    fn a_condition_is_eq_so_that_statuses_holding_conditions_can_derive_it() {
        fn eq<T: Eq>() {}
        eq::<Condition>();
        eq::<Vec<Condition>>();
        eq::<List<Condition>>();
        assert_eq!(
            condition("Ready", CONDITION_TRUE),
            condition("Ready", CONDITION_TRUE)
        );
    }

    #[test]
    fn a_new_type_is_appended_with_the_time_now_unless_given() {
        let mut conditions = Vec::new();
        let before = Time::now();
        assert!(set_status_condition(
            &mut conditions,
            condition("Ready", CONDITION_TRUE)
        ));
        let set = conditions[0].last_transition_time;
        assert!(set >= before && set <= Time::now(), "{set:?}");

        let given = Time::from_unix_seconds(1_000);
        let mut other = condition("Degraded", CONDITION_FALSE);
        other.last_transition_time = given;
        assert!(set_status_condition(&mut conditions, other));
        assert_eq!(conditions.len(), 2);
        assert_eq!(conditions[1].last_transition_time, given);
    }

    #[test]
    fn the_transition_time_moves_only_when_the_status_changes() {
        let old = Time::from_unix_seconds(1_000);
        let mut existing = condition("Ready", CONDITION_FALSE);
        existing.last_transition_time = old;
        existing.reason = "Waiting".into();
        let mut conditions = vec![existing];

        // A new reason and message and generation, same status: changed, time kept even if
        // the new condition carries another.
        let mut same_status = condition("Ready", CONDITION_FALSE);
        same_status.reason = "StillWaiting".into();
        same_status.message = "for the volume".into();
        same_status.observed_generation = Some(3);
        same_status.last_transition_time = Time::from_unix_seconds(2_000);
        assert!(set_status_condition(&mut conditions, same_status));
        assert_eq!(conditions[0].last_transition_time, old);
        assert_eq!(conditions[0].reason, "StillWaiting");
        assert_eq!(conditions[0].message, "for the volume");
        assert_eq!(conditions[0].observed_generation, Some(3));

        // A new status with a time given: that time.
        let mut flipped = condition("Ready", CONDITION_TRUE);
        flipped.reason = "StillWaiting".into();
        flipped.message = "for the volume".into();
        flipped.observed_generation = Some(3);
        flipped.last_transition_time = Time::from_unix_seconds(3_000);
        assert!(set_status_condition(&mut conditions, flipped.clone()));
        assert_eq!(
            conditions[0].last_transition_time,
            Time::from_unix_seconds(3_000)
        );

        // The same condition again: nothing changed.
        assert!(!set_status_condition(&mut conditions, flipped.clone()));

        // A new status without a time: now.
        let mut back = flipped;
        back.status = CONDITION_UNKNOWN.into();
        back.last_transition_time = Time::ZERO;
        let before = Time::now();
        assert!(set_status_condition(&mut conditions, back));
        assert!(conditions[0].last_transition_time >= before);
        assert_eq!(conditions.len(), 1);
    }

    #[test]
    fn an_observed_generation_removed_is_a_change() {
        let mut existing = condition("Ready", CONDITION_TRUE);
        existing.observed_generation = Some(2);
        let mut conditions = vec![existing];
        assert!(set_status_condition(
            &mut conditions,
            condition("Ready", CONDITION_TRUE)
        ));
        assert_eq!(conditions[0].observed_generation, None);
    }

    #[test]
    fn remove_and_the_predicates() {
        let mut conditions: List<Condition> = List::from(vec![
            condition("Ready", CONDITION_TRUE),
            condition("Degraded", CONDITION_FALSE),
            condition("Progressing", CONDITION_UNKNOWN),
        ]);
        assert!(is_status_condition_true(&conditions, "Ready"));
        assert!(!is_status_condition_false(&conditions, "Ready"));
        assert!(is_status_condition_false(&conditions, "Degraded"));
        assert!(!is_status_condition_true(&conditions, "Progressing"));
        assert!(!is_status_condition_false(&conditions, "Progressing"));
        assert!(is_status_condition_present_and_equal(
            &conditions,
            "Progressing",
            CONDITION_UNKNOWN
        ));
        assert!(!is_status_condition_true(&conditions, "Missing"));
        assert!(!is_status_condition_false(&conditions, "Missing"));

        find_status_condition_mut(&mut conditions, "Degraded")
            .unwrap()
            .message = "disk".into();
        assert_eq!(
            find_status_condition(&conditions, "Degraded")
                .unwrap()
                .message,
            "disk"
        );

        assert!(remove_status_condition(&mut conditions, "Degraded"));
        assert!(!remove_status_condition(&mut conditions, "Degraded"));
        let types: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["Ready", "Progressing"]);

        assert!(set_status_condition(
            &mut conditions,
            condition("Degraded", CONDITION_TRUE)
        ));
        assert_eq!(conditions.len(), 3);
        assert!(find_status_condition(&conditions, "Missing").is_none());
    }
}
