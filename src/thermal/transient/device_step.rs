//! Temperature-dependent steps with the system on the device (issue 17):
//! the step of `nonlinear` (semi-implicit, or iterated with
//! `--nonlinear-iterations`, Anderson included, the same safeguards and
//! errors) through the `backend::nonlinear::NonlinearOps` capability that the steady Picard
//! loop uses. A(T) and C(T) are assembled where the solve runs from the
//! compact inputs kept in the backend's physics, the leakage is evaluated
//! there, and the loop's decisions (change, hottest cell, Anderson's
//! safeguards) are device reductions read back as scalars; per solve only
//! the two planes of conductances to ambient come to the host (the step's
//! energy balance). The CPU keeps the host path of `nonlinear`.

use super::stepper::Stepper;
use super::TransientError;
use crate::backend::nonlinear::NlContext;
use crate::backend::ChebyshevBackend;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::nonlinear::anderson::Anderson;
use crate::thermal::nonlinear::leakage::LeakageModel;
use crate::thermal::nonlinear::steady::place_name;
use crate::thermal::nonlinear::NonlinearError;
use crate::thermal::steady::SteadyOptions;

/// Whether a stack's step can be built on the device: its heat capacity
/// laws are evaluated there only beside conductivity laws (per-cell mode).
pub(super) fn device_capable(stack: &Stack) -> bool {
    let c_law = stack.layers.iter().any(|l| {
        let c = |m: &Option<crate::stack::MaterialLaw>| m.as_ref().is_some_and(|m| m.c_varies());
        c(&l.law) || l.unit_materials.iter().any(|u| c(&u.law))
    });
    stack.k_varies() || !c_law
}

/// The nonlinear terms of a run on the device.
pub(super) struct DevicePhysics<'a, B: ChebyshevBackend> {
    stack: &'a Stack,
    grid: &'a Grid,
    base: &'a [LayerPower],
    leak: LeakageModel,
    ph: B::Physics,
    /// The current iterate θ⁽ʲ⁾ (iterated mode) and θⁿ, K above ambient.
    t_it: B::Vector,
    t_old: B::Vector,
    /// Laws (re-assemble per solve) beside leakage.
    laws: bool,
}

/// What one step did.
pub(super) struct DeviceOutcome {
    pub iterations: usize,
    pub outer: usize,
    pub leak_w: Option<f64>,
    /// Σ rhs of the accepted solve (dynamic power and leakage), W.
    pub power_w: f64,
    /// Heat stored in the step, J.
    pub stored_j: f64,
    /// The accepted system's conductances to ambient (top, bottom planes).
    pub films: (Vec<f64>, Vec<f64>),
}

macro_rules! cx {
    ($s:expr) => {
        NlContext {
            stack: $s.stack,
            grid: $s.grid,
            power: $s.base,
            leak: &$s.leak,
        }
    };
}

