//! The post-solve statistics on the GPU: the launchers of
//! `kernels/stats.cu` behind `QuadDiagOps::field_partials` and
//! `QuadDiagOps::chunked_total`. What comes down is one partial per (z
//! plane, chunk of [`StatsRequest::span`] cells), the probes' cells, five
//! numbers per chunk of a block's cells (the blocks' statistics reduced
//! from their layers' maps built here, `thermal::block_stats_device`) and
//! the requested layer maps: kilobytes and a plane per requested map
//! instead of the whole field. The host merges the partials in order
//! (`thermal::field_stats::device`), so the result is reproducible.

use crate::backend::cuda::launch::rows_config;
use crate::backend::cuda::KernelFamily;
use crate::backend::cuda::{same_len, CudaBackend};
use crate::backend::BackendError;
use crate::thermal::block_stats_device::{BlockPartial, LayerBlocks, CHUNK};
use crate::thermal::field_stats::device::{StatsPartials, StatsRequest};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use std::ops::Range;

/// `kernels/stats.cu`.
pub static STATS: KernelFamily = KernelFamily {
    file: "stats.cu",
    source: include_str!("../../../../kernels/stats.cu"),
    entry_points: &[
        "stats_planes_f64",
        "stats_layer_map_f64",
        "stats_gather_f64",
        "stats_chunk_sums_f64",
        "stats_blocks_f64",
    ],
};

/// One block per chunk of `span` values (and per plane along y).
fn chunk_config(chunks: usize, planes: usize) -> Result<LaunchConfig, BackendError> {
    if chunks == 0 || chunks > i32::MAX as usize || planes == 0 || planes > 65_535 {
        return Err(BackendError::Unsupported(
            "device statistics: more chunks or z planes than a launch holds",
        ));
    }
    Ok(LaunchConfig {
        grid_dim: (chunks as u32, planes as u32, 1),
        block_dim: (crate::backend::cuda::kernels::BLOCK, 1, 1),
        shared_mem_bytes: 0,
    })
}

impl CudaBackend {
    /// Σ v in chunks of `field_stats::CHUNK`, the chunks added in order on
    /// the host.
    pub(crate) fn chunked_total_kernel(&self, v: &CudaSlice<f64>) -> Result<f64, BackendError> {
        let span = crate::thermal::field_stats::CHUNK;
        let n = v.len();
        let chunks = n.div_ceil(span).max(1);
        let mut out = self.zeros_f64(chunks, "chunk sums")?;
        const NAME: &str = "stats_chunk_sums_f64";
        let k = self.kernel(&STATS, NAME)?;
        let (n64, span64) = (n as i64, span as i64);
        let mut args = self.stream().launch_builder(&k);
        args.arg(v).arg(&n64).arg(&span64).arg(&mut out);
        // SAFETY: arguments in the kernel's order and types; one block per
        // chunk of v, one output per block.
        unsafe { self.run(NAME, &mut args, chunk_config(chunks, 1)?)? };
        let parts = self.to_host(&out, "chunk sums")?;
        Ok(parts.iter().sum())
    }

