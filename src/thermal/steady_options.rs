//! What a steady solve is asked and hands back: its options, its outcome
//! (the field, or the maps and block statistics kept of it), what a caller
//! has prepared for it, and how it fails. Apart from the driver
//! (`thermal::steady`), so that the linear path, the Picard iteration and
//! the device statistics share them without depending on one another.

use super::block_stats::BlockStats;
use super::summary::Summary;
use crate::backend::{Backend, BackendError};
use crate::grid::Grid;
use crate::linalg::{CgParams, PrecondInfo, PrecondKind, PrecondOptions, SolveError, Stop};
use crate::power::{LayerPower, PowerError};
use crate::stack::Stack;
use crate::thermal::assembly_input::InputParts;
use crate::thermal::nonlinear::{NonlinearError, NonlinearOptions};
use crate::thermal::summarize::PowerSums;

#[derive(Clone, Debug)]
pub struct SteadyOptions {
    pub precond: PrecondKind,
    pub rtol: f64,
    pub max_iter: usize,
    pub precond_opts: PrecondOptions,
    /// Read the residual back every this many iterations (see `CgParams`);
    /// 0 leaves it to the backend (`Backend::check_interval`).
    pub check_every: usize,
    /// The outer iteration of temperature-dependent stacks (unused by
    /// linear ones).
    pub nonlinear: NonlinearOptions,
}

impl SteadyOptions {
    /// Solver settings from the stack's `[solver]` table over built-in defaults.
    pub fn from_stack(stack: &Stack, default_precond: PrecondKind) -> SteadyOptions {
        let mut precond_opts = PrecondOptions::default();
        if let Some(d) = stack.solver.chebyshev_degree {
            precond_opts.chebyshev_degree = d;
        }
        SteadyOptions {
            precond: stack.solver.precond.unwrap_or(default_precond),
            rtol: stack.solver.rtol.unwrap_or(1e-8),
            max_iter: stack.solver.max_iter.unwrap_or(20_000),
            precond_opts,
            check_every: 0,
            nonlinear: NonlinearOptions::default(),
        }
    }

    /// PCG's parameters for these options on `be`, stopping at `stop`.
    /// PCG's parameters; the residual is read back every `check_every`
    /// iterations, by default as often as `m` (then `be`) prefers.
    pub fn cg_params<B: Backend>(&self, be: &B, m: &dyn PrecondInfo, stop: Stop) -> CgParams {
        CgParams {
            stop,
            max_iter: self.max_iter,
            check_every: match self.check_every {
                0 => m.check_interval().unwrap_or(be.check_interval()),
                k => k,
            },
            ..CgParams::default()
        }
    }
}

/// The coolant of a solved stack, for the outputs: per cavity layer its
/// plane of coolant temperatures (K; NaN where a cell is a wall), and
/// every coolant cell (the `--vtk` field marks them).
#[derive(Clone, Debug, Default)]
pub struct CoolantField {
    /// (layer index, map `x + nx*y`).
    pub maps: Vec<(usize, Vec<f64>)>,
    pub cells: Vec<u32>,
    /// Per cavity layer each line's outlet, (K, ṁ·c W/K).
    pub outlets: std::collections::BTreeMap<usize, Vec<(f64, f64)>>,
}

pub struct SteadyOutcome {
    pub grid: Grid,
    /// Temperature of every cell, K.
    pub temperature_k: Vec<f64>,
    pub power: Vec<LayerPower>,
    pub summary: Summary,
    /// The coolant of a liquid-cooled stack; `None` without cavities.
    pub coolant: Option<CoolantField>,
}

/// What of the solved field the caller keeps on the host.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KeepField {
    /// T of every cell ([`SteadyOutcome::temperature_k`]).
    #[default]
    Whole,
    /// Only the maps of these layers and, unless a device reduced their
    /// blocks' statistics ([`LayerMaps::blocks`]), of every layer with
    /// named blocks (whose statistics read its map); `temperature_k` is
    /// left empty and the field is reduced on the device or piece by piece
    /// as it comes off it.
    Maps(Vec<usize>),
}

/// What a solve keeping [`KeepField::Maps`] hands the outputs besides the
/// summary (empty with [`KeepField::Whole`]).
#[derive(Debug, Default)]
pub struct LayerMaps {
    /// Per layer its map (K, mean over its z cells, index `x + nx*y`),
    /// where kept.
    pub maps: Vec<Option<Vec<f64>>>,
    /// Per layer its blocks' statistics where a device reduced them (then
    /// the layer's map is kept only if asked for).
    pub blocks: Vec<Option<Vec<BlockStats>>>,
}

/// What a caller hands [`solve_steady_for`](super::steady::solve_steady_for) besides the stack:
/// the power it has rasterized already and the assembly input's parts it
/// built from it (the CLI does both while the device opens), and whether
/// the device buffers may be left to the process exit.
#[derive(Debug, Default)]
pub struct Prepared {
    pub power: Option<Vec<LayerPower>>,
    /// Built from `power` (with the same stack and grid).
    pub parts: Option<InputParts>,
    /// Likewise.
    pub sums: Option<PowerSums>,
    /// The process exits after this solve: the solver's device buffers are
    /// not freed (the driver reclaims them at exit, as it does the
    /// backend's context, which the CLI never tears down). Library callers
    /// leave this off.
    pub leave_buffers_to_exit: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum SteadyError {
    #[error(transparent)]
    Power(#[from] PowerError),
    #[error(transparent)]
    Solve(#[from] SolveError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Nonlinear(#[from] NonlinearError),
    /// A liquid-cooled cavity the solve cannot take.
    #[error("{0}")]
    Cavity(String),
    /// Assembly produced an invalid matrix: a bug, never a user's input.
    #[error("internal error: the assembled matrix is invalid: {0}")]
    Internal(String),
}
