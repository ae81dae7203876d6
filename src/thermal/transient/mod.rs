//! Transient simulation, backward Euler, generic over the backend like the
//! steady driver: stack → power schedule → assembly (once; on a GPU from
//! compact inputs on the device: A, C, the films and the power of
//! each trace row by kernels, the host keeping only the films' planes) →
//! [`Stepper`]
//! (matrix A + C/Δt and preconditioner on the device, once) → one PCG solve
//! per step, warm-started from the previous field → per-step records and
//! a [`TransientSummary`]. A temperature-dependent stack (k, c laws or
//! leakage) steps through `nonlinear::StepPhysics`, one step for every
//! backend over `thermal::device::nonlinear::NonlinearOps`: semi-implicit or
//! iterated, A(T), C(T) and the leakage re-built where the solve runs.
//! The run's inputs and errors are in `options`.
//!
//! After each step the field is downloaded for the per-step statistics
//! (layer max/mean, block max, energy balance) and for the observer
//! (snapshots, progress). The solver state stays on the device; the copy is
//! output traffic, timed apart from the solve (`solve_s` vs `probe_s`). It
//! lands in host buffers reused every step, and one fused pass
//! (`probe::absorb`) turns it into θ and T and takes the layer statistics
//! and the stored heat, so the host side costs about one read of the field.

mod nonlinear;
mod options;
mod probe;
mod report;
pub mod state;
mod stepper;
mod system;

pub use options::{InitState, TransientError, TransientOptions};
pub use probe::{ordered_sum, BlockTemps, StepEnergy, StepRecord};
pub use report::{EnergyTotals, TransientNonlinear, TransientSummary};
pub use stepper::{Stepper, EXTRA_VECTORS};

use super::steady::{summarize, SteadyOptions};
use super::summarize::ThermalProblem;
use super::summary::{SolverReport, Summary};
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::power::schedule::{cell_power, PowerSchedule};
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::device::ThermalBackend;
use std::time::Instant;
use system::HostSys;

/// What the observer sees after each step.
pub struct StepView<'a> {
    pub record: &'a StepRecord,
    /// Temperature of every cell, K.
    pub temperature_k: &'a [f64],
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
}

