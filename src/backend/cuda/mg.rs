//! [`MultigridOps`] on CUDA: the cycle runs the launchers of `mg_cycle.rs`
//! on the f64 levels (the device matrix) and on the f32 ones (`mg_low.rs`),
//! each read as a [`Level`]; the set-up's launchers are in `mg_setup.rs`.

use super::mg_cycle::{CudaTransfer, Level, MULTIGRID};
use super::mg_low::CudaLowLevel;
use super::mg_setup::MG_SETUP;
use super::{CudaBackend, CudaMatrix};
use crate::backend::mg::{LevelShape, MultigridOps, Relax};
use crate::backend::BackendError;
use crate::matrix::coarsen::{AxisMap, Coarsening};
use cudarc::driver::CudaSlice;

impl<'a> From<&'a CudaMatrix> for Level<'a, f64> {
    fn from(a: &'a CudaMatrix) -> Self {
        Level {
            diag: &a.d,
            gx: &a.gx,
            gy: &a.gy,
            gz: &a.gz,
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
        }
    }
}

impl MultigridOps for CudaBackend {
    type Transfer = CudaTransfer;
    type LowMatrix = CudaLowLevel;
    type LowVector = CudaSlice<f32>;
    type Recording = super::timing::Recording;

    fn mg_record(
        &self,
        f: &mut dyn FnMut() -> Result<(), BackendError>,
    ) -> Result<Option<Self::Recording>, BackendError> {
        self.record(f)
    }

    fn mg_replay(&self, r: &Self::Recording) -> Result<(), BackendError> {
        self.replay(r)
    }

    fn mg_address(&self, v: &CudaSlice<f64>) -> usize {
        self.address(v)
    }

    fn mg_matrix_address(&self, a: &CudaMatrix) -> usize {
        self.address(&a.d)
    }

    fn mg_transfer(&self, c: &Coarsening) -> Result<CudaTransfer, BackendError> {
        CudaTransfer::upload(self, c)
    }

    fn prepare_multigrid(&self) -> Result<(), BackendError> {
        self.load(&MULTIGRID)?;
        self.load(&MG_SETUP)
    }

    fn mg_shape<'m>(&self, a: &'m CudaMatrix) -> LevelShape<'m> {
        Self::mgs_shape(a)
    }

    fn mg_coarsen(
        &self,
        a: &CudaMatrix,
        mx: &AxisMap,
        my: &AxisMap,
    ) -> Result<CudaMatrix, BackendError> {
        self.mgs_coarsen(a, mx, my)
    }

    fn mg_release_ambient(&self, a: &mut CudaMatrix) -> Result<(), BackendError> {
        // One value stays (no zero-length allocation); `mgs_coarsen` refuses
        // the matrix from now on (its amb no longer holds a value per cell).
        a.amb = self.mgs_zeros(1, "a released amb")?;
        Ok(())
    }

    fn mg_line_pivots(&self, a: &CudaMatrix) -> Result<CudaSlice<f64>, BackendError> {
        self.mgs_pivots(a)
    }

    fn mg_smooth(
        &self,
        a: &CudaMatrix,
        relax: Relax<'_, Self>,
        b: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.cycle_smooth(a.into(), relax, b, x)
    }

    fn mg_restrict_residual(
        &self,
        a: &CudaMatrix,
        t: &CudaTransfer,
        b: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        bc: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.cycle_restrict_residual(a.into(), t, b, x, bc)
    }

    fn mg_prolong_add(
        &self,
        t: &CudaTransfer,
        xc: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.cycle_prolong_add(t, xc, x)
    }

    fn mg_dense_apply(
        &self,
        m: &CudaSlice<f64>,
        n: usize,
        b: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.cycle_dense_apply(m, n, b, x)
    }

    fn mg_low_matrix(&self, a: &CudaMatrix) -> Result<CudaLowLevel, BackendError> {
        self.low_matrix(a)
    }
    fn mg_low_vector(&self, v: &CudaSlice<f64>) -> Result<CudaSlice<f32>, BackendError> {
        self.low_vector(v)
    }
    fn mg_low_zeros(&self, n: usize) -> Result<CudaSlice<f32>, BackendError> {
        self.low_zeros(n)
    }
    fn mg_to_low(&self, v: &CudaSlice<f64>, out: &mut CudaSlice<f32>) -> Result<(), BackendError> {
        self.narrow(v, out)
    }
    fn mg_from_low(
        &self,
        v: &CudaSlice<f32>,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.widen(v, out)
    }
    fn mg_low_smooth(
        &self,
        a: &CudaLowLevel,
        relax: Relax<'_, Self, CudaSlice<f32>>,
        b: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        self.cycle_smooth(a.into(), relax, b, x)
    }
    fn mg_low_restrict_residual(
        &self,
        a: &CudaLowLevel,
        c: &CudaTransfer,
        b: &CudaSlice<f32>,
        x: &CudaSlice<f32>,
        bc: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        self.cycle_restrict_residual(a.into(), c, b, x, bc)
    }
    fn mg_low_prolong_add(
        &self,
        c: &CudaTransfer,
        xc: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        self.cycle_prolong_add(c, xc, x)
    }
    fn mg_low_dense_apply(
        &self,
        m: &CudaSlice<f32>,
        n: usize,
        b: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        self.cycle_dense_apply(m, n, b, x)
    }
}
