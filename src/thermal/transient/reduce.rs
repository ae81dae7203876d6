//! A step's record reduced where the solve runs, so that a GPU step moves
//! kilobytes instead of the field: the layers' max and mean, the blocks'
//! min, mean and max, the `[[probes]]` cells and the heat out through the
//! films, through the backend's post-solve statistics
//! (`ThermalOps::field_partials`, the steady solve's device reduction).
//!
//! The request asks for the transient's own definitions: every cell counts
//! (no absent cells, unweighted layer means, as `probe::absorb` takes
//! them), and each block is reduced plane by plane (one `LayerBlocks` per z
//! cell of its layer) so that its min and max are over cells, as
//! `probe::block_stats` takes them, not over the layer-mean map. Maxima,
//! minima and probes equal the host fold's exactly; sums differ by rounding
//! only. A backend that does not reduce (the CPU) hands back `None`, and the
//! same partials are taken on the host from the downloaded field
//! (`field_stats::device::host_partials`), so the algorithm is written once.

use super::probe::BlockTemps;
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::thermal::block_stats_device::{layer_blocks, LayerBlocks};
use crate::thermal::device::ThermalBackend;
use crate::thermal::field_stats::device::{host_partials, StatsPartials, WholeFieldTables};
use crate::thermal::probes::ProbeCell;

use super::system::HostSys;
use super::Stepper;
use super::TransientError;

/// The statistics of one field that a record needs.
pub(super) struct Reduced {
    pub layer_max_k: Vec<f64>,
    pub layer_avg_k: Vec<f64>,
    pub blocks: Vec<BlockTemps>,
    pub probe_k: Vec<f64>,
    /// Σ g·θ over the films, W.
    pub heat_out_w: f64,
}

/// The request's tables, built once per run, and the films where the
/// solve runs.
pub(super) struct StepReduce<V> {
    /// Its blocks: one entry per (layer with blocks, z cell of it).
    tables: WholeFieldTables,
    /// Per entry of `blocks`, the index of its layer's first block in the
    /// records' block order (`probe::block_probes`: layer by layer).
    block_base: Vec<usize>,
    n_blocks: usize,
    g_top: V,
    g_bottom: V,
    /// θ of the last record's level, and scratch for the new one's: the
    /// stored heat Σ C (θⁿ⁺¹ − θⁿ) is taken from the difference, rounded
    /// as the host's, not as a difference of two totals (which loses
    /// digits once a step stores little of what the stack holds).
    theta_prev: V,
    theta_now: V,
    /// The films on the host and a field buffer, for a backend that
    /// hands back no partials.
    host_films: (Vec<f64>, Vec<f64>),
    host_x: Vec<f64>,
}

impl<V> StepReduce<V> {
    /// The tables for `grid`, the blocks of `power` (the schedule's base:
    /// the blocks do not move between trace rows) and the probes'
    /// `points`; the films of `sys`, uploaded once; θ of `stepper`'s
    /// level as the first stored heat's start.
    pub(super) fn new<B: ThermalBackend<Vector = V>>(
        be: &B,
        grid: &Grid,
        power: &[LayerPower],
        points: &[ProbeCell],
        sys: &HostSys<B::AsmKept, V>,
        stepper: &Stepper<B>,
    ) -> Result<Self, TransientError> {
        let films = sys.films();
        let layers = grid.layer_z.len();
        let mut first = Vec::with_capacity(layers);
        let mut n_blocks = 0;
        for p in power {
            first.push(n_blocks);
            n_blocks += p.blocks.len();
        }
        let mut blocks = Vec::new();
        let mut block_base = Vec::new();
        for lb in layer_blocks(grid, power) {
            for z in lb.z.clone() {
                block_base.push(first[lb.layer]);
                blocks.push(LayerBlocks {
                    z: z..z + 1,
                    ..lb.clone()
                });
            }
        }
        Ok(StepReduce {
            tables: WholeFieldTables::new(grid, points, blocks),
            block_base,
            n_blocks,
            g_top: be.upload(films.0)?,
            g_bottom: be.upload(films.1)?,
            theta_prev: {
                let mut v = be.zeros(grid.len())?;
                stepper.theta_into(&mut v)?;
                v
            },
            theta_now: be.zeros(grid.len())?,
            host_films: (films.0.to_vec(), films.1.to_vec()),
            host_x: Vec::new(),
        })
    }

