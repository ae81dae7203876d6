//! TR-BDF2 on the [`Stepper`]'s matrix C/h + A, h = γΔt/2 (see `scheme`),
//! with the field shifted by c as for backward Euler (the shift cancels in
//! every combination below: their weights add up to 1 or to 0). With
//! F = P − Aθ, the heat flowing into each cell (W), and w = C/h:
//!
//!   trapezoid:  (w + A) θ_γ  = w θⁿ + F(θⁿ) + P
//!   BDF2:       (w + A) θⁿ⁺¹ = w (a θ_γ − b θⁿ) + P
//!
//! F(θⁿ) is one difference-form residual of the step matrix; the stages'
//! F(θ_γ) = w(θ_γ − θⁿ) − F(θⁿ) and F(θⁿ⁺¹) = w(θⁿ⁺¹ − a θ_γ + b θⁿ) follow
//! from the stage equations without another product. The error estimate is
//! Hosea and Shampine's, filtered through the step matrix so that stiff
//! modes, which the scheme damps, do not inflate it:
//!
//!   (w + A) e = (4k/γ) (F₀/γ − F_γ/(γ(1−γ)) + F₁/(1−γ)),
//!
//! one more solve with the same matrix, to a loose tolerance (two digits of
//! an estimate are enough). Everything is backend vector work: this file
//! runs unchanged on every executor.
//!
//! Energy: summed over the cells the stages give Σ C(θⁿ⁺¹ − θⁿ) = PΔt −
//! (a h (Q₀ + Q_γ) + h Q₁), Q the heat out at each stage value, so the
//! step's mean heat out is that weighted sum over Δt, taken on the device
//! (Q = Σ amb θ, amb = A·1) and reported for the step's energy balance.

use super::scheme::{Scheme, BDF2_A, BDF2_B, GAMMA, LTE_K};
use super::stepper::Stepper;
use super::stepper::TrWork;
use crate::backend::BackendError;
use crate::linalg::{CgInfo, CgParams, LinearOperator, SolveError, Stop};
use crate::thermal::device::ThermalBackend;

/// Relative residual of the error estimate's solve.
const ESTIMATE_RTOL: f64 = 1e-3;

fn missing() -> SolveError {
    SolveError::Backend(BackendError::Unsupported(
        "a TR-BDF2 step before Stepper::use_scheme",
    ))
}

