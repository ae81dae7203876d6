//! What is recorded after every step: per-layer max and mean, per-block
//! min, area-weighted mean and max, the `[[probes]]` readings, and the
//! step's energy balance. Computed on the host from the downloaded
//! field (see `mod.rs` for why the field is downloaded).

use crate::grid::Grid;
use crate::power::LayerPower;
use rayon::prelude::*;
use serde::Serialize;
use std::ops::Range;

/// Cells per reduction chunk, fixed so that sums do not depend on the
/// thread count.
const CHUNK: usize = 1 << 14;

/// The cells of one block (plane indices, as contiguous runs) and its layer.
pub struct BlockProbe {
    pub layer: usize,
    /// `<layer>.<block>`, as in `blocks.steady`.
    pub name: String,
    /// Runs of consecutive plane indices (one per grid row the block
    /// crosses): a contiguous scan instead of a gather per cell.
    runs: Vec<Range<usize>>,
    /// Overlap area of each cell of `runs`, in scan order, m².
    weights: Vec<f64>,
}

/// Every named block of every layer, in layer order.
pub fn block_probes(layer_names: &[String], power: &[LayerPower], grid: &Grid) -> Vec<BlockProbe> {
    power
        .iter()
        .enumerate()
        .flat_map(|(l, lp)| {
            lp.blocks.iter().map(move |b| {
                let cells = b.coverage(grid);
                BlockProbe {
                    layer: l,
                    name: format!("{}.{}", layer_names[l], b.name),
                    runs: runs(cells.iter().map(|&(i, _)| i)),
                    weights: cells.iter().map(|&(_, a)| a).collect(),
                }
            })
        })
        .collect()
}

/// Ascending indices as runs of consecutive ones.
fn runs(cells: impl IntoIterator<Item = usize>) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for i in cells {
        match out.last_mut() {
            Some(r) if r.end == i => r.end += 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}
/// Energy of one step, backward Euler: Pⁿ⁺¹·Δt − Qⁿ⁺¹·Δt = Σ C (θⁿ⁺¹ − θⁿ).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct StepEnergy {
    /// Power in, W.
    pub power_w: f64,
    /// Heat out through the convective faces at θⁿ⁺¹, W.
    pub heat_out_w: f64,
    /// Change of stored heat over the step, J.
    pub stored_j: f64,
    /// (P − Q)·Δt − ΔE, J: zero up to the solver tolerance.
    pub imbalance_j: f64,
}

/// One row of the time series.
#[derive(Clone, Debug)]
pub struct StepRecord {
    pub step: usize,
    pub time_s: f64,
    pub iterations: usize,
    /// Trace row in force (None for constant power).
    pub trace_row: Option<usize>,
    pub energy: StepEnergy,
    /// Per layer, K.
    pub layer_max_k: Vec<f64>,
    pub layer_avg_k: Vec<f64>,
    /// Per block (order of `block_probes`), K.
    pub blocks: Vec<BlockTemps>,
    /// Per `[[probes]]` entry, K.
    pub probe_k: Vec<f64>,
    /// Total leakage power of the step (included in `energy.power_w`), W;
    /// `None` when the stack does not leak.
    pub leakage_w: Option<f64>,
    /// Solves of the step (outer iterations, `--nonlinear-iterations`; 1
    /// when semi-implicit); `None` for a stack with only constants and for
    /// the initial state.
    pub outer_iterations: Option<usize>,
    /// Per cavity layer each coolant line's outlet, (K, ṁ·c W/K)
    /// (`assemble::cavity::Coolant::outlets`); empty without cavities.
    pub coolant_outlets: std::collections::BTreeMap<usize, Vec<(f64, f64)>>,
}

/// A block's temperatures over all z cells of its layer, K: min and max
/// over its cells, the mean weighted by each cell's overlap area (so the
/// layer-mean map's area-weighted average, as `blocks.csv` gives it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlockTemps {
    pub min_k: f64,
    pub avg_k: f64,
    pub max_k: f64,
}

/// Statistics of one field from [`absorb`].
pub struct FieldStats {
    /// Per layer, K.
    pub layer_max_k: Vec<f64>,
    pub layer_avg_k: Vec<f64>,
    /// Σ C (θ − θ_old), J.
    pub stored_j: f64,
}

/// Max, sum of T and Σ C(θ − θ_old) over one chunk of cells.
#[derive(Clone, Copy)]
struct Acc {
    max: f64,
    sum: f64,
    stored: f64,
}

impl Acc {
    const EMPTY: Acc = Acc {
        max: f64::NEG_INFINITY,
        sum: 0.0,
        stored: 0.0,
    };
    fn merge(self, o: Acc) -> Acc {
        Acc {
            max: self.max.max(o.max),
            sum: self.sum + o.sum,
            stored: self.stored + o.stored,
        }
    }
}

