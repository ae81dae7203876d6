//! `summary.json` of a transient run: what ran (device, Δt, steps, initial
//! state, trace, preconditioner), totals (iterations, time per step), the
//! energy account over the run and the final per-layer statistics.

use super::probe::StepRecord;
use super::scheme::Scheme;
use super::TransientOptions;
use crate::backend::DeviceReport;
use crate::linalg::PrecondReport;
use crate::power::schedule::PowerSchedule;
use crate::stack::Stack;
use crate::thermal::summary::{GridSummary, LayerSummary, Summary};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct TransientSummary {
    pub cuth_version: String,
    pub stack: String,
    pub title: Option<String>,
    pub grid: GridSummary,
    pub ambient_k: f64,
    pub device: DeviceReport,
    pub method: String,
    /// `be` or `trbdf2` (`--scheme`).
    pub scheme: String,
    /// `--time-tol`, K: adaptive steps; `None`: every step is `dt_s`.
    pub time_tol_k: Option<f64>,
    /// The steps actually taken (several per record when adaptive).
    pub stepping: StepStats,
    /// Time between records; the first and largest step when adaptive.
    pub dt_s: f64,
    pub steps: usize,
    pub t_end_s: f64,
    /// `ambient`, `steady` or `file`.
    pub init: String,
    /// The power trace file, if any.
    pub trace: Option<String>,
    /// Distinct trace rows used.
    pub trace_rows_used: usize,
    pub precond: PrecondReport,
    /// ‖r‖ ≤ rtol·‖P‖ per step (see `thermal::transient::Stepper`).
    pub rtol: f64,
    pub max_iter_per_step: usize,
    pub iterations_total: usize,
    pub iterations_per_step_mean: f64,
    pub iterations_per_step_max: usize,
    /// PCG wall time per step (right-hand side + solve), s.
    pub solve_s_per_step: f64,
    /// Wall time per step including the download and statistics, s.
    pub wall_s_per_step: f64,
    pub energy: EnergyTotals,
    /// Final state, bottom to top.
    pub layers: Vec<LayerSummary>,
    /// Largest temperature over all steps and cells, K, and when.
    pub peak_t_k: f64,
    pub peak_time_s: f64,
    /// Each cavity's coolant at the final state (outlets, heat taken);
    /// absent without cavities.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coolant: Vec<crate::thermal::summary::CoolantReport>,
    pub timings_s: Vec<(String, f64)>,
    /// Temperature-dependent stacks: how the steps treated k, c and the
    /// leakage; absent for a stack with only constants.
    pub nonlinear: Option<TransientNonlinear>,
}

/// The outer iterations of a transient run (`thermal::transient::nonlinear`).
#[derive(Clone, Debug, Serialize)]
pub struct TransientNonlinear {
    /// "semi-implicit" or "iterated".
    pub mode: String,
    /// `--nonlinear-iterations` (0: semi-implicit).
    pub max_iterations_per_step: usize,
    /// `--nonlinear-tol`, K (iterated mode).
    pub tol_k: f64,
    pub outer_iterations_total: usize,
    pub outer_iterations_per_step_max: usize,
    pub outer_iterations_per_step_mean: f64,
}

/// The energy account of the whole run, J.
#[derive(Clone, Debug, Serialize)]
pub struct EnergyTotals {
    pub energy_in_j: f64,
    pub heat_out_j: f64,
    pub stored_j: f64,
    /// Largest |(P − Q)Δt − ΔE| of a step relative to max(PΔt, QΔt, |ΔE|).
    pub max_step_relative_imbalance: f64,
}

