//! Resolves one layer's power source into a [`LayerPower`].

use super::{LayerPower, PowerError};
use crate::grid::Grid;
use crate::stack::Stack;

/// The power map, blocks and material patches of layer `l`.
pub fn layer_power(stack: &Stack, grid: &Grid, l: usize) -> Result<LayerPower, PowerError> {
    let _ = (stack, l);
    // STUB: replaced by the power module implementation.
    Ok(LayerPower {
        map_w: vec![0.0; grid.plane()],
        ..Default::default()
    })
}
