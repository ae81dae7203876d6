//! The SIMP loop, written once against [`ElasticBackend`]. Per iteration:
//!
//! 1. physical densities ρ̄ = H_β(F x) (filter, projection), passive
//!    elements forced to 1 / 0;
//! 2. moduli Eₑ = Emin + ρ̄ₑᵖ (E0 − Emin) to the device, Jacobi diagonal;
//! 3. K u = f by PCG from the previous u (warm start);
//! 4. compliance c = fᵀu = Σ Eₑ cₑ with cₑ = uₑᵀ Kₑ uₑ;
//! 5. sensitivities ∂c/∂ρ̄ₑ = −p ρ̄ₑᵖ⁻¹ (E0 − Emin) cₑ and ∂V/∂ρ̄ₑ = 1/N,
//!    chained through the projection derivative and the filter transpose;
//! 6. OC update of x with the physical volume held at Vf;
//! 7. continuation ([`super::continuation`]) decides the next stage or stop.
//!
//! Filter, projection and OC run on the host (rayon); only the elastic
//! solve and the energies go through the backend.
//!
//! The result is the best valid iterate: the lowest compliance among the
//! iterates of the final continuation stage whose physical volume is within
//! [`VOLUME_TOL`] of Vf (compliances at different p, β are not comparable).
//! If the cap ends the run before the final stage, the last stage reached
//! is used; if no iterate there is valid, the last iterate is returned and
//! `best.valid` is false.

use super::backend::{ElasticBackend, OperatorKind};
use super::cg::{self, CgError, CgInfo, CgParams, Workspace};
use super::continuation::{Continuation, Schedule, Step};
use super::element::hex8_stiffness;
use super::filter::DensityFilter;
use super::oc;
use super::problem::{Passive, Problem, E0, E_MIN};
use super::projection;
use crate::backend::BackendError;
use rayon::prelude::*;
use std::time::Instant;

/// How far the physical volume may miss Vf for an iterate to be valid.
pub const VOLUME_TOL: f64 = 1e-3;

#[derive(Clone, Debug)]
pub struct OptimizeOptions {
    pub max_iterations: usize,
    pub operator: OperatorKind,
    pub cg: CgParams,
    pub schedule: Schedule,
}

/// One iteration: the state of design ρ̄ₖ and its solve.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Iterate {
    /// 1-based.
    pub iteration: usize,
    pub compliance: f64,
    /// Physical volume fraction.
    pub volume: f64,
    /// 4/N Σ ρ̄(1 − ρ̄).
    pub grayness: f64,
    /// max |x_new − x| of the OC step that followed.
    pub change: f64,
    pub stage: usize,
    pub penal: f64,
    pub beta: f64,
    pub cg_iterations: usize,
    pub cg_rel_residual: f64,
    /// Outer residual corrections of the solve.
    pub cg_outer: usize,
    /// The mixed solve fell back to the f64 inner operator.
    pub cg_switched: bool,
    /// PCG stopped without reaching rtol (cap or stagnation).
    pub cg_failed: bool,
    /// Wall time of the iteration.
    pub seconds: f64,
}

#[derive(Clone, Debug)]
pub struct Best {
    pub iteration: usize,
    pub compliance: f64,
    pub volume: f64,
    pub grayness: f64,
    pub valid: bool,
    /// Physical densities.
    pub rho: Vec<f64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Final stage, design change below tolerance.
    Converged,
    /// `max_iterations` reached first.
    IterationCap,
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub history: Vec<Iterate>,
    pub best: Best,
    pub stop: StopReason,
    /// Solves that did not reach rtol.
    pub cg_failures: usize,
    pub cg_iterations: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum OptimizeError {
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error("elastic solve failed at iteration {iteration}: {source}")]
    Solve { iteration: usize, source: CgError },
}

