//! Low-precision Chebyshev kernels of the CPU backend: f32 arithmetic on the
//! Jacobi-scaled Â whose off-diagonals are f16 or f32 (`linalg::precision`).
//! Same terms in the same order as `ScaledQuadDiag::row_apply`, f32
//! throughout, so they are also the reference of `kernels/mixed.cu`. The
//! interior rows run over equal-length f32 slices without bounds checks, as
//! `kernels::apply_rows` does in f64; f16 diagonals are converted to f32 a
//! chunk at a time (SIMD), not value by value.

use super::{same_len, CpuBackend, CHUNK};
use crate::backend::{BackendError, ChebWork, ScaledChebyshevOps};
use crate::matrix::precision::{LowArray, ScaledQuadDiag};
use half::slice::HalfFloatSliceExt;
use rayon::prelude::*;
use std::borrow::Cow;

impl ScaledChebyshevOps<f32> for CpuBackend {
    type ScaledMatrix = ScaledQuadDiag;
    type ScaledVector = Vec<f32>;

    fn upload_scaled(&self, a: &ScaledQuadDiag) -> Result<ScaledQuadDiag, BackendError> {
        Ok(a.clone())
    }
    fn scaled_work(&self, n: usize) -> Result<ChebWork<Vec<f32>>, BackendError> {
        let v = || vec![0.0f32; n];
        Ok(ChebWork {
            res: v(),
            d: v(),
            d_next: v(),
            zhat: Some(v()),
        })
    }
    fn scaled_init(
        &self,
        m: &ScaledQuadDiag,
        c: f64,
        r: &Vec<f64>,
        w: &mut ChebWork<Vec<f32>>,
        z: &mut Vec<f64>,
        last: bool,
    ) -> Result<(), BackendError> {
        same_len(m.len(), r.len())?;
        cheb_init(m, c as f32, r, Work::of(m, w, z)?, z, last);
        Ok(())
    }
    fn scaled_step(
        &self,
        m: &ScaledQuadDiag,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<Vec<f32>>,
        z: &mut Vec<f64>,
        last: bool,
    ) -> Result<(), BackendError> {
        cheb_step(m, alpha as f32, beta as f32, Work::of(m, w, z)?, z, last);
        Ok(())
    }
}

/// `arr[lo..hi]` as f32 values: borrowed when stored f32, converted (F16C
/// where the CPU has it, through `half`'s slice conversion) and scaled when
/// stored f16, so the row loop below is one f32 loop for every format.
fn window(arr: &LowArray, lo: usize, hi: usize) -> Cow<'_, [f32]> {
    match arr {
        LowArray::F32(v) => Cow::Borrowed(&v[lo..hi]),
        LowArray::F16 { v, inv_scale } => {
            let mut out = vec![0.0f32; hi - lo];
            v[lo..hi].convert_to_f32_slice(&mut out);
            out.iter_mut().for_each(|g| *g *= inv_scale);
            Cow::Owned(out)
        }
    }
}

/// Calls `f(j, (Â x)[base + j])` for `j` in `0..len`: interior rows (every z
/// plane but the first and last) over equal-length f32 slices, the rest by
/// `row_apply`. Same terms, same order: identical results.
#[inline(always)]
fn apply_rows(
    a: &ScaledQuadDiag,
    x: &[f32],
    base: usize,
    len: usize,
    mut f: impl FnMut(usize, f32),
) {
    let n = x.len();
    let (sy, sz) = (a.nx, a.nx * a.ny);
    let end = base + len;
    let lo = base.max(sz).min(end);
    let hi = end.min(n.saturating_sub(sz)).max(lo);
    for i in base..lo {
        f(i - base, a.row_apply(x, i));
    }
    if hi > lo {
        let [gx, gy, gz] = &a.g;
        let (gx_e, gx_w) = (window(gx, lo, hi), window(gx, lo - 1, hi - 1));
        let (gy_n, gy_s) = (window(gy, lo, hi), window(gy, lo - sy, hi - sy));
        let (gz_u, gz_d) = (window(gz, lo, hi), window(gz, lo - sz, hi - sz));
        let xc = &x[lo..hi];
        let (x_e, x_w) = (&x[lo + 1..hi + 1], &x[lo - 1..hi - 1]);
        let (x_n, x_s) = (&x[lo + sy..hi + sy], &x[lo - sy..hi - sy]);
        let (x_u, x_d) = (&x[lo + sz..hi + sz], &x[lo - sz..hi - sz]);
        for k in 0..hi - lo {
            let y = xc[k]
                - gx_e[k] * x_e[k]
                - gx_w[k] * x_w[k]
                - gy_n[k] * x_n[k]
                - gy_s[k] * x_s[k]
                - gz_u[k] * x_u[k]
                - gz_d[k] * x_d[k];
            f(lo - base + k, y);
        }
    }
    for i in hi..end {
        f(i - base, a.row_apply(x, i));
    }
}

