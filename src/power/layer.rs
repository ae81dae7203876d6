//! Resolves one layer's power source into a [`LayerPower`]: reads the
//! layer's floorplan (blocks for the per-block report, material patches) and
//! its power source (uniform, inline blocks, HotSpot trace, CSV/PNG raster),
//! checks every rectangle against the footprint, and rasterizes the power
//! conservatively, so the map's sum equals `total_w` to rounding.

use super::csv_raster::{read_raster, RasterUnit};
use super::flp::read_flp;
use super::ptrace::read_ptrace;
use super::rasterize::{add_pixels, add_rect};
use super::{invalid, Block, LayerPower, MaterialPatch, PowerError, Rect};
use crate::grid::Grid;
use crate::stack::{PowerSpec, Stack};
use std::path::Path;

/// How far, relative to the footprint size, a rectangle may overshoot it and
/// still be accepted (then clamped): HotSpot coordinates are decimal, so
/// `left-x + width` in binary floating point can land a few ulps past the edge.
const EDGE_TOL: f64 = 1e-9;

/// The chip footprint [0, width] × [0, length], metres.
struct Footprint {
    width: f64,
    length: f64,
}

impl Footprint {
    /// `r` clamped to the footprint, or `None` when it sticks out by more than
    /// [`EDGE_TOL`]: power outside the chip is an input mistake, never clipped.
    fn fit(&self, r: Rect) -> Option<Rect> {
        let (tx, ty) = (EDGE_TOL * self.width, EDGE_TOL * self.length);
        let inside =
            r.x0 >= -tx && r.y0 >= -ty && r.x1 <= self.width + tx && r.y1 <= self.length + ty;
        inside.then(|| Rect {
            x0: r.x0.max(0.0),
            y0: r.y0.max(0.0),
            x1: r.x1.min(self.width),
            y1: r.y1.min(self.length),
        })
    }

    fn outside(&self, what: &str, r: &Rect) -> String {
        format!(
            "{what} spans x [{}, {}] m, y [{}, {}] m, outside the footprint \
             [0, {}] × [0, {}] m (chip.width × chip.length)",
            r.x0, r.x1, r.y0, r.y1, self.width, self.length
        )
    }
}

