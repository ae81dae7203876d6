//! Input checks of a layer's power and materials that need its placed
//! units or its painted plane: overlapping material units, and power that
//! would land on a cell with no material.

use crate::formats::flp::FlpUnit;
use crate::grid::Grid;
use crate::power::{invalid, LayerPower, PowerError};
use crate::stack::UnitMaterial;
use std::path::Path;

/// Units with their own material must not overlap: the overlap would be
/// counted twice. Sweep over units sorted by left edge; touching edges are
/// not an overlap (relative tolerance 1e-9 of the smaller unit's area).
pub(super) fn check_material_overlaps(
    file: &Path,
    units: &[FlpUnit],
    named: &[UnitMaterial],
) -> Result<(), PowerError> {
    let mut own: Vec<&FlpUnit> = units
        .iter()
        .filter(|u| u.material.is_some() || named.iter().any(|n| n.unit == u.name))
        .collect();
    own.sort_by(|a, b| a.rect.x0.total_cmp(&b.rect.x0));
    for (i, a) in own.iter().enumerate() {
        for b in &own[i + 1..] {
            if b.rect.x0 >= a.rect.x1 {
                break;
            }
            let w = a.rect.x1.min(b.rect.x1) - a.rect.x0.max(b.rect.x0);
            let h = a.rect.y1.min(b.rect.y1) - a.rect.y0.max(b.rect.y0);
            let tol = 1e-9 * a.rect.area().min(b.rect.area());
            if w > 0.0 && h > 0.0 && w * h > tol {
                let (first, second) = if a.line < b.line { (a, b) } else { (b, a) };
                return Err(invalid(
                    file,
                    format!("line {} ({})", second.line, second.name),
                    format!(
                        "unit `{}` overlaps unit `{}` (line {}) and both have their own \
                         material: the overlap would be counted twice",
                        second.name, first.name, first.line
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Power on a cell with no material would leave the system: an input error.
pub(super) fn check_absent_power(
    p: &LayerPower,
    layer: &crate::stack::Layer,
    grid: &Grid,
    src: &Path,
    field: &str,
) -> Result<(), PowerError> {
    let mix = crate::power::layer_material(grid, p);
    for (j, &w) in p.map_w.iter().enumerate() {
        if w > 0.0 && mix.mix(j, layer.material).is_absent() {
            let (x, y) = (j % grid.nx, j / grid.nx);
            return Err(invalid(
                src,
                field,
                format!(
                    "{w:e} W fall on the cell at x {:.6} mm, y {:.6} mm, which has no material \
                     (fill or region \"none\")",
                    grid.x_center(x) * 1e3,
                    grid.y_center(y) * 1e3
                ),
            ));
        }
    }
    Ok(())
}
