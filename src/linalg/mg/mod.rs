//! Geometric multigrid for the thermal operator, used as a PCG
//! preconditioner (`--precond mg`). A chip stack is a structured
//! box of few, very anisotropic layers (a 2 µm layer couples 10⁴–10⁶ times
//! more strongly in z than in-plane), so the hierarchy coarsens x and y only
//! and smooths whole z columns exactly:
//!
//! - `coarsen`: a tensor-product aggregation (per axis, pairs or singles)
//!   and the rediscretised coarse operator (z faces and ambient summed,
//!   in-plane faces summed × the centre-distance ratio: half the sum on a
//!   uniform grid), face by face, so every level is again a 7-point
//!   Quad-Diag matrix and reuses the backend's matrix storage (built where
//!   the fine matrix lives: on a GPU by `kernels/mg_setup.cu`, so the fine
//!   matrix never goes to the host);
//! - `hierarchy`: which columns to aggregate (2 × 2 on a uniform grid;
//!   size-graded on a non-uniform one, narrow cells first, so cells of high
//!   aspect ratio are coarsened along their strong coupling only), how far
//!   to coarsen, and the dense inverse of the coarsest level;
//! - `cycle`: the symmetric V- (or W-) cycle with zebra z-line smoothing,
//!   written once over [`crate::backend::mg::MultigridOps`]; on a
//!   size-graded hierarchy a coarse level relaxes only the cells its step
//!   changed and their neighbours ([`relaxed`]).
//!
//! The hierarchy runs in f64, or in f32 ([`MgPrecision`]: every level's
//! operator, pivots and vectors, the fine level's matrix included, as f32
//! copies; the residual entering the cycle is rounded to f32 and the
//! correction leaving it widened to f64), inside the f64 PCG, whose
//! operator, vectors and residual stay f64. `Auto` falls back to f64 when
//! PCG stagnates on the f32 cycle, through the same hook as the
//! low-precision Chebyshev levels (`Preconditioner::raise_precision`).

pub mod cycle;
pub mod hierarchy;

pub use crate::matrix::coarsen;
pub use coarsen::{
    coarsen, coarsen_with, line_pivots, relaxed, relaxed_columns, AxisMap, Coarsening,
};
pub use cycle::{Coarse, MgLevels, Multigrid};
pub use hierarchy::{plan, plan_for, plan_graded, CoarsestInverse};

use serde::Serialize;

/// Cycle shape: the coarse correction is one (V) or two (W) cycles of the
/// next level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MgCycle {
    V,
    W,
}

/// What relaxes the z columns, named in the preconditioner's report
/// (`summary.json`). A point smoother fails on thin layers (151 against 10
/// PCG iterations at 128², BENCHMARKS.md's git history),
/// so the z-line smoother is the only one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MgSmoother {
    /// Exact tridiagonal solve per column.
    ZLine,
}

/// Precision of the multigrid hierarchy (`--mg-precision`). PCG's own
/// vectors, product, residual and stopping test are f64 in every mode.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "snake_case")]
pub enum MgPrecision {
    /// Every level in f64.
    #[default]
    F64,
    /// Every level in f32 (operators, pivots, vectors, transfers): half the
    /// bytes a cycle reads, so on a bandwidth-bound GPU about half its time.
    F32,
    /// f32, rebuilt in f64 if PCG stagnates on it.
    Auto,
}

impl MgPrecision {
    pub fn name(self) -> &'static str {
        match self {
            MgPrecision::F64 => "f64",
            MgPrecision::F32 => "f32",
            MgPrecision::Auto => "auto",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct MgOptions {
    pub cycle: MgCycle,
    /// Zebra sweeps (both colours) before and after the coarse correction.
    pub sweeps: usize,
    pub smoother: MgSmoother,
    /// On a size-graded hierarchy, each coarse level relaxes only the cells
    /// its step changed and their neighbours ([`relaxed`]); false relaxes
    /// every cell (the reference the skipping was measured against). A
    /// uniform grid's halving relaxes every cell either way.
    pub skip_unchanged: bool,
    pub precision: MgPrecision,
}

impl Default for MgOptions {
    fn default() -> Self {
        MgOptions {
            cycle: MgCycle::V,
            sweeps: 1,
            smoother: MgSmoother::ZLine,
            skip_unchanged: true,
            precision: MgPrecision::F64,
        }
    }
}

/// One level in `summary.json`.
#[derive(Clone, Debug, Serialize)]
pub struct LevelReport {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// Device bytes this level adds to the fine matrix: the finest, its line
    /// pivots only (8 B a cell; the matrix is `fine_matrix_bytes`); a level
    /// between, its operator without amb (d, gx, gy, gz: released once the
    /// level below is built), pivots, b and x (56 B a cell); the coarsest,
    /// its b, x and dense inverse. In f32 every level stores half as many
    /// bytes, and the finest adds its f32 copy of the matrix (d, gx, gy,
    /// gz), b and x: 28 B a cell instead of 8.
    pub memory_bytes: u64,
    /// (x, y) columns the smoother relaxes per half-sweep pair: every
    /// column, except on a size-graded hierarchy's coarse levels (the
    /// changed cells and their neighbours, [`relaxed`]) and at the coarsest
    /// (none: solved exactly).
    pub relaxed_columns: usize,
}

/// The multigrid part of a preconditioner report.
#[derive(Clone, Debug, Serialize)]
pub struct MgReport {
    /// E.g. `V(1,1)`.
    pub cycle: String,
    /// `halving` (2 × 2, a uniform grid) or `size_graded` (a non-uniform
    /// grid's narrow cells first, `hierarchy::plan_graded`).
    pub coarsening: &'static str,
    pub smoother: MgSmoother,
    /// Finest first.
    pub levels: Vec<LevelReport>,
    /// Sum over the levels.
    pub hierarchy_bytes: u64,
    /// The fine Quad-Diag matrix as stored (d, gx, gy, gz, amb).
    pub fine_matrix_bytes: u64,
    /// The hierarchy's precision now: `f64`, `f32`, or, after `auto` fell
    /// back, `f64 (auto, fell back)`.
    pub precision: String,
}

impl MgReport {
    /// Columns relaxed over all levels per fine column: the smoother's work
    /// per cycle in fine-level smoothings.
    pub fn relaxed_work(&self) -> f64 {
        let fine = &self.levels[0];
        let sum: usize = self.levels.iter().map(|l| l.relaxed_columns).sum();
        sum as f64 / (fine.nx * fine.ny) as f64
    }
}
