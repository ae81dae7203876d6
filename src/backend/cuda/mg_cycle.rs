//! The multigrid cycle's kernels on CUDA (`kernels/mg.cu`, [`MULTIGRID`]),
//! their launchers written once for a level of either precision, and the
//! coarsening maps they read ([`CudaTransfer`]). They stand apart from the
//! f64 levels (`mg.rs`) and the f32 ones (`mg_low.rs`) because both launch
//! them: `mg.cu` instantiates each template at f64 and f32. Lengths are
//! checked here, on the host, because the kernels trust the sizes.

use super::kernels::KernelFamily;
use super::launch::{driver_err, rows_config};
use super::{same_len, CudaBackend};
use crate::backend::mg::{Guess, Relax};
use crate::backend::BackendError;
use crate::matrix::coarsen::Coarsening;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/mg.cu`.
pub static MULTIGRID: KernelFamily = KernelFamily {
    file: "mg.cu",
    source: include_str!("../../../kernels/mg.cu"),
    entry_points: &[
        "mg_smooth_f64",
        "mg_smooth_warp_f64",
        "mg_restrict_f64",
        "mg_prolong_f64",
        "mg_dense_f64",
        "mg_smooth_f32",
        "mg_smooth_warp_f32",
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

impl CudaTransfer {
    pub(super) fn upload(be: &CudaBackend, c: &Coarsening) -> Result<Self, BackendError> {
        let packed: Vec<i64> = [&c.xstart, &c.ystart, &c.xmap, &c.ymap]
            .iter()
            .flat_map(|v| v.iter().map(|&k| k as i64))
            .collect();
        let maps = be
            .stream
            .clone_htod(&packed)
            .map_err(|e| driver_err("uploading the multigrid maps", e))?;
        Ok(CudaTransfer {
            host: c.clone(),
            maps,
        })
    }
}

/// The most z cells of a column the one-warp-per-column smoother takes
/// (a lane a cell).
const WARP_COLUMN_CELLS: usize = 32;
/// The most columns of one colour a level may have for that smoother: on
/// a level of a few waves of columns a launch's time is each column's
/// chain of dependent instructions, not its bytes (`cuth bench
/// --cycle-sizes`); on larger ones the thread per column reads less.
const WARP_LEVEL_COLUMNS: usize = 1 << 15;

/// The element type of a level, f64 or f32 on a low-precision hierarchy:
/// it names its instantiation of each cycle kernel.
pub(super) trait Real {
    const SMOOTH: &'static str;
    /// The smoother of a small level, one warp per column.
    const SMOOTH_WARP: &'static str;
    const RESTRICT: &'static str;
    const PROLONG: &'static str;
    const DENSE: &'static str;
}

impl Real for f64 {
    const SMOOTH: &'static str = "mg_smooth_f64";
    const SMOOTH_WARP: &'static str = "mg_smooth_warp_f64";
    const RESTRICT: &'static str = "mg_restrict_f64";
    const PROLONG: &'static str = "mg_prolong_f64";
    const DENSE: &'static str = "mg_dense_f64";
}

impl Real for f32 {
    const SMOOTH: &'static str = "mg_smooth_f32";
    const SMOOTH_WARP: &'static str = "mg_smooth_warp_f32";
    const RESTRICT: &'static str = "mg_restrict_f32";
    const PROLONG: &'static str = "mg_prolong_f32";
    const DENSE: &'static str = "mg_dense_f32";
}

/// A level's operator as the cycle's kernels read it: the diagonal term
/// (f64: d; f32: its excess over the couplings, see `mg_low.rs`), the
/// couplings and the grid.
pub(super) struct Level<'a, T> {
    pub diag: &'a CudaSlice<T>,
    pub gx: &'a CudaSlice<T>,
    pub gy: &'a CudaSlice<T>,
    pub gz: &'a CudaSlice<T>,
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
}

impl<T> Level<'_, T> {
    fn len(&self) -> usize {
        self.nx * self.ny * self.nz
    }
}

/// The sizes of a coarsening step as the transfer kernels take them.
fn transfer_dims(c: &Coarsening) -> [i64; 5] {
    [c.nx, c.ny, c.nz, c.nxc, c.nyc].map(|v| v as i64)
}

