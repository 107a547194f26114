//! Declares the `workqueue_loom` cfg (set with `RUSTFLAGS="--cfg workqueue_loom"` to run the loom
//! model tests), so that normal builds do not warn about an unknown cfg.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(workqueue_loom)");
}
