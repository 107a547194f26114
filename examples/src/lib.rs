//! Runnable kclient programs, one per scenario, under `examples/src/bin/`.
