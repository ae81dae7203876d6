//! The statistics of a temperature field folded piece by piece:
//! per layer the min, mean and hottest cell, the heat leaving through the
//! top and bottom faces (the energy balance), the probe readings and, for
//! the layers whose maps an output needs, the layer map (mean over the
//! layer's z cells); the whole field only when asked for (`--npy`, `--vtk`,
//! `--save-state`). A GPU hands the solution down in pieces
//! (`Backend::download_pieces`), so a billion-cell field is never held
//! whole on the host for statistics alone.
//!
//! Each z plane is cut into chunks of [`CHUNK`] cells at fixed positions and
//! the chunks are folded in parallel; a chunk's running sums carry over a
//! piece boundary and the chunks are added in order, so the result depends
//! neither on how the field was cut into pieces nor on the thread count: the
//! CPU (one piece) and a GPU (many) give the same bits. Min, max and the
//! hottest cell (the first of equals) are exact; sums differ from a
//! sequential loop by rounding only.

use super::probes::ProbeCell;
use super::summary::EnergyBalance;
use crate::assemble::System;
pub use crate::backend::reduce::{chunked_sum, CHUNK};
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;
use rayon::prelude::*;

/// A piece of the field starting at some cell.
#[derive(Clone, Copy)]
pub enum Piece<'a> {
    /// The solver's x: θ = x + c, T = θ + ambient (as `Offset::restore`
    /// and the kelvin conversion round them).
    Shifted(&'a [f64]),
    /// θ and T given (same length).
    Given { theta: &'a [f64], t: &'a [f64] },
}

impl Piece<'_> {
    fn len(&self) -> usize {
        match self {
            Piece::Shifted(x) => x.len(),
            Piece::Given { t, .. } => t.len(),
        }
    }
}

/// One chunk's (or one layer's) running statistics.
#[derive(Clone, Copy, Debug)]
struct Acc {
    /// Over present cells (absent cells, no material, are left out).
    min: f64,
    /// Σ T (plain) or Σ area·T (weighted) over present cells, and Σ 1 or Σ area.
    sum: f64,
    weight: f64,
    /// Over every cell; `imax` the first cell (lowest index) at `max`.
    max: f64,
    imax: usize,
    /// Σ g·θ over the top and the bottom plane.
    top: f64,
    bottom: f64,
}

impl Acc {
    const EMPTY: Acc = Acc {
        min: f64::INFINITY,
        sum: 0.0,
        weight: 0.0,
        max: f64::NEG_INFINITY,
        imax: 0,
        top: 0.0,
        bottom: 0.0,
    };

    /// Adds `o`, which covers cells after this one's.
    fn merge(&mut self, o: &Acc) {
        self.min = self.min.min(o.min);
        self.sum += o.sum;
        self.weight += o.weight;
        if o.max > self.max {
            (self.max, self.imax) = (o.max, o.imax);
        }
        self.top += o.top;
        self.bottom += o.bottom;
    }
}

/// A layer's statistics, K.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LayerStats {
    pub t_min_k: f64,
    pub t_avg_k: f64,
    pub t_max_k: f64,
    /// Cell index of the hottest cell.
    pub hottest: usize,
}

/// What a fold yields.
#[derive(Debug)]
pub struct FieldSummary {
    pub layers: Vec<LayerStats>,
    /// Σ g_top·θ and Σ g_bottom·θ with the power in: the energy balance.
    pub energy: EnergyBalance,
    /// Each probe's reading, K (as `probes::read`).
    pub probes: Vec<f64>,
    /// Per layer its map (K, index `x + nx*y`) where one was asked for.
    pub maps: Vec<Option<Vec<f64>>>,
    /// T of every cell, K, where asked for.
    pub whole: Option<Vec<f64>>,
    /// Per layer the statistics of its blocks where they were reduced on
    /// the device (`thermal::block_stats_device`; empty from a fold: the
    /// outputs compute them from the maps).
    pub blocks: Vec<Option<Vec<super::block_stats::BlockStats>>>,
}

