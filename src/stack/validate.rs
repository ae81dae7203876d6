//! From the raw [`schema::StackFile`] to a checked [`Stack`]: units to SI,
//! materials looked up, paths made absolute relative to the stack file,
//! and each number checked for sign and finiteness.

use super::law::{Law, MaterialLaw, PropertySpec};
use super::schema::{self, LeakageSpec, PowerSpec, StackFile};
use super::{Layer, Material, Stack, StackError};
use std::path::{Path, PathBuf};

/// Largest grid we accept from a file or flag; beyond this a typo is likelier than intent.
const MAX_CELLS_PER_AXIS: usize = 1 << 16;

fn invalid(file: &Path, field: impl Into<String>, message: impl Into<String>) -> StackError {
    StackError::Invalid {
        file: file.to_path_buf(),
        field: field.into(),
        message: message.into(),
    }
}

/// Accepted range of a field, from its name: beyond it a number is a typo or
/// a unit slip, and would make the system singular or overflow long before
/// the solver could say which field was at fault (README: limits).
fn range_of(field: &str) -> (f64, f64, &'static str) {
    let last = field.rsplit('.').next().unwrap_or(field);
    match last {
        "k" | "kx" | "ky" | "kz" => (1e-6, 1e6, "W/(m K)"),
        "heat_capacity" => (1.0, 1e9, "J/(m^3 K)"),
        "power" | "total" => (0.0, 1e9, "W"),
        "thickness" => (1e-12, 10.0, "m"),
        "width" | "length" | "height" | "x" | "y" => (1e-12, 10.0, "m"),
        "ambient" => (1.0, 1e4, "K"),
        "h_top" | "h_bottom" => (1e-6, 1e12, "W/(m^2 K)"),
        _ => (0.0, f64::MAX, ""),
    }
}

fn in_range(file: &Path, field: &str, v: f64, lo: f64) -> Result<f64, StackError> {
    let (min, hi, unit) = range_of(field);
    let lo = if lo > 0.0 { lo.max(min) } else { lo };
    if v.is_finite() && v >= lo && v <= hi && (lo > 0.0 || v >= 0.0) {
        return Ok(v);
    }
    let what = if lo > 0.0 {
        "a positive number"
    } else {
        "zero or positive"
    };
    Err(invalid(
        file,
        field,
        format!("must be {what} between {lo:e} and {hi:e} {unit}, got {v:e}"),
    ))
}

fn positive(file: &Path, field: &str, v: f64) -> Result<f64, StackError> {
    in_range(file, field, v, f64::MIN_POSITIVE)
}

fn non_negative(file: &Path, field: &str, v: f64) -> Result<f64, StackError> {
    in_range(file, field, v, 0.0)
}

pub(super) fn check_grid(nx: usize, ny: usize, file: &Path, field: &str) -> Result<(), StackError> {
    for (n, axis) in [(nx, "nx"), (ny, "ny")] {
        if n == 0 || n > MAX_CELLS_PER_AXIS {
            return Err(invalid(
                file,
                format!("{field}.{axis}"),
                format!("must be between 1 and {MAX_CELLS_PER_AXIS}, got {n}"),
            ));
        }
    }
    Ok(())
}

pub(super) fn material(
    file: &Path,
    name: &str,
    m: &schema::MaterialSpec,
) -> Result<(Material, Option<MaterialLaw>), StackError> {
    let field = |k: &str| format!("materials.{name}.{k}");
    // The law's shape, then its values against the key's physical range
    // (as a plain number is checked).
    let law = |key: &str, spec: &PropertySpec| -> Result<Law, StackError> {
        let l = Law::from_spec(spec).map_err(|msg| invalid(file, field(key), msg))?;
        match &l {
            Law::Constant(v) | Law::PowerLaw { v300: v, .. } => {
                positive(file, &field(key), *v)?;
            }
            Law::Polynomial(_) => {
                positive(file, &field(key), l.eval(300.0))?;
            }
            Law::Table(points) => {
                for p in points {
                    positive(file, &field(key), p[1])?;
                }
            }
        }
        Ok(l)
    };
    let k = match (&m.k, &m.kx, &m.ky, &m.kz) {
        (Some(k), None, None, None) => {
            let k = law("k", k)?;
            [k.clone(), k.clone(), k]
        }
        (None, Some(kx), Some(ky), Some(kz)) => [law("kx", kx)?, law("ky", ky)?, law("kz", kz)?],
        _ => {
            return Err(invalid(
                file,
                format!("materials.{name}"),
                "give either `k` or all three of `kx`, `ky`, `kz`",
            ))
        }
    };
    let heat_capacity = law("heat_capacity", &m.heat_capacity)?;
    let laws = MaterialLaw { k, heat_capacity };
    let at300 = laws.at(300.0).ok_or_else(|| {
        invalid(
            file,
            format!("materials.{name}"),
            "a property law is not positive at 300 K",
        )
    })?;
    let constant = laws.k.iter().all(Law::is_constant) && laws.heat_capacity.is_constant();
    Ok((at300, (!constant).then_some(laws)))
}

