//! The solver object, as PETSc's KSP is one: a Krylov method, a
//! preconditioner built for the operator, and the method's work vectors,
//! set up once and then used for every right-hand side of that operator
//! (the cases of a sweep, the steps of a transient run, the outer
//! iterations of a k(T) solve). Callers never see the preconditioner's
//! concrete type nor what its set-up reads: [`PrecondKind::needs`] says,
//! and the solver fetches it.
//!
//! [`PrecondKind::needs`]: super::PrecondKind::needs

use super::krylov::{Krylov, KrylovMethod};
use super::operator::{LinearOperator, QuadDiagOperator};
use super::pcg::{true_relative_residual, CgInfo, CgParams, SolveError};
use super::precond::{
    build_thermal_precond, PrecondInfo, PrecondKind, PrecondOptions, ThermalPrecond,
};
use super::upwind::UpwindMultigrid;
use super::QuadDiag;
use crate::backend::mg::MultigridOps;
use crate::backend::BackendError;
use std::borrow::Cow;

use super::precond::chebyshev::ChebyshevLevels;

/// A [`Solver`] without its operator: what outlives a borrow of the matrix
/// that is re-assembled in place between solves (a k(T) outer iteration).
pub struct SolverState<B: ChebyshevLevels + MultigridOps + 'static> {
    precond: Box<ThermalPrecond<B>>,
    kind: PrecondKind,
    opts: PrecondOptions,
    krylov: Krylov<B>,
}

/// A Krylov solver for one thermal Quad-Diag operator.
pub struct Solver<'a, B: ChebyshevLevels + MultigridOps + 'static> {
    be: &'a B,
    op: QuadDiagOperator<'a, B>,
    state: SolverState<B>,
}

impl<'a, B: ChebyshevLevels + MultigridOps + 'static> Solver<'a, B> {
    /// CG with the preconditioner `kind` built for `op`. `host` is the
    /// operator's matrix on the host where the caller has it; a set-up that
    /// reads the matrix there is given it, or a copy read back from `op`
    /// (a matrix assembled on the device), and the others never download.
    pub fn new(
        be: &'a B,
        op: QuadDiagOperator<'a, B>,
        kind: PrecondKind,
        opts: &PrecondOptions,
        host: Option<&QuadDiag>,
    ) -> Result<Self, SolveError> {
        let precond = build(be, &op, kind, opts, host)?;
        let krylov = Krylov::new(be, KrylovMethod::for_operator::<B>(&op), op.len())?;
        Ok(Solver {
            be,
            op,
            state: SolverState {
                precond,
                kind,
                opts: opts.clone(),
                krylov,
            },
        })
    }

    /// The solver of `state` (kept by [`Self::release`]) on `op`, the same
    /// operator or one of its size; call [`Self::operator_changed`] or
    /// [`Self::rebuild`] when its values differ from those M was built for.
    pub fn resume(be: &'a B, op: QuadDiagOperator<'a, B>, state: SolverState<B>) -> Self {
        Solver { be, op, state }
    }

    /// Ends the borrow of the operator, keeping the rest for [`Self::resume`].
    pub fn release(self) -> SolverState<B> {
        self.state
    }

    pub fn method(&self) -> KrylovMethod {
        self.state.krylov.method()
    }

    /// Stop, iteration cap and check interval of the following solves.
    pub fn set_params(&mut self, params: CgParams) {
        self.state.krylov.set_params(params);
    }

    pub fn params(&self) -> &CgParams {
        self.state.krylov.params()
    }

    /// Solves A x = b from the initial guess in `x`.
    pub fn solve(&mut self, b: &B::Vector, x: &mut B::Vector) -> Result<CgInfo, SolveError> {
        let s = &mut self.state;
        s.krylov
            .solve(self.be, &mut self.op, s.precond.as_mut(), b, x)
    }

    /// z = M⁻¹ r alone, with the solver's preconditioner on its operator
    /// (PETSc's `PCApply`): for timing M apart from the Krylov loop.
    pub fn precondition(&mut self, r: &B::Vector, z: &mut B::Vector) -> Result<(), SolveError> {
        Ok(self.state.precond.apply(self.be, &mut self.op, r, z)?)
    }

    /// The operator's values changed in place (a k(T) re-assembly, a new
    /// matrix swapped in): M stays built for the old values, what it reads
    /// of the matrix at apply time is refreshed (multigrid's fine-level
    /// line pivots).
    pub fn operator_changed(&mut self) -> Result<(), SolveError> {
        Ok(self.state.precond.operator_changed(self.be, &mut self.op)?)
    }

    /// Builds M again for the operator's current values (its set-up
    /// included: eigenvalue bounds, the multigrid hierarchy).
    pub fn rebuild(&mut self) -> Result<(), SolveError> {
        let s = &mut self.state;
        s.precond = build(self.be, &self.op, s.kind, &s.opts, None)?;
        Ok(())
    }

    /// ‖b − A x‖₂ / ‖b‖₂ in f64, divided by `scale` (see
    /// [`true_relative_residual`]).
    pub fn true_relative_residual(
        &mut self,
        b: &B::Vector,
        x: &B::Vector,
        scale: f64,
    ) -> Result<f64, SolveError> {
        Ok(true_relative_residual(self.be, &mut self.op, b, x, scale)?)
    }

    /// The preconditioner, for its report and precision.
    pub fn precond(&self) -> &dyn PrecondInfo {
        self.state.precond.as_ref()
    }

    pub fn operator(&self) -> &QuadDiagOperator<'a, B> {
        &self.op
    }

    /// The operator, to change its matrix (then [`Self::operator_changed`]
    /// or [`Self::rebuild`]).
    pub fn operator_mut(&mut self) -> &mut QuadDiagOperator<'a, B> {
        &mut self.op
    }

    /// Rows of the operator.
    pub fn len(&self) -> usize {
        self.op.len()
    }

    pub fn is_empty(&self) -> bool {
        self.op.is_empty()
    }
}

