//! What `cuth topopt` leaves under `--out`: the element densities as a VTK
//! image for ParaView, PNG views (mid-plane slice and max-projection along
//! each axis), a binary STL of the ρ = 0.5 isosurface, the per-iteration
//! history as CSV and `summary.json`. It reads the final densities and the
//! optimizer's history and changes nothing upstream.
//!
//! CONTRACT:
//! - `write_outputs(dir, &DensityField, &[HistoryRow], &summary) -> anyhow::Result<Vec<PathBuf>>`
//!   checks the field, renders every file in memory, then commits them with
//!   the output transaction of `crate::output` (private staging, lock,
//!   renames, stale files removed), so an error leaves no half-written file;
//!   it returns the written paths.
//! - Each file is also available as bytes or text on its own:
//!   [`vtk_image`], [`view_pngs`], [`isosurface`] + [`stl_binary`],
//!   [`history_csv`], [`summary_json`]. They expect a field that passed
//!   [`DensityField::check`]; given one that did not, they do not panic but
//!   their output is meaningless.
//! - [`progress_bar`] and [`progress_message`] give the optimizer loop its
//!   stderr progress bar.
//!
//! Files: `views` (PNG), `mc_tables` + `marching_cubes` (isosurface),
//! `stl`, `history`, `summary`, `progress`. `scripts/check_topopt_outputs.py`
//! reads an output folder with VTK's own reader and trimesh, outside CI.

use crate::output::write::{commit, Rendered};
use anyhow::Context;
use std::path::{Path, PathBuf};

mod history;
mod marching_cubes;
mod mc_tables;
mod progress;
mod stl;
mod summary;
mod views;

pub use history::history_csv;
pub use marching_cubes::{isosurface, Mesh};
pub use progress::{progress_bar, progress_message};
pub use stl::stl_binary;
pub use summary::summary_json;
pub use views::{view_images, view_pngs};

/// Element densities of a structured hex mesh. Element (ex, ey, ez) has index
/// e = ex + nelx*(ey + nely*ez); every element is a cube of edge h (metres or
/// the problem's length unit); the domain spans [0, nelx*h] × [0, nely*h] × [0, nelz*h].
#[derive(Clone, Copy, Debug)]
pub struct DensityField<'a> {
    pub nelx: usize,
    pub nely: usize,
    pub nelz: usize,
    pub h: f64,
    pub rho: &'a [f64],
}

/// One optimizer iteration, as written to `history.csv` (columns in this order).
#[derive(Clone, Debug, PartialEq)]
pub struct HistoryRow {
    pub iteration: usize,
    pub compliance: f64,
    /// Volume fraction of the physical (filtered, projected) densities.
    pub volume: f64,
    /// Measure of non-discreteness, 4·mean(ρ(1−ρ)) in [0, 1].
    pub grayness: f64,
    pub cg_iterations: usize,
    /// Wall time of this iteration.
    pub seconds: f64,
    /// Heaviside projection sharpness in force.
    pub beta: f64,
    /// SIMP penalty in force.
    pub penal: f64,
}

/// Why a [`DensityField`] cannot be written.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FieldError {
    #[error("density field has a zero dimension ({nelx} × {nely} × {nelz} elements)")]
    Empty {
        nelx: usize,
        nely: usize,
        nelz: usize,
    },
    #[error("density field of {nelx} × {nely} × {nelz} elements is too large to index")]
    TooLarge {
        nelx: usize,
        nely: usize,
        nelz: usize,
    },
    #[error("density field has {got} values for {nelx} × {nely} × {nelz} = {want} elements")]
    Length {
        nelx: usize,
        nely: usize,
        nelz: usize,
        want: usize,
        got: usize,
    },
    #[error("element size h = {0} is not a positive finite length")]
    ElementSize(f64),
}

