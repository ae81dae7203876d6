//! The stepping API on CUDA: the CPU's checks (`util::sim`) on the GPU.
//! The one-shot drivers assemble on the device there while a session
//! assembles on the host, so the two agree to 1e-9 K rather than bit for
//! bit. `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 simulation::

use crate::util::{gpu, sim};

#[test]
#[ignore]
fn steady_solve_equals_the_one_shot_solve() {
    sim::steady_solve_equals_the_one_shot_solve(gpu(), 1e-9);
}

#[test]
#[ignore]
fn steps_equal_a_transient_run_under_the_same_powers() {
    sim::steps_equal_a_transient_run_under_the_same_powers(gpu(), 1e-9);
}

#[test]
#[ignore]
fn refused_calls_change_nothing() {
    sim::refused_calls_change_nothing(gpu());
}

#[test]
#[ignore]
fn a_map_on_cells_without_material_is_refused() {
    sim::a_map_on_cells_without_material_is_refused(gpu());
}

#[test]
#[ignore]
fn state_restores_and_long_steps_reach_the_steady_field() {
    sim::state_restores_and_long_steps_reach_the_steady_field(gpu());
}

#[test]
#[ignore]
fn a_layer_map_scales_the_field_linearly() {
    sim::a_layer_map_scales_the_field_linearly(gpu());
}

#[test]
#[ignore]
fn liquid_session_equals_the_one_shot_drivers() {
    sim::liquid_session_equals_the_one_shot_drivers(gpu(), 1e-9);
}

/// The blocks, probes and hottest cell reduced on the device after a step.
#[test]
#[ignore]
fn reads_after_a_step_equal_those_of_the_field() {
    crate::util::sim_reads::reads_after_a_step_equal_those_of_the_field(gpu());
}
