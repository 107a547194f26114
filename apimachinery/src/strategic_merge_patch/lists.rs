//! List helpers shared by creating and applying strategic merge patches: element kinds, merge
//! keys, Go's string ordering of scalars, and client-go's order normalization.

use serde_json::Value;

use super::{DELETE_DIRECTIVE, DIRECTIVE_MARKER, StrategicPatchError};

/// The kind of the elements of merged lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ElementKind {
    Object,
    Scalar(u8),
}

pub(super) fn element_kind(v: &Value) -> Result<ElementKind, StrategicPatchError> {
    Ok(match v {
        Value::Object(_) => ElementKind::Object,
        Value::Array(_) => {
            return Err(StrategicPatchError::new("lists of lists are not supported"));
        }
        Value::Null => ElementKind::Scalar(0),
        Value::Bool(_) => ElementKind::Scalar(1),
        Value::Number(n) if n.is_f64() => ElementKind::Scalar(2),
        Value::Number(_) => ElementKind::Scalar(3),
        Value::String(_) => ElementKind::Scalar(4),
    })
}

/// The common element kind of both lists (client-go's `sliceElementType`).
pub(super) fn slice_element_kind(lists: [&[Value]; 2]) -> Result<ElementKind, StrategicPatchError> {
    let mut kind = None;
    for value in lists.into_iter().flatten() {
        let k = element_kind(value)?;
        match kind {
            None => kind = Some(k),
            Some(prev) if prev != k => {
                return Err(StrategicPatchError::new(
                    "list element types are not identical",
                ));
            }
            Some(_) => {}
        }
    }
    kind.ok_or_else(|| StrategicPatchError::new("no elements in any of the given lists"))
}

/// Go's `fmt.Sprintf("%v", v)` for the JSON values that appear as merge keys and scalars.
pub(super) fn go_string(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<nil>".to_owned(),
        other => other.to_string(),
    }
}

pub(super) fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

/// The merge key value of a list item, which must be an object carrying it.
pub(super) fn merge_key_value<'a>(
    item: &'a Value,
    merge_key: &str,
) -> Result<&'a Value, StrategicPatchError> {
    let Value::Object(map) = item else {
        return Err(StrategicPatchError::new(format!(
            "expected a JSON object in a merged list, got {item}"
        )));
    };
    map.get(merge_key).ok_or_else(|| {
        StrategicPatchError::new(format!(
            "map: {item} does not contain declared merge key: {merge_key}"
        ))
    })
}

