//! Measures what the cache adds to the objects it holds: heap bytes per object of an
//! `Indexer` (with and without the namespace index) and of a `DeltaFIFO` holding a full
//! relist, beyond the objects themselves. Objects are shared `Arc`s, so this is pure
//! bookkeeping: keys, hash tables and index sets.
//!
//! Run: `cargo run -p kclient-cache --example cache_memory` (Linux: it reads
//! `/proc/self/statm`).

use std::sync::Arc;

use kclient_apimachinery::{Object, OwnerRef, StringMap};
use kclient_cache::{DeltaFIFO, DeltaFIFOOptions, Indexer, Indexers, namespace_indexers};

/// Resident memory in bytes, from `/proc/self/statm` (Linux). The workspace forbids
/// `unsafe`, so no counting allocator: growth of resident memory over 100,000 objects is
/// precise enough for a per-object figure.
fn live() -> isize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: isize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// An object with realistic metadata lengths: namespace, a generated name, a resource
/// version, two labels.
struct Obj {
    namespace: String,
    name: String,
    resource_version: String,
    labels: std::collections::BTreeMap<String, String>,
}

impl Object for Obj {
    fn name(&self) -> &str {
        &self.name
    }
    fn namespace(&self) -> &str {
        &self.namespace
    }
    fn resource_version(&self) -> &str {
        &self.resource_version
    }
    fn uid(&self) -> &str {
        ""
    }
    fn generation(&self) -> i64 {
        0
    }
    fn labels(&self) -> &dyn StringMap {
        &self.labels
    }
    fn annotations(&self) -> &dyn StringMap {
        &self.labels
    }
    fn finalizers(&self) -> Vec<&str> {
        Vec::new()
    }
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        Vec::new()
    }
    fn is_being_deleted(&self) -> bool {
        false
    }
    fn set_name(&mut self, name: &str) {
        self.name = name.into();
    }
    fn set_namespace(&mut self, namespace: &str) {
        self.namespace = namespace.into();
    }
    fn set_resource_version(&mut self, rv: &str) {
        self.resource_version = rv.into();
    }
    /// This stand-in carries no finalizers (`finalizers()` is always empty).
    fn set_finalizers(&mut self, _: Vec<String>) {}
    fn clear_managed_fields(&mut self) {}
}

const N: usize = 100_000;

fn objects() -> Vec<Arc<Obj>> {
    (0..N)
        .map(|i| {
            let mut labels = std::collections::BTreeMap::new();
            labels.insert("app".to_owned(), format!("app-{}", i % 50));
            labels.insert("pod-template-hash".to_owned(), "5d8f9c7b6d".to_owned());
            Arc::new(Obj {
                namespace: format!("team-{:02}", i % 40),
                name: format!("web-5d8f9c7b6d-{i:06}"),
                resource_version: format!("{}", 1_000_000 + i),
                labels,
            })
        })
        .collect()
}

fn per_object(bytes: isize) -> f64 {
    bytes as f64 / N as f64
}

fn main() {
    println!(
        "size_of Delta = {} B, DeletedObject = {} B",
        std::mem::size_of::<kclient_cache::Delta<Obj>>(),
        std::mem::size_of::<kclient_cache::DeletedObject<Obj>>()
    );
    let before = live();
    let objs = objects();
    let objects_bytes = live() - before;
    println!(
        "{N} objects: {:.0} B/object for the objects themselves",
        per_object(objects_bytes)
    );

    // Every structure stays alive until the end, so each measurement sees fresh memory.
    let mut keep = Vec::new();
    for (label, indexers) in [
        ("Indexer, no index", Indexers::<Obj>::new()),
        ("Indexer, namespace index", namespace_indexers::<Obj>()),
    ] {
        let before = live();
        let indexer = Indexer::new(indexers);
        for o in &objs {
            indexer.add(Arc::clone(o));
        }
        println!(
            "{label}: {:.0} B/object of bookkeeping",
            per_object(live() - before)
        );
        keep.push(indexer);
    }

    let indexer = Indexer::new(namespace_indexers::<Obj>());
    indexer.replace(objs.clone(), "1");
    let before = live();
    let fifo = DeltaFIFO::new(
        DeltaFIFOOptions::default()
            .known_objects(Arc::new(indexer.clone()))
            .emit_delta_type_replaced(true),
    );
    fifo.replace(objs.clone(), "2");
    println!(
        "DeltaFIFO holding a full relist: {:.0} B/object while queued (peak, with the relist's \
         temporary key set)",
        per_object(live() - before)
    );
    drop((fifo, keep, indexer));
}
