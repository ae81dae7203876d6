//! Host-side matrix storage, below both the solvers (`linalg`) and the
//! executors (`backend`): the Quad-Diag form of the 7-point operator and its
//! Jacobi-scaled low-precision copy (`precision`), which backends upload into
//! their own storage, and one multigrid coarsening step of it (`coarsen`),
//! which the host and the devices' set-up build from alike.

pub mod advection;
pub mod coarsen;
pub mod precision;
pub mod quad_diag;

pub use precision::{PrecisionMode, ScaledQuadDiag};
pub use quad_diag::QuadDiag;
