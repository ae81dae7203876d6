//! Geometric multigrid preconditioner for the elastic solve (`cuth topopt
//! --precond mg`): a symmetric cycle over hex levels ([`transfer::plan`],
//! odd counts halved as a padded mesh), every level's operator the existing
//! matrix-free [`ElasticOperator`] on its own mesh with a rediscretised box
//! element ([`hex8_box_stiffness`], edges in fine mesh units) and coarsened
//! moduli (coarse Eₑ = mean of its children's). Per level, finest first:
//!
//! ```text
//!   x   = S b                      Chebyshev–Jacobi from 0 (degree k)
//!   b'  = Pᵀ (b − A x)             restrict
//!   x'  = cycle(level + 1)         coarsest: CoarseSolver (CG or dense inverse)
//!   x  += P x'                     prolong_add
//!   x  += S (b − A x)              the same polynomial again
//! ```
//!
//! The N largest coarse levels (`--mg-w-levels N`, default [`W_LEVELS`] =
//! 2) are solved by two passes of the cycle below them (a W-cycle there, V
//! below; `mg/cycle.rs`). The V-cycle's worst design steps follow a jump
//! of the continuation (p or β), when the warm start is poor and the design
//! gray:
//! torsion 60×20×20 (CPU, first 95 steps) needs 26–36 CG iterations right
//! after each jump against ~15 between; with N = 2 the mean per step falls
//! from 14.9 to 9.5 and the max from 36 to 20 (N = 1: 10.9 / 24; smoother
//! degree 4: 13.0 / 31; fine degree 6: 13.1 / 32; interval ratio 20:
//! 13.3 / 32). Arithmetic coarse moduli measured better than power means
//! (p = ½: 21.9 / 45, p = 2: 17.5 / 47 on the same run).
//!
//! S = q(D⁻¹A)D⁻¹ is a fixed polynomial in D⁻¹A, so pre- and post-smoothing
//! are A-adjoint and M is symmetric; positive because the Chebyshev interval
//! covers λmax(D⁻¹A): its bound is [`element_jacobi_bound`], which holds for
//! every design, so no eigenvalue estimate is needed. The coarsest solve is
//! an inner Jacobi-PCG (see [`COARSE_RTOL`]; linear only when converged
//! tight) or a dense inverse ([`dense`]). Fixed DOFs: identity rows on every
//! level, zero rows/columns in P ([`transfer`]). Allocated once per run
//! ([`ElasticMg::new`]); each design iteration [`ElasticMg::refresh`]es the
//! coarse moduli and diagonals on the device, and every solve of the
//! iteration reuses it.

mod cycle;
pub mod dense;
mod smoother;
pub mod transfer;

pub use smoother::element_jacobi_bound;
use smoother::smoother_opts;
pub use transfer::{plan, plan_to, Transfer, COARSEST_DOFS};

use super::backend::{ElasticBackend, OpPrecision, OperatorKind};
use super::element::{hex8_box_stiffness, ElementMatrix};
use super::mesh::Mesh;
use super::operator::ElasticOperator;
use crate::backend::BackendError;
use crate::linalg::precond::chebyshev::Chebyshev;
use crate::linalg::precond::{PrecondInfo, PrecondReport, Preconditioner};
use crate::linalg::{LinearOperator, PcgWork, SolveError};
use cycle::{cycle, Ctx, Scratch};
use std::collections::BTreeMap;

/// Relative residual of the coarsest inner CG (`--mg-coarse-rtol`). Loose:
/// on cantilever 40×20×10 (CPU) 1e-2 and 1e-8 take the same 609 outer CG
/// iterations over 102 design steps, 25 s against 44 s. M then varies
/// slightly between applications (CG is not linear in b); the outer f64
/// true-residual loop of `refine` absorbs it.
pub const COARSE_RTOL: f64 = 1e-2;
/// Coarse levels solved by two passes (`--mg-w-levels`; 0 = V-cycle). 2:
/// on an H200 (2026-11-30) CG per design step, mean / max, V against 2:
/// torsion 499 k 15.8 / 35 → 8.7 / 18 (wall 2.96 → 2.87 s), cantilever 1 M
/// 11.9 / 24 → 6.6 / 13 (2.87 → 2.93 s), 4.9 M 11.3 / 24 → 6.4 / 12
/// (10.35 → 9.00 s), 50.65 M 12.7 / 31 → 7.3 / 17 (96.6 → 73.8 s). 3 cuts
/// iterations further (1 M: 5.6 / 10) but costs time (3.11 s): the extra
/// passes over small levels are launch-bound on a GPU.
pub const W_LEVELS: usize = 2;
/// At most this many levels.
pub const MAX_LEVELS: usize = 10;

