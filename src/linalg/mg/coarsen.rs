//! One coarsening step of the geometric multigrid, on the host: the x-y
//! aggregation (nz never changes) and the coarse operator, rediscretised by
//! finite volumes from the fine face conductances.
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
//!   exactly 2× too stiff in-plane, issue 11) and equals the stack assembled
//!   on the half grid; with the physical widths of a non-uniform grid it stays
//!   that rediscretisation (the coarse widths are the sums of their children);
//! - y faces likewise; the diagonal is `amb` plus the row's conductances.
//!
//! Absent cells (identity rows: no conductance, d = amb = 1 exactly) contribute no
//! `amb` to their aggregate, and a coarse row left with a zero diagonal (all
//! children absent) becomes an identity row again.
//!
//! Every face is coarsened on its own, so material patches are carried face
//! by face; nothing assumes a per-layer constant. The result is again a
//! symmetric, diagonally dominant 7-point Quad-Diag matrix (SPD whenever the
//! fine one is: positive conductances, amb ≥ 0 and > 0 somewhere per
//! connected box).

use crate::linalg::QuadDiag;
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

/// The rediscretised coarse operator of `a` (see the module doc).
pub fn coarsen(a: &QuadDiag, c: &Coarsening) -> QuadDiag {
    let (nx, ny) = (a.nx, a.ny);
    let plane = nx * ny;
    let (nxc, nyc) = (c.nxc, c.nyc);
    let cplane = nxc * nyc;
    let mut ac = QuadDiag::zeros(nxc, nyc, a.nz);
    // Widths: physical when known, else 1 per fine cell.
    let widths = |w: &[f64], n: usize| -> Vec<f64> {
        if w.len() == n {
            w.to_vec()
        } else {
            vec![1.0; n]
        }
    };
    let (wx, wy) = (widths(&a.wx, nx), widths(&a.wy, ny));
    let sum = |w: &[f64], r: std::ops::Range<usize>| -> f64 { w[r].iter().sum() };
    let wxc: Vec<f64> = (0..nxc).map(|xc| sum(&wx, c.xs(xc))).collect();
    let wyc: Vec<f64> = (0..nyc).map(|yc| sum(&wy, c.ys(yc))).collect();
    // Fine-to-coarse ratio of the centre distances across each coarse face.
    // (As numerator and denominator: sum·2/(wₗ + wᵣ) rounds as it always did.)
    let ratio = |w: &[f64], wc: &[f64], last: usize, k: usize| -> (f64, f64) {
        (w[last] + w[last + 1], wc[k] + wc[k + 1])
    };
    let absent = |i: usize| -> bool {
        let (x, y, z) = (i % nx, (i % plane) / nx, i / plane);
        a.d[i] == 1.0
            && a.amb[i] == 1.0
            && a.gx[i] == 0.0
            && a.gy[i] == 0.0
            && a.gz[i] == 0.0
            && (x == 0 || a.gx[i - 1] == 0.0)
            && (y == 0 || a.gy[i - nx] == 0.0)
            && (z == 0 || a.gz[i - plane] == 0.0)
    };
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
                    let (xs, ys) = (c.xs(xc), c.ys(yc));
                    for y in ys.clone() {
                        for x in xs.clone() {
                            gz[j] += a.gz[f(x, y)];
                            if !absent(f(x, y)) {
                                amb[j] += a.amb[f(x, y)];
                            }
                        }
                    }
                    if xc + 1 < nxc {
                        let last = xs.end - 1;
                        let sum: f64 = ys.clone().map(|y| a.gx[f(last, y)]).sum();
                        let (num, den) = ratio(&wx, &wxc, last, xc);
                        gx[j] = sum * num / den;
                    }
                    if yc + 1 < nyc {
                        let last = ys.end - 1;
                        let sum: f64 = xs.clone().map(|x| a.gy[f(x, last)]).sum();
                        let (num, den) = ratio(&wy, &wyc, last, yc);
                        gy[j] = sum * num / den;
                    }
                }
            }
        });
    fill_diagonal(&mut ac);
    if a.wx.len() == nx && a.wy.len() == ny {
        (ac.wx, ac.wy) = (wxc, wyc);
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
