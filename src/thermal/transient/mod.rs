//! Transient simulation, backward Euler, generic over the backend like the
//! steady driver: stack → power schedule → assembly (once; on a GPU from
//! compact inputs on the device: A, C, the films and the power of
//! each trace row by kernels, the host keeping only the films' planes) →
//! [`Stepper`]
//! (matrix A + C/Δt and preconditioner on the device, once) → one PCG solve
//! per step, warm-started from the previous field (a linear stack's
//! backward Euler from 2θⁿ − θⁿ⁻¹, `Stepper::extrapolate`) → per-step records and
//! a [`TransientSummary`]. A temperature-dependent stack (k, c laws or
//! leakage) steps through `nonlinear::StepPhysics`, one step for every
//! backend over `thermal::device::nonlinear::NonlinearOps`: semi-implicit or
//! iterated, A(T), C(T) and the leakage re-built where the solve runs.
//! The run's inputs and errors are in `options`.
//!
//! A step's record (layer max/mean, block min/mean/max, probes, energy
//! balance) is reduced where the solve runs when the caller asks for the
//! field only where an output reads it ([`StepField::Needed`]) and the
//! stack is linear and film-cooled: the backend's post-solve statistics
//! (`reduce`) bring down kilobytes, the stored heat is Σ C θ' on the
//! device, and the field itself comes down only on snapshot steps and the
//! last. The CPU takes the same partials from its field in memory, so the
//! path is one. Otherwise (every field asked for, a temperature-dependent
//! stack, whose films and stored heat the step updates on the host, or a
//! liquid-cooled one, whose coolant heat reads the field on the host) the
//! field is downloaded after each step into host buffers reused every step,
//! and one fused pass (`probe::absorb`) turns it into θ and T and takes the
//! layer statistics and the stored heat. Either way the solver state stays
//! on the device and the record is output work, timed apart from the solve
//! (`solve_s` vs `probe_s`).

mod adaptive;
mod level;
mod nonlinear;
mod options;
mod probe;
mod reduce;
mod report;
pub mod scheme;
pub mod state;
mod stepper;
mod system;
mod trbdf2;

pub use options::{InitState, Scheme, StepField, Stepping, TransientError, TransientOptions};
pub use probe::{ordered_sum, BlockTemps, StepEnergy, StepRecord};
pub use report::StepStats;
pub use report::{EnergyTotals, TransientNonlinear, TransientSummary};
pub use stepper::{Stepper, EXTRA_VECTORS};

use super::steady::{summarize, SteadyOptions};
use super::summarize::ThermalProblem;
use super::summary::{SolverReport, Summary};
use crate::grid::Grid;
use crate::power::schedule::PowerSchedule;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::device::ThermalBackend;
use std::time::Instant;
use system::HostSys;

/// What the observer sees after each step.
pub struct StepView<'a> {
    pub record: &'a StepRecord,
    /// Temperature of every cell, K, where the field came down: every
    /// step with [`StepField::Every`], else the snapshots' and the last.
    pub temperature_k: Option<&'a [f64]>,
    /// Every `snapshot_every` steps: the field's steady-style summary and
    /// the layers' power, enough to write the maps as `solve` does.
    pub snapshot: Option<(Summary, Vec<LayerPower>)>,
}

pub type Observer<'o> =
    dyn FnMut(&StepView) -> Result<(), Box<dyn std::error::Error + Send + Sync>> + 'o;

pub struct TransientOutcome {
    pub grid: Grid,
    /// Final temperature of every cell, K.
    pub temperature_k: Vec<f64>,
    /// Layer power of the last step (maps and blocks), for the final maps.
    pub power: Vec<LayerPower>,
    /// One per step, after `records[0]`, the initial state (step 0, t = 0).
    pub records: Vec<StepRecord>,
    /// `<layer>.<block>` per entry of `StepRecord::blocks`.
    pub block_names: Vec<String>,
    pub summary: TransientSummary,
    /// A steady-style summary of the final field (final maps' summary.json).
    pub final_summary: Summary,
    /// End time of every accepted step of an adaptive run, s (empty for
    /// fixed steps, which end at the records' times).
    pub step_ends_s: Vec<f64>,
}

