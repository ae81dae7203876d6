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
use super::continuation::{Continuation, Schedule, Step};
use super::evaluate::{Evaluator, Physical};
pub use super::evaluate::{OptimizeError, SolveOptions};
use super::filter::DensityFilter;
use super::oc;
use super::problem::{Passive, Problem};
use rayon::prelude::*;
use std::time::Instant;

/// How far the physical volume may miss Vf for an iterate to be valid.
pub const VOLUME_TOL: f64 = 1e-3;

#[derive(Clone, Debug)]
pub struct OptimizeOptions {
    pub max_iterations: usize,
    pub operator: OperatorKind,
    pub cg: SolveOptions,
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
    /// Of which the elastic solve (see `Evaluation::solve_seconds`).
    pub solve_seconds: f64,
    /// Volume evaluations of the OC multiplier search.
    pub oc_evaluations: usize,
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

/// Runs the optimization; `observer` sees each iterate as it completes.
pub fn optimize<B: ElasticBackend>(
    be: &B,
    problem: &Problem,
    opts: &OptimizeOptions,
    observer: &mut dyn FnMut(&Iterate),
) -> Result<Outcome, OptimizeError> {
    if opts.max_iterations == 0 {
        return Err(OptimizeError::NoIterations);
    }
    let mesh = problem.mesh;
    let n_el = mesh.elements();
    let mut eval = Evaluator::new(be, problem, opts.operator, opts.cg.clone())?;
    let mut cont = Continuation::new(opts.schedule.clone());
    let mut filter = DensityFilter::new(mesh, cont.current().rmin);
    let mut x = initial_design(problem, &filter, cont.current().beta);

    let mut history = Vec::new();
    let mut best: Option<Best> = None;
    let mut best_stage = 0;
    let (mut cg_failures, mut cg_total) = (0, 0);
    let mut stop = StopReason::IterationCap;
    let mut x_new = vec![0.0; n_el];
    let mut lambda_hint = None;
    // At least one iterate, so there is always a result.
    for iteration in 1..=opts.max_iterations.max(1) {
        let t0 = Instant::now();
        let stage = cont.current();
        let ev = eval
            .evaluate(&filter, stage.penal, stage.beta, &x)
            .map_err(|e| e.at(iteration))?;
        let (info, failed) = (&ev.cg, ev.cg_failed);
        cg_total += info.iterations;
        cg_failures += failed as usize;
        let (compliance, volume, grayness) = (ev.compliance, ev.volume, ev.grayness);
        let rho = eval.rho();

        let vol_of = |y: &[f64]| Physical::volume_of(&filter, stage.beta, y, &problem.passive);
        let step = oc::OcStep {
            x: &x,
            dc: &ev.dc,
            dv: &ev.dv,
            design: eval.design(),
            move_limit: stage.move_limit,
            target: problem.volfrac,
            lambda_hint,
        };
        let oc_info = oc::update(&step, vol_of, &mut x_new);
        lambda_hint = Some(oc_info.lambda);
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
            cg_switched: !info.precision_switches.is_empty(),
            cg_failed: failed,
            seconds: t0.elapsed().as_secs_f64(),
            solve_seconds: ev.solve_seconds,
            oc_evaluations: oc_info.evaluations,
        };
        // Best valid iterate of the latest stage reached.
        if cont.stage > best_stage {
            best = None;
            best_stage = cont.stage;
        }
        // Validity is the volume alone: a solve stopped by the CG cap still
        // gives a usable compliance (its residual is recorded in the history
        // and summary).
        let valid = (volume - problem.volfrac).abs() <= VOLUME_TOL;
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
                rho: rho.to_vec(),
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

/// A uniform design value x₀ on the design elements (passive ones at 1 / 0)
/// chosen by bisection so that the first physical field already has volume
/// Vf: the projection maps a uniform Vf to less than Vf (for Vf < η), so
/// starting at x = Vf would make the first iterate infeasible.
fn initial_design(problem: &Problem, filter: &DensityFilter, beta: f64) -> Vec<f64> {
    let with = |x0: f64| -> Vec<f64> {
        problem
            .passive
            .iter()
            .map(|p| match p {
                Passive::Design => x0,
                Passive::Solid => 1.0,
                Passive::Void => 0.0,
            })
            .collect()
    };
    let volume = |x0: f64| Physical::volume_of(filter, beta, &with(x0), &problem.passive);
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        if volume(mid) < problem.volfrac {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    with(0.5 * (lo + hi))
}
