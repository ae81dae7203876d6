//! Temperature-dependent stacks in time: what one backward-Euler
//! step does when k, c or the leakage depend on T, written once over
//! `thermal::device::nonlinear::NonlinearOps` (the capability of the steady Picard
//! loop) for every backend.
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
//! re-assembled for every solve (A(T) and C(T) per cell, also where only a
//! heat capacity varies); its preconditioner is rebuilt at each step's
//! first solve and kept (told of the new matrix) for the others. With
//! `--anderson M` (default 3) the iterates of a step are Anderson's
//! combinations of its last Picard outputs (history restarted each step,
//! the steady solve's safeguards: an extrapolation that is not finite,
//! below the lower of ambient and the Picard output's minimum, above
//! `--t-max` or outside a law's range gives way to the Picard iterate);
//! `--anderson 0` iterates plain Picard.
//!
//! Where the fields live: A(T), C(T) and the leakage are built where the
//! solve runs (on a GPU by the device assembly's kernels from the
//! temperature on the device), into the arrays of the last solve's system,
//! whose matrix is swapped with the stepper's (nothing n-sized allocated
//! per solve where the backend assembles in place; Anderson's history
//! aside). The loop's decisions (change, hottest cell, Anderson's
//! safeguards) are reductions read back as scalars; per step only the two
//! planes of conductances to ambient come to the host, when a law changed
//! them (the step's energy balance).

use super::stepper::Stepper;
use super::TransientError;
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::device::nonlinear::{laws_vary, NlContext};
use crate::thermal::device::ThermalBackend;
use crate::thermal::nonlinear::anderson::{Anderson, MAX_DEPTH};
use crate::thermal::nonlinear::leakage::LeakageModel;
use crate::thermal::nonlinear::{bad_property, place_name, NonlinearError};
use crate::thermal::steady::SteadyOptions;

/// The nonlinear terms of a run, where the backend keeps them.
pub(super) struct StepPhysics<'a, B: ThermalBackend> {
    stack: &'a Stack,
    grid: &'a Grid,
    base: &'a [LayerPower],
    leak: LeakageModel,
    ph: B::Physics,
    /// The system of the last solve (laws only; allocated at the first).
    sys: Option<B::NlSystem>,
    /// θⁿ, the current iterate θ⁽ʲ⁾ (iterated mode) and the last solve's
    /// output G(θ⁽ʲ⁾), K above ambient.
    t_old: B::Vector,
    t_it: B::Vector,
    g: B::Vector,
    /// The step's power: dynamic + leakage, W per cell.
    p: B::Vector,
    /// A law varies with T (re-assemble per solve).
    laws: bool,
}

/// What one step did.
pub(super) struct StepOutcome {
    /// PCG iterations of every solve of the step.
    pub iterations: usize,
    /// Solves of the step (1 when semi-implicit).
    pub outer: usize,
    /// Total leakage the accepted solve used, W (`None`: nothing leaks).
    pub leak_w: Option<f64>,
    /// Σ of the accepted solve's power (dynamic and leakage), W.
    pub power_w: f64,
    /// Heat stored in the step, J.
    pub stored_j: f64,
}

/// n-vectors a run's [`StepPhysics`] keeps where the solve runs, beyond the
/// stepper's: θⁿ, θ⁽ʲ⁾, G, the power, the dynamic power and the leakage per
/// cell (6); with laws the system (7: faces, diagonal, amb, C, rhs), the
/// per-cell materials (4) and the stepper's Δt vector; iterated with
/// Anderson its 2·depth + 4.
pub(super) fn extra_vectors(stack: &Stack, opts: &SteadyOptions) -> usize {
    let nl = &opts.nonlinear;
    let anderson = match nl.transient_iterations > 0 && nl.anderson > 0 {
        true => 2 * nl.anderson.min(MAX_DEPTH) + 4,
        false => 0,
    };
    6 + if laws_vary(stack, true) { 12 } else { 0 } + anderson
}

