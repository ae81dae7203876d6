//! [`MultigridOps`] on CUDA: launchers of `kernels/mg.cu` (the cycle); the
//! set-up's are in `mg_setup.rs`. Lengths are
//! checked here, on the host, because the kernels trust the sizes.

use super::kernels::KernelFamily;
use super::launch::{driver_err, rows_config};
use super::mg_low::CudaLowLevel;
use super::mg_setup::MG_SETUP;
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::mg::{Guess, LevelShape, MultigridOps, Relax};
use crate::backend::BackendError;
use crate::matrix::coarsen::{AxisMap, Coarsening};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/mg.cu`.
pub static MULTIGRID: KernelFamily = KernelFamily {
    file: "mg.cu",
    source: include_str!("../../../kernels/mg.cu"),
    entry_points: &[
        "mg_smooth_f64",
        "mg_restrict_f64",
        "mg_prolong_f64",
        "mg_dense_f64",
        "mg_smooth_f32",
        "mg_restrict_f32",
        "mg_prolong_f32",
        "mg_dense_f32",
        "mg_low_matrix_f32",
        "mg_to_f32",
        "mg_to_f64",
    ],
};

/// A coarsening step on the device: the host [`Coarsening`] and its maps
/// packed as the kernels read them (see kernels/mg.cu): aggregate starts in
/// x and y, then the parent of each fine column and row.
pub struct CudaTransfer {
    host: Coarsening,
    pub(super) maps: CudaSlice<i64>,
}

impl AsRef<Coarsening> for CudaTransfer {
    fn as_ref(&self) -> &Coarsening {
        &self.host
    }
}

impl MultigridOps for CudaBackend {
    type Transfer = CudaTransfer;
    type LowMatrix = CudaLowLevel;
    type LowVector = CudaSlice<f32>;

    fn mg_transfer(&self, c: &Coarsening) -> Result<CudaTransfer, BackendError> {
        let packed: Vec<i64> = [&c.xstart, &c.ystart, &c.xmap, &c.ymap]
            .iter()
            .flat_map(|v| v.iter().map(|&k| k as i64))
            .collect();
        let maps = self
            .stream
            .clone_htod(&packed)
            .map_err(|e| driver_err("uploading the multigrid maps", e))?;
        Ok(CudaTransfer {
            host: c.clone(),
            maps,
        })
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
        let Relax {
            inv_pivots,
            colour,
            guess,
            made_by,
        } = relax;
        for len in [inv_pivots.len(), b.len(), x.len()] {
            same_len(a.len(), len)?;
        }
        if let Some(t) = made_by {
            same_len(a.nx, t.host.nxc)?;
            same_len(a.ny, t.host.nyc)?;
        }
        const NAME: &str = "mg_smooth_f64";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let (nx, ny, nz) = (a.nx as i64, a.ny as i64, a.nz as i64);
        let colour = (colour & 1) as i32;
        let zero: i32 = match guess {
            Guess::Full => 0,
            Guess::ColourZero => 1,
            Guess::Zero => 2,
        };
        let columns = a.nx.div_ceil(2) * a.ny;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(inv_pivots).arg(b).arg(x);
        args.arg(&nx).arg(&ny).arg(&nz).arg(&colour).arg(&zero);
        let null = 0u64;
        match made_by {
            Some(t) => args.arg(&t.maps),
            None => args.arg(&null),
        };
        // SAFETY: arguments in the kernel's order and types (`made`: the
        // maps of the step that made this level, or null); lengths checked.
        unsafe { self.run(NAME, &mut args, rows_config(columns)) }
    }

    fn mg_restrict_residual(
        &self,
        a: &CudaMatrix,
        t: &CudaTransfer,
        b: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        bc: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let c = &t.host;
        same_len(a.len(), b.len())?;
        same_len(a.len(), x.len())?;
        same_len(a.len(), c.nx * c.ny * c.nz)?;
        same_len(c.coarse_len(), bc.len())?;
        const NAME: &str = "mg_restrict_f64";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let dims = [c.nx, c.ny, c.nz, c.nxc, c.nyc].map(|v| v as i64);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(b).arg(x).arg(bc);
        for d in &dims {
            args.arg(d);
        }
        args.arg(&t.maps);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(c.coarse_len())) }
    }

    fn mg_prolong_add(
        &self,
        t: &CudaTransfer,
        xc: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let c = &t.host;
        same_len(c.coarse_len(), xc.len())?;
        same_len(c.nx * c.ny * c.nz, x.len())?;
        const NAME: &str = "mg_prolong_f64";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let dims = [c.nx, c.ny, c.nz, c.nxc, c.nyc].map(|v| v as i64);
        let n = x.len();
        let mut args = self.stream.launch_builder(&f);
        args.arg(xc).arg(x);
        for d in &dims {
            args.arg(d);
        }
        args.arg(&t.maps);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(n)) }
    }

    fn mg_dense_apply(
        &self,
        m: &CudaSlice<f64>,
        n: usize,
        b: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(n * n, m.len())?;
        same_len(n, b.len())?;
        same_len(n, x.len())?;
        const NAME: &str = "mg_dense_f64";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let nn = n as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(m).arg(b).arg(x).arg(&nn);
        // SAFETY: as above; one warp per row.
        unsafe { self.run(NAME, &mut args, rows_config(32 * n)) }
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
        self.low_smooth(a, relax, b, x)
    }
    fn mg_low_restrict_residual(
        &self,
        a: &CudaLowLevel,
        c: &CudaTransfer,
        b: &CudaSlice<f32>,
        x: &CudaSlice<f32>,
        bc: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        self.low_restrict_residual(a, c, b, x, bc)
    }
    fn mg_low_prolong_add(
        &self,
        c: &CudaTransfer,
        xc: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        self.low_prolong_add(c, xc, x)
    }
    fn mg_low_dense_apply(
        &self,
        m: &CudaSlice<f32>,
        n: usize,
        b: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        self.low_dense_apply(m, n, b, x)
    }
}
