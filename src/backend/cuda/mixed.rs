//! Launchers of the mixed family (`kernels/mixed.cu`): the low-precision
//! Chebyshev steps on the Jacobi-scaled Â, whose off-diagonals live on the
//! device in the format the host chose per array (`linalg::precision`).

use super::kernels::KernelFamily;
use super::launch::{driver_err, rows_config};
use super::{same_len, CudaBackend};
use crate::backend::{BackendError, ChebWork, ScaledChebyshevOps};
use crate::matrix::precision::{LowArray, ScaledQuadDiag};
use cudarc::driver::{CudaSlice, PushKernelArg};
use half::f16;

/// One scaled off-diagonal array on the device.
#[derive(Debug)]
pub enum CudaLowArray {
    /// Value = stored · scale (a power of two).
    F16(CudaSlice<f16>, f32),
    F32(CudaSlice<f32>),
}

/// Â on the device (see [`ScaledQuadDiag`]).
#[derive(Debug)]
pub struct CudaLowMatrix {
    /// S = D^-1/2.
    pub s: CudaSlice<f32>,
    pub g: [CudaLowArray; 3],
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
}

impl CudaLowMatrix {
    pub fn len(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// `kernels/mixed.cu`.
pub static MIXED: KernelFamily = KernelFamily {
    file: "mixed.cu",
    source: include_str!("../../../kernels/mixed.cu"),
    entry_points: &[
        "mixed_cheb_init_f32",
        "mixed_cheb_step_f32_hhh",
        "mixed_cheb_step_f32_hhs",
        "mixed_cheb_step_f32_hsh",
        "mixed_cheb_step_f32_hss",
        "mixed_cheb_step_f32_shh",
        "mixed_cheb_step_f32_shs",
        "mixed_cheb_step_f32_ssh",
        "mixed_cheb_step_f32_sss",
    ],
};

impl ScaledChebyshevOps<f32> for CudaBackend {
    type ScaledMatrix = CudaLowMatrix;
    type ScaledVector = CudaSlice<f32>;

    fn prepare_scaled(&self) -> Result<(), BackendError> {
        self.load(&MIXED)
    }

    fn upload_scaled(&self, a: &ScaledQuadDiag) -> Result<CudaLowMatrix, BackendError> {
        let up = |arr: &LowArray| -> Result<CudaLowArray, BackendError> {
            Ok(match arr {
                LowArray::F16 { v, inv_scale } => CudaLowArray::F16(
                    self.stream
                        .clone_htod(v)
                        .map_err(|e| driver_err("uploading an f16 diagonal", e))?,
                    *inv_scale,
                ),
                LowArray::F32(v) => CudaLowArray::F32(
                    self.stream
                        .clone_htod(v)
                        .map_err(|e| driver_err("uploading an f32 diagonal", e))?,
                ),
            })
        };
        Ok(CudaLowMatrix {
            s: self
                .stream
                .clone_htod(&a.s)
                .map_err(|e| driver_err("uploading the Jacobi scaling", e))?,
            g: [up(&a.g[0])?, up(&a.g[1])?, up(&a.g[2])?],
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
        })
    }

    fn scaled_work(&self, n: usize) -> Result<ChebWork<CudaSlice<f32>>, BackendError> {
        let zeros = || {
            self.stream
                .alloc_zeros::<f32>(n)
                .map_err(|e| driver_err(&format!("allocating {n} f32"), e))
        };
        Ok(ChebWork {
            res: zeros()?,
            d: zeros()?,
            d_next: zeros()?,
            zhat: Some(zeros()?),
        })
    }

    /// rh = S r; res = rh; d = c rh; ẑ = d, or only z = S d (24 B/row).
    fn scaled_init(
        &self,
        a: &CudaLowMatrix,
        c: f64,
        r: &CudaSlice<f64>,
        w: &mut ChebWork<CudaSlice<f32>>,
        z: &mut CudaSlice<f64>,
        last: bool,
    ) -> Result<(), BackendError> {
        let ChebWork { res, d, zhat, .. } = w;
        let zhat = zhat.as_mut().ok_or(BackendError::Length(a.len(), 0))?;
        for len in [r.len(), res.len(), d.len(), zhat.len(), z.len()] {
            same_len(a.len(), len)?;
        }
        const NAME: &str = "mixed_cheb_init_f32";
        let f = self.kernel(&MIXED, NAME)?;
        let (n, c, last) = (a.len() as i64, c as f32, last as i32);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.s).arg(&c).arg(r).arg(res).arg(d).arg(zhat);
        args.arg(z).arg(&n).arg(&last);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, rows_config(a.len())) }
    }

    /// res −= Â d; d_next = α d + β res; ẑ += d_next, or only
    /// z = S (ẑ + d_next) (30 B/row with f16 storage).
    fn scaled_step(
        &self,
        a: &CudaLowMatrix,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<CudaSlice<f32>>,
        z: &mut CudaSlice<f64>,
        last: bool,
    ) -> Result<(), BackendError> {
        let ChebWork {
            res,
            d,
            d_next,
            zhat,
        } = w;
        let zhat = zhat.as_mut().ok_or(BackendError::Length(a.len(), 0))?;
        for len in [d.len(), d_next.len(), res.len(), zhat.len(), z.len()] {
            same_len(a.len(), len)?;
        }
        let name = step_kernel_name(a);
        let f = self.kernel(&MIXED, name)?;
        let n = a.len() as i64;
        let (sy, sz) = (a.nx as i64, (a.nx * a.ny) as i64);
        let wave = self.info.multiprocessors * self.info.max_threads_per_multiprocessor;
        let cols = self.schedule().use_columns(a.nx * a.ny, a.nz, wave);
        let (columns, threads) = if cols {
            (1i32, a.nx * a.ny)
        } else {
            (0i32, a.len())
        };
        let scales: Vec<f32> =
            a.g.iter()
                .map(|g| match g {
                    CudaLowArray::F16(_, s) => *s,
                    CudaLowArray::F32(_) => 1.0,
                })
                .collect();
        let (alpha, beta, last) = (alpha as f32, beta as f32, last as i32);
        let mut args = self.stream.launch_builder(&f);
        for (g, scale) in a.g.iter().zip(&scales) {
            match g {
                CudaLowArray::F16(v, _) => args.arg(v),
                CudaLowArray::F32(v) => args.arg(v),
            };
            args.arg(scale);
        }
        args.arg(&alpha)
            .arg(&beta)
            .arg(d)
            .arg(d_next)
            .arg(res)
            .arg(zhat);
        args.arg(&a.s)
            .arg(z)
            .arg(&n)
            .arg(&sy)
            .arg(&sz)
            .arg(&columns)
            .arg(&last);
        // SAFETY: arguments in the kernel's order and types (a device pointer
        // for each `const void*`); lengths checked.
        unsafe { self.run(name, &mut args, rows_config(threads)) }
    }
}

/// The step kernel instance for `a`'s storage formats (`kernels/mixed.cu`).
fn step_kernel_name(a: &CudaLowMatrix) -> &'static str {
    const NAMES: [&str; 8] = [
        "mixed_cheb_step_f32_sss",
        "mixed_cheb_step_f32_ssh",
        "mixed_cheb_step_f32_shs",
        "mixed_cheb_step_f32_shh",
        "mixed_cheb_step_f32_hss",
        "mixed_cheb_step_f32_hsh",
        "mixed_cheb_step_f32_hhs",
        "mixed_cheb_step_f32_hhh",
    ];
    let bit = |g: &CudaLowArray| matches!(g, CudaLowArray::F16(..)) as usize;
    NAMES[4 * bit(&a.g[0]) + 2 * bit(&a.g[1]) + bit(&a.g[2])]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_point_is_in_its_source() {
        // The step instances are named by a macro in the source.
        let instance = |name: &str| {
            name.strip_prefix("mixed_cheb_step_f32_")
                .map(|suffix| format!("MIXED_CHEB_STEP({suffix},"))
        };
        assert!(super::MIXED.missing_entry_points(instance).is_empty());
    }
}