/// The host side of a step in one pass over memory: θ = θ' + `shift` in
/// place (θ' as downloaded), T = θ + `ambient_k` into `t_k`, each layer's
/// max and mean of T, and the heat stored since `theta_old` (0 without
/// `capacity`: a device-assembled run takes it on the device). Sums run over
/// fixed chunks of each plane, then the chunks and planes in order, so the
/// result does not depend on the thread count.
pub fn absorb(
    grid: &Grid,
    capacity: Option<&[f64]>,
    shift: f64,
    ambient_k: f64,
    theta: &mut [f64],
    theta_old: &[f64],
    t_k: &mut [f64],
) -> FieldStats {
    let plane = grid.plane();
    // Without capacities the stored heat is taken against zeros (ignored).
    let zeros = vec![0.0; if capacity.is_some() { 0 } else { plane }];
    let with_cap = capacity.is_some();
    let per_plane: Vec<Acc> = theta
        .par_chunks_mut(plane)
        .zip(t_k.par_chunks_mut(plane))
        .enumerate()
        .map(|(z, (th, t))| {
            let old = &theta_old[z * plane..(z + 1) * plane];
            let cap = capacity.map_or(&zeros[..], |c| &c[z * plane..(z + 1) * plane]);
            let chunks: Vec<Acc> = th
                .par_chunks_mut(CHUNK)
                .zip(t.par_chunks_mut(CHUNK))
                .zip(old.par_chunks(CHUNK).zip(cap.par_chunks(CHUNK)))
                .map(|((th, t), (old, cap))| {
                    let mut a = Acc::EMPTY;
                    for (((th, t), old), cap) in th.iter_mut().zip(t).zip(old).zip(cap) {
                        *th += shift;
                        *t = *th + ambient_k;
                        a.max = a.max.max(*t);
                        a.sum += *t;
                        if with_cap {
                            a.stored += cap * (*th - old);
                        }
                    }
                    a
                })
                .collect();
            chunks.into_iter().fold(Acc::EMPTY, Acc::merge)
        })
        .collect();
    let mut stored_j = 0.0;
    let (layer_max_k, layer_avg_k) = grid
        .layer_z
        .iter()
        .map(|zr| {
            let a = per_plane[zr.clone()]
                .iter()
                .fold(Acc::EMPTY, |a, &b| a.merge(b));
            stored_j += a.stored;
            (a.max, a.sum / (zr.len() * plane) as f64)
        })
        .unzip();
    FieldStats {
        layer_max_k,
        layer_avg_k,
        stored_j,
    }
}