impl DensityField<'_> {
    /// Number of elements, `nelx·nely·nelz` (saturating; see [`Self::check`]).
    pub fn len(&self) -> usize {
        self.nelx
            .saturating_mul(self.nely)
            .saturating_mul(self.nelz)
    }

    /// True when some dimension is zero.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The field is consistent: non-zero sizes, one density per element and a
    /// positive finite `h`. Densities themselves may be anything; the writers
    /// show non-finite values as such (or as void in the isosurface).
    pub fn check(&self) -> Result<(), FieldError> {
        let (nelx, nely, nelz) = (self.nelx, self.nely, self.nelz);
        if nelx == 0 || nely == 0 || nelz == 0 {
            return Err(FieldError::Empty { nelx, nely, nelz });
        }
        let want = nelx
            .checked_mul(nely)
            .and_then(|n| n.checked_mul(nelz))
            .ok_or(FieldError::TooLarge { nelx, nely, nelz })?;
        if self.rho.len() != want {
            return Err(FieldError::Length {
                nelx,
                nely,
                nelz,
                want,
                got: self.rho.len(),
            });
        }
        if !(self.h.is_finite() && self.h > 0.0) {
            return Err(FieldError::ElementSize(self.h));
        }
        Ok(())
    }

    /// Density of element (ex, ey, ez); NaN when out of range, so a
    /// malformed field shows as missing data instead of panicking.
    pub fn at(&self, ex: usize, ey: usize, ez: usize) -> f64 {
        if ex >= self.nelx || ey >= self.nely || ez >= self.nelz {
            return f64::NAN;
        }
        self.rho
            .get(ex + self.nelx * (ey + self.nely * ez))
            .copied()
            .unwrap_or(f64::NAN)
    }
}

/// The isosurface level written to `design.stl`.
pub const STL_LEVEL: f64 = 0.5;

/// Writes into `dir` (created if needed) and returns the paths, in order:
/// `density.vti`, `view_x.png`, `view_y.png`, `view_z.png`, `design.stl`,
/// `history.csv`, `summary.json`.
pub fn write_outputs(
    dir: &Path,
    field: &DensityField,
    history: &[HistoryRow],
    summary: &serde_json::Value,
) -> anyhow::Result<Vec<PathBuf>> {
    field
        .check()
        .with_context(|| format!("cannot write topopt outputs to {}", dir.display()))?;
    let mut files = vec![Rendered {
        name: "density.vti".into(),
        bytes: vtk_image(field),
    }];
    let views = view_pngs(field)
        .with_context(|| format!("{}: cannot encode the PNG views", dir.display()))?;
    files.extend(
        views
            .into_iter()
            .map(|(name, bytes)| Rendered { name, bytes }),
    );
    let mesh = isosurface(field, STL_LEVEL);
    anyhow::ensure!(
        u32::try_from(mesh.triangles.len()).is_ok(),
        "{}: the isosurface has {} triangles, more than binary STL can count",
        dir.join("design.stl").display(),
        mesh.triangles.len()
    );
    files.push(Rendered {
        name: "design.stl".into(),
        bytes: stl_binary(&mesh, "rho = 0.5 isosurface"),
    });
    drop(mesh);
    files.push(Rendered {
        name: "history.csv".into(),
        bytes: history_csv(history).into_bytes(),
    });
    files.push(Rendered {
        name: "summary.json".into(),
        bytes: summary_json(summary)
            .with_context(|| format!("{}", dir.join("summary.json").display()))?
            .into_bytes(),
    });
    Ok(commit(dir, &files, crate::output::Owned::Topopt)?)
}

#[cfg(test)]
mod tests;

/// `density.vti`: the densities as VTK XML ImageData, one `Float64` cell
/// value per element, through the one VTK writer ([`crate::output::vtk`]).
pub fn vtk_image(field: &DensityField) -> Vec<u8> {
    use crate::output::vtk::{vtk_xml, CellArray, Geometry};
    vtk_xml(
        &Geometry::Image {
            cells: [field.nelx, field.nely, field.nelz],
            spacing: [field.h; 3],
        },
        &[CellArray {
            name: "density",
            components: 1,
            values: field.rho,
        }],
    )
}