    /// The partials of `req` for the solution `x` (see [`StatsPartials`]).
    pub(crate) fn field_partials_kernels(
        &self,
        x: &CudaSlice<f64>,
        g_top: &CudaSlice<f64>,
        g_bottom: &CudaSlice<f64>,
        req: &StatsRequest,
    ) -> Result<StatsPartials, BackendError> {
        let (nx, nz) = (req.nx, req.nz);
        let plane = nx * req.ny;
        same_len(x.len(), plane * nz)?;
        same_len(g_top.len(), plane)?;
        same_len(g_bottom.len(), plane)?;
        same_len(req.layer_of_z.len(), nz)?;
        same_len(req.dx.len(), nx)?;
        same_len(req.dy.len(), req.ny)?;
        if req.span == 0 || req.layer_of_z.iter().any(|&l| l >= req.absent.len()) {
            return Err(BackendError::Length(req.span, req.absent.len()));
        }
        same_len(req.weighted.len(), req.absent.len())?;
        if let Some(&i) = req.probe_cells.iter().find(|&&i| i >= x.len()) {
            return Err(BackendError::Length(i, x.len()));
        }
        // Absent cells: one byte per plane cell of each layer that has any.
        let mut bytes: Vec<u8> = Vec::new();
        let mut layer_off = Vec::with_capacity(req.absent.len());
        for a in req.absent {
            if a.is_empty() {
                layer_off.push(-1i64);
            } else {
                same_len(a.len(), plane)?;
                layer_off.push(bytes.len() as i64);
                bytes.extend(a.iter().map(|&b| u8::from(b)));
            }
        }
        if bytes.is_empty() {
            bytes.push(0);
        }
        let absent_off: Vec<i64> = req.layer_of_z.iter().map(|&l| layer_off[l]).collect();
        let weighted: Vec<i32> = (req.layer_of_z.iter())
            .map(|&l| i32::from(req.weighted[l]))
            .collect();
        let chunks = plane.div_ceil(req.span);
        let mut out = self.zeros_f64(7 * chunks * nz, "the statistics' partials")?;
        let absent = self.htod(&bytes, "the absent cells")?;
        {
            let absent_off = self.htod(&absent_off, "the absent planes' offsets")?;
            let weighted = self.htod(&weighted, "the weighted planes")?;
            let dx = self.htod(req.dx, "dx")?;
            let dy = self.htod(req.dy, "dy")?;
            const NAME: &str = "stats_planes_f64";
            let k = self.kernel(&STATS, NAME)?;
            let (nx64, plane64, nz64, span64) =
                (nx as i64, plane as i64, nz as i64, req.span as i64);
            let mut args = self.stream().launch_builder(&k);
            args.arg(x).arg(&req.c).arg(&req.ambient);
            args.arg(&nx64).arg(&plane64).arg(&nz64).arg(&span64);
            args.arg(&absent).arg(&absent_off).arg(&weighted);
            args.arg(&dx).arg(&dy).arg(g_top).arg(g_bottom);
            args.arg(&mut out);
            // SAFETY: arguments in the kernel's order and types; x holds
            // plane·nz values, the films a plane each, dx/dy nx/ny, one
            // offset and flag per z, absent bytes a plane per layer that
            // has them; out 7 values per (chunk, z) block.
            unsafe { self.run(NAME, &mut args, chunk_config(chunks, nz)?)? };
        }
        let probe_x = match req.probe_cells.is_empty() {
            true => Vec::new(),
            false => {
                let idx: Vec<i64> = req.probe_cells.iter().map(|&i| i as i64).collect();
                let m = idx.len();
                let idx = self.htod(&idx, "the probes' cells")?;
                let mut got = self.zeros_f64(m, "the probes' values")?;
                const NAME: &str = "stats_gather_f64";
                let k = self.kernel(&STATS, NAME)?;
                let m64 = m as i64;
                let mut args = self.stream().launch_builder(&k);
                args.arg(x).arg(&idx).arg(&m64).arg(&mut got);
                // SAFETY: as above; every index checked below x.len().
                unsafe { self.run(NAME, &mut args, rows_config(m))? };
                self.to_host(&got, "the probes' values")?
            }
        };
        // The requested maps come down; a layer with blocks has them
        // reduced from its map here, its map downloaded only if requested.
        let mut maps = Vec::with_capacity(req.maps.len());
        let mut blocks = vec![Vec::new(); req.blocks.len()];
        let mut scratch = None;
        for (i, lb) in req.blocks.iter().enumerate() {
            if !lb.fits(nx, req.ny, nz) || lb.layer >= layer_off.len() {
                return Err(BackendError::Length(lb.layer, req.absent.len()));
            }
            if !req.maps.iter().any(|(l, _)| *l == lb.layer) {
                let map = match &mut scratch {
                    Some(m) => m,
                    None => scratch.insert(self.zeros_f64(plane, "a layer map")?),
                };
                self.layer_sum(x, req, &lb.z, map)?;
                blocks[i] = self.block_partials(map, &absent, layer_off[lb.layer], lb)?;
            }
        }
        drop(scratch);
        for (l, zr) in &req.maps {
            if zr.start >= zr.end || zr.end > nz {
                return Err(BackendError::Length(zr.end, nz));
            }
            let mut map = self.zeros_f64(plane, "a layer map")?;
            self.layer_sum(x, req, zr, &mut map)?;
            if let Some(i) = req.blocks.iter().position(|b| b.layer == *l) {
                blocks[i] = self.block_partials(&map, &absent, layer_off[*l], &req.blocks[i])?;
            }
            maps.push(self.to_host(&map, "a layer map")?);
        }
        let chunks_flat = self.to_host(&out, "the statistics' partials")?;
        Ok(StatsPartials {
            chunks: (chunks_flat.chunks_exact(7))
                .map(|v| {
                    let mut a = [0.0; 7];
                    a.copy_from_slice(v);
                    a
                })
                .collect(),
            probe_x,
            maps,
            blocks,
        })
    }