impl<'a, B: ChebyshevBackend + 'static> DevicePhysics<'a, B> {
    /// The terms of `stack`, the dynamic power `p` (W per cell, device).
    pub fn new(
        be: &B,
        stack: &'a Stack,
        grid: &'a Grid,
        base: &'a [LayerPower],
        p: &B::Vector,
    ) -> Result<Self, TransientError> {
        let leak = LeakageModel::new(stack, grid, base);
        let cx = NlContext {
            stack,
            grid,
            power: base,
            leak: &leak,
        };
        let mut ph = be.nl_physics(&cx, None)?;
        be.tr_set_dynamic(&mut ph, p)?;
        Ok(DevicePhysics {
            laws: stack.layers.iter().any(|l| l.has_law()),
            stack,
            grid,
            base,
            leak,
            ph,
            t_it: be.zeros(grid.len())?,
            t_old: be.zeros(grid.len())?,
        })
    }

    pub fn leaks(&self) -> bool {
        !self.leak.is_empty()
    }

    /// A new dynamic power (trace row).
    pub fn set_dynamic(&mut self, be: &B, p: &B::Vector) -> Result<(), TransientError> {
        Ok(be.tr_set_dynamic(&mut self.ph, p)?)
    }

    /// Total leakage at θ (K above ambient, device), W.
    pub fn leakage_at(&mut self, be: &B, theta: &B::Vector) -> Result<f64, TransientError> {
        Ok(be.nl_leakage_total(&cx!(self), &mut self.ph, theta)?)
    }
    /// Solves step `step` (at `time_s`) from the stepper's level θⁿ; see
    /// `nonlinear::StepPhysics::advance`, whose steps these are.
    pub fn advance(
        &mut self,
        be: &B,
        stepper: &mut Stepper<B>,
        opts: &SteadyOptions,
        step: usize,
        time_s: f64,
    ) -> Result<DeviceOutcome, TransientError> {
        let nl = &opts.nonlinear;
        let amb = self.stack.ambient_k;
        stepper.theta_into(&mut self.t_old)?;
        runaway(
            be,
            &cx!(self),
            &mut self.ph,
            &self.t_old,
            nl.t_max_k,
            step - 1,
        )?;
        let max_solves = nl.transient_iterations.max(1);
        let iterated = nl.transient_iterations > 0;
        if iterated {
            be.copy(&self.t_old, &mut self.t_it)?;
        }
        let mut acc =
            (iterated && nl.anderson > 0).then(|| Anderson::new(nl.anderson, self.grid.len()));
        let mut fallback: Option<B::Vector> = None;
        let mut out = DeviceOutcome {
            iterations: 0,
            outer: 0,
            leak_w: None,
            power_w: 0.0,
            stored_j: 0.0,
            films: (Vec::new(), Vec::new()),
        };
        let mut stored_from = 0.0;
        for j in 1..=max_solves {
            let at = if iterated { &self.t_it } else { &self.t_old };
            let mut sys = match be.nl_assemble(&cx!(self), &mut self.ph, at)? {
                Ok(s) => s,
                Err(_) if fallback.is_some() => {
                    // An extrapolated iterate outside a law's range.
                    self.t_it = fallback.take().expect("checked");
                    if let Some(a) = &mut acc {
                        a.reset();
                    }
                    match be.nl_assemble(&cx!(self), &mut self.ph, &self.t_it)? {
                        Ok(s) => s,
                        Err(i) => return Err(self.bad_property(be, &self.t_it, i)?),
                    }
                }
                Err(i) => return Err(self.bad_property(be, at, i)?),
            };
            fallback = None;
            let at = if iterated { &self.t_it } else { &self.t_old };
            let rhs = be.nl_rhs(&cx!(self), &mut self.ph, &mut sys, at)?;
            drop(rhs.b);
            out.power_w = rhs.power_in_w;
            if self.leaks() {
                out.leak_w = Some(rhs.leakage_w.iter().fold(0.0, |a, b| a + b));
            }
            out.films = be.nl_coupling(&sys)?;
            let (a, cap, p) = be.tr_parts(sys)?;
            if self.laws {
                stepper.set_matrix_device(a, &cap, j == 1, opts)?;
            }
            stepper.set_power_device(&p)?;
            if iterated && j == 1 {
                stepper.save_level()?;
            }
            // Σ C θ'ⁿ with this solve's C, for the stored heat.
            stored_from = stepper.stored_heat_of_level()?;
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
            // G(x): the new iterate, and its change from the last.
            let mut g = be.zeros(self.grid.len())?;
            stepper.theta_into(&mut g)?;
            let change = be.nl_change(&g, &self.t_it, amb)?;
            runaway(be, &cx!(self), &mut self.ph, &g, nl.t_max_k, step)?;
            if change <= nl.tol_k {
                break;
            }
            if j == max_solves {
                let (i, t) = be.nl_hottest(&g, amb)?;
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
            self.t_it = match &mut acc {
                None => g,
                Some(a) => {
                    let next = a.next(be, &self.t_it, &g)?;
                    let floor = be.nl_range(&g)?.min.min(0.0);
                    let r = be.nl_range(&next)?;
                    if r.finite && r.min >= floor && r.max + amb <= nl.t_max_k {
                        fallback = Some(g);
                        next
                    } else {
                        a.reset();
                        g
                    }
                }
            };
        }
        out.stored_j = stepper.stored_heat()? - stored_from;
        Ok(out)
    }

    /// A law not positive at cell `i` of the iterate.
    fn bad_property(
        &self,
        be: &B,
        at: &B::Vector,
        i: usize,
    ) -> Result<TransientError, TransientError> {
        let l = self.grid.layer_of_z[i / self.grid.plane()];
        Ok(NonlinearError::BadProperty {
            layer: self.stack.layers[l].name.clone(),
            t_k: be.nl_value(at, i)? + self.stack.ambient_k,
        }
        .into())
    }
}

/// Thermal runaway when θ (K above ambient) has a value above `t_max` or
/// not finite: the hottest place and the leakage there.
fn runaway<B: ChebyshevBackend>(
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
