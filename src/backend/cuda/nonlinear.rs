//! [`NonlinearOps`] on CUDA (issue 17): the k(T) outer iteration with the
//! temperature on the GPU. A(T) is assembled on the device from per-cell
//! materials (`assemble_kt.rs`) with the compact inputs uploaded once; the
//! leakage is evaluated per source by `kernels/nonlinear.cu` (a region's
//! mean temperature by a device reduction, its power spread by a kernel; a
//! raster's per cell); the shift, the energy balance and the loop's
//! decisions are device reductions read back as scalars.

use super::assemble::{AsmInputs, DeviceSystem};
use super::assemble_kt::KtTables;
use super::launch::{driver_err, rows_config};
use super::nonlinear_reduce::{Reduce, NONLINEAR};
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::nonlinear::{
    NlContext, NlPower, NonlinearOps, Range, TransientAssembly, TransientAssemblyOf,
};
use crate::backend::{Backend, BackendError};
use crate::linalg::Offset;
use crate::stack::LeakageSpec;
use crate::thermal::assembly_input::AssemblyInput;
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

/// The k(T) and leakage terms on the GPU.
pub struct CudaPhysics {
    asm: AsmInputs,
    kt: Option<KtTables>,
    dynamic: Option<CudaSlice<f64>>,
    sources: Vec<DevSource>,
    cellw: Option<CudaSlice<f64>>,
    ambient_k: f64,
    plane: usize,
}