/// Units with their own material must not overlap: the overlap would be
/// counted twice. Sweep over units sorted by left edge; touching edges are
/// not an overlap (relative tolerance 1e-9 of the smaller unit's area).
fn check_material_overlaps(
    file: &std::path::Path,
    units: &[super::flp::FlpUnit],
    named: &[crate::stack::UnitMaterial],
) -> Result<(), PowerError> {
    let mut own: Vec<&super::flp::FlpUnit> = units
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

/// The power map, blocks and material patches of layer `l`.
///
/// `blocks` lists the floorplan's units (power from the trace, else 0)
/// followed by the inline rectangles of a `blocks` source.
pub fn layer_power(stack: &Stack, grid: &Grid, l: usize) -> Result<LayerPower, PowerError> {
    let src = stack.source.as_path();
    let layer = stack.layers.get(l).ok_or_else(|| {
        invalid(
            src,
            format!("layers[{l}]"),
            format!("no such layer: the stack has {}", stack.layers.len()),
        )
    })?;
    let field = format!("layers[{l}] ({}).power", layer.name);
    let fp = Footprint {
        width: stack.width_m,
        length: stack.length_m,
    };

    let mut blocks = Vec::new();
    let mut patches = Vec::new();
    if let Some(flp) = &layer.floorplan {
        let units = read_flp(flp)?;
        check_material_overlaps(flp, &units, &layer.unit_materials)?;
        if let Some(u) = layer
            .unit_materials
            .iter()
            .find(|u| !units.iter().any(|f| f.name == u.unit))
        {
            return Err(invalid(
                src,
                format!("layers[{l}] ({}).unit_materials.{}", layer.name, u.unit),
                format!("no unit `{}` in floorplan {}", u.unit, flp.display()),
            ));
        }
        for unit in units {
            let at = format!("line {} ({})", unit.line, unit.name);
            let rect = fp.fit(unit.rect).ok_or_else(|| {
                invalid(
                    flp,
                    &at,
                    fp.outside(&format!("unit `{}`", unit.name), &unit.rect),
                )
            })?;
            match layer.unit_materials.iter().find(|u| u.unit == unit.name) {
                Some(u) => patches.push(MaterialPatch {
                    rect,
                    material: u.material,
                    law: u.law.clone(),
                }),
                None => {
                    if let Some(material) = unit.material {
                        patches.push(MaterialPatch {
                            rect,
                            material,
                            law: None,
                        });
                    }
                }
            }
            blocks.push(Block {
                name: unit.name,
                rect,
                power_w: 0.0,
            });
        }
    }

    let mut map_w = vec![0.0; grid.plane()];
    let total_w = match &layer.power {
        None => 0.0,
        Some(PowerSpec::Uniform { total }) => {
            map_w.fill(total / grid.plane() as f64);
            *total
        }
        Some(PowerSpec::Blocks { blocks: specs }) => {
            for (i, b) in specs.iter().enumerate() {
                let at = format!("{field}.blocks[{i}] ({})", b.name);
                let raw = Rect {
                    x0: b.x.0,
                    y0: b.y.0,
                    x1: b.x.0 + b.width.0,
                    y1: b.y.0 + b.height.0,
                };
                let rect = fp
                    .fit(raw)
                    .ok_or_else(|| invalid(src, &at, fp.outside("the block", &raw)))?;
                spread(&mut map_w, &rect, b.power, grid, src, &at)?;
                blocks.push(Block {
                    name: b.name.clone(),
                    rect,
                    power_w: b.power,
                });
            }
            specs.iter().map(|b| b.power).sum()
        }
        Some(PowerSpec::Ptrace { file, row }) => {
            let Some(flp) = &layer.floorplan else {
                return Err(invalid(
                    src,
                    field,
                    "`type = \"ptrace\"` needs the layer's `floorplan` to name the blocks",
                ));
            };
            let trace = read_ptrace(file)?;
            let powers = match row {
                None => trace.mean(),
                Some(r) => trace
                    .row(*r)
                    .ok_or_else(|| {
                        invalid(
                            src,
                            format!("{field}.row"),
                            format!(
                                "row {r} is out of range: {} has {} data rows (0-based)",
                                file.display(),
                                trace.rows.len()
                            ),
                        )
                    })?
                    .to_vec(),
            };
            let mut total = 0.0;
            for b in &mut blocks {
                let col = trace.column(&b.name).ok_or_else(|| {
                    invalid(
                        file,
                        "header",
                        format!(
                            "no column for unit `{}` of floorplan {}",
                            b.name,
                            flp.display()
                        ),
                    )
                })?;
                b.power_w = powers[col];
                spread(&mut map_w, &b.rect, b.power_w, grid, file, &b.name)?;
                total += b.power_w;
            }
            total
        }
        Some(PowerSpec::Raster { file, total }) => {
            raster(&mut map_w, file, *total, stack, grid, &field)?
        }
    };
    Ok(LayerPower {
        map_w,
        total_w,
        blocks,
        patches,
    })
}

/// Adds a rectangle's power to the map, or reports it if the power would be
/// lost (a sliver that covers no cell after clamping).
fn spread(
    map: &mut [f64],
    rect: &Rect,
    power_w: f64,
    grid: &Grid,
    file: &Path,
    field: &str,
) -> Result<(), PowerError> {
    if add_rect(map, rect, power_w, grid) || power_w == 0.0 {
        Ok(())
    } else {
        Err(invalid(
            file,
            field,
            format!("{power_w} W on a rectangle that covers no grid cell"),
        ))
    }
}

/// Spreads a raster onto the map, rescaled to `total` when given; returns the
/// layer's input total, W.
fn raster(
    map: &mut [f64],
    file: &Path,
    total: Option<f64>,
    stack: &Stack,
    grid: &Grid,
    field: &str,
) -> Result<f64, PowerError> {
    let mut r = read_raster(file)?;
    let sum = r.sum();
    let at = format!("{field}.total");
    let scale = match (total, r.unit) {
        (None, RasterUnit::Watts) => 1.0,
        (None, RasterUnit::Relative) => {
            return Err(invalid(
                &stack.source,
                at,
                format!(
                    "{} holds relative intensities only: set `total` (W)",
                    file.display()
                ),
            ))
        }
        // All zeros scaled to 0 W is fine; to anything else it is impossible.
        (Some(t), _) if sum > 0.0 || t == 0.0 => t / sum.max(f64::MIN_POSITIVE),
        (Some(t), _) => {
            return Err(invalid(
                &stack.source,
                at,
                format!("cannot scale {} to {t} W: every pixel is 0", file.display()),
            ))
        }
    };
    if scale != 1.0 {
        r.values.iter_mut().for_each(|v| *v *= scale);
    }
    add_pixels(
        map,
        &r.values,
        r.rows,
        r.cols,
        stack.width_m,
        stack.length_m,
        grid,
    );
    Ok(total.unwrap_or(sum))
}

#[cfg(test)]
mod tests;
