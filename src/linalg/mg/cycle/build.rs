//! Building the hierarchy ([`Multigrid::new`]): every coarse operator and
//! its line pivots where the fine matrix lives, the level report, and the
//! coarsest level's dense inverse. Kept apart from the cycle it feeds, which
//! is the part read when reasoning about symmetry and cost.

use super::super::hierarchy::{is_graded, plan_for, CoarsestInverse};
use super::super::{relaxed_columns, LevelReport, MgCycle, MgOptions, MgPrecision, MgReport};
use super::{Coarse, MgLevels, Multigrid};
use crate::backend::mg::MultigridOps;
use crate::linalg::SolveError;

impl<B: MultigridOps> Multigrid<B> {
    /// Builds the hierarchy of `a` where it lives: every coarse
    /// operator and its line pivots by the backend ([`MultigridOps::mg_coarsen`],
    /// [`MultigridOps::mg_line_pivots`]) from the level above, from the
    /// aggregation's small per-axis arrays; only the coarsest level
    /// (≤ [`crate::linalg::mg::hierarchy::COARSEST_MAX_CELLS`] cells) is read on the
    /// host, for its dense inverse. A level's `amb` is released once the
    /// level below it is built ([`MultigridOps::mg_release_ambient`]).
    pub fn new(be: &B, a: &B::Matrix, opts: &MgOptions) -> Result<Self, SolveError> {
        let opts = MgOptions {
            sweeps: opts.sweeps.max(1),
            ..*opts
        };
        be.prepare_multigrid()?;
        let fine = be.mg_shape(a);
        let graded = is_graded(fine.nx, fine.ny, fine.wx, fine.wy);
        let skip = graded && opts.skip_unchanged;
        let steps = plan_for(fine.nx, fine.ny, fine.nz, fine.wx, fine.wy);
        let n = (fine.nx * fine.ny * fine.nz) as u64;
        let mut levels = vec![LevelReport {
            nx: fine.nx,
            ny: fine.ny,
            nz: fine.nz,
            memory_bytes: 0,
            relaxed_columns: 0,
        }];
        let fine_pivots = match steps.is_empty() {
            true => None,
            false => {
                levels[0].memory_bytes = 8 * n;
                levels[0].relaxed_columns = fine.nx * fine.ny;
                Some(be.mg_line_pivots(a)?)
            }
        };
        let mut coarse: Vec<Coarse<B::Matrix, B::Vector>> = Vec::with_capacity(steps.len());
        // The coarsest operator, when it is not the fine one.
        let mut coarsest: Option<B::Matrix> = None;
        for (k, c) in steps.iter().enumerate() {
            let above = match coarse.last() {
                Some(l) => l.a.as_ref().expect("a level above the coarsest"),
                None => a,
            };
            let shape = be.mg_shape(above);
            let (mx, my) = c.axis_maps(shape.wx, shape.wy);
            let ac = be.mg_coarsen(above, &mx, &my)?;
            // The level above is built from and needs its amb no more.
            if let Some(m) = coarse.last_mut().and_then(|l| l.a.as_mut()) {
                be.mg_release_ambient(m)?;
            }
            let nc = c.coarse_len();
            let last = k + 1 == steps.len();
            let (a, pivots) = match last {
                true => {
                    coarsest = Some(ac);
                    (None, None)
                }
                false => {
                    let p = be.mg_line_pivots(&ac)?;
                    (Some(ac), Some(p))
                }
            };
            // Below the coarsest: the matrix without amb (released once the
            // next level is built: d, gx, gy, gz) and pivots; b and x everywhere.
            let arrays = if last { 2 } else { 7 };
            levels.push(LevelReport {
                nx: c.nxc,
                ny: c.nyc,
                nz: c.nz,
                memory_bytes: (arrays * 8 * nc) as u64,
                relaxed_columns: match (last, skip) {
                    (true, _) => 0,
                    (false, true) => relaxed_columns(c),
                    (false, false) => c.nxc * c.nyc,
                },
            });
            coarse.push(Coarse { a, pivots });
        }
        let cur = be.host_matrix(coarsest.as_ref().unwrap_or(a))?;
        let inv = CoarsestInverse::new(&cur).map_err(|e| SolveError::Breakdown {
            iters: 0,
            what: format!(
                "the coarsest multigrid level ({}x{}x{}) is not positive definite (row {})",
                cur.nx, cur.ny, cur.nz, e.row
            ),
        })?;
        levels.last_mut().expect("a level").memory_bytes += (8 * inv.values.len()) as u64;
        let gamma = match opts.cycle {
            MgCycle::V => "V",
            MgCycle::W => "W",
        };
        let report = MgReport {
            cycle: format!("{gamma}({},{})", opts.sweeps, opts.sweeps),
            coarsening: match graded {
                true => "size_graded",
                false => "halving",
            },
            smoother: opts.smoother,
            hierarchy_bytes: levels.iter().map(|l| l.memory_bytes).sum(),
            levels,
            fine_matrix_bytes: 5 * 8 * n,
            precision: "f64".into(),
        };
        let steps = steps
            .iter()
            .map(|c| be.mg_transfer(c))
            .collect::<Result<_, _>>()?;
        let levels = MgLevels {
            opts,
            fine_pivots,
            steps,
            coarse,
            inverse: be.upload(&inv.values)?,
            inverse_n: inv.n,
            skip_unchanged: skip,
        };
        let mg = Multigrid {
            hier: super::Hierarchy::F64 {
                work: levels.work(be, 1)?,
                levels,
            },
            report,
            replay: super::Replay::Fresh,
        };
        match opts.precision {
            MgPrecision::F64 => Ok(mg),
            MgPrecision::F32 | MgPrecision::Auto => Ok(mg.lowered(be, a)?),
        }
    }
}
