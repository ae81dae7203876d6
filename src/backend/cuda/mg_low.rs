//! The f32 multigrid levels on CUDA (`MultigridOps::mg_low_*`): launchers
//! of the `*_f32` instantiations in `kernels/mg.cu`, the same templates as
//! the f64 cycle's. Lengths are checked here, on the host.

use super::launch::rows_config;
use super::mg::{CudaTransfer, MULTIGRID};
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::mg::{Guess, Relax};
use crate::backend::BackendError;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// A level's operator in f32: the diagonal's excess over the couplings
/// s = d − Σ g (see `kernels/mg.cu`, `mg_low_ax`), and the couplings.
pub struct CudaLowLevel {
    pub s: CudaSlice<f32>,
    pub gx: CudaSlice<f32>,
    pub gy: CudaSlice<f32>,
    pub gz: CudaSlice<f32>,
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
}

impl CudaLowLevel {
    fn len(&self) -> usize {
        self.nx * self.ny * self.nz
    }
}

impl CudaBackend {
    fn low_alloc(&self, n: usize, what: &str) -> Result<CudaSlice<f32>, BackendError> {
        self.stream
            .alloc_zeros::<f32>(n.max(1))
            .map_err(|e| super::launch::driver_err(&format!("allocating {what}"), e))
    }

    pub(super) fn low_zeros(&self, n: usize) -> Result<CudaSlice<f32>, BackendError> {
        self.low_alloc(n, "an f32 multigrid vector")
    }

    pub(super) fn low_matrix(&self, a: &CudaMatrix) -> Result<CudaLowLevel, BackendError> {
        let n = a.len();
        for len in [a.d.len(), a.gx.len(), a.gy.len(), a.gz.len()] {
            same_len(n, len)?;
        }
        let mut low = CudaLowLevel {
            s: self.low_alloc(n, "an f32 multigrid level")?,
            gx: self.low_alloc(n, "an f32 multigrid level")?,
            gy: self.low_alloc(n, "an f32 multigrid level")?,
            gz: self.low_alloc(n, "an f32 multigrid level")?,
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
        };
        const NAME: &str = "mg_low_matrix_f32";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let dims = [a.nx, a.ny, a.nz].map(|v| v as i64);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(&mut low.s)
            .arg(&mut low.gx)
            .arg(&mut low.gy)
            .arg(&mut low.gz);
        for d in &dims {
            args.arg(d);
        }
        // SAFETY: arguments in the kernel's order and types; every array
        // holds n values (checked above, allocated here).
        unsafe { self.run(NAME, &mut args, rows_config(n)) }?;
        Ok(low)
    }

    pub(super) fn narrow(
        &self,
        v: &CudaSlice<f64>,
        out: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        same_len(v.len(), out.len())?;
        const NAME: &str = "mg_to_f32";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let n = v.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(v).arg(out).arg(&n);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(v.len())) }
    }

    pub(super) fn low_vector(&self, v: &CudaSlice<f64>) -> Result<CudaSlice<f32>, BackendError> {
        let mut out = self.low_zeros(v.len())?;
        if !v.is_empty() {
            self.narrow(v, &mut out)?;
        }
        Ok(out)
    }

    pub(super) fn widen(
        &self,
        v: &CudaSlice<f32>,
        out: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(v.len(), out.len())?;
        const NAME: &str = "mg_to_f64";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let n = v.len() as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(v).arg(out).arg(&n);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(v.len())) }
    }

    pub(super) fn low_smooth(
        &self,
        a: &CudaLowLevel,
        relax: Relax<'_, Self, CudaSlice<f32>>,
        b: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
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
            same_len(a.nx, t.as_ref().nxc)?;
            same_len(a.ny, t.as_ref().nyc)?;
        }
        const NAME: &str = "mg_smooth_f32";
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
        // SAFETY: as `mg_smooth` (f64), at f32.
        unsafe { self.run(NAME, &mut args, rows_config(columns)) }
    }

    pub(super) fn low_restrict_residual(
        &self,
        a: &CudaLowLevel,
        t: &CudaTransfer,
        b: &CudaSlice<f32>,
        x: &CudaSlice<f32>,
        bc: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        let c = t.as_ref();
        same_len(a.len(), b.len())?;
        same_len(a.len(), x.len())?;
        same_len(a.len(), c.nx * c.ny * c.nz)?;
        same_len(c.coarse_len(), bc.len())?;
        const NAME: &str = "mg_restrict_f32";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let dims = [c.nx, c.ny, c.nz, c.nxc, c.nyc].map(|v| v as i64);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.s).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(b).arg(x).arg(bc);
        for d in &dims {
            args.arg(d);
        }
        args.arg(&t.maps);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, rows_config(c.coarse_len())) }
    }

    pub(super) fn low_prolong_add(
        &self,
        t: &CudaTransfer,
        xc: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        let c = t.as_ref();
        same_len(c.coarse_len(), xc.len())?;
        same_len(c.nx * c.ny * c.nz, x.len())?;
        const NAME: &str = "mg_prolong_f32";
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

    pub(super) fn low_dense_apply(
        &self,
        m: &CudaSlice<f32>,
        n: usize,
        b: &CudaSlice<f32>,
        x: &mut CudaSlice<f32>,
    ) -> Result<(), BackendError> {
        same_len(n * n, m.len())?;
        same_len(n, b.len())?;
        same_len(n, x.len())?;
        const NAME: &str = "mg_dense_f32";
        let f = self.kernel(&MULTIGRID, NAME)?;
        let nn = n as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(m).arg(b).arg(x).arg(&nn);
        // SAFETY: as above; one warp per row.
        unsafe { self.run(NAME, &mut args, rows_config(32 * n)) }
    }
}
