//! HotSpot 7's microchannel layer as a cuth 4RM cavity: the walls' and the
//! coolant's materials, the flow HotSpot's pressure network gives, the
//! film coefficient, and the domain a cavity needs (the chip itself: a 4RM
//! cavity spans the domain, so HotSpot's wider package becomes a film over
//! the chip's top). Every number written states the setting it comes from
//! and the conversion.
//!
//! HotSpot's model (`microchannel.c`, `temperature_grid.c`): every fluid
//! cell is a pressure node, linked to each fluid neighbour by the hydraulic
//! conductance of a rectangular duct one cell long; inlet cells are held at
//! `-pumping_pressure` (or fed through `-pump_internal_res`), outlet cells
//! at 0. A fluid cell exchanges heat with a solid neighbour through half the
//! solid cell in series with 1/(htc · shared face), on every face; cuth's
//! 4RM does the same with `h` on the side, top and bottom faces.

use super::hotspot_channels::{layout, parse_map};
use super::hotspot_files::HsConfig;
use super::hotspot_layers::{Materials, Pending};
use super::{read_text, round12, ImportError};
use std::path::Path;

/// HotSpot 7's microchannel defaults (`default_microchannel_config`).
mod default {
    pub const PUMPING_PRESSURE: f64 = 5000.0;
    pub const PUMP_INTERNAL_RES: f64 = 0.0;
    pub const INLET_TEMPERATURE: f64 = 300.0;
    pub const COOLANT_CAPAC: f64 = 4172638.0;
    pub const COOLANT_RES: f64 = 1.647717911;
    pub const COOLANT_VISC: f64 = 0.000889;
    pub const WALL_CAPAC: f64 = 1635660.0;
    pub const WALL_RES: f64 = 0.0076923077;
    pub const HTC: f64 = 27132.0;
}

/// The settings a microchannel import reads; listed in the footer of
/// settings without effect only when no layer is liquid-cooled.
pub(super) const SETTINGS: &[&str] = &[
    "pumping_pressure",
    "pump_internal_res",
    "inlet_temperature",
    "coolant_material",
    "coolant_capac",
    "coolant_res",
    "coolant_visc",
    "wall_material",
    "wall_capac",
    "wall_res",
    "htc",
];

/// A cavity ready to write: its `[layers.cavity]` lines, and the cells
/// across the flow the grid must have.
pub(super) struct CavityDoc {
    pub lines: Vec<String>,
    pub along_x: bool,
    pub across_cells: usize,
    /// Volume flow, m³/s, and ṁ·c, W/K (for the notes).
    pub flow_m3_s: f64,
    pub heat_flow_w_k: f64,
}

/// Hydraulic conductance (m³/(Pa·s)) of a duct `l` long with an `a` × `b`
/// section, laminar: 12 µ l / (a³ b (1 − 0.63 a/b)) is the resistance of a
/// wide rectangle, a ≤ b; HotSpot takes 0.42229 a⁴/(12 µ l) for a square
/// section (its test is exact equality, kept here so the flow is HotSpot's).
fn duct_conductance(a: f64, b: f64, l: f64, mu: f64) -> f64 {
    if a == b {
        return 0.42229 * a.powi(4) / (12.0 * mu * l);
    }
    let (a, b) = (a.min(b), a.max(b));
    (1.0 - 0.63 * a / b) * a.powi(3) * b / (12.0 * mu * l)
}

/// The coolant's (k, c, µ): `-coolant_material` from the materials file
/// (a fluid), else `-coolant_res`, `-coolant_capac`, `-coolant_visc`.
fn coolant(cfg: &HsConfig, mats: &Materials) -> Result<(f64, f64, f64, String), ImportError> {
    if let Some(s) = cfg.text("coolant_material") {
        let (k, c, mu) = mats.fluid(&s.value, &cfg.file, s.line, "-coolant_material")?;
        return Ok((k, c, mu, format!("-coolant_material {}", s.value)));
    }
    let k = 1.0 / cfg.num("coolant_res", default::COOLANT_RES)?;
    let c = cfg.num("coolant_capac", default::COOLANT_CAPAC)?;
    let mu = cfg.num("coolant_visc", default::COOLANT_VISC)?;
    Ok((
        k,
        c,
        mu,
        "-coolant_res, -coolant_capac, -coolant_visc".into(),
    ))
}

