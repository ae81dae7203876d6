//! Power over time: the stack's constant layer maps, with the layers named by
//! a [`TimeTrace`] re-rasterized for each trace row. A trace column names a
//! block (floorplan unit, inline rectangle, or a region with `uniform`
//! power) of any layer; it drives the layers whose power source is `blocks`
//! or `ptrace`, or whose power is all in such regions (a package's dies),
//! whose map is by definition the sum of their blocks' rectangles
//! ([`BlockDrive`]). Untraced blocks of a driven layer keep their
//! stack-file power; other layers keep their maps.

use super::drive::BlockDrive;
use super::{invalid, LayerPower, PowerError};
use crate::formats::trace::{RowTimes, TimeTrace};
use crate::grid::Grid;
use crate::stack::Stack;

/// The power maps of every step of a transient run.
pub struct PowerSchedule {
    /// The stack's own maps (steady semantics), one per layer.
    pub base: Vec<LayerPower>,
    trace: Option<TimeTrace>,
    drive: BlockDrive,
}

impl PowerSchedule {
    /// Constant power: the stack's maps at every step.
    pub fn constant(base: Vec<LayerPower>) -> PowerSchedule {
        PowerSchedule {
            base,
            trace: None,
            drive: BlockDrive::none(),
        }
    }

    /// Power from `trace`; `base` are the stack's maps (`layer_power`).
    pub fn with_trace(
        stack: &Stack,
        grid: &Grid,
        base: Vec<LayerPower>,
        trace: TimeTrace,
    ) -> Result<PowerSchedule, PowerError> {
        for (j, name) in trace.names.iter().enumerate() {
            if !base
                .iter()
                .any(|lp| lp.blocks.iter().any(|b| &b.name == name))
            {
                return Err(invalid(
                    &trace.file,
                    format!("header, column `{name}`"),
                    format!(
                        "column {} names no block of any layer (floorplan unit or inline block)",
                        // A CSV trace's first column is `time`; a .ptrace has none.
                        match trace.times {
                            RowTimes::Listed(_) => j + 2,
                            RowTimes::Interval(_) => j + 1,
                        }
                    ),
                ));
            }
        }
        let drive = BlockDrive::new(stack, grid, &base, &trace.names);
        if drive.is_empty() {
            return Err(invalid(
                &trace.file,
                "header",
                "the trace drives no layer: its blocks belong only to layers whose power \
                 is not of type `blocks` or `ptrace` (nor in regions of type `blocks`, \
                 `ptrace` or `uniform`)",
            ));
        }
        Ok(PowerSchedule {
            base,
            trace: Some(trace),
            drive,
        })
    }

    /// The trace row in force at time `t` (s), `None` for constant power.
    pub fn row_at(&self, t: f64) -> Option<usize> {
        self.trace.as_ref().map(|tr| tr.row_at(t))
    }

    /// The times strictly between `t0` and `t1` (s) where a trace row
    /// starts, in order: the boundaries an adaptive step lands on.
    pub fn row_starts_within(&self, t0: f64, t1: f64) -> Vec<f64> {
        let Some(tr) = &self.trace else {
            return Vec::new();
        };
        let inside = |t: &f64| *t > t0 && *t < t1;
        match &tr.times {
            RowTimes::Interval(s) => {
                let first = (t0 / s).floor().max(1.0) as usize;
                (first..tr.rows.len())
                    .map(|m| m as f64 * s)
                    .take_while(|t| *t < t1)
                    .filter(inside)
                    .collect()
            }
            RowTimes::Listed(times) => times.iter().skip(1).copied().filter(inside).collect(),
        }
    }

    pub fn trace(&self) -> Option<&TimeTrace> {
        self.trace.as_ref()
    }

    /// Per-layer maps (W per plane cell) for trace row `row` (`None`: the
    /// stack's own maps).
    pub fn layer_maps(&self, row: Option<usize>) -> Vec<Vec<f64>> {
        let mut maps: Vec<Vec<f64>> = self.base.iter().map(|p| p.map_w.clone()).collect();
        let (Some(row), Some(trace)) = (row, &self.trace) else {
            return maps;
        };
        self.drive.apply(&mut maps, &trace.rows[row]);
        maps
    }

    /// Per-layer maps of the trace's mean power: each row weighted by how
    /// long it holds (a `.ptrace`'s rows one interval each; a CSV's last row
    /// as long as the mean of the others). Constant power: the stack's maps.
    pub fn mean_layer_maps(&self) -> Vec<Vec<f64>> {
        let Some(trace) = &self.trace else {
            return self.layer_maps(None);
        };
        let weights = trace.row_durations();
        let total: f64 = weights.iter().sum();
        let mut mean: Vec<Vec<f64>> = self.base.iter().map(|p| vec![0.0; p.map_w.len()]).collect();
        for (row, w) in weights.iter().enumerate() {
            for (m, map) in mean.iter_mut().zip(self.layer_maps(Some(row))) {
                m.iter_mut().zip(map).for_each(|(a, v)| *a += v * w / total);
            }
        }
        mean
    }

    /// The layers' power (maps and block powers) of row `row`, as the
    /// per-layer and per-block reports show them.
    pub fn layer_power_at(&self, row: Option<usize>) -> Vec<LayerPower> {
        let mut out = self.base.clone();
        let (Some(row), Some(trace)) = (row, &self.trace) else {
            return out;
        };
        for (lp, map) in out.iter_mut().zip(self.layer_maps(Some(row))) {
            lp.total_w = map.iter().sum();
            lp.map_w = map;
        }
        self.drive.apply_blocks(&mut out, &trace.rows[row]);
        out
    }
}

/// Per-cell power (W) from per-layer maps: each layer's map split evenly
/// over its z cells, as `assemble` does.
pub fn cell_power(grid: &Grid, maps: &[Vec<f64>]) -> Vec<f64> {
    let mut p = vec![0.0; grid.len()];
    for (l, map) in maps.iter().enumerate() {
        set_layer_cells(grid, l, map, &mut p);
    }
    p
}

/// Layer `l`'s cells of `cells` (per-cell W, as [`cell_power`] forms them)
/// from its map: a session that sets one layer's power rewrites only its
/// cells.
pub fn set_layer_cells(grid: &Grid, l: usize, map: &[f64], cells: &mut [f64]) {
    let plane = grid.plane();
    let zr = grid.layer_z[l].clone();
    let share = 1.0 / zr.len() as f64;
    for z in zr {
        for (p, v) in cells[z * plane..(z + 1) * plane].iter_mut().zip(map) {
            *p = v * share;
        }
    }
}
