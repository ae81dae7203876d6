//! HotSpot's own output files (`--hotspot-outputs`, or `[output] hotspot`,
//! which `cuth import hotspot` sets), laid out as HotSpot 7.0 writes them so
//! that a HotSpot user's scripts (`split_grid_steady.py`,
//! `grid_thermal_map.py`, anything reading `-steady_file` or `-o`) read
//! cuth's results unchanged. All temperatures are in kelvin with two
//! decimals, HotSpot's `%.2f`.
//!
//! - `blocks.steady` (HotSpot's `-steady_file`): `<prefix><unit>\t<T>` for
//!   every layer's units, bottom (HotSpot's layer 0) up, then the package's
//!   twelve peripheral nodes `inode_0` … `inode_11`. Prefixes: `layer_N_`
//!   (an `.lcf`), or the chip's units bare and `iface_` (HotSpot's default
//!   layers); `hsp_` and `hsink_` for the spreader and sink, which take the
//!   units of the layer under them, as HotSpot's package layers take its
//!   floorplan.
//! - `hotspot.grid.steady` (`-grid_steady_file`): per layer `Layer N:`, then
//!   `index\tT` for HotSpot's `rows` × `cols` cells over the chip, row 0 at
//!   the chip's top edge (largest y), index `row·cols + col`.
//! - `hotspot.ttrace` (`-o`): the powered units' names, tab-separated, then
//!   one row per trace row, taken at the row's end.
//! - `hotspot.grid.ttrace` (`-grid_transient_file`): per trace row
//!   `t = <s>` (HotSpot's `%lf` of row · interval) and the grid as above.
//!
//! cuth's grid is finer than HotSpot's and not aligned with it, so a HotSpot
//! cell's value is the area-weighted mean of the cuth cells it overlaps
//! (the layer's mean over its z cells), and a peripheral node's the mean
//! over its trapezoid of the spreader's or sink's overhang (HotSpot splits
//! each overhang into west, east, north and south trapezoids at the
//! corners' diagonals).

use crate::formats::trace::{RowTimes, TimeTrace};
use crate::geometry::Rect;
use crate::grid::Grid;
use crate::power::rasterize::coverage;
use crate::power::LayerPower;
use crate::stack::{BlockMap, HotspotLayers, HotspotOutputs, Stack};
use crate::thermal::block_stats::{BlockFootprint, TempStats};
use std::fmt::Write;
use std::io::{self, BufWriter, Write as _};

/// HotSpot's `-grid_steady_file`.
pub const GRID_STEADY: &str = "hotspot.grid.steady";
/// HotSpot's `-o` transient trace.
pub const TTRACE: &str = "hotspot.ttrace";
/// HotSpot's `-grid_transient_file`.
pub const GRID_TTRACE: &str = "hotspot.grid.ttrace";

/// How a stack's layers and cells appear in HotSpot's files, built once
/// per run and applied to every temperature field written.
pub struct HotspotLayout {
    spec: HotspotOutputs,
    /// HotSpot's cells over the chip, in its order, as cuth cells and overlaps.
    cells: Vec<Vec<(usize, f64)>>,
    layers: Vec<LayerNames>,
    package: Option<Package>,
}

struct LayerNames {
    prefix: String,
    blocks: Vec<(String, BlockFootprint)>,
    powered: bool,
    /// Plane cells without material (empty: none), NaN in the layer's map.
    absent: Vec<bool>,
}

/// The spreader and sink layers (the stack's top two, named `spreader` and
/// `sink` as the import names them, or `heat_spreader` and `heat_sink`) and the outlines whose overhangs make
/// HotSpot's peripheral nodes.
struct Package {
    spreader: usize,
    sink: usize,
    chip: Rect,
    spreader_rect: Rect,
    sink_rect: Rect,
}

/// One layer's temperatures as HotSpot reports them, K.
#[derive(Clone, Debug, Default)]
pub struct LayerSample {
    /// `rows` × `cols`, HotSpot's order.
    pub grid: Vec<f64>,
    /// Per unit, in `blocks.steady` order.
    pub blocks: Vec<Option<TempStats>>,
    /// Spreader: its west, east, north, south overhang; sink: under the
    /// spreader's overhang, then its own (HotSpot's `inode_` order).
    pub inodes: Vec<f64>,
}

