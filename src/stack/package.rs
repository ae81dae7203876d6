//! The package keys of a stack file, checked: a layer's `outline`, `fill`
//! and `origin`, its `[[layers.regions]]` (cooling maps: `stack::cooling`),
//! and the non-uniform grid of `[grid] cell` (its snapped lines
//! come from every outline, region, floorplan unit, inline block and cooling
//! rectangle; [`axis_edges`] makes the widths).
//!
//! Overlap policy: regions are painted in file order over the layer (fill,
//! then the outline's own material, then the floorplan's material units, then
//! the regions), so a later region wins where it overlaps an earlier one.

use super::schema::{self, MaterialRef, OriginSpec, PowerSpec, RectSpec};
use super::units::show_m;
use super::validate::checks::{check_name, invalid};
use super::validate::material::{leakage, material_at};
use super::{CoolingMap, Layer, Material, Region, Stack, StackError, ABSENT};
use crate::geometry::{axis_edges, Rect, MAX_AXIS_CELLS};
use std::collections::BTreeMap;
use std::path::Path;

/// Relative tolerance for a rectangle's edges against the domain.
const EDGE_TOL: f64 = 1e-9;

/// A rectangle inside the domain `w × l` (clamped within [`EDGE_TOL`]).
pub(super) fn rect_in(
    file: &Path,
    field: &str,
    r: &RectSpec,
    w: f64,
    l: f64,
) -> Result<Rect, StackError> {
    rect_of(file, field, r.x.0, r.y.0, r.width.0, r.length.0, (w, l))
}

/// The one check of every rectangle a stack file places (outlines, regions,
/// cooling rectangles): a positive size, inside the domain `w × l`.
pub(super) fn rect_of(
    file: &Path,
    field: &str,
    x: f64,
    y: f64,
    width: f64,
    length: f64,
    (w, l): (f64, f64),
) -> Result<Rect, StackError> {
    for (v, k) in [(width, "width"), (length, "length")] {
        if !(v.is_finite() && v > 0.0) {
            return Err(invalid(
                file,
                format!("{field}.{k}"),
                format!("must be positive, got {v:e} m"),
            ));
        }
    }
    let r = Rect {
        x0: x,
        y0: y,
        x1: x + width,
        y1: y + length,
    };
    let (tx, ty) = (EDGE_TOL * w, EDGE_TOL * l);
    let inside = x.is_finite()
        && y.is_finite()
        && r.x0 >= -tx
        && r.y0 >= -ty
        && r.x1 <= w + tx
        && r.y1 <= l + ty;
    if !inside {
        return Err(invalid(
            file,
            field,
            format!(
                "spans x [{}, {}] m, y [{}, {}] m, outside the domain [0, {}] × [0, {}] m",
                show_m(r.x0),
                show_m(r.x1),
                show_m(r.y0),
                show_m(r.y1),
                show_m(w),
                show_m(l)
            ),
        ));
    }
    Ok(Rect {
        x0: r.x0.max(0.0),
        y0: r.y0.max(0.0),
        x1: r.x1.min(w),
        y1: r.y1.min(l),
    })
}

/// A material reference: `"none"`, a name of `[materials]` (constant
/// properties only), or an inline table.
pub(super) fn material_ref(
    file: &Path,
    field: &str,
    m: &MaterialRef,
    materials: &BTreeMap<String, schema::MaterialSpec>,
) -> Result<Material, StackError> {
    let (at, spec) = match m {
        MaterialRef::Name(n) if n == "none" => return Ok(ABSENT),
        MaterialRef::Name(n) => {
            let spec = materials.get(n).ok_or_else(|| {
                let known: Vec<&str> = materials.keys().map(String::as_str).collect();
                invalid(
                    file,
                    field,
                    format!("unknown material `{n}` (known: none, {})", known.join(", ")),
                )
            })?;
            (format!("materials.{n}"), spec)
        }
        MaterialRef::Inline(spec) => (field.to_string(), spec.as_ref()),
    };
    let (mat, law) = material_at(file, &at, spec)?;
    if law.is_some() {
        return Err(invalid(
            file,
            field,
            "fills and regions take constant properties (no temperature law)",
        ));
    }
    Ok(mat)
}

