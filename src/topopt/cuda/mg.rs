//! The multigrid transfers of `topopt::mg` on the GPU: launchers of
//! `kernels/topopt_mg.cu` (one thread per node, every launch checked), and
//! the transfer's device data (fixed masks, dimensions).

use super::CudaElastic;
use crate::backend::cuda::launch::{driver_err, rows_config};
use crate::backend::cuda::{same_len, CudaBackend, KernelFamily};
use crate::backend::BackendError;
use crate::topopt::mg::Transfer;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/topopt_mg.cu`, compiled when the first transfer is made.
pub static TOPOPT_MG: KernelFamily = KernelFamily {
    file: "topopt_mg.cu",
    source: include_str!("../../../kernels/topopt_mg.cu"),
    entry_points: &[
        "topmg_prolong_add",
        "topmg_restrict",
        "topmg_coarse_moduli",
        "topmg_dense_matvec",
    ],
};

/// A transfer on the device.
pub struct CudaTransfer {
    fine_dofs: usize,
    coarse_dofs: usize,
    ffix: CudaSlice<u8>,
    cfix: CudaSlice<u8>,
    /// fx, fy, fz, cx, cy, cz (node dims), r0, r1, r2.
    dims: [i32; 9],
    fine_nodes: usize,
    coarse_nodes: usize,
}

fn mask(be: &CudaBackend, m: &[bool]) -> Result<CudaSlice<u8>, BackendError> {
    let bytes: Vec<u8> = m.iter().map(|&f| u8::from(f)).collect();
    be.stream()
        .clone_htod(&bytes)
        .map_err(|e| driver_err("uploading a multigrid fixed mask", e))
}

impl CudaBackend {
    pub(super) fn topmg_transfer(&self, t: &Transfer) -> Result<CudaTransfer, BackendError> {
        self.load(&TOPOPT_MG)?;
        let (f, c) = (t.fine.node_dims(), t.coarse.node_dims());
        if t.fine.dofs() >= i32::MAX as usize {
            return Err(BackendError::Driver("multigrid level too large".into()));
        }
        let i = |v: usize| v as i32;
        Ok(CudaTransfer {
            fine_dofs: t.fine.dofs(),
            coarse_dofs: t.coarse.dofs(),
            ffix: mask(self, &t.fine_fixed)?,
            cfix: mask(self, &t.coarse_fixed)?,
            dims: [
                i(f[0]),
                i(f[1]),
                i(f[2]),
                i(c[0]),
                i(c[1]),
                i(c[2]),
                i(t.factor[0]),
                i(t.factor[1]),
                i(t.factor[2]),
            ],
            fine_nodes: t.fine.nodes(),
            coarse_nodes: t.coarse.nodes(),
        })
    }

    /// `restrict`: y (coarse) = Pᵀ x (fine); else y (fine) += P x (coarse).
    pub(super) fn topmg_apply(
        &self,
        t: &CudaTransfer,
        restrict: bool,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let (nx, ny, threads, name) = match restrict {
            true => (t.fine_dofs, t.coarse_dofs, t.coarse_nodes, "topmg_restrict"),
            false => (
                t.coarse_dofs,
                t.fine_dofs,
                t.fine_nodes,
                "topmg_prolong_add",
            ),
        };
        same_len(nx, x.len())?;
        same_len(ny, y.len())?;
        let f = self.kernel(&TOPOPT_MG, name)?;
        let mut args = self.stream().launch_builder(&f);
        args.arg(x).arg(y).arg(&t.ffix).arg(&t.cfix);
        for d in &t.dims {
            args.arg(d);
        }
        // SAFETY: x, y sized above; masks of the fine/coarse DOFs.
        unsafe { self.run(name, &mut args, rows_config(threads)) }
    }

    /// coarse.E = mean of the children of fine.E (f64 and f32).
    pub(super) fn topmg_coarse_moduli(
        &self,
        t: &CudaTransfer,
        fine: &CudaElastic,
        coarse: &mut CudaElastic,
    ) -> Result<(), BackendError> {
        let (fm, cm) = (fine.mesh, coarse.mesh);
        let d = &t.dims;
        let same = |m: &crate::topopt::Mesh, o: usize| {
            [m.nelx, m.nely, m.nelz] == [d[o] - 1, d[o + 1] - 1, d[o + 2] - 1].map(|v| v as usize)
        };
        if !same(&fm, 0) || !same(&cm, 3) {
            return Err(BackendError::Driver(
                "coarse moduli: operators do not match the transfer's meshes".into(),
            ));
        }
        const NAME: &str = "topmg_coarse_moduli";
        let f = self.kernel(&TOPOPT_MG, NAME)?;
        let e = |v: i32| v - 1;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&fine.e64)
            .arg(&mut coarse.e64)
            .arg(&mut coarse.e32);
        let dims = [
            e(d[0]),
            e(d[1]),
            e(d[2]),
            e(d[3]),
            e(d[4]),
            e(d[5]),
            d[6],
            d[7],
            d[8],
        ];
        for v in &dims {
            args.arg(v);
        }
        // SAFETY: E arrays of the fine / coarse meshes, checked above.
        unsafe { self.run(NAME, &mut args, rows_config(cm.elements())) }
    }

    /// y = A x, A dense n×n row-major (one warp per row).
    pub(super) fn topmg_dense_matvec(
        &self,
        a: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let n = x.len();
        same_len(n * n, a.len())?;
        same_len(n, y.len())?;
        self.load(&TOPOPT_MG)?;
        const NAME: &str = "topmg_dense_matvec";
        let f = self.kernel(&TOPOPT_MG, NAME)?;
        let ni = n as i32;
        let mut args = self.stream().launch_builder(&f);
        args.arg(a).arg(x).arg(y).arg(&ni);
        // SAFETY: a of n², x and y of n (checked).
        unsafe { self.run(NAME, &mut args, rows_config(32 * n)) }
    }
}