impl HotspotLayout {
    /// The layout of `stack` on `grid`, its units from `power` (one per layer).
    pub fn new(stack: &Stack, grid: &Grid, power: &[LayerPower], spec: HotspotOutputs) -> Self {
        let domain = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: stack.width_m,
            y1: stack.length_m,
        };
        let chip = stack
            .layers
            .first()
            .and_then(|l| l.outline)
            .unwrap_or(domain);
        let n = stack.layers.len();
        let named = |i: usize, name: &str| {
            let l = stack.layers[i].name.to_ascii_lowercase();
            l == name || l == format!("heat_{name}")
        };
        let package =
            (n >= 3 && named(n - 2, "spreader") && named(n - 1, "sink")).then(|| Package {
                spreader: n - 2,
                sink: n - 1,
                chip,
                spreader_rect: stack.layers[n - 2].outline.unwrap_or(domain),
                sink_rect: stack.layers[n - 1].outline.unwrap_or(domain),
            });
        let (cw, ch) = (
            (chip.x1 - chip.x0) / spec.cols as f64,
            (chip.y1 - chip.y0) / spec.rows as f64,
        );
        let cells = (0..spec.rows)
            .flat_map(|i| (0..spec.cols).map(move |j| (i, j)))
            .map(|(i, j)| {
                let rect = Rect {
                    x0: chip.x0 + j as f64 * cw,
                    x1: chip.x0 + (j + 1) as f64 * cw,
                    y0: chip.y1 - (i + 1) as f64 * ch,
                    y1: chip.y1 - i as f64 * ch,
                };
                coverage(&rect, grid)
            })
            .collect();
        let mut layers: Vec<LayerNames> = Vec::with_capacity(n);
        for l in 0..n {
            let own = power.get(l).map_or(&[][..], |p| &p.blocks[..]);
            let is_pkg = package
                .as_ref()
                .is_some_and(|p| l == p.spreader || l == p.sink);
            // HotSpot's package layers, and all of its default layers, report
            // the units of the floorplan under them.
            let inherits = is_pkg || spec.layers == HotspotLayers::Default;
            let below = layers.iter().rev().find(|n| !n.blocks.is_empty());
            let blocks = if let Some(below) = below.filter(|_| own.is_empty() && inherits) {
                below.blocks.clone()
            } else {
                own.iter()
                    .map(|b| (b.name.clone(), BlockFootprint::of(b, grid)))
                    .collect()
            };
            layers.push(LayerNames {
                prefix: prefix(l, spec.layers, package.as_ref()),
                blocks,
                powered: stack.layers[l].power.is_some(),
                absent: power.get(l).map_or_else(Vec::new, |p| {
                    crate::assemble::absent_plane(grid, p, stack.layers[l].material)
                }),
            });
        }
        HotspotLayout {
            spec,
            cells,
            layers,
            package,
        }
    }

    /// Layer `l`'s HotSpot view of its map `map_k` (K, `x + nx*y`; cells
    /// without material NaN, left out of every mean).
    pub fn sample(&self, l: usize, map_k: &[f64], grid: &Grid) -> LayerSample {
        let grid_values = self
            .cells
            .iter()
            .map(|cov| mean(cov.iter().copied(), map_k))
            .collect();
        let blocks = self.layers[l]
            .blocks
            .iter()
            .map(|(_, f)| f.stats(map_k, grid))
            .collect();
        let inodes = match &self.package {
            Some(p) if l == p.spreader => {
                ring_means(grid, map_k, &p.chip, &p.spreader_rect).to_vec()
            }
            Some(p) if l == p.sink => {
                let mut v = ring_means(grid, map_k, &p.chip, &p.spreader_rect).to_vec();
                v.extend(ring_means(grid, map_k, &p.spreader_rect, &p.sink_rect));
                v
            }
            _ => Vec::new(),
        };
        LayerSample {
            grid: grid_values,
            blocks,
            inodes,
        }
    }

    /// Every layer's view of the whole field `field_k` (K, cuth's cell order).
    pub fn sample_field(&self, grid: &Grid, field_k: &[f64]) -> Vec<LayerSample> {
        (0..self.layers.len())
            .map(|l| {
                let mut map = grid.layer_map(field_k, l);
                for (m, _) in map
                    .iter_mut()
                    .zip(&self.layers[l].absent)
                    .filter(|(_, a)| **a)
                {
                    *m = f64::NAN;
                }
                self.sample(l, &map, grid)
            })
            .collect()
    }

    /// Whether layer `l` dissipates power (its units go into `.ttrace`).
    pub fn powered(&self, l: usize) -> bool {
        self.layers[l].powered
    }

    /// `hotspot.grid.steady` (and one time of `hotspot.grid.ttrace`): per
    /// layer `Layer N:` and `index\tT` lines.
    pub fn grid_text(&self, samples: &[LayerSample], out: &mut String) {
        for (n, s) in samples.iter().enumerate() {
            let _ = writeln!(out, "Layer {n}:");
            for (i, t) in s.grid.iter().enumerate() {
                let _ = writeln!(out, "{i}\t{t:.2}");
            }
        }
    }

    /// `blocks.steady` in HotSpot's layout: every layer's units with its
    /// prefix, each unit's `mode` statistic, then the peripheral nodes.
    pub fn steady_text(&self, samples: &[LayerSample], mode: BlockMap) -> String {
        let mut out = String::new();
        for (names, s) in self.layers.iter().zip(samples) {
            for ((name, _), t) in names.blocks.iter().zip(&s.blocks) {
                if let Some(t) = t {
                    let _ = writeln!(out, "{}{}\t{:.2}", names.prefix, name, mode.pick(t));
                }
            }
        }
        if let Some(p) = &self.package {
            let nodes = samples[p.spreader]
                .inodes
                .iter()
                .chain(&samples[p.sink].inodes);
            for (i, t) in nodes.enumerate() {
                let _ = writeln!(out, "inode_{i}\t{t:.2}");
            }
        }
        out
    }

    /// The `.ttrace` columns: each name of `trace_names` (the power trace's
    /// header, HotSpot's column order) as (layer, unit index) of the first
    /// powered layer, from the bottom, that has a unit of that name not yet
    /// taken; `None` for a name no powered layer has.
    pub fn trace_columns(&self, trace_names: &[String]) -> Vec<Option<(usize, usize)>> {
        let mut taken = std::collections::HashSet::new();
        trace_names
            .iter()
            .map(|name| {
                let hit = self
                    .layers
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| n.powered)
                    .find_map(|(l, n)| {
                        n.blocks
                            .iter()
                            .position(|(b, _)| b == name && !taken.contains(&(l, b.as_str())))
                            .map(|u| (l, u))
                    });
                if let Some((l, u)) = hit {
                    taken.insert((l, self.layers[l].blocks[u].0.as_str()));
                }
                hit
            })
            .collect()
    }

    /// The spec this layout was built from.
    pub fn spec(&self) -> HotspotOutputs {
        self.spec
    }
}

