//! Loop bodies of the CPU backend, one function per fused kernel. Rows are
//! split into [`CHUNK`]-sized tasks; reductions return per-chunk partial sums
//! added in chunk order (deterministic).

use super::CHUNK;
use crate::linalg::QuadDiag;
use rayon::prelude::*;

fn ordered_sum(parts: Vec<f64>) -> f64 {
    parts.into_iter().sum()
}

/// y = A x
pub fn spmv(a: &QuadDiag, x: &[f64], y: &mut [f64]) {
    y.par_chunks_mut(CHUNK).enumerate().for_each(|(c, ys)| {
        let base = c * CHUNK;
        for (j, yi) in ys.iter_mut().enumerate() {
            *yi = a.row_apply(x, base + j);
        }
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
            let mut acc = 0.0;
            for (j, qi) in qs.iter_mut().enumerate() {
                let i = base + j;
                *qi = a.row_apply(p, i);
                acc += p[i] * *qi;
            }
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

/// z = D⁻¹ r
pub fn jacobi(diag: &[f64], r: &[f64], z: &mut [f64]) {
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
#[allow(clippy::too_many_arguments)]
pub fn cheb_step(
    a: &QuadDiag,
    alpha: f64,
    beta: f64,
    d: &[f64],
    d_next: &mut [f64],
    res: &mut [f64],
    z: &mut [f64],
) {
    d_next
        .par_chunks_mut(CHUNK)
        .zip(res.par_chunks_mut(CHUNK))
        .zip(z.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(c, ((dn, rs), zs))| {
            let base = c * CHUNK;
            for j in 0..dn.len() {
                let i = base + j;
                rs[j] -= a.row_apply(d, i);
                dn[j] = alpha * d[i] + beta * rs[j] / a.d[i];
                zs[j] += dn[j];
            }
        });
}
