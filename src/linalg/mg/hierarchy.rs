//! The shape of the multigrid hierarchy and the exact solve of its coarsest
//! level, on the host. [`plan`] decides how many times to halve a uniform
//! in-plane grid, [`plan_graded`] which columns and rows of a non-uniform one
//! to merge at each level; [`CoarsestInverse`] is the dense inverse of the coarsest operator
//! (from a banded Cholesky factorisation; the band is one z plane wide),
//! applied on the device as one small dense product per cycle.

use super::coarsen::{pairs, Coarsening};
use crate::linalg::QuadDiag;
use rayon::prelude::*;

/// Coarsen until a level has at most this many cells (or a 1 × 1 plane):
/// its dense inverse is then ≤ 8 MiB and costs well under a fine SpMV.
pub const COARSEST_MAX_CELLS: usize = 1024;

/// The coarsening steps from an `nx × ny × nz` grid of equal cells down to
/// the coarsest level (empty when the grid is already small enough): each
/// step halves every in-plane axis above 1.
pub fn plan(nx: usize, ny: usize, nz: usize) -> Vec<Coarsening> {
    let mut steps = Vec::new();
    let (mut x, mut y) = (nx, ny);
    while x * y * nz > COARSEST_MAX_CELLS && (x > 1 || y > 1) {
        let c = Coarsening::halve(x, y, nz);
        (x, y) = (c.nxc, c.nyc);
        steps.push(c);
    }
    steps
}

/// Whether a level carries the widths of a non-uniform grid
/// (`QuadDiag::wx`, `wy`: empty on a uniform grid).
pub fn is_graded(nx: usize, ny: usize, wx: &[f64], wy: &[f64]) -> bool {
    wx.len() == nx && wy.len() == ny
}

/// The steps for an `nx × ny × nz` level with widths `wx`, `wy`: [`plan`]
/// on a uniform grid (no widths), else [`plan_graded`].
pub fn plan_for(nx: usize, ny: usize, nz: usize, wx: &[f64], wy: &[f64]) -> Vec<Coarsening> {
    match is_graded(nx, ny, wx, wy) {
        true => plan_graded(wx, wy, nz),
        false => plan(nx, ny, nz),
    }
}

/// Size-graded coarsening of a non-uniform grid (as semi-coarsening picks
/// its direction): level l has a target width t = 2^(l+1)·h, h the smallest
/// cell width of either axis, and merges (left to right) two neighbouring
/// columns only while their joint width stays within t (× [`GRADE_SLACK`]),
/// likewise rows. The
/// narrow cells (over the dies) are merged first, the wide ones (over the
/// overhang) only once the coarse cells have caught up with them, so cells
/// of aspect ratio up to `max_cell/cell`, where die columns cross overhang
/// rows, are coarsened along their strong coupling only and the coarse
/// levels become uniform. A target that merges nothing makes no level.
pub fn plan_graded(wx: &[f64], wy: &[f64], nz: usize) -> Vec<Coarsening> {
    let mut steps = Vec::new();
    let (mut wx, mut wy) = (wx.to_vec(), wy.to_vec());
    let h = wx.iter().chain(&wy).copied().fold(f64::INFINITY, f64::min);
    let mut target = 2.0 * h;
    while wx.len() * wy.len() * nz > COARSEST_MAX_CELLS && (wx.len() > 1 || wy.len() > 1) {
        let (xs, ys) = (graded(&wx, target), graded(&wy, target));
        target *= 2.0;
        if xs.len() == wx.len() + 1 && ys.len() == wy.len() + 1 {
            continue;
        }
        let sums = |w: &[f64], s: &[usize]| -> Vec<f64> {
            s.windows(2).map(|r| w[r[0]..r[1]].iter().sum()).collect()
        };
        (wx, wy) = (sums(&wx, &xs), sums(&wy, &ys));
        steps.push(Coarsening::from_starts(nz, xs, ys));
    }
    steps
}

/// Aggregate starts of one axis of widths `w`: pairs whose joint width is
/// within `target` × [`GRADE_SLACK`], else singles.
fn graded(w: &[f64], target: f64) -> Vec<usize> {
    if !target.is_finite() {
        return pairs(w.len());
    }
    let limit = target * GRADE_SLACK;
    let mut starts = vec![0];
    let mut i = 0;
    while i < w.len() {
        i += if i + 1 < w.len() && w[i] + w[i + 1] <= limit {
            2
        } else {
            1
        };
        starts.push(i);
    }
    starts
}

/// Slack of the graded merge test. Measured (BENCHMARKS.md's git history, "Packages"; a
/// 2 × 1.5 mm die in a 16 mm package, 200 → 12.5 um cells): 1 (exact
/// doubling) 11 → 17 PCG iterations, 1.2: 11 → 16, 1.5: 12 → 15 (flat from
/// 50 um on), 2: 17 → 24. With 1.5 the growth zone around a die (widths
/// rising by the mesher's ≤ 1.2 per cell) pairs up one level earlier, so
/// the coarse levels shrink faster and stay close to uniform.
pub const GRADE_SLACK: f64 = 1.5;