/// The f32 work vectors of one recurrence step, borrowed apart: ẑ, which the
/// scaled recurrence always has, out of its `Option`, and every length
/// checked against the matrix and z once, so the loops index unchecked.
pub struct Work<'w> {
    pub res: &'w mut [f32],
    pub d: &'w mut [f32],
    pub d_next: &'w mut [f32],
    pub zhat: &'w mut [f32],
}

impl<'w> Work<'w> {
    fn of(
        m: &ScaledQuadDiag,
        w: &'w mut ChebWork<Vec<f32>>,
        z: &[f64],
    ) -> Result<Work<'w>, BackendError> {
        let ChebWork {
            res,
            d,
            d_next,
            zhat,
        } = w;
        let zhat = zhat.as_mut().ok_or(BackendError::Length(m.len(), 0))?;
        for v in [res.len(), d.len(), d_next.len(), zhat.len(), z.len()] {
            same_len(m.len(), v)?;
        }
        Ok(Work {
            res,
            d,
            d_next,
            zhat,
        })
    }
}

/// r̂ = S r; res = r̂; d = c r̂; ẑ = d, or only z = S d when `last`.
pub fn cheb_init(a: &ScaledQuadDiag, c: f32, r: &[f64], w: Work, z: &mut [f64], last: bool) {
    let Work { res, d, zhat, .. } = w;
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
pub fn cheb_step(a: &ScaledQuadDiag, alpha: f32, beta: f32, w: Work, z: &mut [f64], last: bool) {
    let Work {
        res,
        d,
        d_next,
        zhat,
    } = w;
    let d: &[f32] = d;
    if last {
        z.par_chunks_mut(CHUNK).enumerate().for_each(|(c, zs)| {
            let base = c * CHUNK;
            apply_rows(a, d, base, zs.len(), |j, ad| {
                let i = base + j;
                let dn = alpha * d[i] + beta * (res[i] - ad);
                zs[j] = (a.s[i] * (zhat[i] + dn)) as f64;
            });
        });
    } else {
        d_next
            .par_chunks_mut(CHUNK)
            .zip(res.par_chunks_mut(CHUNK))
            .zip(zhat.par_chunks_mut(CHUNK))
            .enumerate()
            .for_each(|(c, ((dn_s, rs), zs))| {
                let base = c * CHUNK;
                let ds = &d[base..base + dn_s.len()];
                apply_rows(a, d, base, dn_s.len(), |j, ad| {
                    let ri = rs[j] - ad;
                    let dn = alpha * ds[j] + beta * ri;
                    rs[j] = ri;
                    dn_s[j] = dn;
                    zs[j] += dn;
                });
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::precision::Level;
    use crate::matrix::QuadDiag;

    /// The slice fast path gives exactly `row_apply`'s result, for every
    /// format, across chunk boundaries and the first and last z planes.
    #[test]
    fn fast_rows_equal_row_apply_bitwise() {
        let (nx, ny, nz) = (67, 53, 5); // 17 755 rows: three chunks
        let mut a = QuadDiag::zeros(nx, ny, nz);
        for i in 0..a.len() {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            let w = 1.0 + (i % 13) as f64;
            a.gx[i] = if x + 1 < nx { w } else { 0.0 };
            a.gy[i] = if y + 1 < ny { 2.0 * w } else { 0.0 };
            a.gz[i] = if z + 1 < nz { 100.0 * w } else { 0.0 };
            a.d[i] = 2000.0;
        }
        let x: Vec<f32> = (0..a.len())
            .map(|i| ((i * 7919) % 1000) as f32 / 500.0 - 1.0)
            .collect();
        for level in [Level::F16, Level::F32] {
            let s = ScaledQuadDiag::new(&a, level);
            let mut y = vec![f32::NAN; a.len()];
            y.chunks_mut(CHUNK).enumerate().for_each(|(c, ys)| {
                apply_rows(&s, &x, c * CHUNK, ys.len(), |j, v| ys[j] = v);
            });
            for (i, yi) in y.iter().enumerate() {
                assert_eq!(
                    yi.to_bits(),
                    s.row_apply(&x, i).to_bits(),
                    "row {i} {level:?}"
                );
            }
        }
    }
}