/// How the coarsest level is solved (`--mg-coarse`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CoarseSolver {
    /// Jacobi-PCG to `--mg-coarse-rtol` ([`COARSE_RTOL`]); the hierarchy
    /// stops at [`COARSEST_DOFS`].
    #[default]
    Cg,
    /// The hierarchy goes down to [`dense::DENSE_COARSEST_DOFS`], whose
    /// dense inverse is formed on the host once per design step and applied
    /// by one matrix-vector product ([`dense`]); CG where the plan cannot
    /// get below [`dense::DENSE_MAX_DOFS`] (reported as `coarse_dense` 0).
    Dense,
    /// As `Dense`, with the coarsest operator the Galerkin product PᵀKP of
    /// the level above (formed column by column through the matrix-free
    /// operator and the transfers, once per design step) instead of the
    /// rediscretised one. The levels between stay rediscretised.
    Galerkin,
}

/// The levels [`ElasticMg`] builds on `mesh` for the coarse solver `coarse`.
pub fn plan_for(mesh: Mesh, coarse: CoarseSolver) -> Vec<(Mesh, [f64; 3])> {
    let coarsest_dofs = match coarse {
        CoarseSolver::Cg => COARSEST_DOFS,
        CoarseSolver::Dense | CoarseSolver::Galerkin => dense::DENSE_COARSEST_DOFS,
    };
    plan_to(mesh, MAX_LEVELS, coarsest_dofs)
}

/// The dense coarsest solve's data ([`CoarseSolver::Dense`]).
struct DenseCoarse<B: ElasticBackend> {
    mesh: Mesh,
    ke: ElementMatrix,
    fixed: Vec<bool>,
    /// K_c⁻¹, n×n row-major, on the device.
    inv: B::Vector,
    /// K_c = PᵀKP of the level above rather than rediscretised.
    galerkin: bool,
}

/// A level below the finest.
pub(super) struct Level<B: ElasticBackend> {
    op: ElasticOperator<B>,
    /// None on the coarsest level (solved by CG).
    smoother: Option<Chebyshev<B>>,
    b: B::Vector,
    x: B::Vector,
    r: B::Vector,
    t: B::Vector,
    /// W-cycle scratch (the residual after the first pass and its
    /// correction), allocated on the level's first second pass.
    w: Option<(B::Vector, B::Vector)>,
}

pub struct ElasticMg<B: ElasticBackend> {
    fine_smoother: Option<Chebyshev<B>>,
    fine_r: B::Vector,
    fine_t: B::Vector,
    levels: Vec<Level<B>>,
    transfers: Vec<B::ElasticTransfer>,
    coarse_work: PcgWork<B>,
    s: B::Scalars,
    /// s[0] = 1, for x = t + 1·x.
    one: B::Scalars,
    meshes: Vec<Mesh>,
    /// λmax bounds of the smoothers, finest first.
    bounds: Vec<f64>,
    /// Inner CG iterations of the coarsest solves so far.
    pub coarse_iterations: usize,
    coarse_rtol: f64,
    dense: Option<DenseCoarse<B>>,
    /// Coarse levels with two coarse passes ([`Self::with_w_levels`]).
    w_levels: usize,
}

