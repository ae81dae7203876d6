//! cuth: thermal simulation of 3D IC stacks on a structured finite-volume grid.
//!
//! Pipeline: [`stack`] (read and check the TOML stack) → [`power`] (rasterize
//! power sources) → [`grid`] (geometry) → [`assemble`] (Quad-Diag system, [`matrix`]) →
//! [`linalg`] (PCG and preconditioners over a [`backend`]) → [`thermal`]
//! (drivers, summary) → [`output`] (PNG, CSV, JSON, table).
//! Beside it: [`input`] (reading input files within limits), [`error`]
//! (which errors are bad input, for the exit code) and [`kernel_families`]
//! (every CUDA kernel family, for checks that compile them all).

pub mod assemble;
pub mod backend;
pub mod error;
pub mod formats;
pub mod geometry;
pub mod grid;
pub mod import;
pub mod input;
pub mod kernel_families;
pub mod linalg;
pub mod material;
pub mod matrix;
pub mod output;
pub mod power;
pub mod profile;
pub mod solver_options;
pub mod stack;
pub mod thermal;
pub mod topopt;
