//! Render-then-commit for a steady result: every file is produced in memory
//! first (PNG bytes, CSV and JSON text), so a rendering or encoding failure
//! happens before the disk is touched. Only then are the files staged and
//! committed through one output [`Transaction`] (private staging directory,
//! lock, rename, stale layers removed), so no truncated PNG or CSV is ever
//! left under its real name.

use super::blocks::{blocks_csv, blocks_steady, layer_block_stats};
use super::png::{self, HeatMap};
use super::transaction::{Owned, Transaction};
use super::{csv, json, OutputError, OutputOptions, SteadyView};
use rayon::prelude::*;
use std::io;
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
    let files = render_steady(dir, view, opts)?;
    commit(dir, &files, Owned::Thermal)
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

/// Every output file in memory, in the order they will be written (`dir`
/// only names the files in error messages).
pub fn render_steady(
    dir: &Path,
    view: &SteadyView,
    opts: &OutputOptions,
) -> Result<Vec<Rendered>, OutputError> {
    let (grid, stack, unit) = (view.grid, view.stack, opts.unit);
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
    if view.temperature_k.len() != grid.len() {
        return Err(invalid(
            dir,
            format!(
                "temperature has {} values for a grid of {} cells",
                view.temperature_k.len(),
                grid.len()
            ),
        ));
    }

    let digits = stack
        .layers
        .len()
        .saturating_sub(1)
        .to_string()
        .len()
        .max(2);
    let unit_label = png::unit_label(unit);
    // Layers are rendered in parallel (a PNG takes milliseconds even for a
    // tiny grid: a stack of 10 000 layers spent most of its time here).
    let per_layer = stack
        .layers
        .par_iter()
        .enumerate()
        .map(|(l, layer)| {
            let mut map_k = grid.layer_map(view.temperature_k, l);
            if let Some(p) = view.power.get(l) {
                let absent = crate::assemble::absent_plane(grid, p, layer.material);
                for (m, _) in map_k.iter_mut().zip(&absent).filter(|(_, a)| **a) {
                    *m = f64::NAN;
                }
            }
            let shown: Vec<f64> = map_k.iter().map(|&t| unit.convert_k(t)).collect();
            let (raster, rnx, rny, rdx, rdy) = uniform_raster(&shown, grid);
            let stem = format!("{l:0digits$}_{}", sanitize(&layer.name));
            let title = format!("layer {l}: {} ({unit_label})", layer.name);
            let image = png::render(&HeatMap {
                values: &raster,
                nx: rnx,
                ny: rny,
                dx: rdx,
                dy: rdy,
                title: &title,
                unit: unit_label,
            });
            let png_name = format!("{stem}.png");
            let bytes = png::encode(&image).map_err(|e| OutputError::Image {
                path: dir.join(&png_name),
                message: e.to_string(),
            })?;
            let files = [
                Rendered {
                    name: png_name,
                    bytes,
                },
                Rendered {
                    name: format!("{stem}.csv"),
                    bytes: csv::layer_csv_with_coords(&shown, grid).into_bytes(),
                },
            ];
            let stats = match view.power.get(l) {
                Some(power) => layer_block_stats(&layer.name, &map_k, &power.blocks, grid),
                None => Vec::new(),
            };
            Ok((files, stats))
        })
        .collect::<Result<Vec<_>, OutputError>>()?;
    let mut files = Vec::with_capacity(2 * per_layer.len() + 3);
    let mut stats = Vec::new();
    for (f, s) in per_layer {
        files.extend(f);
        stats.extend(s);
    }

    // A stack without named blocks (raster or uniform power, no floorplan)
    // writes no blocks.csv / blocks.steady rather than empty ones.
    if !stats.is_empty() {
        let blocks = blocks_csv(&stats, unit).map_err(|source| OutputError::Io {
            path: dir.join("blocks.csv"),
            source,
        })?;
        files.push(Rendered {
            name: "blocks.csv".into(),
            bytes: blocks.into_bytes(),
        });
        files.push(Rendered {
            name: "blocks.steady".into(),
            bytes: blocks_steady(&stats, opts.block_map).into_bytes(),
        });
    }
    if !view.summary.probes.is_empty() {
        let probes =
            csv::probes_csv(&view.summary.probes, unit).map_err(|source| OutputError::Io {
                path: dir.join("probes.csv"),
                source,
            })?;
        files.push(Rendered {
            name: "probes.csv".into(),
            bytes: probes.into_bytes(),
        });
    }
    if opts.vtk {
        files.push(Rendered {
            name: "field.vtr".into(),
            bytes: super::vtk::thermal_vtr(view, unit),
        });
    }
    let summary = json::summary_json(view.summary).map_err(|source| OutputError::Io {
        path: dir.join("summary.json"),
        source,
    })?;
    files.push(Rendered {
        name: "summary.json".into(),
        bytes: summary.into_bytes(),
    });
    Ok(files)
}

/// Longest side of the uniform raster a non-uniform map is resampled to.
const MAX_RASTER_CELLS: usize = 2048;

/// A map on a uniform raster for the PNG (which draws equal cells): as is on
/// a uniform grid, else resampled to pixels of the smallest cell (at most
/// [`MAX_RASTER_CELLS`] a side), each showing the cell under its centre.
/// Returns (values, nx, ny, dx, dy).
pub fn uniform_raster(
    values: &[f64],
    grid: &crate::grid::Grid,
) -> (Vec<f64>, usize, usize, f64, f64) {
    if grid.is_uniform() {
        return (values.to_vec(), grid.nx, grid.ny, grid.dx[0], grid.dy[0]);
    }
    let min = |w: &[f64]| w.iter().copied().fold(f64::INFINITY, f64::min);
    let (w, l) = (grid.width(), grid.length());
    let d = min(&grid.dx)
        .min(min(&grid.dy))
        .max(w.max(l) / MAX_RASTER_CELLS as f64);
    let (nx, ny) = (
        ((w / d).round() as usize).max(1),
        ((l / d).round() as usize).max(1),
    );
    let (dx, dy) = (w / nx as f64, l / ny as f64);
    let cols: Vec<usize> = (0..nx)
        .map(|i| grid.column_of((i as f64 + 0.5) * dx))
        .collect();
    let mut out = Vec::with_capacity(nx * ny);
    for j in 0..ny {
        let row = grid.row_of((j as f64 + 0.5) * dy) * grid.nx;
        out.extend(cols.iter().map(|&c| values[row + c]));
    }
    (out, nx, ny, dx, dy)
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
