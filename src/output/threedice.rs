//! The files of an imported 3D-ICE stack's `output:` section
//! (`[output.threedice]`), in 3D-ICE's layouts so that its users' scripts
//! read them: a `% `-prefixed header, then `time \t value` lines (`T`,
//! `Tflpel`), `time \t v1 \t v2 ...` (`Tflp`, one column per floorplan
//! element in its order), a matrix per instant (`Tmap`, `Pmap`: one line per
//! row of cells along y, one value per column, a blank line after each
//! instant, with `xaxis.txt` and `yaxis.txt` giving the cell centres in µm)
//! and a legacy VTK field (`T3d`), and a cavity's outlet temperature
//! (`Tcoolant`, from the coolant the run hands to [`tcoolant_files`]).
//! Temperatures in K, times in s, as 3D-ICE writes them. A floorplan element drawn as several rectangles is several
//! blocks in cuth: its minimum, maximum and area-weighted mean are taken
//! over their union here.

use super::write::Rendered;
use super::SteadyView;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::peer_outputs::{PeerFile, PeerKind, PeerOutputs, Quantity, When};
use crate::stack::Stack;
use crate::thermal::transient::StepRecord;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::PathBuf;

/// 3D-ICE's header prefix (its simulators pass `"% "`).
const PREFIX: &str = "% ";

/// min, area-weighted mean and max of one block, with its area.
type Part = (f64, f64, f64, f64);

/// `q` over the union of `parts` (disjoint rectangles of one element).
fn union_value(q: Quantity, parts: &[Part]) -> f64 {
    match q {
        Quantity::Minimum => parts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min),
        Quantity::Maximum => parts.iter().map(|p| p.2).fold(f64::NEG_INFINITY, f64::max),
        Quantity::Average => {
            let area: f64 = parts.iter().map(|p| p.3).sum();
            parts.iter().map(|p| p.1 * p.3).sum::<f64>() / area
        }
    }
}

fn quantity_word(q: Quantity) -> &'static str {
    match q {
        Quantity::Maximum => "Maximum",
        Quantity::Minimum => "Minimum",
        Quantity::Average => "Average",
    }
}

/// The header 3D-ICE writes before the first instant.
fn header(f: &PeerFile, stack: &Stack, grid: &Grid) -> String {
    let mut h = String::new();
    match f.kind {
        PeerKind::T => {
            let p = &stack.probes[f.probe.expect("checked at load")];
            let (c, r) = (grid.column_of(p.x_m), grid.row_of(p.y_m));
            let _ = writeln!(
                h,
                "{PREFIX}Cell temperature for the location [{}, x={:5.3},y={:5.3}]",
                f.element,
                p.x_m * 1e6,
                p.y_m * 1e6
            );
            let _ = writeln!(
                h,
                "{PREFIX}Nearest [column, row] indices found= [{c},{r}] (locations [x={:5.3},y={:5.3}])",
                grid.xe[c] * 1e6,
                grid.ye[r] * 1e6
            );
            let _ = writeln!(h, "{PREFIX}Time(s) \t Temperature(K)");
        }
        PeerKind::Tflp => {
            let _ = writeln!(
                h,
                "{PREFIX}{} temperatures for the floorplan of the die {}",
                quantity_word(f.quantity),
                f.element
            );
            let _ = write!(h, "{PREFIX}Time(s) \t ");
            for e in &f.elements {
                let _ = write!(h, "{}(K) \t ", e.name);
            }
            h.push('\n');
        }
        PeerKind::Tflpel => {
            let (die, el) = (&f.element, &f.elements[0].name);
            let _ = writeln!(
                h,
                "{PREFIX}{} temperatures for the floorplan element {el} of the die {die}",
                quantity_word(f.quantity)
            );
            let _ = writeln!(h, "{PREFIX}Time(s) \t {die}.{el}(K)");
        }
        PeerKind::Tmap | PeerKind::Pmap => {
            let what = if f.kind == PeerKind::Tmap {
                "Thermal"
            } else {
                "Power"
            };
            let _ = writeln!(
                h,
                "{PREFIX}{what} map for layer {} (please find axis information in \"xaxis.txt\" and \"yaxis.txt\")",
                f.element
            );
        }
        PeerKind::T3d => {}
        PeerKind::Tcoolant => {
            let _ = writeln!(
                h,
                "{PREFIX}{} temperatures for the outlet of the channel {}",
                quantity_word(f.quantity),
                f.element
            );
            let _ = writeln!(h, "{PREFIX}Time(s) \t Temperature(K)");
        }
    }
    h
}

