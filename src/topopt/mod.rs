//! Minimum-compliance topology optimization (3D SIMP) on a structured hex
//! mesh, matrix-free on the same backends as the thermal solver.

pub mod backend;
pub mod cuda;
pub mod element;
pub mod mesh;
pub mod output;

pub use backend::{ElasticBackend, OpPrecision, OperatorKind};
pub use element::{hex8_stiffness, ElementMatrix};
pub use mesh::Mesh;
