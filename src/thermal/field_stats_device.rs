//! The device's side of [`FieldStats`]: what a GPU needs to reduce
//! the statistics of the solution where it lives ([`StatsRequest`]), and the
//! fold of what it hands back ([`StatsPartials`]), so that nothing
//! field-sized comes down when no output writes the field. The device cuts
//! each z plane into the host fold's chunks of [`CHUNK`] cells and returns
//! one partial per (plane, chunk); they are merged here in the host fold's
//! order. Min, max and the hottest cell are exact; sums differ from the host
//! fold's by rounding only (a tree inside a chunk instead of a loop). Probe
//! cells and layer-map sums (added in z order, as the host's) come down as
//! values, so probes and maps equal the host fold's bit for bit. A caller
//! may add the layers whose blocks' statistics the device reduces from the
//! maps it builds ([`StatsRequest::blocks`], `thermal::block_stats_device`):
//! those maps stay on the device unless also requested.

use super::{Acc, FieldStats, CHUNK};
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::thermal::block_stats_device::{host_block_partials, BlockPartial, LayerBlocks};
use crate::thermal::probes::ProbeCell;
use rayon::prelude::*;
use std::borrow::Cow;
use std::ops::Range;

/// What a device reduces; built by [`FieldStats::request`].
#[derive(Debug)]
pub struct StatsRequest<'a> {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// Cells per chunk of a plane ([`CHUNK`]).
    pub span: usize,
    /// θ = x + c, T = θ + ambient.
    pub c: f64,
    pub ambient: f64,
    /// Layer of each z cell.
    pub layer_of_z: &'a [usize],
    /// Per layer its absent cells (empty: none).
    pub absent: &'a [Vec<bool>],
    /// Per layer: the mean is weighted by the cell area `dx[x]·dy[y]`.
    pub weighted: &'a [bool],
    pub dx: &'a [f64],
    pub dy: &'a [f64],
    /// The cells the probes read, every probe's z cells in turn
    /// ([`probe_cell_indices`]).
    pub probe_cells: Cow<'a, [usize]>,
    /// The layer maps to build: (layer, its z cells).
    pub maps: Vec<(usize, Range<usize>)>,
    /// The layers whose blocks' statistics to reduce from their maps
    /// (`thermal::block_stats_device`; none unless the caller adds them).
    pub blocks: Cow<'a, [LayerBlocks]>,
}

impl StatsRequest<'_> {
    /// Chunks per plane.
    pub fn chunks(&self) -> usize {
        (self.nx * self.ny).div_ceil(self.span)
    }
}

/// The field indices the probes read: every probe's z cells in turn.
pub fn probe_cell_indices(grid: &Grid, probes: &[ProbeCell]) -> Vec<usize> {
    let plane = grid.plane();
    (probes.iter())
        .flat_map(|p| p.z.clone().map(move |z| z * plane + p.plane_index))
        .collect()
}

/// The tables of a request that counts every cell (no absent cells,
/// unweighted layer means) with its probes and blocks: what a session's
/// reads and a transient's records ask of each new field. Built once and
/// lent to every request, so a step's reduction copies no table.
pub struct WholeFieldTables {
    absent: Vec<Vec<bool>>,
    weighted: Vec<bool>,
    pub probe_cells: Vec<usize>,
    pub blocks: Vec<LayerBlocks>,
}

impl WholeFieldTables {
    pub fn new(grid: &Grid, probes: &[ProbeCell], blocks: Vec<LayerBlocks>) -> Self {
        let layers = grid.layer_z.len();
        WholeFieldTables {
            absent: vec![Vec::new(); layers],
            weighted: vec![false; layers],
            probe_cells: probe_cell_indices(grid, probes),
            blocks,
        }
    }

    /// The request for θ = x + `c` (T = θ + `ambient`) on `grid`.
    pub fn request<'a>(&'a self, grid: &'a Grid, c: f64, ambient: f64) -> StatsRequest<'a> {
        StatsRequest {
            nx: grid.nx,
            ny: grid.ny,
            nz: grid.nz,
            span: CHUNK,
            c,
            ambient,
            layer_of_z: &grid.layer_of_z,
            absent: &self.absent,
            weighted: &self.weighted,
            dx: &grid.dx,
            dy: &grid.dy,
            probe_cells: Cow::Borrowed(&self.probe_cells),
            maps: Vec::new(),
            blocks: Cow::Borrowed(&self.blocks),
        }
    }
}

