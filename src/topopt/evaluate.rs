//! One design evaluation: from design variables x to the physical field,
//! the elastic solve, compliance and its gradient (steps 1–5 of
//! [`super::optimize`]). Kept apart from the loop so the gradient can be
//! checked against finite differences.
//!
//! Gradient chain: ∂c/∂ρ̄ₑ = −p ρ̄ₑᵖ⁻¹ (E0 − Emin) cₑ (the adjoint of
//! min-compliance is u itself), times dρ̄/dρ̃ (projection), through Fᵀ
//! (filter). Passive elements have zero slope, so nothing flows through
//! them. Loads on fixed DOFs are dropped (they are reactions).

use super::backend::OperatorKind;
use super::design::{DesignBackend, Fields};
use super::element::hex8_stiffness;
use super::mg::{CoarseSolver, ElasticMg};
use super::operator::ElasticOperator;
use super::problem::Problem;
use crate::backend::BackendError;
use crate::linalg::precond::Preconditioner;
use crate::linalg::{
    build_precond, CgInfo, CgParams, Krylov, KrylovMethod, PrecondKind, PrecondOptions, RefineMode,
    SolveError, Stop,
};

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
    /// `mg`: how the coarsest level is solved.
    pub mg_coarse: CoarseSolver,
    /// `mg`: coarse levels (from the top) solved by two passes (W-cycle).
    pub mg_w_levels: usize,
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
            mg_coarse: CoarseSolver::default(),
            mg_w_levels: super::mg::W_LEVELS,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OptimizeError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// The solve's error is in the message and deliberately not a
    /// `source`: printed with its chain it would appear twice.
    #[error("elastic solve failed at iteration {iteration}: {cause}")]
    Solve { iteration: usize, cause: SolveError },
    #[error("the optimization needs at least one iteration (max_iterations is 0)")]
    NoIterations,
}

impl OptimizeError {
    /// The same error, attributed to design iteration `iteration`.
    pub fn at(self, iteration: usize) -> OptimizeError {
        match self {
            OptimizeError::Solve { cause, .. } => OptimizeError::Solve { iteration, cause },
            e => e,
        }
    }
}

/// What one evaluation returns to the host.
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
    /// rest of an iteration being design-field work (filter, projection, OC).
    pub solve_seconds: f64,
}

/// The scalars of one evaluation whose fields stay on the device
/// ([`Evaluator::step`]); the gradients are in [`Evaluator::fields`].
pub struct StepScalars {
    pub compliance: f64,
    pub volume: f64,
    pub grayness: f64,
    pub cg: CgInfo,
    pub cg_failed: bool,
    pub solve_seconds: f64,
}

/// The device operator, the Krylov method (refinement) with its work
/// vectors, the warm-start
/// displacement and the design fields, kept across evaluations.
pub struct Evaluator<'a, B: DesignBackend> {
    be: &'a B,
    problem: &'a Problem,
    op: ElasticOperator<B>,
    krylov: Krylov<B>,
    f: B::Vector,
    u: B::Vector,
    /// The multigrid hierarchy, allocated at the first solve and refreshed
    /// (moduli, diagonals) at every later one.
    mg: Option<ElasticMg<B>>,
    pub mask: B::Mask,
    pub fields: Fields<B::Vector>,
    s: B::Scalars,
    solve: SolveOptions,
}

