//! The files of a steady result, streamed into a [`Sink`]: the staging
//! directory of one output [`Transaction`] (private, committed by lock and
//! rename, stale layers removed, so no truncated PNG or CSV is ever left
//! under its real name), or memory (`render_steady`, for transient
//! snapshots and tests). Maps are made a few layers at a time (as many as
//! fit in [`MAP_BUDGET_BYTES`], in parallel), CSV text is formatted in
//! bounded bands and `field.npy` one plane at a time, so the memory of the
//! outputs does not grow with the number of layers or the size of a file.

use super::blocks::{blocks_csv, blocks_steady, layer_block_stats};
use super::hotspot::{self, HotspotLayout, LayerSample};
use super::png::{self, HeatMap};
use super::transaction::{Owned, Transaction};
use super::{csv, json, OutputError, OutputOptions, SteadyView};
use crate::thermal::summary::Summary;
use rayon::prelude::*;
use std::borrow::Cow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// One output file, rendered (also used by `topopt::output`).
pub struct Rendered {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// Writes the steady outputs into `dir` and returns their paths:
/// per layer `<NN>_<name>.png` and `<NN>_<name>.csv` (NN = layer index,
/// bottom = 00, at least two digits; the name reduced to `[A-Za-z0-9_-]`),
/// then `blocks.csv`, `blocks.steady` (only when some layer has named blocks:
/// floorplan units or inline rectangles),
/// `probes.csv` when the stack has `[[probes]]`, `field.vtr` with `--vtk`,
/// and `summary.json`.
pub fn write_steady(
    dir: &Path,
    view: &SteadyView,
    opts: &OutputOptions,
) -> Result<Vec<PathBuf>, OutputError> {
    let txn = Transaction::begin(dir, Owned::Thermal)?;
    stream_steady(&mut Staged::new(&txn, Path::new("")), view, opts)?;
    txn.commit()
}

/// A file name stem from a layer name: ASCII letters, digits, `_` and `-`
/// kept, everything else (spaces, `/`, `.`, non-ASCII) becomes `_`, so a
/// name can neither escape `dir` nor clash with the dot-prefixed temporaries.
/// Capped at 64 characters to stay far below file-system name limits.
pub fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .take(64)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() {
        "layer".to_string()
    } else {
        s
    }
}

fn invalid(dir: &Path, message: String) -> OutputError {
    OutputError::Io {
        path: dir.to_path_buf(),
        source: io::Error::new(io::ErrorKind::InvalidInput, message),
    }
}

/// Memory the maps of the layers made at once may take (the map in K and in
/// the display unit, 16 B a cell each layer): a few layers in parallel on a
/// small grid, one at a time on a large one.
pub const MAP_BUDGET_BYTES: usize = 256 << 20;

/// Where the files of a result go.
pub trait Sink {
    /// Writes file `name` (relative to the output folder) with `body`.
    fn file(
        &mut self,
        name: &str,
        body: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), OutputError>;
    /// Where file `name` will be, for error messages.
    fn path(&self, name: &str) -> PathBuf;
}

/// Files streamed into a transaction's staging, under `sub`.
pub struct Staged<'t> {
    txn: &'t Transaction,
    sub: PathBuf,
}

impl<'t> Staged<'t> {
    pub fn new(txn: &'t Transaction, sub: &Path) -> Staged<'t> {
        Staged {
            txn,
            sub: sub.to_path_buf(),
        }
    }
}

impl Sink for Staged<'_> {
    fn file(
        &mut self,
        name: &str,
        body: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), OutputError> {
        let rel = self.sub.join(name);
        let err = |source| OutputError::Io {
            path: self.txn.out().join(&rel),
            source,
        };
        let mut w = io::BufWriter::with_capacity(1 << 20, self.txn.create(&rel)?);
        body(&mut w).map_err(err)?;
        w.flush().map_err(err)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.txn.out().join(&self.sub).join(name)
    }
}

/// Files kept in memory; `dir` names them in error messages.
struct Memory<'d> {
    dir: &'d Path,
    files: Vec<Rendered>,
}