impl CudaBackend {
    /// `MultigridOps::mg_smooth` on a level of either precision.
    pub(super) fn cycle_smooth<T: Real>(
        &self,
        a: Level<'_, T>,
        relax: Relax<'_, Self, CudaSlice<T>>,
        b: &CudaSlice<T>,
        x: &mut CudaSlice<T>,
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
        let columns = a.nx.div_ceil(2) * a.ny;
        let warp = a.nz <= WARP_COLUMN_CELLS && columns <= WARP_LEVEL_COLUMNS;
        let (name, threads) = match warp {
            true => (T::SMOOTH_WARP, 32 * columns),
            false => (T::SMOOTH, columns),
        };
        let f = self.kernel(&MULTIGRID, name)?;
        let (nx, ny, nz) = (a.nx as i64, a.ny as i64, a.nz as i64);
        let colour = (colour & 1) as i32;
        let zero: i32 = match guess {
            Guess::Full => 0,
            Guess::ColourZero => 1,
            Guess::Zero => 2,
        };
        let mut args = self.stream.launch_builder(&f);
        args.arg(a.gx).arg(a.gy).arg(a.gz);
        args.arg(inv_pivots).arg(b).arg(x);
        args.arg(&nx).arg(&ny).arg(&nz).arg(&colour).arg(&zero);
        let null = 0u64;
        match made_by {
            Some(t) => args.arg(&t.maps),
            None => args.arg(&null),
        };
        // SAFETY: arguments in the kernel's order and types (`made`: the
        // maps of the step that made this level, or null); lengths checked.
        unsafe { self.run(name, &mut args, rows_config(threads)) }
    }

    /// `MultigridOps::mg_restrict_residual` on a level of either precision.
    pub(super) fn cycle_restrict_residual<T: Real>(
        &self,
        a: Level<'_, T>,
        t: &CudaTransfer,
        b: &CudaSlice<T>,
        x: &CudaSlice<T>,
        bc: &mut CudaSlice<T>,
    ) -> Result<(), BackendError> {
        let c = &t.host;
        same_len(a.len(), b.len())?;
        same_len(a.len(), x.len())?;
        same_len(a.len(), c.nx * c.ny * c.nz)?;
        same_len(c.coarse_len(), bc.len())?;
        let f = self.kernel(&MULTIGRID, T::RESTRICT)?;
        let dims = transfer_dims(c);
        let mut args = self.stream.launch_builder(&f);
        args.arg(a.diag).arg(a.gx).arg(a.gy).arg(a.gz);
        args.arg(b).arg(x).arg(bc);
        for d in &dims {
            args.arg(d);
        }
        args.arg(&t.maps);
        // SAFETY: as above.
        unsafe { self.run(T::RESTRICT, &mut args, rows_config(c.coarse_len())) }
    }

    /// `MultigridOps::mg_prolong_add` at either precision.
    pub(super) fn cycle_prolong_add<T: Real>(
        &self,
        t: &CudaTransfer,
        xc: &CudaSlice<T>,
        x: &mut CudaSlice<T>,
    ) -> Result<(), BackendError> {
        let c = &t.host;
        same_len(c.coarse_len(), xc.len())?;
        same_len(c.nx * c.ny * c.nz, x.len())?;
        let f = self.kernel(&MULTIGRID, T::PROLONG)?;
        let dims = transfer_dims(c);
        let n = x.len();
        let mut args = self.stream.launch_builder(&f);
        args.arg(xc).arg(x);
        for d in &dims {
            args.arg(d);
        }
        args.arg(&t.maps);
        // SAFETY: as above.
        unsafe { self.run(T::PROLONG, &mut args, rows_config(n)) }
    }

    /// `MultigridOps::mg_dense_apply` at either precision.
    pub(super) fn cycle_dense_apply<T: Real>(
        &self,
        m: &CudaSlice<T>,
        n: usize,
        b: &CudaSlice<T>,
        x: &mut CudaSlice<T>,
    ) -> Result<(), BackendError> {
        same_len(n * n, m.len())?;
        same_len(n, b.len())?;
        same_len(n, x.len())?;
        let f = self.kernel(&MULTIGRID, T::DENSE)?;
        let nn = n as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(m).arg(b).arg(x).arg(&nn);
        // SAFETY: as above; one warp per row.
        unsafe { self.run(T::DENSE, &mut args, rows_config(32 * n)) }
    }
}