impl<B: ElasticBackend> ElasticMg<B> {
    /// The hierarchy for the fine operator `a` on `mesh` (moduli set) with
    /// fixed mask `fixed`, Poisson ratio `nu`: every level allocated here,
    /// once; [`Self::refresh`] updates it for new moduli.
    pub fn new(
        be: &B,
        a: &mut ElasticOperator<B>,
        mesh: Mesh,
        fixed: &[bool],
        nu: f64,
        coarse: CoarseSolver,
    ) -> Result<Self, SolveError> {
        let levels_plan = plan_for(mesh, coarse);
        let opts = smoother_opts();
        let n = mesh.dofs();
        let single = levels_plan.len() == 1;
        let bound = |size: [f64; 3]| element_jacobi_bound(&hex8_box_stiffness(nu, size));
        let mut bounds = vec![bound([1.0; 3])];
        let fine_smoother = match single {
            true => None,
            false => Some(Chebyshev::with_bound(be, n, bounds[0], &opts)?),
        };
        let (mut levels, mut transfers) = (Vec::new(), Vec::new());
        let (mut prev_fixed, mut prev_mesh) = (fixed.to_vec(), mesh);
        let mut dense = None;
        for (k, &(m, size)) in levels_plan.iter().enumerate().skip(1) {
            let t = Transfer::new(prev_mesh, m, &prev_fixed);
            let ke = hex8_box_stiffness(nu, size);
            let raw = be.elastic_new(&m, &ke, &t.coarse_fixed, OperatorKind::NodeCentred)?;
            let op = ElasticOperator::new(be, raw, m.dofs())?;
            let coarsest = k + 1 == levels_plan.len();
            let dense_wanted = matches!(coarse, CoarseSolver::Dense | CoarseSolver::Galerkin);
            if coarsest && dense_wanted && m.dofs() <= dense::DENSE_MAX_DOFS {
                dense = Some(DenseCoarse {
                    mesh: m,
                    ke: ke.clone(),
                    fixed: t.coarse_fixed.clone(),
                    inv: be.zeros(m.dofs() * m.dofs())?,
                    galerkin: coarse == CoarseSolver::Galerkin,
                });
            }
            bounds.push(bound(size));
            let smoother = match coarsest {
                true => None,
                false => Some(Chebyshev::with_bound(be, m.dofs(), bounds[k], &opts)?),
            };
            transfers.push(be.elastic_transfer_new(&t)?);
            let nd = m.dofs();
            levels.push(Level {
                op,
                smoother,
                b: be.zeros(nd)?,
                x: be.zeros(nd)?,
                r: be.zeros(nd)?,
                t: be.zeros(nd)?,
                w: None,
            });
            (prev_fixed, prev_mesh) = (t.coarse_fixed, m);
        }
        let coarse_n = levels.last().map_or(n, |l: &Level<B>| l.op.len());
        let mut one = be.scalars(1)?;
        let mut unit = vec![0.0; n];
        unit[0] = 1.0;
        let unit = be.upload(&unit)?;
        be.dot(&unit, &unit, &mut one, 0)?; // s[0] = 1
        let mut mg = ElasticMg {
            fine_smoother,
            fine_r: be.zeros(n)?,
            fine_t: be.zeros(n)?,
            levels,
            transfers,
            coarse_work: PcgWork::new(be, coarse_n)?,
            s: be.scalars(1)?,
            one,
            meshes: levels_plan.iter().map(|(m, _)| *m).collect(),
            bounds,
            coarse_iterations: 0,
            coarse_rtol: COARSE_RTOL,
            dense,
            w_levels: W_LEVELS,
        };
        mg.refresh(be, a)?;
        Ok(mg)
    }

    /// After the fine moduli changed (a new design iteration): the coarse
    /// moduli (mean of the children, on the device) and every coarse
    /// level's diagonal. Nothing is allocated and nothing read back.
    pub fn refresh(&mut self, be: &B, a: &mut ElasticOperator<B>) -> Result<(), SolveError> {
        let mut fine = &a.op;
        for (level, t) in self.levels.iter_mut().zip(&self.transfers) {
            be.elastic_coarsen_moduli(t, fine, &mut level.op.op)?;
            level.op.refresh_diagonal(be)?;
            fine = &level.op.op;
        }
        let galerkin = self.dense.as_ref().is_some_and(|d| d.galerkin);
        let k = match galerkin {
            true => Some(self.galerkin_coarsest(be, a)?),
            false => None,
        };
        if let (Some(d), Some(last)) = (self.dense.as_mut(), self.levels.last()) {
            // The coarsest moduli (a few dozen values) to the host, K_c⁻¹ back.
            let k = match k {
                Some(k) => k,
                None => {
                    let e = be.elastic_moduli(&last.op.op)?;
                    dense::assemble(&d.mesh, &d.ke, &e, &d.fixed)
                }
            };
            let n = d.mesh.dofs();
            let inv = dense::spd_inverse(&k, n).ok_or_else(|| {
                BackendError::Numerical("multigrid: the coarsest operator is not SPD".into())
            })?;
            d.inv = be.upload(&inv)?;
        }
        Ok(())
    }