/// What a device hands back for a [`StatsRequest`].
#[derive(Debug, Default)]
pub struct StatsPartials {
    /// Per z plane, per chunk: min, Σ w·T, Σ w, max, Σ g_top·θ, Σ g_bottom·θ
    /// and the hottest cell's index (exact in an f64).
    pub chunks: Vec<[f64; 7]>,
    /// x at [`StatsRequest::probe_cells`].
    pub probe_x: Vec<f64>,
    /// Per requested map, Σ over its z cells of T (not yet divided).
    pub maps: Vec<Vec<f64>>,
    /// Per [`StatsRequest::blocks`] entry, its chunks' partials.
    pub blocks: Vec<Vec<BlockPartial>>,
}

impl<'a> FieldStats<'a> {
    /// What a device needs to reduce this fold's statistics (the fold must
    /// not keep the whole field: that comes down anyway).
    pub fn request(&self) -> StatsRequest<'_> {
        let grid = self.grid;
        StatsRequest {
            nx: grid.nx,
            ny: grid.ny,
            nz: grid.nz,
            span: CHUNK,
            c: self.c,
            ambient: self.ambient,
            layer_of_z: &grid.layer_of_z,
            absent: &self.absent,
            weighted: &self.weighted,
            dx: &grid.dx,
            dy: &grid.dy,
            probe_cells: probe_cell_indices(grid, &self.probes).into(),
            maps: (self.maps.iter().enumerate())
                .filter(|(_, m)| m.is_some())
                .map(|(l, _)| (l, grid.layer_z[l].clone()))
                .collect(),
            blocks: Cow::Borrowed(&[]),
        }
    }

    /// Folds a device's answer to [`FieldStats::request`]: the whole field,
    /// as if every piece had come down.
    pub fn fold_partials(&mut self, p: StatsPartials) -> Result<(), BackendError> {
        let grid = self.grid;
        let (plane, nz) = (grid.plane(), grid.nz);
        let chunks = plane.div_ceil(CHUNK);
        let wanted_maps = self.maps.iter().filter(|m| m.is_some()).count();
        let wanted_probes: usize = self.probes.iter().map(|p| p.z.len()).sum();
        if self.next != 0 || self.whole.is_some() {
            return Err(BackendError::Length(self.next, 0));
        }
        for (got, want) in [
            (p.chunks.len(), nz * chunks),
            (p.maps.len(), wanted_maps),
            (p.probe_x.len(), wanted_probes),
        ] {
            if got != want {
                return Err(BackendError::Length(got, want));
            }
        }
        for (z, part) in p.chunks.chunks(chunks).enumerate() {
            let l = grid.layer_of_z[z];
            for v in part {
                let acc = Acc {
                    min: v[0],
                    sum: v[1],
                    weight: v[2],
                    max: v[3],
                    imax: v[6] as usize,
                    top: v[4],
                    bottom: v[5],
                };
                self.layers[l].merge(&acc);
            }
        }
        let (c, ambient) = (self.c, self.ambient);
        let mut xs = p.probe_x.iter();
        for (s, cell) in self.probe_sums.iter_mut().zip(&self.probes) {
            for _ in cell.z.clone() {
                if let Some(&x) = xs.next() {
                    *s += (x + c) + ambient;
                }
            }
        }
        let mut sums = p.maps.into_iter();
        for m in self.maps.iter_mut().flatten() {
            match sums.next() {
                Some(s) if s.len() == plane => *m = s,
                Some(s) => return Err(BackendError::Length(s.len(), plane)),
                None => return Err(BackendError::Length(0, plane)),
            }
        }
        self.next = grid.len();
        Ok(())
    }
}

