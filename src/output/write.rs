//! Render-then-commit for a steady result: every file is produced in memory
//! first (PNG bytes, CSV and JSON text), so a rendering or encoding failure
//! happens before the disk is touched. Only then is `dir` created and each
//! file written to `<dir>/.<name>.tmp`; when all temporaries are written they
//! are renamed into place. A failed write removes the temporaries (and `dir`
//! if this call created it and it is empty), so no truncated PNG or CSV is
//! ever left under its real name.

use super::blocks::{blocks_csv, blocks_steady, layer_block_stats};
use super::png::{self, HeatMap};
use super::{csv, json, OutputError, OutputOptions, SteadyView};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// One output file, rendered (also used by `topopt::output`).
pub(crate) struct Rendered {
    pub(crate) name: String,
    pub(crate) bytes: Vec<u8>,
}

/// Writes the steady outputs into `dir` and returns their paths:
/// per layer `<NN>_<name>.png` and `<NN>_<name>.csv` (NN = layer index,
/// bottom = 00, at least two digits; the name reduced to `[A-Za-z0-9_-]`),
/// then `blocks.csv`, `blocks.steady` (both always written, header-only or
/// empty when no layer has blocks, so the set of files is the same every run)
/// and `summary.json`.
pub fn write_steady(
    dir: &Path,
    view: &SteadyView,
    opts: &OutputOptions,
) -> Result<Vec<PathBuf>, OutputError> {
    let files = render(dir, view, opts)?;
    commit(dir, &files)
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

/// Every output file in memory, in the order they will be written.
fn render(
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
    let mut files = Vec::new();
    let mut stats = Vec::new();
    for (l, layer) in stack.layers.iter().enumerate() {
        let map_k = grid.layer_map(view.temperature_k, l);
        let shown: Vec<f64> = map_k.iter().map(|&t| unit.convert_k(t)).collect();
        let stem = format!("{l:0digits$}_{}", sanitize(&layer.name));

        let title = format!("layer {l}: {} ({unit_label})", layer.name);
        let image = png::render(&HeatMap {
            values: &shown,
            nx: grid.nx,
            ny: grid.ny,
            dx: grid.dx,
            dy: grid.dy,
            title: &title,
            unit: unit_label,
        });
        let png_name = format!("{stem}.png");
        let bytes = png::encode(&image).map_err(|e| OutputError::Image {
            path: dir.join(&png_name),
            message: e.to_string(),
        })?;
        files.push(Rendered {
            name: png_name,
            bytes,
        });
        files.push(Rendered {
            name: format!("{stem}.csv"),
            bytes: csv::layer_csv(&shown, grid.nx, grid.ny).into_bytes(),
        });

        if let Some(power) = view.power.get(l) {
            stats.extend(layer_block_stats(&layer.name, &map_k, &power.blocks, grid));
        }
    }

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
        bytes: blocks_steady(&stats).into_bytes(),
    });
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

/// Removes what a failed [`commit`] staged; errors are ignored because the
/// original error is the one worth reporting.
fn clean_up(dir: &Path, staged: &[PathBuf], created_dir: bool) {
    for tmp in staged {
        let _ = fs::remove_file(tmp);
    }
    if created_dir {
        // Only succeeds when empty: never removes anything but our own dir.
        let _ = fs::remove_dir(dir);
    }
}

/// Writes all temporaries, then renames them into place.
pub(crate) fn commit(dir: &Path, files: &[Rendered]) -> Result<Vec<PathBuf>, OutputError> {
    let created_dir = !dir.is_dir();
    fs::create_dir_all(dir).map_err(|source| OutputError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut staged = Vec::with_capacity(files.len());
    for f in files {
        let tmp = dir.join(format!(".{}.tmp", f.name));
        // Staged before writing: a failed write may still leave a partial file.
        staged.push(tmp.clone());
        if let Err(source) = fs::write(&tmp, &f.bytes) {
            clean_up(dir, &staged, created_dir);
            return Err(OutputError::Io { path: tmp, source });
        }
    }
    let mut written = Vec::with_capacity(files.len());
    for (tmp, f) in staged.iter().zip(files) {
        let path = dir.join(&f.name);
        if let Err(source) = fs::rename(tmp, &path) {
            // Files renamed so far are complete; only temporaries are removed.
            clean_up(dir, &staged, false);
            return Err(OutputError::Io { path, source });
        }
        written.push(path);
    }
    Ok(written)
}
