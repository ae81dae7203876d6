//! Tests of the library: assembly, solvers, preconditioners, transients, sweeps, topopt, parsers.

#[path = "../util/mod.rs"]
mod util;

mod analytic;
mod cooling_png;
mod fuzz_parsers;
mod kernel_cache;
mod kernels_nvrtc;
mod leakage_placed;
mod linear_system;
mod liquid;
mod mg_graded;
mod mg_mixed;
mod mg_skip;
mod mixed;
mod multigrid;
mod nonlinear;
mod nonlinear_absent;
mod nonlinear_cases;
mod nonlinear_transient;
mod package;
mod preconditioners;
mod simulation;
mod sweep;
mod sweep_batch;
mod topopt;
mod topopt_mg;
mod topopt_mg_contrast;
mod transient;
mod transient_order;
