//! The porous cavities (2RM microchannels, 2RM pin fins): every cell of the
//! cavity layer is coolant, each column along the flow a coolant line that
//! carries its share of the flow (its width over the cavity's).
//!
//! 3D-ICE gives each cell column four nodes: a bottom wall (no capacity)
//! on the solid below, a top wall (no capacity) under the solid above, the
//! coolant joined to them by the projected films h·A, and a virtual wall
//! (the walls or pins, conductance k(1 − ε)A/(H/2) per half, ε the
//! porosity) between the two walls. The Quad-Diag stencil has one node per
//! cell, the coolant's, so that network is reduced here: the two walls and
//! the virtual wall are eliminated exactly (Schur complement, [`reduce`]),
//! leaving the coolant's couplings to the solid below (`a`) and above
//! (`b`) and a direct solid-to-solid conductance across the cavity (`c`),
//! which no 7-point stencil holds and is left out. Where the solids on
//! both sides are equally hot, `c` carries nothing and the reduction is
//! exact; otherwise heat that 3D-ICE conducts through the pins from one die
//! to the other goes through the coolant here. The virtual wall's heat
//! capacity is shared by the solid cells below and above (the walls it
//! hangs between), and its conduction along the flow (2RM only; pin fins
//! have none) is added, half each, to theirs.

use super::{set_face, Coolant, CoolantLine};
use crate::assemble::System;
use crate::grid::Grid;
use crate::stack::{Cavity, CavityModel, Stack};

/// The reduced couplings of one cell column, W/K.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reduced {
    /// Coolant to the solid below.
    pub a: f64,
    /// Coolant to the solid above.
    pub b: f64,
    /// Solid below to solid above, through the walls (left out).
    pub c: f64,
}

/// The conductances of one column of 3D-ICE's porous network, W/K.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Column {
    /// Solid below to the bottom wall: the solid's half cell.
    pub below: f64,
    /// Top wall to the solid above.
    pub above: f64,
    /// Each half of the virtual wall, k(1 − ε)A/(H/2).
    pub wall_half: f64,
    /// Films h_bottom·A and h_top·A.
    pub film_bottom: f64,
    pub film_top: f64,
}

/// Eliminates the bottom wall, the virtual wall and the top wall (all
/// without capacity in the steady state): the virtual wall's two halves in
/// series join the walls by w = wall_half/2; the 2 × 2 system of the walls
/// [[P, −w], [−w, Q]], P = below + film_bottom + w, Q = above + film_top +
/// w, has determinant D = PQ − w², and its Schur complement couples the
/// solid below to the coolant by below·(Q·film_bottom + w·film_top)/D, the
/// coolant to the solid above by above·(w·film_bottom + P·film_top)/D and
/// the two solids by below·w·above/D.
pub fn reduce(col: &Column) -> Reduced {
    let w = col.wall_half / 2.0;
    let p = col.below + col.film_bottom + w;
    let q = col.above + col.film_top + w;
    let det = p * q - w * w;
    Reduced {
        a: col.below * (q * col.film_bottom + w * col.film_top) / det,
        b: col.above * (w * col.film_bottom + p * col.film_top) / det,
        c: col.below * w * col.above / det,
    }
}

/// Adds the porous cavity of layer `l` (one z cell) to `sys` and `out`.
pub(super) fn porous(
    stack: &Stack,
    grid: &Grid,
    l: usize,
    cav: &Cavity,
    sys: &mut System,
    out: &mut Coolant,
) {
    let Some(eps) = cav.porosity() else { return };
    let (nx, plane) = (grid.nx, grid.plane());
    let z = grid.layer_z[l].start;
    let along = cav.direction.axis;
    let (n_along, n_across) = if along == 0 {
        (nx, grid.ny)
    } else {
        (grid.ny, nx)
    };
    let widths: &[f64] = if along == 0 { &grid.dy } else { &grid.dx };
    let total: f64 = widths.iter().sum();
    let inlet_theta = cav.inlet_k - stack.ambient_k;
    let wall = &stack.layers[l].material;
    // The walls of 2RM channels run along the flow; pins do not touch.
    let k_along = match cav.model {
        CavityModel::TwoResistor { .. } => wall.k[along] * (1.0 - eps),
        _ => 0.0,
    };
    for (col, width) in widths.iter().enumerate().take(n_across) {
        let w = cav.heat_flow_w_k() * width / total;
        let cells: Vec<usize> = (0..n_along)
            .map(|p| if cav.direction.positive { p } else { n_along - 1 - p })
            .map(|p| if along == 0 { p + nx * col } else { col + nx * p } + z * plane)
            .collect();
        for (p, &i) in cells.iter().enumerate() {
            porous_cell(grid, sys, i, cav, eps, wall);
            if p > 0 {
                along_wall(grid, sys, (cells[p - 1], i), along, k_along);
            }
        }
        let line = CoolantLine {
            layer: l,
            cells,
            w,
            inlet_theta,
        };
        super::add_line(sys, line, cav.advection, out);
    }
}