impl<'a, B: ThermalBackend + 'static> StepPhysics<'a, B> {
    /// The terms of `stack` with the dynamic power `p` (W per cell).
    pub fn new(
        be: &B,
        stack: &'a Stack,
        grid: &'a Grid,
        base: &'a [LayerPower],
        p: &B::Vector,
    ) -> Result<Self, TransientError> {
        let leak = LeakageModel::new(stack, grid, base);
        let n = grid.len();
        let mut s = StepPhysics {
            stack,
            grid,
            base,
            ph: be.nl_physics(&Self::context(stack, grid, base, &leak), None)?,
            leak,
            sys: None,
            t_old: be.zeros(n)?,
            t_it: be.zeros(n)?,
            g: be.zeros(n)?,
            p: be.zeros(n)?,
            laws: false,
        };
        s.laws = s.cx().laws_vary();
        be.tr_set_dynamic(&mut s.ph, p)?;
        Ok(s)
    }

    fn context<'c>(
        stack: &'c Stack,
        grid: &'c Grid,
        base: &'c [LayerPower],
        leak: &'c LeakageModel,
    ) -> NlContext<'c> {
        NlContext {
            stack,
            grid,
            power: base,
            leak,
            capacity_laws: true,
        }
    }

    fn cx(&self) -> NlContext<'_> {
        Self::context(self.stack, self.grid, self.base, &self.leak)
    }

    pub fn leaks(&self) -> bool {
        !self.leak.is_empty()
    }

    /// A new dynamic power (trace row).
    pub fn set_dynamic(&mut self, be: &B, p: &B::Vector) -> Result<(), TransientError> {
        Ok(be.tr_set_dynamic(&mut self.ph, p)?)
    }

    /// Total leakage at the stepper's current level, W (`None`: nothing
    /// leaks).
    pub fn leakage_now(
        &mut self,
        be: &B,
        stepper: &Stepper<B>,
    ) -> Result<Option<f64>, TransientError> {
        if !self.leaks() {
            return Ok(None);
        }
        stepper.theta_into(&mut self.t_old)?;
        let cx = Self::context(self.stack, self.grid, self.base, &self.leak);
        Ok(Some(be.nl_leakage_total(&cx, &mut self.ph, &self.t_old)?))
    }

    /// The accepted system's conductances to ambient into `top`, `bottom`
    /// where a law changed them (else they are the first assembly's).
    pub fn films(
        &self,
        be: &B,
        (top, bottom): (&mut Vec<f64>, &mut Vec<f64>),
    ) -> Result<(), TransientError> {
        if let Some(sys) = &self.sys {
            be.nl_coupling(sys, top, bottom)?;
        }
        Ok(())
    }

    /// A(T), C(T) at θ⁽ʲ⁾ (`iterated`) or θⁿ into the kept system, and the
    /// stepper's operator from them (preconditioner rebuilt when
    /// `rebuild`). An extrapolated iterate outside a law's range falls back
    /// to the Picard iterate `self.g` (`fallback`), Anderson's history
    /// dropped.
    fn assemble(
        &mut self,
        be: &B,
        stepper: &mut Stepper<B>,
        (iterated, fallback, rebuild): (bool, bool, bool),
        acc: &mut Option<Anderson<B::Vector>>,
    ) -> Result<(), TransientError> {
        let cx = Self::context(self.stack, self.grid, self.base, &self.leak);
        let at = if iterated { &self.t_it } else { &self.t_old };
        if let Err(i) = assemble_at(be, &cx, &mut self.ph, at, &mut self.sys)? {
            if !fallback {
                return Err(bad_property(be, &cx, at, i)?.into());
            }
            std::mem::swap(&mut self.t_it, &mut self.g);
            if let Some(a) = acc {
                a.reset();
            }
            if let Err(i) = assemble_at(be, &cx, &mut self.ph, &self.t_it, &mut self.sys)? {
                return Err(bad_property(be, &cx, &self.t_it, i)?.into());
            }
        }
        let sys = self.sys.as_mut().expect("assembled above");
        let (a, cap) = be.tr_parts(sys)?;
        stepper.set_matrix_device(a, cap, rebuild)?;
        Ok(())
    }

    /// Solves step `step` (at `time_s`) from the stepper's level θⁿ;
    /// leaves the stepper at the new level.
    pub fn advance(
        &mut self,
        be: &B,
        stepper: &mut Stepper<B>,
        opts: &SteadyOptions,
        step: usize,
        time_s: f64,
    ) -> Result<StepOutcome, TransientError> {
        let nl = &opts.nonlinear;
        let amb = self.stack.ambient_k;
        stepper.theta_into(&mut self.t_old)?;
        let cx = Self::context(self.stack, self.grid, self.base, &self.leak);
        runaway(be, &cx, &mut self.ph, &self.t_old, nl.t_max_k, step - 1)?;
        let max_solves = nl.transient_iterations.max(1);
        let iterated = nl.transient_iterations > 0;
        if iterated {
            be.copy(&self.t_old, &mut self.t_it)?;
        }
        // Anderson over the step's iterates (history restarted every step);
        // `fallback`: self.g holds the Picard iterate behind an
        // extrapolated θ⁽ʲ⁾.
        let mut acc =
            (iterated && nl.anderson > 0).then(|| Anderson::new(nl.anderson, self.grid.len()));
        let mut fallback = false;
        let mut out = StepOutcome {
            iterations: 0,
            outer: 0,
            leak_w: None,
            power_w: 0.0,
            stored_j: 0.0,
        };
        for j in 1..=max_solves {
            if self.laws {
                self.assemble(be, stepper, (iterated, fallback, j == 1), &mut acc)?;
            }
            fallback = false;
            let cx = Self::context(self.stack, self.grid, self.base, &self.leak);
            let at = if iterated { &self.t_it } else { &self.t_old };
            let pw = be.nl_power(&cx, &mut self.ph, at, &mut self.p)?;
            out.power_w = pw.power_in_w;
            if !self.leak.is_empty() {
                out.leak_w = Some(pw.leakage_w.iter().fold(0.0, |a, b| a + b));
            }
            stepper.set_power_device(&self.p)?;
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
            // G(θ⁽ʲ⁾): the new iterate, and its change from the last.
            stepper.theta_into(&mut self.g)?;
            let change = be.nl_change(&self.g, &self.t_it, amb)?;
            runaway(be, &cx, &mut self.ph, &self.g, nl.t_max_k, step)?;
            if change <= nl.tol_k {
                break;
            }
            if j == max_solves {
                let (i, t) = be.nl_hottest(&self.g, amb)?;
                return Err(TransientError::NonlinearStep {
                    step,
                    time_s,
                    source: NonlinearError::NoConvergence {
                        iterations: j,
                        change_k: change,
                        tol_k: nl.tol_k,
                        hottest: place_name(self.stack, self.grid, self.base, i),
                        t_k: t,
                    },
                });
            }
            // Anderson's next iterate where it stays finite, above the
            // lower of ambient and G's minimum and below --t-max (else G's).
            let next = match &mut acc {
                None => None,
                Some(a) => a.next_in_range(be, &self.t_it, &self.g, amb, nl.t_max_k)?,
            };
            match next {
                // θ⁽ʲ⁺¹⁾ = Anderson's; G stays in self.g to fall back on.
                Some(next) => {
                    let spent = std::mem::replace(&mut self.t_it, next);
                    if let Some(a) = &mut acc {
                        a.recycle(spent);
                    }
                    fallback = true;
                }
                // θ⁽ʲ⁺¹⁾ = G; the old iterate's vector takes the next G.
                None => std::mem::swap(&mut self.t_it, &mut self.g),
            }
        }
        // The heat stored in the step, Σ C (θⁿ⁺¹ − θⁿ) cell by cell with the
        // accepted solve's C (no difference of two field sums).
        stepper.theta_into(&mut self.g)?;
        be.nl_axpby(Some(&self.t_old), -1.0, 1.0, &mut self.g, 0.0)?;
        out.stored_j = stepper.stored_heat_of(&self.g)?;
        Ok(out)
    }
}

