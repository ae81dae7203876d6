//! Loop bodies of the CPU backend, one function per fused kernel. Rows are
//! split into [`CHUNK`]-sized tasks; reductions return per-chunk partial sums
//! added in chunk order (deterministic).

use super::{same_len, CpuBackend, CHUNK};
use crate::backend::{BackendError, ChebWork, ChebyshevOps, QuadDiagOps};
use crate::matrix::advection::Advection;
use crate::matrix::QuadDiag;
use rayon::prelude::*;
use std::borrow::Cow;

impl QuadDiagOps for CpuBackend {
    type Matrix = QuadDiag;
    type Advection = Advection;

    fn upload_advection(&self, a: &Advection) -> Result<Advection, BackendError> {
        Ok(a.clone())
    }
    fn add_couplings(
        &self,
        a: &Advection,
        scale: f64,
        x: &Vec<f64>,
        y: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        super::advection::add_couplings(a, scale, x, y)
    }
    fn line_solve(
        &self,
        a: &Advection,
        d: &Vec<f64>,
        r: &Vec<f64>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        super::advection::line_solve(a, d, r, z)
    }

    fn upload_matrix(&self, a: &QuadDiag) -> Result<QuadDiag, BackendError> {
        Ok(a.clone())
    }
    fn host_matrix<'m>(&self, a: &'m QuadDiag) -> Result<Cow<'m, QuadDiag>, BackendError> {
        Ok(Cow::Borrowed(a))
    }
    fn diagonal<'m>(&self, a: &'m QuadDiag) -> &'m Vec<f64> {
        &a.d
    }
    fn spmv(&self, a: &QuadDiag, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), BackendError> {
        same_len(a.len(), x.len())?;
        same_len(a.len(), y.len())?;
        spmv(a, x, y);
        Ok(())
    }
    fn residual(
        &self,
        a: &QuadDiag,
        b: &Vec<f64>,
        x: &Vec<f64>,
        r: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(a.len(), b.len())?;
        same_len(a.len(), x.len())?;
        same_len(a.len(), r.len())?;
        s[out] = residual(a, b, x, r);
        Ok(())
    }
    fn spmv_dot(
        &self,
        a: &QuadDiag,
        p: &Vec<f64>,
        q: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(a.len(), p.len())?;
        same_len(a.len(), q.len())?;
        s[out] = spmv_dot(a, p, q);
        Ok(())
    }
    fn cheb_step(
        &self,
        a: &QuadDiag,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<Vec<f64>>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        for v in [w.d.len(), w.d_next.len(), w.res.len(), z.len()] {
            same_len(a.len(), v)?;
        }
        cheb_step(a, alpha, beta, w, z);
        Ok(())
    }
}

impl ChebyshevOps for CpuBackend {
    fn cheb_init(
        &self,
        diag: &Vec<f64>,
        c: f64,
        r: &Vec<f64>,
        w: &mut ChebWork<Vec<f64>>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        for v in [r.len(), w.res.len(), w.d.len(), z.len()] {
            same_len(diag.len(), v)?;
        }
        cheb_init(diag, c, r, &mut w.res, &mut w.d, z);
        Ok(())
    }
    fn cheb_update(
        &self,
        q: &Vec<f64>,
        diag: &Vec<f64>,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<Vec<f64>>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        for v in [q.len(), w.d.len(), w.d_next.len(), w.res.len(), z.len()] {
            same_len(diag.len(), v)?;
        }
        cheb_update(q, diag, alpha, beta, w, z);
        Ok(())
    }
}

fn ordered_sum(parts: Vec<f64>) -> f64 {
    parts.into_iter().sum()
}

