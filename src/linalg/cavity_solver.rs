//! The solver object of a liquid-cooled stack: its operator
//! ([`AdvectionOperator`]), the upwind multigrid built for it, and the
//! Krylov method the operator asks for ([`KrylovMethod::for_operator`]:
//! BiCGStab, since the coolant's advection is not symmetric).

use super::advection::AdvectionOperator;
use super::krylov::{Krylov, KrylovMethod};
use super::operator::QuadDiagOperator;
use super::params::{CgInfo, CgParams, SolveError};
use super::precond::chebyshev::ChebyshevLevels;
use super::precond::{build_thermal_precond, PrecondInfo, PrecondKind, PrecondOptions};
use super::upwind::UpwindMultigrid;
use crate::backend::advection::AdvectionOps;
use crate::backend::mg::MultigridOps;
use crate::matrix::advection::Advection;

pub struct CavitySolver<'a, B: AdvectionOps> {
    be: &'a B,
    op: AdvectionOperator<'a, B>,
    precond: Box<UpwindMultigrid<B>>,
    krylov: Krylov<B>,
}

impl<'a, B> CavitySolver<'a, B>
where
    B: AdvectionOps + ChebyshevLevels + MultigridOps + 'static,
{
    /// The solver of S − L: `a` the symmetric part on the device, `adv`
    /// the couplings there and `host_adv` on the host (the preconditioner
    /// keeps its own copy).
    pub fn new(
        be: &'a B,
        a: &'a B::Matrix,
        adv: &'a B::Advection,
        host_adv: &Advection,
        n: usize,
        opts: &PrecondOptions,
    ) -> Result<Self, SolveError> {
        let mut sym = QuadDiagOperator::new(be, a, n);
        let mg = build_thermal_precond(PrecondKind::Multigrid, be, &mut sym, None, opts)?;
        let precond = Box::new(UpwindMultigrid::new(
            be,
            mg,
            be.upload_advection(host_adv)?,
            n,
        )?);
        let op = AdvectionOperator::new(be, a, adv, n)?;
        let krylov = Krylov::new(be, KrylovMethod::for_operator::<B>(&op), n)?;
        Ok(CavitySolver {
            be,
            op,
            precond,
            krylov,
        })
    }

    pub fn set_params(&mut self, params: CgParams) {
        self.krylov.set_params(params);
    }

    pub fn params(&self) -> &CgParams {
        self.krylov.params()
    }

    pub fn method(&self) -> KrylovMethod {
        self.krylov.method()
    }

    pub fn precond(&self) -> &dyn PrecondInfo {
        self.precond.as_ref()
    }

    /// ‖b − A x‖₂ / ‖b‖₂ in f64, divided by `scale` (see
    /// [`super::pcg::true_relative_residual`]).
    pub fn true_relative_residual(
        &mut self,
        b: &B::Vector,
        x: &B::Vector,
        scale: f64,
    ) -> Result<f64, SolveError> {
        Ok(super::pcg::true_relative_residual(
            self.be,
            &mut self.op,
            b,
            x,
            scale,
        )?)
    }

    /// Solves A x = b from the guess in `x`.
    pub fn solve(&mut self, b: &B::Vector, x: &mut B::Vector) -> Result<CgInfo, SolveError> {
        let (be, op, m) = (self.be, &mut self.op, self.precond.as_mut());
        self.krylov.solve(be, op, m, b, x)
    }
}
