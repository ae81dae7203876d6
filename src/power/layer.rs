//! Resolves one layer's power source into a [`LayerPower`]: reads the
//! layer's floorplan (blocks for the per-block report, material patches) and
//! its power source (uniform, inline blocks, HotSpot trace, CSV/PNG raster),
//! checks every rectangle against the footprint, and rasterizes the power
//! conservatively, so the map's sum equals `total_w` to rounding.

use super::raster_cache::{Direct, RasterSource};
use super::{invalid, Block, LayerPower, MaterialPatch, PowerError, Rect};
use crate::formats::flp::read_flp;
use crate::formats::ptrace::{read_ptrace, PowerTrace};
use crate::grid::Grid;
use crate::stack::{PowerSpec, Stack};
use checks::{check_absent_power, check_material_overlaps};
use place::{raster, raster_scale, shift, spread, Footprint};
use std::path::Path;

/// The power map, blocks and material patches of layer `l`: its own source
/// (floorplan and power, placed at the layer's `origin` inside its outline),
/// then each region's.
///
/// `blocks` lists the floorplan's units (power from the trace, else 0)
/// followed by the inline rectangles of a `blocks` source, then the
/// regions' blocks likewise (a region's uniform or raster power is one block
/// named after the region).
pub fn layer_power(stack: &Stack, grid: &Grid, l: usize) -> Result<LayerPower, PowerError> {
    layer_power_with(stack, grid, l, &Direct)
}

/// [`layer_power`] with raster files read through `rasters` (a sweep's
/// cache of decoded maps).
pub fn layer_power_with(
    stack: &Stack,
    grid: &Grid,
    l: usize,
    rasters: &dyn RasterSource,
) -> Result<LayerPower, PowerError> {
    let src = stack.source.as_path();
    let layer = stack.layers.get(l).ok_or_else(|| {
        invalid(
            src,
            format!("layers[{l}]"),
            format!("no such layer: the stack has {}", stack.layers.len()),
        )
    })?;
    let field = format!("layers[{l}] ({})", layer.name);
    let domain = Rect {
        x0: 0.0,
        y0: 0.0,
        x1: stack.width_m,
        y1: stack.length_m,
    };
    let mut out = LayerPower {
        map_w: vec![0.0; grid.plane()],
        outline: layer.outline.map(|r| (r, layer.fill)),
        ..LayerPower::default()
    };
    let fp = match layer.outline {
        Some(at) => Footprint {
            at,
            what: format!("{field}.outline"),
            whole: false,
        },
        None => Footprint {
            at: domain,
            what: "the domain (width × length)".into(),
            whole: true,
        },
    };
    let own = Source {
        field: &field,
        floorplan: layer.floorplan.as_deref(),
        power: layer.power.as_ref(),
        origin: layer.origin,
        fp,
        name: None,
        unit_materials: &layer.unit_materials,
    };
    add_source(&mut out, stack, grid, &own, rasters)?;
    for (j, r) in layer.regions.iter().enumerate() {
        out.patches.push(MaterialPatch {
            rect: r.rect,
            material: r.material,
            law: None,
        });
        let f = format!("{field}.regions[{j}] ({})", r.name);
        let region = Source {
            field: &f,
            floorplan: r.floorplan.as_deref(),
            power: r.power.as_ref(),
            origin: r.origin,
            fp: Footprint {
                at: r.rect,
                what: f.clone(),
                whole: false,
            },
            name: Some(&r.name),
            unit_materials: &[],
        };
        add_source(&mut out, stack, grid, &region, rasters)?;
    }
    if layer.outline.is_some() || !layer.regions.is_empty() {
        check_absent_power(&out, layer, grid, src, &field)?;
    }
    Ok(out)
}

/// One source of power and blocks: a layer's own, or a region's.
struct Source<'a> {
    field: &'a str,
    floorplan: Option<&'a Path>,
    power: Option<&'a PowerSpec>,
    /// Domain coordinates of the source's (0, 0).
    origin: (f64, f64),
    fp: Footprint,
    /// The region's name (block name of its uniform or raster power).
    name: Option<&'a str>,
    /// Floorplan units given a `[materials]` entry (the layer's own source).
    unit_materials: &'a [crate::stack::UnitMaterial],
}

