//! One design evaluation: from design variables x to the physical field,
//! the elastic solve, compliance and its gradient (steps 1–5 of
//! [`super::optimize`]). Kept apart from the loop so the gradient can be
//! checked against finite differences.
//!
//! Gradient chain: ∂c/∂ρ̄ₑ = −p ρ̄ₑᵖ⁻¹ (E0 − Emin) cₑ (the adjoint of
//! min-compliance is u itself), times dρ̄/dρ̃ (projection), through Fᵀ
//! (filter). Passive elements have zero slope, so nothing flows through
//! them. Loads on fixed DOFs are dropped (they are reactions).

use super::backend::{ElasticBackend, OperatorKind};
use super::element::hex8_stiffness;
use super::filter::DensityFilter;
use super::mg::ElasticMg;
use super::operator::ElasticOperator;
use super::problem::{Passive, Problem, E0, E_MIN};
use super::projection;
use crate::backend::BackendError;
use crate::linalg::precond::Preconditioner;
use crate::linalg::{
    build_precond, refine, CgInfo, CgParams, PrecondKind, PrecondOptions, RefineMode, RefineWork,
    SolveError, Stop,
};
use rayon::prelude::*;

/// How each elastic solve runs (`cuth topopt --precision --precond --rtol
/// --cg-max-iter`): `linalg`'s refinement loop around its PCG.
#[derive(Clone, Debug)]
pub struct SolveOptions {
    /// rtol on ‖f − K u‖/‖f‖; the cap counts Krylov iterations of a solve.
    pub cg: CgParams,
    pub mode: RefineMode,
    pub precond: PrecondKind,
    pub precond_opts: PrecondOptions,
    /// `mg`: relative residual of the coarsest level's inner CG.
    pub mg_coarse_rtol: f64,
}

impl Default for SolveOptions {
    fn default() -> SolveOptions {
        SolveOptions {
            cg: CgParams {
                stop: Stop::relative(1e-5),
                max_iter: 1000,
                check_every: 1,
                ..CgParams::default()
            },
            mode: RefineMode::Mixed,
            precond: PrecondKind::Jacobi,
            precond_opts: PrecondOptions::default(),
            mg_coarse_rtol: super::mg::COARSE_RTOL,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OptimizeError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("elastic solve failed at iteration {iteration}: {source}")]
    Solve {
        iteration: usize,
        source: SolveError,
    },
    #[error("the optimization needs at least one iteration (max_iterations is 0)")]
    NoIterations,
}

impl OptimizeError {
    /// The same error, attributed to design iteration `iteration`.
    pub fn at(self, iteration: usize) -> OptimizeError {
        match self {
            OptimizeError::Solve { source, .. } => OptimizeError::Solve { iteration, source },
            e => e,
        }
    }
}

/// Σᵢ f(i, vᵢ) in fixed-size chunks added in order: unlike rayon's `sum`,
/// whose split points depend on scheduling, the result does not change from
/// run to run or with the thread count.
pub fn ordered_sum(v: &[f64], f: impl Fn(usize, f64) -> f64 + Sync) -> f64 {
    const CHUNK: usize = 8192;
    let parts: Vec<f64> = v
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, chunk)| {
            (chunk.iter().enumerate()).fold(0.0, |s, (k, &x)| s + f(c * CHUNK + k, x))
        })
        .collect();
    parts.iter().sum()
}

/// rᵖ; continuation uses whole p, where `powi` is several times faster.
fn power(r: f64, p: f64) -> f64 {
    if p.fract() == 0.0 && p.abs() < 64.0 {
        r.powi(p as i32)
    } else {
        r.powf(p)
    }
}

/// ρ̄ = passive(H_β(F x)) and the slope dρ̄/dρ̃ (0 on passive elements).
pub struct Physical {
    filtered: Vec<f64>,
    pub rho: Vec<f64>,
    slope: Vec<f64>,
}

impl Physical {
    pub fn new(n: usize) -> Physical {
        Physical {
            filtered: vec![0.0; n],
            rho: vec![0.0; n],
            slope: vec![0.0; n],
        }
    }

    fn update(&mut self, filter: &DensityFilter, beta: f64, x: &[f64], passive: &[Passive]) {
        self.update_rho(filter, beta, x, passive);
        projection::derivative(beta, &self.filtered, &mut self.slope);
        self.slope
            .par_iter_mut()
            .zip(passive.par_iter())
            .for_each(|(s, p)| {
                if *p != Passive::Design {
                    *s = 0.0;
                }
            });
    }

