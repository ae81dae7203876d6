//! What is recorded after every step: per-layer max and mean, per-block max,
//! and the step's energy balance. Computed on the host from the downloaded
//! field (see `mod.rs` for why the field is downloaded).

use crate::assemble::System;
use crate::grid::Grid;
use crate::power::rasterize::coverage;
use crate::power::LayerPower;
use rayon::prelude::*;
use serde::Serialize;

/// The cells of one block (plane indices) and its layer.
pub struct BlockProbe {
    pub layer: usize,
    /// `<layer>.<block>`, as in `blocks.steady`.
    pub name: String,
    cells: Vec<usize>,
}

/// Every named block of every layer, in layer order.
pub fn block_probes(layer_names: &[String], power: &[LayerPower], grid: &Grid) -> Vec<BlockProbe> {
    power
        .iter()
        .enumerate()
        .flat_map(|(l, lp)| {
            lp.blocks.iter().map(move |b| BlockProbe {
                layer: l,
                name: format!("{}.{}", layer_names[l], b.name),
                cells: coverage(&b.rect, grid)
                    .into_iter()
                    .map(|(i, _)| i)
                    .collect(),
            })
        })
        .collect()
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
    /// Per block (order of [`block_probes`]), K.
    pub block_max_k: Vec<f64>,
}

/// Per-layer max and mean of `t` (K).
pub fn layer_stats(grid: &Grid, t: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let plane = grid.plane();
    grid.layer_z
        .iter()
        .map(|zr| {
            let cells = &t[zr.start * plane..zr.end * plane];
            let (max, sum) = cells
                .par_chunks(1 << 14)
                .map(|c| {
                    c.iter()
                        .fold((f64::NEG_INFINITY, 0.0), |(m, s), &v| (m.max(v), s + v))
                })
                .reduce(
                    || (f64::NEG_INFINITY, 0.0),
                    |a, b| (a.0.max(b.0), a.1 + b.1),
                );
            (max, sum / cells.len() as f64)
        })
        .unzip()
}

/// Max of `t` over each block's cells, over all z cells of its layer.
pub fn block_max(grid: &Grid, probes: &[BlockProbe], t: &[f64]) -> Vec<f64> {
    let plane = grid.plane();
    probes
        .par_iter()
        .map(|p| {
            let mut m = f64::NEG_INFINITY;
            for z in grid.layer_z[p.layer].clone() {
                for &j in &p.cells {
                    m = m.max(t[z * plane + j]);
                }
            }
            m
        })
        .collect()
}

/// Energy balance of a step from θⁿ, θⁿ⁺¹ (K above ambient) and the step's
/// power (`sys.rhs`).
pub fn step_energy(
    sys: &System,
    grid: &Grid,
    theta_old: &[f64],
    theta_new: &[f64],
    dt: f64,
) -> StepEnergy {
    let plane = grid.plane();
    let top = (grid.nz - 1) * plane;
    let power_w: f64 = sys.rhs.par_iter().sum();
    let heat_out_w: f64 = (0..plane)
        .into_par_iter()
        .map(|j| sys.g_top[j] * theta_new[top + j] + sys.g_bottom[j] * theta_new[j])
        .sum();
    let stored_j: f64 = sys
        .capacity
        .par_iter()
        .zip(theta_new.par_iter().zip(theta_old))
        .map(|(c, (a, b))| c * (a - b))
        .sum();
    StepEnergy {
        power_w,
        heat_out_w,
        stored_j,
        imbalance_j: (power_w - heat_out_w) * dt - stored_j,
    }
}