/// One row of cells per line (y up), `%7.3f  ` per column, a blank line after.
fn matrix(values: &[f64], grid: &Grid) -> String {
    let mut s = String::with_capacity(values.len() * 9 + grid.ny + 1);
    for row in values.chunks(grid.nx) {
        for v in row {
            let _ = write!(s, "{v:7.3}  ");
        }
        s.push('\n');
    }
    s.push('\n');
    s
}

/// The cell centres along an axis, µm, one per line (`xaxis.txt`).
fn axis(edges: &[f64]) -> String {
    edges
        .windows(2)
        .map(|w| format!("{:5.2}\n", 0.5 * (w[0] + w[1]) * 1e6))
        .collect()
}

/// The field as a legacy VTK rectilinear grid: coordinates in µm, one
/// cell value per cell, K.
fn vtk(grid: &Grid, temperature_k: &[f64]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# vtk DataFile Version 3.0\nTemperature (K)\nASCII\nDATASET RECTILINEAR_GRID\nDIMENSIONS {} {} {}",
        grid.nx + 1,
        grid.ny + 1,
        grid.nz + 1
    );
    let z = crate::geometry::edges_of(&grid.dz);
    for (name, e) in [("X", &grid.xe), ("Y", &grid.ye), ("Z", &z)] {
        let _ = writeln!(s, "{name}_COORDINATES {} double", e.len());
        for v in e.iter() {
            let _ = writeln!(s, "{}", v * 1e6);
        }
    }
    let _ = writeln!(
        s,
        "CELL_DATA {}\nSCALARS temperature double 1\nLOOKUP_TABLE default",
        grid.len()
    );
    for t in temperature_k {
        let _ = writeln!(s, "{t:.3}");
    }
    s
}

/// Reads what a time-series instruction needs at one instant: a probe's
/// temperature and the statistics of a layer's blocks.
trait Instant {
    fn probe_k(&self, probe: usize) -> f64;
    /// (min, mean, max) of block `name` of layer `l`.
    fn block(&self, l: usize, name: &str) -> Option<(f64, f64, f64)>;
}

/// The line of `T`, `Tflp` or `Tflpel` at `time_s`; `None` for the maps.
fn series_line(
    f: &PeerFile,
    time_s: f64,
    at: &dyn Instant,
    power: &[LayerPower],
) -> Option<String> {
    let element = |e: &crate::stack::peer_outputs::PeerElementSpec| {
        let l = f.layer.expect("checked at load");
        let parts: Vec<Part> = e
            .blocks
            .iter()
            .filter_map(|b| {
                let (lo, avg, hi) = at.block(l, b)?;
                let area = power.get(l)?.blocks.iter().find(|x| &x.name == b)?.area();
                Some((lo, avg, hi, area))
            })
            .collect();
        if parts.is_empty() {
            f64::NAN
        } else {
            union_value(f.quantity, &parts)
        }
    };
    match f.kind {
        PeerKind::T => Some(format!(
            "{time_s:5.3} \t {:7.3}\n",
            at.probe_k(f.probe.expect("checked at load"))
        )),
        PeerKind::Tflpel => Some(format!("{time_s:5.3} \t {:7.3}\n", element(&f.elements[0]))),
        PeerKind::Tflp => {
            let mut s = format!("{time_s:5.3} \t ");
            for e in &f.elements {
                let _ = write!(s, "{:5.3} \t ", element(e));
            }
            s.push('\n');
            Some(s)
        }
        _ => None,
    }
}

/// The map frame (or field) of `f` from a whole field or its layer maps.
fn map_frame(f: &PeerFile, view: &SteadyView) -> String {
    let grid = view.grid;
    match f.kind {
        PeerKind::Tmap => {
            let l = f.layer.expect("checked at load");
            match view.layer_maps.get(l).and_then(Option::as_ref) {
                Some(m) => matrix(m, grid),
                None => matrix(&grid.layer_map(view.temperature_k, l), grid),
            }
        }
        PeerKind::Pmap => {
            let l = f.layer.expect("checked at load");
            let map = view.power.get(l).map(|p| p.map_w.clone());
            matrix(&map.unwrap_or_else(|| vec![0.0; grid.plane()]), grid)
        }
        PeerKind::T3d => vtk(grid, view.temperature_k),
        _ => String::new(),
    }
}

