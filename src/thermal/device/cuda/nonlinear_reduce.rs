//! The reductions of the k(T) loop on CUDA (`kernels/nonlinear.cu`'s
//! `nl_reduce_f64`: sums, max change, hottest cell, range, finiteness) and
//! the kernel family the loop launches, apart from the loop itself
//! (`nonlinear.rs`).

use crate::backend::cuda::KernelFamily;
use crate::backend::cuda::{same_len, CudaBackend};
use crate::backend::{Backend, BackendError};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/nonlinear.cu`.
pub static NONLINEAR: KernelFamily = KernelFamily {
    file: "nonlinear.cu",
    source: include_str!("../../../../kernels/nonlinear.cu"),
    entry_points: &[
        "nl_axpby_f64",
        "nl_reduce_f64",
        "lk_source_f64",
        "lk_spread_f64",
    ],
};

/// Reductions of `nl_reduce_f64`.
#[derive(Clone, Copy)]
pub(super) enum Reduce {
    Sum = 0,
    Change = 1,
    KeyMax = 2,
    FirstIndex = 3,
    Min = 4,
    Max = 5,
    NonFinite = 6,
}

/// What one `nl_reduce_f64` reads: x, a second vector y for the modes that
/// compare two (x again when absent), and the two numbers some modes take.
pub(super) struct Operands<'a> {
    pub x: &'a CudaSlice<f64>,
    pub y: Option<&'a CudaSlice<f64>>,
    pub shift: f64,
    pub param: f64,
}

impl<'a> Operands<'a> {
    /// x alone, for the modes that read nothing else (sums, range).
    pub(super) fn of(x: &'a CudaSlice<f64>) -> Self {
        Operands {
            x,
            y: None,
            shift: 0.0,
            param: 0.0,
        }
    }
}

impl CudaBackend {
    /// s[out] = the reduction `mode` of the operands, see `nl_reduce_f64`.
    pub(super) fn nl_reduce(
        &self,
        mode: Reduce,
        on: Operands<'_>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let Operands { x, y, shift, param } = on;
        let y = y.unwrap_or(x);
        same_len(x.len(), y.len())?;
        if out >= s.len() {
            return Err(BackendError::Length(out, s.len()));
        }
        self.load(&NONLINEAR)?;
        const NAME: &str = "nl_reduce_f64";
        let f = self.kernel(&NONLINEAR, NAME)?;
        let (n, mode, out) = (x.len() as i64, mode as i32, out as i32);
        let red = self.reduce_scratch();
        let mut args = self.stream().launch_builder(&f);
        args.arg(x)
            .arg(y)
            .arg(&shift)
            .arg(&param)
            .arg(&n)
            .arg(&mode);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&out);
        // SAFETY: arguments in the kernel's order and types; x and y hold n
        // values, out is a slot of s, the grid fits the reduction scratch.
        unsafe { self.run(NAME, &mut args, red.config(x.len())) }
    }

    pub(super) fn read1(
        &self,
        x: &CudaSlice<f64>,
        y: Option<&CudaSlice<f64>>,
        s: f64,
        p: f64,
        mode: Reduce,
    ) -> Result<f64, BackendError> {
        let mut slot = self.scalars(1)?;
        let on = Operands {
            x,
            y,
            shift: s,
            param: p,
        };
        self.nl_reduce(mode, on, &mut slot, 0)?;
        Ok(self.read_scalars(&slot)?[0])
    }
}
