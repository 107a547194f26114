//! The fuzz targets: each feeds one input to a public kclient API, as the clients do, and
//! returns a signature of the outcome (which error, or success) so the runner can keep inputs
//! that reach something new. A target panics only where kclient broke a promise: a panic
//! inside kclient, or an invariant the target checks (a differential or round-trip check).

mod decode;
mod differential;
mod http;
mod kubeconfig;
mod patches;
mod protobuf;
mod values;

use std::fmt::Display;

use crate::mutate::InputKind;
use crate::rng::fnv1a;

/// One fuzz target.
pub(crate) struct Target {
    /// The name used on the command line and as the corpus folder.
    pub(crate) name: &'static str,
    /// What it covers, for `kclient-fuzz list` and the README.
    pub(crate) about: &'static str,
    /// How its inputs are mutated.
    pub(crate) kind: InputKind,
    /// Inputs are cut to this many bytes.
    pub(crate) max_len: usize,
    /// Tokens worth inserting into its inputs.
    pub(crate) dict: &'static [&'static str],
    /// Runs one input; returns the outcome's signature.
    pub(crate) run: fn(&[u8]) -> u64,
}

/// Every target, in the order `run` visits them.
pub(crate) fn all() -> Vec<Target> {
    let mut targets = Vec::new();
    targets.extend(decode::targets());
    targets.extend(http::targets());
    targets.extend(kubeconfig::targets());
    targets.extend(values::targets());
    targets.extend(patches::targets());
    targets.extend(differential::targets());
    targets.extend(protobuf::targets());
    targets
}

/// The target named `name`.
pub(crate) fn find(name: &str) -> Option<Target> {
    all().into_iter().find(|t| t.name == name)
}

/// The signature of a success labelled `what`.
pub(crate) fn ok(what: &str) -> u64 {
    fnv1a(what.as_bytes())
}

/// The signature of an error: its text with the parts that vary with the input (quoted
/// values, numbers) removed, so that "expected `:` at line 1 column 6" and "... column 9" count
/// as one outcome but "invalid type" and "unknown variant" as two.
pub(crate) fn err(what: &str, error: &dyn Display) -> u64 {
    let text = error.to_string();
    let mut shape = String::with_capacity(what.len() + 64);
    shape.push_str(what);
    shape.push(':');
    let mut quote: Option<char> = None;
    let mut last_digit = false;
    for c in text.chars().take(160) {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '`' => quote = Some(c),
            None if c.is_ascii_digit() => {
                if !last_digit {
                    shape.push('0');
                }
                last_digit = true;
                continue;
            }
            None => shape.push(c),
        }
        last_digit = false;
    }
    fnv1a(shape.as_bytes())
}

/// Combines outcome signatures (a target that runs several decoders on one input).
pub(crate) fn mix(parts: &[u64]) -> u64 {
    parts.iter().fold(0x9e37_79b9_7f4a_7c15, |h, p| {
        (h ^ p).wrapping_mul(0x0100_0000_01b3).rotate_left(17)
    })
}

/// The input as text: decoders of strings see only UTF-8 (invalid bytes become U+FFFD).
pub(crate) fn text(input: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_signatures_ignore_positions_and_quoted_values() {
        let a = err("x", &"expected `:` at line 1 column 6");
        assert_eq!(a, err("x", &"expected `:` at line 12 column 345"));
        assert_eq!(
            err("x", &"invalid type: string \"abc\", expected i32"),
            err("x", &"invalid type: string \"zz\", expected i32")
        );
        assert_ne!(a, err("x", &"unknown variant `FOO`"));
        assert_ne!(a, err("y", &"expected `:` at line 1 column 6"));
        assert_ne!(ok("a"), ok("b"));
    }

    /// The checked-in corpus (seeds and regression cases) runs through every target without a
    /// panic: what `scripts/fuzz` replays first, kept green by the ordinary test suite.
    #[test]
    fn every_corpus_file_runs_clean() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
        let mut runs = 0;
        for target in all() {
            let files = crate::worker::load_corpus(&root.join(target.name));
            assert!(!files.is_empty(), "{}: no corpus files", target.name);
            for (path, bytes) in files {
                let outcome = std::panic::catch_unwind(|| (target.run)(&bytes));
                assert!(
                    outcome.is_ok(),
                    "{} panicked on {}",
                    target.name,
                    path.display()
                );
                runs += 1;
            }
        }
        assert!(runs > 100, "only {runs} corpus files");
        let dirs = std::fs::read_dir(&root).expect("fuzz/corpus").count();
        assert_eq!(
            dirs,
            all().len(),
            "one corpus folder per target, and no other"
        );
    }
}
