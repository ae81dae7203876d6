//! Minimum-compliance topology optimization (3D SIMP, `cuth topopt`)
//! on a structured hex mesh, matrix-free on the same backends
//! as the thermal solver.
//!
//! Pipeline: [`problem`] ([`presets`] or a [`custom`] TOML) → [`mesh`] and
//! [`element`] → [`optimize`] (the loop: [`filter`], [`projection`], the
//! elastic solve — `linalg`'s refinement loop and PCG on the
//! [`operator::ElasticOperator`] of an [`ElasticBackend`], [`cpu`] on the
//! host, [`cuda`] on the GPU —, [`oc`], [`continuation`]) → [`output`].

pub mod backend;
pub mod continuation;
pub mod cpu;
pub mod cuda;
pub mod custom;
pub mod design;
pub mod element;
pub mod evaluate;
pub mod filter;
pub mod mesh;
pub mod mg;
pub mod oc;
pub mod operator;
pub mod optimize;
pub mod output;
pub mod presets;
pub mod problem;
pub mod projection;

pub use backend::{ElasticBackend, OpPrecision, OperatorKind};
pub use design::DesignBackend;
pub use element::{hex8_stiffness, ElementMatrix};
pub use mesh::Mesh;
pub use operator::ElasticOperator;
