//! One step of a transient run (the solve, then the record of the new
//! field) and what it carries from the last: the system, the stepper, the nonlinear terms, the host's field
//! buffers, the trace row in force and the phases' times.

use super::nonlinear::StepPhysics;
use super::probe::{self, BlockProbe, StepEnergy};
use super::reduce::StepReduce;
use super::report::Timings;
use super::system::HostSys;
use super::{
    step_solver, Observer, StepField, StepRecord, StepView, Stepper, TransientError,
    TransientOptions,
};
use crate::grid::Grid;
use crate::power::schedule::PowerSchedule;
use crate::stack::Stack;
use crate::thermal::device::ThermalBackend;
use crate::thermal::probes::ProbeCell;
use crate::thermal::steady::summarize;
use crate::thermal::summarize::ThermalProblem;
use std::time::Instant;

/// What every step reads.
pub(super) struct RunContext<'c, B> {
    pub be: &'c B,
    pub stack: &'c Stack,
    pub grid: &'c Grid,
    pub schedule: &'c PowerSchedule,
    pub opts: &'c TransientOptions,
    pub probes: &'c [BlockProbe],
    pub points: &'c [ProbeCell],
}

/// The run between two steps.
pub(super) struct Level<'c, B: ThermalBackend + 'static> {
    pub sys: HostSys<B::AsmKept, B::Vector>,
    pub stepper: Stepper<'c, B>,
    pub phys: Option<StepPhysics<'c, B>>,
    /// Host buffers reused every step: θⁿ⁺¹ and θⁿ (K above ambient) and T (K).
    pub theta: Vec<f64>,
    pub theta_old: Vec<f64>,
    pub temperature_k: Vec<f64>,
    pub row: Option<usize>,
    /// Power in of the current step, W.
    pub power_w: f64,
    /// A linear stack assembled on the device: Σ C θ' of the last level
    /// (the host has no C); a temperature-dependent step reports its own.
    pub stored_prev: Option<f64>,
    /// The records reduced where the solve runs (`StepField::Needed` on a
    /// linear, film-cooled stack); `None`: folded from the downloaded field.
    pub reduce: Option<StepReduce<B::Vector>>,
    pub times: Timings,
}

