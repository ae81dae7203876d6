//! Adaptive TR-BDF2 steps between two records: the interval from k·Δt to
//! (k + 1)·Δt is cut at the trace rows' starts, each piece stepped by
//! halvings ([`Dyadic`]) under the error estimate, a rejected step undone
//! and retried finer. Records, probes and snapshots stay at the multiples
//! of `--dt`, which the steps land on (nothing is interpolated).
//!
//! A piece of length Δt/2^j (within 1e-9 Δt) is stepped with the nominal
//! sizes Δt/2^(j+level), so a run whose rows start on multiples of Δt/2^j
//! changes its step matrix only when the level changes: each change is a
//! re-setup (the shift and the preconditioner), counted in the summary.

use super::level::{Level, RunContext, Tally};
use super::scheme::{Dyadic, Verdict, MAX_LEVEL};
use super::TransientError;
use crate::thermal::device::ThermalBackend;
use std::time::Instant;

use super::report::StepStats;

/// The adaptive run's state across records.
pub(super) struct Control {
    dy: Dyadic,
    tol_k: f64,
    pub stats: StepStats,
    /// End time of every accepted step, s.
    pub ends_s: Vec<f64>,
}

impl Control {
    pub fn new(tol_k: f64) -> Control {
        Control {
            dy: Dyadic::start(),
            tol_k,
            stats: StepStats {
                steps_taken: 0,
                steps_rejected: 0,
                min_dt_s: f64::INFINITY,
                max_dt_s: 0.0,
                step_setups: 0,
            },
            ends_s: Vec::new(),
        }
    }
}

/// `len` as Δt/2^j where it is one within 1e-9 Δt (the nominal size keeps
/// the step matrices few), else itself.
fn nominal(len: f64, dt: f64) -> f64 {
    (0..=MAX_LEVEL)
        .map(|j| dt * 0.5f64.powi(j as i32))
        .find(|s| (len - s).abs() <= 1e-9 * dt)
        .unwrap_or(len)
}

/// The steps from k·Δt to (k + 1)·Δt.
pub(super) fn interval<'c, B: ThermalBackend + 'static>(
    lv: &mut Level<'c, B>,
    cx: &RunContext<'c, B>,
    k: usize,
    ctl: &mut Control,
) -> Result<Tally, TransientError> {
    let dt = cx.opts.dt;
    let (t0, t1) = (k as f64 * dt, (k + 1) as f64 * dt);
    let mut ends: Vec<f64> = cx
        .schedule
        .row_starts_within(t0, t1)
        .into_iter()
        .filter(|t| t - t0 > 1e-9 * dt && t1 - t > 1e-9 * dt)
        .collect();
    ends.push(t1);
    let mut tally = Tally {
        iterations: 0,
        leak_w: None,
        outer: None,
        stored_j: None,
        power_w: 0.0,
        heat_out_j: Some(0.0),
        dt,
    };
    let (mut energy_in_j, mut heat_out_j) = (0.0, 0.0);
    let mut a = t0;
    for b in ends {
        let len = nominal(b - a, dt);
        ctl.dy.next_interval();
        while !ctl.dy.done() {
            let (fa, fb) = ctl.dy.span();
            let ta = a + (b - a) * fa;
            let tb = if fb >= 1.0 { b } else { a + (b - a) * fb };
            let h = len * 0.5f64.powi(ctl.dy.level as i32);
            lv.enter_row(cx, cx.schedule.row_at(0.5 * (ta + tb)))?;
            let t = Instant::now();
            if lv.stepper.set_step(h)? {
                ctl.stats.step_setups += 1;
            }
            lv.times.solve_s += t.elapsed().as_secs_f64();
            let adv = lv.advance(cx, k + 1, tb)?;
            let t = Instant::now();
            tally.iterations += adv.iterations;
            let err = lv.stepper.error_estimate(&mut tally.iterations)?;
            lv.times.solve_s += t.elapsed().as_secs_f64();
            match ctl.dy.control(err, ctl.tol_k) {
                Verdict::Accepted => {
                    let s = &mut ctl.stats;
                    s.steps_taken += 1;
                    s.min_dt_s = s.min_dt_s.min(h);
                    s.max_dt_s = s.max_dt_s.max(h);
                    ctl.ends_s.push(tb);
                    energy_in_j += lv.power_w * h;
                    heat_out_j += lv.stepper.step_heat_out_w().unwrap_or(0.0) * h;
                    if let Some(st) = adv.stored_j {
                        *tally.stored_j.get_or_insert(0.0) += st;
                    }
                    if let Some(o) = adv.outer {
                        *tally.outer.get_or_insert(0) += o;
                    }
                    tally.leak_w = adv.leak_w;
                }
                Verdict::Rejected => {
                    ctl.stats.steps_rejected += 1;
                    lv.stepper.restore_level()?;
                }
                Verdict::TooSmall => {
                    return Err(TransientError::StepTooSmall {
                        time_s: ta,
                        min_dt_s: h,
                        err_k: err,
                        tol_k: ctl.tol_k,
                    })
                }
            }
        }
        a = b;
    }
    tally.power_w = energy_in_j / dt;
    tally.heat_out_j = Some(heat_out_j);
    Ok(tally)
}

#[cfg(test)]
mod tests {
    use super::nominal;

    #[test]
    fn pieces_snap_to_halvings_of_dt() {
        let dt = 3.33e-6;
        assert_eq!(nominal(dt * (1.0 + 1e-13), dt), dt);
        assert_eq!(nominal(0.5 * dt * (1.0 - 1e-12), dt), 0.5 * dt);
        assert_eq!(nominal(0.3 * dt, dt), 0.3 * dt);
    }
}
