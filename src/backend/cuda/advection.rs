//! The CUDA executor's coolant couplings ([`QuadDiagOps`]' advection
//! methods, `kernels/advection.cu`): three device arrays plus the start of
//! each coolant line, so that the upwind sweep runs one thread per line.
//!
//! [`QuadDiagOps`]: crate::backend::QuadDiagOps

use super::kernels::KernelFamily;
use super::launch::{driver_err, rows_config};
use super::{same_len, CudaBackend};
use crate::backend::{Backend, BackendError};
use crate::matrix::advection::{Advection, INLET};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/advection.cu`.
pub static ADVECTION: KernelFamily = KernelFamily {
    file: "advection.cu",
    source: include_str!("../../../kernels/advection.cu"),
    entry_points: &["advection_add_upstream_f64", "advection_upwind_sweep_f64"],
};

/// [`Advection`] on the device.
pub struct CudaAdvection {
    cell: CudaSlice<u32>,
    up: CudaSlice<u32>,
    w: CudaSlice<f64>,
    /// Entry where each line starts, and the entry count last.
    start: CudaSlice<u32>,
    entries: usize,
    lines: usize,
}

/// Where each coolant line starts: at every inlet entry. The sweep keeps
/// the upstream value in a register, so each other entry's upstream row
/// must be the previous entry's; `None` when it is not.
fn line_starts(a: &Advection) -> Option<Vec<u32>> {
    let mut starts = Vec::new();
    for k in 0..a.len() {
        if a.up[k] == INLET {
            starts.push(k as u32);
        } else if k == 0 || a.up[k] != a.cell[k - 1] {
            return None;
        }
    }
    starts.push(a.len() as u32);
    Some(starts)
}

impl CudaBackend {
    pub(super) fn upload_advection_impl(
        &self,
        a: &Advection,
    ) -> Result<CudaAdvection, BackendError> {
        self.load(&ADVECTION)?;
        let starts = line_starts(a).ok_or(BackendError::Unsupported(
            "coolant entries whose upstream cell is not the previous entry of their line",
        ))?;
        let up32 = |v: &[u32], what: &str| {
            // An empty upload would be a null pointer; one padding entry.
            let v = if v.is_empty() { &[0u32][..] } else { v };
            self.stream
                .clone_htod(v)
                .map_err(|e| driver_err(&format!("uploading the coolant's {what}"), e))
        };
        let w = if a.w.is_empty() {
            self.upload(&[0.0])?
        } else {
            self.upload(&a.w)?
        };
        Ok(CudaAdvection {
            cell: up32(&a.cell, "rows")?,
            up: up32(&a.up, "upstream rows")?,
            w,
            lines: starts.len() - 1,
            start: up32(&starts, "line starts")?,
            entries: a.len(),
        })
    }

    pub(super) fn add_upstream_impl(
        &self,
        a: &CudaAdvection,
        scale: f64,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(x.len(), y.len())?;
        if a.entries == 0 {
            return Ok(());
        }
        const NAME: &str = "advection_add_upstream_f64";
        let f = self.kernel(&ADVECTION, NAME)?;
        let n = a.entries as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.cell).arg(&a.up).arg(&a.w).arg(&scale);
        args.arg(x).arg(y).arg(&n);
        // SAFETY: the kernel's parameters in order; every row in `cell`
        // and `up` was built for vectors of this length (checked by the
        // operator that owns both).
        unsafe { self.run(NAME, &mut args, rows_config(a.entries)) }
    }

    pub(super) fn upwind_sweep_impl(
        &self,
        a: &CudaAdvection,
        d: &CudaSlice<f64>,
        r: &CudaSlice<f64>,
        z: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(d.len(), r.len())?;
        same_len(r.len(), z.len())?;
        if a.lines == 0 {
            return Ok(());
        }
        const NAME: &str = "advection_upwind_sweep_f64";
        let f = self.kernel(&ADVECTION, NAME)?;
        let n = a.lines as i64;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.cell).arg(&a.up).arg(&a.w).arg(&a.start);
        args.arg(d).arg(r).arg(z).arg(&n);
        // SAFETY: as above; `start` holds lines + 1 entries.
        unsafe { self.run(NAME, &mut args, rows_config(a.lines)) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_start_at_each_inlet() {
        let a = Advection {
            cell: vec![4, 5, 6, 9, 10],
            up: vec![INLET, 4, 5, INLET, 9],
            w: vec![1.0; 5],
        };
        assert_eq!(line_starts(&a), Some(vec![0, 3, 5]));
    }

    #[test]
    fn an_upstream_row_off_the_line_is_refused() {
        let a = Advection {
            cell: vec![4, 5, 9],
            up: vec![INLET, 4, 4],
            w: vec![1.0; 3],
        };
        assert_eq!(line_starts(&a), None);
    }
}
