//! One coarsening step of the geometric multigrid: the x-y aggregation (nz
//! never changes) and the coarse operator, rediscretised by finite volumes
//! from the fine face conductances (on the host here; a GPU builds the same
//! numbers in `kernels/mg_setup.cu`).
//!
//! A coarse cell is a block of fine columns: per axis an aggregation map of
//! contiguous pairs or singles ([`Coarsening`]; `hierarchy::plan` chooses
//! it: pairs from the left on a uniform grid, where an odd size leaves the
//! last column alone, size-graded on a non-uniform one). Its operator:
//! - z faces and the coupling to ambient (`amb`, which also carries a
//!   transient's C/Δt): the sum over the children, as Galerkin gives;
//! - x faces: the sum of the fine faces crossing the coarse face, times the
//!   fine-to-coarse ratio of the centre-to-centre distances across it,
//!   (wₗ' + wᵣ')/(Wₗ + Wᵣ) with w' the widths of the two fine cells at the
//!   face and W those of the two coarse cells. On a uniform grid (widths
//!   unknown: `QuadDiag::wx` empty, every cell counts 1) that is 2/(wₗ + wᵣ),
//!   which for 2-wide cells halves the Galerkin sum (Galerkin aggregation is
//!   exactly 2× too stiff in-plane) and equals the stack assembled
//!   on the half grid; with the physical widths of a non-uniform grid it stays
//!   that rediscretisation (the coarse widths are the sums of their children);
//! - y faces likewise; the diagonal is `amb` plus the row's conductances.
//!
//! Absent cells (identity rows: no conductance, d = amb = 1 exactly) contribute no
//! `amb` to their aggregate, and a coarse row left with a zero diagonal (all
//! children absent) becomes an identity row again.
//!
//! [`AxisMap`] holds one axis of a step as small arrays (aggregate bounds,
//! the per-face factor, the coarse widths); [`coarsen`] and the device's
//! set-up (`MultigridOps::mg_coarsen`) both build from it.
//!
//! Every face is coarsened on its own, so material patches are carried face
//! by face; nothing assumes a per-layer constant. The result is again a
//! symmetric, diagonally dominant 7-point Quad-Diag matrix (SPD whenever the
//! fine one is: positive conductances, amb ≥ 0 and > 0 somewhere per
//! connected box).

use super::QuadDiag;
use rayon::prelude::*;

/// One coarsening step: the sizes of a fine level and, per in-plane axis,
/// the aggregation map fine column → coarse column (monotone, contiguous
/// aggregates: pairs or singles). nz never changes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Coarsening {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub nxc: usize,
    pub nyc: usize,
    /// First fine column of each coarse column, and `nx` (len nxc + 1).
    pub xstart: Vec<usize>,
    /// First fine row of each coarse row, and `ny` (len nyc + 1).
    pub ystart: Vec<usize>,
    /// Coarse column of each fine column (len nx), likewise rows.
    pub xmap: Vec<usize>,
    pub ymap: Vec<usize>,
}

impl AsRef<Coarsening> for Coarsening {
    fn as_ref(&self) -> &Coarsening {
        self
    }
}

/// Aggregate starts of an axis of `n` cells merged in pairs from the left
/// (the last aggregate of an odd `n` holds one cell); `n` = 1 stays.
pub fn pairs(n: usize) -> Vec<usize> {
    let r = if n > 1 { 2 } else { 1 };
    (0..n.div_ceil(r)).map(|k| k * r).chain([n]).collect()
}

impl Coarsening {
    /// From the aggregate starts of each axis (each strictly increasing from
    /// 0 to its fine size).
    pub fn from_starts(nz: usize, xstart: Vec<usize>, ystart: Vec<usize>) -> Coarsening {
        let map = |s: &[usize]| -> Vec<usize> {
            s.windows(2)
                .enumerate()
                .flat_map(|(k, w)| std::iter::repeat_n(k, w[1] - w[0]))
                .collect()
        };
        let (xmap, ymap) = (map(&xstart), map(&ystart));
        Coarsening {
            nx: xmap.len(),
            ny: ymap.len(),
            nz,
            nxc: xstart.len() - 1,
            nyc: ystart.len() - 1,
            xstart,
            ystart,
            xmap,
            ymap,
        }
    }

    /// Halves each in-plane direction whose size is above 1 (pairs from
    /// the left).
    pub fn halve(nx: usize, ny: usize, nz: usize) -> Coarsening {
        Coarsening::from_starts(nz, pairs(nx), pairs(ny))
    }

    /// Coarse cells.
    pub fn coarse_len(&self) -> usize {
        self.nxc * self.nyc * self.nz
    }

    /// Fine x indices of coarse column `xc`.
    pub fn xs(&self, xc: usize) -> std::ops::Range<usize> {
        self.xstart[xc]..self.xstart[xc + 1]
    }

    /// Fine y indices of coarse row `yc`.
    pub fn ys(&self, yc: usize) -> std::ops::Range<usize> {
        self.ystart[yc]..self.ystart[yc + 1]
    }