impl Sink for Memory<'_> {
    fn file(
        &mut self,
        name: &str,
        body: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), OutputError> {
        let mut bytes = Vec::new();
        body(&mut bytes).map_err(|source| OutputError::Io {
            path: self.dir.join(name),
            source,
        })?;
        self.files.push(Rendered {
            name: name.to_string(),
            bytes,
        });
        Ok(())
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
}

/// Every output file in memory, in the order they will be written (`dir`
/// only names the files in error messages).
pub fn render_steady(
    dir: &Path,
    view: &SteadyView,
    opts: &OutputOptions,
) -> Result<Vec<Rendered>, OutputError> {
    let mut sink = Memory {
        dir,
        files: Vec::new(),
    };
    stream_steady(&mut sink, view, opts)?;
    Ok(sink.files)
}

/// One layer's map, made in parallel with others.
struct LayerMaps {
    l: usize,
    /// In the display unit (empty when the layer gets no maps).
    shown: Vec<f64>,
    png: Option<Vec<u8>>,
    /// The die view: the map cropped to the layer's dies, where they are
    /// smaller than the domain.
    die_png: Option<Vec<u8>>,
    stats: Vec<super::blocks::BlockStats>,
    /// HotSpot's view of the layer, with HotSpot outputs.
    hotspot: Option<LayerSample>,
}

/// Streams the steady outputs into `sink`, in this order: per layer with
/// maps `<NN>_<name>.png` and `<NN>_<name>.csv`, then `blocks.csv` and
/// `blocks.steady` (when some layer names blocks; every layer's blocks,
/// with or without maps), `probes.csv`, `field.vtr`, `field.npy`, and
/// `summary.json` last. Returns the summary as written: the given one with
/// the `outputs` phase timed and the host peak RSS at that point.
pub fn stream_steady(
    sink: &mut dyn Sink,
    view: &SteadyView,
    opts: &OutputOptions,
) -> Result<Summary, OutputError> {
    let t0 = std::time::Instant::now();
    let (grid, stack) = (view.grid, view.stack);
    let dir_buf = sink.path("");
    let dir = dir_buf.as_path();
    // A mismatch is a caller bug; it is reported rather than allowed to panic
    // in a slice index after the solve has already been paid for.
    if grid.layer_z.len() != stack.layers.len() {
        return Err(invalid(
            dir,
            format!(
                "grid has {} layers but the stack has {}",
                grid.layer_z.len(),
                stack.layers.len()
            ),
        ));
    }
    let layers = LayerOutputs {
        view,
        opts,
        dir,
        hotspot: opts
            .hotspot
            .map(|spec| HotspotLayout::new(stack, grid, view.power, spec)),
        digits: stack
            .layers
            .len()
            .saturating_sub(1)
            .to_string()
            .len()
            .max(2),
    };
    layers.check_field()?;
    let (stats, samples) = layers.stream(sink)?;
    // HotSpot's layout replaces cuth's blocks.steady.
    let hs_steady = layers
        .hotspot
        .as_ref()
        .map(|hs| hs.steady_text(&samples, opts.block_map));
    stream_tables(sink, view, opts, dir, &stats, hs_steady.as_deref())?;
    if let Some(hs) = &layers.hotspot {
        let mut text = String::new();
        hs.grid_text(&samples, &mut text);
        sink.file(hotspot::GRID_STEADY, &mut |w| w.write_all(text.as_bytes()))?;
    }
    let summary = timed_summary(view, t0);
    let text = json::summary_json(&summary).map_err(|source| OutputError::Io {
        path: dir.join("summary.json"),
        source,
    })?;
    sink.file("summary.json", &mut |w| w.write_all(text.as_bytes()))?;
    Ok(summary)
}

/// The per-layer outputs of [`stream_steady`]: maps, and block statistics
/// where no device reduced them.
struct LayerOutputs<'a> {
    view: &'a SteadyView<'a>,
    opts: &'a OutputOptions,
    dir: &'a Path,
    /// Width of the layer number in file names.
    digits: usize,
    /// With HotSpot outputs, how the layers appear in them.
    hotspot: Option<HotspotLayout>,
}

