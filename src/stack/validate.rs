//! From the raw [`schema::StackFile`] to a checked [`Stack`]: units to SI,
//! materials looked up, paths made absolute relative to the stack file,
//! and each number checked for sign and finiteness.

use super::schema::{self, PowerSpec, StackFile};
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

fn material(file: &Path, name: &str, m: &schema::MaterialSpec) -> Result<Material, StackError> {
    let field = |k: &str| format!("materials.{name}.{k}");
    let k = match (m.k, m.kx, m.ky, m.kz) {
        (Some(k), None, None, None) => {
            let k = positive(file, &field("k"), k)?;
            [k, k, k]
        }
        (None, Some(kx), Some(ky), Some(kz)) => [
            positive(file, &field("kx"), kx)?,
            positive(file, &field("ky"), ky)?,
            positive(file, &field("kz"), kz)?,
        ],
        _ => {
            return Err(invalid(
                file,
                format!("materials.{name}"),
                "give either `k` or all three of `kx`, `ky`, `kz`",
            ))
        }
    };
    let heat_capacity = positive(file, &field("heat_capacity"), m.heat_capacity)?;
    Ok(Material { k, heat_capacity })
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
    check_grid(raw.grid.nx, raw.grid.ny, file, "grid")?;
    let ambient_k = positive(file, "boundary.ambient", raw.boundary.ambient.0)?;
    let h_top = positive(file, "boundary.h_top", raw.boundary.h_top)?;
    let h_bottom = match raw.boundary.h_bottom {
        Some(h) => Some(positive(file, "boundary.h_bottom", h)?),
        None => None,
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
    for (i, l) in raw.layers.into_iter().enumerate() {
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
        let material = material(file, &l.material, spec)?;
        let thickness_m = positive(file, &format!("{field}.thickness"), l.thickness.0)?;
        let cells = l.cells.unwrap_or(1);
        if cells == 0 || cells > 4096 {
            return Err(invalid(
                file,
                format!("{field}.cells"),
                format!("must be between 1 and 4096, got {cells}"),
            ));
        }
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
            name: l.name,
            material_name: l.material,
            material,
            thickness_m,
            cells,
            floorplan: l.floorplan.map(|p| resolve_path(base, &p)),
            power,
        });
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
        nx: raw.grid.nx,
        ny: raw.grid.ny,
        ambient_k,
        h_top,
        h_bottom,
        layers,
        solver,
    };
    stack.warnings = super::plausible::warnings(&stack, &bare_thickness);
    Ok(stack)
}