/// The fold; see the module doc.
pub struct FieldStats<'a> {
    grid: &'a Grid,
    coupling: Coupling<'a>,
    c: f64,
    ambient: f64,
    /// Per layer: the absent cells of its plane (empty: none), whether its
    /// mean is weighted by cell area.
    absent: Vec<Vec<bool>>,
    weighted: Vec<bool>,
    probes: Vec<ProbeCell>,
    probe_sums: Vec<f64>,
    layers: Vec<Acc>,
    /// The current plane's chunks.
    chunks: Vec<Acc>,
    maps: Vec<Option<Vec<f64>>>,
    whole: Option<Vec<f64>>,
    /// The next cell expected.
    next: usize,
}

impl<'a> FieldStats<'a> {
    /// A fold over the field of `grid` (`power`: the layers' rasterized
    /// power, for their absent cells); `c` and `ambient` turn a
    /// [`Piece::Shifted`] into θ and T; `maps[l]`: keep layer l's map;
    /// `whole`: keep T of every cell.
    pub fn new(
        stack: &Stack,
        grid: &'a Grid,
        power: &[LayerPower],
        coupling: Coupling<'a>,
        c: f64,
        maps: &[bool],
        whole: bool,
    ) -> FieldStats<'a> {
        let absent: Vec<Vec<bool>> = (stack.layers.iter().enumerate())
            .map(|(l, layer)| {
                (power.get(l))
                    .map(|p| crate::assemble::absent_plane(grid, p, layer.material))
                    .unwrap_or_default()
            })
            .collect();
        let uniform = grid.is_uniform();
        let plane = grid.plane();
        FieldStats {
            grid,
            coupling,
            c,
            ambient: stack.ambient_k,
            weighted: absent.iter().map(|a| !(a.is_empty() && uniform)).collect(),
            absent,
            probes: super::probes::probe_cells(stack, grid),
            probe_sums: vec![0.0; stack.probes.len()],
            layers: vec![Acc::EMPTY; stack.layers.len()],
            chunks: vec![Acc::EMPTY; plane.div_ceil(CHUNK)],
            maps: (0..stack.layers.len())
                .map(|l| {
                    maps.get(l)
                        .copied()
                        .unwrap_or(false)
                        .then(|| vec![0.0; plane])
                })
                .collect(),
            whole: whole.then(|| vec![0.0; grid.len()]),
            next: 0,
        }
    }

    /// Folds `piece`, which starts at cell `first` (pieces come in order,
    /// without gaps).
    pub fn fold(&mut self, first: usize, piece: Piece) -> Result<(), BackendError> {
        let (plane, n) = (self.grid.plane(), self.grid.len());
        if first != self.next || first + piece.len() > n {
            return Err(BackendError::Length(first + piece.len(), n));
        }
        let end = first + piece.len();
        let mut i = first;
        while i < end {
            let z = i / plane;
            let j1 = ((z + 1) * plane).min(end) - z * plane;
            self.segment(z, i - z * plane, j1, first, piece);
            i = z * plane + j1;
            if j1 == plane {
                self.end_plane(z);
            }
        }
        self.next = end;
        Ok(())
    }

    /// Folds cells j0..j1 of plane z (`piece` starts at cell `first`).
    fn segment(&mut self, z: usize, j0: usize, j1: usize, first: usize, piece: Piece) {
        let grid = self.grid;
        let (plane, nz) = (grid.plane(), grid.nz);
        let l = grid.layer_of_z[z];
        let (c, ambient) = (self.c, self.ambient);
        let absent = &self.absent[l];
        let weighted = self.weighted[l];
        let g_top = (z + 1 == nz).then_some(self.coupling.g_top);
        let g_bottom = (z == 0).then_some(self.coupling.g_bottom);
        let (k0, k1) = (j0 / CHUNK, (j1 - 1) / CHUNK + 1);
        let base = z * plane;
        // One task per chunk: its accumulator and its part of the map and
        // of the whole field (disjoint slices).
        let span = |k: usize| k * CHUNK..((k + 1) * CHUNK).min(plane);
        let maps = self.maps[l]
            .as_deref_mut()
            .map(|m| &mut m[k0 * CHUNK..span(k1 - 1).end]);
        let whole =
            (self.whole.as_deref_mut()).map(|w| &mut w[base + k0 * CHUNK..base + span(k1 - 1).end]);
        let mut map_parts = maps.map(|m| m.chunks_mut(CHUNK));
        let mut whole_parts = whole.map(|w| w.chunks_mut(CHUNK));
        let tasks: Vec<_> = (k0..k1)
            .zip(self.chunks[k0..k1].iter_mut())
            .map(|(k, acc)| {
                let m = map_parts.as_mut().and_then(|p| p.next());
                let w = whole_parts.as_mut().and_then(|p| p.next());
                (k, acc, m, w)
            })
            .collect();
        tasks
            .into_par_iter()
            .for_each(|(k, acc, mut map, mut whole)| {
                let s = span(k);
                for j in s.start.max(j0)..s.end.min(j1) {
                    let at = base + j - first;
                    let (theta, t) = match piece {
                        Piece::Shifted(x) => {
                            let theta = x[at] + c;
                            (theta, theta + ambient)
                        }
                        Piece::Given { theta, t } => (theta[at], t[at]),
                    };
                    if let Some(m) = map.as_deref_mut() {
                        m[j - s.start] += t;
                    }
                    if let Some(w) = whole.as_deref_mut() {
                        w[j - s.start] = t;
                    }
                    if t > acc.max {
                        (acc.max, acc.imax) = (t, base + j);
                    }
                    if absent.get(j) != Some(&true) {
                        acc.min = acc.min.min(t);
                        let a = if weighted { grid.cell_area(j) } else { 1.0 };
                        acc.sum += a * t;
                        acc.weight += a;
                    }
                    if let Some(g) = g_top {
                        acc.top += g[j] * theta;
                    }
                    if let Some(g) = g_bottom {
                        acc.bottom += g[j] * theta;
                    }
                }
            });
        for (p, cell) in self.probes.iter().enumerate() {
            if cell.z.contains(&z) && (j0..j1).contains(&cell.plane_index) {
                let at = base + cell.plane_index - first;
                let t = match piece {
                    Piece::Shifted(x) => (x[at] + c) + ambient,
                    Piece::Given { t, .. } => t[at],
                };
                self.probe_sums[p] += t;
            }
        }
    }

    /// Adds the chunks of finished plane z to its layer, in order.
    fn end_plane(&mut self, z: usize) {
        let l = self.grid.layer_of_z[z];
        for acc in &mut self.chunks {
            self.layers[l].merge(acc);
            *acc = Acc::EMPTY;
        }
    }

    /// The statistics, once every cell has been folded.
    pub fn finish(mut self) -> Result<FieldSummary, BackendError> {
        let n = self.grid.len();
        if self.next != n {
            return Err(BackendError::Length(self.next, n));
        }
        let grid = self.grid;
        let (mut top, mut bottom) = (0.0, 0.0);
        let layers = (self.layers.iter())
            .map(|a| {
                top += a.top;
                bottom += a.bottom;
                LayerStats {
                    t_min_k: a.min,
                    t_avg_k: a.sum / a.weight,
                    t_max_k: a.max,
                    hottest: a.imax,
                }
            })
            .collect();
        for (l, m) in self.maps.iter_mut().enumerate() {
            if let Some(m) = m {
                let cells = grid.layer_z[l].len() as f64;
                m.par_iter_mut().for_each(|v| *v /= cells);
            }
        }
        let probes = (self.probes.iter().zip(&self.probe_sums))
            .map(|(c, s)| s / c.z.len() as f64)
            .collect();
        let power_in_w = self.coupling.power_in_w;
        let out = top + bottom;
        Ok(FieldSummary {
            layers,
            energy: EnergyBalance {
                power_in_w,
                heat_out_top_w: top,
                heat_out_bottom_w: bottom,
                heat_out_coolant_w: None,
                relative_error: if power_in_w > 0.0 {
                    (out - power_in_w).abs() / power_in_w
                } else {
                    0.0
                },
            },
            probes,
            maps: self.maps,
            whole: self.whole,
            blocks: Vec::new(),
        })
    }
}

#[path = "field_stats_device.rs"]
pub mod device;

/// What the energy balance reads of a system.
#[derive(Clone, Copy)]
pub struct Coupling<'a> {
    /// Σ rhs, W.
    pub power_in_w: f64,
    pub g_top: &'a [f64],
    pub g_bottom: &'a [f64],
}

impl<'a> From<&'a System> for Coupling<'a> {
    fn from(sys: &'a System) -> Coupling<'a> {
        Coupling {
            power_in_w: sys.rhs.iter().sum(),
            g_top: &sys.g_top,
            g_bottom: &sys.g_bottom,
        }
    }
}

#[cfg(test)]
#[path = "field_stats_tests.rs"]
mod tests;
