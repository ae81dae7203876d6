//! Liquid-cooled transients on the CPU (the bodies, shared with the GPU
//! tests, are in `util::liquid`).

use cuth::backend::cpu::CpuBackend;

#[test]
fn liquid_transient_settles_and_balances() {
    crate::util::liquid::transient_settles_and_balances(&CpuBackend::new());
}

#[test]
fn constant_law_in_a_liquid_stack_equals_the_linear_solve() {
    crate::util::liquid::constant_law_equals_the_linear_solve(&CpuBackend::new());
}

#[test]
fn conductivity_law_in_a_liquid_stack_is_a_fixed_point() {
    crate::util::liquid::conductivity_law_is_a_fixed_point(&CpuBackend::new());
}

#[test]
fn leakage_in_a_liquid_stack_is_taken_at_the_answer() {
    crate::util::liquid::leakage_is_taken_at_the_answer(&CpuBackend::new());
}
