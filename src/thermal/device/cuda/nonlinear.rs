//! [`NonlinearOps`] on CUDA: the k(T) outer iteration with the
//! temperature on the GPU. A(T) is assembled on the device from per-cell
//! materials (`assemble_kt.rs`) with the compact inputs uploaded once, into
//! the arrays of the last system (`assemble_into`); the leakage is
//! evaluated per source by `kernels/nonlinear.cu` ([`leakage`]); the shift,
//! the energy balance and the loop's decisions are device reductions read
//! back as scalars. The same terms serve a transient run's step, whose
//! matrix is shifted by C/Δt here (`tr_shift`).

use super::assemble::{AsmInputs, DeviceSystem};
use super::assemble_kt::KtTables;
use super::leakage::DevLeakage;
use super::nonlinear_reduce::{Operands, Reduce, NONLINEAR};
use crate::backend::cuda::launch::{driver_err, rows_config};
use crate::backend::cuda::{same_len, CudaBackend, CudaMatrix};
use crate::backend::{Backend, BackendError};
use crate::linalg::Offset;
use crate::thermal::assembly_input::AssemblyInput;
use crate::thermal::device::nonlinear::{
    NlContext, NlPower, NonlinearOps, Range, TransientAssembly, TransientAssemblyOf,
};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// The k(T) and leakage terms on the GPU.
pub struct CudaPhysics {
    asm: AsmInputs,
    kt: Option<KtTables>,
    dynamic: Option<CudaSlice<f64>>,
    leak: DevLeakage,
    ambient_k: f64,
    plane: usize,
}

impl NonlinearOps for CudaBackend {
    type Physics = CudaPhysics;
    type NlSystem = DeviceSystem;
    type AsmKept = AsmInputs;

    fn tr_assemble(
        &self,
        inp: &AssemblyInput,
    ) -> Result<Option<TransientAssemblyOf<Self>>, BackendError> {
        if self.knobs().host_assembly {
            return Ok(None);
        }
        let kept = self.upload_assembly(inp)?;
        let sys = self.assemble_from(&kept, None)?;
        Ok(Some(TransientAssembly {
            g_top: self.download(&sys.g_top)?,
            g_bottom: self.download(&sys.g_bottom)?,
            a: sys.a,
            capacity: sys.capacity.ok_or(BackendError::Unsupported(
                "the device assembly gave no heat capacities",
            ))?,
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
        match &sys.capacity {
            Some(c) => Ok((&mut sys.a, c)),
            None => Err(BackendError::Unsupported(
                "a transient step needs the heat capacities; this system was assembled for a steady solve",
            )),
        }
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
        let leak = self.upload_leakage(cx.leak, grid)?;
        Ok(CudaPhysics {
            asm,
            kt,
            dynamic,
            leak,
            ambient_k: cx.stack.ambient_k,
            plane: grid.plane(),
        })
    }

    fn nl_assemble(
        &self,
        cx: &NlContext,
        ph: &mut CudaPhysics,
        theta: &CudaSlice<f64>,
    ) -> Result<Result<DeviceSystem, usize>, BackendError> {
        // Heat capacities only for a transient step (`capacity_laws`).
        let with_c = cx.capacity_laws;
        let sys = match ph.kt.as_mut() {
            Some(kt) => {
                if let Some(i) =
                    self.cell_materials_kt(kt, &ph.asm.lz, theta, ph.ambient_k, ph.plane)?
                {
                    return Ok(Err(i));
                }
                self.assemble_with(&ph.asm, Some(&kt.cells), with_c)?
            }
            None => self.assemble_with(&ph.asm, None, with_c)?,
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
        let leakage_w = self.leakage(&mut ph.leak, theta, ph.ambient_k, ph.plane)?;
        let dynamic = ph.dynamic.as_ref().ok_or(BackendError::Unsupported(
            "nl_power before the first nl_assemble",
        ))?;
        self.copy(dynamic, out)?;
        if let Some(cellw) = &ph.leak.cellw {
            // dynamic + leakage, as the host's p + q.
            self.nl_axpby(Some(cellw), 1.0, 1.0, out, 0.0)?;
        }
        let mut s = self.scalars(1)?;
        self.nl_reduce(Reduce::Sum, Operands::of(out), &mut s, 0)?;
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
        self.nl_reduce(Reduce::Sum, Operands::of(&sys.a.amb), &mut s, 0)?;
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
        let per_source = self.leakage(&mut ph.leak, theta, ph.ambient_k, ph.plane)?;
        Ok(per_source.iter().fold(0.0, |a, b| a + b))
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
        let mut args = self.stream().launch_builder(&f);
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
        self.nl_reduce(Reduce::Min, Operands::of(x), &mut s, 0)?;
        self.nl_reduce(Reduce::Max, Operands::of(x), &mut s, 1)?;
        self.nl_reduce(Reduce::NonFinite, Operands::of(x), &mut s, 2)?;
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
            .stream()
            .clone_dtoh(&x.slice(i..i + 1))
            .map_err(|e| driver_err("reading one value", e))?;
        Ok(v[0])
    }
}
