//! The SIMP loop, written once against [`ElasticBackend`](super::ElasticBackend). Per iteration:
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
//! Every step runs where the backend keeps its fields ([`DesignBackend`]:
//! the CPU's rayon loops, or GPU kernels): per iteration only scalars cross
//! to the host (volume, grayness, compliance, each OC trial's volume, the
//! change), and ρ̄ of the best iterate is downloaded once, at the end.
//!
//! The result is the best valid iterate: the lowest compliance among the
//! iterates of the final continuation stage whose physical volume is within
//! [`VOLUME_TOL`] of Vf (compliances at different p, β are not comparable).
//! If the cap ends the run before the final stage, the last stage reached
//! is used; if no iterate there is valid, the last iterate is returned and
//! `best.valid` is false.

use super::backend::OperatorKind;
use super::continuation::{Continuation, Schedule, Step};
use super::design::{DesignBackend, DesignMap, OcTrial};
use super::evaluate::Evaluator;
pub use super::evaluate::{OptimizeError, SolveOptions};
use super::oc;
use super::problem::{Passive, Problem};
use crate::backend::BackendError;
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
pub fn optimize<B: DesignBackend>(
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
    let mut filter = be.design_filter(&mesh, cont.current().rmin)?;
    let mut s = be.scalars(2)?;
    let first = DesignMap {
        filter: &filter,
        mask: &eval.mask,
        beta: cont.current().beta,
        penal: cont.current().penal,
    };
    let x = initial_design(be, problem, &first, &mut s)?;
    let mut oc_state = OcState {
        x,
        x_new: be.zeros(n_el)?,
        s,
        lambda_hint: None,
    };
    let mut kept = BestSoFar::<B> {
        best: None,
        stage: 0,
        rho: be.zeros(n_el)?,
    };
    let mut history = Vec::new();
    let (mut cg_failures, mut cg_total) = (0, 0);
    let mut stop = StopReason::IterationCap;
    // At least one iterate, so there is always a result.
    for iteration in 1..=opts.max_iterations.max(1) {
        let t0 = Instant::now();
        let stage = cont.current();
        let ev = eval
            .step(&filter, stage.penal, stage.beta, &oc_state.x)
            .map_err(|e| e.at(iteration))?;
        let (info, failed) = (&ev.cg, ev.cg_failed);
        cg_total += info.iterations;
        cg_failures += failed as usize;
        let (oc_info, change) = oc_step(
            be,
            &mut eval,
            (&filter, stage),
            (problem.volfrac, n_el),
            &mut oc_state,
        )?;
        let it = Iterate {
            iteration,
            compliance: ev.compliance,
            volume: ev.volume,
            grayness: ev.grayness,
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
        kept.offer(be, &it, &eval.fields.rho, problem.volfrac)?;
        observer(&it);
        history.push(it);

        match cont.advance(ev.compliance, change) {
            Step::Continue => {}
            Step::NextStage => {
                let s = cont.current();
                if s.rmin != stage.rmin {
                    filter = be.design_filter(&mesh, s.rmin)?;
                }
            }
            Step::Converged => {
                stop = StopReason::Converged;
                break;
            }
        }
    }
    let mut best = kept
        .best
        .expect("max_iterations ≥ 1 gives at least one iterate");
    best.rho = be.download(&kept.rho)?;
    Ok(Outcome {
        history,
        best,
        stop,
        cg_failures,
        cg_iterations: cg_total,
    })
}

/// The design between OC steps: x, the trial buffer, the device scalars
/// and the previous step's multiplier (the next search starts from it).
struct OcState<B: DesignBackend> {
    x: B::Vector,
    x_new: B::Vector,
    s: B::Scalars,
    lambda_hint: Option<f64>,
}

/// Step 6, the OC update of `state.x` at `stage` (with `filter`), holding
/// the volume of `n_el` elements at `volfrac`: the multiplier search on the
/// host, each trial on the device. Returns the search's report and the
/// change max |x_new − x|.
fn oc_step<B: DesignBackend>(
    be: &B,
    eval: &mut Evaluator<'_, B>,
    (filter, stage): (&B::Filter, super::continuation::Stage),
    (volfrac, n_el): (f64, usize),
    state: &mut OcState<B>,
) -> Result<(oc::OcInfo, f64), BackendError> {
    let OcState {
        x,
        x_new,
        s,
        lambda_hint,
    } = state;
    be.oc_prepare(&eval.mask, &mut eval.fields, s, 0)?;
    let sc = be.read_scalars(s)?;
    let centre = oc::centre(sc[0], sc[1] as usize);
    let map = DesignMap {
        filter,
        mask: &eval.mask,
        beta: stage.beta,
        penal: stage.penal,
    };
    let n_el = n_el as f64;
    let oc_info = oc::search(centre, *lambda_hint, volfrac, |t| {
        let trial = OcTrial {
            x: &*x,
            root: &eval.fields.root,
            scale: (-0.5 * t).exp(), // 1/√λ
            move_limit: stage.move_limit,
        };
        be.oc_trial(&map, trial, x_new, s, 0)?;
        Ok::<f64, BackendError>(be.read_scalars(s)?[0] / n_el - volfrac)
    })?;
    *lambda_hint = Some(oc_info.lambda);
    be.max_abs_diff(x, x_new, s, 1)?;
    let change = be.read_scalars(s)?[1];
    std::mem::swap(x, x_new);
    Ok((oc_info, change))
}

/// The best iterate so far and its ρ̄, copied on the device: among the
/// valid iterates of the latest stage reached the lowest compliance; until
/// one is valid, the latest.
struct BestSoFar<B: DesignBackend> {
    best: Option<Best>,
    stage: usize,
    rho: B::Vector,
}

impl<B: DesignBackend> BestSoFar<B> {
    /// Keeps `it` (with the physical densities `rho`) if it is the best.
    fn offer(
        &mut self,
        be: &B,
        it: &Iterate,
        rho: &B::Vector,
        volfrac: f64,
    ) -> Result<(), BackendError> {
        if it.stage > self.stage {
            self.best = None;
            self.stage = it.stage;
        }
        // Validity is the volume alone: a solve stopped by the CG cap still
        // gives a usable compliance (its residual is recorded in the history
        // and summary).
        let valid = (it.volume - volfrac).abs() <= VOLUME_TOL;
        let replace = match &self.best {
            None => true,
            Some(b) => match (valid, b.valid) {
                (true, true) => it.compliance < b.compliance,
                (true, false) | (false, false) => true,
                (false, true) => false,
            },
        };
        if replace {
            be.copy(rho, &mut self.rho)?;
            self.best = Some(Best {
                iteration: it.iteration,
                compliance: it.compliance,
                volume: it.volume,
                grayness: it.grayness,
                valid,
                rho: Vec::new(),
            });
        }
        Ok(())
    }
}

/// A uniform design value x₀ on the design elements (passive ones at 1 / 0)
/// chosen by bisection so that the first physical field already has volume
/// Vf: the projection maps a uniform Vf to less than Vf (for Vf < η), so
/// starting at x = Vf would make the first iterate infeasible. Each trial is
/// formed on the device as an OC trial of x = 1 (passive 1 / 0), root 1
/// (−1 on passive elements), scale x₀ and move 1: clamp(x₀, [0, 1]) = x₀.
fn initial_design<B: DesignBackend>(
    be: &B,
    problem: &Problem,
    map: &DesignMap<'_, B>,
    s: &mut B::Scalars,
) -> Result<B::Vector, BackendError> {
    let (ones, root): (Vec<f64>, Vec<f64>) = (problem.passive.iter())
        .map(|p| match p {
            Passive::Design => (1.0, 1.0),
            Passive::Solid => (1.0, -1.0),
            Passive::Void => (0.0, -1.0),
        })
        .unzip();
    let (ones, root) = (be.upload(&ones)?, be.upload(&root)?);
    let n = problem.mesh.elements() as f64;
    let mut y = be.zeros(problem.mesh.elements())?;
    let trial = |scale| OcTrial {
        x: &ones,
        root: &root,
        scale,
        move_limit: 1.0,
    };
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..50 {
        let mid = 0.5 * (lo + hi);
        be.oc_trial(map, trial(mid), &mut y, s, 0)?;
        if be.read_scalars(s)?[0] / n < problem.volfrac {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    be.oc_trial(map, trial(0.5 * (lo + hi)), &mut y, s, 0)?;
    Ok(y)
}
