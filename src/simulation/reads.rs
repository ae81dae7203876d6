//! A session's reads of a field that lives on the device (the stepper's
//! level), reduced there: a co-simulation loop reads its blocks after
//! every step, and bringing the field down for a few dozen numbers costs
//! more than the step on a GPU. One reduction
//! (`ThermalOps::field_partials`, the steady solve's and the transient
//! records' device statistics) serves the blocks, the probes and the hottest
//! cell until the field changes.
//!
//! The request takes the session's definitions, those of its host reads:
//! every cell counts (no absent cells), and a block is read over its
//! layer's map (the mean over the layer's z cells). Maxima, minima, the
//! hottest cell and the probes equal the host reads exactly; block means
//! differ by rounding only. A backend that does not reduce (the CPU)
//! hands back `None` and the session reads the downloaded field.

use crate::backend::BackendError;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::block_stats::TempStats;
use crate::thermal::block_stats_device::{block_stats, layer_blocks};
use crate::thermal::device::ThermalBackend;
use crate::thermal::field_stats::device::WholeFieldTables;
use crate::thermal::probes::ProbeCell;

/// What one reduction of the field gives the reads.
pub(super) struct FieldReads {
    /// The hottest cell (the first of equals, in index order) and its T, K.
    pub hottest: (usize, f64),
    /// Each probe's T, K, in the stack's order.
    pub probes: Vec<f64>,
    /// Per layer, its blocks' temperatures in its blocks' order (`None`
    /// where a block covers no cell); empty for a layer without blocks.
    pub blocks: Vec<Vec<Option<TempStats>>>,
}

/// The request's tables, built on the first read: the blocks do not move
/// when their powers change, nor the probes.
pub(super) struct DeviceReads<V> {
    tables: WholeFieldTables,
    /// Films of zeros: the reduction's heat out is not read here.
    films: V,
}

impl<V> DeviceReads<V> {
    pub(super) fn new<B: ThermalBackend<Vector = V>>(
        be: &B,
        grid: &Grid,
        power: &[LayerPower],
        probes: &[ProbeCell],
    ) -> Result<Self, BackendError> {
        Ok(DeviceReads {
            tables: WholeFieldTables::new(grid, probes, layer_blocks(grid, power)),
            films: be.zeros(grid.plane())?,
        })
    }

    /// The reads of θ = `x` + `c` (T = θ + the stack's ambient), reduced
    /// where `x` lives; `None` where the backend does not reduce.
    pub(super) fn read<B: ThermalBackend<Vector = V>>(
        &self,
        be: &B,
        (stack, grid, power): (&Stack, &Grid, &[LayerPower]),
        probes: &[ProbeCell],
        x: &V,
        c: f64,
    ) -> Result<Option<FieldReads>, BackendError> {
        let ambient = stack.ambient_k;
        let req = self.tables.request(grid, c, ambient);
        let Some(p) = be.field_partials(x, &self.films, &self.films, &req)? else {
            return Ok(None);
        };
        let chunks = req.chunks() * grid.nz;
        if p.chunks.len() != chunks {
            return Err(BackendError::Length(p.chunks.len(), chunks));
        }
        if p.probe_x.len() != req.probe_cells.len() {
            return Err(BackendError::Length(p.probe_x.len(), req.probe_cells.len()));
        }
        // The chunks come in index order: a later one wins only when hotter.
        let hottest = (p.chunks.iter()).fold((0, f64::NEG_INFINITY), |h, v| match v[3] > h.1 {
            true => (v[6] as usize, v[3]),
            false => h,
        });
        // As `probes::read`: the z cells' T in order, then their mean.
        let mut xs = p.probe_x.iter();
        let probe_k = (probes.iter())
            .map(|cell| {
                let sum: f64 = (cell.z.clone())
                    .filter_map(|_| xs.next())
                    .map(|&x| (x + c) + ambient)
                    .sum();
                sum / cell.z.len() as f64
            })
            .collect();
        let stats = block_stats(stack, power, &req.blocks, &p.blocks)?;
        let blocks = (stats.into_iter())
            .map(|l| {
                (l.unwrap_or_default().into_iter())
                    .map(|b| b.temp)
                    .collect()
            })
            .collect();
        Ok(Some(FieldReads {
            hottest,
            probes: probe_k,
            blocks,
        }))
    }
}