/// One `.ttrace` row: the `mode` statistic of each column's unit (`NaN`
/// where a column names no unit), tab-separated.
pub fn ttrace_row(
    columns: &[Option<(usize, usize)>],
    samples: &[LayerSample],
    mode: BlockMap,
) -> String {
    let vals: Vec<String> = columns
        .iter()
        .map(|c| {
            let t = c
                .and_then(|(l, u)| {
                    samples
                        .get(l)
                        .and_then(|s| s.blocks.get(u).copied().flatten())
                })
                .map_or(f64::NAN, |t| mode.pick(&t));
            format!("{t:.2}")
        })
        .collect();
    vals.join("\t") + "\n"
}

/// A transient's `hotspot.ttrace` and `hotspot.grid.ttrace`, written as
/// the run goes (the grid trace can be large): one row per trace row, taken
/// at the step that ends it, as HotSpot writes one after each row's
/// interval.
pub struct HotspotTrace<W: io::Write> {
    layout: HotspotLayout,
    columns: Vec<Option<(usize, usize)>>,
    mode: BlockMap,
    times: RowTimes,
    rows: usize,
    /// The next trace row to write.
    next: usize,
    ttrace: BufWriter<W>,
    grid_ttrace: BufWriter<W>,
}

impl<W: io::Write> HotspotTrace<W> {
    /// Starts both files for `trace` (its header, HotSpot's column order).
    pub fn new(
        layout: HotspotLayout,
        trace: &TimeTrace,
        mode: BlockMap,
        (ttrace, grid_ttrace): (W, W),
    ) -> io::Result<Self> {
        let mut ttrace = BufWriter::new(ttrace);
        writeln!(ttrace, "{}", trace.names.join("\t"))?;
        Ok(HotspotTrace {
            columns: layout.trace_columns(&trace.names),
            layout,
            mode,
            times: trace.times.clone(),
            rows: trace.rows.len(),
            next: 0,
            ttrace,
            grid_ttrace: BufWriter::new(grid_ttrace),
        })
    }

