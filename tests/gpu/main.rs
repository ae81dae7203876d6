//! The CUDA backend against the CPU. Every test is `#[ignore]`d (CI has no
//! GPU): on a GPU machine, `cargo test --release --test gpu -- --ignored`,
//! or the built binary with `--ignored` (scripts/gpu_check.sh).

#[path = "../util/mod.rs"]
mod util;

mod assemble;
mod backend;
mod kernel_cache;
mod kt_device;
mod liquid;
mod mg;
mod mg_mixed;
mod mg_setup;
mod mixed;
mod nonlinear;
mod pipeline;
mod simulation;
mod steady;
mod sweep;
mod sweep_batch;
mod topopt;
mod topopt_design;
mod topopt_mg;
mod transient_device;