/// The origin written at `field` (finite, within ±10 m as every length), or
/// `default`.
fn origin(
    file: &Path,
    field: &str,
    o: &Option<OriginSpec>,
    default: (f64, f64),
) -> Result<(f64, f64), StackError> {
    let Some(o) = o else { return Ok(default) };
    for (v, k) in [(o.x.0, "x"), (o.y.0, "y")] {
        if !(v.is_finite() && v.abs() <= 10.0) {
            return Err(invalid(
                file,
                format!("{field}.origin.{k}"),
                format!("must be a finite length within ±10 m, got {v:e} m"),
            ));
        }
    }
    Ok((o.x.0, o.y.0))
}

/// Outline, fill, origin and regions of layer `spec` (index `i`).
#[allow(clippy::type_complexity)]
pub(super) fn layer_content(
    file: &Path,
    field: &str,
    spec: &mut schema::LayerSpec,
    materials: &BTreeMap<String, schema::MaterialSpec>,
    (w, l): (f64, f64),
    resolve_power: &dyn Fn(&str, PowerSpec) -> Result<PowerSpec, StackError>,
    base: &Path,
) -> Result<(Option<Rect>, Material, (f64, f64), Vec<Region>), StackError> {
    let outline = match &spec.outline {
        Some(r) => Some(rect_in(file, &format!("{field}.outline"), r, w, l)?),
        None => None,
    };
    let fill = match (&spec.fill, outline) {
        (Some(m), Some(_)) => material_ref(file, &format!("{field}.fill"), m, materials)?,
        (Some(_), None) => {
            return Err(invalid(
                file,
                format!("{field}.fill"),
                "a fill needs an `outline` (without one the layer's material fills the domain)",
            ))
        }
        (None, _) => ABSENT,
    };
    let lo = outline.map_or((0.0, 0.0), |r| (r.x0, r.y0));
    let org = origin(file, field, &spec.origin, lo)?;
    let mut regions = Vec::new();
    for (j, r) in std::mem::take(&mut spec.regions).into_iter().enumerate() {
        check_name(file, &format!("{field}.regions[{j}]"), &r.name)?;
        let f = format!("{field}.regions[{j}] ({})", r.name);
        if regions.iter().any(|o: &Region| o.name == r.name) {
            return Err(invalid(
                file,
                format!("{f}.name"),
                "region names must be unique within a layer",
            ));
        }
        let rect = rect_of(file, &f, r.x.0, r.y.0, r.width.0, r.length.0, (w, l))?;
        let material = material_ref(file, &format!("{f}.material"), &r.material, materials)?;
        let power = match r.power {
            Some(p) => Some(resolve_power(&format!("{f}.power"), p)?),
            None => None,
        };
        if matches!(power, Some(PowerSpec::Ptrace { .. })) && r.floorplan.is_none() {
            return Err(invalid(
                file,
                format!("{f}.power"),
                "`type = \"ptrace\"` needs the region's `floorplan` to name the blocks",
            ));
        }
        if power.is_some() && material.is_absent() {
            return Err(invalid(
                file,
                format!("{f}.power"),
                "a region of material \"none\" cannot hold power",
            ));
        }
        regions.push(Region {
            name: r.name,
            rect,
            material,
            floorplan: r
                .floorplan
                .map(|p| if p.is_absolute() { p } else { base.join(p) }),
            power,
            origin: origin(file, &f, &r.origin, (rect.x0, rect.y0))?,
        });
    }
    Ok((outline, fill, org, regions))
}

