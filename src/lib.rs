//! cuth: thermal simulation of 3D IC stacks on a structured finite-volume grid.
//!
//! Pipeline: [`stack`] (read and check the TOML stack) → [`power`] (rasterize
//! power sources) → [`assemble`] (Quad-Diag system, [`matrix`]) → [`linalg`]
//! (PCG and preconditioners over a [`backend`]) → [`thermal`] (drivers,
//! summary) → [`output`] (PNG, CSV, JSON, table).
//!
//! Layers, each importing only from those below it:
//! 1. plain inputs: [`geometry`] (rectangles, axis edges), [`material`],
//!    [`solver_options`], [`input`] (reading files within limits),
//!    [`matrix`], [`profile`], [`knobs`] (the `CUTH_*` environment
//!    variables, read once by the caller);
//! 2. [`formats`] (the floorplan, trace and raster readers) and [`grid`]
//!    (the finite-volume box, built from edges and layer thicknesses);
//! 3. [`stack`] (the checked stack file, and the grid of a stack);
//! 4. [`power`] (sources on the grid, each layer's material paint);
//! 5. [`assemble`] and [`import`] (other simulators' inputs);
//! 6. [`backend`], [`linalg`], [`thermal`], [`output`], [`topopt`];
//! 7. [`simulation`], the stepping API over [`thermal`] that the command
//!    line's `serve` drives, and [`run`] (a run's resolved plan and the device
//!    it opens);
//! 8. [`error`] (which errors are bad input, for the exit code) and
//!    [`kernel_families`] (every CUDA kernel family, for checks that
//!    compile them all).

// No function over 120 lines (clippy.toml): named phases, not one long body.
#![warn(clippy::too_many_lines)]

pub mod assemble;
pub mod backend;
pub mod error;
pub mod formats;
pub mod geometry;
pub mod grid;
pub mod import;
pub mod input;
pub mod kernel_families;
pub mod knobs;
pub mod linalg;
pub mod material;
pub mod matrix;
pub mod output;
pub mod power;
pub mod profile;
pub mod run;
pub mod simulation;
pub mod solver_options;
pub mod stack;
pub mod thermal;
pub mod topopt;