impl CudaBackend {
    /// Leakage of every source at T = `theta` + ambient: per source W, and
    /// the power per cell in `ph.cellw` (zeroed first).
    fn leakage(
        &self,
        ph: &mut CudaPhysics,
        theta: &CudaSlice<f64>,
    ) -> Result<Vec<f64>, BackendError> {
        let Some(cellw) = ph.cellw.as_mut() else {
            return Ok(Vec::new());
        };
        self.stream
            .memset_zeros(cellw)
            .map_err(|e| driver_err("zeroing the leakage power", e))?;
        self.load(&NONLINEAR)?;
        let mut s = self.scalars(ph.sources.len())?;
        let plane = ph.plane as i64;
        for (k, src) in ph.sources.iter().enumerate() {
            const NAME: &str = "lk_source_f64";
            let f = self.kernel(&NONLINEAR, NAME)?;
            let (m, z0, nzl) = (src.m as i64, src.z0 as i64, src.nzl as i64);
            let per_cell = i32::from(src.per_cell);
            let (out, red) = (k as i32, self.reduce_scratch());
            let sp = &src.spec;
            let mut args = self.stream.launch_builder(&f);
            args.arg(theta)
                .arg(&ph.ambient_k)
                .arg(&src.cells)
                .arg(&src.w);
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
        let mut per_source = Vec::with_capacity(ph.sources.len());
        for (src, &v) in ph.sources.iter().zip(&sums) {
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
            let mut args = self.stream.launch_builder(&f);
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

impl NonlinearOps for CudaBackend {
    type Physics = CudaPhysics;
    type NlSystem = DeviceSystem;
    type AsmKept = AsmInputs;

    fn tr_assemble(
        &self,
        inp: &AssemblyInput,
    ) -> Result<Option<TransientAssemblyOf<Self>>, BackendError> {
        if std::env::var_os("CUTH_HOST_ASSEMBLY").is_some() {
            return Ok(None);
        }
        let kept = self.upload_assembly(inp)?;
        let sys = self.assemble_from(&kept, None)?;
        Ok(Some(TransientAssembly {
            g_top: self.download(&sys.g_top)?,
            g_bottom: self.download(&sys.g_bottom)?,
            a: sys.a,
            capacity: sys.capacity,
            rhs: sys.rhs,
            kept,
        }))
    }

    fn tr_power(
        &self,
        kept: &AsmInputs,
        maps: &[Vec<f64>],
        out: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.power_into(kept, maps, out)
    }

    fn tr_set_dynamic(&self, ph: &mut CudaPhysics, p: &CudaSlice<f64>) -> Result<(), BackendError> {
        match &mut ph.dynamic {
            Some(d) => self.copy(p, d),
            None => {
                let mut d = self.zeros(p.len())?;
                self.copy(p, &mut d)?;
                ph.dynamic = Some(d);
                Ok(())
            }
        }
    }

    fn tr_parts<'s>(
        &self,
        sys: &'s mut DeviceSystem,
    ) -> Result<(&'s mut CudaMatrix, &'s CudaSlice<f64>), BackendError> {
        Ok((&mut sys.a, &sys.capacity))
    }

    fn tr_shift(
        &self,
        a: &mut CudaMatrix,
        w: &CudaSlice<f64>,
        amb: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.copy(&a.amb, amb)?;
        // d + w and amb + w, as the host's `d += w` (y = x + y).
        self.nl_axpby(Some(w), 1.0, 1.0, &mut a.d, 0.0)?;
        self.nl_axpby(Some(w), 1.0, 1.0, &mut a.amb, 0.0)
    }

    fn nl_physics(
        &self,
        cx: &NlContext,
        dynamic: Option<&[f64]>,
    ) -> Result<CudaPhysics, BackendError> {
        let (grid, n) = (cx.grid, cx.grid.len());
        let asm = self.upload_assembly(&AssemblyInput::new(cx.stack, grid, cx.power))?;
        let kt = match cx.laws_vary() {
            true => Some(self.upload_kt(cx.stack, grid, cx.power)?),
            false => None,
        };
        let dynamic = match dynamic {
            Some(d) => {
                same_len(d.len(), n)?;
                Some(self.upload(d)?)
            }
            None => None,
        };
        let mut sources = Vec::new();
        for s in &cx.leak.sources {
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
            false => Some(self.zeros(n)?),
        };
        Ok(CudaPhysics {
            asm,
            kt,
            dynamic,
            sources,
            cellw,
            ambient_k: cx.stack.ambient_k,
            plane: grid.plane(),
        })
    }

    fn nl_assemble(
        &self,
        _cx: &NlContext,
        ph: &mut CudaPhysics,
        theta: &CudaSlice<f64>,
    ) -> Result<Result<DeviceSystem, usize>, BackendError> {
        let sys = match ph.kt.as_mut() {
            Some(kt) => {
                if let Some(i) =
                    self.cell_materials_kt(kt, &ph.asm.lz, theta, ph.ambient_k, ph.plane)?
                {
                    return Ok(Err(i));
                }
                self.assemble_from(&ph.asm, Some(&kt.cells))?
            }
            None => self.assemble_from(&ph.asm, None)?,
        };
        if ph.dynamic.is_none() {
            let mut d = self.zeros(sys.rhs.len())?;
            self.copy(&sys.rhs, &mut d)?;
            ph.dynamic = Some(d);
        }
        Ok(Ok(sys))
    }

    fn nl_reassemble(
        &self,
        _cx: &NlContext,
        ph: &mut CudaPhysics,
        theta: &CudaSlice<f64>,
        sys: &mut DeviceSystem,
    ) -> Result<Result<(), usize>, BackendError> {
        match ph.kt.as_mut() {
            Some(kt) => {
                if let Some(i) =
                    self.cell_materials_kt(kt, &ph.asm.lz, theta, ph.ambient_k, ph.plane)?
                {
                    return Ok(Err(i));
                }
                self.assemble_into(&ph.asm, Some(&kt.cells), sys)?;
            }
            None => self.assemble_into(&ph.asm, None, sys)?,
        }
        Ok(Ok(()))
    }

    fn nl_matrix<'s>(&self, sys: &'s DeviceSystem) -> &'s CudaMatrix {
        &sys.a
    }

    fn nl_rhs_mut<'s>(&self, sys: &'s mut DeviceSystem) -> &'s mut CudaSlice<f64> {
        &mut sys.rhs
    }

    fn nl_power(
        &self,
        _cx: &NlContext,
        ph: &mut CudaPhysics,
        theta: &CudaSlice<f64>,
        out: &mut CudaSlice<f64>,
    ) -> Result<NlPower, BackendError> {
        let leakage_w = self.leakage(ph, theta)?;
        let dynamic = ph.dynamic.as_ref().ok_or(BackendError::Unsupported(
            "nl_power before the first nl_assemble",
        ))?;
        self.copy(dynamic, out)?;
        if let Some(cellw) = &ph.cellw {
            // dynamic + leakage, as the host's p + q.
            self.nl_axpby(Some(cellw), 1.0, 1.0, out, 0.0)?;
        }
        let mut s = self.scalars(1)?;
        self.nl_reduce(out, None, 0.0, 0.0, Reduce::Sum, &mut s, 0)?;
        Ok(NlPower {
            power_in_w: self.read_scalars(&s)?[0],
            leakage_w,
        })
    }

    fn nl_shifted_rhs(
        &self,
        sys: &DeviceSystem,
        power_in_w: f64,
        b: &mut CudaSlice<f64>,
    ) -> Result<Offset, BackendError> {
        // The shift of `linalg::Offset`: c = Σb / Σamb, b − c·amb.
        let mut s = self.scalars(3)?;
        self.nl_reduce(&sys.a.amb, None, 0.0, 0.0, Reduce::Sum, &mut s, 0)?;
        self.dot(&sys.rhs, &sys.rhs, &mut s, 1)?;
        let v = self.read_scalars(&s)?;
        let (amb, nb) = (v[0], v[1].sqrt());
        let c = if amb > 0.0 { power_in_w / amb } else { 0.0 };
        self.copy(&sys.rhs, b)?;
        self.shift_rhs_kernel(&sys.a, c, b)?;
        self.dot(b, b, &mut s, 2)?;
        let ns = self.read_scalars(&s)?[2].sqrt();
        Ok(Offset {
            c,
            rhs: Vec::new(),
            rtol_scale: if ns > 0.0 { nb / ns } else { 1.0 },
            b_norm: nb,
        })
    }

    fn nl_energy(
        &self,
        _cx: &NlContext,
        sys: &DeviceSystem,
        theta: &CudaSlice<f64>,
        power_in_w: f64,
    ) -> Result<f64, BackendError> {
        // Σ amb·θ: the top and bottom planes' conductances to ambient (an
        // absent cell's identity row has θ = 0).
        let out = self.nl_dot(&sys.a.amb, theta)?;
        Ok(if power_in_w > 0.0 {
            (out - power_in_w).abs() / power_in_w
        } else {
            0.0
        })
    }

    fn nl_leakage_total(
        &self,
        _cx: &NlContext,
        ph: &mut CudaPhysics,
        theta: &CudaSlice<f64>,
    ) -> Result<f64, BackendError> {
        Ok(self.leakage(ph, theta)?.iter().fold(0.0, |a, b| a + b))
    }

    fn nl_coupling(
        &self,
        sys: &DeviceSystem,
        top: &mut Vec<f64>,
        bottom: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        top.resize(sys.g_top.len(), 0.0);
        bottom.resize(sys.g_bottom.len(), 0.0);
        self.download_into(&sys.g_top, top)?;
        self.download_into(&sys.g_bottom, bottom)
    }

    fn nl_axpby(
        &self,
        x: Option<&CudaSlice<f64>>,
        alpha: f64,
        beta: f64,
        y: &mut CudaSlice<f64>,
        gamma: f64,
    ) -> Result<(), BackendError> {
        if let Some(x) = x {
            same_len(x.len(), y.len())?;
        } else if alpha != 0.0 {
            return Err(BackendError::Unsupported("nl_axpby: α ≠ 0 without x"));
        }
        self.load(&NONLINEAR)?;
        const NAME: &str = "nl_axpby_f64";
        let f = self.kernel(&NONLINEAR, NAME)?;
        let (len, n) = (y.len(), y.len() as i64);
        let null = 0u64;
        let mut args = self.stream.launch_builder(&f);
        match x {
            Some(x) => args.arg(x),
            None => args.arg(&null),
        };
        args.arg(&alpha).arg(&beta).arg(&gamma).arg(&mut *y).arg(&n);
        // SAFETY: arguments in the kernel's order and types; x (read only
        // when α ≠ 0, then present) and y hold n values.
        unsafe { self.run(NAME, &mut args, rows_config(len.min(1 << 26))) }
    }

    fn nl_dot(&self, x: &CudaSlice<f64>, y: &CudaSlice<f64>) -> Result<f64, BackendError> {
        let mut s = self.scalars(1)?;
        self.dot(x, y, &mut s, 0)?;
        Ok(self.read_scalars(&s)?[0])
    }

    fn nl_change(
        &self,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
        s: f64,
    ) -> Result<f64, BackendError> {
        self.read1(x, Some(y), s, 0.0, Reduce::Change)
    }

    fn nl_hottest(&self, x: &CudaSlice<f64>, s: f64) -> Result<(usize, f64), BackendError> {
        let key = self.read1(x, None, s, 0.0, Reduce::KeyMax)?;
        let first = self.read1(x, None, s, key, Reduce::FirstIndex)?;
        if !first.is_finite() {
            return Ok((0, key));
        }
        let i = first as usize;
        let v = if key.is_finite() {
            key
        } else {
            self.nl_value(x, i)? + s
        };
        Ok((i, v))
    }

    fn nl_range(&self, x: &CudaSlice<f64>) -> Result<Range, BackendError> {
        let mut s = self.scalars(3)?;
        self.nl_reduce(x, None, 0.0, 0.0, Reduce::Min, &mut s, 0)?;
        self.nl_reduce(x, None, 0.0, 0.0, Reduce::Max, &mut s, 1)?;
        self.nl_reduce(x, None, 0.0, 0.0, Reduce::NonFinite, &mut s, 2)?;
        let v = self.read_scalars(&s)?;
        Ok(Range {
            min: v[0],
            max: v[1],
            finite: v[2] == 0.0,
        })
    }

    fn nl_value(&self, x: &CudaSlice<f64>, i: usize) -> Result<f64, BackendError> {
        if i >= x.len() {
            return Err(BackendError::Length(i, x.len()));
        }
        let v = self
            .stream
            .clone_dtoh(&x.slice(i..i + 1))
            .map_err(|e| driver_err("reading one value", e))?;
        Ok(v[0])
    }
}
