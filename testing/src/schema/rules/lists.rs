//! Kubernetes' list functions (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf`), cel-go's `first` and `last`, and its sets extension
//! (`sets.contains`, `sets.equivalent`, `sets.intersects`), as kube-apiserver declares
//! them for CRD rules.
//!
//! The server type-checks a rule when the CRD is written, so these see only lists of one
//! comparable, summable or equatable type there; the fake does not type-check, and a list
//! of mixed types fails here as it would fail in cel-go at run time.

use std::cmp::Ordering;

use cel::common::types::{CelOptional, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

use super::environment::{boolean, fail, int, no_overload, take};

/// Registers the functions on `env`.
pub(super) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload(
        "isSorted",
        "k8s.list.isSorted()",
        LIST_TYPE,
        vec![],
        is_sorted,
    )?;
    env.add_member_overload("sum", "k8s.list.sum()", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "k8s.list.min()", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "k8s.list.max()", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "k8s.list.indexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "k8s.list.lastIndexOf(dyn)",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    env.add_member_overload("first", "k8s.list.first()", LIST_TYPE, vec![], first)?;
    env.add_member_overload("last", "k8s.list.last()", LIST_TYPE, vec![], last)?;
    let both = || vec![LIST_TYPE, LIST_TYPE];
    env.add_overload("sets.contains", "k8s.sets.contains", both(), contains)?;
    env.add_overload("sets.equivalent", "k8s.sets.equivalent", both(), equivalent)?;
    env.add_overload("sets.intersects", "k8s.sets.intersects", both(), intersects)?;
    Ok(())
}

/// The elements of a list argument.
fn items<'b, 'v>(list: &'b (dyn Val + 'v)) -> Result<Vec<&'b (dyn Val + 'v)>, ExecutionError> {
    let iterable = list.as_iterable().ok_or_else(|| no_overload(list))?;
    let mut iter = iterable.iter();
    let mut out = Vec::new();
    while let Some(item) = iter.next() {
        out.push(item);
    }
    Ok(out)
}

/// How `a` orders against `b`, as cel-go's `Compare`: an error for values of types it
/// does not order.
fn compare(a: &dyn Val, b: &dyn Val) -> Result<Ordering, ExecutionError> {
    match a.as_comparer() {
        Some(comparer) => comparer.compare(b),
        None => Err(no_overload(a)),
    }
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list] = take(args)?;
    let items = items(list.as_ref())?;
    for pair in items.windows(2) {
        if compare(pair[0], pair[1])? == Ordering::Greater {
            return Ok(boolean(false));
        }
    }
    Ok(boolean(true))
}

/// The sum of the elements; `0` for an empty list (the server types an empty list by its
/// schema, and gives `0.0` for a list of numbers, which equals `0`).
fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list] = take(args)?;
    let mut acc: Option<Box<dyn Val + 'v>> = None;
    for item in items(list.as_ref())? {
        acc = Some(match acc {
            None => item.clone_as_boxed(),
            Some(total) => {
                let adder = total
                    .as_adder()
                    .ok_or_else(|| no_overload(total.as_ref()))?;
                adder.add(item)?.into_owned()
            }
        });
    }
    Ok(acc.map_or_else(|| int(0), CowVal::Owned))
}

/// The element that `keep` prefers over all others (the first of equals), or the
/// server's error for an empty list.
fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    name: &str,
    keep: Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list] = take(args)?;
    let mut best: Option<&dyn Val> = None;
    for item in items(list.as_ref())? {
        best = Some(match best {
            Some(current) if compare(item, current)? != keep => current,
            _ => item,
        });
    }
    best.map(|b| CowVal::Owned(b.clone_as_boxed()))
        .ok_or_else(|| fail(format!("{name} called on empty list")))
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", Ordering::Less)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", Ordering::Greater)
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list, wanted] = take(args)?;
    let items = items(list.as_ref())?;
    let at = items.iter().position(|item| item.equals(wanted.as_ref()));
    Ok(int(at.map_or(-1, |i| i as i64)))
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list, wanted] = take(args)?;
    let items = items(list.as_ref())?;
    let at = items.iter().rposition(|item| item.equals(wanted.as_ref()));
    Ok(int(at.map_or(-1, |i| i as i64)))
}

fn first<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list] = take(args)?;
    let items = items(list.as_ref())?;
    let item = items.first().map(|i| i.clone_as_boxed());
    Ok(CowVal::owned(CelOptional::from(item)))
}

fn last<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [list] = take(args)?;
    let items = items(list.as_ref())?;
    let item = items.last().map(|i| i.clone_as_boxed());
    Ok(CowVal::owned(CelOptional::from(item)))
}

/// Whether every element of the second list is in the first.
fn contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [a, b] = take(args)?;
    let (a, b) = (items(a.as_ref())?, items(b.as_ref())?);
    Ok(boolean(b.iter().all(|x| a.iter().any(|y| y.equals(*x)))))
}

/// Whether each list contains the other (repeats and order aside).
fn equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [a, b] = take(args)?;
    let (a, b) = (items(a.as_ref())?, items(b.as_ref())?);
    let within =
        |xs: &[&dyn Val], ys: &[&dyn Val]| xs.iter().all(|x| ys.iter().any(|y| y.equals(*x)));
    Ok(boolean(within(&a, &b) && within(&b, &a)))
}

/// Whether the lists share an element.
fn intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [a, b] = take(args)?;
    let (a, b) = (items(a.as_ref())?, items(b.as_ref())?);
    Ok(boolean(a.iter().any(|x| b.iter().any(|y| y.equals(*x)))))
}