/// Runs the optimization; `observer` sees each iterate as it completes.
pub fn optimize<B: ElasticBackend>(
    be: &B,
    problem: &Problem,
    opts: &OptimizeOptions,
    observer: &mut dyn FnMut(&Iterate),
) -> Result<Outcome, OptimizeError> {
    let mesh = problem.mesh;
    let (n_el, n_dof) = (mesh.elements(), mesh.dofs());
    let ke = hex8_stiffness(problem.nu);
    let mut op = be.elastic_new(&mesh, &ke, &problem.fixed, opts.operator)?;
    let mut work = Workspace::new(be, n_dof)?;
    // Forces on fixed DOFs are reactions, not loads: zero them (backend.rs).
    let f_host: Vec<f64> = (0..n_dof)
        .map(|d| if problem.fixed[d] { 0.0 } else { problem.force[d] })
        .collect();
    let f = be.upload(&f_host)?;
    let mut u = be.zeros(n_dof)?;

    let design: Vec<bool> = problem.passive.iter().map(|&p| p == Passive::Design).collect();
    let mut x: Vec<f64> = problem
        .passive
        .iter()
        .map(|p| match p {
            Passive::Design => problem.volfrac,
            Passive::Solid => 1.0,
            Passive::Void => 0.0,
        })
        .collect();
    let mut cont = Continuation::new(opts.schedule.clone());
    let mut filter = DensityFilter::new(mesh, cont.current().rmin);
    let mut physical = Physical::new(n_el);

    let mut history = Vec::new();
    let mut best: Option<Best> = None;
    let mut best_stage = 0;
    let (mut cg_failures, mut cg_total) = (0, 0);
    let mut stop = StopReason::IterationCap;
    let mut x_new = vec![0.0; n_el];
    for iteration in 1..=opts.max_iterations {
        let t0 = Instant::now();
        let stage = cont.current();
        physical.update(&filter, stage.beta, &x, &problem.passive);
        let rho = &physical.rho;

        // E = Emin + ρ̄ᵖ (E0 − Emin)
        let e: Vec<f64> = rho
            .par_iter()
            .map(|&r| E_MIN + r.powf(stage.penal) * (E0 - E_MIN))
            .collect();
        be.elastic_set_moduli(&mut op, &e)?;
        work.refresh_diagonal(be, &mut op)?;
        let (info, failed) = match cg::solve(be, &mut op, &f, &mut u, &mut work, &opts.cg) {
            Ok(info) => (info, false),
            Err(err) => match err.info() {
                Some(info) if info.rel_residual.is_finite() && info.rel_residual < 1.0 => {
                    (info, true)
                }
                _ => return Err(OptimizeError::Solve { iteration, source: err }),
            },
        };
        cg_total += info.iterations;
        cg_failures += failed as usize;

        let ce = be.element_energies(&mut op, &u)?;
        let compliance: f64 = e.par_iter().zip(ce.par_iter()).map(|(e, c)| e * c).sum();
        let volume = mean(rho);
        let grayness = 4.0 * rho.par_iter().map(|r| r * (1.0 - r)).sum::<f64>() / n_el as f64;

        // Sensitivities with respect to ρ̄, then ρ̃ (projection), then x (filter).
        let mut dc: Vec<f64> = (0..n_el)
            .into_par_iter()
            .map(|i| {
                let dr = if design[i] {
                    -stage.penal * rho[i].powf(stage.penal - 1.0) * (E0 - E_MIN) * ce[i]
                } else {
                    0.0
                };
                dr * physical.slope[i]
            })
            .collect();
        let mut dv: Vec<f64> = (0..n_el)
            .into_par_iter()
            .map(|i| if design[i] { physical.slope[i] / n_el as f64 } else { 0.0 })
            .collect();
        let mut tmp = vec![0.0; n_el];
        filter.apply_transpose(&dc, &mut tmp);
        std::mem::swap(&mut dc, &mut tmp);
        filter.apply_transpose(&dv, &mut tmp);
        std::mem::swap(&mut dv, &mut tmp);

        let mut trial = Physical::new(n_el);
        let vol_of = |y: &[f64]| {
            trial.update_rho(&filter, stage.beta, y, &problem.passive);
            mean(&trial.rho)
        };
        oc::update(
            &x,
            &dc,
            &dv,
            &design,
            stage.move_limit,
            problem.volfrac,
            vol_of,
            &mut x_new,
        );
        let change = x
            .par_iter()
            .zip(x_new.par_iter())
            .map(|(a, b)| (a - b).abs())
            .reduce(|| 0.0, f64::max);
        std::mem::swap(&mut x, &mut x_new);

        let it = Iterate {
            iteration,
            compliance,
            volume,
            grayness,
            change,
            stage: cont.stage,
            penal: stage.penal,
            beta: stage.beta,
            cg_iterations: info.iterations,
            cg_rel_residual: info.rel_residual,
            cg_outer: info.outer,
            cg_switched: info.switched_to_f64,
            cg_failed: failed,
            seconds: t0.elapsed().as_secs_f64(),
        };
        // Best valid iterate of the latest stage reached.
        if cont.stage > best_stage {
            best = None;
            best_stage = cont.stage;
        }
        let valid = (volume - problem.volfrac).abs() <= VOLUME_TOL && !failed;
        // Among valid iterates the lowest compliance; until one is valid,
        // the latest.
        let replace = match &best {
            None => true,
            Some(b) => match (valid, b.valid) {
                (true, true) => compliance < b.compliance,
                (true, false) | (false, false) => true,
                (false, true) => false,
            },
        };
        if replace {
            best = Some(Best {
                iteration,
                compliance,
                volume,
                grayness,
                valid,
                rho: rho.clone(),
            });
        }
        observer(&it);
        history.push(it);

        match cont.advance(compliance, change) {
            Step::Continue => {}
            Step::NextStage => {
                let s = cont.current();
                if s.rmin != stage.rmin {
                    filter = DensityFilter::new(mesh, s.rmin);
                }
            }
            Step::Converged => {
                stop = StopReason::Converged;
                break;
            }
        }
    }
    let best = best.expect("max_iterations ≥ 1 gives at least one iterate");
    Ok(Outcome {
        history,
        best,
        stop,
        cg_failures,
        cg_iterations: cg_total,
    })
}

