//! The Krylov method of a solver object (PETSc's `KSPType`), written once
//! for every operator and preconditioner: the thermal Quad-Diag solver, the
//! liquid-cooled stack's solver and topopt's elasticity solve each hold a
//! [`Krylov`] and differ only in their operator and preconditioner. A new
//! method is a new [`KrylovMethod`] variant and a new arm in
//! [`Krylov::solve_into`]; no call site changes.

use super::bicgstab::bicgstab;
use super::operator::LinearOperator;
use super::params::{CgInfo, CgParams, SolveError};
use super::pcg::{pcg_with, PcgWork};
use super::precond::Preconditioner;
use super::refine::{refine, RefineMode, RefineWork};
use crate::backend::{Backend, BackendError};

/// Which Krylov iteration a solver runs. The operator picks it
/// ([`KrylovMethod::for_operator`]), or a caller whose operator has a
/// cheaper low-precision apply asks for refinement.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum KrylovMethod {
    /// Preconditioned conjugate gradients (SPD operators).
    #[default]
    Cg,
    /// Right-preconditioned BiCGStab (non-symmetric operators: a stack
    /// with liquid-cooled cavities).
    BiCgStab,
    /// CG inside f64 residual correction (`linalg::refine`): topopt's
    /// elasticity operator, whose f32 apply stalls plain CG near 1e-3.
    Refined(RefineMode),
}

impl KrylovMethod {
    /// The name `summary.json` reports.
    pub fn name(self) -> &'static str {
        match self {
            KrylovMethod::Cg => "pcg",
            KrylovMethod::BiCgStab => "bicgstab",
            KrylovMethod::Refined(RefineMode::F64) => "pcg-restarted",
            KrylovMethod::Refined(RefineMode::Mixed) => "pcg-refined",
        }
    }

    /// CG where the operator is symmetric, BiCGStab where it is not.
    pub fn for_operator<B: Backend>(op: &dyn LinearOperator<B>) -> KrylovMethod {
        if op.is_symmetric() {
            KrylovMethod::Cg
        } else {
            KrylovMethod::BiCgStab
        }
    }
}

/// The work vectors a method keeps between solves; BiCGStab allocates its
/// own per solve (a handful of solves per run).
enum Work<B: Backend> {
    Pcg(PcgWork<B>),
    Refine(RefineWork<B>),
    PerSolve,
}

/// A Krylov method with its parameters and work vectors, for operators of
/// `n` rows: set up once, then used for every right-hand side.
pub struct Krylov<B: Backend> {
    method: KrylovMethod,
    params: CgParams,
    work: Work<B>,
}

impl<B: Backend> Krylov<B> {
    pub fn new(be: &B, method: KrylovMethod, n: usize) -> Result<Self, BackendError> {
        Ok(Krylov {
            method,
            params: CgParams::default(),
            work: work_for(be, method, n)?,
        })
    }

    pub fn method(&self) -> KrylovMethod {
        self.method
    }

    /// Stop, iteration cap and check interval of the following solves.
    pub fn set_params(&mut self, params: CgParams) {
        self.params = params;
    }

    pub fn params(&self) -> &CgParams {
        &self.params
    }

    /// Solves A x = b from the initial guess in `x` with M = `m`.
    pub fn solve<A, M>(
        &mut self,
        be: &B,
        a: &mut A,
        m: &mut M,
        b: &B::Vector,
        x: &mut B::Vector,
    ) -> Result<CgInfo, SolveError>
    where
        A: LinearOperator<B> + ?Sized,
        M: Preconditioner<B, A> + ?Sized,
    {
        let mut info = CgInfo::default();
        self.solve_into(be, a, m, b, x, &mut info)?;
        Ok(info)
    }

    /// [`Self::solve`] leaving the progress in `info` whatever the outcome,
    /// so that a caller can record a failed solve and go on.
    pub fn solve_into<A, M>(
        &mut self,
        be: &B,
        a: &mut A,
        m: &mut M,
        b: &B::Vector,
        x: &mut B::Vector,
        info: &mut CgInfo,
    ) -> Result<(), SolveError>
    where
        A: LinearOperator<B> + ?Sized,
        M: Preconditioner<B, A> + ?Sized,
    {
        let p = &self.params;
        match (self.method, &mut self.work) {
            (KrylovMethod::Cg, Work::Pcg(w)) => pcg_with(be, a, m, b, x, w, p, info),
            (KrylovMethod::Refined(mode), Work::Refine(w)) => {
                refine(be, a, m, b, x, w, p, mode, info)
            }
            (KrylovMethod::BiCgStab, Work::PerSolve) => {
                *info = bicgstab(be, a, m, b, x, p)?;
                Ok(())
            }
            _ => unreachable!("`new` allocates the work of its method"),
        }
    }
}

fn work_for<B: Backend>(be: &B, method: KrylovMethod, n: usize) -> Result<Work<B>, BackendError> {
    Ok(match method {
        KrylovMethod::Cg => Work::Pcg(PcgWork::new(be, n)?),
        KrylovMethod::Refined(_) => Work::Refine(RefineWork::new(be, n)?),
        KrylovMethod::BiCgStab => Work::PerSolve,
    })
}