    /// When trace row `k` starts and ends, s (`None`: the last listed row,
    /// which lasts to the end of the run).
    fn row_span(&self, k: usize) -> (f64, Option<f64>) {
        match &self.times {
            RowTimes::Interval(s) => (k as f64 * s, Some((k + 1) as f64 * s)),
            RowTimes::Listed(t) => (
                t.get(k).copied().unwrap_or(f64::INFINITY),
                t.get(k + 1).copied(),
            ),
        }
    }

    /// After a step ending at `time_s` with field `field_k`: the rows that
    /// end there (`last`: the run's final step, which ends the last listed
    /// row).
    pub fn step(
        &mut self,
        grid: &Grid,
        time_s: f64,
        field_k: &[f64],
        last: bool,
    ) -> io::Result<()> {
        let mut samples = None;
        loop {
            let (start, end) = self.row_span(self.next);
            let due = match end {
                Some(e) => time_s >= e - 1e-9 * e.abs(),
                None => last && self.next < self.rows,
            };
            if !due {
                return Ok(());
            }
            let s = samples.get_or_insert_with(|| self.layout.sample_field(grid, field_k));
            self.ttrace
                .write_all(ttrace_row(&self.columns, s, self.mode).as_bytes())?;
            let mut text = format!("t = {start:.6}\n");
            self.layout.grid_text(s, &mut text);
            self.grid_ttrace.write_all(text.as_bytes())?;
            self.next += 1;
        }
    }

    /// Flushes both files.
    pub fn finish(mut self) -> io::Result<()> {
        self.ttrace.flush()?;
        self.grid_ttrace.flush()
    }
}

/// HotSpot's name prefix for layer `l` (`dump_temp_grid`).
fn prefix(l: usize, layers: HotspotLayers, package: Option<&Package>) -> String {
    match package {
        Some(p) if l == p.spreader => return "hsp_".into(),
        Some(p) if l == p.sink => return "hsink_".into(),
        _ => {}
    }
    match (layers, l) {
        (HotspotLayers::Default, 0) => String::new(),
        (HotspotLayers::Default, 1) => "iface_".into(),
        _ => format!("layer_{l}_"),
    }
}

/// Area-weighted mean of `map_k` over `(cell, weight)`, NaN cells left out.
fn mean(cells: impl Iterator<Item = (usize, f64)>, map_k: &[f64]) -> f64 {
    let (mut sum, mut w) = (0.0, 0.0);
    for (i, a) in cells {
        if let Some(&t) = map_k.get(i).filter(|t| t.is_finite()) {
            sum += a * t;
            w += a;
        }
    }
    if w > 0.0 {
        sum / w
    } else {
        f64::NAN
    }
}

