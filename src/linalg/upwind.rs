//! The preconditioner of a liquid-cooled stack: multigrid of the symmetric
//! part (the solid stack, with each coolant cell's outflow ṁ·c on its
//! diagonal), then an exact downstream sweep along the coolant lines on the
//! remaining residual, then multigrid again on what is left. Multigrid
//! alone sees the coolant as a sink and misses the heat it carries
//! downstream; the sweep alone (the inverse of the lines' bidiagonal chain)
//! misses the solid. Composed multiplicatively, as a two-level Schwarz
//! method, each fixes what the other cannot, and M stays one fixed linear
//! map, which BiCGStab needs.

use super::mg::MgReport;
use super::operator::{LinearOperator, QuadDiagOperator};
use super::precond::preconditioner::{PrecondInfo, PrecondReport, Preconditioner};
use super::precond::ThermalPrecond;
use crate::backend::{BackendError, ChebyshevOps, QuadDiagOps};
use std::collections::BTreeMap;

pub struct UpwindMultigrid<B: QuadDiagOps> {
    mg: Box<ThermalPrecond<B>>,
    /// Residual after each stage, and the correction it gives.
    t: B::Vector,
    dz: B::Vector,
    s: B::Scalars,
}

impl<B: QuadDiagOps> UpwindMultigrid<B> {
    /// `mg` built for the symmetric part of an operator of `n` rows.
    pub fn new(be: &B, mg: Box<ThermalPrecond<B>>, n: usize) -> Result<Self, BackendError> {
        Ok(UpwindMultigrid {
            mg,
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
        a: &mut QuadDiagOperator<'_, B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError>
    where
        B: ChebyshevOps,
    {
        a.residual(be, r, z, &mut self.t, &mut self.s, 0)?;
        let mut sym = a.symmetric_part();
        self.mg.apply(be, &mut sym, &self.t, &mut self.dz)?;
        be.axpby(1.0, &self.dz, 1.0, z)
    }
}

impl<'x, B: QuadDiagOps + ChebyshevOps> Preconditioner<B, QuadDiagOperator<'x, B>>
    for UpwindMultigrid<B>
{
    fn apply(
        &mut self,
        be: &B,
        a: &mut QuadDiagOperator<'x, B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        if a.advection().is_none() {
            // No coolant: the multigrid alone.
            let mut sym = a.symmetric_part();
            return self.mg.apply(be, &mut sym, r, z);
        }
        // z = M_mg⁻¹ r (the first correction, from z = 0, needs no residual)
        self.mg.apply(be, &mut a.symmetric_part(), r, z)?;
        // z += (D_f − L_f)⁻¹ (r − A z) on the coolant cells
        a.residual(be, r, z, &mut self.t, &mut self.s, 0)?;
        be.axpby(0.0, r, 0.0, &mut self.dz)?;
        if let Some(adv) = a.advection() {
            be.line_solve(adv, a.diagonal(), &self.t, &mut self.dz)?;
        }
        be.axpby(1.0, &self.dz, 1.0, z)?;
        // z += M_mg⁻¹ (r − A z)
        self.mg_correct(be, a, r, z)
    }

    fn operator_changed(
        &mut self,
        be: &B,
        a: &mut QuadDiagOperator<'x, B>,
    ) -> Result<(), BackendError> {
        let mut sym = a.symmetric_part();
        self.mg.operator_changed(be, &mut sym)
    }
}

impl<B: QuadDiagOps> PrecondInfo for UpwindMultigrid<B> {
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
