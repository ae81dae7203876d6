//! One backward-Euler step on a backend, everything resident:
//!
//!   (A + C/Δt) θⁿ⁺¹ = C/Δt θⁿ + Pⁿ⁺¹
//!
//! The matrix A + C/Δt (Quad-Diag, the shift only on the diagonal and in the
//! `amb` term of the difference-form residual) is uploaded once, the
//! preconditioner (Chebyshev's λmax estimate included) is built once for it,
//! and each step forms its right-hand side on the device with one fused
//! `mul_add` and warm-starts PCG from the previous solution. Only a change of
//! the trace row uploads a new source vector.
//!
//! Temperature-dependent stacks re-set the step's operator
//! ([`Stepper::set_matrix_device`]: the new A shifted in place and swapped
//! with the stepper's, whose arrays the next assembly reuses) and source
//! between solves; a step may be solved
//! several times (the outer iterations of `--nonlinear-iterations`): after
//! [`Stepper::save_level`] has kept θⁿ apart from the iterate,
//! [`Stepper::resolve`] solves the step again from that θⁿ.
//!
//! The unknown is θ' = θ − c with a constant c, the convective film's mean
//! rise for the first power row (see `linalg::offset`): substituting gives
//! (A + C/Δt) θ'ⁿ⁺¹ = C/Δt θ'ⁿ + (Pⁿ⁺¹ − c·amb), the same form with a shifted
//! source. For small Δt the shift changes little (C/Δt dominates A), but for
//! large Δt the step tends to the steady system, whose residual needs the
//! shift to keep f64 digits on fine grids.
//!
//! Stopping: ‖b − A'θ'‖₂ ≤ rtol·‖Pⁿ⁺¹‖₂ (‖b‖₂ when no power flows). The
//! residual is a power imbalance in W per cell, so this bounds the energy
//! error of the step by rtol·√n·‖P‖ W, whatever Δt, and equals the steady
//! solver's criterion in the limit Δt → ∞. For very small Δt, ‖b‖ ≈
//! ‖C/Δt θ‖ can exceed ‖P‖ by more than 1/(rtol·ε): f64 cannot resolve
//! rtol·‖P‖ then, so the criterion is floored at ‖r‖ ≤ 1e-14·‖b‖, where the
//! step's error is ~1e-14 of θ.

use crate::assemble::System;
use crate::linalg::{
    CgInfo, CgParams, PrecondReport, QuadDiag, QuadDiagOperator, SolveError, Solver, Stop,
};
use crate::thermal::device::ThermalBackend;
use crate::thermal::steady::SteadyOptions;

use super::scheme::Scheme;

/// Smallest relative residual ‖r‖/‖b‖ asked of PCG (≈ 50 ε).
const RTOL_FLOOR: f64 = 1e-14;

/// n-vectors the stepper keeps on the device beside a PCG solve's (which
/// counts x and b): C/Δt, the source, A·1 of the steady operator, and the
/// power being set (`set_power`'s upload, or the device assembly's); one
/// more (θⁿ) when steps are iterated ([`Stepper::save_level`]).
pub const EXTRA_VECTORS: usize = 4;

pub struct Stepper<'a, B: ThermalBackend + 'static> {
    pub(super) be: &'a B,
    /// PCG on A + C/Δt (the solver owns the matrix, on the device), its
    /// preconditioner and vectors built once for the run rather than per
    /// step.
    pub(super) ksp: Solver<'a, B>,
    /// C/Δt per cell, W/K.
    pub(super) w: B::Vector,
    /// Pⁿ⁺¹ − c·amb, W.
    pub(super) src: B::Vector,
    /// The step's right-hand side.
    pub(super) b: B::Vector,
    /// θ' = θ − c of the current time level (of the current iterate while
    /// a step is iterated).
    pub(super) x: B::Vector,
    /// θ'ⁿ while a step is iterated (allocated on first use).
    pub(super) x_old: Option<B::Vector>,
    /// The stop's reference is each step's ‖P‖ (see [`Stepper::step`]).
    pub(super) params: CgParams,
    /// A·1 of the steady operator (coupling to ambient), for the shift;
    /// with coolant Aᵀ1 (films and outlets), for TR-BDF2's heat out, the
    /// shift being 0 there.
    pub(super) amb: B::Vector,
    /// The coolant's inlet enthalpy ṁ·c θ_in on each line's first cell, W:
    /// a source beside the power (liquid-cooled stacks).
    pub(super) inlet: Option<B::Vector>,
    /// Σ ṁ·c θ_in, W: TR-BDF2's heat out is Aᵀ1·θ less this.
    pub(super) inlet_w: f64,
    /// Δt in every cell, for C/Δt (divided as the host divides), kept once
    /// a temperature-dependent C is set ([`Self::set_matrix_device`]).
    pub(super) dts: Option<B::Vector>,
    /// The shift c, K.
    pub c: f64,
    /// ‖Pⁿ⁺¹‖₂ of the current source.
    pub(super) p_norm: f64,
    /// h of the shift C/h: Δt for backward Euler, γΔt/2 for TR-BDF2, s.
    pub(super) dt: f64,
    /// The scheme of [`Self::step`].
    pub(super) scheme: Scheme,
    /// TR-BDF2's stage vectors (allocated by [`Self::use_scheme`]).
    pub(super) tr: Option<TrWork<B::Vector, B::Scalars>>,
    /// θ'ⁿ⁻¹ where backward Euler's steps start PCG from the line through
    /// the last two levels ([`Self::extrapolate`]).
    pub(super) prev: Option<B::Vector>,
}

