//! Closed-form checks through the whole pipeline (stack → power → assembly →
//! PCG) on the CPU (the bodies, shared with the GPU tests, are in
//! `util::steady`): uniform power under adiabatic sides is a 1D
//! series-resistance network, solved by hand; energy balance on a stack
//! with hot spots.

use crate::util::steady;
use cuth::backend::cpu::CpuBackend;

#[test]
fn uniform_power_matches_series_resistance_solution() {
    steady::uniform_power_matches_series_resistance_solution(&CpuBackend::new());
}

#[test]
fn energy_balance_holds_with_hot_spots_and_two_sinks() {
    steady::energy_balance_holds_with_hot_spots_and_two_sinks(&CpuBackend::new());
}