/// Removes repeated values the way client-go's `deduplicateScalars` does (moving the last
/// element into a duplicate's place), so the output order matches.
pub(super) fn deduplicate_scalars(mut s: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i + 1 < s.len() {
        let mut j = i + 1;
        while j < s.len() {
            if s[i] == s[j] {
                s.swap_remove(j);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    s
}

/// Sorts `to_sort` by the position of each item in `order` (by merge key for objects),
/// moving `$patch: delete` items to the end (client-go's `normalizeSliceOrder`).
pub(super) fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>, StrategicPatchError> {
    let (keep, deleted): (Vec<Value>, Vec<Value>) = match merge_key {
        Some(key) => {
            for item in to_sort.iter().chain(order) {
                merge_key_value(item, key)?;
            }
            to_sort.into_iter().partition(|item| {
                item.get(DIRECTIVE_MARKER).and_then(Value::as_str) != Some(DELETE_DIRECTIVE)
            })
        }
        None => (to_sort, Vec::new()),
    };
    let position = |item: &Value| -> Option<usize> {
        order.iter().position(|candidate| match merge_key {
            Some(key) => candidate.get(key) == item.get(key),
            None => candidate == item,
        })
    };
    // client-go's `less` is "before in `order`" when both are there and true otherwise, which
    // is not an order when an item is missing from `order` (a `$setElementOrder` without the
    // items a patch adds): where such items land is up to Go's sort algorithm itself.
    let mut keyed: Vec<(Option<usize>, Value)> = keep
        .into_iter()
        .map(|item| (position(&item), item))
        .collect();
    go_sort_slice_stable(&mut keyed, |a, b| match (a.0, b.0) {
        (Some(a), Some(b)) => a < b,
        _ => true,
    });
    let mut keep: Vec<Value> = keyed.into_iter().map(|(_, item)| item).collect();
    keep.extend(deleted);
    Ok(keep)
}

/// Go's `sort.SliceStable`: insertion sort of blocks of 20 items, then the blocks merged
/// pairwise by symmetric merging (Kim and Kutzner's SymMerge) with rotations. For a `less`
/// that is a strict order this is any stable sort; for one that is not, only this exact
/// sequence of comparisons and swaps gives Go's result.
fn go_sort_slice_stable<T>(items: &mut [T], less: impl Fn(&T, &T) -> bool) {
    const BLOCK: usize = 20;
    let n = items.len();
    let less = |items: &[T], i: usize, j: usize| less(&items[i], &items[j]);
    let mut start = 0;
    while start + BLOCK <= n {
        go_insertion_sort(items, start, start + BLOCK, &less);
        start += BLOCK;
    }
    go_insertion_sort(items, start, n, &less);
    let mut block = BLOCK;
    while block < n {
        let mut a = 0;
        while a + 2 * block <= n {
            go_sym_merge(items, a, a + block, a + 2 * block, &less);
            a += 2 * block;
        }
        if a + block < n {
            go_sym_merge(items, a, a + block, n, &less);
        }
        block *= 2;
    }
}

fn go_insertion_sort<T>(
    items: &mut [T],
    a: usize,
    b: usize,
    less: &impl Fn(&[T], usize, usize) -> bool,
) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(items, j, j - 1) {
            items.swap(j, j - 1);
            j -= 1;
        }
    }
}

/// Merges the sorted runs `a..m` and `m..b` in place, comparing as Go's `symMerge` does.
fn go_sym_merge<T>(
    items: &mut [T],
    a: usize,
    m: usize,
    b: usize,
    less: &impl Fn(&[T], usize, usize) -> bool,
) {
    if m - a == 1 {
        // Insert items[a] into m..b: find the first place whose item is not less than it.
        let (mut lo, mut hi) = (m, b);
        while lo < hi {
            let h = (lo + hi) / 2;
            if less(items, h, a) {
                lo = h + 1;
            } else {
                hi = h;
            }
        }
        for k in a..lo - 1 {
            items.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        // Insert items[m] into a..m: after every item it is not less than.
        let (mut lo, mut hi) = (a, m);
        while lo < hi {
            let h = (lo + hi) / 2;
            if !less(items, m, h) {
                lo = h + 1;
            } else {
                hi = h;
            }
        }
        let mut k = m;
        while k > lo {
            items.swap(k, k - 1);
            k -= 1;
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(items, p - c, c) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        items[start..end].rotate_left(m - start);
    }
    if a < start && start < mid {
        go_sym_merge(items, a, start, mid, less);
    }
    if mid < end && end < b {
        go_sym_merge(items, mid, end, b, less);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deduplication_matches_client_go_order() {
        let v = |xs: &[i64]| xs.iter().map(|x| json!(x)).collect::<Vec<_>>();
        assert_eq!(deduplicate_scalars(v(&[1, 1, 2])), v(&[1, 2]));
        assert_eq!(deduplicate_scalars(v(&[3, 1, 3, 2, 1])), v(&[3, 1, 2]));
        assert_eq!(deduplicate_scalars(v(&[])), v(&[]));
    }

    /// Items missing from the order land where Go's stable sort puts them with client-go's
    /// `less` (true whenever an item is missing), as the apiserver orders a patch's new items
    /// under an empty `$setElementOrder`.
    #[test]
    fn items_missing_from_the_order_land_where_go_puts_them() {
        let names = |xs: &[&str]| xs.iter().map(|x| json!({"name": x})).collect::<Vec<_>>();
        let sorted =
            normalize_slice_order(names(&["r1", "r3", "r2"]), &names(&["r2"]), Some("name"));
        assert_eq!(sorted.unwrap(), names(&["r2", "r3", "r1"]));
        let scalars = |xs: &[i64]| xs.iter().map(|x| json!(x)).collect::<Vec<_>>();
        let sorted = normalize_slice_order(scalars(&[9, 1, 8, 2]), &scalars(&[1, 2]), None);
        assert_eq!(sorted.unwrap(), scalars(&[8, 1, 2, 9]));
        // Within an order the sort is stable, over and beyond a block of 20.
        let order = scalars(&(0..50).collect::<Vec<_>>());
        let reversed = scalars(&(0..50).rev().collect::<Vec<_>>());
        assert_eq!(
            normalize_slice_order(reversed, &order, None).unwrap(),
            order
        );
    }

    #[test]
    fn go_strings_of_scalars() {
        assert_eq!(go_string(&json!("a")), "a");
        assert_eq!(go_string(&json!(80)), "80");
        assert_eq!(go_string(&json!(true)), "true");
        assert_eq!(go_string(&json!(null)), "<nil>");
    }
}