/// The files of `outs` opened with their headers, plus the axis files when
/// a map is written.
fn opened(outs: &PeerOutputs, stack: &Stack, grid: &Grid) -> BTreeMap<PathBuf, String> {
    let mut files = BTreeMap::new();
    for f in outs.files.iter().filter(|f| f.kind != PeerKind::Tcoolant) {
        files
            .entry(f.file.clone())
            .or_insert_with(|| header(f, stack, grid));
    }
    if outs
        .files
        .iter()
        .any(|f| matches!(f.kind, PeerKind::Tmap | PeerKind::Pmap))
    {
        files.insert("xaxis.txt".into(), axis(&grid.xe));
        files.insert("yaxis.txt".into(), axis(&grid.ye));
    }
    files
}

fn rendered(files: BTreeMap<PathBuf, String>) -> Vec<Rendered> {
    files
        .into_iter()
        .map(|(p, s)| Rendered {
            name: p.to_string_lossy().into_owned(),
            bytes: s.into_bytes(),
        })
        .collect()
}

/// A steady view's statistics, read from its layer maps.
struct SteadyInstant<'a> {
    view: &'a SteadyView<'a>,
    /// Per layer the block statistics, made on first use.
    stats: BTreeMap<usize, Vec<crate::thermal::block_stats::BlockStats>>,
}

impl Instant for SteadyInstant<'_> {
    fn probe_k(&self, probe: usize) -> f64 {
        let name = &self.view.stack.probes[probe].name;
        let reading = self.view.summary.probes.iter().find(|p| &p.name == name);
        reading.map_or(f64::NAN, |p| p.t_k)
    }

    fn block(&self, l: usize, name: &str) -> Option<(f64, f64, f64)> {
        let s = self.stats.get(&l)?.iter().find(|s| s.block == name)?;
        s.temp.map(|t| (t.min_k, t.avg_k, t.max_k))
    }
}

/// The files of a steady run: its `final` instructions at time 0, as
/// 3D-ICE's steady solver writes them (`slot` and `step` ones are left out,
/// as there).
pub fn steady_files(view: &SteadyView) -> Vec<Rendered> {
    let Some(outs) = &view.stack.threedice else {
        return Vec::new();
    };
    let grid = view.grid;
    let mut stats = BTreeMap::new();
    for f in outs.files.iter().filter(|f| f.when == When::Final) {
        if let (Some(l), PeerKind::Tflp | PeerKind::Tflpel) = (f.layer, f.kind) {
            stats.entry(l).or_insert_with(|| {
                let map = match view.layer_maps.get(l).and_then(Option::as_ref) {
                    Some(m) => m.clone(),
                    None => grid.layer_map(view.temperature_k, l),
                };
                let blocks = view.power.get(l).map_or(&[][..], |p| &p.blocks);
                let name = &view.stack.layers[l].name;
                crate::thermal::block_stats::layer_block_stats(name, &map, blocks, grid)
            });
        }
    }
    let at = SteadyInstant { view, stats };
    let mut files = opened(outs, view.stack, grid);
    // `Tcoolant` files come from the coolant (`tcoolant_files`).
    let solid = |f: &&PeerFile| f.kind != PeerKind::Tcoolant;
    for f in (outs.files.iter().filter(solid)).filter(|f| f.when == When::Final) {
        let text = series_line(f, 0.0, &at, view.power).unwrap_or_else(|| map_frame(f, view));
        files.entry(f.file.clone()).or_default().push_str(&text);
    }
    rendered(files)
}

/// A transient record's readings (block names `layer.block`).
struct RecordInstant<'a> {
    record: &'a StepRecord,
    block_names: &'a [String],
    stack: &'a Stack,
}

