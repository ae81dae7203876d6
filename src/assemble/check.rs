//! Checks of an assembled system and of the geometry behind it, so that a
//! stack PCG cannot solve is refused with a reason instead of a breakdown.

use super::System;
use crate::grid::Grid;
use crate::power::LayerPower;
use crate::stack::Stack;

/// Every conductance finite and ≥ 0, and every diagonal at least the sum of
/// its row's off-diagonals (weak dominance: with the conductances to
/// ambient, the matrix is then SPD wherever heat can leave). One pass.
/// Fails with the cell (x, y, z) and what is wrong: an internal error, as
/// assembly of a valid stack never produces it.
pub fn check_system(sys: &System, grid: &Grid) -> Result<(), String> {
    use rayon::prelude::*;
    // Rows are independent: checked in parallel, the first bad row (in
    // index order) reported, so the message does not depend on the threads.
    (0..grid.len())
        .into_par_iter()
        .with_min_len(1 << 14)
        .map(|i| check_row(sys, grid, i))
        .find_first(Result::is_err)
        .unwrap_or(Ok(()))
}

/// Row `i` of [`check_system`].
fn check_row(sys: &System, grid: &Grid, i: usize) -> Result<(), String> {
    let a = &sys.a;
    let (nx, plane) = (grid.nx, grid.plane());
    let bad = |v: f64| !v.is_finite() || v < 0.0;
    let (x, y, z) = grid.coords(i);
    let at = || format!("cell (x {x}, y {y}, z {z}) (layer {})", grid.layer_of_z[z]);
    for (name, g) in [
        ("gx", a.gx[i]),
        ("gy", a.gy[i]),
        ("gz", a.gz[i]),
        ("amb", a.amb[i]),
    ] {
        if bad(g) {
            return Err(format!("{}: conductance {name} = {g:e}", at()));
        }
    }
    let mut off = a.gx[i] + a.gy[i] + a.gz[i];
    if x > 0 {
        off += a.gx[i - 1];
    }
    if y > 0 {
        off += a.gy[i - nx];
    }
    if z > 0 {
        off += a.gz[i - plane];
    }
    let d = a.d[i];
    if !d.is_finite() || d <= 0.0 || d < off * (1.0 - 1e-12) {
        return Err(format!(
            "{}: diagonal {d:e} does not dominate its row (off-diagonals {off:e})",
            at()
        ));
    }
    Ok(())
}

/// The first powered cell from which heat cannot reach ambient through
/// present cells (a die resting on an outline that misses it), as
/// (layer, x, y) — such a system is singular, no solver converges on it.
/// A flood fill from every cell with a film to ambient: O(cells).
pub fn unreachable_power(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
) -> Option<(usize, usize, usize)> {
    use rayon::prelude::*;
    // Per layer, which plane cells hold no material (empty: none absent).
    let absent: Vec<Vec<bool>> = stack
        .layers
        .par_iter()
        .zip(power)
        .map(|(l, p)| super::absent_plane(grid, p, l.material))
        .collect();
    let (nx, ny, nz, plane) = (grid.nx, grid.ny, grid.nz, grid.plane());
    let present = |i: usize| {
        let a = &absent[grid.layer_of_z[i / plane]];
        a.is_empty() || !a[i % plane]
    };
    let top = super::film(grid, stack.h_top, stack.h_top_map.as_ref());
    let bottom = match (stack.h_bottom, &stack.h_bottom_map) {
        (_, Some(map)) => super::film(grid, 0.0, Some(map)),
        (Some(h), None) => vec![h; plane],
        (None, None) => vec![0.0; plane],
    };
    // Every cell present and one cooled: the box is connected, so every
    // cell reaches ambient, and the serial fill (seconds on 10⁸ cells)
    // has nothing to find.
    if absent.iter().all(Vec::is_empty) && top.iter().chain(&bottom).any(|&h| h > 0.0) {
        return None;
    }
    let mut seen = vec![false; grid.len()];
    let mut todo = Vec::new();
    for j in 0..plane {
        for (i, h) in [((nz - 1) * plane + j, top[j]), (j, bottom[j])] {
            if h > 0.0 && present(i) && !seen[i] {
                seen[i] = true;
                todo.push(i);
            }
        }
    }
    while let Some(i) = todo.pop() {
        let (x, y, z) = grid.coords(i);
        let mut visit = |k: usize| {
            if !seen[k] && present(k) {
                seen[k] = true;
                todo.push(k);
            }
        };
        if x > 0 {
            visit(i - 1);
        }
        if x + 1 < nx {
            visit(i + 1);
        }
        if y > 0 {
            visit(i - nx);
        }
        if y + 1 < ny {
            visit(i + nx);
        }
        if z > 0 {
            visit(i - plane);
        }
        if z + 1 < nz {
            visit(i + plane);
        }
    }
    (0..grid.len()).find_map(|i| {
        let (x, y, z) = grid.coords(i);
        let l = grid.layer_of_z[z];
        let p = power[l].map_w.get(i % plane).copied().unwrap_or(0.0);
        (p != 0.0 && !seen[i] && present(i)).then_some((l, x, y))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::QuadDiag;

    fn two_cells(gx: f64, d: [f64; 2]) -> (System, Grid) {
        let grid = Grid::uniform(2, 1, 2e-3, 1e-3, vec![1e-4], vec![0]);
        let mut a = QuadDiag::zeros(2, 1, 1);
        a.gx = vec![gx, 0.0];
        a.d = d.to_vec();
        a.amb = vec![1.0, 0.0];
        let mut sys = System::empty();
        sys.a = a;
        (sys, grid)
    }

    #[test]
    fn a_valid_row_passes_and_a_bad_one_names_its_cell() {
        let (sys, grid) = two_cells(1.0, [2.0, 1.0]);
        check_system(&sys, &grid).unwrap();
        let (sys, grid) = two_cells(-1.0, [2.0, 1.0]);
        let e = check_system(&sys, &grid).unwrap_err();
        assert!(
            e.contains("cell (x 0, y 0, z 0)") && e.contains("gx"),
            "{e}"
        );
        let (sys, grid) = two_cells(f64::NAN, [2.0, 1.0]);
        assert!(check_system(&sys, &grid).is_err());
        // The second cell's diagonal is below its off-diagonal.
        let (sys, grid) = two_cells(1.0, [2.0, 0.5]);
        let e = check_system(&sys, &grid).unwrap_err();
        assert!(
            e.contains("cell (x 1, y 0, z 0)") && e.contains("dominate"),
            "{e}"
        );
    }
}
