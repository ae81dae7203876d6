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
//!
//! Below f64 (`--precision`, `linalg::precision`) the same recurrence runs on
//! Â = S A S (S = D^-1/2, unit diagonal, so D⁻¹ drops out) in f32 with the
//! off-diagonals stored f16 or f32: z = S q(Â) S r. Traffic per row with f16
//! storage: init 24 B (r f64, s; res, d, ẑ f32), each middle step 30 B
//! (3 × 2 matrix + d + d_next + res rw + ẑ rw), the last step 30 B (it writes
//! only z = S(ẑ + d_next), f64): degree 6 moves 174 B against 440 B in f64.
//! `raise_precision` walks the mode's levels (rule → f32 → f64). Only the
//! first level's Â is built at set-up: a switch is rare (none happened in the
//! GPU runs of issue #6), so the next level is built when it is needed, from
//! the f64 matrix the backend still holds (`Backend::host_matrix`: borrowed
//! on the CPU, downloaded from a GPU), and no host copy of A is kept.

use super::{PrecisionReport, PrecondOptions, PrecondReport, Preconditioner};
use crate::backend::{Backend, BackendError};
use crate::linalg::eigen::lanczos_lambda_max;
use crate::linalg::precision::{ArrayChoice, Level, PrecisionMode, ScaledQuadDiag};
use crate::linalg::{QuadDiag, SolveError};
use std::collections::BTreeMap;

pub struct Chebyshev<B: Backend> {
    degree: usize,
    lambda_min: f64,
    lambda_max: f64,
    /// Largest Ritz value before the safety factor (for the report).
    lambda_ritz: f64,
    gershgorin: f64,
    mode: PrecisionMode,
    level: Level,
    /// The f64 recurrence's vectors (res, d, d_next), while at `Level::F64`.
    work: Option<[B::Vector; 3]>,
    /// The low-precision matrix and vectors, while below `Level::F64`.
    low: Option<Low<B>>,
    /// Levels to switch up to, in order; each Â is built on the switch.
    pending: Vec<Level>,
    n: usize,
}