impl<'c, B: ThermalBackend + 'static> Level<'c, B> {
    /// Step 0, the initial state, so the series and the plot start at t = 0.
    pub(super) fn initial_record(
        &mut self,
        cx: &RunContext<'c, B>,
    ) -> Result<StepRecord, TransientError> {
        let fs = probe::absorb(
            cx.grid,
            self.sys.capacity(),
            0.0,
            cx.stack.ambient_k,
            &mut self.theta,
            &self.theta_old,
            &mut self.temperature_k,
        );
        Ok(StepRecord {
            step: 0,
            time_s: 0.0,
            iterations: 0,
            trace_row: self.row,
            energy: StepEnergy::default(),
            layer_max_k: fs.layer_max_k,
            layer_avg_k: fs.layer_avg_k,
            blocks: probe::block_stats(cx.grid, cx.probes, &self.temperature_k),
            probe_k: crate::thermal::probes::read(cx.grid, cx.points, &self.temperature_k),
            leakage_w: match &mut self.phys {
                Some(ph) => ph.leakage_now(cx.be, &self.stepper)?,
                None => None,
            },
            outer_iterations: None,
            coolant_outlets: self.coolant_outlets(cx),
        })
    }

    /// The coolant's outlets at the current level (θ in `theta`).
    fn coolant_outlets(
        &self,
        cx: &RunContext<'c, B>,
    ) -> std::collections::BTreeMap<usize, Vec<(f64, f64)>> {
        (self.sys.coolant())
            .map(|c| c.outlets(cx.stack.ambient_k, &self.theta))
            .unwrap_or_default()
    }

    /// Trace row `r` from now on, when it is not the one in force.
    pub(super) fn enter_row(
        &mut self,
        cx: &RunContext<'c, B>,
        r: Option<usize>,
    ) -> Result<(), TransientError> {
        if r != self.row {
            let t = Instant::now();
            self.row = r;
            self.power_w = self.sys.set_row(
                cx.be,
                cx.grid,
                cx.schedule,
                self.row,
                &mut self.stepper,
                self.phys.as_mut(),
            )?;
            self.times.upload_s += t.elapsed().as_secs_f64();
        }
        Ok(())
    }

    /// The solve of step `step` ending at `time_s` (one or more, by the
    /// scheme and the nonlinear iteration), timed as the solve.
    pub(super) fn advance(
        &mut self,
        cx: &RunContext<'c, B>,
        step: usize,
        time_s: f64,
    ) -> Result<Advanced, TransientError> {
        let t = Instant::now();
        let out = match &mut self.phys {
            Some(ph) => {
                let o = ph.advance(cx.be, &mut self.stepper, &cx.opts.solver, step, time_s)?;
                ph.films(cx.be, self.sys.films_mut())?;
                self.power_w = o.power_w;
                Advanced {
                    iterations: o.iterations,
                    leak_w: o.leak_w,
                    outer: Some(o.outer),
                    stored_j: Some(o.stored_j),
                }
            }
            None => {
                let info = self.stepper.step().map_err(|source| TransientError::Step {
                    step,
                    time_s,
                    source,
                })?;
                Advanced {
                    iterations: info.iterations,
                    leak_w: None,
                    outer: None,
                    stored_j: None,
                }
            }
        };
        cx.be.synchronize()?;
        self.times.solve_s += t.elapsed().as_secs_f64();
        Ok(out)
    }

    /// Step `k + 1` of a fixed Δt: the trace row it falls in, the solve,
    /// the statistics of the new field and the observer.
    pub(super) fn step(
        &mut self,
        cx: &RunContext<'c, B>,
        k: usize,
        observer: &mut Observer,
    ) -> Result<StepRecord, TransientError> {
        let time_s = (k + 1) as f64 * cx.opts.dt;
        self.enter_row(cx, cx.schedule.row_at((k as f64 + 0.5) * cx.opts.dt))?;
        let adv = self.advance(cx, k + 1, time_s)?;
        let heat_out_j = self.stepper.step_heat_out_w().map(|q| q * cx.opts.dt);
        let tally = Tally {
            iterations: adv.iterations,
            leak_w: adv.leak_w,
            outer: adv.outer,
            stored_j: adv.stored_j,
            power_w: self.power_w,
            heat_out_j,
            dt: cx.opts.dt,
        };
        self.record(cx, k, &tally, observer)
    }

    /// The record of output step `k + 1` (time (k + 1)·Δt) after the
    /// steps of `tally`: the field downloaded, its statistics, the
    /// observer.
    pub(super) fn record(
        &mut self,
        cx: &RunContext<'c, B>,
        k: usize,
        tally: &Tally,
        observer: &mut Observer,
    ) -> Result<StepRecord, TransientError> {
        // The host's capacities and rhs serve the stored heat and the power in
        // only where they stay C and P (a linear stack).
        let linear = self.phys.is_none();
        let time_s = (k + 1) as f64 * cx.opts.dt;
        let t = Instant::now();
        let snap = cx
            .opts
            .snapshot_every
            .is_some_and(|e| e > 0 && ((k + 1).is_multiple_of(e) || k + 1 == cx.opts.steps));
        // The field comes down where an output reads it: every step, or
        // the snapshots' and the last (the run's final field).
        let download = self.reduce.is_none()
            || cx.opts.step_field == StepField::Every
            || snap
            || k + 1 == cx.opts.steps;
        let (mut energy, stats) = match &mut self.reduce {
            Some(_) => self.reduced(cx, tally, download)?,
            None => self.absorbed(cx, tally, linear)?,
        };
        if let Some(q) = tally.heat_out_j {
            // The scheme's own heat out over the steps (TR-BDF2's stages).
            energy.heat_out_w = q / tally.dt;
            energy.imbalance_j = tally.power_w * tally.dt - q - energy.stored_j;
        }
        let record = StepRecord {
            step: k + 1,
            time_s,
            iterations: tally.iterations,
            trace_row: self.row,
            energy,
            layer_max_k: stats.layer_max_k,
            layer_avg_k: stats.layer_avg_k,
            blocks: stats.blocks,
            probe_k: stats.probe_k,
            leakage_w: tally.leak_w,
            outer_iterations: tally.outer,
            coolant_outlets: self.coolant_outlets(cx),
        };
        let snapshot = snap.then(|| {
            let power = cx.schedule.layer_power_at(self.row);
            let solver = step_solver(
                &cx.opts.solver,
                (self.stepper.method(), self.stepper.precond_report()),
                tally.iterations,
            );
            let s = summarize(
                ThermalProblem::new(cx.stack, cx.grid, &power),
                self.sys.coupling(self.power_w, linear),
                &self.theta,
                &self.temperature_k,
                cx.be,
                solver,
                vec![],
            );
            (s, power)
        });
        observer(&StepView {
            record: &record,
            temperature_k: download.then_some(&self.temperature_k[..]),
            snapshot,
        })
        .map_err(TransientError::Observer)?;
        if download {
            std::mem::swap(&mut self.theta, &mut self.theta_old);
        }
        self.times.probe_s += t.elapsed().as_secs_f64();
        Ok(record)
    }
}