/// The walls' material into `layer`: `-wall_material`, else `-wall_res` and
/// `-wall_capac` (HotSpot writes them into the floorplan it generates for
/// the layer, replacing the `.lcf`'s material).
fn walls(cfg: &HsConfig, mats: &Materials, layer: &mut Pending) -> Result<String, ImportError> {
    if let Some(s) = cfg.text("wall_material") {
        let (k, c) = mats.lookup(&s.value, &cfg.file, s.line, "-wall_material")?;
        (layer.k, layer.c, layer.material_name) = (k, c, Some(s.value.clone()));
        return Ok(format!("-wall_material {}", s.value));
    }
    layer.k = 1.0 / cfg.num("wall_res", default::WALL_RES)?;
    layer.c = cfg.num("wall_capac", default::WALL_CAPAC)?;
    layer.material_name = None;
    Ok("k = 1/-wall_res, heat capacity -wall_capac".into())
}

/// The cavity of the `.lcf` layer `layer` whose geometry is `csv`, on
/// HotSpot's `rows` × `cols` grid over the `extent` (x, y) m.
pub(super) fn cavity(
    cfg: &HsConfig,
    mats: &Materials,
    layer: &mut Pending,
    csv: &Path,
    extent: (f64, f64),
    (rows, cols): (usize, usize),
) -> Result<CavityDoc, ImportError> {
    let map = parse_map(&read_text(csv)?, csv)?;
    if (map.len(), map[0].len()) != (rows, cols) {
        return Err(ImportError::Invalid {
            file: csv.to_path_buf(),
            message: format!(
                "{} rows x {} columns, but HotSpot reads it on its grid of -grid_rows {rows} x -grid_cols {cols}",
                map.len(),
                map[0].len()
            ),
        });
    }
    let g = layout(&map, csv)?;
    let wall_from = walls(cfg, mats, layer)?;
    let (k_cool, c_cool, mu, cool_from) = coolant(cfg, mats)?;
    // HotSpot's cells: width along x, height along y (model extent / count).
    let (cw, ch) = (extent.0 / cols as f64, extent.1 / rows as f64);
    let t = layer.thickness;
    let p = cfg.num("pumping_pressure", default::PUMPING_PRESSURE)?;
    let r_pump = cfg.num("pump_internal_res", default::PUMP_INTERNAL_RES)?;
    let htc = cfg.num("htc", default::HTC)?;
    let inlet = cfg.num("inlet_temperature", default::INLET_TEMPERATURE)?;
    // HotSpot's link between two fluid cells: section thickness x cell width,
    // one cell height long, whichever way the coolant goes.
    let g_link = duct_conductance(t, cw, ch, mu);
    let links = (g.length_cells - 1) as f64;
    // One line of fluid cells: pump resistance and `links` links in series.
    let q_line = p / (r_pump + links / g_link);
    let lines_of_fluid = (g.channels * g.channel) as f64;
    let flow = q_line * lines_of_fluid;
    let cell_across = if g.along_x { ch } else { cw };
    let (axis, across_axis) = if g.along_x { ("x", "y") } else { ("y", "x") };
    let count = if g.along_x { "rows" } else { "columns" };
    let n_cells = |n: usize| format!("{n} cell(s) x {} m", round12(cell_across));
    let lines = vec![
        format!(
            "# From {}: {} straight channels along {axis}, HotSpot's cells {} x {} m (the extent over",
            csv.display(), g.channels, round12(cw), round12(ch)
        ),
        format!("# -grid_cols x -grid_rows); across the flow ({across_axis}) the map's {count} become the widths below."),
        "model = \"4rm\"".into(),
        format!("channel_width = {}    # m: {}", num(g.channel as f64 * cell_across), n_cells(g.channel)),
        format!("wall_width = {}    # m: {}", num(g.wall as f64 * cell_across), n_cells(g.wall)),
        format!("first_wall_width = {}    # m: {} (at {across_axis} = 0)", num(g.first_wall as f64 * cell_across), n_cells(g.first_wall)),
        format!("last_wall_width = {}    # m: {}", num(g.last_wall as f64 * cell_across), n_cells(g.last_wall)),
        "# HotSpot's pressure network, solved here for straight channels: per link between neighbouring fluid".to_string(),
        format!("# cells G = (1 - 0.63 a/b) a^3 b / (12 mu L) = {g_link:.6e} m^3/(Pa s) (a, b = {t} m layer thickness and", ),
        format!("# {} m cell width, sorted; L = {} m cell height; mu = {mu} Pa s; HotSpot's own formula, 0.42229 a^4/(12 mu L)", round12(cw), round12(ch)),
        format!("# when a = b); per line of fluid cells Q = P / (R_pump + (N - 1)/G) with P = -pumping_pressure {p} Pa,"),
        format!("# R_pump = -pump_internal_res {r_pump} Pa s/m^3, N = {} cells inlet to outlet: {q_line:.6e} m^3/s; times", g.length_cells),
        format!("# {lines_of_fluid} lines of fluid cells ({} channels x {} cells wide).", g.channels, g.channel),
        format!("flow = {}    # m^3/s = {:.4} ml/min, the whole cavity", num(flow), flow * 6e7),
        format!("direction = \"{}{axis}\"    # HotSpot's inlet cells (type 2) are on the {} edge", if g.positive { "+" } else { "-" }, if g.positive { "low" } else { "high" }),
        format!("inlet = {}    # K: -inlet_temperature", num(inlet)),
        format!("coolant = {{ heat_capacity = {}, conductivity = {} }}    # J/(m^3 K), W/(m K): {cool_from}", num(c_cool), num(k_cool)),
        format!("h = {{ side = {0}, top = {0}, bottom = {0} }}    # W/(m^2 K): -htc on every wetted face, as HotSpot", num(htc)),
    ];
    layer.comment.push(format!(
        "HotSpot's microchannel layer: the walls are {wall_from}; the coolant's cells are the cavity's."
    ));
    Ok(CavityDoc {
        lines,
        along_x: g.along_x,
        across_cells: 2 * g.channels + 1,
        flow_m3_s: flow,
        heat_flow_w_k: flow * c_cool,
    })
}

