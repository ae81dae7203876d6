//! HotSpot's package as a cuth package: the domain is the heat sink
//! (`s_sink` square), the dies and interface layers keep the chip's outline
//! centred on it with nothing around them (`fill = "none"`), the spreader has
//! its own `s_spreader` outline, also centred (HotSpot centres both), and
//! `r_convec` becomes a film coefficient over the sink's whole top face,
//! `h_top = 1/(r_convec · s_sink²)`. The grid is HotSpot's `grid_cols` ×
//! `grid_rows` over the chip, as the largest cell of a non-uniform grid (or,
//! on request, a uniform `nx` × `ny` grid over the whole sink with cells no
//! larger than HotSpot's).

use super::hotspot_files::HsConfig;
use super::hotspot_keys::default as d;
use super::hotspot_layers::{Materials, Pending};
use super::{round12, ImportError};

/// The package of a HotSpot model: domain, boundary, grid and the layers
/// over the chip.
pub(super) struct Package {
    /// The domain (the sink), metres.
    pub side: f64,
    /// The chip's outline, centred on the domain: x, y, width, length.
    pub die: [f64; 4],
    pub h_top: f64,
    /// `Some((cell, growth))`: non-uniform grid; `None`: `nx` × `ny`.
    pub cell: Option<(f64, f64)>,
    pub nx: usize,
    pub ny: usize,
    pub chip_comment: Vec<String>,
    pub grid_comment: Vec<String>,
    pub h_comment: String,
    /// Spreader and sink, bottom to top.
    pub layers: Vec<Pending>,
}

/// z cells of the spreader and the sink: the fewest with every steady block
/// temperature of HotSpot's example 2 within 0.1 K of a 32/80-cell
/// reference (1/1 cells: +2.9 K; 2/3: +0.67 K; 6/10: +0.08 K); the spreader
/// carries the die's heat sideways, so it needs the finer z cells.
const SPREADER_CELLS: usize = 6;
const SINK_CELLS: usize = 10;

/// Default growth ratio of the non-uniform grid (cuth's default, written out).
const GROWTH: f64 = 1.2;

/// HotSpot's package around a `width` × `length` chip (metres).
pub(super) fn package(
    cfg: &HsConfig,
    mats: &Materials,
    (width, length): (f64, f64),
    uniform: bool,
) -> Result<Package, ImportError> {
    let cf = &cfg.file;
    let (s_sp, s_hs) = (
        cfg.num("s_spreader", d::S_SPREADER)?,
        cfg.num("s_sink", d::S_SINK)?,
    );
    // HotSpot itself refuses a spreader smaller than the chip or a sink
    // smaller than the spreader.
    if s_sp < width || s_sp < length || s_hs < s_sp {
        return Err(ImportError::Invalid {
            file: cf.clone(),
            message: format!(
                "the package must grow upwards: chip {width} x {length} m, -s_spreader {s_sp} m, \
                 -s_sink {s_hs} m (HotSpot needs chip <= spreader <= sink too)"
            ),
        });
    }
    let (k_sp, c_sp, n_sp) = mats.prop("spreader", d::K_SPREADER, d::P_SPREADER)?;
    let (k_hs, c_hs, n_hs) = mats.prop("sink", d::K_SINK, d::P_SINK)?;
    let (t_sp, t_hs) = (
        cfg.num("t_spreader", d::T_SPREADER)?,
        cfg.num("t_sink", d::T_SINK)?,
    );
    let r_convec = cfg.num("r_convec", d::R_CONVEC)?;
    let centred = |w: f64| round12(0.5 * (s_hs - w));
    let die = [centred(width), centred(length), width, length];
    let sp = centred(s_sp);
    let (cols, rows) = (
        cfg.count("grid_cols", d::GRID)?,
        cfg.count("grid_rows", d::GRID)?,
    );
    let (dx, dy) = (width / cols as f64, length / rows as f64);
    let hs_cells = format!(
        "HotSpot's -grid_cols {cols} x -grid_rows {rows} over the chip: cells of {} x {} m.",
        round12(dx),
        round12(dy)
    );
    let (cell, nx, ny, grid_comment) = if uniform {
        let n = |cell: f64| ((s_hs / cell) - 1e-9).ceil() as usize;
        let (nx, ny) = (n(dx), n(dy));
        (None, nx, ny, vec![
            hs_cells,
            format!("Uniform grid (--uniform-grid): {nx} x {ny} cells over the whole {s_hs} m sink, none larger than HotSpot's;"),
            "the die's edges fall inside cells, whose materials and power are mixed by area.".into(),
        ])
    } else {
        let cell = round12(dx.min(dy));
        (Some((cell, GROWTH)), cols, rows, vec![
            hs_cells,
            format!("Non-uniform grid: cells of at most {cell} m (the smaller) over the powered dies, growing by at most"),
            format!("{GROWTH} per cell over the spreader and sink, lines snapped to every outline and floorplan edge."),
            "(`cuth import hotspot --uniform-grid` writes a uniform nx x ny grid of at most that cell instead.)".into(),
        ])
    };
    let layers = vec![
        Pending {
            name: "spreader".into(),
            k: k_sp,
            c: c_sp,
            material_name: n_sp,
            thickness: t_sp,
            cells: SPREADER_CELLS,
            floorplan: None,
            power: false,
            outline: Some([sp, sp, s_sp, s_sp]),
            network: None,
            cavity: Vec::new(),
            comment: vec![
                format!("HotSpot's heat spreader: {s_sp} m square (-s_spreader), centred on the sink; nothing around it."),
                format!("{SPREADER_CELLS} and {SINK_CELLS} z cells (spreader, sink): steady block temperatures within 0.1 K of a much finer"),
                "z grid (HotSpot's example 2); HotSpot uses one node layer each, and lumps the spreader's and sink's".into(),
                "overhang into a few peripheral nodes that cuth resolves on its grid.".into(),
            ],
        },
        Pending {
            name: "sink".into(),
            k: k_hs,
            c: c_hs,
            material_name: n_hs,
            thickness: t_hs,
            cells: SINK_CELLS,
            floorplan: None,
            power: false,
            outline: None,
            network: None,
            cavity: Vec::new(),
            comment: vec![format!(
                "HotSpot's heat sink base: {s_hs} m square (-s_sink), the whole domain."
            )],
        },
    ];
    Ok(Package {
        side: s_hs,
        die,
        h_top: 1.0 / (r_convec * s_hs * s_hs),
        cell,
        nx,
        ny,
        chip_comment: vec![
            format!("The domain is HotSpot's heat sink, -s_sink {s_hs} m square; the chip (the floorplans' extent,"),
            format!("{width} x {length} m, 12 significant digits) sits centred on it, at x {}, y {} m.", die[0], die[1]),
        ],
        grid_comment,
        h_comment: format!(
            "h_top = 1/(r_convec s_sink^2) = 1/({r_convec} K/W x ({s_hs} m)^2): the convection resistance over the sink's top face."
        ),
        layers,
    })
}