/// Coolant cell `i`: no conduction in the plane, the reduced couplings
/// above and below, the coolant's capacity ε·c·V, the virtual wall's
/// (1 − ε)·c_wall·V shared by the solid cells above and below.
fn porous_cell(
    grid: &Grid,
    sys: &mut System,
    i: usize,
    cav: &Cavity,
    eps: f64,
    wall: &crate::material::Material,
) {
    let (nx, plane) = (grid.nx, grid.plane());
    let (j, z) = (i % plane, i / plane);
    let pos = [j % nx, j / nx];
    let n = [grid.nx, grid.ny];
    let stride = [1, nx];
    for dir in 0..2 {
        let s = stride[dir];
        if pos[dir] > 0 {
            set_face(&mut sys.a, dir, i - s, s, 0.0);
        }
        if pos[dir] + 1 < n[dir] {
            set_face(&mut sys.a, dir, i, s, 0.0);
        }
    }
    let area = grid.cell_area(j);
    let dz = grid.dz[z];
    let half_cav = dz / (2.0 * wall.k[2] * area);
    // The solid's own half cell: what the solid face held beyond the
    // cavity's half (the layer was assembled as its wall material).
    let solid = |face: f64| {
        if face > 0.0 {
            1.0 / (1.0 / face - half_cav)
        } else {
            0.0
        }
    };
    let col = Column {
        below: solid(sys.a.gz[i - plane]),
        above: solid(sys.a.gz[i]),
        wall_half: wall.k[2] * (1.0 - eps) * area / (dz / 2.0),
        film_bottom: cav.h_bottom * area,
        film_top: cav.h_top * area,
    };
    let r = reduce(&col);
    set_face(&mut sys.a, 2, i - plane, plane, r.a);
    set_face(&mut sys.a, 2, i, plane, r.b);
    let volume = area * dz;
    sys.capacity[i] = eps * cav.coolant_heat_capacity * volume;
    let wall_c = (1.0 - eps) * wall.heat_capacity * volume;
    sys.capacity[i - plane] += wall_c / 2.0;
    sys.capacity[i + plane] += wall_c / 2.0;
}

/// The virtual wall's conduction along the flow between neighbouring
/// coolant cells `pair`, `k_along` (k(1 − ε), 0 for pin fins) over the two
/// half cells, given half to the solid cells below and half to those above.
fn along_wall(grid: &Grid, sys: &mut System, pair: (usize, usize), along: usize, k_along: f64) {
    if k_along == 0.0 {
        return;
    }
    let (nx, plane) = (grid.nx, grid.plane());
    let (lo, hi) = (pair.0.min(pair.1), pair.0.max(pair.1));
    let (j_lo, j_hi) = (lo % plane, hi % plane);
    let (d_lo, d_hi, across) = if along == 0 {
        (grid.dx[j_lo % nx], grid.dx[j_hi % nx], grid.dy[j_lo / nx])
    } else {
        (grid.dy[j_lo / nx], grid.dy[j_hi / nx], grid.dx[j_lo % nx])
    };
    let g = k_along * across * grid.dz[lo / plane] / ((d_lo + d_hi) / 2.0);
    for solid in [lo - plane, lo + plane] {
        let old = if along == 0 {
            sys.a.gx[solid]
        } else {
            sys.a.gy[solid]
        };
        set_face(&mut sys.a, along, solid, hi - lo, old + g / 2.0);
    }
}

#[cfg(test)]
#[path = "porous_tests.rs"]
mod tests;