fn num(x: f64) -> String {
    super::emit::num(round12(x))
}

/// The film over the chip's top standing for HotSpot's package when the
/// domain must be the chip: spreader and sink conducting straight up over
/// the chip's area `area_m2`, then `r_convec`, in series, per unit area:
/// h = 1 / (t_sp/k_sp + t_sink/k_sink + r_convec · area). No spreading, so
/// it is the package's largest resistance; and its comment.
pub(super) fn package_film(
    cfg: &HsConfig,
    mats: &Materials,
    area_m2: f64,
) -> Result<(f64, String), ImportError> {
    use super::hotspot_keys::default as d;
    let (k_sp, _, _) = mats.prop("spreader", d::K_SPREADER, d::P_SPREADER)?;
    let (k_hs, _, _) = mats.prop("sink", d::K_SINK, d::P_SINK)?;
    let t_sp = cfg.num("t_spreader", d::T_SPREADER)?;
    let t_hs = cfg.num("t_sink", d::T_SINK)?;
    let r = cfg.num("r_convec", d::R_CONVEC)?;
    let h = 1.0 / (t_sp / k_sp + t_hs / k_hs + r * area_m2);
    let comment = format!(
        "h_top = 1/(t_spreader/k_spreader + t_sink/k_sink + r_convec x chip area) = 1/({t_sp}/{k_sp} + {t_hs}/{k_hs} + {r} x {}): \
         HotSpot's package straight up over the chip, without its spreading (a 4RM cavity spans the domain, so the domain is the chip).",
        round12(area_m2)
    );
    Ok((h, comment))
}