/// A + C/Δt (the shift on the diagonal and in `amb`, as the
/// difference-form residual needs) and C/Δt per cell.
fn shifted_system(a: &QuadDiag, capacity: &[f64], dt: f64) -> (QuadDiag, Vec<f64>) {
    let w: Vec<f64> = capacity.iter().map(|cap| cap / dt).collect();
    let mut shifted = a.clone();
    for ((d, e), wi) in shifted.d.iter_mut().zip(&mut shifted.amb).zip(&w) {
        *d += wi;
        *e += wi;
    }
    (shifted, w)
}

impl<'a, B: ThermalBackend + 'static> Stepper<'a, B> {
    /// Uploads A + C/Δt (built from the steady system `sys`: its matrix,
    /// capacities and coolant), builds the preconditioner and sets θ from
    /// `theta0` (K above ambient). A liquid-cooled system takes no shift
    /// (`c` must be 0): its A·1 is not the films alone.
    pub fn new(
        be: &'a B,
        sys: &System,
        dt: f64,
        c: f64,
        theta0: &[f64],
        opts: &SteadyOptions,
    ) -> Result<Self, SolveError> {
        let a = &sys.a;
        let n = a.len();
        let (shifted, w) = shifted_system(a, &sys.capacity, dt);
        let mut op = QuadDiagOperator::owning(be, be.upload_matrix(&shifted)?, n);
        let (mut amb, mut inlet, mut inlet_w) = (None, None, 0.0);
        if let Some(coolant) = &sys.coolant {
            if c != 0.0 {
                return Err(SolveError::Backend(
                    crate::backend::BackendError::Unsupported("a shifted liquid-cooled step"),
                ));
            }
            op = op.owning_advection(be.upload_advection(&coolant.advection)?);
            let source = sys.inlet_source();
            inlet_w = source.iter().sum();
            inlet = Some(be.upload(&source)?);
            amb = Some(be.upload(&sys.column_sums())?);
        }
        let ksp = Solver::new(be, op, opts.precond, &opts.precond_opts, Some(&shifted))?;
        let params = opts.cg_params(be, ksp.precond(), Stop::relative(opts.rtol));
        let x0: Vec<f64> = theta0.iter().map(|t| t - c).collect();
        let amb = match amb {
            Some(v) => v,
            None => be.upload(&a.amb)?,
        };
        Ok(Stepper {
            be,
            w: be.upload(&w)?,
            src: be.zeros(n)?,
            b: be.zeros(n)?,
            x: be.upload(&x0)?,
            x_old: None,
            ksp,
            params,
            amb,
            inlet,
            inlet_w,
            dts: None,
            c,
            p_norm: 0.0,
            dt,
            scheme: Scheme::BackwardEuler,
            tr: None,
            prev: None,
        })
    }

    /// [`Self::new`] for a system assembled on the device: the steady `a`
    /// (shifted in place by C/Δt) and the heat capacities `capacity` there;
    /// no n-sized array is built on the host (Chebyshev's set-up reads the
    /// shifted matrix back, as the steady solve's does).
    #[allow(clippy::too_many_arguments)]
    pub fn on_device(
        be: &'a B,
        mut a: B::Matrix,
        capacity: &B::Vector,
        n: usize,
        dt: f64,
        c: f64,
        theta0: &[f64],
        opts: &SteadyOptions,
    ) -> Result<Self, SolveError> {
        // w = C/Δt, divided as the host divides.
        let mut w = be.zeros(n)?;
        let mut dts = be.zeros(n)?;
        be.nl_axpby(None, 0.0, 0.0, &mut dts, dt)?;
        be.divide(capacity, &dts, &mut w)?;
        drop(dts);
        let mut amb = be.zeros(n)?;
        be.tr_shift(&mut a, &w, &mut amb)?;
        let op = QuadDiagOperator::owning(be, a, n);
        let ksp = Solver::new(be, op, opts.precond, &opts.precond_opts, None)?;
        let params = opts.cg_params(be, ksp.precond(), Stop::relative(opts.rtol));
        let x0: Vec<f64> = theta0.iter().map(|t| t - c).collect();
        Ok(Stepper {
            be,
            w,
            src: be.zeros(n)?,
            b: be.zeros(n)?,
            x: be.upload(&x0)?,
            x_old: None,
            ksp,
            params,
            amb,
            inlet: None,
            inlet_w: 0.0,
            dts: None,
            c,
            p_norm: 0.0,
            dt,
            scheme: Scheme::BackwardEuler,
            tr: None,
            prev: None,
        })
    }

    /// Replaces A and C (properties at a new temperature; Δt and the shift
    /// stay): the steady `a` is shifted by C/Δt in place and swapped with
    /// the stepper's matrix, so `a` comes back holding the old arrays (for
    /// the next assembly to overwrite). The preconditioner is rebuilt when
    /// `rebuild` (reading the shifted matrix back where its set-up needs
    /// it on the host), else kept and told of the new
    /// matrix where A lives (as the steady Picard iteration does). Call
    /// [`Self::set_power_device`] afterwards: the source's shift depends
    /// on A.
    pub fn set_matrix_device(
        &mut self,
        a: &mut B::Matrix,
        capacity: &B::Vector,
        rebuild: bool,
    ) -> Result<(), SolveError> {
        let be = self.be;
        let n = self.ksp.len();
        let dts = match &mut self.dts {
            Some(v) => v,
            None => {
                let mut v = be.zeros(n)?;
                be.nl_axpby(None, 0.0, 0.0, &mut v, self.dt)?;
                self.dts.insert(v)
            }
        };
        // w = C/Δt, divided as the host divides.
        be.divide(capacity, dts, &mut self.w)?;
        be.tr_shift(a, &self.w, &mut self.amb)?;
        let own = self.ksp.operator_mut().matrix_mut();
        std::mem::swap(own.expect("the stepper's solver owns its matrix"), a);
        if rebuild {
            self.ksp.rebuild()?;
        } else {
            self.ksp.operator_changed()?;
        }
        Ok(())
    }

    /// θ = θ' + c of the current level (iterate), K above ambient, into `out`.
    pub fn theta_into(&self, out: &mut B::Vector) -> Result<(), SolveError> {
        Ok(self.be.nl_axpby(Some(&self.x), 1.0, 0.0, out, self.c)?)
    }

    /// Σ C·`delta` over the cells with the current C, J (`delta`: a
    /// step's change of θ, K: the heat it stored).
    pub fn stored_heat_of(&self, delta: &B::Vector) -> Result<f64, SolveError> {
        Ok(self.dt * self.be.nl_dot(&self.w, delta)?)
    }

    /// Keeps the current θ' as θ'ⁿ for [`Self::resolve`]: call before a
    /// step's first solve when the step will be solved again.
    pub fn save_level(&mut self) -> Result<(), SolveError> {
        let x_old = match &mut self.x_old {
            Some(v) => v,
            None => self.x_old.insert(self.be.zeros(self.ksp.len())?),
        };
        Ok(self.be.copy(&self.x, x_old)?)
    }

    /// Puts back the θ'ⁿ kept by [`Self::save_level`] (a step that failed
    /// is undone).
    pub fn restore_level(&mut self) -> Result<(), SolveError> {
        if let Some(x_old) = &self.x_old {
            self.be.copy(x_old, &mut self.x)?;
        }
        Ok(())
    }

    /// Sets θ of the current level (K above ambient, every cell); the
    /// extrapolation's line restarts there.
    pub fn set_theta(&mut self, theta: &[f64]) -> Result<(), SolveError> {
        let x: Vec<f64> = theta.iter().map(|t| t - self.c).collect();
        self.x = self.be.upload(&x)?;
        if let Some(prev) = &mut self.prev {
            // A level set, not stepped to: the next guess starts from it.
            self.be.copy(&self.x, prev)?;
        }
        Ok(())
    }

    /// Sets the power per cell (W) of the following steps.
    pub fn set_power(&mut self, p_cell: &[f64]) -> Result<(), SolveError> {
        self.set_power_device(&self.be.upload(p_cell)?)
    }

    /// [`Self::set_power`] from a power vector where the solve runs:
    /// src = P − c·amb (rounded as the host's p − c·e), ‖P‖₂.
    pub fn set_power_device(&mut self, p_cell: &B::Vector) -> Result<(), SolveError> {
        let be = self.be;
        be.copy(p_cell, &mut self.src)?;
        be.nl_axpby(Some(&self.amb), -self.c, 1.0, &mut self.src, 0.0)?;
        if let Some(inlet) = &self.inlet {
            be.axpby(1.0, inlet, 1.0, &mut self.src)?;
        }
        self.p_norm = be.nl_dot(p_cell, p_cell)?.sqrt();
        Ok(())
    }

    /// Σ C θ' over the cells, J (heat stored relative to θ' = 0, from the
    /// device: differences of it between time levels are the stored heat
    /// of the steps while C is unchanged).
    pub fn stored_heat(&self) -> Result<f64, SolveError> {
        Ok(self.dt * self.be.nl_dot(&self.w, &self.x)?)
    }

    /// Advances θ by one step of the stepper's scheme.
    pub fn step(&mut self) -> Result<CgInfo, SolveError> {
        if self.scheme == Scheme::TrBdf2 {
            self.save_level()?;
            return self.tr_step();
        }
        self.be.mul_add(&self.w, &self.x, &self.src, &mut self.b)?; // b = C/Δt ⊙ θ'ⁿ + (P − c·amb)
        if let Some(prev) = &mut self.prev {
            // prev ← 2θ'ⁿ − θ'ⁿ⁻¹, the guess, then swapped with θ'ⁿ.
            self.be.axpby(2.0, &self.x, -1.0, prev)?;
            std::mem::swap(&mut self.x, prev);
        }
        self.solve()
    }

    /// Backward Euler's steps from now on start PCG from 2θⁿ − θⁿ⁻¹, the
    /// line through the last two levels, instead of θⁿ: on a smooth
    /// response with a fixed Δt the error left for PCG is the second
    /// difference, not the first, and the answer is the same to the
    /// stopping test (only the start moves). The first step starts from
    /// θⁿ. One more n-vector on the device.
    pub fn extrapolate(&mut self) -> Result<(), SolveError> {
        let mut prev = self.be.zeros(self.ksp.len())?;
        self.be.copy(&self.x, &mut prev)?;
        self.prev = Some(prev);
        Ok(())
    }

    /// Solves the current step again from the θⁿ kept by
    /// [`Self::save_level`], with the current operator and source,
    /// warm-started from the last iterate.
    pub fn resolve(&mut self) -> Result<CgInfo, SolveError> {
        let x_old = self.x_old.as_ref().ok_or(SolveError::Backend(
            crate::backend::BackendError::Unsupported("Stepper::resolve before save_level"),
        ))?;
        if self.scheme == Scheme::TrBdf2 {
            return self.tr_step();
        }
        self.be.mul_add(&self.w, x_old, &self.src, &mut self.b)?; // b = C/Δt ⊙ θ'ⁿ + (P − c·amb)
        self.solve()
    }

    /// PCG on the step's system for the right-hand side in `b`.
    pub(super) fn solve(&mut self) -> Result<CgInfo, SolveError> {
        // ‖r‖ ≤ rtol·‖P‖ (‖b‖ when no power flows), but never below what f64
        // can attain relative to ‖b‖ (see the module doc).
        let params = CgParams {
            stop: Stop::against(self.params.stop.rtol, self.p_norm).with_floor(RTOL_FLOOR),
            ..self.params.clone()
        };
        self.ksp.set_params(params);
        self.ksp.solve(&self.b, &mut self.x)
    }

    /// θ' = θ − [`Self::c`] of the current time level, where it lives.
    pub fn shifted(&self) -> &B::Vector {
        &self.x
    }

    /// Downloads θ' = θ − [`Self::c`] of the current time level into `out`
    /// (the caller adds `c` in its own pass over the field).
    pub fn download_shifted(&self, out: &mut [f64]) -> Result<(), SolveError> {
        Ok(self.be.download_into(&self.x, out)?)
    }

    /// The Krylov method of the steps (BiCGStab where coolant advects).
    pub fn method(&self) -> crate::linalg::KrylovMethod {
        self.ksp.method()
    }

    pub fn precond_report(&self) -> PrecondReport {
        self.ksp.precond().report()
    }
}

/// TR-BDF2's stage vectors and the last step's results.
pub struct TrWork<V, S> {
    /// θ'_γ; scratch between steps (the estimate's solution).
    pub(super) x1: V,
    /// F(θⁿ); scratch for a step-size change.
    pub(super) f0: V,
    pub(super) s: S,
    /// The step Δt, s.
    pub(super) dt: f64,
    /// Mean heat out through the films over the last step, W.
    pub(super) heat_out_w: f64,
}
