//! What a [`super::Simulation`] hands back: plain data, in K and W, with
//! names rather than indices, so a co-simulation loop or a binding can pass
//! it on without knowing the grid.

use serde::Serialize;

/// One solve's outcome: a time step's or a steady solve's.
#[derive(Clone, Debug, Serialize)]
pub struct SolveReport {
    /// Simulated time after the call, s (a steady solve leaves it).
    pub time_s: f64,
    /// The step's Δt, s (`None` for a steady solve).
    pub dt_s: Option<f64>,
    pub iterations: usize,
    /// ‖b − Ax‖/reference of the last convergence check (see `linalg::Stop`).
    pub relative_residual: f64,
    /// Power in, W.
    pub power_w: f64,
}

/// A block's temperatures over the cells its power goes to (see
/// `thermal::block_stats`), K.
#[derive(Clone, Debug, Serialize)]
pub struct BlockReading {
    pub layer: String,
    pub block: String,
    /// The block's power, W; `None` where its layer's map was set whole
    /// ([`super::Simulation::set_layer_map`]).
    pub power_w: Option<f64>,
    /// `None` when the block lies outside the grid.
    pub max_k: Option<f64>,
    pub avg_k: Option<f64>,
    pub min_k: Option<f64>,
}

/// A probe's temperature, K.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeValue {
    pub name: String,
    pub layer: String,
    pub t_k: f64,
}

/// The hottest cell of the field.
#[derive(Clone, Debug, Serialize)]
pub struct Hottest {
    pub layer: String,
    /// Cell centre, m, in the domain's frame.
    pub x_m: f64,
    pub y_m: f64,
    pub t_k: f64,
    /// The centre in the frame of the die that holds it, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub die: Option<crate::thermal::summary::DiePoint>,
}

/// The session's grid, layers and blocks.
#[derive(Clone, Debug, Serialize)]
pub struct Info {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub width_m: f64,
    pub length_m: f64,
    pub ambient_k: f64,
    pub layers: Vec<LayerInfo>,
    pub blocks: Vec<BlockInfo>,
    pub probes: Vec<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct LayerInfo {
    pub name: String,
    pub z_cells: usize,
    pub thickness_m: f64,
    /// Its blocks' powers can be set (its map is the sum of its blocks).
    pub drivable: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct BlockInfo {
    pub layer: String,
    pub name: String,
    /// The stack file's power, W.
    pub power_w: f64,
}

/// The field and the time: what [`super::Simulation::state`] saves and
/// [`super::Simulation::restore`] sets back.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub time_s: f64,
    /// T of every cell, K (index `x + nx*(y + ny*z)`).
    pub temperature_k: Vec<f64>,
}