/// The system at θ into `sys` (allocated the first time); `Ok(Err(i))`:
/// a law is not positive at cell i, `sys` unchanged.
fn assemble_at<B: ThermalBackend>(
    be: &B,
    cx: &NlContext,
    ph: &mut B::Physics,
    theta: &B::Vector,
    sys: &mut Option<B::NlSystem>,
) -> Result<Result<(), usize>, BackendError> {
    if let Some(s) = sys {
        return be.nl_reassemble(cx, ph, theta, s);
    }
    Ok(be.nl_assemble(cx, ph, theta)?.map(|s| *sys = Some(s)))
}

/// Thermal runaway when θ (K above ambient) has a value above `t_max` or
/// not finite: the hottest place and the leakage there.
fn runaway<B: ThermalBackend>(
    be: &B,
    cx: &NlContext,
    ph: &mut B::Physics,
    theta: &B::Vector,
    t_max: f64,
    iteration: usize,
) -> Result<(), TransientError> {
    let (i, t) = be.nl_hottest(theta, cx.stack.ambient_k)?;
    if t.is_finite() && t <= t_max {
        return Ok(());
    }
    Err(NonlinearError::Runaway {
        iteration,
        reason: format!("the temperature passed the limit of {t_max} K (--t-max)"),
        hottest: place_name(cx.stack, cx.grid, cx.power, i),
        t_k: t,
        leakage_w: be.nl_leakage_total(cx, ph, theta)?,
    }
    .into())
}