/// ρ̄ = passive(H_β(F x)) and the slope dρ̄/dρ̃ (0 on passive elements).
struct Physical {
    filtered: Vec<f64>,
    rho: Vec<f64>,
    slope: Vec<f64>,
}

impl Physical {
    fn new(n: usize) -> Physical {
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

    fn update_rho(&mut self, filter: &DensityFilter, beta: f64, x: &[f64], passive: &[Passive]) {
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
}

fn mean(v: &[f64]) -> f64 {
    v.par_iter().sum::<f64>() / v.len() as f64
}

/// The compliance fᵀu of `problem` at uniform physical density `rho`
/// (no optimization), with its solve report: a check of the operator and
/// the solver against mesh refinement and energy balance.
pub fn uniform_compliance<B: ElasticBackend>(
    be: &B,
    problem: &Problem,
    rho: f64,
    params: &CgParams,
) -> Result<(f64, CgInfo), OptimizeError> {
    let mesh = problem.mesh;
    let ke = hex8_stiffness(problem.nu);
    let mut op = be.elastic_new(&mesh, &ke, &problem.fixed, OperatorKind::NodeCentred)?;
    let e = vec![E_MIN + rho.powf(problem.penal) * (E0 - E_MIN); mesh.elements()];
    be.elastic_set_moduli(&mut op, &e)?;
    let mut work = Workspace::new(be, mesh.dofs())?;
    work.refresh_diagonal(be, &mut op)?;
    let f_host: Vec<f64> = (0..mesh.dofs())
        .map(|d| if problem.fixed[d] { 0.0 } else { problem.force[d] })
        .collect();
    let f = be.upload(&f_host)?;
    let mut u = be.zeros(mesh.dofs())?;
    let info = cg::solve(be, &mut op, &f, &mut u, &mut work, params)
        .map_err(|source| OptimizeError::Solve { iteration: 0, source })?;
    let u = be.download(&u)?;
    Ok((f_host.iter().zip(&u).map(|(a, b)| a * b).sum(), info))
}