    /// Coarse cell of fine cell `i` (the aggregation map; P is its 0/1 matrix).
    pub fn parent(&self, i: usize) -> usize {
        let plane = self.nx * self.ny;
        let (x, y, z) = (i % self.nx, (i % plane) / self.nx, i / plane);
        self.xmap[x] + self.nxc * (self.ymap[y] + self.nyc * z)
    }
}

/// One axis of a coarsening step as small host arrays: what the coarse
/// operator needs besides the fine matrix, so that the host ([`coarsen`])
/// and a device (`MultigridOps::mg_coarsen`) build it from the same numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct AxisMap {
    /// Coarse column k holds the fine columns `start[k]..start[k + 1]`
    /// (monotone, contiguous; `start.len()` = coarse size + 1).
    pub start: Vec<usize>,
    /// The factor of coarse face k (between coarse columns k and k + 1) as
    /// numerator and denominator: the face's conductance is
    /// (Σ fine faces) · `num[k] / den[k]` (see the module doc).
    pub num: Vec<f64>,
    pub den: Vec<f64>,
    /// Coarse widths (sums of their children's), or 1 per fine cell.
    pub widths: Vec<f64>,
}

impl AxisMap {
    /// The axis of `n` fine columns with widths `w` (empty: uniform, 1 per
    /// cell), aggregated as `range(k)` for k < `nc`.
    pub fn new(
        w: &[f64],
        n: usize,
        nc: usize,
        range: impl Fn(usize) -> std::ops::Range<usize>,
    ) -> AxisMap {
        // Widths: physical when known, else 1 per fine cell.
        let w: Vec<f64> = if w.len() == n {
            w.to_vec()
        } else {
            vec![1.0; n]
        };
        let mut start: Vec<usize> = (0..nc).map(|k| range(k).start).collect();
        start.push(n);
        let widths: Vec<f64> = (0..nc).map(|k| w[range(k)].iter().sum()).collect();
        // Fine-to-coarse ratio of the centre distances across each coarse
        // face (as numerator and denominator: sum·2/(wₗ + wᵣ) rounds as it
        // always did).
        let (num, den) = (0..nc.saturating_sub(1))
            .map(|k| {
                let last = start[k + 1] - 1;
                (w[last] + w[last + 1], widths[k] + widths[k + 1])
            })
            .unzip();
        AxisMap {
            start,
            num,
            den,
            widths,
        }
    }
}

impl Coarsening {
    /// The x and y axes of this step for a fine matrix with widths `wx`, `wy`.
    pub fn axis_maps(&self, wx: &[f64], wy: &[f64]) -> (AxisMap, AxisMap) {
        (
            AxisMap::new(wx, self.nx, self.nxc, |k| self.xs(k)),
            AxisMap::new(wy, self.ny, self.nyc, |k| self.ys(k)),
        )
    }
}

/// Whether row `i` of `a` is an absent cell's identity row (no conductance,
/// d = amb = 1 exactly).
fn absent(a: &QuadDiag, i: usize) -> bool {
    let (nx, plane) = (a.nx, a.nx * a.ny);
    let (x, y, z) = (i % nx, (i % plane) / nx, i / plane);
    a.d[i] == 1.0
        && a.amb[i] == 1.0
        && a.gx[i] == 0.0
        && a.gy[i] == 0.0
        && a.gz[i] == 0.0
        && (x == 0 || a.gx[i - 1] == 0.0)
        && (y == 0 || a.gy[i - nx] == 0.0)
        && (z == 0 || a.gz[i - plane] == 0.0)
}

/// The rediscretised coarse operator of `a` (see the module doc).
pub fn coarsen(a: &QuadDiag, c: &Coarsening) -> QuadDiag {
    let (mx, my) = c.axis_maps(&a.wx, &a.wy);
    coarsen_with(a, &mx, &my)
}

/// [`coarsen`] with the axes given (`kernels/mg.cu`'s `mg_coarsen_f64`
/// computes the same sums in the same order).
pub fn coarsen_with(a: &QuadDiag, mx: &AxisMap, my: &AxisMap) -> QuadDiag {
    let (nx, ny) = (a.nx, a.ny);
    let plane = nx * ny;
    let (nxc, nyc) = (mx.widths.len(), my.widths.len());
    let cplane = nxc * nyc;
    let mut ac = QuadDiag::zeros(nxc, nyc, a.nz);
    ac.gx
        .par_chunks_mut(cplane)
        .zip(ac.gy.par_chunks_mut(cplane))
        .zip(ac.gz.par_chunks_mut(cplane))
        .zip(ac.amb.par_chunks_mut(cplane))
        .enumerate()
        .for_each(|(z, (((gx, gy), gz), amb))| {
            let f = |x: usize, y: usize| x + nx * y + plane * z;
            for yc in 0..nyc {
                for xc in 0..nxc {
                    let j = xc + nxc * yc;
                    let xs = mx.start[xc]..mx.start[xc + 1];
                    let ys = my.start[yc]..my.start[yc + 1];
                    for y in ys.clone() {
                        for x in xs.clone() {
                            gz[j] += a.gz[f(x, y)];
                            if !absent(a, f(x, y)) {
                                amb[j] += a.amb[f(x, y)];
                            }
                        }
                    }
                    if xc + 1 < nxc {
                        let last = xs.end - 1;
                        let sum: f64 = ys.clone().map(|y| a.gx[f(last, y)]).sum();
                        gx[j] = sum * mx.num[xc] / mx.den[xc];
                    }
                    if yc + 1 < nyc {
                        let last = ys.end - 1;
                        let sum: f64 = xs.clone().map(|x| a.gy[f(x, last)]).sum();
                        gy[j] = sum * my.num[yc] / my.den[yc];
                    }
                }
            }
        });
    fill_diagonal(&mut ac);
    if a.wx.len() == nx && a.wy.len() == ny {
        (ac.wx, ac.wy) = (mx.widths.clone(), my.widths.clone());
    }
    ac
}

