//! The stepping API on the CPU (the bodies, shared with the GPU tests, are
//! in `util::sim`): bit for bit the one-shot solve and transient run.

use crate::util::{sim, sim_reads};
use cuth::backend::cpu::CpuBackend;

#[test]
fn steady_solve_equals_the_one_shot_solve() {
    sim::steady_solve_equals_the_one_shot_solve(&CpuBackend::new(), 0.0);
}

#[test]
fn steps_equal_a_transient_run_under_the_same_powers() {
    sim::steps_equal_a_transient_run_under_the_same_powers(&CpuBackend::new(), 0.0);
}

#[test]
fn refused_calls_change_nothing() {
    sim::refused_calls_change_nothing(&CpuBackend::new());
}

#[test]
fn a_map_on_cells_without_material_is_refused() {
    sim::a_map_on_cells_without_material_is_refused(&CpuBackend::new());
}

#[test]
fn state_restores_and_long_steps_reach_the_steady_field() {
    sim::state_restores_and_long_steps_reach_the_steady_field(&CpuBackend::new());
}

#[test]
fn a_layer_map_scales_the_field_linearly() {
    sim::a_layer_map_scales_the_field_linearly(&CpuBackend::new());
}

#[test]
fn liquid_session_equals_the_one_shot_drivers() {
    sim::liquid_session_equals_the_one_shot_drivers(&CpuBackend::new(), 0.0);
}

#[test]
fn reads_after_a_step_equal_those_of_the_field() {
    sim_reads::reads_after_a_step_equal_those_of_the_field(&CpuBackend::new());
}