pub(super) fn leakage(
    file: &Path,
    field: &str,
    l: Option<LeakageSpec>,
) -> Result<Option<LeakageSpec>, StackError> {
    let Some(l) = l else { return Ok(None) };
    if !(l.p_ref.is_finite() && l.p_ref >= 0.0 && l.p_ref <= crate::power::MAX_POWER_W) {
        return Err(invalid(
            file,
            format!("{field}.p_ref"),
            format!("must be in [0, 1e9] W, got {}", l.p_ref),
        ));
    }
    if !(l.t_ref.is_finite() && l.t_ref > 0.0) {
        return Err(invalid(
            file,
            format!("{field}.t_ref"),
            format!("must be a positive temperature in K, got {}", l.t_ref),
        ));
    }
    if !(l.beta.is_finite() && l.beta.abs() <= 1.0) {
        return Err(invalid(
            file,
            format!("{field}.beta"),
            format!("must be in [-1, 1] 1/K, got {}", l.beta),
        ));
    }
    Ok(Some(l))
}

fn resolve_path(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

fn resolve_power(
    file: &Path,
    base: &Path,
    field: &str,
    p: PowerSpec,
) -> Result<PowerSpec, StackError> {
    Ok(match p {
        PowerSpec::Uniform { total } => PowerSpec::Uniform {
            total: non_negative(file, &format!("{field}.total"), total)?,
        },
        PowerSpec::Blocks { blocks } => {
            for (i, b) in blocks.iter().enumerate() {
                let f = format!("{field}.blocks[{i}] ({})", b.name);
                if let Some(j) = blocks[..i].iter().position(|o| o.name == b.name) {
                    return Err(invalid(
                        file,
                        format!("{f}.name"),
                        format!(
                            "block `{}` is already defined as blocks[{j}]; names must be unique \
                             (a trace column names one block)",
                            b.name
                        ),
                    ));
                }
                non_negative(file, &format!("{f}.power"), b.power)?;
                positive(file, &format!("{f}.width"), b.width.0)?;
                positive(file, &format!("{f}.height"), b.height.0)?;
                non_negative(file, &format!("{f}.x"), b.x.0)?;
                non_negative(file, &format!("{f}.y"), b.y.0)?;
            }
            PowerSpec::Blocks { blocks }
        }
        PowerSpec::Ptrace { file: f, row } => PowerSpec::Ptrace {
            file: resolve_path(base, &f),
            row,
        },
        PowerSpec::Raster { file: f, total } => {
            if let Some(t) = total {
                non_negative(file, &format!("{field}.total"), t)?;
            }
            PowerSpec::Raster {
                file: resolve_path(base, &f),
                total,
            }
        }
    })
}

pub(super) fn resolve(raw: StackFile, file: &Path) -> Result<Stack, StackError> {
    let base = file.parent().unwrap_or(Path::new("."));
    let width_m = positive(file, "chip.width", raw.chip.width.0)?;
    let length_m = positive(file, "chip.length", raw.chip.length.0)?;
    let domain = (width_m, length_m);
    let g = &raw.grid;
    let (nx, ny, cell) = match (g.nx, g.ny, g.cell) {
        (Some(nx), Some(ny), None) => (nx, ny, None),
        (None, None, Some(c)) => (1, 1, Some(positive(file, "grid.cell", c.0)?)),
        _ => {
            return Err(invalid(
                file,
                "grid",
                "give either `nx` and `ny` (uniform grid) or `cell` (non-uniform grid)",
            ))
        }
    };
    check_grid(nx, ny, file, "grid")?;
    let max_cell = match (g.max_cell, cell) {
        (Some(m), Some(c)) if m.0.is_finite() && m.0 >= c => m.0,
        (Some(m), _) => {
            return Err(invalid(
                file,
                "grid.max_cell",
                format!(
                    "goes with `cell` and must be at least `cell`, got {} m",
                    m.0
                ),
            ))
        }
        (None, c) => 8.0 * c.unwrap_or(0.0),
    };
    let growth = g.growth.unwrap_or(1.2);
    if !(1.0..=4.0).contains(&growth) || g.growth.is_some() && cell.is_none() {
        return Err(invalid(
            file,
            "grid.growth",
            format!("must be in [1, 4] and goes with `cell`, got {growth}"),
        ));
    }
    let ambient_k = positive(file, "boundary.ambient", raw.boundary.ambient.0)?;
    let (h_top, h_top_map) =
        super::cooling::cooling(file, "boundary.h_top", &raw.boundary.h_top, domain)?;
    let (h_bottom, h_bottom_map) = match &raw.boundary.h_bottom {
        Some(h) => {
            let (v, map) = super::cooling::cooling(file, "boundary.h_bottom", h, domain)?;
            (map.is_none().then_some(v), map)
        }
        None => (None, None),
    };
    if raw.layers.is_empty() {
        return Err(invalid(
            file,
            "layers",
            "the stack needs at least one layer",
        ));
    }
    let bare_thickness: Vec<bool> = raw.layers.iter().map(|l| l.thickness.1).collect();
    let mut layers = Vec::with_capacity(raw.layers.len());
    for (i, mut l) in raw.layers.into_iter().enumerate() {
        let field = format!("layers[{i}] ({})", l.name);
        if layers.iter().any(|p: &Layer| p.name == l.name) {
            return Err(invalid(
                file,
                format!("{field}.name"),
                "layer names must be unique",
            ));
        }
        let spec = raw.materials.get(&l.material).ok_or_else(|| {
            let known: Vec<&str> = raw.materials.keys().map(String::as_str).collect();
            invalid(
                file,
                format!("{field}.material"),
                format!(
                    "unknown material `{}` (known: {})",
                    l.material,
                    known.join(", ")
                ),
            )
        })?;
        let (material, law) = material(file, &l.material, spec)?;
        let mut unit_materials = Vec::new();
        for (unit, name) in l.unit_materials.iter().flatten() {
            let at = format!("{field}.unit_materials.{unit}");
            if l.floorplan.is_none() {
                return Err(invalid(
                    file,
                    at,
                    "needs the layer's `floorplan` to name the units",
                ));
            }
            let spec = raw
                .materials
                .get(name)
                .ok_or_else(|| invalid(file, &at, format!("unknown material `{name}`")))?;
            let (m, law) = super::validate::material(file, name, spec)?;
            unit_materials.push(super::UnitMaterial {
                unit: unit.clone(),
                material_name: name.clone(),
                material: m,
                law,
            });
        }
        let layer_leakage = leakage(file, &format!("{field}.leakage"), l.leakage)?;
        if let Some(PowerSpec::Blocks { blocks }) = &l.power {
            for (j, b) in blocks.iter().enumerate() {
                leakage(
                    file,
                    &format!("{field}.power.blocks[{j}].leakage"),
                    b.leakage,
                )?;
            }
        }
        let thickness_m = positive(file, &format!("{field}.thickness"), l.thickness.0)?;
        let cells = l.cells.unwrap_or(1);
        if cells == 0 || cells > 4096 {
            return Err(invalid(
                file,
                format!("{field}.cells"),
                format!("must be between 1 and 4096, got {cells}"),
            ));
        }
        let rp = |f: &str, p: PowerSpec| resolve_power(file, base, f, p);
        let (outline, fill, origin, regions) =
            super::package::layer_content(file, &field, &mut l, &raw.materials, domain, &rp, base)?;
        let power = match l.power {
            Some(p) => Some(resolve_power(file, base, &format!("{field}.power"), p)?),
            None => None,
        };
        if matches!(power, Some(PowerSpec::Ptrace { .. })) && l.floorplan.is_none() {
            return Err(invalid(
                file,
                format!("{field}.power"),
                "`type = \"ptrace\"` needs the layer's `floorplan` to name the blocks",
            ));
        }
        layers.push(Layer {
            outline,
            fill,
            origin,
            regions,
            name: l.name,
            material_name: l.material,
            material,
            thickness_m,
            cells,
            floorplan: l.floorplan.map(|p| resolve_path(base, &p)),
            power,
            law,
            leakage: layer_leakage,
            unit_materials,
        });
        super::package::check_leakage(file, &field, layers.last().expect("pushed"))?;
    }
    let solver = raw.solver.unwrap_or_default();
    if let Some(rtol) = solver.rtol {
        if !(rtol > 0.0 && rtol < 1.0) {
            return Err(invalid(
                file,
                "solver.rtol",
                format!("must be in (0, 1), got {rtol}"),
            ));
        }
    }
    if solver.max_iter == Some(0) {
        return Err(invalid(file, "solver.max_iter", "must be at least 1"));
    }
    if let Some(d) = solver.chebyshev_degree {
        if d == 0 || d > 64 {
            return Err(invalid(
                file,
                "solver.chebyshev_degree",
                format!("must be 1..=64, got {d}"),
            ));
        }
    }
    let probes = super::probes::resolve(&raw.probes, file, width_m, length_m, &layers)?;
    let mut stack = Stack {
        probes,
        warnings: Vec::new(),
        source: file.to_path_buf(),
        title: raw.title,
        width_m,
        length_m,
        nx,
        ny,
        plane_widths: None,
        ambient_k,
        h_top,
        h_bottom,
        h_top_map,
        h_bottom_map,
        layers,
        solver,
    };
    if let Some(cell) = cell {
        let (wx, wy) = super::package::plane_widths(&stack, cell, growth, max_cell)?;
        (stack.nx, stack.ny) = (wx.len(), wy.len());
        stack.plane_widths = Some((wx, wy));
    }
    stack.warnings = super::plausible::warnings(&stack, &bare_thickness);
    Ok(stack)
}
