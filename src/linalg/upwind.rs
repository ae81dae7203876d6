//! The preconditioner of a liquid-cooled stack: multigrid of the symmetric
//! part (the solid stack, with each coolant cell's outflow ṁ·c on its
//! diagonal), then an exact downstream sweep along the coolant lines on the
//! remaining residual, then multigrid again on what is left. Multigrid
//! alone sees the coolant as a sink and misses the heat it carries
//! downstream; the sweep alone (the inverse of the lines' bidiagonal chain)
//! misses the solid. Composed multiplicatively, as a two-level Schwarz
//! method, each fixes what the other cannot, and M stays one fixed linear
//! map, which BiCGStab needs.

use super::advection::AdvectionOperator;
use super::mg::MgReport;
use super::operator::{LinearOperator, QuadDiagOperator};
use super::precond::preconditioner::{PrecondInfo, PrecondReport, Preconditioner};
use super::precond::ThermalPrecond;
use crate::backend::advection::AdvectionOps;
use crate::backend::BackendError;
use crate::backend::ChebyshevOps;
use std::collections::BTreeMap;

pub struct UpwindMultigrid<B: AdvectionOps> {
    mg: Box<ThermalPrecond<B>>,
    adv: B::Advection,
    /// Residual after each stage, and the correction it gives.
    t: B::Vector,
    dz: B::Vector,
    s: B::Scalars,
}

impl<B: AdvectionOps> UpwindMultigrid<B> {
    /// `mg` built for the symmetric part; `adv` the coolant's couplings.
    pub fn new(
        be: &B,
        mg: Box<ThermalPrecond<B>>,
        adv: B::Advection,
        n: usize,
    ) -> Result<Self, BackendError> {
        Ok(UpwindMultigrid {
            mg,
            adv,
            t: be.zeros(n)?,
            dz: be.zeros(n)?,
            s: be.scalars(1)?,
        })
    }

    /// z += M_mg⁻¹ (r − A z), the multigrid of the symmetric part on the
    /// current residual.
    fn mg_correct(
        &mut self,
        be: &B,
        a: &mut AdvectionOperator<'_, B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError>
    where
        B: ChebyshevOps,
    {
        a.residual(be, r, z, &mut self.t, &mut self.s, 0)?;
        let mut sym = QuadDiagOperator::new(be, a.symmetric(), a.len());
        self.mg.apply(be, &mut sym, &self.t, &mut self.dz)?;
        be.axpby(1.0, &self.dz, 1.0, z)
    }
}

impl<'x, B: AdvectionOps + ChebyshevOps> Preconditioner<B, AdvectionOperator<'x, B>>
    for UpwindMultigrid<B>
{
    fn apply(
        &mut self,
        be: &B,
        a: &mut AdvectionOperator<'x, B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        // z = M_mg⁻¹ r
        be.axpby(0.0, r, 0.0, z)?;
        self.mg_correct(be, a, r, z)?;
        // z += (D_f − L_f)⁻¹ (r − A z) on the coolant cells
        a.residual(be, r, z, &mut self.t, &mut self.s, 0)?;
        be.axpby(0.0, r, 0.0, &mut self.dz)?;
        be.upwind_sweep(&self.adv, a.diagonal(), &self.t, &mut self.dz)?;
        be.axpby(1.0, &self.dz, 1.0, z)?;
        // z += M_mg⁻¹ (r − A z)
        self.mg_correct(be, a, r, z)
    }
}

impl<B: AdvectionOps> PrecondInfo for UpwindMultigrid<B> {
    fn report(&self) -> PrecondReport {
        let inner = self.mg.report();
        let multigrid: Option<MgReport> = inner.multigrid;
        PrecondReport {
            name: "upwind-mg".into(),
            params: BTreeMap::new(),
            multigrid,
        }
    }
}