impl<'c, B: ThermalBackend + 'static> Level<'c, B> {
    /// The host's record of the new level: the field downloaded into
    /// `theta` and `temperature_k`, its statistics folded there.
    fn absorbed(
        &mut self,
        cx: &RunContext<'c, B>,
        tally: &Tally,
        linear: bool,
    ) -> Result<(StepEnergy, Stats), TransientError> {
        self.stepper.download_shifted(&mut self.theta)?;
        let fs = probe::absorb(
            cx.grid,
            self.sys.capacity().filter(|_| linear),
            self.stepper.c,
            cx.stack.ambient_k,
            &mut self.theta,
            &self.theta_old,
            &mut self.temperature_k,
        );
        let stored_j = self.stored_j(tally, fs.stored_j)?;
        let mut energy = probe::step_energy(
            self.sys.films(),
            cx.grid,
            tally.power_w,
            &self.theta,
            stored_j,
            tally.dt,
        );
        if let Some(coolant) = self.sys.coolant() {
            // The coolant's enthalpy rise at θⁿ⁺¹, as the films' heat out.
            let q = coolant.heat_w(&self.theta);
            energy.heat_out_w += q;
            energy.imbalance_j -= q * tally.dt;
        }
        let stats = Stats {
            layer_max_k: fs.layer_max_k,
            layer_avg_k: fs.layer_avg_k,
            blocks: probe::block_stats(cx.grid, cx.probes, &self.temperature_k),
            probe_k: crate::thermal::probes::read(cx.grid, cx.points, &self.temperature_k),
        };
        Ok((energy, stats))
    }

    /// The record of the new level reduced where the solve runs; the
    /// field downloaded as well when `download` (an output reads it).
    fn reduced(
        &mut self,
        cx: &RunContext<'c, B>,
        tally: &Tally,
        download: bool,
    ) -> Result<(StepEnergy, Stats), TransientError> {
        let Some(r) = &mut self.reduce else {
            let why = "a reduced record without its tables";
            return Err(crate::backend::BackendError::Unsupported(why).into());
        };
        let shift = (self.stepper.c, cx.stack.ambient_k);
        let red = r.reduce(cx.be, cx.grid, cx.points, &self.stepper.x, shift)?;
        if download {
            self.stepper.download_shifted(&mut self.theta)?;
            probe::absorb(
                cx.grid,
                None,
                self.stepper.c,
                cx.stack.ambient_k,
                &mut self.theta,
                &self.theta_old,
                &mut self.temperature_k,
            );
        }
        let stored_j = match tally.stored_j {
            Some(s) => s,
            None => r.stored_heat(cx.be, &self.stepper)?,
        };
        let energy = StepEnergy {
            power_w: tally.power_w,
            heat_out_w: red.heat_out_w,
            stored_j,
            imbalance_j: (tally.power_w - red.heat_out_w) * tally.dt - stored_j,
        };
        let stats = Stats {
            layer_max_k: red.layer_max_k,
            layer_avg_k: red.layer_avg_k,
            blocks: red.blocks,
            probe_k: red.probe_k,
        };
        Ok((energy, stats))
    }

    /// The heat stored over the steps of `tally`, J: the step's own (a
    /// temperature-dependent step), Σ C θ' of the new level less the old
    /// one's where the device holds C, else the host's `host_j`.
    fn stored_j(&mut self, tally: &Tally, host_j: f64) -> Result<f64, TransientError> {
        if let Some(s) = tally.stored_j {
            return Ok(s);
        }
        Ok(match &mut self.stored_prev {
            Some(prev) => {
                let now = self.stepper.stored_heat()?;
                let d = now - *prev;
                *prev = now;
                d
            }
            None => host_j,
        })
    }
}

/// A record's field statistics, however taken.
struct Stats {
    layer_max_k: Vec<f64>,
    layer_avg_k: Vec<f64>,
    blocks: Vec<probe::BlockTemps>,
    probe_k: Vec<f64>,
}

/// What one solve of a step did.
pub(super) struct Advanced {
    pub iterations: usize,
    pub leak_w: Option<f64>,
    pub outer: Option<usize>,
    /// Heat stored, J, where the step reports it (temperature-dependent).
    pub stored_j: Option<f64>,
}

/// The steps between two records.
pub(super) struct Tally {
    pub iterations: usize,
    pub leak_w: Option<f64>,
    pub outer: Option<usize>,
    pub stored_j: Option<f64>,
    /// Mean power in, W.
    pub power_w: f64,
    /// Heat out over the steps, J, where the scheme takes it (else the
    /// films' at the new level, times Δt).
    pub heat_out_j: Option<f64>,
    /// Time between the records, s.
    pub dt: f64,
}