impl Instant for RecordInstant<'_> {
    fn probe_k(&self, probe: usize) -> f64 {
        self.record.probe_k.get(probe).copied().unwrap_or(f64::NAN)
    }

    fn block(&self, l: usize, name: &str) -> Option<(f64, f64, f64)> {
        let full = format!("{}.{name}", self.stack.layers[l].name);
        let j = self.block_names.iter().position(|n| *n == full)?;
        let b = self.record.blocks.get(j)?;
        Some((b.min_k, b.avg_k, b.max_k))
    }
}

/// Whether an instruction written `when` is due at `time_s` (not the
/// initial state), given 3D-ICE's slot.
fn due(when: When, time_s: f64, slot_s: Option<f64>, last: bool) -> bool {
    if time_s <= 0.0 {
        return false;
    }
    match when {
        When::Final => last,
        When::Step => true,
        When::Slot => slot_s.is_some_and(|s| {
            let k = time_s / s;
            (k - k.round()).abs() <= 1e-6 * k.max(1.0)
        }),
    }
}

/// The map frames of a transient, gathered at its snapshots.
#[derive(Default)]
pub struct TransientMaps {
    frames: BTreeMap<PathBuf, String>,
    last_time_s: Option<f64>,
}

impl TransientMaps {
    /// Adds the frames due at a snapshot at `time_s`.
    pub fn snapshot(&mut self, view: &SteadyView, time_s: f64) {
        let Some(outs) = &view.stack.threedice else {
            return;
        };
        for f in &outs.files {
            let map = matches!(f.kind, PeerKind::Tmap | PeerKind::Pmap);
            if map && f.when != When::Final && due(f.when, time_s, outs.slot_s, false) {
                let frame = map_frame(f, view);
                self.frames
                    .entry(f.file.clone())
                    .or_default()
                    .push_str(&frame);
            }
        }
        self.last_time_s = Some(time_s);
    }

    /// The files of a transient run: the time series from its records
    /// (`step`: every record; `slot`: records at the slot's multiples;
    /// `final`: the last), the maps from its snapshots and, for `final`,
    /// the final field (`T3d` is always the final field).
    pub fn files(
        mut self,
        final_view: &SteadyView,
        records: &[StepRecord],
        block_names: &[String],
    ) -> Vec<Rendered> {
        let Some(outs) = &final_view.stack.threedice else {
            return Vec::new();
        };
        let (stack, grid) = (final_view.stack, final_view.grid);
        let mut files = opened(outs, stack, grid);
        let n = records.len();
        // Record by record, so that instructions sharing a file interleave
        // in time as 3D-ICE appends them.
        for (k, record) in records.iter().enumerate() {
            let at = RecordInstant {
                record,
                block_names,
                stack,
            };
            for f in &outs.files {
                if due(f.when, record.time_s, outs.slot_s, k + 1 == n) {
                    if let Some(line) = series_line(f, record.time_s, &at, final_view.power) {
                        files.entry(f.file.clone()).or_default().push_str(&line);
                    }
                }
            }
        }
        let t_end = records.last().map_or(0.0, |r| r.time_s);
        for f in &outs.files {
            if matches!(
                f.kind,
                PeerKind::T | PeerKind::Tflp | PeerKind::Tflpel | PeerKind::Tcoolant
            ) {
                continue;
            }
            let text = files.entry(f.file.clone()).or_default();
            if let Some(frames) = self.frames.remove(&f.file) {
                text.push_str(&frames);
            }
            let already = self.last_time_s == Some(t_end) && f.when != When::Final;
            if f.kind == PeerKind::T3d || (!already && due(f.when, t_end, outs.slot_s, true)) {
                text.push_str(&map_frame(f, final_view));
            }
        }
        rendered(files)
    }
}

/// One instant of the coolant: the time, s, and per cavity layer (stack
/// index) each coolant line's outlet as (temperature K, ṁ·c W/K), as
/// `assemble::cavity::Coolant::outlets` gives them.
pub type CoolantInstant = (f64, BTreeMap<usize, Vec<(f64, f64)>>);