impl<'a, B: ThermalBackend + 'static> Stepper<'a, B> {
    /// Steps by `scheme` from now on, with steps of `dt`; the caller built
    /// the stepper for the shift's h = `scheme.divisor(dt)`. `extrapolate`:
    /// backward Euler's steps start from the last two levels' line
    /// ([`Self::extrapolate`]; a linear stack's fixed steps).
    pub fn use_scheme(
        &mut self,
        scheme: Scheme,
        dt: f64,
        extrapolate: bool,
    ) -> Result<(), SolveError> {
        self.scheme = scheme;
        if extrapolate && scheme == Scheme::BackwardEuler {
            self.extrapolate()?;
        }
        if scheme == Scheme::TrBdf2 {
            let n = self.ksp.len();
            self.tr = Some(TrWork {
                x1: self.be.zeros(n)?,
                f0: self.be.zeros(n)?,
                s: self.be.scalars(1)?,
                dt,
                heat_out_w: 0.0,
            });
            self.save_level()?;
        }
        Ok(())
    }

    /// The step of the following steps, s (TR-BDF2): C/h re-set, the matrix
    /// shifted by the change of C/h and the preconditioner rebuilt for it.
    /// Returns whether anything changed (a re-setup).
    pub fn set_step(&mut self, dt: f64) -> Result<bool, SolveError> {
        let be = self.be;
        let h = self.scheme.divisor(dt);
        let tw = self.tr.as_mut().ok_or_else(missing)?;
        tw.dt = dt;
        if h == self.dt {
            return Ok(false);
        }
        let ratio = self.dt / h;
        self.dt = h;
        // b = ratio·w, the new C/h; f0 = b − w, the matrix's change.
        be.nl_axpby(Some(&self.w), ratio, 0.0, &mut self.b, 0.0)?;
        be.copy(&self.b, &mut tw.f0)?;
        be.nl_axpby(Some(&self.w), -1.0, 1.0, &mut tw.f0, 0.0)?;
        be.copy(&self.b, &mut self.w)?;
        let a = self.ksp.operator_mut().matrix_mut().ok_or_else(missing)?;
        be.tr_shift(a, &tw.f0, &mut tw.x1)?;
        if let Some(dts) = &mut self.dts {
            be.nl_axpby(None, 0.0, 0.0, dts, h)?;
        }
        self.ksp.rebuild()?;
        Ok(true)
    }

    /// One TR-BDF2 step from θⁿ kept in `x_old` ([`Self::save_level`]).
    pub(super) fn tr_step(&mut self) -> Result<CgInfo, SolveError> {
        let mut tw = self.tr.take().ok_or_else(missing)?;
        let Some(x0) = self.x_old.take() else {
            self.tr = Some(tw);
            return Err(missing());
        };
        let out = self.tr_stages(&mut tw, &x0);
        self.tr = Some(tw);
        self.x_old = Some(x0);
        out
    }

    /// Q(θ') = Σ amb (θ' + c), W, with Σ amb in `amb_sum`: with coolant,
    /// amb is Aᵀ1 and the inlets' enthalpy comes off.
    fn heat_out(&self, x: &B::Vector, amb_sum: f64) -> Result<f64, SolveError> {
        Ok(self.be.nl_dot(&self.amb, x)? + self.c * amb_sum - self.inlet_w)
    }

    fn tr_stages(
        &mut self,
        tw: &mut TrWork<B::Vector, B::Scalars>,
        x0: &B::Vector,
    ) -> Result<CgInfo, SolveError> {
        let be = self.be;
        be.nl_axpby(None, 0.0, 0.0, &mut tw.x1, 1.0)?; // x1 = 1
        let amb_sum = be.nl_dot(&self.amb, &tw.x1)?;
        let q0 = self.heat_out(x0, amb_sum)?;
        be.mul_add(&self.w, x0, &self.src, &mut self.b)?; // b = w ⊙ θ'ⁿ + (P − c·amb)
        let a = self.ksp.operator_mut();
        a.residual(be, &self.b, x0, &mut tw.f0, &mut tw.s, 0)?; // F₀ = b − (A + w) θ'ⁿ
        be.nl_axpby(Some(&tw.f0), 1.0, 1.0, &mut self.b, 0.0)?; // b += F₀
        be.copy(x0, &mut self.x)?;
        let mut info = self.solve()?;
        be.copy(&self.x, &mut tw.x1)?; // θ'_γ
        let q1 = self.heat_out(&tw.x1, amb_sum)?;

        be.nl_axpby(Some(x0), -BDF2_B, BDF2_A, &mut self.x, 0.0)?; // x = a θ'_γ − b θ'ⁿ
        be.mul_add(&self.w, &self.x, &self.src, &mut self.b)?; // b = w ⊙ x + (P − c·amb)
                                                               // Start from the line through θⁿ and θ_γ at tₙ₊₁.
        be.copy(&tw.x1, &mut self.x)?;
        be.nl_axpby(Some(x0), 1.0 - 1.0 / GAMMA, 1.0 / GAMMA, &mut self.x, 0.0)?;
        let second = self.solve()?;
        info.iterations += second.iterations;
        info.replacements += second.replacements;
        info.rel_residual = info.rel_residual.max(second.rel_residual);
        let q2 = self.heat_out(&self.x, amb_sum)?;
        let g2 = 0.5 * GAMMA;
        tw.heat_out_w = BDF2_A * g2 * (q0 + q1) + g2 * q2;
        Ok(info)
    }

    /// The last step's error estimate, max over the cells, K (uses the
    /// stage vectors of [`Self::step`]; call before the next step). Adds
    /// the estimate's PCG iterations to `iterations`.
    pub fn error_estimate(&mut self, iterations: &mut usize) -> Result<f64, SolveError> {
        let be = self.be;
        let mut tw = self.tr.take().ok_or_else(missing)?;
        let x0 = self.x_old.as_ref().ok_or_else(missing)?;
        let g = GAMMA;
        let scale = 4.0 * LTE_K / g;
        let c_f = scale * (1.0 + 1.0 / (1.0 - g)) / g;
        let c2 = scale / (1.0 - g);
        let c1 = -scale * (1.0 / (g * (1.0 - g)) + BDF2_A / (1.0 - g));
        let c0 = scale * (1.0 / (g * (1.0 - g)) + BDF2_B / (1.0 - g));
        // x1 = c2 θ'ⁿ⁺¹ + c1 θ'_γ + c0 θ'ⁿ;  f0 = c_F F₀;  b = w ⊙ x1 + f0
        be.nl_axpby(Some(&self.x), c2, c1, &mut tw.x1, 0.0)?;
        be.nl_axpby(Some(x0), c0, 1.0, &mut tw.x1, 0.0)?;
        be.nl_axpby(None, 0.0, c_f, &mut tw.f0, 0.0)?;
        be.mul_add(&self.w, &tw.x1, &tw.f0, &mut self.b)?;
        let b_norm = be.nl_dot(&self.b, &self.b)?.sqrt();
        let out = match b_norm > 0.0 && b_norm.is_finite() {
            false => Ok(if b_norm == 0.0 { 0.0 } else { f64::NAN }),
            true => {
                be.nl_axpby(None, 0.0, 0.0, &mut tw.x1, 0.0)?;
                self.ksp.set_params(CgParams {
                    stop: Stop::against(ESTIMATE_RTOL, b_norm),
                    ..self.params.clone()
                });
                let solved = self.ksp.solve(&self.b, &mut tw.x1);
                solved.and_then(|info| {
                    *iterations += info.iterations;
                    let r = be.nl_range(&tw.x1)?;
                    Ok(match r.finite {
                        true => r.min.abs().max(r.max.abs()),
                        false => f64::NAN,
                    })
                })
            }
        };
        self.tr = Some(tw);
        out
    }

    /// Mean heat out over the last TR-BDF2 step, W (`None`: backward Euler,
    /// whose step's heat out is that of θⁿ⁺¹).
    pub fn step_heat_out_w(&self) -> Option<f64> {
        self.tr.as_ref().map(|t| t.heat_out_w)
    }

    /// The step Δt in force, s.
    pub fn step_dt(&self) -> f64 {
        self.tr.as_ref().map_or(self.dt, |t| t.dt)
    }
}