/// Calls `f(j, (A x)[base + j])` for `j` in `0..len`. Rows whose seven
/// neighbours all exist (every z plane but the first and last) go through a
/// loop over equal-length slices, which has no bounds checks or branches and
/// vectorizes; the rest use `QuadDiag::row_apply`. Same terms, same order as
/// `row_apply`, so the results are identical.
#[inline]
fn apply_rows(a: &QuadDiag, x: &[f64], base: usize, len: usize, mut f: impl FnMut(usize, f64)) {
    let n = x.len();
    let (sy, sz) = (a.nx, a.nx * a.ny);
    let end = base + len;
    let lo = base.max(sz).min(end);
    let hi = end.min(n.saturating_sub(sz)).max(lo);
    for i in base..lo {
        f(i - base, a.row_apply(x, i));
    }
    if hi > lo {
        let r = lo..hi;
        let (d, gx, gy, gz) = (
            &a.d[r.clone()],
            &a.gx[r.clone()],
            &a.gy[r.clone()],
            &a.gz[r.clone()],
        );
        let gx_w = &a.gx[lo - 1..hi - 1];
        let gy_s = &a.gy[lo - sy..hi - sy];
        let gz_d = &a.gz[lo - sz..hi - sz];
        let xc = &x[r];
        let (x_e, x_w) = (&x[lo + 1..hi + 1], &x[lo - 1..hi - 1]);
        let (x_n, x_s) = (&x[lo + sy..hi + sy], &x[lo - sy..hi - sy]);
        let (x_u, x_d) = (&x[lo + sz..hi + sz], &x[lo - sz..hi - sz]);
        for k in 0..hi - lo {
            let y = d[k] * xc[k]
                - gx[k] * x_e[k]
                - gx_w[k] * x_w[k]
                - gy[k] * x_n[k]
                - gy_s[k] * x_s[k]
                - gz[k] * x_u[k]
                - gz_d[k] * x_d[k];
            f(lo - base + k, y);
        }
    }
    for i in hi..end {
        f(i - base, a.row_apply(x, i));
    }
}

/// y = A x
pub fn spmv(a: &QuadDiag, x: &[f64], y: &mut [f64]) {
    y.par_chunks_mut(CHUNK).enumerate().for_each(|(c, ys)| {
        apply_rows(a, x, c * CHUNK, ys.len(), |j, ax| ys[j] = ax);
    });
}

/// r = b − A x (difference form, `QuadDiag::row_residual`); returns r·r
pub fn residual(a: &QuadDiag, b: &[f64], x: &[f64], r: &mut [f64]) -> f64 {
    let parts = r
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(c, rs)| {
            let base = c * CHUNK;
            let mut acc = 0.0;
            for (j, ri) in rs.iter_mut().enumerate() {
                let i = base + j;
                *ri = a.row_residual(x, b, i);
                acc += *ri * *ri;
            }
            acc
        })
        .collect();
    ordered_sum(parts)
}

/// q = A p; returns p·q
pub fn spmv_dot(a: &QuadDiag, p: &[f64], q: &mut [f64]) -> f64 {
    let parts = q
        .par_chunks_mut(CHUNK)
        .enumerate()
        .map(|(c, qs)| {
            let base = c * CHUNK;
            let ps = &p[base..base + qs.len()];
            let mut acc = 0.0;
            apply_rows(a, p, base, qs.len(), |j, ap| {
                qs[j] = ap;
                acc += ps[j] * ap;
            });
            acc
        })
        .collect();
    ordered_sum(parts)
}

/// x·y
pub fn dot(x: &[f64], y: &[f64]) -> f64 {
    let parts = x
        .par_chunks(CHUNK)
        .zip(y.par_chunks(CHUNK))
        .map(|(xs, ys)| xs.iter().zip(ys).map(|(a, b)| a * b).sum::<f64>())
        .collect();
    ordered_sum(parts)
}

/// x += α p; r −= α q; returns r·r
pub fn cg_update(alpha: f64, p: &[f64], q: &[f64], x: &mut [f64], r: &mut [f64]) -> f64 {
    let parts = x
        .par_chunks_mut(CHUNK)
        .zip(r.par_chunks_mut(CHUNK))
        .zip(p.par_chunks(CHUNK).zip(q.par_chunks(CHUNK)))
        .map(|((xs, rs), (ps, qs))| {
            let mut acc = 0.0;
            for j in 0..xs.len() {
                xs[j] += alpha * ps[j];
                rs[j] -= alpha * qs[j];
                acc += rs[j] * rs[j];
            }
            acc
        })
        .collect();
    ordered_sum(parts)
}

/// p = z + β p
pub fn xpay(beta: f64, z: &[f64], p: &mut [f64]) {
    p.par_chunks_mut(CHUNK)
        .zip(z.par_chunks(CHUNK))
        .for_each(|(ps, zs)| {
            for (pi, zi) in ps.iter_mut().zip(zs) {
                *pi = zi + beta * *pi;
            }
        });
}

/// y = α x + β y; with β = 0, y is not read.
pub fn axpby(alpha: f64, x: &[f64], beta: f64, y: &mut [f64]) {
    let ys = y.par_iter_mut().zip(x.par_iter());
    if beta == 0.0 {
        ys.for_each(|(yi, xi)| *yi = alpha * xi);
    } else {
        ys.for_each(|(yi, xi)| *yi = alpha * xi + beta * *yi);
    }
}