/// M of `kind` for `op`, given the host matrix its set-up reads (`host`,
/// else read back from `op`) only where [`PrecondKind::needs`] asks.
fn build<B: ChebyshevLevels + MultigridOps + 'static>(
    be: &B,
    op: &QuadDiagOperator<'_, B>,
    kind: PrecondKind,
    opts: &PrecondOptions,
    host: Option<&QuadDiag>,
) -> Result<Box<ThermalPrecond<B>>, SolveError> {
    // A borrowed view of the symmetric part: the host copy may borrow the
    // matrix too (the CPU's).
    let a = op.matrix();
    let mut view = op.symmetric_part();
    let host = match host {
        Some(h) => Some(Cow::Borrowed(h)),
        None if kind.needs().host_matrix => Some(be.host_matrix(a)?),
        None => None,
    };
    if op.advection().is_none() {
        return build_thermal_precond(kind, be, &mut view, host.as_deref(), opts);
    }
    // A liquid-cooled stack: the symmetric part's multigrid with the
    // coolant's downstream sweep; Jacobi and none need no symmetry.
    match kind {
        PrecondKind::Multigrid => {
            let mg = build_thermal_precond(kind, be, &mut view, host.as_deref(), opts)?;
            Ok(Box::new(UpwindMultigrid::new(be, mg, op.len())?))
        }
        PrecondKind::Jacobi | PrecondKind::None => {
            build_thermal_precond(kind, be, &mut view, host.as_deref(), opts)
        }
        PrecondKind::Chebyshev => Err(SolveError::Backend(BackendError::Unsupported(
            "the Chebyshev preconditioner needs a symmetric operator; a liquid-cooled stack is \
             preconditioned by multigrid (--precond mg)",
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;
    use crate::linalg::{pcg, Stop};

    /// A small anisotropic stack: in-plane conductance `g`, 10× in z, a
    /// film to ambient on the top plane.
    fn stack_matrix(g: f64) -> QuadDiag {
        let (nx, ny, nz) = (9, 8, 3);
        let mut a = QuadDiag::zeros(nx, ny, nz);
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    let c = i + nx * (j + ny * k);
                    a.gx[c] = if i + 1 < nx { g } else { 0.0 };
                    a.gy[c] = if j + 1 < ny { g } else { 0.0 };
                    a.gz[c] = if k + 1 < nz { 10.0 * g } else { 0.0 };
                    a.amb[c] = if k + 1 == nz { 0.5 } else { 0.0 };
                }
            }
        }
        for c in 0..a.len() {
            let mut d = a.amb[c] + a.gx[c] + a.gy[c] + a.gz[c];
            if c >= 1 {
                d += a.gx[c - 1];
            }
            if c >= nx {
                d += a.gy[c - nx];
            }
            if c >= nx * ny {
                d += a.gz[c - nx * ny];
            }
            a.d[c] = d;
        }
        a
    }

    fn rhs(n: usize) -> Vec<f64> {
        (0..n).map(|i| 1.0 + (i % 7) as f64).collect()
    }

    const KINDS: [PrecondKind; 4] = [
        PrecondKind::None,
        PrecondKind::Jacobi,
        PrecondKind::Chebyshev,
        PrecondKind::Multigrid,
    ];

    /// The solver runs the very operations the hand-built PCG ran: the same
    /// iterations and the same bits.
    #[test]
    fn solves_as_hand_built_pcg() {
        let be = CpuBackend::new();
        let a = stack_matrix(1.0);
        let b = rhs(a.len());
        let opts = PrecondOptions::default();
        let params = CgParams {
            stop: Stop::relative(1e-10),
            ..CgParams::default()
        };
        for kind in KINDS {
            let mut op = QuadDiagOperator::new(&be, &a, a.len());
            let mut m = build_thermal_precond(kind, &be, &mut op, Some(&a), &opts).unwrap();
            let mut x0 = vec![0.0; a.len()];
            let i0 = pcg(&be, &mut op, m.as_mut(), &b, &mut x0, &params).unwrap();

            let op = QuadDiagOperator::new(&be, &a, a.len());
            let mut ksp = Solver::new(&be, op, kind, &opts, None).unwrap();
            ksp.set_params(params.clone());
            let mut x1 = vec![0.0; a.len()];
            let i1 = ksp.solve(&b, &mut x1).unwrap();
            assert_eq!(i0.iterations, i1.iterations, "{kind:?}");
            assert_eq!(x0, x1, "{kind:?}");
            assert_eq!(ksp.method(), KrylovMethod::Cg);
        }
    }

    /// M alone through the solver: the identity and D⁻¹ by hand; Chebyshev
    /// and mg symmetric (⟨x, My⟩ = ⟨Mx, y⟩) and positive (⟨x, Mx⟩ > 0),
    /// as CG needs of them.
    #[test]
    fn precondition_applies_an_spd_m() {
        let be = CpuBackend::new();
        let a = stack_matrix(1.0);
        let n = a.len();
        let x: Vec<f64> = (0..n).map(|i| ((i * 37) % 11) as f64 - 5.0).collect();
        let y: Vec<f64> = (0..n).map(|i| ((i * 13) % 7) as f64 - 3.0).collect();
        let dot = |u: &[f64], v: &[f64]| u.iter().zip(v).map(|(p, q)| p * q).sum::<f64>();
        for kind in KINDS {
            let op = QuadDiagOperator::new(&be, &a, n);
            let mut ksp = Solver::new(&be, op, kind, &PrecondOptions::default(), None).unwrap();
            let mut apply = |v: &Vec<f64>| {
                let mut z = vec![f64::NAN; n];
                ksp.precondition(v, &mut z).unwrap();
                z
            };
            let (mx, my) = (apply(&x), apply(&y));
            match kind {
                PrecondKind::None => assert_eq!(mx, x),
                PrecondKind::Jacobi => {
                    let by_hand: Vec<f64> = x.iter().zip(&a.d).map(|(v, d)| v / d).collect();
                    assert_eq!(mx, by_hand);
                }
                _ => {
                    let (xmy, mxy) = (dot(&x, &my), dot(&mx, &y));
                    let scale = dot(&mx, &mx).sqrt() * dot(&y, &y).sqrt();
                    assert!(
                        (xmy - mxy).abs() <= 1e-12 * scale,
                        "{kind:?}: {xmy} vs {mxy}"
                    );
                    assert!(dot(&x, &mx) > 0.0, "{kind:?}");
                }
            }
        }
    }

    /// After new values swapped into an owned matrix, a rebuild solves as a
    /// solver built for them; a refresh keeps M and still converges.
    #[test]
    fn rebuild_matches_a_fresh_solver() {
        let be = CpuBackend::new();
        let (a, a2) = (stack_matrix(1.0), stack_matrix(3.0));
        let b = rhs(a.len());
        let opts = PrecondOptions::default();
        for kind in KINDS {
            let fresh = |m: &QuadDiag| {
                let op = QuadDiagOperator::new(&be, m, m.len());
                let mut ksp = Solver::new(&be, op, kind, &opts, None).unwrap();
                let mut x = vec![0.0; m.len()];
                let info = ksp.solve(&b, &mut x).unwrap();
                (info.iterations, x)
            };
            let op = QuadDiagOperator::owning(&be, a.clone(), a.len());
            let mut ksp = Solver::new(&be, op, kind, &opts, None).unwrap();
            let mut other = a2.clone();
            std::mem::swap(ksp.operator_mut().matrix_mut().unwrap(), &mut other);
            ksp.operator_changed().unwrap();
            let mut x = vec![0.0; a.len()];
            ksp.solve(&b, &mut x).unwrap();
            assert!(ksp.true_relative_residual(&b, &x, 1.0).unwrap() < 1e-7);

            ksp.rebuild().unwrap();
            let mut x = vec![0.0; a.len()];
            let info = ksp.solve(&b, &mut x).unwrap();
            assert_eq!((info.iterations, x), fresh(&a2), "{kind:?}");
        }
    }

    /// A borrowed operator has no matrix to swap; the state outlives the
    /// borrow while the matrix is re-assembled in place.
    #[test]
    fn state_outlives_the_borrow() {
        let be = CpuBackend::new();
        let mut a = stack_matrix(1.0);
        let b = rhs(a.len());
        let mut x = vec![0.0; a.len()];
        let mut op = QuadDiagOperator::new(&be, &a, a.len());
        assert!(op.matrix_mut().is_none());
        let opts = PrecondOptions::default();
        let mut ksp = Solver::new(&be, op, PrecondKind::Multigrid, &opts, None).unwrap();
        ksp.solve(&b, &mut x).unwrap();
        let state = ksp.release();
        a = stack_matrix(2.0);
        let op = QuadDiagOperator::new(&be, &a, a.len());
        let mut ksp = Solver::resume(&be, op, state);
        ksp.operator_changed().unwrap();
        ksp.solve(&b, &mut x).unwrap();
        assert!(ksp.true_relative_residual(&b, &x, 1.0).unwrap() < 1e-7);
    }
}
