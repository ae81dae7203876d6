//! Steady solves on CUDA against closed forms: the CPU's checks
//! (`util::steady`) on the GPU, where the system is assembled on the
//! device. `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 steady::

use crate::util::{gpu, steady};

#[test]
#[ignore = "needs a CUDA GPU"]
fn uniform_power_matches_series_resistance_solution() {
    steady::uniform_power_matches_series_resistance_solution(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn energy_balance_holds_with_hot_spots_and_two_sinks() {
    steady::energy_balance_holds_with_hot_spots_and_two_sinks(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn chebyshev_needs_fewer_iterations_than_jacobi_on_mol_f2f_128() {
    steady::chebyshev_needs_fewer_iterations_than_jacobi_on_mol_f2f_128(gpu());
}