/// `q` over a cavity's outlets: the hottest or coldest line, or the
/// mixed-cup mean (weighted by ṁ·c; 3D-ICE's plain mean over its channel
/// columns is the same when every line carries the same flow, as in a 4RM
/// cavity or a uniform grid).
pub fn outlet_value(q: Quantity, outlets: &[(f64, f64)]) -> f64 {
    match q {
        Quantity::Maximum => outlets
            .iter()
            .map(|o| o.0)
            .fold(f64::NEG_INFINITY, f64::max),
        Quantity::Minimum => outlets.iter().map(|o| o.0).fold(f64::INFINITY, f64::min),
        Quantity::Average => {
            let w: f64 = outlets.iter().map(|o| o.1).sum();
            outlets.iter().map(|o| o.0 * o.1).sum::<f64>() / w
        }
    }
}

/// The `Tcoolant` files of the stack's `[output.threedice]`, in 3D-ICE's
/// layout (header, then `time \t temperature` per instant due: `final`
/// at the last instant, `slot` on the slot multiples, `step` at each; a
/// steady run passes one instant at time 0).
pub fn tcoolant_files(stack: &Stack, instants: &[CoolantInstant]) -> Vec<Rendered> {
    let Some(outs) = &stack.threedice else {
        return Vec::new();
    };
    let mut files: BTreeMap<PathBuf, String> = BTreeMap::new();
    for f in outs.files.iter().filter(|f| f.kind == PeerKind::Tcoolant) {
        let l = f.layer.expect("checked at load");
        let text = files.entry(f.file.clone()).or_insert_with(|| {
            let mut h = String::new();
            let _ = writeln!(
                h,
                "{PREFIX}{} temperatures for the outlet of the channel {}",
                quantity_word(f.quantity),
                f.element
            );
            let _ = writeln!(h, "{PREFIX}Time(s) \t Temperature(K)");
            h
        });
        for (k, (t, cavities)) in instants.iter().enumerate() {
            let last = k + 1 == instants.len();
            let Some(outlets) = cavities.get(&l).filter(|o| !o.is_empty()) else {
                continue;
            };
            // A steady run is one instant at time 0, its `final` one.
            let steady = *t <= 0.0 && instants.len() == 1 && f.when == When::Final;
            if steady || due(f.when, *t, outs.slot_s, last) {
                let v = outlet_value(f.quantity, outlets);
                let _ = writeln!(text, "{t:5.3} \t {v:7.3}");
            }
        }
    }
    rendered(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_statistics_weigh_each_rectangle_by_its_area() {
        // Two rectangles of 3 and 1 mm² at 310 and 330 K means.
        let parts = [(300.0, 310.0, 320.0, 3e-6), (325.0, 330.0, 335.0, 1e-6)];
        assert_eq!(union_value(Quantity::Minimum, &parts), 300.0);
        assert_eq!(union_value(Quantity::Maximum, &parts), 335.0);
        assert!((union_value(Quantity::Average, &parts) - 315.0).abs() < 1e-12);
    }

    #[test]
    fn outlet_statistics_mix_by_heat_flow() {
        // Lines at 310 K (3 W/K) and 330 K (1 W/K): the mixed cup is 315 K.
        let o = [(310.0, 3.0), (330.0, 1.0)];
        assert_eq!(outlet_value(Quantity::Maximum, &o), 330.0);
        assert_eq!(outlet_value(Quantity::Minimum, &o), 310.0);
        assert!((outlet_value(Quantity::Average, &o) - 315.0).abs() < 1e-12);
    }

    #[test]
    fn slot_instructions_fall_on_the_slot_multiples() {
        let slot = Some(0.05);
        assert!(due(When::Slot, 0.05, slot, false));
        assert!(due(When::Slot, 0.15000000000000002, slot, false));
        assert!(!due(When::Slot, 0.06, slot, false));
        assert!(!due(When::Slot, 0.0, slot, false));
        assert!(due(When::Step, 0.06, slot, false));
        assert!(!due(When::Final, 0.06, slot, false));
        assert!(due(When::Final, 0.06, slot, true));
    }

    #[test]
    fn maps_are_rows_along_y_with_a_blank_line_after() {
        let g = Grid::uniform(2, 2, 2e-3, 2e-3, vec![1e-4], vec![0]);
        let m = matrix(&[300.0, 301.5, 302.0, 303.25], &g);
        assert_eq!(m, "300.000  301.500  \n302.000  303.250  \n\n");
        assert_eq!(axis(&g.xe), "500.00\n1500.00\n");
    }
}
