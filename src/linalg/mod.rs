//! Linear algebra on the thermal system: the Quad-Diag matrix, PCG written once
//! against [`crate::backend::Backend`], and the preconditioners.

pub mod eigen;
pub mod mg;
pub mod offset;
pub mod pcg;
pub mod precision;
pub mod precond;
pub mod quad_diag;

pub use offset::Offset;
pub use pcg::{pcg, pcg_with, true_relative_residual, CgInfo, CgParams, PcgWork, SolveError};
pub use precision::PrecisionMode;
pub use precond::{
    build_precond, PrecisionReport, PrecondKind, PrecondOptions, PrecondReport, Preconditioner,
};
pub use quad_diag::QuadDiag;
