//! The coolant of liquid-cooled cavities in the assembled system. 4RM
//! (3D-ICE's four-resistor model): each channel is a column of coolant cells
//! along the flow (the stack's grid puts cell edges on the channel walls,
//! `stack::cavity`). A coolant cell couples to the walls beside it and the
//! solid above and below through the wall's half-cell in series with the
//! film 1/(h A); it does not conduct along the flow. These are 3D-ICE's
//! conductances (its liquid cell's h·A joined to the neighbour's k·A/(d/2)
//! in series), and the coolant's capacity is its c·V. The porous models
//! (2RM channels, pin fins) are in [`porous`].
//!
//! Along the flow the coolant is upwind: it receives ṁ·c θ_up and gives
//! away ṁ·c θ, the latter on the Quad-Diag diagonal, the former in
//! `matrix::advection`; the first cell of a line receives the inlet's
//! ṁ·c θ_in on the right-hand side. Summed over all rows: P = heat to
//! ambient + Σ ṁ·c (θ_out − θ_in). 3D-ICE (and both papers) difference the
//! advection centrally instead: a face between two coolant cells carries
//! their mean, C = ṁ·c/2 joins each cell to the next with +C and to the
//! previous with −C, and the first and last cells have C on the diagonal
//! (inlet face at T_in, outlet face at the last cell's temperature). The
//! outflow, and so the energy balance, is the same; locally the upwind
//! coolant (and the solid near it) reads about half a cell's coolant rise
//! above 3D-ICE's. The central matrix is not an M-matrix (positive
//! downstream entries), and the upwind chain is what the preconditioner's
//! sweep inverts exactly, so cuth keeps upwind.

use super::System;
use crate::grid::Grid;
use crate::matrix::advection::{Advection, INLET, OUTLET};
use crate::matrix::QuadDiag;
use crate::stack::{AdvectionScheme, Cavity, CavityModel, Stack};

#[path = "porous.rs"]
pub mod porous;

/// One channel's coolant cells, in flow order.
#[derive(Clone, Debug, PartialEq)]
pub struct CoolantLine {
    /// Layer (stack index) of the cavity.
    pub layer: usize,
    pub cells: Vec<usize>,
    /// ṁ·c of the line, W/K.
    pub w: f64,
    /// Inlet temperature minus ambient, K.
    pub inlet_theta: f64,
}

/// The coolant of every cavity of a stack.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Coolant {
    pub advection: Advection,
    pub lines: Vec<CoolantLine>,
}

impl Coolant {
    /// Heat the coolant carries away, Σ ṁ·c (θ_out − θ_in), W.
    pub fn heat_w(&self, theta: &[f64]) -> f64 {
        self.lines
            .iter()
            .map(|l| l.w * (theta[*l.cells.last().expect("a line has cells")] - l.inlet_theta))
            .sum()
    }

    /// Outlet temperature rise of each line, K above ambient.
    pub fn outlet_theta(&self, theta: &[f64]) -> Vec<f64> {
        self.lines
            .iter()
            .map(|l| theta[*l.cells.last().expect("a line has cells")])
            .collect()
    }

    /// Each cavity's outlets, by layer: per line its outlet temperature
    /// (K, from the rise `theta` over `ambient_k`) and its ṁ·c (W/K), what
    /// 3D-ICE's `Tcoolant` reports on.
    pub fn outlets(
        &self,
        ambient_k: f64,
        theta: &[f64],
    ) -> std::collections::BTreeMap<usize, Vec<(f64, f64)>> {
        let mut by_layer = std::collections::BTreeMap::new();
        for l in &self.lines {
            let out = theta[*l.cells.last().expect("a line has cells")];
            by_layer
                .entry(l.layer)
                .or_insert_with(Vec::new)
                .push((ambient_k + out, l.w));
        }
        by_layer
    }
}

/// Why a cavity cannot be assembled.
#[derive(Debug, thiserror::Error)]
pub enum CavityError {
    #[error("{0} coolant cells: more than u32 indices hold")]
    TooLarge(usize),
}

/// Adds every cavity's coolant to `sys` (assembled for the solid stack,
/// the cavity layer painted with its wall material); `None` when the stack
/// has no cavity, leaving `sys` untouched.
pub fn add_cavities(
    stack: &Stack,
    grid: &Grid,
    sys: &mut System,
) -> Result<Option<Coolant>, CavityError> {
    let mut coolant = Coolant::default();
    for (l, layer) in stack.layers.iter().enumerate() {
        let Some(cav) = &layer.cavity else { continue };
        match cav.model {
            CavityModel::FourResistor { .. } => {
                four_resistor(stack, grid, l, cav, sys, &mut coolant)
            }
            _ => porous::porous(stack, grid, l, cav, sys, &mut coolant),
        }
    }
    if grid.len() > u32::MAX as usize {
        return Err(CavityError::TooLarge(grid.len()));
    }
    Ok((!coolant.lines.is_empty()).then_some(coolant))
}

