//! Assembly on the GPU: the Quad-Diag matrix, heat
//! capacities, conductances to ambient and right-hand side computed by the
//! kernels of `kernels/assemble.cu` from an [`AssemblyInput`] (per z cell
//! thickness and layer, per layer one material or a plane of them, power
//! maps, widths, film coefficients), so that the n-sized arrays are never
//! built on the host nor copied. The result equals the host's
//! `assemble::assemble` bit for bit (tests/gpu_assemble.rs). A k(T) solve
//! keeps the uploaded inputs ([`AsmInputs`]) and assembles from per-cell
//! materials (`assemble_kt.rs`) at every outer iteration.

use super::assemble_inputs::{film, flatten};
use crate::backend::cuda::launch::{driver_err, rows_config};
use crate::backend::cuda::KernelFamily;
use crate::backend::cuda::{CudaBackend, CudaMatrix};
use crate::backend::BackendError;
use crate::thermal::assembly_input::AssemblyInput;
use cudarc::driver::{CudaSlice, DeviceRepr, PushKernelArg};

/// `kernels/assemble.cu`.
pub static ASSEMBLE: KernelFamily = KernelFamily {
    file: "assemble.cu",
    source: include_str!("../../../../kernels/assemble.cu"),
    entry_points: &[
        "asm_faces_f64",
        "asm_diag_f64",
        "asm_shift_f64",
        "asm_law_eval_f64",
        "asm_cell_mat_f64",
        "asm_power_f64",
    ],
};

/// The assembled system in device memory (see `assemble::System`).
#[derive(Debug)]
pub struct DeviceSystem {
    pub a: CudaMatrix,
    /// Power per cell, W.
    pub rhs: CudaSlice<f64>,
    /// c·V per cell, J/K (`None` for a steady solve: neither stored nor
    /// computed).
    pub capacity: Option<CudaSlice<f64>>,
    /// Conductance to ambient per top-plane cell, W/K.
    pub g_top: CudaSlice<f64>,
    /// Same for the bottom (zeros when adiabatic).
    pub g_bottom: CudaSlice<f64>,
}

/// The compact inputs in device memory (`upload_assembly`), kept by a
/// solve that assembles more than once (k(T)).
pub struct AsmInputs {
    pub(crate) nx: usize,
    pub(crate) ny: usize,
    pub(crate) nz: usize,
    dx: CudaSlice<f64>,
    dy: CudaSlice<f64>,
    dz: CudaSlice<f64>,
    pub(crate) lz: CudaSlice<i32>,
    lc: CudaSlice<f64>,
    uniform: CudaSlice<f64>,
    plane_off: CudaSlice<i64>,
    planes: CudaSlice<f64>,
    power_off: CudaSlice<i64>,
    power: CudaSlice<f64>,
    h_top: CudaSlice<f64>,
    h_bottom: CudaSlice<f64>,
    top_stride: i64,
    bottom_stride: i64,
    has_bottom: i32,
    widths: (Vec<f64>, Vec<f64>),
}

impl CudaBackend {
    pub(crate) fn htod<T: DeviceRepr>(
        &self,
        v: &[T],
        what: &str,
    ) -> Result<CudaSlice<T>, BackendError> {
        self.stream()
            .clone_htod(v)
            .map_err(|e| driver_err(&format!("uploading {what}"), e))
    }

    pub(crate) fn zeros_f64(&self, n: usize, what: &str) -> Result<CudaSlice<f64>, BackendError> {
        self.stream()
            .alloc_zeros::<f64>(n.max(1))
            .map_err(|e| driver_err(&format!("allocating {what}"), e))
    }

    /// Assembles the system of `inp` on this GPU. Lengths are checked here
    /// (the kernels trust them); whether it fits is the run's memory plan.
    pub fn assemble_system(&self, inp: &AssemblyInput) -> Result<DeviceSystem, BackendError> {
        let inputs = self.upload_assembly(inp)?;
        self.assemble_from(&inputs, None)
    }