    /// PᵀKP of the level above the coarsest (dense, row-major; identity on
    /// fixed coarse DOFs), column j = Pᵀ K P e_j in f64.
    fn galerkin_coarsest(
        &mut self,
        be: &B,
        a: &mut ElasticOperator<B>,
    ) -> Result<Vec<f64>, BackendError> {
        let nl = self.levels.len();
        let (above, coarsest) = self.levels.split_at_mut(nl - 1);
        let op = match above.last_mut() {
            Some(l) => &mut l.op,
            None => a,
        };
        let t = &self.transfers[nl - 1];
        let (nf, nc) = (op.len(), coarsest[0].op.len());
        let (mut xf, mut yf) = (be.zeros(nf)?, be.zeros(nf)?);
        let zero = be.zeros(nf)?;
        let mut col = be.zeros(nc)?;
        let mut k = vec![0.0; nc * nc];
        for j in 0..nc {
            let mut unit = vec![0.0; nc];
            unit[j] = 1.0;
            let ej = be.upload(&unit)?;
            be.copy(&zero, &mut xf)?;
            be.elastic_prolong_add(t, &ej, &mut xf)?; // xf = P e_j
            be.elastic_apply_dot(&mut op.op, OpPrecision::F64, &xf, &mut yf, &mut self.s, 0)?;
            be.elastic_restrict(t, &yf, &mut col)?; // Pᵀ K P e_j
            for (i, v) in be.download(&col)?.into_iter().enumerate() {
                k[i * nc + j] = v;
            }
        }
        // P has zero columns at fixed coarse DOFs: identity there.
        for i in 0..nc {
            if k[i * nc + i] == 0.0 {
                k[i * nc + i] = 1.0;
            }
        }
        Ok(k)
    }

    /// λmax bounds of the smoothers' intervals, finest first.
    pub fn bounds(&self) -> &[f64] {
        &self.bounds
    }

    /// Sets the coarsest inner CG's relative residual (default
    /// [`COARSE_RTOL`]; a loose one makes M vary slightly between
    /// applications, which the outer true-residual loop absorbs).
    pub fn with_coarse_rtol(mut self, rtol: f64) -> Self {
        self.coarse_rtol = rtol;
        self
    }

    /// Solves the `n` largest coarse levels by two passes each (a W-cycle
    /// there, V below; 0: a V-cycle everywhere; default [`W_LEVELS`]).
    pub fn with_w_levels(mut self, n: usize) -> Self {
        self.w_levels = n;
        self
    }

    /// Meshes of the levels, finest first.
    pub fn meshes(&self) -> &[Mesh] {
        &self.meshes
    }
}

/// The fine level is the elastic operator itself (its residual, its
/// smoother), so M exists for that operator only.
impl<B: ElasticBackend> Preconditioner<B, ElasticOperator<B>> for ElasticMg<B> {
    fn apply(
        &mut self,
        be: &B,
        a: &mut ElasticOperator<B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        let mut c = Ctx {
            be,
            s: &mut self.s,
            one: &self.one,
            work: &mut self.coarse_work,
            coarse_iterations: &mut self.coarse_iterations,
            coarse_rtol: self.coarse_rtol,
            dense: self.dense.as_ref().map(|d| &d.inv),
            levels: self.meshes.len(),
            w_levels: self.w_levels,
            transfers: &self.transfers,
        };
        let out = match self.fine_smoother.as_mut() {
            // No coarser level: M = D (Jacobi).
            None => return be.divide(r, a.diagonal(), z),
            Some(sm) => {
                let scratch = Scratch {
                    r: &mut self.fine_r,
                    t: &mut self.fine_t,
                };
                cycle(&mut c, a, sm, r, z, scratch, &mut self.levels)
            }
        };
        out.map_err(|e| match e {
            SolveError::Backend(b) => b,
            other => BackendError::Numerical(format!("multigrid cycle: {other}")),
        })
    }
}

impl<B: ElasticBackend> PrecondInfo for ElasticMg<B> {
    fn report(&self) -> PrecondReport {
        let mut params = BTreeMap::new();
        params.insert("levels".into(), self.meshes.len() as f64);
        params.insert("coarse_cg_iterations".into(), self.coarse_iterations as f64);
        params.insert("coarse_dense".into(), self.dense.is_some() as u8 as f64);
        let coarsest = self.meshes.last().map_or(0, |m| m.dofs());
        params.insert("coarsest_dofs".into(), coarsest as f64);
        let o = smoother_opts();
        params.insert("degree".into(), o.chebyshev_degree as f64);
        params.insert("ratio".into(), o.chebyshev_ratio);
        params.insert("w_levels".into(), self.w_levels as f64);
        PrecondReport {
            name: "mg".into(),
            params,
            multigrid: None,
        }
    }

    fn check_interval(&self) -> Option<usize> {
        Some(1)
    }
}
