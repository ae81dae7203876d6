//! From the raw [`StackFile`] to a checked [`Stack`]: units to SI,
//! materials looked up, paths made absolute relative to the stack file,
//! and each number checked for sign and finiteness ([`checks`]; materials
//! and leakage in [`material`]).

mod blocks;
pub(super) mod checks;
pub(super) mod material;

use super::schema::{PowerSpec, StackFile};
use super::{Layer, Stack, StackError};
use blocks::block_rects;
pub(super) use checks::check_grid;
use checks::{check_name, invalid, non_negative, positive};
use material::{leakage, material};
use std::path::{Path, PathBuf};

fn resolve_path(base: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    }
}

/// `path`, named by `{field}.file`, if it can be opened: a missing power
/// file is reported with the field that names it (its contents are read and
/// checked later, with the power).
fn existing(file: &Path, field: &str, path: PathBuf) -> Result<PathBuf, StackError> {
    match std::fs::metadata(&path) {
        Ok(_) => Ok(path),
        Err(e) => Err(invalid(
            file,
            format!("{field}.file"),
            format!("{}: cannot read: {e}", path.display()),
        )),
    }
}

pub(super) fn resolve_power(
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
                check_name(file, &format!("{field}.blocks[{i}]"), &b.name)?;
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
                block_rects(file, &f, b)?;
            }
            PowerSpec::Blocks { blocks }
        }
        PowerSpec::Ptrace { file: f, row } => PowerSpec::Ptrace {
            file: existing(file, field, resolve_path(base, &f))?,
            row,
        },
        PowerSpec::Raster { file: f, total } => {
            if let Some(t) = total {
                non_negative(file, &format!("{field}.total"), t)?;
            }
            PowerSpec::Raster {
                file: existing(file, field, resolve_path(base, &f))?,
                total,
            }
        }
    })
}

/// `domain_key`: the name the file gives the domain table (`chip`,
/// `package` or `domain`), for messages.
pub(super) fn resolve(raw: StackFile, file: &Path, domain_key: &str) -> Result<Stack, StackError> {
    let base = file.parent().unwrap_or(Path::new("."));
    let width_m = positive(file, &format!("{domain_key}.width"), raw.chip.width.0)?;
    let length_m = positive(file, &format!("{domain_key}.length"), raw.chip.length.0)?;
    let domain = (width_m, length_m);
    let plan = grid_plan(&raw.grid, file, domain)?;
    let cooled = raw.layers.iter().any(|l| l.cavity.is_some());
    let boundary = boundary(&raw.boundary, file, domain, cooled)?;
    let cooling_files = [
        ("boundary.h_top", &raw.boundary.h_top),
        ("boundary.h_bottom", &raw.boundary.h_bottom),
    ]
    .into_iter()
    .filter_map(|(field, spec)| match spec {
        Some(super::schema::CoolingSpec::Raster { file: f, .. }) => Some((
            format!("{field}.file"),
            super::cooling::raster_path(file, f),
        )),
        _ => None,
    })
    .collect();
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
        let layer = layer(file, base, domain, &raw.materials, &layers, i, l)?;
        layers.push(layer);
        let field = format!("layers[{i}] ({})", layers[i].name);
        super::package::check_leakage(file, &field, &layers[i])?;
    }
    let last = layers.len() - 1;
    for (i, l) in layers.iter().enumerate() {
        if l.cavity.is_some() && (i == 0 || i == last) {
            return Err(invalid(
                file,
                format!("layers[{i}] ({}).cavity", l.name),
                "a cavity lies between two solid layers (its top and bottom walls); put a layer below and above it",
            ));
        }
    }
    let solver = raw.solver.unwrap_or_default();
    check_solver(&solver, file)?;
    let probes = super::probes::resolve(&raw.probes, file, width_m, length_m, &layers)?;
    if let Some(h) = raw.output.as_ref().and_then(|o| o.hotspot) {
        if h.rows == 0 || h.cols == 0 {
            return Err(invalid(
                file,
                "output.hotspot",
                format!(
                    "rows and cols must be at least 1, got {} x {}",
                    h.rows, h.cols
                ),
            ));
        }
    }
    let hotspot_out = raw.output.as_ref().and_then(|o| o.hotspot);
    let (block_map, threedice) = match raw.output {
        Some(o) => (o.block_map, o.threedice),
        None => (None, None),
    };
    let threedice = threedice
        .map(|t| super::peer_outputs::resolve(t, file, &layers, &probes))
        .transpose()?;
    let mut stack = Stack {
        probes,
        block_map,
        threedice,
        hotspot: hotspot_out,
        warnings: Vec::new(),
        source: file.to_path_buf(),
        title: raw.title,
        width_m,
        length_m,
        nx: plan.nx,
        ny: plan.ny,
        plane_edges: None,
        ambient_k: boundary.ambient_k,
        h_top: boundary.h_top,
        h_bottom: boundary.h_bottom,
        h_top_map: boundary.h_top_map,
        h_bottom_map: boundary.h_bottom_map,
        cooling_files,
        layers,
        solver,
    };
    if let Some(e) = plan.edges {
        stack.plane_edges = Some(e);
    }
    if let Some(cell) = plan.cell {
        let (ex, ey) = super::package::plane_edges(&stack, cell, plan.growth, plan.max_cell)?;
        (stack.nx, stack.ny) = (ex.len() - 1, ey.len() - 1);
        stack.plane_edges = Some((ex, ey));
    }
    super::cavity::channel_grid(&mut stack, plan.cell.is_some())?;
    stack.warnings = super::plausible::warnings(&stack, &bare_thickness);
    Ok(stack)
}

