//! Liquid-cooled transients on the CPU (the bodies, shared with the GPU
//! tests, are in `util::liquid`).

use cuth::backend::cpu::CpuBackend;

#[test]
fn liquid_transient_settles_and_balances() {
    crate::util::liquid::transient_settles_and_balances(&CpuBackend::new());
}
