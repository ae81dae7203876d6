//! cuth: thermal simulation of 3D IC stacks on a structured finite-volume grid.
//!
//! Pipeline: [`stack`] (read and check the TOML stack) → [`power`] (rasterize
//! power sources) → [`grid`] (geometry) → [`assemble`] (Quad-Diag system, [`matrix`]) →
//! [`linalg`] (PCG and preconditioners over a [`backend`]) → [`thermal`]
//! (drivers, summary) → [`output`] (PNG, CSV, JSON, table).

pub mod assemble;
pub mod backend;
pub mod grid;
pub mod import;
pub mod linalg;
pub mod matrix;
pub mod output;
pub mod power;
pub mod stack;
pub mod thermal;
pub mod topopt;