fn add_source(
    out: &mut LayerPower,
    stack: &Stack,
    grid: &Grid,
    s: &Source,
    rasters: &dyn RasterSource,
) -> Result<(), PowerError> {
    let src = stack.source.as_path();
    let field = format!("{}.power", s.field);
    let fp = &s.fp;
    let first_block = out.blocks.len();
    if let Some(flp) = s.floorplan {
        add_floorplan(out, s, flp, src)?;
    }
    let map_w = &mut out.map_w;
    let region_block = |power_w: f64| s.name.map(|n| Block::new(n, fp.at, power_w));
    let total_w = match s.power {
        None => 0.0,
        Some(PowerSpec::Uniform { total }) => {
            // Evenly over the area: one share per cell only when every cell
            // has one area (a graded grid's small cells would get the density
            // of its large ones times their area ratio).
            if s.fp.whole && grid.is_uniform() {
                map_w.fill(total / grid.plane() as f64);
            } else {
                spread(map_w, &fp.at, *total, grid, src, &field)?;
            }
            out.blocks.extend(region_block(*total));
            *total
        }
        Some(PowerSpec::Blocks { blocks: specs }) => {
            for (i, b) in specs.iter().enumerate() {
                let at = format!("{field}.blocks[{i}] ({})", b.name);
                let mut rects = Vec::new();
                for (j, raw) in b.rects().into_iter().enumerate() {
                    let raw = shift(raw, s.origin);
                    let what = match b.rects {
                        Some(_) => format!("rects[{j}] of the block"),
                        None => "the block".into(),
                    };
                    let rect = fp
                        .fit(raw)
                        .ok_or_else(|| invalid(src, &at, fp.outside(&what, &raw)))?;
                    rects.push(rect);
                }
                let block = Block {
                    name: b.name.clone(),
                    rects,
                    power_w: b.power,
                };
                spread_block(map_w, &block, grid, src, &at)?;
                out.blocks.push(block);
            }
            specs.iter().map(|b| b.power).sum()
        }
        Some(PowerSpec::Ptrace { file, row }) => {
            let Some(flp) = s.floorplan else {
                return Err(invalid(
                    src,
                    field,
                    "`type = \"ptrace\"` needs the layer's `floorplan` to name the blocks",
                ));
            };
            let (trace, powers) = trace_powers(file, *row, src, &field)?;
            let mut total = 0.0;
            for b in &mut out.blocks[first_block..] {
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
                spread_block(map_w, b, grid, file, &b.name)?;
                total += b.power_w;
            }
            total
        }
        Some(PowerSpec::Raster { file, total }) => {
            let r = rasters.read(file)?;
            let (scale, t) = raster_scale(&r, file, *total, src, &field)?;
            raster(map_w, &r, scale, &fp.at, grid);
            out.blocks.extend(region_block(t));
            t
        }
    };
    out.total_w += total_w;
    Ok(())
}

/// The floorplan's units, placed: a block each (its power comes later, from
/// the source), and a material patch for each unit that names a material.
fn add_floorplan(
    out: &mut LayerPower,
    s: &Source,
    flp: &Path,
    src: &Path,
) -> Result<(), PowerError> {
    let fp = &s.fp;
    let units = read_flp(flp)?;
    check_material_overlaps(flp, &units, s.unit_materials)?;
    if let Some(u) = s
        .unit_materials
        .iter()
        .find(|u| !units.iter().any(|f| f.name == u.unit))
    {
        return Err(invalid(
            src,
            format!("{}.unit_materials.{}", s.field, u.unit),
            format!("no unit `{}` in floorplan {}", u.unit, flp.display()),
        ));
    }
    for unit in units {
        let at = format!("line {} ({})", unit.line, unit.name);
        let placed = shift(unit.rect, s.origin);
        let rect = fp.fit(placed).ok_or_else(|| {
            invalid(
                flp,
                &at,
                fp.outside(&format!("unit `{}`", unit.name), &placed),
            )
        })?;
        match s.unit_materials.iter().find(|u| u.unit == unit.name) {
            Some(u) => out.patches.push(MaterialPatch {
                rect,
                material: u.material,
                law: u.law.clone(),
            }),
            None => {
                if let Some(material) = unit.material {
                    out.patches.push(MaterialPatch {
                        rect,
                        material,
                        law: None,
                    });
                }
            }
        }
        out.blocks.push(Block::new(unit.name, rect, 0.0));
    }
    Ok(())
}

/// Adds block `b`'s power to the map: each rectangle its share by area (a
/// block of one rectangle all of it, to the bit); `file` and `at` name the
/// block in an error.
fn spread_block(
    map_w: &mut [f64],
    b: &Block,
    grid: &Grid,
    file: &Path,
    at: &str,
) -> Result<(), PowerError> {
    if let [r] = b.rects.as_slice() {
        return spread(map_w, r, b.power_w, grid, file, at);
    }
    let area = b.area();
    for r in &b.rects {
        spread(map_w, r, b.power_w * (r.area() / area), grid, file, at)?;
    }
    Ok(())
}

/// The trace of `file` and its columns' powers: row `row`, or the mean of
/// every row; `src` and `field` locate the spec in the stack file.
fn trace_powers(
    file: &Path,
    row: Option<usize>,
    src: &Path,
    field: &str,
) -> Result<(PowerTrace, Vec<f64>), PowerError> {
    let trace = read_ptrace(file)?;
    let powers = match row {
        None => trace.mean(),
        Some(r) => trace
            .row(r)
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
    Ok((trace, powers))
}

mod checks;
mod place;
#[cfg(test)]
mod tests;