    /// map = Σ over the z cells `zr` of T (`stats_layer_map_f64`).
    fn layer_sum(
        &self,
        x: &CudaSlice<f64>,
        req: &StatsRequest,
        zr: &Range<usize>,
        map: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let plane = map.len();
        if zr.start >= zr.end || zr.end * plane > x.len() {
            return Err(BackendError::Length(zr.end * plane, x.len()));
        }
        const NAME: &str = "stats_layer_map_f64";
        let k = self.kernel(&STATS, NAME)?;
        let (plane64, z0, z1) = (plane as i64, zr.start as i64, zr.end as i64);
        let mut args = self.stream().launch_builder(&k);
        args.arg(x).arg(&req.c).arg(&req.ambient);
        args.arg(&plane64).arg(&z0).arg(&z1).arg(map);
        // SAFETY: arguments in the kernel's order and types; x holds at
        // least z1 planes (checked), map one plane.
        unsafe { self.run(NAME, &mut args, rows_config(plane.min(1 << 26)))? };
        Ok(())
    }

    /// The chunks' partials of `lb`'s blocks over `sum`, a layer map
    /// before the division (`stats_blocks_f64`); `aoff`: the layer's plane
    /// in `absent`, or −1.
    fn block_partials(
        &self,
        sum: &CudaSlice<f64>,
        absent: &CudaSlice<u8>,
        aoff: i64,
        lb: &LayerBlocks,
    ) -> Result<Vec<BlockPartial>, BackendError> {
        let n = lb.chunks.len();
        if n == 0 {
            return Ok(Vec::new());
        }
        // As i64, and never empty (blocks of no cells have no columns).
        fn i64s(v: impl Iterator<Item = usize>) -> Vec<i64> {
            let v: Vec<i64> = v.map(|i| i as i64).collect();
            if v.is_empty() {
                vec![0]
            } else {
                v
            }
        }
        let f64s = |v: &[f64]| if v.is_empty() { vec![0.0] } else { v.to_vec() };
        let chunk_block = self.htod(&i64s(lb.chunks.iter().map(|c| c.0)), "blocks")?;
        let chunk_first = self.htod(&i64s(lb.chunks.iter().map(|c| c.1)), "blocks")?;
        let geo = self.htod(&i64s(lb.blocks.iter().flatten().copied()), "blocks")?;
        let cols = self.htod(&i64s(lb.cols.iter().copied()), "blocks' columns")?;
        let rows = self.htod(&i64s(lb.rows.iter().copied()), "blocks' rows")?;
        let ox = self.htod(&f64s(&lb.ox), "blocks' widths")?;
        let oy = self.htod(&f64s(&lb.oy), "blocks' heights")?;
        let mut out = self.zeros_f64(5 * n, "the blocks' partials")?;
        const NAME: &str = "stats_blocks_f64";
        let k = self.kernel(&STATS, NAME)?;
        let (cells, nx64, span64) = (lb.z.len() as f64, lb.nx as i64, CHUNK as i64);
        let mut args = self.stream().launch_builder(&k);
        args.arg(sum).arg(&cells).arg(&nx64).arg(absent).arg(&aoff);
        args.arg(&chunk_block).arg(&chunk_first).arg(&geo);
        args.arg(&cols).arg(&ox).arg(&rows).arg(&oy);
        args.arg(&span64).arg(&mut out);
        // SAFETY: arguments in the kernel's order and types; every index of
        // the tables checked inside the plane (`LayerBlocks::fits`), sum a
        // plane, absent a plane at aoff when aoff ≥ 0; out 5 per chunk.
        unsafe { self.run(NAME, &mut args, chunk_config(n, 1)?)? };
        let flat = self.to_host(&out, "the blocks' partials")?;
        Ok((flat.chunks_exact(5))
            .map(|v| [v[0], v[1], v[2], v[3], v[4]])
            .collect())
    }
}
