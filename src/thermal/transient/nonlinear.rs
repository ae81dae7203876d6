//! Temperature-dependent stacks in time (issue 17): what one backward-Euler
//! step does when k, c or the leakage depend on T.
//!
//! Semi-implicit (the default, `--nonlinear-iterations 0`): the step takes
//! the properties and the leakage at Tⁿ and is solved once,
//!
//!   (A(Tⁿ) + C(Tⁿ)/Δt) θⁿ⁺¹ = C(Tⁿ)/Δt θⁿ + P + P_leak(Tⁿ),
//!
//! first-order accurate in Δt like backward Euler itself, but with an
//! O(Δt) error of its own in the nonlinear terms.
//!
//! Iterated (`--nonlinear-iterations N`): the same step is solved again with
//! the properties and the leakage at the last iterate T⁽ʲ⁾ (Picard, starting
//! from T⁽⁰⁾ = Tⁿ, each solve warm-started from the last), until
//! max |T⁽ʲ⁺¹⁾ − T⁽ʲ⁾| ≤ `--nonlinear-tol`: the converged step is the fully
//! implicit backward-Euler step. A step that has not converged after N
//! solves is an error (exit 1) naming the step, the change and the hottest
//! place; nothing is written. Either way a temperature above `--t-max` (or
//! not finite) is thermal runaway. With a k or c law the step operator is
//! re-assembled for every solve; its preconditioner is rebuilt at each
//! step's first solve and kept (told of the new matrix) for the others.
//! With `--anderson M` (default 3) the iterates of a step are Anderson's
//! combinations of its last Picard outputs (history restarted each step,
//! the steady solve's safeguards: an extrapolation that is not finite,
//! below the lower of ambient and the Picard output's minimum, above
//! `--t-max` or outside a law's range gives way to the Picard iterate);
//! `--anderson 0` iterates plain Picard.

use super::stepper::Stepper;
use super::TransientError;
use crate::assemble::System;
use crate::backend::cpu::CpuBackend;
use crate::backend::ChebyshevBackend;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::nonlinear::anderson::Anderson;
use crate::thermal::nonlinear::leakage::LeakageModel;
use crate::thermal::nonlinear::steady::{place_name, system_at};
use crate::thermal::nonlinear::NonlinearError;
use crate::thermal::steady::SteadyOptions;

/// The nonlinear terms of a run: the leakage model and whether laws exist.
pub(super) struct StepPhysics<'a> {
    stack: &'a Stack,
    grid: &'a Grid,
    /// The layers' power (blocks, patches, raster weights) for assembly.
    base: &'a [LayerPower],
    pub leak: Option<LeakageModel>,
    laws: bool,
    /// The current iterate T⁽ʲ⁾, K (iterated mode only).
    t_it: Vec<f64>,
    /// θ' of a new iterate, downloaded.
    scratch: Vec<f64>,
}

/// What one step did.
pub(super) struct StepOutcome {
    /// PCG iterations of every solve of the step.
    pub iterations: usize,
    /// Solves of the step (1 when semi-implicit).
    pub outer: usize,
    /// max |T⁽ʲ⁺¹⁾ − T⁽ʲ⁾| of the last solve, K (NaN when semi-implicit).
    pub change_k: f64,
    /// Total leakage the accepted solve used, W.
    pub leak_w: Option<f64>,
}