/// Whether the device holds the run's vectors: the stepper's, the iterated
/// step's, a temperature-dependent stack's and TR-BDF2's stages.
fn check_capacity<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    opts: &TransientOptions,
) -> Result<(), TransientError> {
    let nonlinear = stack.is_nonlinear();
    let iterated = nonlinear && opts.solver.nonlinear.transient_iterations > 0;
    let nl_vectors = match nonlinear {
        true => nonlinear::extra_vectors(stack, &opts.solver),
        false => 0,
    };
    // TR-BDF2: θⁿ, θ_γ and F(θⁿ) (θⁿ shared with the iterated step's).
    let stage_vectors = match opts.stepping.scheme {
        Scheme::TrBdf2 => 2 + usize::from(!iterated),
        Scheme::BackwardEuler => 0,
    };
    // The reduced records' θ of the last level and of the new one; θⁿ⁻¹
    // for a linear stack's backward-Euler guess.
    let reduce_vectors = 2 * usize::from(reduces(stack, opts))
        + usize::from(!nonlinear && opts.stepping.scheme == Scheme::BackwardEuler);
    be.check_capacity_with(
        grid.len(),
        stepper::EXTRA_VECTORS
            + usize::from(iterated)
            + nl_vectors
            + stage_vectors
            + reduce_vectors,
    )?;
    Ok(())
}

/// Whether the records are reduced where the solve runs (`reduce`): asked
/// for, and a stack whose record needs nothing of the host's (no
/// temperature-dependent step, no coolant).
fn reduces(stack: &Stack, opts: &TransientOptions) -> bool {
    opts.step_field == StepField::Needed && !stack.is_nonlinear() && !stack.has_cavities()
}

/// The run's records, the initial one first, by fixed steps or adaptive
/// intervals; with the step statistics and, when adaptive, every step's end.
fn run_steps<'c, B: ThermalBackend + 'static>(
    lv: &mut level::Level<'c, B>,
    cx: &level::RunContext<'c, B>,
    observer: &mut Observer,
) -> Result<(Vec<StepRecord>, StepStats, Vec<f64>), TransientError> {
    let opts = cx.opts;
    let mut records = Vec::with_capacity(opts.steps + 1);
    records.push(lv.initial_record(cx)?);
    let scheme = opts.stepping.scheme;
    let tol = opts
        .stepping
        .time_tol_k
        .filter(|_| scheme == Scheme::TrBdf2);
    let mut control = tol.map(adaptive::Control::new);
    for k in 0..opts.steps {
        let record = match &mut control {
            None => lv.step(cx, k, observer)?,
            Some(ctl) => {
                let tally = adaptive::interval(lv, cx, k, ctl)?;
                lv.record(cx, k, &tally, observer)?
            }
        };
        records.push(record);
    }
    let (step_stats, step_ends_s) = match control {
        Some(ctl) => (ctl.stats, ctl.ends_s),
        None => (StepStats::fixed(opts.steps, opts.dt), Vec::new()),
    };
    Ok((records, step_stats, step_ends_s))
}

