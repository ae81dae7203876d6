//! Preconditioner quality on the shipped memory-on-logic stack, on the CPU
//! (the body, shared with the GPU tests, is in `util::steady`): Chebyshev
//! must need fewer PCG iterations than Jacobi (the CUTh-Solver claim), and
//! both must reach the same temperatures.

use crate::util::steady;
use cuth::backend::cpu::CpuBackend;

#[test]
fn chebyshev_needs_fewer_iterations_than_jacobi_on_mol_f2f_128() {
    steady::chebyshev_needs_fewer_iterations_than_jacobi_on_mol_f2f_128(&CpuBackend::new());
}
