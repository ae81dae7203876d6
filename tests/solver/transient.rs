//! Backward-Euler transients on the CPU against independent references
//! (the bodies, shared with the GPU tests, are in `util::transient`): the
//! exact discrete decay of a uniform layer, a tridiagonal backward-Euler
//! chain, the steady solver, the energy account of every step, a trace's
//! rows, a capped step's error.

use crate::util::transient;
use cuth::backend::cpu::CpuBackend;

#[test]
fn uniform_layer_decays_as_discrete_backward_euler() {
    transient::uniform_layer_decays_as_discrete_backward_euler(&CpuBackend::new());
}

#[test]
fn layered_stack_matches_backward_euler_chain() {
    transient::layered_stack_matches_backward_euler_chain(&CpuBackend::new());
}

#[test]
fn long_run_reaches_the_steady_solution() {
    transient::long_run_reaches_the_steady_solution(&CpuBackend::new());
}

#[test]
fn steady_init_stays_put() {
    transient::steady_init_stays_put(&CpuBackend::new());
}

#[test]
fn every_step_balances_energy_to_solver_tolerance() {
    transient::every_step_balances_energy_to_solver_tolerance(&CpuBackend::new());
}

#[test]
fn trace_rows_apply_piecewise_constant() {
    transient::trace_rows_apply_piecewise_constant(&CpuBackend::new());
}

#[test]
fn a_capped_step_reports_the_users_rtol() {
    transient::a_capped_step_reports_the_users_rtol(&CpuBackend::new());
}

#[test]
fn reduced_records_equal_the_host_fold() {
    crate::util::transient_reduce::on_the_cpu();
}
