//! Leakage on the GPU: every leaking source's plane cells and
//! weights uploaded once; at a temperature field `lk_source_f64` reduces
//! each source (a region's area-weighted mean temperature, or a raster's
//! per-cell power) and `lk_spread_f64` spreads a region's power over its
//! cells, into one per-cell leakage array kept across iterations.

use super::nonlinear_reduce::NONLINEAR;
use crate::backend::cuda::launch::{driver_err, rows_config};
use crate::backend::cuda::CudaBackend;
use crate::backend::{Backend, BackendError};
use crate::grid::Grid;
use crate::stack::LeakageSpec;
use crate::thermal::nonlinear::leakage::LeakageModel;
use cudarc::driver::{CudaSlice, PushKernelArg};

/// One leaking source's plane cells and weights on the device.
struct DevSource {
    cells: CudaSlice<i64>,
    w: CudaSlice<f64>,
    m: usize,
    z0: usize,
    nzl: usize,
    per_cell: bool,
    spec: LeakageSpec,
}

/// The sources of a [`LeakageModel`] on the device and the leakage per
/// cell, W (`None` when nothing leaks).
pub(super) struct DevLeakage {
    sources: Vec<DevSource>,
    pub(super) cellw: Option<CudaSlice<f64>>,
}

impl CudaBackend {
    /// The sources of `leak` on `grid`.
    pub(super) fn upload_leakage(
        &self,
        leak: &LeakageModel,
        grid: &Grid,
    ) -> Result<DevLeakage, BackendError> {
        let mut sources = Vec::new();
        for s in &leak.sources {
            let cells: Vec<i64> = s.cells.iter().map(|c| c.0 as i64).collect();
            let w: Vec<f64> = s.cells.iter().map(|c| c.1).collect();
            let zr = grid.layer_z[s.layer].clone();
            sources.push(DevSource {
                m: cells.len(),
                cells: self.htod(
                    &if cells.is_empty() { vec![0] } else { cells },
                    "leakage cells",
                )?,
                w: self.htod(&if w.is_empty() { vec![0.0] } else { w }, "leakage weights")?,
                z0: zr.start,
                nzl: zr.len(),
                per_cell: s.per_cell,
                spec: s.spec,
            });
        }
        let cellw = match sources.is_empty() {
            true => None,
            false => Some(self.zeros(grid.len())?),
        };
        Ok(DevLeakage { sources, cellw })
    }

    /// Leakage of every source at T = `theta` + `ambient_k`: per source W,
    /// and the power per cell in `lk.cellw` (zeroed first).
    pub(super) fn leakage(
        &self,
        lk: &mut DevLeakage,
        theta: &CudaSlice<f64>,
        ambient_k: f64,
        plane: usize,
    ) -> Result<Vec<f64>, BackendError> {
        let Some(cellw) = lk.cellw.as_mut() else {
            return Ok(Vec::new());
        };
        self.stream()
            .memset_zeros(cellw)
            .map_err(|e| driver_err("zeroing the leakage power", e))?;
        self.load(&NONLINEAR)?;
        let mut s = self.scalars(lk.sources.len())?;
        let plane = plane as i64;
        for (k, src) in lk.sources.iter().enumerate() {
            const NAME: &str = "lk_source_f64";
            let f = self.kernel(&NONLINEAR, NAME)?;
            let (m, z0, nzl) = (src.m as i64, src.z0 as i64, src.nzl as i64);
            let per_cell = i32::from(src.per_cell);
            let (out, red) = (k as i32, self.reduce_scratch());
            let sp = &src.spec;
            let mut args = self.stream().launch_builder(&f);
            args.arg(theta).arg(&ambient_k).arg(&src.cells).arg(&src.w);
            args.arg(&m).arg(&z0).arg(&nzl).arg(&plane).arg(&per_cell);
            args.arg(&sp.p_ref)
                .arg(&sp.beta)
                .arg(&sp.t_ref)
                .arg(&mut *cellw);
            args.arg(&red.partials)
                .arg(&red.ticket)
                .arg(&mut s)
                .arg(&out);
            // SAFETY: arguments in the kernel's order and types; the source's
            // cells are plane cells, its z cells within theta and cellw.
            unsafe { self.run(NAME, &mut args, red.config(src.m))? };
        }
        let sums = self.read_scalars(&s)?;
        let mut per_source = Vec::with_capacity(lk.sources.len());
        for (src, &v) in lk.sources.iter().zip(&sums) {
            if src.per_cell {
                per_source.push(v);
                continue;
            }
            let sp = &src.spec;
            let total = sp.p_ref * (sp.beta * (v - sp.t_ref)).exp();
            per_source.push(total);
            const NAME: &str = "lk_spread_f64";
            let f = self.kernel(&NONLINEAR, NAME)?;
            let (m, z0, nzl) = (src.m as i64, src.z0 as i64, src.nzl as i64);
            let mut args = self.stream().launch_builder(&f);
            args.arg(&src.cells)
                .arg(&src.w)
                .arg(&m)
                .arg(&z0)
                .arg(&nzl)
                .arg(&plane);
            args.arg(&total).arg(&mut *cellw);
            // SAFETY: as above.
            unsafe { self.run(NAME, &mut args, rows_config(src.m.max(1)))? };
        }
        Ok(per_source)
    }
}