/// Which of the four trapezoids (west, east, north, south) of the ring
/// between `inner` and `outer` holds the point, `None` outside the ring:
/// the side whose fraction of the way out is largest, so the corners'
/// diagonals split the ring, as HotSpot splits it.
fn ring_side(inner: &Rect, outer: &Rect, x: f64, y: f64) -> Option<usize> {
    let inside = |r: &Rect| x >= r.x0 && x <= r.x1 && y >= r.y0 && y <= r.y1;
    if !inside(outer) || inside(inner) {
        return None;
    }
    let frac = |d: f64, span: f64| {
        if span > 0.0 {
            d / span
        } else {
            f64::NEG_INFINITY
        }
    };
    let t = [
        frac(inner.x0 - x, inner.x0 - outer.x0),
        frac(x - inner.x1, outer.x1 - inner.x1),
        frac(y - inner.y1, outer.y1 - inner.y1),
        frac(inner.y0 - y, inner.y0 - outer.y0),
    ];
    (0..4).max_by(|&a, &b| t[a].total_cmp(&t[b]))
}

/// Mean of `map_k` over each trapezoid of the ring, by cell centres
/// weighted by cell area; a trapezoid with no cell (a spreader no wider
/// than the chip) takes the ring's mean.
fn ring_means(grid: &Grid, map_k: &[f64], inner: &Rect, outer: &Rect) -> [f64; 4] {
    let mut sums = [(0.0, 0.0); 4];
    for iy in 0..grid.ny {
        let yc = 0.5 * (grid.ye[iy] + grid.ye[iy + 1]);
        for ix in 0..grid.nx {
            let xc = 0.5 * (grid.xe[ix] + grid.xe[ix + 1]);
            let j = ix + grid.nx * iy;
            let Some(side) = ring_side(inner, outer, xc, yc) else {
                continue;
            };
            if map_k[j].is_finite() {
                sums[side].0 += grid.cell_area(j) * map_k[j];
                sums[side].1 += grid.cell_area(j);
            }
        }
    }
    let (all_t, all_a) = sums.iter().fold((0.0, 0.0), |a, s| (a.0 + s.0, a.1 + s.1));
    sums.map(|(t, a)| if a > 0.0 { t / a } else { all_t / all_a })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_sides_follow_the_corner_diagonals() {
        let inner = Rect {
            x0: 4.0,
            y0: 4.0,
            x1: 6.0,
            y1: 6.0,
        };
        let outer = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: 10.0,
            y1: 10.0,
        };
        assert_eq!(ring_side(&inner, &outer, 5.0, 5.0), None);
        assert_eq!(ring_side(&inner, &outer, 1.0, 5.0), Some(0));
        assert_eq!(ring_side(&inner, &outer, 9.0, 5.0), Some(1));
        assert_eq!(ring_side(&inner, &outer, 5.0, 9.0), Some(2));
        assert_eq!(ring_side(&inner, &outer, 5.0, 1.0), Some(3));
        // Near the south-west corner, below the diagonal: south.
        assert_eq!(ring_side(&inner, &outer, 1.0, 0.5), Some(3));
        assert_eq!(ring_side(&inner, &outer, 0.5, 1.0), Some(0));
        assert_eq!(ring_side(&inner, &outer, 11.0, 5.0), None);
    }

    #[test]
    fn grid_rows_run_from_the_chip_top() {
        // A 2 × 2 cuth grid over a 2 m square, T = 300 + x + 10 y at the
        // cell centres; HotSpot's 2 × 2 over the same square: row 0 on top.
        let grid = Grid::uniform(2, 2, 2.0, 2.0, vec![1.0], vec![0]);
        let map = [300.5 + 5.0, 301.5 + 5.0, 300.5 + 15.0, 301.5 + 15.0];
        let cells: Vec<Vec<(usize, f64)>> = (0..2)
            .flat_map(|i| (0..2).map(move |j| (i, j)))
            .map(|(i, j)| {
                let r = Rect {
                    x0: j as f64,
                    x1: j as f64 + 1.0,
                    y0: 1.0 - i as f64,
                    y1: 2.0 - i as f64,
                };
                coverage(&r, &grid)
            })
            .collect();
        let vals: Vec<f64> = cells
            .iter()
            .map(|c| mean(c.iter().copied(), &map))
            .collect();
        assert_eq!(vals, vec![315.5, 316.5, 305.5, 306.5]);
    }
}