    /// ρ̄ only (what the OC volume search needs).
    pub fn update_rho(
        &mut self,
        filter: &DensityFilter,
        beta: f64,
        x: &[f64],
        passive: &[Passive],
    ) {
        filter.apply(x, &mut self.filtered);
        projection::project(beta, &self.filtered, &mut self.rho);
        self.rho
            .par_iter_mut()
            .zip(passive.par_iter())
            .for_each(|(r, p)| match p {
                Passive::Design => {}
                Passive::Solid => *r = 1.0,
                Passive::Void => *r = 0.0,
            });
    }

    /// Volume fraction of ρ̄ = passive(H_β(F x)) without storing any field:
    /// one fused pass per trial of the OC multiplier search.
    pub fn volume_of(filter: &DensityFilter, beta: f64, x: &[f64], passive: &[Passive]) -> f64 {
        let project = projection::projector(beta);
        let total = filter.row_sums(x, |start, row| {
            let kinds = &passive[start..start + row.len()];
            row.iter()
                .zip(kinds)
                .map(|(&v, k)| match k {
                    Passive::Design => project(v),
                    Passive::Solid => 1.0,
                    Passive::Void => 0.0,
                })
                .sum()
        });
        total / x.len() as f64
    }

    /// Volume fraction of ρ̄.
    pub fn volume(&self) -> f64 {
        ordered_sum(&self.rho, |_, r| r) / self.rho.len() as f64
    }
}

/// What one evaluation returns (ρ̄ stays in the evaluator: [`Evaluator::rho`]).
pub struct Evaluation {
    pub compliance: f64,
    pub volume: f64,
    pub grayness: f64,
    /// ∂c/∂x.
    pub dc: Vec<f64>,
    /// ∂V/∂x (V the volume fraction).
    pub dv: Vec<f64>,
    pub cg: CgInfo,
    /// CG stopped short of rtol (cap or stagnation) but the residual is
    /// still below 1: the evaluation is usable, and recorded as failed.
    pub cg_failed: bool,
    /// Wall time of the elastic part (moduli, diagonal, PCG, energies), the
    /// rest of an iteration being host work (filter, projection, OC).
    pub solve_seconds: f64,
}

/// The device operator, the solver's work vectors and the warm-start
/// displacement, kept across evaluations.
pub struct Evaluator<'a, B: ElasticBackend> {
    be: &'a B,
    problem: &'a Problem,
    op: ElasticOperator<B>,
    work: RefineWork<B>,
    f: B::Vector,
    u: B::Vector,
    design: Vec<bool>,
    physical: Physical,
    solve: SolveOptions,
}