impl LayerOutputs<'_> {
    fn stem(&self, l: usize) -> String {
        let digits = self.digits;
        format!("{l:0digits$}_{}", sanitize(&self.view.stack.layers[l].name))
    }

    /// Block statistics a device reduced (they need no map).
    fn reduced(&self, l: usize) -> Option<&Vec<super::blocks::BlockStats>> {
        self.view.block_stats.get(l).and_then(Option::as_ref)
    }

    /// Whether layer `l`'s map is needed: for maps, or for block statistics.
    fn needs_map(&self, l: usize) -> bool {
        let has_blocks = self.view.power.get(l).is_some_and(|p| !p.blocks.is_empty());
        self.opts.maps.includes(l)
            || (has_blocks && self.reduced(l).is_none())
            || self.hotspot.is_some()
    }

    /// Without the whole field, every needed map must have been made and no
    /// whole-field output asked for.
    fn check_field(&self) -> Result<(), OutputError> {
        let (view, opts) = (self.view, self.opts);
        let whole = view.temperature_k.len() == view.grid.len();
        let made = |l: usize| view.layer_maps.get(l).is_some_and(Option::is_some);
        let missing = (0..view.stack.layers.len()).find(|&l| self.needs_map(l) && !made(l));
        if !whole && (opts.vtk || opts.npy.is_some() || missing.is_some()) {
            return Err(invalid(
                self.dir,
                format!(
                    "temperature has {} values for a grid of {} cells{}",
                    view.temperature_k.len(),
                    view.grid.len(),
                    match missing {
                        Some(l) => format!(" and no map of layer {l}"),
                        None => String::new(),
                    },
                ),
            ));
        }
        Ok(())
    }

    /// Renders the needed layers in batches that fit the map budget and
    /// streams their PNG and CSV; returns every layer's block statistics,
    /// bottom up, and with HotSpot outputs each layer's HotSpot view.
    fn stream(
        &self,
        sink: &mut dyn Sink,
    ) -> Result<(Vec<super::blocks::BlockStats>, Vec<LayerSample>), OutputError> {
        let (grid, n_layers) = (self.view.grid, self.view.stack.layers.len());
        let needed: Vec<usize> = (0..n_layers).filter(|&l| self.needs_map(l)).collect();
        let per_batch = (MAP_BUDGET_BYTES / (16 * grid.plane()).max(1))
            .clamp(1, rayon::current_num_threads().max(1) * 4);
        let mut stats: Vec<Vec<super::blocks::BlockStats>> = (0..n_layers)
            .map(|l| self.reduced(l).cloned().unwrap_or_default())
            .collect();
        let mut samples = vec![LayerSample::default(); n_layers];
        for batch in needed.chunks(per_batch) {
            // Layers are rendered in parallel (a PNG takes milliseconds even for
            // a tiny grid: a stack of 10 000 layers spent most of its time here).
            let made = batch
                .par_iter()
                .map(|&l| self.render(l))
                .collect::<Result<Vec<_>, OutputError>>()?;
            for m in made {
                if let Some(png) = &m.png {
                    sink.file(&format!("{}.png", self.stem(m.l)), &mut |w| {
                        w.write_all(png)
                    })?;
                    sink.file(&format!("{}.csv", self.stem(m.l)), &mut |w| {
                        csv::write_layer_csv_with_coords(w, &m.shown, grid, self.opts.unit)
                    })?;
                }
                if let Some(png) = &m.die_png {
                    sink.file(&format!("{}_die.png", self.stem(m.l)), &mut |w| {
                        w.write_all(png)
                    })?;
                }
                if self.reduced(m.l).is_none() {
                    stats[m.l] = m.stats;
                }
                if let Some(h) = m.hotspot {
                    samples[m.l] = h;
                }
            }
        }
        Ok((stats.concat(), samples))
    }

    /// Layer `l`'s map (absent cells NaN), its block statistics unless a
    /// device reduced them, and its PNG when the layer gets maps.
    fn render(&self, l: usize) -> Result<LayerMaps, OutputError> {
        let (view, grid, unit) = (self.view, self.view.grid, self.opts.unit);
        let layer = &view.stack.layers[l];
        let mut map_k = match view.layer_maps.get(l).and_then(Option::as_ref) {
            Some(m) => Cow::Borrowed(m.as_slice()),
            None => Cow::Owned(grid.layer_map(view.temperature_k, l)),
        };
        if let Some(p) = view.power.get(l) {
            let absent = crate::assemble::absent_plane(grid, p, layer.material);
            if !absent.is_empty() {
                let m = map_k.to_mut();
                for (m, _) in m.iter_mut().zip(&absent).filter(|(_, a)| **a) {
                    *m = f64::NAN;
                }
            }
        }
        let stats = match (view.power.get(l), self.reduced(l)) {
            (Some(power), None) => layer_block_stats(&layer.name, &map_k, &power.blocks, grid),
            _ => Vec::new(),
        };
        let hotspot = self.hotspot.as_ref().map(|h| h.sample(l, &map_k, grid));
        if !self.opts.maps.includes(l) {
            return Ok(LayerMaps {
                l,
                shown: Vec::new(),
                png: None,
                die_png: None,
                stats,
                hotspot,
            });
        }
        let shown: Vec<f64> = map_k.iter().map(|&t| unit.convert_k(t)).collect();
        drop(map_k);
        let unit_label = png::unit_label(unit);
        let title = format!("layer {l}: {} ({unit_label})", layer.name);
        let blocks = view.power.get(l).map_or(&[][..], |p| &p.blocks);
        let full = HeatMap {
            x_edges_m: &grid.xe,
            y_edges_m: &grid.ye,
            values: &shown,
            title: &title,
            unit: unit_label,
            blocks,
        };
        let png = self.picture(l, &full, "")?;
        // The die view: the cells under the layer's dies, its colours
        // spanning their own range.
        let die_png = match (view.stack.dies_extent(l))
            .and_then(|r| super::crop::crop(&shown, &grid.xe, &grid.ye, &r))
        {
            Some(mut c) => {
                // One die: drawn in its own frame, as its floorplan reads.
                let (title, moved) = match view.stack.only_die(l) {
                    Some(d) => {
                        c.shift(d.origin);
                        let moved = blocks.iter().map(|b| moved_block(b, d.origin)).collect();
                        (
                            format!("layer {l}: {}, die {} ({unit_label})", layer.name, d.name),
                            moved,
                        )
                    }
                    None => (
                        format!("layer {l}: {}, dies ({unit_label})", layer.name),
                        Vec::new(),
                    ),
                };
                let die = HeatMap {
                    x_edges_m: &c.x_edges_m,
                    y_edges_m: &c.y_edges_m,
                    values: &c.values,
                    title: &title,
                    blocks: if moved.is_empty() { blocks } else { &moved },
                    ..full
                };
                Some(self.picture(l, &die, "_die")?)
            }
            None => None,
        };
        Ok(LayerMaps {
            l,
            shown,
            png: Some(png),
            die_png,
            stats,
            hotspot,
        })
    }

    /// The PNG bytes of `map`, a heat map of layer `l` (file
    /// `<stem><suffix>.png` in errors).
    fn picture(&self, l: usize, map: &HeatMap, suffix: &str) -> Result<Vec<u8>, OutputError> {
        let image_error = |message: String| OutputError::Image {
            path: self.dir.join(format!("{}{suffix}.png", self.stem(l))),
            message,
        };
        let image = png::render(map).map_err(|e| image_error(e.to_string()))?;
        png::encode(&image).map_err(|e| image_error(e.to_string()))
    }
}