pub(super) struct Timings {
    pub setup_s: f64,
    pub upload_s: f64,
    pub solve_s: f64,
    pub probe_s: f64,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn build(
    stack: &Stack,
    device: DeviceReport,
    opts: &TransientOptions,
    (krylov, precond): (crate::linalg::KrylovMethod, PrecondReport),
    records: &[StepRecord],
    final_summary: &Summary,
    schedule: &PowerSchedule,
    (t, stepping): (Timings, StepStats),
) -> TransientSummary {
    let dt = opts.dt;
    let steps = records.iter().filter(|r| r.step > 0).count();
    let iterations_total: usize = records.iter().map(|r| r.iterations).sum();
    let per_step = |s: f64| if steps > 0 { s / steps as f64 } else { 0.0 };
    let mut energy = EnergyTotals {
        energy_in_j: 0.0,
        heat_out_j: 0.0,
        stored_j: 0.0,
        max_step_relative_imbalance: 0.0,
    };
    for r in records {
        let e = &r.energy;
        energy.energy_in_j += e.power_w * dt;
        energy.heat_out_j += e.heat_out_w * dt;
        energy.stored_j += e.stored_j;
        let scale = (e.power_w * dt)
            .max(e.heat_out_w * dt)
            .max(e.stored_j.abs());
        if scale > 0.0 {
            energy.max_step_relative_imbalance = energy
                .max_step_relative_imbalance
                .max(e.imbalance_j.abs() / scale);
        }
    }
    let (mut peak_t_k, mut peak_time_s) = (stack.ambient_k, 0.0);
    for r in records {
        for &m in &r.layer_max_k {
            if m > peak_t_k {
                (peak_t_k, peak_time_s) = (m, r.time_s);
            }
        }
    }
    let mut rows: Vec<usize> = records.iter().filter_map(|r| r.trace_row).collect();
    rows.sort_unstable();
    rows.dedup();
    TransientSummary {
        cuth_version: env!("CARGO_PKG_VERSION").into(),
        stack: stack.source.display().to_string(),
        title: stack.title.clone(),
        grid: final_summary.grid.clone(),
        ambient_k: stack.ambient_k,
        device,
        method: {
            let krylov = match krylov {
                crate::linalg::KrylovMethod::BiCgStab => "BiCGStab",
                _ => "PCG",
            };
            match opts.stepping.scheme {
                Scheme::BackwardEuler => format!("backward Euler, {krylov} warm-started per step"),
                Scheme::TrBdf2 => {
                    format!("TR-BDF2 (gamma = 2 - sqrt 2), {krylov} warm-started per stage")
                }
            }
        },
        scheme: opts.stepping.scheme.name().into(),
        time_tol_k: opts.stepping.time_tol_k,
        stepping,
        dt_s: dt,
        steps,
        t_end_s: steps as f64 * dt,
        init: opts.init.name().into(),
        trace: schedule.trace().map(|tr| tr.file.display().to_string()),
        trace_rows_used: rows.len(),
        precond,
        rtol: opts.solver.rtol,
        max_iter_per_step: opts.solver.max_iter,
        iterations_total,
        iterations_per_step_mean: per_step(iterations_total as f64),
        iterations_per_step_max: records.iter().map(|r| r.iterations).max().unwrap_or(0),
        solve_s_per_step: per_step(t.solve_s),
        wall_s_per_step: per_step(t.solve_s + t.probe_s + t.upload_s),
        energy,
        layers: final_summary.layers.clone(),
        peak_t_k,
        peak_time_s,
        coolant: final_summary.coolant.clone(),
        timings_s: vec![
            ("setup".into(), t.setup_s),
            ("power_upload".into(), t.upload_s),
            ("solve".into(), t.solve_s),
            ("download_and_stats".into(), t.probe_s),
        ],
        nonlinear: nonlinear_report(opts, records),
    }
}

fn nonlinear_report(opts: &TransientOptions, records: &[StepRecord]) -> Option<TransientNonlinear> {
    let outer: Vec<usize> = records.iter().filter_map(|r| r.outer_iterations).collect();
    if outer.is_empty() {
        return None;
    }
    let nl = &opts.solver.nonlinear;
    let total: usize = outer.iter().sum();
    Some(TransientNonlinear {
        mode: if nl.transient_iterations > 0 {
            "iterated"
        } else {
            "semi-implicit"
        }
        .into(),
        max_iterations_per_step: nl.transient_iterations,
        tol_k: nl.tol_k,
        outer_iterations_total: total,
        outer_iterations_per_step_max: outer.iter().copied().max().unwrap_or(0),
        outer_iterations_per_step_mean: total as f64 / outer.len() as f64,
    })
}

/// What the steps of a run were (`summary.json`).
#[derive(Clone, Debug, Serialize)]
pub struct StepStats {
    /// Steps accepted (records of a fixed-step run).
    pub steps_taken: usize,
    /// Adaptive steps rejected and retried smaller.
    pub steps_rejected: usize,
    pub min_dt_s: f64,
    pub max_dt_s: f64,
    /// Changes of the step matrix after the first set-up (adaptive).
    pub step_setups: usize,
}

impl StepStats {
    /// `steps` of `dt` each.
    pub fn fixed(steps: usize, dt: f64) -> StepStats {
        StepStats {
            steps_taken: steps,
            steps_rejected: 0,
            min_dt_s: dt,
            max_dt_s: dt,
            step_setups: 0,
        }
    }
}