/// Min, weighted mean and max of `t` over each block's cells, over all z
/// cells of its layer. A block that overlaps no cell gets NaN.
pub fn block_stats(grid: &Grid, probes: &[BlockProbe], t: &[f64]) -> Vec<BlockTemps> {
    let plane = grid.plane();
    probes
        .par_iter()
        .map(|p| {
            let zr = grid.layer_z[p.layer].clone();
            let (mut min_k, mut max_k, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
            for z in zr.clone() {
                let t = &t[z * plane..(z + 1) * plane];
                let cells = p.runs.iter().flat_map(|r| &t[r.clone()]);
                for (&v, w) in cells.zip(&p.weights) {
                    min_k = min_k.min(v);
                    max_k = max_k.max(v);
                    sum += w * v;
                }
            }
            let area: f64 = p.weights.iter().sum::<f64>() * zr.len() as f64;
            if area > 0.0 {
                BlockTemps {
                    min_k,
                    avg_k: sum / area,
                    max_k,
                }
            } else {
                BlockTemps {
                    min_k: f64::NAN,
                    avg_k: f64::NAN,
                    max_k: f64::NAN,
                }
            }
        })
        .collect()
}

/// Σ of `v` over fixed chunks, then the chunk sums in order: the same bits
/// whatever the thread count.
pub fn ordered_sum(v: &[f64]) -> f64 {
    let chunk_sum = |c: &[f64]| -> f64 { c.iter().sum() };
    // Below this many chunks waking the thread pool costs more than the
    // adds (a session's power at 128² is called for every step).
    let parts: Vec<f64> = match v.len() <= 32 * CHUNK {
        true => v.chunks(CHUNK).map(chunk_sum).collect(),
        false => v.par_chunks(CHUNK).map(chunk_sum).collect(),
    };
    parts.into_iter().sum()
}

/// Energy balance of a step, backward Euler, from the power in (`power_w`,
/// Σ of the step's power), θⁿ⁺¹ (K above ambient) and the films (g_top,
/// g_bottom) for the heat out, and
/// the stored heat from [`absorb`].
pub fn step_energy(
    films: (&[f64], &[f64]),
    grid: &Grid,
    power_w: f64,
    theta_new: &[f64],
    stored_j: f64,
    dt: f64,
) -> StepEnergy {
    let plane = grid.plane();
    let top = &theta_new[(grid.nz - 1) * plane..];
    let (g_top, g_bottom) = films;
    let parts: Vec<f64> = g_top
        .par_chunks(CHUNK)
        .zip(g_bottom.par_chunks(CHUNK))
        .zip(
            top.par_chunks(CHUNK)
                .zip(theta_new[..plane].par_chunks(CHUNK)),
        )
        .map(|((gt, gb), (tt, tb))| {
            gt.iter()
                .zip(gb)
                .zip(tt.iter().zip(tb))
                .map(|((gt, gb), (tt, tb))| gt * tt + gb * tb)
                .sum::<f64>()
        })
        .collect();
    let heat_out_w: f64 = parts.into_iter().sum();
    StepEnergy {
        power_w,
        heat_out_w,
        stored_j,
        imbalance_j: (power_w - heat_out_w) * dt - stored_j,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_join_consecutive_indices() {
        assert_eq!(runs([3, 4, 5, 9, 10, 20]), vec![3..6, 9..11, 20..21]);
        assert!(runs([]).is_empty());
    }

    /// Runs scan the same cells as a gather over the block's cell list.
    #[test]
    fn block_stats_over_runs_equal_the_gather() {
        let (nx, ny, nz) = (13, 11, 4);
        let grid = Grid::uniform(
            nx,
            ny,
            nx as f64,
            ny as f64,
            vec![1.0; nz],
            vec![0, 1, 1, 1],
        );
        let plane = nx * ny;
        let t: Vec<f64> = (0..grid.len())
            .map(|i| ((i * 7919) % 1009) as f64)
            .collect();
        // A 4 × 3 rectangle at (2, 5) and a lone cell, in layer 1.
        let rect: Vec<usize> = (5..8)
            .flat_map(|y| (2..6).map(move |x| x + nx * y))
            .collect();
        let cell = vec![nx * ny - 1];
        let probes: Vec<BlockProbe> = [&rect, &cell]
            .iter()
            .map(|c| BlockProbe {
                layer: 1,
                name: String::new(),
                runs: runs(c.iter().copied()),
                weights: c.iter().map(|&j| 1.0 + (j % 3) as f64).collect(),
            })
            .collect();
        assert_eq!(probes[0].runs.len(), 3);
        let got = block_stats(&grid, &probes, &t);
        for (k, cells) in [&rect, &cell].into_iter().enumerate() {
            let t = &t;
            let vals: Vec<(usize, f64)> = (1..4)
                .flat_map(|z| cells.iter().map(move |&j| (j, t[z * plane + j])))
                .collect();
            let values = || &vals;
            let max = values()
                .iter()
                .map(|v| v.1)
                .fold(f64::NEG_INFINITY, f64::max);
            let min = values().iter().map(|v| v.1).fold(f64::INFINITY, f64::min);
            let w = |j: usize| 1.0 + (j % 3) as f64;
            let num: f64 = values().iter().map(|&(j, v)| w(j) * v).sum();
            let den: f64 = values().iter().map(|&(j, _)| w(j)).sum();
            assert!(max.is_finite() && min < max || cells.len() == 1);
            assert_eq!(got[k].max_k, max);
            assert_eq!(got[k].min_k, min);
            assert!((got[k].avg_k - num / den).abs() <= 1e-12 * max);
        }
    }

    /// The fused pass against the plain definitions, on a grid whose planes
    /// are not a multiple of the chunk.
    #[test]
    fn absorb_matches_plain_loops() {
        let (nx, ny, nz) = (97, 101, 3);
        let grid = Grid::uniform(nx, ny, nx as f64, ny as f64, vec![1.0; nz], vec![0, 0, 1]);
        let n = grid.len();
        let raw: Vec<f64> = (0..n).map(|i| ((i * 7919) % 1013) as f64 / 97.0).collect();
        let old: Vec<f64> = (0..n).map(|i| ((i * 104729) % 991) as f64 / 89.0).collect();
        let cap: Vec<f64> = (0..n).map(|i| 1.0 + (i % 13) as f64).collect();
        let (shift, amb) = (0.75, 300.0);
        let mut theta = raw.clone();
        let mut t = vec![0.0; n];
        let s = absorb(&grid, Some(&cap), shift, amb, &mut theta, &old, &mut t);
        let plane = nx * ny;
        for i in 0..n {
            assert_eq!(theta[i], raw[i] + shift);
            assert_eq!(t[i], theta[i] + amb);
        }
        for (l, zr) in grid.layer_z.iter().enumerate() {
            let cells = &t[zr.start * plane..zr.end * plane];
            let max = cells.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let mean = cells.iter().sum::<f64>() / cells.len() as f64;
            assert_eq!(s.layer_max_k[l], max);
            assert!((s.layer_avg_k[l] - mean).abs() <= 1e-12 * mean);
        }
        let stored: f64 = (0..n).map(|i| cap[i] * (theta[i] - old[i])).sum();
        assert!((s.stored_j - stored).abs() <= 1e-12 * stored.abs());
    }
}