impl<'a, B: ElasticBackend> Evaluator<'a, B> {
    pub fn new(
        be: &'a B,
        problem: &'a Problem,
        operator: OperatorKind,
        solve: SolveOptions,
    ) -> Result<Evaluator<'a, B>, OptimizeError> {
        let mesh = problem.mesh;
        let ke = hex8_stiffness(problem.nu);
        let op = be.elastic_new(&mesh, &ke, &problem.fixed, operator)?;
        let op = ElasticOperator::new(be, op, mesh.dofs())?;
        let f_host: Vec<f64> = (0..mesh.dofs())
            .map(|d| {
                if problem.fixed[d] {
                    0.0
                } else {
                    problem.force[d]
                }
            })
            .collect();
        Ok(Evaluator {
            be,
            problem,
            op,
            work: RefineWork::new(be, mesh.dofs())?,
            f: be.upload(&f_host)?,
            u: be.zeros(mesh.dofs())?,
            design: problem
                .passive
                .iter()
                .map(|&p| p == Passive::Design)
                .collect(),
            physical: Physical::new(mesh.elements()),
            solve,
        })
    }

    /// ρ̄ of the last evaluation.
    pub fn rho(&self) -> &[f64] {
        &self.physical.rho
    }

    /// Which elements are design variables.
    pub fn design(&self) -> &[bool] {
        &self.design
    }

    /// Displacements of the last solve, on the host.
    pub fn displacement(&self) -> Result<Vec<f64>, BackendError> {
        self.be.download(&self.u)
    }

    /// Solves at design `x` (warm-started from the previous solution) and
    /// returns compliance, volume, grayness and their gradients.
    pub fn evaluate(
        &mut self,
        filter: &DensityFilter,
        penal: f64,
        beta: f64,
        x: &[f64],
    ) -> Result<Evaluation, OptimizeError> {
        let (be, n) = (self.be, x.len());
        self.physical.update(filter, beta, x, &self.problem.passive);
        let rho = &self.physical.rho;
        // E = Emin + ρ̄ᵖ (E0 − Emin)
        let e: Vec<f64> = rho
            .par_iter()
            .map(|&r| E_MIN + power(r, penal) * (E0 - E_MIN))
            .collect();
        let t_solve = std::time::Instant::now();
        be.elastic_set_moduli(&mut self.op.op, &e)?;
        self.op.refresh_diagonal(be)?;
        let failed = |source| OptimizeError::Solve {
            iteration: 0,
            source,
        };
        let opts = &self.solve;
        let mut m: Box<dyn Preconditioner<B>> = match opts.precond {
            PrecondKind::Multigrid => {
                let p = self.problem;
                let mg = ElasticMg::new(be, &mut self.op, p.mesh, &e, &p.fixed, p.nu)
                    .map(|m| m.with_coarse_rtol(opts.mg_coarse_rtol));
                Box::new(mg.map_err(failed)?)
            }
            kind => {
                build_precond(kind, be, &mut self.op, None, &opts.precond_opts).map_err(failed)?
            }
        };
        let mut info = CgInfo::default();
        let solved = refine(
            be,
            &mut self.op,
            m.as_mut(),
            &self.f,
            &mut self.u,
            &mut self.work,
            &opts.cg,
            opts.mode,
            &mut info,
        );
        let cg_failed = match solved {
            Ok(()) => false,
            Err(SolveError::NoConvergence { .. } | SolveError::Stagnated { .. })
                if info.rel_residual.is_finite() && info.rel_residual < 1.0 =>
            {
                true
            }
            Err(err) => return Err(failed(err)),
        };
        let ce = be.element_energies(&mut self.op.op, &self.u)?;
        let solve_seconds = t_solve.elapsed().as_secs_f64();
        let compliance = ordered_sum(&ce, |i, c| e[i] * c);
        let grayness = 4.0 * ordered_sum(rho, |_, r| r * (1.0 - r)) / n as f64;

        // ∂/∂ρ̄, times dρ̄/dρ̃ (0 on passive elements), then Fᵀ.
        let slope = &self.physical.slope;
        let dc_t: Vec<f64> = (0..n)
            .into_par_iter()
            .map(|i| -penal * power(rho[i], penal - 1.0) * (E0 - E_MIN) * ce[i] * slope[i])
            .collect();
        let dv_t: Vec<f64> = slope.par_iter().map(|s| s / n as f64).collect();
        let (mut dc, mut dv) = (vec![0.0; n], vec![0.0; n]);
        filter.apply_transpose(&dc_t, &mut dc);
        filter.apply_transpose(&dv_t, &mut dv);
        Ok(Evaluation {
            compliance,
            volume: self.physical.volume(),
            grayness,
            dc,
            dv,
            cg: info,
            cg_failed,
            solve_seconds,
        })
    }
}

/// Compliance fᵀu of `problem` at uniform physical density `rho` (no
/// filter, no optimization), with its solve report.
pub fn uniform_compliance<B: ElasticBackend>(
    be: &B,
    problem: &Problem,
    rho: f64,
    params: &SolveOptions,
) -> Result<(f64, CgInfo), OptimizeError> {
    let mut ev = Evaluator::new(be, problem, OperatorKind::NodeCentred, params.clone())?;
    let x = vec![rho; problem.mesh.elements()];
    // rmin < 1: the filter keeps only the element itself. A tiny β makes
    // the projection the identity to O(β²).
    let filter = DensityFilter::new(problem.mesh, 0.5);
    let r = ev.evaluate(&filter, problem.penal, 1e-6, &x)?;
    if r.cg_failed {
        return Err(OptimizeError::Solve {
            iteration: 0,
            source: SolveError::NoConvergence {
                iters: r.cg.iterations,
                rel: r.cg.rel_residual,
                rtol: params.cg.stop.rtol,
            },
        });
    }
    Ok((r.compliance, r.cg))
}