/// Edges (x, y) of the inline blocks and floorplan units of a source placed
/// at `org`, and whether it holds power.
fn source_lines(
    file: &Path,
    field: &str,
    floorplan: Option<&Path>,
    power: Option<&PowerSpec>,
    org: (f64, f64),
    xs: &mut Vec<f64>,
    ys: &mut Vec<f64>,
) -> Result<(), StackError> {
    if let Some(flp) = floorplan {
        let units = crate::formats::flp::read_flp(flp)
            .map_err(|e| invalid(file, format!("{field}.floorplan"), e.to_string()))?;
        for u in units {
            xs.extend([org.0 + u.rect.x0, org.0 + u.rect.x1]);
            ys.extend([org.1 + u.rect.y0, org.1 + u.rect.y1]);
        }
    }
    if let Some(PowerSpec::Blocks { blocks }) = power {
        for r in blocks.iter().flat_map(|b| b.rects()) {
            xs.extend([org.0 + r.x0, org.0 + r.x1]);
            ys.extend([org.1 + r.y0, org.1 + r.y1]);
        }
    }
    Ok(())
}

/// Column and row edges of the `[grid] cell` grid of `stack`.
pub(super) fn plane_edges(
    stack: &Stack,
    cell: f64,
    growth: f64,
    max_cell: f64,
) -> Result<(Vec<f64>, Vec<f64>), StackError> {
    let file = stack.source.as_path();
    let (w, l) = (stack.width_m, stack.length_m);
    let (mut xs, mut ys) = (Vec::new(), Vec::new());
    let (mut fx, mut fy) = (Vec::new(), Vec::new());
    let whole = Rect {
        x0: 0.0,
        y0: 0.0,
        x1: w,
        y1: l,
    };
    let add_rect = |r: &Rect, xs: &mut Vec<f64>, ys: &mut Vec<f64>| {
        xs.extend([r.x0, r.x1]);
        ys.extend([r.y0, r.y1]);
    };
    for map in [&stack.h_top_map, &stack.h_bottom_map]
        .into_iter()
        .flatten()
    {
        if let CoolingMap::Rects(rects) = map {
            for (r, _) in rects {
                add_rect(r, &mut xs, &mut ys);
            }
        }
    }
    for (i, layer) in stack.layers.iter().enumerate() {
        let field = format!("layers[{i}] ({})", layer.name);
        let extent = layer.outline.unwrap_or(whole);
        add_rect(&extent, &mut xs, &mut ys);
        source_lines(
            file,
            &field,
            layer.floorplan.as_deref(),
            layer.power.as_ref(),
            layer.origin,
            &mut xs,
            &mut ys,
        )?;
        if layer.power.is_some() {
            fx.push((extent.x0, extent.x1));
            fy.push((extent.y0, extent.y1));
        }
        for (j, r) in layer.regions.iter().enumerate() {
            add_rect(&r.rect, &mut xs, &mut ys);
            let f = format!("{field}.regions[{j}] ({})", r.name);
            source_lines(
                file,
                &f,
                r.floorplan.as_deref(),
                r.power.as_ref(),
                r.origin,
                &mut xs,
                &mut ys,
            )?;
            if r.power.is_some() {
                fx.push((r.rect.x0, r.rect.x1));
                fy.push((r.rect.y0, r.rect.y1));
            }
        }
    }
    let too_many = |axis: &str, n: usize| {
        invalid(
            file,
            "grid.cell",
            format!(
                "{n}+ cells in {axis} (limit {}): choose a larger cell",
                MAX_AXIS_CELLS
            ),
        )
    };
    let wx = axis_edges(w, &xs, &fx, cell, growth, max_cell).map_err(|n| too_many("x", n))?;
    let wy = axis_edges(l, &ys, &fy, cell, growth, max_cell).map_err(|n| too_many("y", n))?;
    Ok((wx, wy))
}

/// The leakage of a region's inline blocks is checked like a layer's (the
/// layer's own were checked with its power); leakage is placed as the
/// dynamic power is (origin, outline, region: `thermal::nonlinear::leakage`).
pub(super) fn check_leakage(file: &Path, field: &str, layer: &Layer) -> Result<(), StackError> {
    for (j, r) in layer.regions.iter().enumerate() {
        if let Some(PowerSpec::Blocks { blocks }) = &r.power {
            for (i, b) in blocks.iter().enumerate() {
                let at = format!("{field}.regions[{j}].power.blocks[{i}].leakage");
                leakage(file, &at, b.leakage)?;
            }
        }
    }
    Ok(())
}
