//! Temperature-dependent cases on the CPU that the GPU tests also compare
//! (the bodies are in `util::kt`): mol_f2f with k(T) silicon and leakage
//! converges with the leakage on, its iterated transient heats up from the
//! half-leakage steady state, and a stack of floorplan units with laws and
//! leaking blocks converges.

use crate::util::kt;
use cuth::backend::cpu::CpuBackend;

#[test]
fn nonlinear_case_converges_with_leakage() {
    kt::nonlinear_case_converges_with_leakage(&CpuBackend::new(), 32);
}

#[test]
fn iterated_transient_heats_up_from_the_half_leakage_steady_state() {
    kt::iterated_transient_heats_up_from_the_half_leakage_steady_state(&CpuBackend::new(), 16);
}

#[test]
fn unit_laws_and_block_leakage_converge() {
    kt::unit_laws_and_block_leakage_converge(&CpuBackend::new());
}
