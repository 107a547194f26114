//! Declares the `tokio_unstable` cfg (set with `RUSTFLAGS="--cfg tokio_unstable"` to measure a
//! runtime without tokio's LIFO slot, see `src/main.rs`), so that the lint on unknown cfgs knows
//! it.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tokio_unstable)");
}
