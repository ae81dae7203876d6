//! The Krylov layer: PCG, the preconditioners (identity, Jacobi, Chebyshev
//! with its mixed-precision levels) and the Lanczos estimate, written once
//! against a [`LinearOperator`] on a [`crate::backend::Backend`]; the
//! thermal Quad-Diag matrix and topopt's matrix-free elasticity operator are
//! both operators.

pub mod batch;
pub mod bicgstab;
pub mod eigen;
pub mod krylov;
pub mod mg;
pub mod offset;
pub mod operator;
pub mod params;
pub mod pcg;
pub mod precond;
pub mod progress;
pub mod refine;
pub mod solver;
pub mod upwind;

/// The preconditioner's storage precision lives with the matrices it stores.
pub use crate::matrix::precision;
pub use crate::matrix::quad_diag::{self, QuadDiag};
pub use krylov::{Krylov, KrylovMethod};
pub use offset::Offset;
pub use operator::{LinearOperator, QuadDiagOperator};
pub use pcg::{
    pcg, pcg_from_residual, pcg_with, true_relative_residual, CgInfo, CgParams, CgRun, PcgWork,
    SolveError, Stop,
};
pub use precision::PrecisionMode;
pub use precond::{
    build_precond, PrecisionReport, PrecondInfo, PrecondKind, PrecondNeeds, PrecondOptions,
    PrecondReport, Preconditioner, ThermalPrecond,
};
pub use refine::{refine, RefineMode, RefineWork};
pub use solver::{Solver, SolverState};