    /// [`CudaBackend::assemble_system`] for a steady solve: the heat
    /// capacities (one n-vector) are neither allocated nor computed.
    pub fn assemble_steady(&self, inp: &AssemblyInput) -> Result<DeviceSystem, BackendError> {
        let inputs = self.upload_assembly(inp)?;
        self.assemble_with(&inputs, None, false)
    }

    /// The compact inputs of `inp` in device memory, checked.
    pub(crate) fn upload_assembly(&self, inp: &AssemblyInput) -> Result<AsmInputs, BackendError> {
        let (nx, ny, nz) = (inp.nx, inp.ny, inp.nz);
        let plane = inp.plane();
        crate::backend::cuda::same_len(inp.dx.len(), nx)?;
        crate::backend::cuda::same_len(inp.dy.len(), ny)?;
        crate::backend::cuda::same_len(inp.dz.len(), nz)?;
        crate::backend::cuda::same_len(inp.layer_of_z.len(), nz)?;
        crate::backend::cuda::same_len(inp.layer_cells.len(), inp.layers.len())?;
        crate::backend::cuda::same_len(inp.power.len(), inp.layers.len())?;
        if inp.is_empty() {
            return Err(BackendError::Length(0, 1));
        }
        if let Some(&l) = inp
            .layer_of_z
            .iter()
            .find(|&&l| l as usize >= inp.layers.len())
        {
            return Err(BackendError::Length(l as usize, inp.layers.len()));
        }
        let top_stride = film(&inp.h_top, plane)?;
        let (h_bottom, bottom_stride, has_bottom) = match &inp.h_bottom {
            Some(h) => (h.clone(), film(h, plane)?, 1i32),
            None => (vec![0.0], 0, 0),
        };
        // Parts for `timings_detail_s`; with CUTH_PROFILE_SYNC
        // each waits for the device.
        let mut part = crate::profile::Laps::new();
        let sync = crate::profile::sync_parts();
        let f = flatten(inp)?;
        let layer_of_z: Vec<i32> = inp.layer_of_z.iter().map(|&l| l as i32).collect();
        let cells: Vec<f64> = inp.layer_cells.iter().map(|&c| f64::from(c)).collect();
        part.lap("assemble/flatten");
        self.load(&ASSEMBLE)?;
        part.lap("assemble/compile");
        let uniform = |w: &[f64]| w.iter().all(|&v| v == w[0]);
        let inputs = AsmInputs {
            nx,
            ny,
            nz,
            dx: self.htod(&inp.dx, "dx")?,
            dy: self.htod(&inp.dy, "dy")?,
            dz: self.htod(&inp.dz, "dz")?,
            lz: self.htod(&layer_of_z, "the layer of each z cell")?,
            lc: self.htod(&cells, "the z cells of each layer")?,
            uniform: self.htod(&f.uniform, "the layer materials")?,
            plane_off: self.htod(&f.plane_off, "the plane offsets")?,
            planes: self.htod_concat(&f.planes, "the in-plane materials")?,
            power_off: self.htod(&f.power_off, "the power offsets")?,
            power: self.htod_concat(&f.power, "the power maps")?,
            h_top: self.htod(&inp.h_top, "h_top")?,
            h_bottom: self.htod(&h_bottom, "h_bottom")?,
            top_stride,
            bottom_stride,
            has_bottom,
            // Multigrid rediscretises with the physical widths (as the
            // host's `QuadDiag::wx`/`wy`: empty on a uniform grid).
            widths: if uniform(&inp.dx) && uniform(&inp.dy) {
                (Vec::new(), Vec::new())
            } else {
                (inp.dx.clone(), inp.dy.clone())
            },
        };
        if sync {
            self.sync("uploading the assembly inputs")?;
        }
        part.lap("assemble/upload_inputs");
        Ok(inputs)
    }

    /// The system of `inp`; with `cells` (kx, ky, kz, c of every cell, from
    /// `asm_cell_mat_f64`) in place of the layers' materials.
    pub(crate) fn assemble_from(
        &self,
        inp: &AsmInputs,
        cells: Option<&CudaSlice<f64>>,
    ) -> Result<DeviceSystem, BackendError> {
        self.assemble_with(inp, cells, true)
    }

