//! Power-density plausibility for sources read from files (a floorplan's
//! blocks powered by a `.ptrace`, a raster): the stack file alone cannot tell
//! their density, so it is checked here, once the layer's power is known.
//! Over 1 kW/cm² is almost always a unit slip (mW written as W, a block in
//! µm² read as m²); the warning names the layer, the block or cell, and the
//! density ([`crate::stack::power_density_warning`]).

use super::{layer_power, LayerPower, PowerError};
use crate::grid::Grid;
use crate::stack::{power_density_warning, PowerSpec, Stack, MAX_POWER_DENSITY};

/// Warnings for every layer whose power comes from a file.
pub fn density_warnings(stack: &Stack, grid: &Grid) -> Result<Vec<String>, PowerError> {
    let mut out = Vec::new();
    for (l, source) in file_sources(stack) {
        let power = layer_power(stack, grid, l)?;
        out.extend(layer_warning(stack, grid, l, source, &power));
    }
    Ok(out)
}

/// [`density_warnings`] from the layers' power already rasterized (one
/// per layer).
pub fn density_warnings_of(stack: &Stack, grid: &Grid, power: &[LayerPower]) -> Vec<String> {
    file_sources(stack)
        .filter_map(|(l, source)| layer_warning(stack, grid, l, source, power.get(l)?))
        .collect()
}

/// The layers whose power comes from a file, with the kind of file.
fn file_sources(stack: &Stack) -> impl Iterator<Item = (usize, &'static str)> + '_ {
    stack
        .layers
        .iter()
        .enumerate()
        .filter_map(|(l, layer)| match &layer.power {
            Some(PowerSpec::Ptrace { .. }) => Some((l, "ptrace")),
            Some(PowerSpec::Raster { .. }) => Some((l, "raster")),
            _ => None,
        })
}

/// The densest block of a `.ptrace` layer (with how many more are over the
/// limit), or the densest cell of a raster layer.
fn layer_warning(
    stack: &Stack,
    grid: &Grid,
    l: usize,
    source: &str,
    p: &LayerPower,
) -> Option<String> {
    if source == "ptrace" {
        let dense: Vec<(f64, &str)> = p
            .blocks
            .iter()
            .filter(|b| b.area() > 0.0)
            .map(|b| (b.power_w / b.area(), b.name.as_str()))
            .filter(|(d, _)| *d > MAX_POWER_DENSITY)
            .collect();
        let (d, name) = dense.iter().copied().max_by(|a, b| a.0.total_cmp(&b.0))?;
        let more = match dense.len() - 1 {
            0 => String::new(),
            n => format!(" (and {n} more blocks)"),
        };
        let what = format!("power (ptrace) block `{name}`{more}");
        return power_density_warning(stack, l, &what, d);
    }
    let (i, density) = p
        .map_w
        .iter()
        .enumerate()
        .map(|(i, &w)| (i, w / grid.cell_area(i)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (x, y) = (i % grid.nx, i / grid.nx);
    let what = format!(
        "power (raster) cell ({x}, {y}) at x {:.3} mm, y {:.3} mm",
        grid.x_center(x) * 1e3,
        grid.y_center(y) * 1e3
    );
    power_density_warning(stack, l, &what, density)
}