/// The domain of a liquid-cooled import: the chip (`extent`, m), HotSpot's
/// `-grid_cols` × `-grid_rows` except across the channels, where the 4RM
/// cavity puts one column per channel and wall; the package as the film of
/// `package_film`. Resolves every microchannel layer's cavity; `notes` gets
/// what the user should know.
pub(super) fn liquid_domain(
    cfg: &HsConfig,
    mats: &Materials,
    layers: &mut [Pending],
    extent: (f64, f64),
    notes: &mut Vec<String>,
) -> Result<super::hotspot_package::Package, ImportError> {
    use super::hotspot_keys::default as d;
    let (cols, rows) = (
        cfg.count("grid_cols", d::GRID)?,
        cfg.count("grid_rows", d::GRID)?,
    );
    let (mut nx, mut ny) = (cols, rows);
    let mut grid_comment = vec![format!(
        "HotSpot's -grid_cols {cols} x -grid_rows {rows} over the chip, uniform, as HotSpot's grid."
    )];
    for l in layers.iter_mut() {
        let Some(csv) = l.network.clone() else {
            continue;
        };
        let c = cavity(cfg, mats, l, &csv, extent, (rows, cols))?;
        let (n, key, hs) = if c.along_x {
            (&mut ny, "ny", rows)
        } else {
            (&mut nx, "nx", cols)
        };
        if c.across_cells != hs {
            grid_comment.push(format!(
                "{key} = {}: one cell per channel and wall of {} across the flow (HotSpot: {hs}).",
                c.across_cells, l.name
            ));
        }
        *n = c.across_cells;
        notes.push(format!(
            "{}: {} is a 4RM cavity: flow {:.4} ml/min from HotSpot's pressure network, m_dot c = {:.6} W/K \
             (the coolant warms by P / (m_dot c)); HotSpot's coolant conducts and is advected by central \
             differences, cuth's 4RM is upwind without conduction along the channel: refine along the flow to compare",
            l.name,
            csv.display(),
            c.flow_m3_s * 6e7,
            c.heat_flow_w_k
        ));
        l.cavity = c.lines;
    }
    let (h_top, h_comment) = package_film(cfg, mats, extent.0 * extent.1)?;
    notes.push(format!(
        "HotSpot's spreader and sink become h_top = {h_top:.6e} W/(m^2 K) over the chip (conduction straight up, \
         no spreading): a liquid-cooled stack's domain is its cavity's"
    ));
    Ok(super::hotspot_package::Package {
        side: extent.0.max(extent.1),
        die: [0.0, 0.0, extent.0, extent.1],
        h_top,
        cell: None,
        nx,
        ny,
        chip_comment: vec![format!(
            "The domain is the chip (the floorplans' extent, {} x {} m): a 4RM cavity spans the domain.",
            extent.0, extent.1
        )],
        grid_comment,
        h_comment,
        layers: Vec::new(),
    })
}

/// The rendered stack with each microchannel layer's `[layers.cavity]`
/// table under its `[[layers]]` entry: after the entry's keys, before the
/// blank line that ends them (the layer has no power table).
pub(super) fn with_cavities(mut toml: String, layers: &[Pending]) -> String {
    for l in layers.iter().filter(|l| !l.cavity.is_empty()) {
        let anchor = format!("[[layers]]\nname = {}\n", super::emit::string(&l.name));
        let Some(start) = toml.find(&anchor) else {
            continue;
        };
        let rest = start + anchor.len();
        let end = toml[rest..]
            .find("\n\n")
            .map_or(toml.len(), |k| rest + k + 1);
        let table = format!("[layers.cavity]\n{}\n", l.cavity.join("\n"));
        toml.insert_str(end, &table);
    }
    toml
}

#[cfg(test)]
mod tests {
    use super::duct_conductance;

    #[test]
    fn duct_conductance_is_hotspots() {
        let mu = 1e-3;
        // Square section: HotSpot's constant, not the rectangle's formula.
        let sq = duct_conductance(1e-4, 1e-4, 2e-4, mu);
        let want = 0.42229 * 1e-16 / (12.0 * mu * 2e-4);
        assert!((sq - want).abs() < 1e-12 * want, "{sq} {want}");
        // Either order of the sides; the thinner side cubed.
        let r = duct_conductance(1e-4, 3e-4, 2e-4, mu);
        assert_eq!(r, duct_conductance(3e-4, 1e-4, 2e-4, mu));
        let want = (1.0 - 0.63 / 3.0) * 1e-12 * 3e-4 / (12.0 * mu * 2e-4);
        assert!((r - want).abs() < 1e-12 * want, "{r} {want}");
    }
}