/// A⁻¹ of a small SPD Quad-Diag matrix, dense and row-major, made exactly
/// symmetric (so that the cycle's M stays symmetric to rounding).
#[derive(Clone, Debug)]
pub struct CoarsestInverse {
    pub n: usize,
    pub values: Vec<f64>,
}

/// The coarsest operator is not positive definite (a pivot ≤ 0 at `row`).
#[derive(Clone, Copy, Debug)]
pub struct NotPositiveDefinite {
    pub row: usize,
}

impl CoarsestInverse {
    pub fn new(a: &QuadDiag) -> Result<CoarsestInverse, NotPositiveDefinite> {
        let n = a.len();
        let bw = (a.nx * a.ny).min(n.saturating_sub(1)); // half-bandwidth
                                                         // Banded lower factor: l[i][k] for i − bw ≤ k ≤ i, stored at [i][k − i + bw].
        let w = bw + 1;
        let mut l = vec![0.0; n * w];
        let at = |i: usize, j: usize| -> f64 {
            // A[i][j] for j ≤ i.
            if i == j {
                a.d[i]
            } else if j + 1 == i && !i.is_multiple_of(a.nx) {
                -a.gx[j]
            } else if j + a.nx == i && i % (a.nx * a.ny) >= a.nx {
                -a.gy[j]
            } else if j + a.nx * a.ny == i {
                -a.gz[j]
            } else {
                0.0
            }
        };
        for i in 0..n {
            let lo = i.saturating_sub(bw);
            for j in lo..=i {
                let jlo = j.saturating_sub(bw).max(lo);
                let mut s = at(i, j);
                for k in jlo..j {
                    s -= l[i * w + k + bw - i] * l[j * w + k + bw - j];
                }
                if j == i {
                    if s <= 0.0 {
                        return Err(NotPositiveDefinite { row: i });
                    }
                    l[i * w + bw] = s.sqrt();
                } else {
                    l[i * w + j + bw - i] = s / l[j * w + bw];
                }
            }
        }
        // Column c of A⁻¹: L y = e_c (y is zero above c), then Lᵀ x = y.
        let mut cols = vec![0.0; n * n];
        cols.par_chunks_mut(n).enumerate().for_each(|(c, x)| {
            for i in c..n {
                let lo = i.saturating_sub(bw).max(c);
                let mut s = if i == c { 1.0 } else { 0.0 };
                for k in lo..i {
                    s -= l[i * w + k + bw - i] * x[k];
                }
                x[i] = s / l[i * w + bw];
            }
            for i in (0..n).rev() {
                let mut s = x[i];
                for k in i + 1..(i + bw + 1).min(n) {
                    s -= l[k * w + i + bw - k] * x[k];
                }
                x[i] = s / l[i * w + bw];
            }
        });
        let mut values = vec![0.0; n * n];
        values.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
            for (j, v) in row.iter_mut().enumerate() {
                *v = 0.5 * (cols[i * n + j] + cols[j * n + i]);
            }
        });
        Ok(CoarsestInverse { n, values })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::mg::coarsen::fill_diagonal;

    #[test]
    fn plan_stops_at_the_coarsest_size() {
        let steps = plan(512, 512, 18);
        let last = steps.last().unwrap();
        assert!(last.nxc * last.nyc * 18 <= COARSEST_MAX_CELLS);
        assert!(steps.len() == 7, "{steps:?}");
        let odd = plan(100, 37, 4);
        assert_eq!(odd[0].nxc, 50);
        assert_eq!(odd[0].nyc, 19);
        assert!(plan(8, 8, 10).is_empty());
        // A 1-wide strip only coarsens along its length.
        let strip = plan(1, 5000, 1);
        assert!(strip
            .iter()
            .all(|c| c.nxc == 1 && c.nyc == c.ny.div_ceil(2)));
    }

    #[test]
    fn inverse_times_matrix_is_identity() {
        let mut a = QuadDiag::zeros(3, 4, 5);
        for i in 0..a.len() {
            let (x, y, z) = (i % 3, (i / 3) % 4, i / 12);
            a.gx[i] = if x < 2 { 1.0 + 0.1 * i as f64 } else { 0.0 };
            a.gy[i] = if y < 3 { 0.5 + 0.01 * i as f64 } else { 0.0 };
            a.gz[i] = if z < 4 { 100.0 } else { 0.0 };
            a.amb[i] = if z == 4 { 0.3 } else { 0.0 };
        }
        fill_diagonal(&mut a);
        let inv = CoarsestInverse::new(&a).unwrap();
        let n = a.len();
        for c in 0..n {
            let col: Vec<f64> = (0..n).map(|i| inv.values[i * n + c]).collect();
            for i in 0..n {
                let v = a.row_apply(&col, i);
                let e = if i == c { 1.0 } else { 0.0 };
                assert!((v - e).abs() < 1e-9, "({i},{c}): {v}");
            }
        }
    }
}
