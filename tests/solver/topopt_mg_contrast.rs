//! topopt's multigrid on a converged, high-contrast design: the
//! design of a short optimization thresholded to E ∈ {1, 1e-9},
//! solved with every coarsest-level treatment (`--mg-coarse cg | dense |
//! galerkin`: inner CG on the rediscretised coarsest level, its dense
//! inverse on a deeper hierarchy, or the dense inverse of the Galerkin
//! PᵀKP there) and with Jacobi. Each must reach rtol and give the same
//! compliance; the CG iteration counts are the measurement, also for the
//! W-cycle on the one or two largest coarse levels (`--mg-w-levels`)
//! (`--nocapture` prints them; BENCHMARKS.md quotes them).

use cuth::backend::cpu::CpuBackend;
use cuth::linalg::{CgParams, PrecondKind, RefineMode, Stop};
use cuth::topopt::continuation::Schedule;
use cuth::topopt::evaluate::Evaluator;
use cuth::topopt::filter::DensityFilter;
use cuth::topopt::mg::{plan_for, CoarseSolver};
use cuth::topopt::optimize::{optimize, OptimizeOptions, SolveOptions};
use cuth::topopt::presets::{self, LoadKind, MeshRequest};
use cuth::topopt::OperatorKind;

fn options(precond: PrecondKind, coarse: CoarseSolver, rtol: f64, w: usize) -> SolveOptions {
    SolveOptions {
        cg: CgParams {
            stop: Stop::relative(rtol),
            max_iter: 20000,
            check_every: 1,
            ..SolveOptions::default().cg
        },
        mode: RefineMode::F64,
        precond,
        mg_coarse: coarse,
        mg_w_levels: w,
        ..SolveOptions::default()
    }
}

#[test]
fn coarsest_treatments_on_a_converged_high_contrast_design() {
    let be = CpuBackend::new();
    for nelx in [24, 32] {
        let req = MeshRequest {
            nelx: Some(nelx),
            ..Default::default()
        };
        let p = presets::build("cantilever", &req, LoadKind::Patch).unwrap();
        let opts = OptimizeOptions {
            max_iterations: 60,
            operator: OperatorKind::Fused,
            cg: options(PrecondKind::Multigrid, CoarseSolver::Dense, 1e-5, 0),
            schedule: Schedule::standard(p.penal, p.rmin),
        };
        let out = optimize(&be, &p, &opts, &mut |_| {}).unwrap();
        // Black and white: E = 1 or Emin = 1e-9 (x = ρ̄ = 0 / 1, p = 3).
        let x: Vec<f64> = (out.best.rho.iter())
            .map(|&r| if r > 0.5 { 1.0 } else { 0.0 })
            .collect();
        let solid = x.iter().sum::<f64>() / x.len() as f64;
        // rmin < 1: no filtering; a tiny β makes the projection the identity.
        let filter = DensityFilter::new(p.mesh, 0.5);
        let mut results = Vec::new();
        for (name, precond, coarse, w) in [
            ("jacobi", PrecondKind::Jacobi, CoarseSolver::Cg, 0),
            ("mg cg", PrecondKind::Multigrid, CoarseSolver::Cg, 0),
            ("mg dense", PrecondKind::Multigrid, CoarseSolver::Dense, 0),
            (
                "mg dense W1",
                PrecondKind::Multigrid,
                CoarseSolver::Dense,
                1,
            ),
            (
                "mg dense W2",
                PrecondKind::Multigrid,
                CoarseSolver::Dense,
                2,
            ),
            (
                "mg galerkin",
                PrecondKind::Multigrid,
                CoarseSolver::Galerkin,
                0,
            ),
            (
                "mg galerkin W2",
                PrecondKind::Multigrid,
                CoarseSolver::Galerkin,
                2,
            ),
        ] {
            let o = options(precond, coarse, 1e-8, w);
            let mut ev = Evaluator::new(&be, &p, OperatorKind::Fused, o).unwrap();
            let r = ev.evaluate(&filter, 3.0, 1e-6, &x).unwrap();
            assert!(!r.cg_failed && r.cg.rel_residual <= 1e-8, "{name}");
            let levels: Vec<String> = plan_for(p.mesh, coarse)
                .iter()
                .map(|(m, _)| format!("{}x{}x{}", m.nelx, m.nely, m.nelz))
                .collect();
            println!(
                "nelx {nelx} ({} elements, solid fraction {solid:.3}): {name:12} {:5} CG \
                 iterations, compliance {:.10e}{}",
                p.mesh.elements(),
                r.cg.iterations,
                r.compliance,
                match precond {
                    PrecondKind::Multigrid => format!(", levels {}", levels.join(" -> ")),
                    _ => String::new(),
                }
            );
            results.push((name, r.cg.iterations, r.compliance));
        }
        let c0 = results[0].2;
        for (name, _, c) in &results {
            assert!((c / c0 - 1.0).abs() < 1e-6, "{name}: {c} vs jacobi {c0}");
        }
    }
}
