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