impl<'a, B: DesignBackend> Evaluator<'a, B> {
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
            krylov: Krylov::new(be, KrylovMethod::Refined(solve.mode), mesh.dofs())?,
            f: be.upload(&f_host)?,
            u: be.zeros(mesh.dofs())?,
            mg: None,
            mask: be.design_mask(&problem.passive)?,
            fields: Fields::new(be, mesh.elements())?,
            s: be.scalars(4)?,
            solve,
        })
    }

    /// Displacements of the last solve, on the host.
    pub fn displacement(&self) -> Result<Vec<f64>, BackendError> {
        self.be.download(&self.u)
    }

    /// The multigrid hierarchy in use (after the first `mg` solve).
    pub fn multigrid(&self) -> Option<&ElasticMg<B>> {
        self.mg.as_ref()
    }

    /// Solves at design `x` (on the device; warm-started from the previous
    /// solution) and leaves ρ̄, dc, dv in [`Self::fields`]; only scalars
    /// come back.
    pub fn step(
        &mut self,
        filter: &B::Filter,
        penal: f64,
        beta: f64,
        x: &B::Vector,
    ) -> Result<StepScalars, OptimizeError> {
        let (be, n) = (self.be, self.problem.mesh.elements());
        let map = super::design::DesignMap {
            filter,
            mask: &self.mask,
            beta,
            penal,
        };
        be.design_physical(&map, x, &mut self.fields, &mut self.op.op, &mut self.s, 0)?;
        let t_solve = std::time::Instant::now();
        self.op.refresh_diagonal(be)?;
        let failed = |cause| OptimizeError::Solve {
            iteration: 0,
            cause,
        };
        let opts = &self.solve;
        let mut built: Box<dyn Preconditioner<B, ElasticOperator<B>>>;
        let m: &mut dyn Preconditioner<B, ElasticOperator<B>> = match opts.precond {
            PrecondKind::Multigrid => {
                let p = self.problem;
                match self.mg.as_mut() {
                    Some(mg) => mg.refresh(be, &mut self.op).map_err(failed)?,
                    None => {
                        let c = opts.mg_coarse;
                        let mg = ElasticMg::new(be, &mut self.op, p.mesh, &p.fixed, p.nu, c)
                            .map(|m| {
                                m.with_coarse_rtol(opts.mg_coarse_rtol)
                                    .with_w_levels(opts.mg_w_levels)
                            })
                            .map_err(failed)?;
                        self.mg = Some(mg);
                    }
                }
                self.mg.as_mut().expect("built above")
            }
            kind => {
                built = build_precond(kind, be, &mut self.op, None, &opts.precond_opts)
                    .map_err(failed)?;
                built.as_mut()
            }
        };
        // A preconditioner that costs far more than a read-back (mg) checks
        // the residual every iteration: on a GPU the backend's interval (10)
        // would add up to 9 V-cycles per solve.
        let mut params = opts.cg.clone();
        if let Some(k) = m.check_interval() {
            params.check_every = k;
        }
        self.krylov.set_params(params);
        let mut info = CgInfo::default();
        let solved = self
            .krylov
            .solve_into(be, &mut self.op, m, &self.f, &mut self.u, &mut info);
        let cg_failed = match solved {
            Ok(()) => false,
            Err(SolveError::NoConvergence { .. } | SolveError::Stagnated { .. })
                if info.rel_residual.is_finite() && info.rel_residual < 1.0 =>
            {
                true
            }
            Err(err) => return Err(failed(err)),
        };
        let solve_seconds = t_solve.elapsed().as_secs_f64();
        let map = super::design::DesignMap {
            filter,
            mask: &self.mask,
            beta,
            penal,
        };
        be.design_sensitivities(
            &map,
            &self.u,
            &mut self.fields,
            &mut self.op.op,
            &mut self.s,
            2,
        )?;
        // [Σ ρ̄, Σ ρ̄(1 − ρ̄), compliance]: the one read-back of the step.
        let s = be.read_scalars(&self.s)?;
        Ok(StepScalars {
            compliance: s[2],
            volume: s[0] / n as f64,
            grayness: 4.0 * s[1] / n as f64,
            cg: info,
            cg_failed,
            solve_seconds,
        })
    }

    /// [`Self::step`] from a host design, with the gradients downloaded
    /// (the finite-difference check and other host callers).
    pub fn evaluate(
        &mut self,
        filter: &B::Filter,
        penal: f64,
        beta: f64,
        x: &[f64],
    ) -> Result<Evaluation, OptimizeError> {
        let xd = self.be.upload(x)?;
        let r = self.step(filter, penal, beta, &xd)?;
        Ok(Evaluation {
            compliance: r.compliance,
            volume: r.volume,
            grayness: r.grayness,
            dc: self.be.download(&self.fields.dc)?,
            dv: self.be.download(&self.fields.dv)?,
            cg: r.cg,
            cg_failed: r.cg_failed,
            solve_seconds: r.solve_seconds,
        })
    }
}

/// Compliance fᵀu of `problem` at uniform physical density `rho` (no
/// filter, no optimization), with its solve report.
pub fn uniform_compliance<B: DesignBackend>(
    be: &B,
    problem: &Problem,
    rho: f64,
    params: &SolveOptions,
) -> Result<(f64, CgInfo), OptimizeError> {
    let mut ev = Evaluator::new(be, problem, OperatorKind::NodeCentred, params.clone())?;
    let x = vec![rho; problem.mesh.elements()];
    // rmin < 1: the filter keeps only the element itself. A tiny β makes
    // the projection the identity to O(β²).
    let filter = be.design_filter(&problem.mesh, 0.5)?;
    let r = ev.evaluate(&filter, problem.penal, 1e-6, &x)?;
    if r.cg_failed {
        return Err(OptimizeError::Solve {
            iteration: 0,
            cause: SolveError::NoConvergence {
                iters: r.cg.iterations,
                rel: r.cg.rel_residual,
                rtol: params.cg.stop.rtol,
            },
        });
    }
    Ok((r.compliance, r.cg))
}
