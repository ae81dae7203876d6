//! The CUDA executor's coolant couplings ([`QuadDiagOps`]' advection
//! methods, `kernels/advection.cu`): three device arrays plus the start of
//! each coolant line, so that the upwind sweep runs one thread per line.
//!
//! [`QuadDiagOps`]: crate::backend::QuadDiagOps

use super::kernels::KernelFamily;
use super::launch::{driver_err, rows_config};
use super::{same_len, CudaBackend};
use crate::backend::{Backend, BackendError};
use crate::matrix::advection::{Advection, INLET, OUTLET};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/advection.cu`.
pub static ADVECTION: KernelFamily = KernelFamily {
    file: "advection.cu",
    source: include_str!("../../../kernels/advection.cu"),
    entry_points: &["advection_add_couplings_f64", "advection_line_solve_f64"],
};

/// [`Advection`] on the device.
pub struct CudaAdvection {
    cell: CudaSlice<u32>,
    up: CudaSlice<u32>,
    w: CudaSlice<f64>,
    /// Central differencing's downstream couplings (one padding entry
    /// each when upwind) and the line solve's ratios.
    down: CudaSlice<u32>,
    w_down: CudaSlice<f64>,
    w_self: CudaSlice<f64>,
    ratio: CudaSlice<f64>,
    has_down: bool,
    /// Entry where each line starts, and the entry count last.
    start: CudaSlice<u32>,
    entries: usize,
    lines: usize,
}

/// Where each coolant line starts: at every inlet entry. The line solve
/// keeps the upstream value in a register and runs back over the line, so
/// each other entry's upstream row must be the previous entry's and each
/// downstream row the next entry's; `None` when they are not.
fn line_starts(a: &Advection) -> Option<Vec<u32>> {
    let mut starts = Vec::new();
    for k in 0..a.len() {
        if a.up[k] == INLET {
            starts.push(k as u32);
        } else if k == 0 || a.up[k] != a.cell[k - 1] {
            return None;
        }
        if let Some(&d) = a.down.get(k) {
            let last = a.up.get(k + 1).is_none_or(|&u| u == INLET);
            let next_ok = match last {
                true => d == OUTLET,
                false => d == a.cell[k + 1],
            };
            if !next_ok {
                return None;
            }
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
            "coolant entries whose neighbours along the flow are not the neighbouring entries of their line",
        ))?;
        let u32s = |v: &[u32], what: &str| {
            // An empty upload would be a null pointer; one padding entry.
            let v = if v.is_empty() { &[0u32][..] } else { v };
            self.stream
                .clone_htod(v)
                .map_err(|e| driver_err(&format!("uploading the coolant's {what}"), e))
        };
        let f64s = |v: &[f64]| match v.is_empty() {
            true => self.upload(&[0.0]),
            false => self.upload(v),
        };
        let has_down = a.has_down();
        Ok(CudaAdvection {
            cell: u32s(&a.cell, "rows")?,
            up: u32s(&a.up, "upstream rows")?,
            w: f64s(&a.w)?,
            down: u32s(&a.down, "downstream rows")?,
            w_down: f64s(&a.w_down)?,
            w_self: f64s(&a.w_self)?,
            ratio: self.zeros(if has_down { a.len().max(1) } else { 1 })?,
            has_down,
            lines: starts.len() - 1,
            start: u32s(&starts, "line starts")?,
            entries: a.len(),
        })
    }

    pub(super) fn add_couplings_impl(
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
        const NAME: &str = "advection_add_couplings_f64";
        let f = self.kernel(&ADVECTION, NAME)?;
        let n = a.entries as i64;
        let has_down = i32::from(a.has_down);
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.cell)
            .arg(&a.up)
            .arg(&a.w)
            .arg(&a.down)
            .arg(&a.w_down);
        args.arg(&a.w_self)
            .arg(&has_down)
            .arg(&scale)
            .arg(x)
            .arg(y)
            .arg(&n);
        // SAFETY: the kernel's parameters in order; every row in `cell`,
        // `up` and `down` was built for vectors of this length (the
        // operator that owns both checks it), and `down`/`w_down` are read
        // only with `has_down`, when they hold an entry each.
        unsafe { self.run(NAME, &mut args, rows_config(a.entries)) }
    }

    pub(super) fn line_solve_impl(
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
        const NAME: &str = "advection_line_solve_f64";
        let f = self.kernel(&ADVECTION, NAME)?;
        let n = a.lines as i64;
        let has_down = i32::from(a.has_down);
        // The ratios are scratch of this launch alone: the launch is
        // ordered on the stream, so a shared `&CudaAdvection` suffices.
        let ratio = &a.ratio;
        let mut args = self.stream.launch_builder(&f);
        args.arg(&a.cell)
            .arg(&a.up)
            .arg(&a.w)
            .arg(&a.down)
            .arg(&a.w_down);
        args.arg(&a.w_self).arg(&a.start).arg(ratio).arg(&has_down);
        args.arg(d).arg(r).arg(z).arg(&n);
        // SAFETY: as above; `start` holds lines + 1 entries and `ratio`
        // one per entry with `has_down`.
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
            ..Advection::default()
        };
        assert_eq!(line_starts(&a), Some(vec![0, 3, 5]));
    }

    #[test]
    fn an_upstream_row_off_the_line_is_refused() {
        let a = Advection {
            cell: vec![4, 5, 9],
            up: vec![INLET, 4, 4],
            w: vec![1.0; 3],
            ..Advection::default()
        };
        assert_eq!(line_starts(&a), None);
    }
}