/// The channels of the 4RM cavity of layer `l`: odd columns across the flow.
fn four_resistor(
    stack: &Stack,
    grid: &Grid,
    l: usize,
    cav: &Cavity,
    sys: &mut System,
    out: &mut Coolant,
) {
    let CavityModel::FourResistor { channels, .. } = cav.model else {
        return;
    };
    let (nx, ny, plane) = (grid.nx, grid.ny, grid.plane());
    let z = grid.layer_z[l].start;
    let along = cav.direction.axis;
    let n_along = if along == 0 { nx } else { ny };
    let n_across = if along == 0 { ny } else { nx };
    let w = cav.heat_flow_w_k() / channels as f64;
    let inlet_theta = cav.inlet_k - stack.ambient_k;
    let k_wall = stack.layers[l].material.k;
    for col in (1..n_across).step_by(2) {
        let cells: Vec<usize> = (0..n_along)
            .map(|p| if cav.direction.positive { p } else { n_along - 1 - p })
            .map(|p| if along == 0 { p + nx * col } else { col + nx * p } + z * plane)
            .collect();
        for &i in &cells {
            coolant_cell(grid, &mut sys.a, i, cav, k_wall, along);
            let j = i % plane;
            sys.capacity[i] = cav.coolant_heat_capacity * grid.cell_area(j) * grid.dz[z];
        }
        let line = CoolantLine {
            layer: l,
            cells,
            w,
            inlet_theta,
        };
        add_line(sys, line, cav.advection, out);
    }
}

/// The advection of one coolant `line` (its cells in flow order, ṁ·c
/// `line.w`) by `scheme` (`stack::AdvectionScheme`): the advective terms on
/// the diagonal (and in `amb`, as the difference-form residual reads
/// them), the couplings, the inlet's ṁ·c θ_in on the first cell's
/// right-hand side.
pub(super) fn add_line(
    sys: &mut System,
    line: CoolantLine,
    scheme: AdvectionScheme,
    out: &mut Coolant,
) {
    let (cells, w) = (&line.cells, line.w);
    let n = cells.len();
    // Central differencing with C = ṁ·c/2; a one-cell line has no
    // neighbour to difference against and takes the upwind form.
    let central = scheme == AdvectionScheme::Central && n > 1;
    // Downstream couplings are stored for every entry once one line has
    // them (its entries, and padding for the upwind lines before it).
    let with_down = central || out.advection.has_down();
    if central && !out.advection.has_down() {
        // Entries of earlier (upwind) lines have no downstream coupling.
        out.advection.down = vec![OUTLET; out.advection.len()];
        out.advection.w_down = vec![0.0; out.advection.len()];
        out.advection.w_self = vec![0.0; out.advection.len()];
    }
    let half = 0.5 * w;
    for (p, &i) in cells.iter().enumerate() {
        // The Quad-Diag gets the upwind diagonal ṁ·c whatever the scheme;
        // central differencing takes back what its own lacks (`w_self`).
        let diag = match central {
            false => w,
            true if p == 0 || p + 1 == n => half,
            true => 0.0,
        };
        sys.a.d[i] += w;
        sys.a.amb[i] += w;
        let up = if p == 0 { INLET } else { cells[p - 1] as u32 };
        out.advection.cell.push(i as u32);
        out.advection.up.push(up);
        out.advection.w.push(if central { half } else { w });
        if with_down {
            let down = match central && p + 1 < n {
                true => (cells[p + 1] as u32, half),
                false => (OUTLET, 0.0),
            };
            out.advection.down.push(down.0);
            out.advection.w_down.push(down.1);
            out.advection.w_self.push(w - diag);
        }
    }
    sys.rhs[cells[0]] += w * line.inlet_theta;
    out.lines.push(line);
}

/// The face in direction `dir` (0 x, 1 y, 2 z) between rows `lo` and
/// `lo + stride` now conducts `g`; both diagonals follow.
fn set_face(a: &mut QuadDiag, dir: usize, lo: usize, stride: usize, g: f64) {
    let faces = match dir {
        0 => &mut a.gx,
        1 => &mut a.gy,
        _ => &mut a.gz,
    };
    let old = faces[lo];
    faces[lo] = g;
    a.d[lo] += g - old;
    a.d[lo + stride] += g - old;
}

/// Replaces the conductances of coolant cell `i` by films: to the walls
/// across the flow, none along it, and to the solid above and below.
fn coolant_cell(
    grid: &Grid,
    a: &mut QuadDiag,
    i: usize,
    cav: &Cavity,
    k_wall: [f64; 3],
    along: usize,
) {
    let (nx, plane) = (grid.nx, grid.plane());
    let (j, z) = (i % plane, i / plane);
    let (x, y) = (j % nx, j / nx);
    let dz = grid.dz[z];
    let pos = [x, y];
    let n = [grid.nx, grid.ny];
    let stride = [1, nx];
    let width: [&[f64]; 2] = [&grid.dx, &grid.dy];
    // Across the flow: the wall's half-cell in series with the side film.
    let across = 1 - along;
    let side_area = dz * width[along][pos[along]];
    let film = |d: f64| side_area / (d / (2.0 * k_wall[across]) + 1.0 / cav.h_side);
    let (p, s) = (pos[across], stride[across]);
    if p > 0 {
        set_face(a, across, i - s, s, film(width[across][p - 1]));
    }
    if p + 1 < n[across] {
        set_face(a, across, i, s, film(width[across][p + 1]));
    }
    // Along the flow: no conduction in the coolant (it advects).
    let (p, s) = (pos[along], stride[along]);
    if p > 0 {
        set_face(a, along, i - s, s, 0.0);
    }
    if p + 1 < n[along] {
        set_face(a, along, i, s, 0.0);
    }
    // Above and below: the solid's own half-cell (what the old face held
    // beyond the cavity's half) in series with the film.
    let area = grid.cell_area(j);
    let half_cav = dz / (2.0 * k_wall[2]);
    let below = i.checked_sub(plane).map(|lo| (lo, cav.h_bottom));
    let above = (z + 1 < grid.nz).then_some((i, cav.h_top));
    for (lo, h) in below.into_iter().chain(above) {
        let old = a.gz[lo];
        if old > 0.0 {
            let half_solid = area / old - half_cav;
            set_face(a, 2, lo, plane, area / (half_solid + 1.0 / h));
        }
    }
}