/// The `[grid]` table, checked: a uniform `nx` × `ny`, or a non-uniform
/// grid's `cell`, `growth` and `max_cell` (its lines are made later, from
/// the stack's outlines).
struct GridPlan {
    /// Column and row edges given line by line (`x_edges`, `y_edges`).
    edges: Option<(Vec<f64>, Vec<f64>)>,
    nx: usize,
    ny: usize,
    cell: Option<f64>,
    growth: f64,
    max_cell: f64,
}

fn grid_plan(
    g: &super::schema::GridSpec,
    file: &Path,
    (width_m, length_m): (f64, f64),
) -> Result<GridPlan, StackError> {
    let edges = match (&g.x_edges, &g.y_edges) {
        (None, None) => None,
        (Some(x), Some(y)) if g.nx.is_none() && g.ny.is_none() && g.cell.is_none() => Some((
            edges(file, "grid.x_edges", x, width_m)?,
            edges(file, "grid.y_edges", y, length_m)?,
        )),
        _ => {
            return Err(invalid(
                file,
                "grid",
                "give both `x_edges` and `y_edges`, and neither `nx`/`ny` nor `cell` with them",
            ))
        }
    };
    let (nx, ny, cell) = match (g.nx, g.ny, g.cell) {
        _ if edges.is_some() => {
            let (x, y) = edges.as_ref().expect("matched");
            (x.len() - 1, y.len() - 1, None)
        }
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
    if let Some(c) = cell {
        // Snapped lines closer than a tenth of `cell` merge (`geometry::axis_edges`):
        // a cell wider than the domain would leave one cell and no outline.
        if c > width_m.max(length_m) {
            return Err(invalid(
                file,
                "grid.cell",
                format!(
                    "{c} m is larger than the domain ({width_m} x {length_m} m): \
                     the grid would lose every outline and region; choose a cell \
                     smaller than the dies"
                ),
            ));
        }
    }
    let growth = g.growth.unwrap_or(1.2);
    if g.growth.is_some() && cell.is_none() {
        return Err(invalid(
            file,
            "grid.growth",
            "goes with `cell` (a non-uniform grid); `nx`/`ny` give a uniform grid",
        ));
    }
    if !(1.0..=4.0).contains(&growth) {
        return Err(invalid(
            file,
            "grid.growth",
            format!("must be in [1, 4], got {growth}"),
        ));
    }
    Ok(GridPlan {
        edges,
        nx,
        ny,
        cell,
        growth,
        max_cell,
    })
}

/// Grid lines given one by one: strictly increasing from 0 to `extent`
/// (the ends to 1e-9 of it, then set exactly).
fn edges(file: &Path, field: &str, e: &[f64], extent: f64) -> Result<Vec<f64>, StackError> {
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * extent;
    let ok = e.len() >= 2
        && e.iter().all(|v| v.is_finite())
        && e.windows(2).all(|w| w[1] > w[0])
        && close(e[0], 0.0)
        && close(e[e.len() - 1], extent);
    if !ok {
        return Err(invalid(
            file,
            field,
            format!(
                "must increase strictly from 0 to the extent, {extent} m, with at least 2 lines"
            ),
        ));
    }
    let mut out = e.to_vec();
    out[0] = 0.0;
    *out.last_mut().expect("2 or more") = extent;
    Ok(out)
}

/// The `[boundary]` table, checked.
struct Boundary {
    ambient_k: f64,
    h_top: f64,
    h_top_map: Option<super::CoolingMap>,
    h_bottom: Option<f64>,
    h_bottom_map: Option<super::CoolingMap>,
}

/// Either face may be adiabatic (absent, or `h = 0`): a stack cooled only
/// from below needs no dummy `h_top`. One that removes heat nowhere has no
/// steady state (its temperature grows without bound), so it is refused.
fn boundary(
    b: &super::schema::BoundarySpec,
    file: &Path,
    domain: (f64, f64),
    liquid_cooled: bool,
) -> Result<Boundary, StackError> {
    let ambient_k = positive(file, "boundary.ambient", b.ambient.0)?;
    let (h_top, h_top_map) = match &b.h_top {
        Some(h) => super::cooling::cooling(file, "boundary.h_top", h, domain)?,
        None => (0.0, None),
    };
    let (h_bottom, h_bottom_map) = match &b.h_bottom {
        Some(h) => {
            let (v, map) = super::cooling::cooling(file, "boundary.h_bottom", h, domain)?;
            (map.is_none().then_some(v).filter(|&v| v > 0.0), map)
        }
        None => (None, None),
    };
    if !liquid_cooled
        && h_top == 0.0
        && h_top_map.is_none()
        && h_bottom.is_none()
        && h_bottom_map.is_none()
    {
        return Err(invalid(
            file,
            "boundary",
            "no face removes heat: give `h_top` or `h_bottom` (a number > 0 or a cooling \
             map); the side faces are adiabatic, so the stack would have no steady state",
        ));
    }
    Ok(Boundary {
        ambient_k,
        h_top,
        h_top_map,
        h_bottom,
        h_bottom_map,
    })
}

/// Layer `i` of the file, checked against the materials and the layers
/// below it (`below`, for unique names).
fn layer(
    file: &Path,
    base: &Path,
    domain: (f64, f64),
    materials: &std::collections::BTreeMap<String, super::schema::MaterialSpec>,
    below: &[Layer],
    i: usize,
    mut l: super::schema::LayerSpec,
) -> Result<Layer, StackError> {
    check_name(file, &format!("layers[{i}]"), &l.name)?;
    let field = format!("layers[{i}] ({})", l.name);
    if below.iter().any(|p: &Layer| p.name == l.name) {
        return Err(invalid(
            file,
            format!("{field}.name"),
            "layer names must be unique",
        ));
    }
    let spec = materials.get(&l.material).ok_or_else(|| {
        let known: Vec<&str> = materials.keys().map(String::as_str).collect();
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
    let unit_materials = unit_materials(file, &field, &l, materials)?;
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
        super::package::layer_content(file, &field, &mut l, materials, domain, &rp, base)?;
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
    let cavity = match l.cavity {
        Some(c) => Some(cavity_layer(
            file,
            &field,
            c,
            domain,
            thickness_m,
            cells,
            &power,
        )?),
        None => None,
    };
    Ok(Layer {
        cavity,
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
    })
}

/// The layer's cavity, checked, on a layer that can hold one: one z cell
/// (the coolant is one node across the height, as in 3D-ICE's models) and
/// no power of its own.
fn cavity_layer(
    file: &Path,
    field: &str,
    c: super::cavity::CavitySpec,
    domain: (f64, f64),
    height_m: f64,
    cells: usize,
    power: &Option<PowerSpec>,
) -> Result<super::Cavity, StackError> {
    if cells != 1 {
        return Err(invalid(
            file,
            format!("{field}.cells"),
            format!("a cavity layer has one z cell (the coolant is one node across its height), got {cells}"),
        ));
    }
    if power.is_some() {
        return Err(invalid(
            file,
            format!("{field}.power"),
            "a cavity layer dissipates no power; put the source on a die layer",
        ));
    }
    super::cavity::resolve(file, field, c, domain, height_m)
}

/// A layer's `unit_materials`: each a known material, on a layer whose
/// floorplan names the units.
fn unit_materials(
    file: &Path,
    field: &str,
    l: &super::schema::LayerSpec,
    materials: &std::collections::BTreeMap<String, super::schema::MaterialSpec>,
) -> Result<Vec<super::UnitMaterial>, StackError> {
    let mut out = Vec::new();
    for (unit, name) in l.unit_materials.iter().flatten() {
        let at = format!("{field}.unit_materials.{unit}");
        if l.floorplan.is_none() {
            return Err(invalid(
                file,
                at,
                "needs the layer's `floorplan` to name the units",
            ));
        }
        let spec = materials
            .get(name)
            .ok_or_else(|| invalid(file, &at, format!("unknown material `{name}`")))?;
        let (m, law) = material(file, name, spec)?;
        out.push(super::UnitMaterial {
            unit: unit.clone(),
            material_name: name.clone(),
            material: m,
            law,
        });
    }
    Ok(out)
}

/// The `[solver]` table's numbers, in range.
fn check_solver(solver: &super::schema::SolverSpec, file: &Path) -> Result<(), StackError> {
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
    Ok(())
}