    /// [`CudaBackend::assemble_from`], with the heat capacities only when
    /// `with_capacity` (a transient step's; a steady solve has none).
    pub(crate) fn assemble_with(
        &self,
        inp: &AsmInputs,
        cells: Option<&CudaSlice<f64>>,
        with_capacity: bool,
    ) -> Result<DeviceSystem, BackendError> {
        let (nx, ny, nz) = (inp.nx, inp.ny, inp.nz);
        let (plane, n) = (nx * ny, nx * ny * nz);
        let mut part = crate::profile::Laps::new();
        let sync = crate::profile::sync_parts();
        let (wx, wy) = inp.widths.clone();
        let mut sys = DeviceSystem {
            a: CudaMatrix {
                d: self.zeros_f64(n, "the matrix diagonal")?,
                gx: self.zeros_f64(n, "gx")?,
                gy: self.zeros_f64(n, "gy")?,
                gz: self.zeros_f64(n, "gz")?,
                amb: self.zeros_f64(n, "amb")?,
                nx,
                ny,
                nz,
                wx,
                wy,
            },
            rhs: self.zeros_f64(n, "the right-hand side")?,
            capacity: match with_capacity {
                true => Some(self.zeros_f64(n, "the heat capacities")?),
                false => None,
            },
            g_top: self.zeros_f64(plane, "g_top")?,
            g_bottom: self.zeros_f64(plane, "g_bottom")?,
        };
        if sync {
            self.sync("allocating the system")?;
        }
        part.lap("assemble/alloc");
        self.assemble_into(inp, cells, &mut sys)?;
        Ok(sys)
    }

    /// [`Self::assemble_from`] into the arrays of `sys` (a system of the
    /// same grid: a k(T) outer iteration re-assembling, nothing allocated).
    /// The kernels write every value of every array (the heat capacities
    /// only where `sys` has them).
    pub(crate) fn assemble_into(
        &self,
        inp: &AsmInputs,
        cells: Option<&CudaSlice<f64>>,
        sys: &mut DeviceSystem,
    ) -> Result<(), BackendError> {
        let (nx, ny, nz) = (inp.nx, inp.ny, inp.nz);
        let (plane, n) = (nx * ny, nx * ny * nz);
        if let Some(c) = cells {
            crate::backend::cuda::same_len(c.len(), 4 * n)?;
        }
        let a = &mut sys.a;
        for len in [a.d.len(), a.gx.len(), a.gy.len(), a.gz.len(), a.amb.len()] {
            crate::backend::cuda::same_len(len, n)?;
        }
        crate::backend::cuda::same_len(sys.rhs.len(), n)?;
        if let Some(c) = &sys.capacity {
            crate::backend::cuda::same_len(c.len(), n)?;
        }
        crate::backend::cuda::same_len(sys.g_top.len(), plane)?;
        crate::backend::cuda::same_len(sys.g_bottom.len(), plane)?;
        let mut part = crate::profile::Laps::new();
        let sync = crate::profile::sync_parts();
        let (nx64, ny64, nz64) = (nx as i64, ny as i64, nz as i64);
        // A grid-stride loop: no more blocks than a few waves need.
        let cfg = rows_config(n.min(1 << 26));
        let null = 0u64;
        {
            const NAME: &str = "asm_faces_f64";
            let k = self.kernel(&ASSEMBLE, NAME)?;
            let mut args = self.stream().launch_builder(&k);
            args.arg(&inp.dx)
                .arg(&inp.dy)
                .arg(&inp.dz)
                .arg(&inp.lz)
                .arg(&inp.lc);
            args.arg(&inp.uniform).arg(&inp.plane_off).arg(&inp.planes);
            match cells {
                Some(c) => args.arg(c),
                None => args.arg(&null),
            };
            args.arg(&inp.power_off).arg(&inp.power);
            args.arg(&inp.h_top).arg(&inp.top_stride);
            args.arg(&inp.h_bottom)
                .arg(&inp.bottom_stride)
                .arg(&inp.has_bottom);
            args.arg(&nx64).arg(&ny64).arg(&nz64);
            args.arg(&mut a.gx).arg(&mut a.gy).arg(&mut a.gz);
            match &mut sys.capacity {
                Some(c) => args.arg(c),
                None => args.arg(&null),
            };
            args.arg(&mut sys.rhs);
            args.arg(&mut sys.g_top).arg(&mut sys.g_bottom);
            // SAFETY: arguments in the kernel's order and types; every
            // array's length checked against nx, ny, nz (above, and the
            // layers when the inputs were uploaded), `cells` (or null) above.
            unsafe { self.run(NAME, &mut args, cfg)? };
        }
        if sync {
            self.sync("assembling the faces")?;
        }
        part.lap("assemble/kernels");
        {
            const NAME: &str = "asm_diag_f64";
            let k = self.kernel(&ASSEMBLE, NAME)?;
            let mut args = self.stream().launch_builder(&k);
            args.arg(&a.gx).arg(&a.gy).arg(&a.gz);
            args.arg(&sys.g_top).arg(&sys.g_bottom);
            args.arg(&nx64).arg(&ny64).arg(&nz64);
            args.arg(&mut a.d).arg(&mut a.amb);
            // SAFETY: as above.
            unsafe { self.run(NAME, &mut args, cfg)? };
        }
        if sync {
            self.sync("assembling the diagonal")?;
        }
        part.lap("assemble/kernels");
        Ok(())
    }