/// Block `b` in a frame whose (0, 0) is `origin` (domain coordinates).
fn moved_block(b: &crate::power::Block, (ox, oy): (f64, f64)) -> crate::power::Block {
    let rects = (b.rects.iter())
        .map(|r| crate::geometry::Rect {
            x0: r.x0 - ox,
            y0: r.y0 - oy,
            x1: r.x1 - ox,
            y1: r.y1 - oy,
        })
        .collect();
    crate::power::Block { rects, ..b.clone() }
}

/// blocks.csv and blocks.steady (when some layer names blocks; HotSpot's
/// layout `hotspot_steady` instead when given), probes.csv, field.vtr and
/// field.npy, as asked for.
fn stream_tables(
    sink: &mut dyn Sink,
    view: &SteadyView,
    opts: &OutputOptions,
    dir: &Path,
    stats: &[super::blocks::BlockStats],
    hotspot_steady: Option<&str>,
) -> Result<(), OutputError> {
    let (grid, unit) = (view.grid, opts.unit);
    // A stack without named blocks (raster or uniform power, no floorplan)
    // writes no blocks.csv / blocks.steady rather than empty ones.
    if !stats.is_empty() {
        let blocks = blocks_csv(stats, unit).map_err(|source| OutputError::Io {
            path: dir.join("blocks.csv"),
            source,
        })?;
        sink.file("blocks.csv", &mut |w| w.write_all(blocks.as_bytes()))?;
        if hotspot_steady.is_none() {
            let steady = blocks_steady(stats, opts.block_map);
            sink.file("blocks.steady", &mut |w| w.write_all(steady.as_bytes()))?;
        }
    }
    if let Some(steady) = hotspot_steady {
        sink.file("blocks.steady", &mut |w| w.write_all(steady.as_bytes()))?;
    }
    if !view.summary.probes.is_empty() {
        let probes =
            csv::probes_csv(&view.summary.probes, unit).map_err(|source| OutputError::Io {
                path: dir.join("probes.csv"),
                source,
            })?;
        sink.file("probes.csv", &mut |w| w.write_all(probes.as_bytes()))?;
    }
    if opts.vtk {
        let vtr = super::vtk::thermal_vtr(view, unit);
        sink.file("field.vtr", &mut |w| w.write_all(&vtr))?;
    }
    if let Some(dtype) = opts.npy {
        // Per layer, the plane cells without material (empty: none).
        let absent: Vec<Vec<bool>> = view
            .stack
            .layers
            .iter()
            .zip(view.power)
            .map(|(l, p)| crate::assemble::absent_plane(grid, p, l.material))
            .collect();
        let absent_at = |z: usize| {
            absent
                .get(grid.layer_of_z[z])
                .map_or(&[][..], Vec::as_slice)
        };
        sink.file("field.npy", &mut |w| {
            super::npy::write_field(
                w,
                dtype,
                (grid.nx, grid.ny, grid.nz),
                view.temperature_k,
                unit,
                &absent_at,
            )
        })?;
    }
    Ok(())
}

