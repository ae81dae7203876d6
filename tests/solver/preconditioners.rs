//! Preconditioner quality on the shipped memory-on-logic stack: Chebyshev
//! must need fewer PCG iterations than Jacobi (the CUTh-Solver claim), and
//! both must reach the same temperatures.

use cuth::backend::cpu::CpuBackend;
use cuth::linalg::PrecondKind;
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use std::path::Path;

#[test]
fn chebyshev_needs_fewer_iterations_than_jacobi_on_mol_f2f_128() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/mol_f2f.toml");
    let stack = Stack::load(&path).unwrap().with_grid(128, 128).unwrap();
    let be = CpuBackend::new();
    let run = |kind| {
        let opts = SteadyOptions::from_stack(&stack, kind);
        let opts = SteadyOptions {
            precond: kind,
            ..opts
        };
        solve_steady(&be, &stack, &opts).unwrap()
    };
    let jac = run(PrecondKind::Jacobi);
    let cheb = run(PrecondKind::Chebyshev);
    let (ij, ic) = (
        jac.summary.solver.iterations,
        cheb.summary.solver.iterations,
    );
    println!("mol_f2f 128x128: jacobi {ij} iterations, chebyshev {ic}");
    assert!(ic < ij, "chebyshev {ic} vs jacobi {ij}");
    let dt = jac
        .temperature_k
        .iter()
        .zip(&cheb.temperature_k)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(dt < 1e-3, "solutions differ by {dt} K");
}