/// Runs `opts.steps` backward-Euler steps of `stack` under `schedule`.
pub fn run_transient<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    schedule: &PowerSchedule,
    opts: &TransientOptions,
    observer: &mut Observer,
) -> Result<TransientOutcome, TransientError> {
    let t_setup = Instant::now();
    let grid = Grid::from_stack(stack);
    let nonlinear = stack.is_nonlinear();
    let iterated = nonlinear && opts.solver.nonlinear.transient_iterations > 0;
    // A linear stack's steady start solves on the host's matrix; anything
    // else is assembled on the device where the backend can.
    let steady_start = matches!(opts.init, InitState::Steady | InitState::SteadyMean);
    let on_device = nonlinear || !steady_start;
    let nl_vectors = match nonlinear {
        true => nonlinear::extra_vectors(stack, &opts.solver),
        false => 0,
    };
    be.check_capacity_with(
        grid.len(),
        stepper::EXTRA_VECTORS + usize::from(iterated) + nl_vectors,
    )?;
    be.prepare_quad_diag()?;
    let dt = opts.dt;
    let row_of_step = |k: usize| schedule.row_at((k as f64 + 0.5) * dt);

    // Assembly once: A, C and the conductances to ambient do not change
    // for a linear stack. On a GPU it is assembled there: the
    // host keeps the films and the power in, never the n-sized arrays.
    // Temperature-dependent stacks re-assemble where the solve runs, step
    // by step (`nonlinear`).
    let first_row = row_of_step(0);
    let (mut sys, dev, c) = system::first(be, stack, &grid, schedule, first_row, on_device)?;

    let theta0 = match (&opts.init, &sys) {
        (InitState::Ambient, _) => vec![0.0; grid.len()],
        (InitState::Field(t), _) => t.iter().map(|v| v - stack.ambient_k).collect(),
        // With laws or leakage: the nonlinear steady solve for this power.
        (InitState::Steady | InitState::SteadyMean, _) if nonlinear => {
            let p = match (&opts.init, &sys) {
                (InitState::SteadyMean, _) => cell_power(&grid, &schedule.mean_layer_maps()),
                (_, HostSys::Whole(sys)) => sys.rhs.clone(),
                (_, HostSys::Device { .. }) => cell_power(&grid, &schedule.layer_maps(first_row)),
            };
            let base = &schedule.base;
            crate::thermal::nonlinear::picard::picard(
                be,
                stack,
                &grid,
                base,
                Some(&p),
                &opts.solver,
            )
            .map_err(Box::new)?
            .theta
        }
        (InitState::Steady, HostSys::Whole(sys)) => {
            system::steady_theta(be, &sys.a, &sys.rhs, &opts.solver)?
        }
        (InitState::SteadyMean, HostSys::Whole(sys)) => {
            let mean = cell_power(&grid, &schedule.mean_layer_maps());
            system::steady_theta(be, &sys.a, &mean, &opts.solver)?
        }
        (InitState::Steady | InitState::SteadyMean, HostSys::Device { .. }) => {
            return Err(BackendError::Unsupported("a steady start with device assembly").into())
        }
    };
    // Temperature-dependent stacks: the step's properties and leakage
    // (semi-implicit or iterated, see `nonlinear`).
    let (mut stepper, mut phys) = system::stepper(
        be,
        stack,
        &grid,
        schedule,
        (&sys, dev),
        &theta0,
        (dt, c),
        &opts.solver,
    )?;
    let layer_names: Vec<String> = stack.layers.iter().map(|l| l.name.clone()).collect();
    let probes = probe::block_probes(&layer_names, &schedule.base, &grid);
    let points = crate::thermal::probes::probe_cells(stack, &grid);
    let setup_s = t_setup.elapsed().as_secs_f64();

    let mut row = first_row;
    let mut power_w = sys.power_w();
    let mut records = Vec::with_capacity(opts.steps + 1);
    // Host buffers reused every step: θⁿ, θⁿ⁺¹ (K above ambient) and T (K).
    let mut theta_old = theta0;
    let mut theta = theta_old.clone();
    let mut temperature_k = vec![0.0; grid.len()];
    let ambient_k = stack.ambient_k;
    // Step 0: the initial state, so the series and the plot start at t = 0.
    let fs = probe::absorb(
        &grid,
        sys.capacity(),
        0.0,
        ambient_k,
        &mut theta,
        &theta_old,
        &mut temperature_k,
    );
    records.push(StepRecord {
        step: 0,
        time_s: 0.0,
        iterations: 0,
        trace_row: row,
        energy: StepEnergy::default(),
        layer_max_k: fs.layer_max_k,
        layer_avg_k: fs.layer_avg_k,
        blocks: probe::block_stats(&grid, &probes, &temperature_k),
        probe_k: crate::thermal::probes::read(&grid, &points, &temperature_k),
        leakage_w: match &mut phys {
            Some(ph) => ph.leakage_now(be, &stepper)?,
            None => None,
        },
        outer_iterations: None,
    });
    let (mut solve_s, mut probe_s, mut upload_s) = (0.0, 0.0, 0.0);
    // A linear stack assembled on the device: the stored heat from Σ C θ'
    // there (the host has no C); a temperature-dependent step reports its own.
    let mut stored_prev = match &sys {
        HostSys::Device { .. } if phys.is_none() => Some(stepper.stored_heat()?),
        _ => None,
    };
    // The host's capacities and rhs serve the stored heat and the power in
    // only where they stay C and P (a linear stack).
    let linear = phys.is_none();
    for k in 0..opts.steps {
        let time_s = (k + 1) as f64 * dt;
        let r = row_of_step(k);
        if r != row {
            let t = Instant::now();
            row = r;
            power_w = sys.set_row(be, &grid, schedule, row, &mut stepper, phys.as_mut())?;
            upload_s += t.elapsed().as_secs_f64();
        }
        let t = Instant::now();
        let mut step_stored = None;
        let (info_iterations, step_leak_w, outer) = match &mut phys {
            Some(ph) => {
                let o = ph.advance(be, &mut stepper, &opts.solver, k + 1, time_s)?;
                ph.films(be, sys.films_mut())?;
                power_w = o.power_w;
                step_stored = Some(o.stored_j);
                (o.iterations, o.leak_w, Some(o.outer))
            }
            None => {
                let info = stepper.step().map_err(|source| TransientError::Step {
                    step: k + 1,
                    time_s,
                    source,
                })?;
                (info.iterations, None, None)
            }
        };
        be.synchronize()?;
        solve_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        stepper.download_shifted(&mut theta)?;
        let mut fs = probe::absorb(
            &grid,
            sys.capacity().filter(|_| linear),
            stepper.c,
            ambient_k,
            &mut theta,
            &theta_old,
            &mut temperature_k,
        );
        if let Some(s) = step_stored {
            fs.stored_j = s;
        } else if let Some(prev) = &mut stored_prev {
            // Device assembly: Σ C θ' of the new level less the old one's.
            let now = stepper.stored_heat()?;
            fs.stored_j = now - *prev;
            *prev = now;
        }
        let record = StepRecord {
            step: k + 1,
            time_s,
            iterations: info_iterations,
            trace_row: row,
            energy: probe::step_energy(sys.films(), &grid, power_w, &theta, fs.stored_j, dt),
            layer_max_k: fs.layer_max_k,
            layer_avg_k: fs.layer_avg_k,
            blocks: probe::block_stats(&grid, &probes, &temperature_k),
            probe_k: crate::thermal::probes::read(&grid, &points, &temperature_k),
            leakage_w: step_leak_w,
            outer_iterations: outer,
        };
        let snap = opts
            .snapshot_every
            .is_some_and(|e| e > 0 && ((k + 1) % e == 0 || k + 1 == opts.steps));
        let snapshot = snap.then(|| {
            let power = schedule.layer_power_at(row);
            let solver = step_solver(&opts.solver, stepper.precond_report(), info_iterations);
            let s = summarize(
                ThermalProblem::new(stack, &grid, &power),
                sys.coupling(power_w, linear),
                &theta,
                &temperature_k,
                be,
                solver,
                vec![],
            );
            (s, power)
        });
        observer(&StepView {
            record: &record,
            temperature_k: &temperature_k,
            snapshot,
        })
        .map_err(TransientError::Observer)?;
        records.push(record);
        std::mem::swap(&mut theta, &mut theta_old);
        probe_s += t.elapsed().as_secs_f64();
    }

    let power = schedule.layer_power_at(row);
    let precond = stepper.precond_report();
    let final_solver = step_solver(
        &opts.solver,
        precond.clone(),
        records.last().map_or(0, |r| r.iterations),
    );
    // The final maps' summary: the final field's steady-style statistics
    // (its energy block compares power in with heat out at this instant).
    let final_summary = summarize(
        ThermalProblem::new(stack, &grid, &power),
        sys.coupling(power_w, linear),
        &theta_old,
        &temperature_k,
        be,
        final_solver,
        vec![],
    );
    let summary = report::build(
        stack,
        be.report(),
        opts,
        precond,
        &records,
        &final_summary,
        schedule,
        report::Timings {
            setup_s,
            upload_s,
            solve_s,
            probe_s,
        },
    );
    Ok(TransientOutcome {
        grid,
        temperature_k,
        power,
        records,
        block_names: probes.into_iter().map(|p| p.name).collect(),
        summary,
        final_summary,
    })
}

/// The solver part of a snapshot's summary: the last step's solve.
fn step_solver(
    opts: &SteadyOptions,
    precond: crate::linalg::PrecondReport,
    iterations: usize,
) -> SolverReport {
    SolverReport {
        method: "pcg (backward Euler step)".into(),
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