/// Runs `stack` on its `grid` under `schedule` for `opts.steps` records
/// `opts.dt` apart, by the scheme of `opts.stepping` (fixed or adaptive
/// steps).
pub fn run_transient<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    schedule: &PowerSchedule,
    opts: &TransientOptions,
    observer: &mut Observer,
) -> Result<TransientOutcome, TransientError> {
    let t_setup = Instant::now();
    let nonlinear = stack.is_nonlinear();
    if nonlinear && stack.has_cavities() {
        return Err(TransientError::Cavity(format!(
            "{}: a transient of a liquid-cooled stack with temperature-dependent materials or \
             leakage is not stepped yet (its steady state solves); give its materials constant \
             properties and no leakage",
            stack.source.display()
        )));
    }
    // A linear stack's steady start solves on the host's matrix; anything
    // else is assembled on the device where the backend can, except the
    // coolant of a liquid-cooled stack (host assembly).
    let steady_start = matches!(opts.init, InitState::Steady | InitState::SteadyMean);
    let on_device = (nonlinear || !steady_start) && !stack.has_cavities();
    let scheme = opts.stepping.scheme;
    check_capacity(be, stack, grid, opts)?;
    be.prepare_quad_diag()?;
    let dt = opts.dt;
    let row_of_step = |k: usize| schedule.row_at((k as f64 + 0.5) * dt);

    // Assembly once: A, C and the conductances to ambient do not change
    // for a linear stack. On a GPU it is assembled there: the
    // host keeps the films and the power in, never the n-sized arrays.
    // Temperature-dependent stacks re-assemble where the solve runs, step
    // by step (`nonlinear`).
    let first_row = row_of_step(0);
    let (sys, dev, c) = system::first(be, stack, grid, schedule, first_row, on_device)?;

    let theta0 = system::initial_theta(be, stack, grid, schedule, opts, &sys, first_row)?;
    // Temperature-dependent stacks: the step's properties and leakage
    // (semi-implicit or iterated, see `nonlinear`).
    let (mut stepper, phys) = system::stepper(
        be,
        stack,
        grid,
        schedule,
        (&sys, dev),
        &theta0,
        (scheme.divisor(dt), c),
        &opts.solver,
    )?;
    stepper.use_scheme(scheme, dt, !nonlinear)?;
    let layer_names: Vec<String> = stack.layers.iter().map(|l| l.name.clone()).collect();
    let probes = probe::block_probes(&layer_names, &schedule.base, grid);
    let points = crate::thermal::probes::probe_cells(stack, grid);
    let setup_s = t_setup.elapsed().as_secs_f64();

    let reduce = reduces(stack, opts)
        .then(|| reduce::StepReduce::new(be, grid, &schedule.base, &points, &sys, &stepper))
        .transpose()?;
    // A linear stack assembled on the device: the stored heat from Σ C θ'
    // there (the host has no C); a temperature-dependent step reports its own.
    let device_c = matches!(sys, HostSys::Device { .. }) && phys.is_none();
    let stored_prev = device_c.then(|| stepper.stored_heat()).transpose()?;
    let cx = level::RunContext {
        be,
        stack,
        grid,
        schedule,
        opts,
        probes: &probes,
        points: &points,
    };
    let mut lv = level::Level {
        power_w: sys.power_w(),
        sys,
        stepper,
        phys,
        theta: theta0.clone(),
        theta_old: theta0,
        temperature_k: vec![0.0; grid.len()],
        row: first_row,
        stored_prev,
        reduce,
        times: report::Timings {
            setup_s,
            upload_s: 0.0,
            solve_s: 0.0,
            probe_s: 0.0,
        },
    };
    let (records, step_stats, step_ends_s) = run_steps(&mut lv, &cx, observer)?;
    let level::Level {
        sys,
        stepper,
        theta_old,
        temperature_k,
        row,
        power_w,
        times,
        phys,
        ..
    } = lv;
    let linear = phys.is_none();

    let power = schedule.layer_power_at(row);
    let precond = stepper.precond_report();
    let method = stepper.method();
    let final_solver = step_solver(
        &opts.solver,
        (method, precond.clone()),
        records.last().map_or(0, |r| r.iterations),
    );
    // The final maps' summary: the final field's steady-style statistics
    // (its energy block compares power in with heat out at this instant).
    let mut final_summary = summarize(
        ThermalProblem::new(stack, grid, &power),
        sys.coupling(power_w, linear),
        &theta_old,
        &temperature_k,
        be,
        final_solver,
        vec![],
    );
    if let Some(coolant) = sys.coolant() {
        crate::thermal::liquid_steady::add_coolant(&mut final_summary, stack, coolant, &theta_old);
    }
    let summary = report::build(
        stack,
        be.report(),
        opts,
        (method, precond),
        &records,
        &final_summary,
        schedule,
        (times, step_stats),
    );
    Ok(TransientOutcome {
        grid: grid.clone(),
        temperature_k,
        power,
        records,
        block_names: probes.into_iter().map(|p| p.name).collect(),
        summary,
        final_summary,
        step_ends_s,
    })
}

/// The solver part of a snapshot's summary: the last step's solve.
fn step_solver(
    opts: &SteadyOptions,
    (method, precond): (crate::linalg::KrylovMethod, crate::linalg::PrecondReport),
    iterations: usize,
) -> SolverReport {
    SolverReport {
        method: format!("{} (one step)", method.name()),
        precision: "f64".into(),
        precond,
        rtol: opts.rtol,
        max_iter: opts.max_iter,
        iterations,
        residual_replacements: 0,
        converged: true,
        stop_reason: "rtol reached".into(),
        // Not recomputed per step; the stopping test bounds it by rtol.
        final_true_residual: f64::NAN,
        mixed: None,
    }
}