/// The partials of `req` computed on the host, chunk by chunk with the host
/// fold's sequential loop (the chunks in parallel): the reference a device's answer is tested
/// against (tests/gpu_pipeline.rs), and equal to the host fold bit for bit.
pub fn host_partials(
    req: &StatsRequest,
    x: &[f64],
    g_top: &[f64],
    g_bottom: &[f64],
) -> StatsPartials {
    let plane = req.nx * req.ny;
    let (c, ambient) = (req.c, req.ambient);
    // Each chunk in its sequential loop, the chunks in parallel: the same
    // bits whatever the thread count.
    let chunks = (0..req.nz * req.chunks())
        .into_par_iter()
        .map(|zk| {
            let (z, k) = (zk / req.chunks(), zk % req.chunks());
            let l = req.layer_of_z[z];
            let absent = &req.absent[l];
            let mut a = Acc::EMPTY;
            a.imax = z * plane + k * req.span;
            for j in k * req.span..((k + 1) * req.span).min(plane) {
                let theta = x[z * plane + j] + c;
                let t = theta + ambient;
                if t > a.max {
                    (a.max, a.imax) = (t, z * plane + j);
                }
                if absent.get(j) != Some(&true) {
                    a.min = a.min.min(t);
                    let w = match req.weighted[l] {
                        true => req.dx[j % req.nx] * req.dy[j / req.nx],
                        false => 1.0,
                    };
                    a.sum += w * t;
                    a.weight += w;
                }
                if z + 1 == req.nz {
                    a.top += g_top[j] * theta;
                }
                if z == 0 {
                    a.bottom += g_bottom[j] * theta;
                }
            }
            [
                a.min,
                a.sum,
                a.weight,
                a.max,
                a.top,
                a.bottom,
                a.imax as f64,
            ]
        })
        .collect();
    let layer_sum = |zr: &Range<usize>| {
        let mut m = vec![0.0; plane];
        for z in zr.clone() {
            for (j, v) in m.iter_mut().enumerate() {
                *v += (x[z * plane + j] + c) + ambient;
            }
        }
        m
    };
    StatsPartials {
        chunks,
        probe_x: req.probe_cells.iter().map(|&i| x[i]).collect(),
        maps: req.maps.iter().map(|(_, zr)| layer_sum(zr)).collect(),
        blocks: (req.blocks.iter())
            .map(|lb| host_block_partials(lb, &layer_sum(&lb.z), &req.absent[lb.layer]))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FieldStats, Piece};
    use super::*;
    use crate::grid::Grid;
    use crate::stack::Stack;
    use crate::thermal::steady::{rasterize_layers, Coupling};
    use std::path::Path;

    /// Partials folded equal the host fold of the whole field bit for bit,
    /// on a stack with absent cells, a non-uniform grid (weighted means),
    /// blocks and probes, and on planes of several chunks (a ragged last).
    #[test]
    fn partials_fold_as_the_host_fold() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let hbm = Stack::load(&root.join("configs/hbm_2p5d.toml")).unwrap();
        let mol = (Stack::load(&root.join("configs/mol_f2f.toml")).unwrap())
            .with_grid(300, 200)
            .unwrap();
        for (k, stack) in [hbm, mol].into_iter().enumerate() {
            let grid = Grid::from_stack(&stack);
            let power = rasterize_layers(&stack, &grid).unwrap();
            let mut s = 7u64;
            let mut rnd = |lo: f64, hi: f64| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
            };
            let mut x: Vec<f64> = (0..grid.len()).map(|_| rnd(-2.0, 60.0)).collect();
            // Ties of the maximum in one layer: the first cell wins.
            let plane = grid.plane();
            x[3] = 99.0;
            x[plane - 2] = 99.0;
            let g_top: Vec<f64> = (0..plane).map(|_| rnd(0.0, 1e-3)).collect();
            let g_bottom: Vec<f64> = (0..plane).map(|_| rnd(0.0, 1e-5)).collect();
            let coupling = Coupling {
                power_in_w: 3.0,
                g_top: &g_top,
                g_bottom: &g_bottom,
            };
            let maps: Vec<bool> = (0..stack.layers.len()).map(|l| l % 2 == 1).collect();
            let c = 0.25;
            let mut host = FieldStats::new(&stack, &grid, &power, coupling, c, &maps, false);
            host.fold(0, Piece::Shifted(&x)).unwrap();
            let host = host.finish().unwrap();
            let mut dev = FieldStats::new(&stack, &grid, &power, coupling, c, &maps, false);
            if k == 0 {
                // hbm_2p5d has what the device must get right.
                let req = dev.request();
                assert!(req.absent.iter().any(|a| !a.is_empty()), "absent cells");
                assert!(req.weighted.iter().any(|&w| w), "weighted means");
                assert!(!req.probe_cells.is_empty(), "probes");
            }
            let p = host_partials(&dev.request(), &x, &g_top, &g_bottom);
            dev.fold_partials(p).unwrap();
            let dev = dev.finish().unwrap();
            assert_eq!(dev.layers, host.layers);
            assert_eq!(dev.layers[0].hottest, 3, "the first of equal maxima");
            assert_eq!(dev.energy.heat_out_top_w, host.energy.heat_out_top_w);
            assert_eq!(dev.energy.heat_out_bottom_w, host.energy.heat_out_bottom_w);
            assert_eq!(dev.probes, host.probes);
            assert_eq!(dev.maps, host.maps);
        }
    }

    #[test]
    fn a_partial_answer_of_the_wrong_shape_is_an_error() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let stack = Stack::load(&root.join("configs/hbm_2p5d.toml")).unwrap();
        let grid = Grid::from_stack(&stack);
        let power = rasterize_layers(&stack, &grid).unwrap();
        let g = vec![0.0; grid.plane()];
        let coupling = Coupling {
            power_in_w: 1.0,
            g_top: &g,
            g_bottom: &g,
        };
        let mut f = FieldStats::new(&stack, &grid, &power, coupling, 0.0, &[], false);
        assert!(f.fold_partials(StatsPartials::default()).is_err());
    }
}
