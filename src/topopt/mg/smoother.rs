//! The levels' Chebyshev–Jacobi smoother: its options, and the λmax(D⁻¹K)
//! bound that fixes its interval for a whole optimization.

use super::super::element::ElementMatrix;
use crate::linalg::precond::PrecondOptions;

/// The smoother: Chebyshev–Jacobi of this degree on [λmax/ratio, λmax].
pub(super) fn smoother_opts() -> PrecondOptions {
    PrecondOptions {
        chebyshev_degree: 3,
        chebyshev_ratio: 8.0,
        ..PrecondOptions::default()
    }
}

/// An upper bound of λmax(D⁻¹K) for every assembly K = Σ Eₑ Kₑ of the
/// element matrix `ke` (any moduli Eₑ > 0, any fixed DOFs):
/// xᵀKx = Σ Eₑ xₑᵀKₑxₑ ≤ Σ λₑ Eₑ xₑᵀ diag(Kₑ) xₑ ≤ λₑ xᵀDx, with
/// λₑ = λmax(diag(Kₑ)⁻¹Kₑ), which does not depend on Eₑ. So the smoothers'
/// interval is fixed for the whole optimization: no Lanczos per level and
/// design step (the measured Ritz values lie within ~15 % of it). λₑ by
/// power iteration on diag(Kₑ)^-½ Kₑ diag(Kₑ)^-½ (24×24), enlarged by
/// 1e-3 (the Rayleigh quotient approaches λₑ from below).
pub fn element_jacobi_bound(ke: &ElementMatrix) -> f64 {
    let k = &ke.0;
    let d: Vec<f64> = (0..24).map(|i| 1.0 / k[i][i].sqrt()).collect();
    let mut v: Vec<f64> = (0..24).map(|i| 1.0 + 0.1 * (i as f64).sin()).collect();
    let mut lambda = 0.0;
    for _ in 0..5000 {
        let w: Vec<f64> = (0..24)
            .map(|i| (0..24).map(|j| d[i] * k[i][j] * d[j] * v[j]).sum())
            .collect();
        let vv: f64 = v.iter().map(|x| x * x).sum();
        lambda = v.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() / vv;
        let norm = w.iter().map(|x| x * x).sum::<f64>().sqrt();
        v = w.iter().map(|x| x / norm).collect();
    }
    lambda * 1.001
}
