//! The k(T) part of device assembly: every cell's material from
//! its laws at its own temperature (`asm_cell_mat_f64`, the device's
//! `assemble::cell_materials`), from tables built once per solve: the laws
//! of the layers and of the floorplan patches that have them
//! (`Law::encode`), each layer's in-plane paint (`assemble::layer_material`)
//! and, per plane cell, the law patches that cover it in the host's order.
//! The faces and diagonal are then the device assembly's own kernels in
//! per-cell mode (`assemble_from`).

use super::assemble::ASSEMBLE;
use crate::assemble::{layer_material, LayerMaterial};
use crate::backend::cuda::launch::{driver_err, rows_config};
use crate::backend::cuda::CudaBackend;
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::power::{rasterize::coverage, LayerPower};
use crate::stack::{Law, MaterialLaw, Stack};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// The tables of `asm_cell_mat_f64` and its output, in device memory.
pub(crate) struct KtTables {
    hdr: CudaSlice<i32>,
    lc: CudaSlice<f64>,
    law_of_layer: CudaSlice<i32>,
    uniform: CudaSlice<f64>,
    mix_off: CudaSlice<i64>,
    mix: CudaSlice<f64>,
    row_off: CudaSlice<i64>,
    patch_row: CudaSlice<i64>,
    patch_f: CudaSlice<f64>,
    patch_id: CudaSlice<i32>,
    patch_law: CudaSlice<i32>,
    patch_mat: CudaSlice<f64>,
    /// kx, ky, kz, c of every cell.
    pub(crate) cells: CudaSlice<f64>,
    bad: CudaSlice<u64>,
}

/// The four law ids of a material law.
fn encode(m: &MaterialLaw, hdr: &mut Vec<i32>, c: &mut Vec<f64>) -> [i32; 4] {
    [
        m.k[0].encode(hdr, c),
        m.k[1].encode(hdr, c),
        m.k[2].encode(hdr, c),
        m.heat_capacity.encode(hdr, c),
    ]
}

/// cudarc cannot copy an empty slice: one unused value.
fn nonempty<T: Clone>(mut v: Vec<T>, fill: T) -> Vec<T> {
    if v.is_empty() {
        v.push(fill);
    }
    v
}

impl CudaBackend {
    /// The tables of `stack` on `grid` (n cells) with its layers' `power`.
    pub(crate) fn upload_kt(
        &self,
        stack: &Stack,
        grid: &Grid,
        power: &[LayerPower],
    ) -> Result<KtTables, BackendError> {
        crate::backend::cuda::same_len(power.len(), stack.layers.len())?;
        let plane = grid.plane();
        let (mut hdr, mut lc) = (Vec::new(), Vec::new());
        let (mut law_of_layer, mut uniform) = (Vec::new(), Vec::new());
        let (mut mix_off, mut mix) = (Vec::new(), Vec::new());
        let (mut row_off, mut patch_row) = (Vec::new(), Vec::new());
        let (mut patch_f, mut patch_id) = (Vec::new(), Vec::new());
        let (mut patch_law, mut patch_mat) = (Vec::new(), Vec::new());
        for (layer, p) in stack.layers.iter().zip(power) {
            match &layer.law {
                Some(m) => law_of_layer.extend(encode(m, &mut hdr, &mut lc)),
                None => law_of_layer.extend([-1; 4]),
            }
            let m = &layer.material;
            uniform.extend([m.k[0], m.k[1], m.k[2], m.heat_capacity]);
            match layer_material(grid, p) {
                LayerMaterial::Uniform => mix_off.push(-1i64),
                LayerMaterial::Mixed(v) => {
                    mix_off.push((mix.len() / 5) as i64);
                    for (own, k, c) in v {
                        mix.extend([own, k[0], k[1], k[2], c]);
                    }
                }
            }
            // The law patches covering each plane cell, in the host's order
            // (patch by patch): a stable sort by cell keeps it per cell.
            let mut entries: Vec<(usize, f64, i32)> = Vec::new();
            for q in p.patches.iter() {
                let Some(law) = &q.law else { continue };
                let id = (patch_law.len() / 4) as i32;
                patch_law.extend(encode(law, &mut hdr, &mut lc));
                let qm = &q.material;
                patch_mat.extend([qm.k[0], qm.k[1], qm.k[2], qm.heat_capacity]);
                entries.extend(
                    coverage(&q.rect, grid)
                        .into_iter()
                        .map(|(j, a)| (j, a / grid.cell_area(j), id)),
                );
            }
            if entries.is_empty() {
                row_off.push(-1i64);
                continue;
            }
            entries.sort_by_key(|e| e.0);
            row_off.push(patch_row.len() as i64);
            let base = patch_f.len();
            let mut next = 0;
            for j in 0..=plane {
                while next < entries.len() && entries[next].0 < j {
                    next += 1;
                }
                patch_row.push((base + next) as i64);
            }
            for (_, f, id) in entries {
                patch_f.push(f);
                patch_id.push(id);
            }
        }
        self.load(&ASSEMBLE)?;
        Ok(KtTables {
            hdr: self.htod(&nonempty(hdr, 0), "the law headers")?,
            lc: self.htod(&nonempty(lc, 0.0), "the law coefficients")?,
            law_of_layer: self.htod(&law_of_layer, "the layer laws")?,
            uniform: self.htod(&uniform, "the layer materials")?,
            mix_off: self.htod(&mix_off, "the paint offsets")?,
            mix: self.htod(&nonempty(mix, 0.0), "the in-plane paint")?,
            row_off: self.htod(&row_off, "the patch row offsets")?,
            patch_row: self.htod(&nonempty(patch_row, 0), "the patch rows")?,
            patch_f: self.htod(&nonempty(patch_f, 0.0), "the patch fractions")?,
            patch_id: self.htod(&nonempty(patch_id, 0), "the patch ids")?,
            patch_law: self.htod(&nonempty(patch_law, 0), "the patch laws")?,
            patch_mat: self.htod(&nonempty(patch_mat, 0.0), "the patch materials")?,
            cells: self.zeros_f64(4 * grid.len(), "the cell materials")?,
            bad: self.htod(&[u64::MAX], "the bad-cell flag")?,
        })
    }

