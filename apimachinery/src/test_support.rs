//! Helpers shared by unit tests of values nested as deep as the apiserver stores them.

/// Runs `f` on a thread with tokio's worker stack (2 MiB), which a debug build's deepest
/// frames must fit in as a release build's do.
pub(crate) fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// A JSON object nesting objects `{"a": ...}` `depth` levels deep in all (itself counting as
/// one), with `1` at the bottom.
pub(crate) fn nested_objects(depth: usize) -> String {
    format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth))
}

/// A JSON object nesting objects `{"a": ...}` `depth` levels deep, with `leaf` at the bottom.
pub(crate) fn nested_objects_to(depth: usize, leaf: &str) -> serde_json::Value {
    let text = format!("{}{leaf}{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    crate::decode_json(text.as_bytes()).unwrap()
}

/// The value at the bottom of a chain of objects `{"a": ...}`, and how many objects lead
/// to it, walked without recursion.
pub(crate) fn bottom(value: &serde_json::Value) -> (usize, &serde_json::Value) {
    let mut levels = 0;
    let mut value = value;
    while let Some(inner) = value.as_object().and_then(|o| o.get("a")) {
        levels += 1;
        value = inner;
    }
    (levels, value)
}

/// Drops `value` without recursing (a `Value`'s own drop recurses once per level, which a
/// debug build's 2 MiB stack does not hold for 10,000 levels), as `Unstructured` drops.
pub(crate) use crate::unstructured::deep::dismantle;
