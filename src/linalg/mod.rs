//! Linear algebra on the thermal system: the Quad-Diag matrix, PCG written once
//! against [`crate::backend::Backend`], and the preconditioners.

pub mod eigen;
pub mod offset;
pub mod pcg;
pub mod precond;

/// The preconditioner's storage precision lives with the matrices it stores.
pub use crate::matrix::precision;
pub use crate::matrix::quad_diag::{self, QuadDiag};
pub use offset::Offset;
pub use pcg::{pcg, pcg_with, true_relative_residual, CgInfo, CgParams, PcgWork, SolveError};
pub use precision::PrecisionMode;
pub use precond::{
    build_precond, PrecisionReport, PrecondKind, PrecondOptions, PrecondReport, Preconditioner,
};
