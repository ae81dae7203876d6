//! The multigrid set-up on the GPU: launchers of
//! `kernels/mg_setup.cu`, which build a coarse level's operator (faces, then
//! the diagonal) and a level's z-line pivots from the level above, on the
//! device. The aggregation comes as [`AxisMap`]s, uploaded as a few small
//! arrays per step, so the fine matrix never travels. Lengths and maps are
//! checked here, on the host, because the kernels trust them.

use super::kernels::KernelFamily;
use super::launch::{driver_err, rows_config};
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::mg::{check_axes, LevelShape};
use crate::backend::BackendError;
use crate::matrix::coarsen::AxisMap;
use cudarc::driver::{CudaSlice, DeviceRepr, PushKernelArg};

/// `kernels/mg_setup.cu`.
pub static MG_SETUP: KernelFamily = KernelFamily {
    file: "mg_setup.cu",
    source: include_str!("../../../kernels/mg_setup.cu"),
    entry_points: &["mgs_coarsen_f64", "mgs_diagonal_f64", "mgs_pivots_f64"],
};

/// Rows per launch at most (a grid-stride loop covers the rest).
const MAX_ROWS: usize = 1 << 26;

impl CudaBackend {
    fn mgs_upload<T: DeviceRepr>(&self, v: &[T], what: &str) -> Result<CudaSlice<T>, BackendError> {
        self.stream
            .clone_htod(v)
            .map_err(|e| driver_err(&format!("uploading {what}"), e))
    }

    pub(super) fn mgs_zeros(&self, n: usize, what: &str) -> Result<CudaSlice<f64>, BackendError> {
        self.stream
            .alloc_zeros::<f64>(n.max(1))
            .map_err(|e| driver_err(&format!("allocating {what}"), e))
    }

    /// The shape of `a` for the set-up.
    pub(super) fn mgs_shape<'m>(a: &'m CudaMatrix) -> LevelShape<'m> {
        LevelShape {
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
            wx: &a.wx,
            wy: &a.wy,
        }
    }

    /// The coarse operator of `a` under `mx`, `my` (`coarsen_with`).
    pub(super) fn mgs_coarsen(
        &self,
        a: &CudaMatrix,
        mx: &AxisMap,
        my: &AxisMap,
    ) -> Result<CudaMatrix, BackendError> {
        check_axes(&Self::mgs_shape(a), mx, my)?;
        for len in [a.d.len(), a.gx.len(), a.gy.len(), a.gz.len(), a.amb.len()] {
            same_len(a.len(), len)?;
        }
        self.load(&MG_SETUP)?;
        let (nxc, nyc, nz) = (mx.widths.len(), my.widths.len(), a.nz);
        let nc = nxc * nyc * nz;
        let index = |m: &AxisMap| m.start.iter().map(|&s| s as i64).collect::<Vec<i64>>();
        let xs = self.mgs_upload(&index(mx), "the x aggregates")?;
        let ys = self.mgs_upload(&index(my), "the y aggregates")?;
        // A 1-wide axis has no coarse face: pass one unused value.
        let factors = |v: &[f64]| if v.is_empty() { vec![0.0] } else { v.to_vec() };
        let fxn = self.mgs_upload(&factors(&mx.num), "the x face factors")?;
        let fxd = self.mgs_upload(&factors(&mx.den), "the x face factors")?;
        let fyn = self.mgs_upload(&factors(&my.num), "the y face factors")?;
        let fyd = self.mgs_upload(&factors(&my.den), "the y face factors")?;
        let mut c = CudaMatrix {
            d: self.mgs_zeros(nc, "a coarse diagonal")?,
            gx: self.mgs_zeros(nc, "a coarse gx")?,
            gy: self.mgs_zeros(nc, "a coarse gy")?,
            gz: self.mgs_zeros(nc, "a coarse gz")?,
            amb: self.mgs_zeros(nc, "a coarse amb")?,
            nx: nxc,
            ny: nyc,
            nz,
            wx: Vec::new(),
            wy: Vec::new(),
        };
        if a.wx.len() == a.nx && a.wy.len() == a.ny {
            (c.wx, c.wy) = (mx.widths.clone(), my.widths.clone());
        }
        let dims = [a.nx, a.ny, nz, nxc, nyc].map(|v| v as i64);
        {
            const NAME: &str = "mgs_coarsen_f64";
            let f = self.kernel(&MG_SETUP, NAME)?;
            let mut args = self.stream.launch_builder(&f);
            args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz).arg(&a.amb);
            args.arg(&xs).arg(&ys);
            args.arg(&fxn).arg(&fxd).arg(&fyn).arg(&fyd);
            args.arg(&mut c.gx)
                .arg(&mut c.gy)
                .arg(&mut c.gz)
                .arg(&mut c.amb);
            for d in &dims {
                args.arg(d);
            }
            // SAFETY: arguments in the kernel's order and types; the fine
            // arrays hold nx·ny·nz values, the maps were checked to cover
            // the fine axes with nxc, nyc aggregates, the coarse arrays hold
            // nxc·nyc·nz values.
            unsafe { self.run(NAME, &mut args, rows_config(nc.min(MAX_ROWS)))? };
        }
        {
            const NAME: &str = "mgs_diagonal_f64";
            let f = self.kernel(&MG_SETUP, NAME)?;
            let (cnx, plane, n) = (nxc as i64, (nxc * nyc) as i64, nc as i64);
            let mut args = self.stream.launch_builder(&f);
            args.arg(&c.gx)
                .arg(&c.gy)
                .arg(&c.gz)
                .arg(&mut c.amb)
                .arg(&mut c.d);
            args.arg(&cnx).arg(&plane).arg(&n);
            // SAFETY: as above; every array holds n values.
            unsafe { self.run(NAME, &mut args, rows_config(nc.min(MAX_ROWS)))? };
        }
        Ok(c)
    }

    /// The inverse z-line pivots of `a` (`line_pivots`).
    pub(super) fn mgs_pivots(&self, a: &CudaMatrix) -> Result<CudaSlice<f64>, BackendError> {
        same_len(a.len(), a.d.len())?;
        same_len(a.len(), a.gz.len())?;
        self.load(&MG_SETUP)?;
        let mut ip = self.mgs_zeros(a.len(), "the line pivots")?;
        const NAME: &str = "mgs_pivots_f64";
        let f = self.kernel(&MG_SETUP, NAME)?;
        let (plane, nz) = (a.plane() as i64, a.nz as i64);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.d).arg(&a.gz).arg(&mut ip).arg(&plane).arg(&nz);
        // SAFETY: arguments in the kernel's order and types; d, gz and ip
        // hold plane·nz values.
        unsafe { self.run(NAME, &mut args, rows_config(a.plane().min(MAX_ROWS)))? };
        Ok(ip)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_point_is_in_the_source() {
        assert!(super::MG_SETUP.missing_entry_points(|_| None).is_empty());
    }
}
