//! Resolves one layer's power source into a [`LayerPower`]: reads the
//! layer's floorplan (blocks for the per-block report, material patches) and
//! its power source (uniform, inline blocks, HotSpot trace, CSV/PNG raster),
//! checks every rectangle against the footprint, and rasterizes the power
//! conservatively, so the map's sum equals `total_w` to rounding.

use super::csv_raster::RasterUnit;
use super::flp::read_flp;
use super::ptrace::read_ptrace;
use super::raster_cache::{Direct, RasterSource};
use super::rasterize::{add_pixels, add_rect};
use super::{invalid, Block, LayerPower, MaterialPatch, PowerError, Rect};
use crate::grid::Grid;
use crate::stack::{PowerSpec, Stack};
use checks::{check_absent_power, check_material_overlaps};
use std::path::Path;

/// How far, relative to the footprint size, a rectangle may overshoot it and
/// still be accepted (then clamped): HotSpot coordinates are decimal, so
/// `left-x + width` in binary floating point can land a few ulps past the edge.
const EDGE_TOL: f64 = 1e-9;

/// The rectangle a source's rectangles must lie in: the domain, a layer's
/// outline or a region, metres.
struct Footprint {
    at: Rect,
    /// How messages name it.
    what: String,
    /// Whether it is the whole domain (uniform power then fills every cell).
    whole: bool,
}

impl Footprint {
    /// `r` clamped to the footprint, or `None` when it sticks out by more than
    /// [`EDGE_TOL`]: power outside the chip is an input mistake, never clipped.
    fn fit(&self, r: Rect) -> Option<Rect> {
        let a = self.at;
        let (tx, ty) = (EDGE_TOL * (a.x1 - a.x0), EDGE_TOL * (a.y1 - a.y0));
        let inside =
            r.x0 >= a.x0 - tx && r.y0 >= a.y0 - ty && r.x1 <= a.x1 + tx && r.y1 <= a.y1 + ty;
        inside.then(|| Rect {
            x0: r.x0.max(a.x0),
            y0: r.y0.max(a.y0),
            x1: r.x1.min(a.x1),
            y1: r.y1.min(a.y1),
        })
    }

    fn outside(&self, what: &str, r: &Rect) -> String {
        let a = self.at;
        format!(
            "{what} spans x [{}, {}] m, y [{}, {}] m, outside the footprint \
             [{}, {}] × [{}, {}] m ({})",
            r.x0, r.x1, r.y0, r.y1, a.x0, a.x1, a.y0, a.y1, self.what
        )
    }
}

/// `r` moved by `origin`.
fn shift(r: Rect, (ox, oy): (f64, f64)) -> Rect {
    if (ox, oy) == (0.0, 0.0) {
        return r;
    }
    Rect {
        x0: r.x0 + ox,
        y0: r.y0 + oy,
        x1: r.x1 + ox,
        y1: r.y1 + oy,
    }
}

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
            what: "chip.width × chip.length".into(),
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
            out.blocks.push(Block {
                name: unit.name,
                rect,
                power_w: 0.0,
            });
        }
    }
    let map_w = &mut out.map_w;
    let region_block = |power_w: f64| {
        s.name.map(|n| Block {
            name: n.to_string(),
            rect: fp.at,
            power_w,
        })
    };
    let total_w = match s.power {
        None => 0.0,
        Some(PowerSpec::Uniform { total }) => {
            if s.fp.whole {
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
                let raw = shift(
                    Rect {
                        x0: b.x.0,
                        y0: b.y.0,
                        x1: b.x.0 + b.width.0,
                        y1: b.y.0 + b.height.0,
                    },
                    s.origin,
                );
                let rect = fp
                    .fit(raw)
                    .ok_or_else(|| invalid(src, &at, fp.outside("the block", &raw)))?;
                spread(map_w, &rect, b.power, grid, src, &at)?;
                out.blocks.push(Block {
                    name: b.name.clone(),
                    rect,
                    power_w: b.power,
                });
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
                spread(map_w, &b.rect, b.power_w, grid, file, &b.name)?;
                total += b.power_w;
            }
            total
        }
        Some(PowerSpec::Raster { file, total }) => {
            let r = rasters.read(file)?;
            let t = raster(map_w, &r, file, *total, stack, grid, &field, &fp.at)?;
            out.blocks.extend(region_block(t));
            t
        }
    };
    out.total_w += total_w;
    Ok(())
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
#[allow(clippy::too_many_arguments)]
fn raster(
    map: &mut [f64],
    r: &super::csv_raster::Raster,
    file: &Path,
    total: Option<f64>,
    stack: &Stack,
    grid: &Grid,
    field: &str,
    extent: &Rect,
) -> Result<f64, PowerError> {
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
    let scaled: Vec<f64>;
    let values = if scale != 1.0 {
        scaled = r.values.iter().map(|v| v * scale).collect();
        &scaled
    } else {
        &r.values
    };
    add_pixels(map, values, r.rows, r.cols, extent, grid);
    Ok(total.unwrap_or(sum))
}

mod checks;
#[cfg(test)]
mod tests;
