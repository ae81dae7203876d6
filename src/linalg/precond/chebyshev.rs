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
use crate::backend::{BackendError, ChebWork, ChebyshevBackend, ChebyshevOps};
use crate::linalg::eigen::lanczos_lambda_max;
use crate::linalg::precision::{ArrayChoice, Level, PrecisionMode, ScaledQuadDiag};
use crate::linalg::{QuadDiag, SolveError};
use std::collections::BTreeMap;

pub struct Chebyshev<B: ChebyshevBackend> {
    degree: usize,
    lambda_min: f64,
    lambda_max: f64,
    /// Largest Ritz value before the safety factor (for the report).
    lambda_ritz: f64,
    gershgorin: f64,
    mode: PrecisionMode,
    level: Level,
    /// The f64 recurrence's vectors, while at `Level::F64`.
    work: Option<ChebWork<<B as ChebyshevOps<f64>>::ChebVector>>,
    /// The low-precision matrix and vectors, while below `Level::F64`.
    low: Option<Low<B>>,
    /// Levels to switch up to, in order; each Â is built on the switch.
    pending: Vec<Level>,
    n: usize,
}

/// Â on the device, how it is stored, and the f32 vectors of the recurrence.
struct Low<B: ChebyshevBackend> {
    a: <B as ChebyshevOps<f32>>::ChebMatrix,
    /// What the rule chose per array (the host Â is dropped once uploaded).
    choices: Vec<ArrayChoice>,
    work: ChebWork<<B as ChebyshevOps<f32>>::ChebVector>,
}

impl<B: ChebyshevBackend> Chebyshev<B> {
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
    /// The one place where the precision level picks the element type.
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
                ChebyshevOps::<f64>::prepare_chebyshev(be)?;
                if self.work.is_none() {
                    self.work = Some(ChebyshevOps::<f64>::cheb_work(be, self.n)?);
                }
            }
            Some(h) => {
                ChebyshevOps::<f32>::prepare_chebyshev(be)?;
                let a = ChebyshevOps::<f32>::cheb_matrix(be, &h)?;
                let choices = h.choices;
                let work = match self.low.take() {
                    Some(old) => old.work,
                    None => ChebyshevOps::<f32>::cheb_work(be, self.n)?,
                };
                self.low = Some(Low { a, choices, work });
            }
        }
        Ok(())
    }

    /// The polynomial: z = q(D⁻¹A) D⁻¹ r with the recurrence in element
    /// type `T` (f64 on A, f32 on Â), written once for both.
    fn run<T>(
        &self,
        be: &B,
        a: &B::Matrix,
        m: &<B as ChebyshevOps<T>>::ChebMatrix,
        w: &mut ChebWork<<B as ChebyshevOps<T>>::ChebVector>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError>
    where
        B: ChebyshevOps<T>,
    {
        let theta = 0.5 * (self.lambda_max + self.lambda_min);
        let delta = 0.5 * (self.lambda_max - self.lambda_min);
        let sigma = theta / delta;
        let mut rho = 1.0 / sigma;
        let k = self.degree;
        ChebyshevOps::<T>::cheb_init(be, a, m, 1.0 / theta, r, w, z, k == 1)?; // res = r; d = D⁻¹r/θ; z = d
        for step in 1..k {
            let rho_next = 1.0 / (2.0 * sigma - rho);
            // res −= A d; d_next = ρ₁ρ₀ d + (2ρ₁/δ) D⁻¹ res; z += d_next
            let (alpha, beta) = (rho_next * rho, 2.0 * rho_next / delta);
            ChebyshevOps::<T>::cheb_step(be, a, m, alpha, beta, w, z, step + 1 == k)?;
            std::mem::swap(&mut w.d, &mut w.d_next);
            rho = rho_next;
        }
        Ok(())
    }
}

impl<B: ChebyshevBackend> Preconditioner<B> for Chebyshev<B> {
    fn apply(
        &mut self,
        be: &B,
        a: &B::Matrix,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        if let Some(mut l) = self.low.take() {
            let out = self.run::<f32>(be, a, &l.a, &mut l.work, r, z);
            self.low = Some(l);
            return out;
        }
        let mut w = self.work.take().expect("f64 level has its vectors");
        let out = self.run::<f64>(be, a, &(), &mut w, r, z);
        self.work = Some(w);
        out
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
        }
    }
}

impl<B: ChebyshevBackend> Chebyshev<B> {
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
