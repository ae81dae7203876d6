//! The solver object, as PETSc's KSP is one: a Krylov method, a
//! preconditioner built for the operator, and the method's work vectors,
//! set up once and then used for every right-hand side of that operator
//! (the cases of a sweep, the steps of a transient run, the outer
//! iterations of a k(T) solve). Callers never see the preconditioner's
//! concrete type nor what its set-up reads: [`PrecondKind::needs`] says,
//! and the solver fetches it.
//!
//! [`PrecondKind::needs`]: super::PrecondKind::needs

use super::operator::{LinearOperator, QuadDiagOperator};
use super::pcg::{pcg_with, true_relative_residual, CgInfo, CgParams, PcgWork, SolveError};
use super::precond::{build_thermal_precond, PrecondKind, PrecondOptions, Preconditioner};
use super::QuadDiag;
use crate::backend::mg::MultigridOps;
use crate::backend::Backend;
use std::borrow::Cow;

use super::precond::chebyshev::ChebyshevLevels;

/// The Krylov method of a [`Solver`]. A further method (a non-symmetric
/// one, say) is a new variant and a new arm in [`Solver::solve`]; callers
/// only name it where they build the solver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KrylovMethod {
    /// Preconditioned conjugate gradients (SPD operators).
    #[default]
    Cg,
}

impl KrylovMethod {
    /// The name `summary.json` reports.
    pub fn name(self) -> &'static str {
        match self {
            KrylovMethod::Cg => "pcg",
        }
    }
}

/// A [`Solver`] without its operator: what outlives a borrow of the matrix
/// that is re-assembled in place between solves (a k(T) outer iteration).
pub struct SolverState<B: Backend> {
    precond: Box<dyn Preconditioner<B>>,
    kind: PrecondKind,
    opts: PrecondOptions,
    method: KrylovMethod,
    params: CgParams,
    work: PcgWork<B>,
}

/// A Krylov solver for one thermal Quad-Diag operator.
pub struct Solver<'a, B: ChebyshevLevels + MultigridOps + 'static> {
    be: &'a B,
    op: QuadDiagOperator<'a, B>,
    state: SolverState<B>,
}

impl<'a, B: ChebyshevLevels + MultigridOps + 'static> Solver<'a, B> {
    /// CG with the preconditioner `kind` built for `op`. `host` is the
    /// operator's matrix on the host where the caller has it; a set-up that
    /// reads the matrix there is given it, or a copy read back from `op`
    /// (a matrix assembled on the device), and the others never download.
    pub fn new(
        be: &'a B,
        op: QuadDiagOperator<'a, B>,
        kind: PrecondKind,
        opts: &PrecondOptions,
        host: Option<&QuadDiag>,
    ) -> Result<Self, SolveError> {
        let precond = build(be, &op, kind, opts, host)?;
        let work = PcgWork::new(be, op.len())?;
        Ok(Solver {
            be,
            op,
            state: SolverState {
                precond,
                kind,
                opts: opts.clone(),
                method: KrylovMethod::Cg,
                params: CgParams::default(),
                work,
            },
        })
    }

    /// The solver of `state` (kept by [`Self::release`]) on `op`, the same
    /// operator or one of its size; call [`Self::operator_changed`] or
    /// [`Self::rebuild`] when its values differ from those M was built for.
    pub fn resume(be: &'a B, op: QuadDiagOperator<'a, B>, state: SolverState<B>) -> Self {
        Solver { be, op, state }
    }

    /// Ends the borrow of the operator, keeping the rest for [`Self::resume`].
    pub fn release(self) -> SolverState<B> {
        self.state
    }

    /// Sets the Krylov method of the following solves.
    pub fn with_method(mut self, method: KrylovMethod) -> Self {
        self.state.method = method;
        self
    }

    pub fn method(&self) -> KrylovMethod {
        self.state.method
    }

    /// Stop, iteration cap and check interval of the following solves.
    pub fn set_params(&mut self, params: CgParams) {
        self.state.params = params;
    }

    pub fn params(&self) -> &CgParams {
        &self.state.params
    }

    /// Solves A x = b from the initial guess in `x`.
    pub fn solve(&mut self, b: &B::Vector, x: &mut B::Vector) -> Result<CgInfo, SolveError> {
        let s = &mut self.state;
        let mut info = CgInfo::default();
        match s.method {
            KrylovMethod::Cg => pcg_with(
                self.be,
                &mut self.op,
                s.precond.as_mut(),
                b,
                x,
                &mut s.work,
                &s.params,
                &mut info,
            )?,
        }
        Ok(info)
    }

    /// The operator's values changed in place (a k(T) re-assembly, a new
    /// matrix swapped in): M stays built for the old values, what it reads
    /// of the matrix at apply time is refreshed (multigrid's fine-level
    /// line pivots).
    pub fn operator_changed(&mut self) -> Result<(), SolveError> {
        Ok(self.state.precond.operator_changed(self.be, &mut self.op)?)
    }

    /// Builds M again for the operator's current values (its set-up
    /// included: eigenvalue bounds, the multigrid hierarchy).
    pub fn rebuild(&mut self) -> Result<(), SolveError> {
        let s = &mut self.state;
        s.precond = build(self.be, &self.op, s.kind, &s.opts, None)?;
        Ok(())
    }

    /// ‖b − A x‖₂ / ‖b‖₂ in f64, divided by `scale` (see
    /// [`true_relative_residual`]).
    pub fn true_relative_residual(
        &mut self,
        b: &B::Vector,
        x: &B::Vector,
        scale: f64,
    ) -> Result<f64, SolveError> {
        Ok(true_relative_residual(self.be, &mut self.op, b, x, scale)?)
    }

    /// The preconditioner, for its report and precision.
    pub fn precond(&self) -> &dyn Preconditioner<B> {
        self.state.precond.as_ref()
    }

    pub fn operator(&self) -> &QuadDiagOperator<'a, B> {
        &self.op
    }

    /// The operator, to change its matrix (then [`Self::operator_changed`]
    /// or [`Self::rebuild`]).
    pub fn operator_mut(&mut self) -> &mut QuadDiagOperator<'a, B> {
        &mut self.op
    }

    /// Rows of the operator.
    pub fn len(&self) -> usize {
        self.op.len()
    }

    pub fn is_empty(&self) -> bool {
        self.op.is_empty()
    }
}

/// M of `kind` for `op`, given the host matrix its set-up reads (`host`,
/// else read back from `op`) only where [`PrecondKind::needs`] asks.
fn build<B: ChebyshevLevels + MultigridOps + 'static>(
    be: &B,
    op: &QuadDiagOperator<'_, B>,
    kind: PrecondKind,
    opts: &PrecondOptions,
    host: Option<&QuadDiag>,
) -> Result<Box<dyn Preconditioner<B>>, SolveError> {
    // A borrowed view: the host copy may borrow the matrix too (the CPU's).
    let a = op.matrix();
    let mut view = QuadDiagOperator::new(be, a, op.len());
    let host = match host {
        Some(h) => Some(Cow::Borrowed(h)),
        None if kind.needs().host_matrix => Some(be.host_matrix(a)?),
        None => None,
    };
    build_thermal_precond(kind, be, &mut view, host.as_deref(), opts)
}