/// The summary as written: the view's, with the `outputs` phase timed from
/// `t0`, the rest of the wall time as `other` and the host peak RSS now.
fn timed_summary(view: &SteadyView, t0: std::time::Instant) -> Summary {
    let mut summary = view.summary.clone();
    summary
        .timings_s
        .push(("outputs".into(), t0.elapsed().as_secs_f64()));
    summary.timings_detail_s.extend(crate::profile::take());
    if let Some(start) = summary.started {
        let wall = start.elapsed().as_secs_f64();
        let timed: f64 = summary.timings_s.iter().map(|t| t.1).sum();
        summary
            .timings_s
            .push(("other".into(), (wall - timed).max(0.0)));
        summary.wall_s = Some(wall);
    }
    summary.host_peak_rss_bytes = crate::backend::cpu::peak_rss_bytes();
    summary
}

/// Writes `files` into `dir` through one [`Transaction`] that owns `owned`.
pub(crate) fn commit(
    dir: &Path,
    files: &[Rendered],
    owned: Owned,
) -> Result<Vec<PathBuf>, OutputError> {
    let txn = Transaction::begin(dir, owned)?;
    stage(&txn, Path::new(""), files)?;
    txn.commit()
}

/// Writes `files` under `sub` of the transaction's staging directory.
pub(crate) fn stage(txn: &Transaction, sub: &Path, files: &[Rendered]) -> Result<(), OutputError> {
    for f in files {
        txn.write(&sub.join(&f.name), &f.bytes)?;
    }
    Ok(())
}
