//! The solver object of a liquid-cooled stack: its operator
//! ([`AdvectionOperator`]), the upwind multigrid built for it, and the
//! Krylov method the operator asks for ([`KrylovMethod::for_operator`]:
//! BiCGStab, since the coolant's advection is not symmetric).

use super::advection::AdvectionOperator;
use super::bicgstab::bicgstab;
use super::operator::QuadDiagOperator;
use super::params::{CgInfo, CgParams, SolveError};
use super::precond::chebyshev::ChebyshevLevels;
use super::precond::{build_thermal_precond, PrecondInfo, PrecondKind, PrecondOptions};
use super::solver::KrylovMethod;
use super::upwind::UpwindMultigrid;
use crate::backend::advection::AdvectionOps;
use crate::backend::mg::MultigridOps;
use crate::matrix::advection::Advection;

pub struct CavitySolver<'a, B: AdvectionOps> {
    be: &'a B,
    op: AdvectionOperator<'a, B>,
    precond: Box<UpwindMultigrid<B>>,
    method: KrylovMethod,
    params: CgParams,
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
        let method = KrylovMethod::for_operator::<B>(&op);
        Ok(CavitySolver {
            be,
            op,
            precond,
            method,
            params: CgParams::default(),
        })
    }

    pub fn set_params(&mut self, params: CgParams) {
        self.params = params;
    }

    pub fn method(&self) -> KrylovMethod {
        self.method
    }

    pub fn precond(&self) -> &dyn PrecondInfo {
        self.precond.as_ref()
    }

    /// Solves A x = b from the guess in `x`.
    pub fn solve(&mut self, b: &B::Vector, x: &mut B::Vector) -> Result<CgInfo, SolveError> {
        match self.method {
            KrylovMethod::BiCgStab => bicgstab(
                self.be,
                &mut self.op,
                self.precond.as_mut(),
                b,
                x,
                &self.params,
            ),
            KrylovMethod::Cg => super::pcg(
                self.be,
                &mut self.op,
                self.precond.as_mut(),
                b,
                x,
                &self.params,
            ),
        }
    }
}