impl<'a> StepPhysics<'a> {
    /// `None` for a stack with only constants and no leakage.
    pub fn new(stack: &'a Stack, grid: &'a Grid, base: &'a [LayerPower]) -> Option<Self> {
        stack.is_nonlinear().then(|| StepPhysics {
            stack,
            grid,
            base,
            leak: Some(LeakageModel::new(stack, grid, base)).filter(|l| !l.is_empty()),
            laws: stack.layers.iter().any(|l| l.has_law()),
            t_it: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// The system with the properties at `t_k` (rhs: the dynamic power).
    pub fn system(&self, sys: &mut System, t_k: &[f64]) -> Result<(), TransientError> {
        if !self.laws {
            return Ok(());
        }
        let mut s = system_at(self.stack, self.grid, self.base, t_k).map_err(Box::new)?;
        s.rhs = std::mem::take(&mut sys.rhs);
        *sys = s;
        Ok(())
    }

    /// Thermal runaway when `t_k` has a value above `t_max` or not finite.
    fn check_runaway(
        &self,
        t_k: &[f64],
        t_max: f64,
        iteration: usize,
    ) -> Result<(), NonlinearError> {
        let Some((imax, tmax)) = t_k
            .iter()
            .enumerate()
            .find(|(_, v)| !v.is_finite() || **v > t_max)
        else {
            return Ok(());
        };
        Err(NonlinearError::Runaway {
            iteration,
            reason: format!("the temperature passed the limit of {t_max} K (--t-max)"),
            hottest: place_name(self.stack, self.grid, self.base, imax),
            t_k: *tmax,
            leakage_w: self
                .leak
                .as_ref()
                .map_or(0.0, |l| l.eval(self.grid, t_k).total_w()),
        })
    }

    /// Solves step `step` (at `time_s`) from `t_old` = Tⁿ (K) with the
    /// dynamic power `dynamic`; leaves `sys` at the properties and power of
    /// the last solve and `stepper` at the new time level.
    #[allow(clippy::too_many_arguments)]
    pub fn advance<B: ChebyshevBackend + 'static>(
        &mut self,
        stepper: &mut Stepper<B>,
        sys: &mut System,
        dynamic: &[f64],
        t_old: &[f64],
        opts: &SteadyOptions,
        step: usize,
        time_s: f64,
    ) -> Result<StepOutcome, TransientError> {
        let nl = &opts.nonlinear;
        self.check_runaway(t_old, nl.t_max_k, step - 1)?;
        let max_solves = nl.transient_iterations.max(1);
        let iterated = nl.transient_iterations > 0;
        if iterated {
            self.t_it.clear();
            self.t_it.extend_from_slice(t_old);
            self.scratch.resize(t_old.len(), 0.0);
        }
        let mut out = StepOutcome {
            iterations: 0,
            outer: 0,
            change_k: f64::NAN,
            leak_w: None,
        };
        // Anderson over the step's iterates (history restarted every step);
        // the Picard iterate behind an extrapolated one, to fall back on.
        let mut acc =
            (iterated && nl.anderson > 0).then(|| Anderson::new(nl.anderson, t_old.len()));
        let mut fallback: Option<Vec<f64>> = None;
        for j in 1..=max_solves {
            if self.laws {
                let rhs = std::mem::take(&mut sys.rhs);
                let t_at: &[f64] = if iterated { &self.t_it } else { t_old };
                *sys = match system_at(self.stack, self.grid, self.base, t_at) {
                    Ok(s) => s,
                    // An extrapolated iterate outside a law's range.
                    Err(_) if fallback.is_some() => {
                        self.t_it = fallback.take().expect("checked");
                        if let Some(a) = &mut acc {
                            a.reset();
                        }
                        system_at(self.stack, self.grid, self.base, &self.t_it).map_err(Box::new)?
                    }
                    Err(e) => return Err(Box::new(e).into()),
                };
                sys.rhs = rhs;
                stepper.set_matrix(&sys.a, &sys.capacity, j == 1, opts)?;
            }
            fallback = None;
            let t_at: &[f64] = if iterated { &self.t_it } else { t_old };
            sys.rhs.clear();
            sys.rhs.extend_from_slice(dynamic);
            if let Some(l) = &self.leak {
                let e = l.eval(self.grid, t_at);
                out.leak_w = Some(e.total_w());
                sys.rhs.iter_mut().zip(&e.cell_w).for_each(|(p, q)| *p += q);
            }
            stepper.set_power(&sys.rhs)?;
            if iterated && j == 1 {
                stepper.save_level()?;
            }
            let solved = if j == 1 {
                stepper.step()
            } else {
                stepper.resolve()
            };
            let info = solved.map_err(|source| TransientError::Step {
                step,
                time_s,
                source,
            })?;
            out.iterations += info.iterations;
            out.outer = j;
            if !iterated {
                break;
            }
            // The new iterate, K, and its change from the last.
            stepper.download_shifted(&mut self.scratch)?;
            let shift = stepper.c + self.stack.ambient_k;
            let mut change: f64 = 0.0;
            // x = the iterate the solve used, G(x) = its output.
            let x = acc.as_ref().map(|_| self.t_it.clone());
            for (t, th) in self.t_it.iter_mut().zip(&self.scratch) {
                let new = th + shift;
                change = change.max((new - *t).abs());
                *t = new;
            }
            out.change_k = change;
            self.check_runaway(&self.t_it, nl.t_max_k, step)?;
            if change <= nl.tol_k {
                break;
            }
            // Anderson's next iterate where it stays finite, above the lower
            // of ambient and G's minimum and below --t-max (else G's).
            if let (Some(a), Some(x)) = (&mut acc, x) {
                let g = std::mem::take(&mut self.t_it);
                let next = a.next(&CpuBackend, &x, &g)?;
                let floor = g.iter().copied().fold(self.stack.ambient_k, f64::min);
                let ok = next
                    .iter()
                    .all(|v| v.is_finite() && *v >= floor && *v <= nl.t_max_k);
                if ok {
                    self.t_it = next;
                    fallback = Some(g);
                } else {
                    a.reset();
                    self.t_it = g;
                }
            }
            if j == max_solves {
                let (imax, tmax) = self
                    .t_it
                    .iter()
                    .copied()
                    .enumerate()
                    .fold((0, f64::NEG_INFINITY), |a, b| if b.1 > a.1 { b } else { a });
                return Err(TransientError::NonlinearStep {
                    step,
                    time_s,
                    source: NonlinearError::NoConvergence {
                        iterations: j,
                        change_k: change,
                        tol_k: nl.tol_k,
                        hottest: place_name(self.stack, self.grid, self.base, imax),
                        t_k: tmax,
                    },
                });
            }
        }
        Ok(out)
    }
}