    /// `rhs` = the power per cell of the per-layer plane `maps` (W per
    /// plane cell; empty: no power), split over each layer's z cells as
    /// `asm_faces_f64` (and the host's `cell_power`) split it: a transient
    /// run's new trace row without re-assembling. Uploads the maps only.
    pub(crate) fn power_into(
        &self,
        inp: &AsmInputs,
        maps: &[Vec<f64>],
        rhs: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let plane = inp.nx * inp.ny;
        crate::backend::cuda::same_len(rhs.len(), plane * inp.nz)?;
        crate::backend::cuda::same_len(maps.len(), inp.lc.len())?;
        let (mut off, mut flat) = (Vec::with_capacity(maps.len()), Vec::new());
        for m in maps {
            if m.is_empty() {
                off.push(-1i64);
                continue;
            }
            crate::backend::cuda::same_len(m.len(), plane)?;
            off.push(flat.len() as i64);
            flat.extend_from_slice(m);
        }
        if flat.is_empty() {
            flat.push(0.0);
        }
        let off = self.htod(&off, "the power offsets")?;
        let flat = self.htod(&flat, "the power maps")?;
        self.load(&ASSEMBLE)?;
        const NAME: &str = "asm_power_f64";
        let k = self.kernel(&ASSEMBLE, NAME)?;
        let (plane64, nz64, n) = (plane as i64, inp.nz as i64, rhs.len());
        let mut args = self.stream().launch_builder(&k);
        args.arg(&inp.lz).arg(&inp.lc).arg(&off).arg(&flat);
        args.arg(&plane64).arg(&nz64).arg(rhs);
        // SAFETY: arguments in the kernel's order and types; every map has
        // one value per plane cell, one offset per layer, rhs n values.
        unsafe { self.run(NAME, &mut args, rows_config(n.min(1 << 26))) }
    }

    /// b −= c·amb(a) on the device, rounded as the host's `Offset` (24 B/row).
    pub(crate) fn shift_rhs_kernel(
        &self,
        a: &CudaMatrix,
        c: f64,
        b: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        crate::backend::cuda::same_len(a.len(), b.len())?;
        const NAME: &str = "asm_shift_f64";
        let k = self.kernel(&ASSEMBLE, NAME)?;
        let n = a.len() as i64;
        let mut args = self.stream().launch_builder(&k);
        args.arg(&a.amb).arg(&c).arg(b).arg(&n);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, rows_config(a.len().min(1 << 26))) }
    }
}
