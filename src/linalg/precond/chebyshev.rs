//! Jacobi-scaled Chebyshev polynomial preconditioner (CUTh-Solver's choice):
//! z = q(D⁻¹A) D⁻¹ r, where q makes 1 − λq(λ) the scaled Chebyshev polynomial
//! on [λmin, λmax]. It is SPD for every λ in (0, λmax + λmin), so an
//! over-estimated λmax is safe and an under-estimated one is not; see
//! `linalg::eigen` for how λmax is bounded. Only SpMV and vector updates: no
//! reductions, no triangular solves.
//!
//! Saad, Iterative Methods for Sparse Linear Systems, Alg. 12.1, from z₀ = 0:
//!   θ = (λmax+λmin)/2, δ = (λmax−λmin)/2, σ = θ/δ, ρ₀ = 1/σ
//!   res = r;  d = D⁻¹r/θ;  z = d
//!   k−1 times: ρ₁ = 1/(2σ − ρ₀); res −= A d; d = ρ₁ρ₀ d + (2ρ₁/δ) D⁻¹res;
//!              z += d; ρ₀ = ρ₁
//! Traffic per row: init 40 B (r, diag read; res, d, z written), each later
//! step 80 B (4 matrix + d + d_next + res rw + z rw), degree k: 40 + 80(k−1) B.

use super::{PrecondOptions, PrecondReport, Preconditioner};
use crate::backend::{Backend, BackendError};
use crate::linalg::eigen::lanczos_lambda_max;
use crate::linalg::{QuadDiag, SolveError};
use std::collections::BTreeMap;

pub struct Chebyshev<B: Backend> {
    degree: usize,
    lambda_min: f64,
    lambda_max: f64,
    /// Largest Ritz value before the safety factor (for the report).
    lambda_ritz: f64,
    gershgorin: f64,
    res: B::Vector,
    d: B::Vector,
    d_next: B::Vector,
}

impl<B: Backend> Chebyshev<B> {
    pub fn new(
        be: &B,
        a: &B::Matrix,
        host: &QuadDiag,
        opts: &PrecondOptions,
    ) -> Result<Self, SolveError> {
        let n = host.len();
        let gershgorin = host.gershgorin_jacobi();
        let lambda_ritz = lanczos_lambda_max(be, a, n, opts.lanczos_steps)?;
        let lambda_max = (lambda_ritz * opts.lambda_safety).min(gershgorin);
        Ok(Chebyshev {
            degree: opts.chebyshev_degree.max(1),
            lambda_min: lambda_max / opts.chebyshev_ratio,
            lambda_max,
            lambda_ritz,
            gershgorin,
            res: be.zeros(n)?,
            d: be.zeros(n)?,
            d_next: be.zeros(n)?,
        })
    }
}

impl<B: Backend> Preconditioner<B> for Chebyshev<B> {
    fn apply(
        &mut self,
        be: &B,
        a: &B::Matrix,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        let theta = 0.5 * (self.lambda_max + self.lambda_min);
        let delta = 0.5 * (self.lambda_max - self.lambda_min);
        let sigma = theta / delta;
        let mut rho = 1.0 / sigma;
        be.cheb_init(a, 1.0 / theta, r, &mut self.res, &mut self.d, z)?; // res = r; d = D⁻¹r/θ; z = d
        for _ in 1..self.degree {
            let rho_next = 1.0 / (2.0 * sigma - rho);
            // res −= A d; d_next = ρ₁ρ₀ d + (2ρ₁/δ) D⁻¹ res; z += d_next
            be.cheb_step(
                a,
                rho_next * rho,
                2.0 * rho_next / delta,
                &self.d,
                &mut self.d_next,
                &mut self.res,
                z,
            )?;
            std::mem::swap(&mut self.d, &mut self.d_next);
            rho = rho_next;
        }
        Ok(())
    }

    fn report(&self) -> PrecondReport {
        let params = BTreeMap::from([
            ("degree".to_string(), self.degree as f64),
            ("lambda_min".to_string(), self.lambda_min),
            ("lambda_max".to_string(), self.lambda_max),
            ("lambda_ritz".to_string(), self.lambda_ritz),
            ("lambda_gershgorin".to_string(), self.gershgorin),
        ]);
        PrecondReport {
            name: "chebyshev".into(),
            params,
        }
    }
}