    /// Σ C (θ − θ_prev) of the stepper's level since the last call, J,
    /// where the field lives.
    pub(super) fn stored_heat<B: ThermalBackend<Vector = V>>(
        &mut self,
        be: &B,
        stepper: &Stepper<B>,
    ) -> Result<f64, TransientError> {
        stepper.theta_into(&mut self.theta_now)?;
        // θ_prev ← θ − θ_prev, as the host rounds (θ' + c) − θ_old.
        be.nl_axpby(Some(&self.theta_now), 1.0, -1.0, &mut self.theta_prev, 0.0)?;
        let stored = stepper.stored_heat_of(&self.theta_prev)?;
        std::mem::swap(&mut self.theta_now, &mut self.theta_prev);
        Ok(stored)
    }

    /// The statistics of θ = `x` + `c` (T = θ + `ambient`), reduced where
    /// `x` lives.
    pub(super) fn reduce<B: ThermalBackend<Vector = V>>(
        &mut self,
        be: &B,
        grid: &Grid,
        points: &[ProbeCell],
        x: &V,
        (c, ambient): (f64, f64),
    ) -> Result<Reduced, TransientError> {
        let mut host_x = std::mem::take(&mut self.host_x);
        let req = self.tables.request(grid, c, ambient);
        let parts = match be.field_partials(x, &self.g_top, &self.g_bottom, &req)? {
            Some(p) => p,
            None => {
                let mut h = std::mem::take(&mut host_x);
                h.resize(grid.len(), 0.0);
                be.download_into(x, &mut h)?;
                let (gt, gb) = &self.host_films;
                let p = host_partials(&req, &h, gt, gb);
                host_x = h;
                p
            }
        };
        drop(req);
        self.host_x = host_x;
        Ok(self.fold(grid, points, parts, (c, ambient))?)
    }

    /// The record's statistics from the partials, merged in a fixed order.
    fn fold(
        &self,
        grid: &Grid,
        points: &[ProbeCell],
        p: StatsPartials,
        (c, ambient): (f64, f64),
    ) -> Result<Reduced, BackendError> {
        let chunks = grid.plane().div_ceil(crate::thermal::field_stats::CHUNK);
        if p.chunks.len() != grid.nz * chunks {
            return Err(BackendError::Length(p.chunks.len(), grid.nz * chunks));
        }
        let layers = grid.layer_z.len();
        let (mut max, mut sum, mut count) = (
            vec![f64::NEG_INFINITY; layers],
            vec![0.0; layers],
            vec![0.0; layers],
        );
        let mut heat_out_w = 0.0;
        for (z, part) in p.chunks.chunks(chunks).enumerate() {
            let l = grid.layer_of_z[z];
            for v in part {
                max[l] = f64::max(max[l], v[3]);
                sum[l] += v[1];
                count[l] += v[2];
                heat_out_w += v[4] + v[5];
            }
        }
        let layer_avg_k = sum.iter().zip(&count).map(|(s, n)| s / n).collect();

        let tables = &self.tables;
        if p.probe_x.len() != tables.probe_cells.len() {
            return Err(BackendError::Length(
                p.probe_x.len(),
                tables.probe_cells.len(),
            ));
        }
        let mut xs = p.probe_x.iter();
        let probe_k = (points.iter())
            .map(|pt| {
                let s: f64 = (pt.z.clone())
                    .filter_map(|_| xs.next().map(|&x| (x + c) + ambient))
                    .sum();
                s / pt.z.len() as f64
            })
            .collect();

        if p.blocks.len() != tables.blocks.len() {
            return Err(BackendError::Length(p.blocks.len(), tables.blocks.len()));
        }
        // Per block: min, max, Σ w·T, Σ w over its cells of every z cell.
        let mut acc = vec![[f64::INFINITY, f64::NEG_INFINITY, 0.0, 0.0]; self.n_blocks];
        for ((lb, base), parts) in tables.blocks.iter().zip(&self.block_base).zip(&p.blocks) {
            if parts.len() != lb.chunks.len() {
                return Err(BackendError::Length(parts.len(), lb.chunks.len()));
            }
            for (&(b, _), v) in lb.chunks.iter().zip(parts) {
                let k = lb.owner.get(b).map(|o| base + o);
                let Some(a) = k.and_then(|k| acc.get_mut(k)) else {
                    return Err(BackendError::Length(b, lb.owner.len()));
                };
                a[0] = a[0].min(v[0]);
                a[1] = a[1].max(v[1]);
                a[2] += v[2];
                a[3] += v[3];
            }
        }
        let blocks = (acc.iter())
            .map(|a| match a[3] > 0.0 {
                true => BlockTemps {
                    min_k: a[0],
                    avg_k: a[2] / a[3],
                    max_k: a[1],
                },
                false => BlockTemps {
                    min_k: f64::NAN,
                    avg_k: f64::NAN,
                    max_k: f64::NAN,
                },
            })
            .collect();
        Ok(Reduced {
            layer_max_k: max,
            layer_avg_k,
            blocks,
            probe_k,
            heat_out_w,
        })
    }
}
