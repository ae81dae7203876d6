//! Eigenvalue bounds of the Jacobi-scaled operator D⁻¹A for Chebyshev.
//!
//! A few Jacobi-PCG iterations on a random right-hand side are a Lanczos
//! process in disguise (PETSc's `cgeig.c`): their α, β give a tridiagonal T
//! whose eigenvalues (Ritz values) approach those of D⁻¹A from inside the
//! spectrum. The largest Ritz value therefore never over-estimates λmax; we
//! enlarge it by a safety factor and cap it by the Gershgorin bound, which is
//! a true upper bound.

use super::operator::LinearOperator;
use super::pcg::{pcg_into, CgInfo, CgParams, SolveError, Stop};
use super::precond::jacobi::Jacobi;
use crate::backend::Backend;

/// Largest eigenvalue of the symmetric tridiagonal matrix with diagonal
/// `diag` and off-diagonal `off` (len = diag.len() − 1), by Sturm bisection.
pub fn tridiag_max_eig(diag: &[f64], off: &[f64]) -> f64 {
    let n = diag.len();
    if n == 0 {
        return 0.0;
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        let r = off.get(i).map_or(0.0, |v| v.abs()) + if i > 0 { off[i - 1].abs() } else { 0.0 };
        lo = lo.min(diag[i] - r);
        hi = hi.max(diag[i] + r);
    }
    // Number of eigenvalues < x (Sturm sequence on the LDLᵀ pivots).
    let count_below = |x: f64| {
        let mut c = 0;
        let mut q = diag[0] - x;
        if q < 0.0 {
            c += 1;
        }
        for i in 1..n {
            let qq = if q == 0.0 { f64::MIN_POSITIVE } else { q };
            q = diag[i] - x - off[i - 1] * off[i - 1] / qq;
            if q < 0.0 {
                c += 1;
            }
        }
        c
    };
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if count_below(mid) >= n {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo <= 1e-14 * hi.abs().max(1.0) {
            break;
        }
    }
    hi
}

/// Lanczos (via Jacobi-PCG coefficients) estimate of λmax(D⁻¹A) after `steps`
/// iterations; returns the largest Ritz value.
pub fn lanczos_lambda_max<B: Backend, A: LinearOperator<B> + ?Sized>(
    be: &B,
    a: &mut A,
    steps: usize,
) -> Result<f64, SolveError> {
    let n = a.len();
    // Deterministic pseudo-random right-hand side (xorshift), so runs repeat.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let rhs: Vec<f64> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        })
        .collect();
    let b = be.upload(&rhs)?;
    let mut x = be.zeros(n)?;
    let params = CgParams {
        stop: Stop::relative(1e-300),
        max_iter: steps,
        check_every: 1,
        record: true,
        replace: true,
    };
    let mut jac = Jacobi;
    let mut info = CgInfo::default();
    match pcg_into(be, a, &mut jac, &b, &mut x, &params, &mut info) {
        // Running out of the `steps` iterations is the expected way to stop.
        Ok(()) | Err(SolveError::NoConvergence { .. }) => Ok(ritz_max(&info.coefficients)),
        Err(e) => Err(e),
    }
}

/// Tridiagonal Lanczos matrix from CG's α, β:
/// T[j,j] = 1/α_j + β_{j−1}/α_{j−1},  T[j,j+1] = √β_j / α_j.
fn ritz_max(coeffs: &[(f64, f64)]) -> f64 {
    let m = coeffs.len();
    let mut diag = Vec::with_capacity(m);
    let mut off = Vec::with_capacity(m.saturating_sub(1));
    for j in 0..m {
        let (alpha, _) = coeffs[j];
        let mut t = 1.0 / alpha;
        if j > 0 {
            let (ap, bp) = coeffs[j - 1];
            t += bp / ap;
        }
        diag.push(t);
        if j + 1 < m {
            off.push(coeffs[j].1.sqrt() / alpha);
        }
    }
    tridiag_max_eig(&diag, &off)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tridiag_max_matches_known_spectrum() {
        // The 1D Laplacian tridiag(−1, 2, −1) of size n has λmax = 2 − 2cos(nπ/(n+1)).
        let n = 50;
        let diag = vec![2.0; n];
        let off = vec![-1.0; n - 1];
        let exact = 2.0 - 2.0 * (n as f64 * std::f64::consts::PI / (n as f64 + 1.0)).cos();
        assert!((tridiag_max_eig(&diag, &off) - exact).abs() < 1e-12);
    }
}