/// d = amb + the row's six conductances; a row with none (an aggregate of
/// absent cells) gets d = amb = 1, an identity row.
pub fn fill_diagonal(a: &mut QuadDiag) {
    let (nx, plane) = (a.nx, a.nx * a.ny);
    for i in 0..a.len() {
        let mut s = a.amb[i] + a.gx[i] + a.gy[i] + a.gz[i];
        if i % nx > 0 {
            s += a.gx[i - 1];
        }
        if i % plane >= nx {
            s += a.gy[i - nx];
        }
        if i >= plane {
            s += a.gz[i - plane];
        }
        if s == 0.0 {
            a.amb[i] = 1.0;
        }
    }
    let (gx, gy, gz, amb) = (&a.gx, &a.gy, &a.gz, &a.amb);
    a.d.par_iter_mut().enumerate().for_each(|(i, d)| {
        let mut s = amb[i] + gx[i] + gy[i] + gz[i];
        if i % nx > 0 {
            s += gx[i - 1];
        }
        if i % plane >= nx {
            s += gy[i - nx];
        }
        if i >= plane {
            s += gz[i - plane];
        }
        *d = s;
    });
}

/// 1/pₖ of the LU factorisation of each z column's tridiagonal block
/// `tridiag(−gz[k−1], d[k], −gz[k])`: p₀ = d₀, pₖ = dₖ − gz²ₖ₋₁/pₖ₋₁. The
/// z-line smoother solves a column with it (Thomas: forward
/// yₖ = (rₖ + gzₖ₋₁ yₖ₋₁)/pₖ, backward xₖ = yₖ + (gzₖ/pₖ) xₖ₊₁).
pub fn line_pivots(a: &QuadDiag) -> Vec<f64> {
    let plane = a.nx * a.ny;
    let mut inv = vec![0.0; a.len()];
    // Plane by plane: each plane's pivots depend only on the one below.
    for z in 0..a.nz {
        let (below, cur) = inv.split_at_mut(z * plane);
        let cur = &mut cur[..plane];
        let below = if z > 0 {
            Some(&below[(z - 1) * plane..])
        } else {
            None
        };
        cur.par_iter_mut().enumerate().for_each(|(j, out)| {
            let i = z * plane + j;
            let mut p = a.d[i];
            if let Some(b) = below {
                let g = a.gz[i - plane];
                p -= g * g * b[j];
            }
            *out = 1.0 / p;
        });
    }
    inv
}

/// Whether coarse column (or row) `k` of the axis aggregated as `starts`
/// (first fine column of each aggregate, then the fine size) is relaxed
/// on its level when the smoother skips unchanged cells: its aggregate or
/// a neighbouring one is a pair. A cell (x, y) is relaxed when its column
/// or its row is: the cells within one of a changed cell (merged in x or
/// in y by the step that made the level). A cell single in both axes and
/// away from changed ones is the level above's cell, already relaxed at
/// that scale; it is left to the first level that merges it. Measured
/// (BENCHMARKS.md's git history, "Skipping unchanged cells"): without the one-cell halo,
/// +1 PCG iteration at 30 and 6 µm on the 24 mm package; with it, the same
/// iterations as relaxing every cell on every shipped graded stack.
pub fn relaxed(starts: &[usize], k: usize) -> bool {
    let n = starts.len() - 1;
    let pair = |k: usize| starts[k + 1] - starts[k] >= 2;
    pair(k) || (k > 0 && pair(k - 1)) || (k + 1 < n && pair(k + 1))
}

/// The (x, y) columns of the level made by `c` that [`relaxed`] keeps.
pub fn relaxed_columns(c: &Coarsening) -> usize {
    let count = |s: &[usize]| (0..s.len() - 1).filter(|&k| relaxed(s, k)).count();
    let (rx, ry) = (count(&c.xstart), count(&c.ystart));
    c.nxc * c.nyc - (c.nxc - rx) * (c.nyc - ry)
}