    /// `kt.cells` at T = `theta` + `t_amb` (`lz`: the layer of each z cell);
    /// `Some(i)`: a law is not positive at cell i (the lowest such).
    pub(crate) fn cell_materials_kt(
        &self,
        kt: &mut KtTables,
        lz: &CudaSlice<i32>,
        theta: &CudaSlice<f64>,
        t_amb: f64,
        plane: usize,
    ) -> Result<Option<usize>, BackendError> {
        let n = theta.len();
        crate::backend::cuda::same_len(kt.cells.len(), 4 * n)?;
        if plane == 0 || lz.len() * plane != n {
            return Err(BackendError::Length(n, plane * lz.len()));
        }
        self.stream()
            .memcpy_htod(&[u64::MAX], &mut kt.bad)
            .map_err(|e| driver_err("resetting the bad-cell flag", e))?;
        const NAME: &str = "asm_cell_mat_f64";
        let k = self.kernel(&ASSEMBLE, NAME)?;
        let (plane64, n64) = (plane as i64, n as i64);
        let mut args = self.stream().launch_builder(&k);
        args.arg(theta).arg(&t_amb).arg(lz).arg(&kt.law_of_layer);
        args.arg(&kt.uniform).arg(&kt.mix_off).arg(&kt.mix);
        args.arg(&kt.hdr)
            .arg(&kt.lc)
            .arg(&kt.row_off)
            .arg(&kt.patch_row);
        args.arg(&kt.patch_f).arg(&kt.patch_id).arg(&kt.patch_law);
        args.arg(&kt.patch_mat).arg(&plane64).arg(&n64);
        args.arg(&mut kt.cells).arg(&mut kt.bad);
        // SAFETY: arguments in the kernel's order and types; the tables were
        // built together (every id and offset within them), theta holds
        // plane·nz values for nz = lz.len(), cells 4 per cell.
        unsafe { self.run(NAME, &mut args, rows_config(n.min(1 << 26)))? };
        let bad = self
            .stream()
            .clone_dtoh(&kt.bad)
            .map_err(|e| driver_err("reading the bad-cell flag", e))?;
        Ok((bad[0] != u64::MAX).then_some(bad[0] as usize))
    }

    /// `law` at each of `t` on this GPU (`asm_law`, tested against
    /// `Law::eval`).
    pub fn eval_law(&self, law: &Law, t: &[f64]) -> Result<Vec<f64>, BackendError> {
        let (mut hdr, mut c) = (Vec::new(), Vec::new());
        let id = law.encode(&mut hdr, &mut c);
        self.load(&ASSEMBLE)?;
        let hdr = self.htod(&hdr, "the law header")?;
        let c = self.htod(&c, "the law coefficients")?;
        let tt = self.htod(&nonempty(t.to_vec(), 0.0), "the temperatures")?;
        let mut out = self.zeros_f64(t.len(), "the law values")?;
        const NAME: &str = "asm_law_eval_f64";
        let k = self.kernel(&ASSEMBLE, NAME)?;
        let n = t.len() as i64;
        let mut args = self.stream().launch_builder(&k);
        args.arg(&hdr)
            .arg(&c)
            .arg(&id)
            .arg(&tt)
            .arg(&mut out)
            .arg(&n);
        // SAFETY: arguments in the kernel's order and types; t and out hold
        // n values, the law's numbers are in c.
        unsafe { self.run(NAME, &mut args, rows_config(t.len().max(1)))? };
        let mut v = self
            .stream()
            .clone_dtoh(&out)
            .map_err(|e| driver_err("downloading the law values", e))?;
        v.truncate(t.len());
        Ok(v)
    }
}
