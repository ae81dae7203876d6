//! Low-precision Chebyshev kernels of the CPU backend: f32 arithmetic on the
//! Jacobi-scaled Â whose off-diagonals are f16 or f32 (`linalg::precision`).
//! They are the reference for the CUDA kernels of `kernels/mixed.cu` (same
//! terms, same order, f32 throughout) rather than tuned: every load goes
//! through `LowArray::get`.

use super::CHUNK;
use crate::linalg::precision::ScaledQuadDiag;
use rayon::prelude::*;

/// r̂ = S r; res = r̂; d = c r̂; ẑ = d, or only z = S d when `last`.
#[allow(clippy::too_many_arguments)]
pub fn cheb_init(
    a: &ScaledQuadDiag,
    c: f32,
    r: &[f64],
    res: &mut [f32],
    d: &mut [f32],
    zhat: &mut [f32],
    z: &mut [f64],
    last: bool,
) {
    if last {
        z.par_iter_mut().enumerate().for_each(|(i, zi)| {
            let s = a.s[i];
            *zi = (s * (c * (s * r[i] as f32))) as f64;
        });
        return;
    }
    res.par_chunks_mut(CHUNK)
        .zip(d.par_chunks_mut(CHUNK))
        .zip(zhat.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(k, ((rs, ds), zs))| {
            let base = k * CHUNK;
            for j in 0..rs.len() {
                let rh = a.s[base + j] * r[base + j] as f32;
                rs[j] = rh;
                ds[j] = c * rh;
                zs[j] = ds[j];
            }
        });
}

/// res −= Â d; d_next = α d + β res; ẑ += d_next, or only
/// z = S (ẑ + d_next) when `last`.
#[allow(clippy::too_many_arguments)]
pub fn cheb_step(
    a: &ScaledQuadDiag,
    alpha: f32,
    beta: f32,
    d: &[f32],
    d_next: &mut [f32],
    res: &mut [f32],
    zhat: &mut [f32],
    z: &mut [f64],
    last: bool,
) {
    let step = |i: usize, res_i: f32| {
        let ri = res_i - a.row_apply(d, i);
        let dn = alpha * d[i] + beta * ri;
        (ri, dn)
    };
    if last {
        z.par_iter_mut().enumerate().for_each(|(i, zi)| {
            let (_, dn) = step(i, res[i]);
            *zi = (a.s[i] * (zhat[i] + dn)) as f64;
        });
        return;
    }
    d_next
        .par_chunks_mut(CHUNK)
        .zip(res.par_chunks_mut(CHUNK))
        .zip(zhat.par_chunks_mut(CHUNK))
        .enumerate()
        .for_each(|(k, ((dn_s, rs), zs))| {
            let base = k * CHUNK;
            for j in 0..dn_s.len() {
                let (ri, dn) = step(base + j, rs[j]);
                rs[j] = ri;
                dn_s[j] = dn;
                zs[j] += dn;
            }
        });
}