/// Â on the device, how it is stored, and the f32 vectors of the recurrence.
struct Low<B: Backend> {
    a: B::LowMatrix,
    /// What the rule chose per array (the host Â is dropped once uploaded).
    choices: Vec<ArrayChoice>,
    res: B::LowVector,
    d: B::LowVector,
    d_next: B::LowVector,
    zhat: B::LowVector,
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
        // λ(D⁻¹A) = λ(Â): one interval serves every precision level.
        let lambda_ritz = lanczos_lambda_max(be, a, n, opts.lanczos_steps)?;
        let lambda_max = (lambda_ritz * opts.lambda_safety).min(gershgorin);
        let mode = opts.precision;
        let (&level, pending) = mode.levels().split_first().expect("a mode has levels");
        let first = scaled(host, level);
        let mut m = Chebyshev {
            degree: opts.chebyshev_degree.max(1),
            lambda_min: lambda_max / opts.chebyshev_ratio,
            lambda_max,
            lambda_ritz,
            gershgorin,
            mode,
            level,
            work: None,
            low: None,
            pending: pending.to_vec(),
            n,
        };
        m.enter(be, level, first)?;
        Ok(m)
    }

    /// Makes `level` current: uploads its Â (or allocates the f64 vectors).
    fn enter(
        &mut self,
        be: &B,
        level: Level,
        host: Option<ScaledQuadDiag>,
    ) -> Result<(), BackendError> {
        self.level = level;
        match host {
            None => {
                self.low = None;
                if self.work.is_none() {
                    self.work = Some([be.zeros(self.n)?, be.zeros(self.n)?, be.zeros(self.n)?]);
                }
            }
            Some(h) => {
                let a = be.upload_low_matrix(&h)?;
                let choices = h.choices;
                let low = match self.low.take() {
                    Some(old) => Low { a, choices, ..old },
                    None => Low {
                        a,
                        choices,
                        res: be.zeros_low(self.n)?,
                        d: be.zeros_low(self.n)?,
                        d_next: be.zeros_low(self.n)?,
                        zhat: be.zeros_low(self.n)?,
                    },
                };
                self.low = Some(low);
            }
        }
        Ok(())
    }

    /// res = r; d = c·D⁻¹r; z = d (scaled form below f64; see `Backend`).
    fn first(
        &mut self,
        be: &B,
        a: &B::Matrix,
        c: f64,
        r: &B::Vector,
        z: &mut B::Vector,
        last: bool,
    ) -> Result<(), BackendError> {
        if let Some(l) = &mut self.low {
            return be.cheb_init_low(&l.a, c, r, &mut l.res, &mut l.d, &mut l.zhat, z, last);
        }
        let [res, d, _] = self.work.as_mut().expect("f64 level has its vectors");
        be.cheb_init(a, c, r, res, d, z)
    }

    /// res −= A d; d_next = α d + β D⁻¹res; z += d_next; d ↔ d_next.
    #[allow(clippy::too_many_arguments)]
    fn next(
        &mut self,
        be: &B,
        a: &B::Matrix,
        alpha: f64,
        beta: f64,
        z: &mut B::Vector,
        last: bool,
    ) -> Result<(), BackendError> {
        if let Some(l) = &mut self.low {
            let (d, dn) = (&l.d, &mut l.d_next);
            be.cheb_step_low(&l.a, alpha, beta, d, dn, &mut l.res, &mut l.zhat, z, last)?;
            std::mem::swap(&mut l.d, &mut l.d_next);
            return Ok(());
        }
        let [res, d, d_next] = self.work.as_mut().expect("f64 level has its vectors");
        be.cheb_step(a, alpha, beta, d, d_next, res, z)?;
        std::mem::swap(d, d_next);
        Ok(())
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
        let k = self.degree;
        self.first(be, a, 1.0 / theta, r, z, k == 1)?; // res = r; d = D⁻¹r/θ; z = d
        for step in 1..k {
            let rho_next = 1.0 / (2.0 * sigma - rho);
            // res −= A d; d_next = ρ₁ρ₀ d + (2ρ₁/δ) D⁻¹ res; z += d_next
            self.next(
                be,
                a,
                rho_next * rho,
                2.0 * rho_next / delta,
                z,
                step + 1 == k,
            )?;
            rho = rho_next;
        }
        Ok(())
    }

    fn raise_precision(&mut self, be: &B, a: &B::Matrix) -> Result<Option<String>, BackendError> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let level = self.pending.remove(0);
        let host = match level {
            Level::F64 => None,
            _ => scaled(&*be.host_matrix(a)?, level),
        };
        self.enter(be, level, host)?;
        Ok(Some(self.precision_label()))
    }

    fn precision(&self) -> Option<PrecisionReport> {
        Some(PrecisionReport {
            mode: self.mode.name().into(),
            current: self.precision_label(),
            storage: self
                .low
                .as_ref()
                .map(|l| l.choices.clone())
                .unwrap_or_default(),
            matrix_bytes_per_row: self
                .low
                .as_ref()
                .map_or(32, |l| l.choices.iter().map(|c| c.storage.bytes()).sum()),
        })
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
            multigrid: None,
        }
    }
}

impl<B: Backend> Chebyshev<B> {
    /// `f64`, or `f32 [gx,gy,gz f16,f16,f32]` below it.
    fn precision_label(&self) -> String {
        match &self.low {
            None => "f64".into(),
            Some(l) => {
                let names: Vec<_> = l.choices.iter().map(|c| c.storage.name()).collect();
                format!("f32 [gx,gy,gz {}]", names.join(","))
            }
        }
    }
}

/// Â for `level`, or nothing at `Level::F64` (the f64 recurrence runs on A).
fn scaled(host: &QuadDiag, level: Level) -> Option<ScaledQuadDiag> {
    (level != Level::F64).then(|| ScaledQuadDiag::new(host, level))
}