/// out = w ⊙ x + b
pub fn mul_add(w: &[f64], x: &[f64], b: &[f64], out: &mut [f64]) {
    out.par_chunks_mut(CHUNK)
        .zip(w.par_chunks(CHUNK))
        .zip(x.par_chunks(CHUNK).zip(b.par_chunks(CHUNK)))
        .for_each(|((os, ws), (xs, bs))| {
            for j in 0..os.len() {
                os[j] = ws[j] * xs[j] + bs[j];
            }
        });
}

/// z = r ⊘ d (Jacobi: z = D⁻¹ r)
pub fn divide(diag: &[f64], r: &[f64], z: &mut [f64]) {
    z.par_chunks_mut(CHUNK)
        .zip(r.par_chunks(CHUNK).zip(diag.par_chunks(CHUNK)))
        .for_each(|(zs, (rs, ds))| {
            for j in 0..zs.len() {
                zs[j] = rs[j] / ds[j];
            }
        });
}

/// res = r; d = c·D⁻¹ r; z = d
pub fn cheb_init(diag: &[f64], c: f64, r: &[f64], res: &mut [f64], d: &mut [f64], z: &mut [f64]) {
    res.par_chunks_mut(CHUNK)
        .zip(d.par_chunks_mut(CHUNK))
        .zip(z.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c_idx, ((res_s, d_s), z_s))| {
            let base = c_idx * CHUNK;
            for j in 0..res_s.len() {
                let i = base + j;
                res_s[j] = r[i];
                d_s[j] = c * r[i] / diag[i];
                z_s[j] = d_s[j];
            }
        });
}

/// res −= A d; d_next = α d + β D⁻¹ res; z += d_next
pub fn cheb_step(a: &QuadDiag, alpha: f64, beta: f64, w: &mut ChebWork<Vec<f64>>, z: &mut [f64]) {
    let (d, d_next, res) = (&w.d, &mut w.d_next, &mut w.res);
    d_next
        .par_chunks_mut(CHUNK)
        .zip(res.par_chunks_mut(CHUNK))
        .zip(z.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, ((dn, rs), zs))| {
            let base = c * CHUNK;
            let (ds, diag) = (&d[base..base + dn.len()], &a.d[base..base + dn.len()]);
            apply_rows(a, d, base, dn.len(), |j, ad| {
                rs[j] -= ad;
                dn[j] = alpha * ds[j] + beta * rs[j] / diag[j];
                zs[j] += dn[j];
            });
        });
}

/// res −= q; d_next = α d + β D⁻¹ res; z += d_next (q = A d, computed
/// apart: same terms in the same order as `cheb_step`)
pub fn cheb_update(
    q: &[f64],
    diag: &[f64],
    alpha: f64,
    beta: f64,
    w: &mut ChebWork<Vec<f64>>,
    z: &mut [f64],
) {
    let (d, d_next, res) = (&w.d, &mut w.d_next, &mut w.res);
    d_next
        .par_chunks_mut(CHUNK)
        .zip(res.par_chunks_mut(CHUNK))
        .zip(z.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, ((dn, rs), zs))| {
            let base = c * CHUNK;
            let r = base..base + dn.len();
            let (ds, qs, diag) = (&d[r.clone()], &q[r.clone()], &diag[r]);
            for j in 0..dn.len() {
                rs[j] -= qs[j];
                dn[j] = alpha * ds[j] + beta * rs[j] / diag[j];
                zs[j] += dn[j];
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The slice fast path of `apply_rows` must give exactly `row_apply`'s
    /// result, across chunk boundaries and the first and last z planes.
    #[test]
    fn fast_rows_equal_row_apply_bitwise() {
        let (nx, ny, nz) = (67, 53, 5); // 17 755 rows: three chunks
        let mut a = QuadDiag::zeros(nx, ny, nz);
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for i in 0..a.len() {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            a.d[i] = 10.0 + rnd();
            a.gx[i] = if x + 1 < nx { rnd() } else { 0.0 };
            a.gy[i] = if y + 1 < ny { rnd() } else { 0.0 };
            a.gz[i] = if z + 1 < nz { rnd() } else { 0.0 };
        }
        let x: Vec<f64> = (0..a.len()).map(|_| rnd() - 0.5).collect();
        let mut y = vec![f64::NAN; a.len()];
        spmv(&a, &x, &mut y);
        for (i, yi) in y.iter().enumerate() {
            assert_eq!(yi.to_bits(), a.row_apply(&x, i).to_bits(), "row {i}");
        }
    }
}
