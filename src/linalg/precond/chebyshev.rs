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
//! measured GPU runs), so the next level is built when it is needed, from
//! the f64 matrix the backend still holds (`Backend::host_matrix`: borrowed
//! on the CPU, downloaded from a GPU), and no host copy of A is kept.

use super::{PrecisionReport, PrecondInfo, PrecondOptions, PrecondReport, Preconditioner};
use crate::backend::{BackendError, ChebWork, ChebyshevOps, ScaledChebyshevOps};
use crate::linalg::eigen::lanczos_lambda_max;
use crate::linalg::operator::LinearOperator;
use crate::linalg::precision::{ArrayChoice, Level, PrecisionMode, ScaledQuadDiag};
use crate::linalg::{QuadDiag, SolveError};
use std::collections::BTreeMap;

/// What a backend needs for every level of this preconditioner.
pub trait ChebyshevLevels: ChebyshevOps + ScaledChebyshevOps<f32> {}

impl<B: ChebyshevOps + ScaledChebyshevOps<f32>> ChebyshevLevels for B {}

pub struct Chebyshev<B: ChebyshevLevels> {
    degree: usize,
    lambda_min: f64,
    lambda_max: f64,
    /// Largest Ritz value before the safety factor (for the report).
    lambda_ritz: f64,
    /// Gershgorin bound on λmax(D⁻¹A), where the operator is a Quad-Diag matrix.
    gershgorin: Option<f64>,
    mode: PrecisionMode,
    level: Level,
    /// The f64 recurrence's vectors, while at `Level::F64`.
    work: Option<ChebWork<B::Vector>>,
    /// The low-precision matrix and vectors, while below `Level::F64`.
    low: Option<Low<B>>,
    /// Levels to switch up to, in order; each Â is built on the switch.
    pending: Vec<Level>,
    n: usize,
}

/// Â on the device, how it is stored, and the f32 vectors of the recurrence.
struct Low<B: ChebyshevLevels> {
    a: <B as ScaledChebyshevOps<f32>>::ScaledMatrix,
    /// What the rule chose per array (the host Â is dropped once uploaded).
    choices: Vec<ArrayChoice>,
    work: ChebWork<<B as ScaledChebyshevOps<f32>>::ScaledVector>,
}

impl<B: ChebyshevLevels> Chebyshev<B> {
    /// Estimates λmax of D⁻¹A on `a` and enters the mode's first level.
    /// `host`, `a` in Quad-Diag form, gives the Gershgorin cap and the
    /// scaled levels; without it (a matrix-free operator) only the f64
    /// level exists, whatever `opts.precision`.
    pub fn new<A: LinearOperator<B> + ?Sized>(
        be: &B,
        a: &mut A,
        host: Option<&QuadDiag>,
        opts: &PrecondOptions,
    ) -> Result<Self, SolveError> {
        let n = a.len();
        let gershgorin = host.map(QuadDiag::gershgorin_jacobi);
        // λ(D⁻¹A) = λ(Â): one interval serves every precision level.
        let lambda_ritz = lanczos_lambda_max(be, a, opts.lanczos_steps)?;
        let lambda_max =
            (lambda_ritz * opts.lambda_safety).min(gershgorin.unwrap_or(f64::INFINITY));
        let mode = if host.is_some() {
            opts.precision
        } else {
            PrecisionMode::F64
        };
        let (&level, pending) = mode.levels().split_first().expect("a mode has levels");
        let first = host.and_then(|h| scaled(h, level));
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

    /// The f64 polynomial on an interval from a known upper bound of
    /// λmax(D⁻¹A) (no Lanczos: for an operator whose bound is known a
    /// priori, e.g. an assembly of element matrices, whose D⁻¹A is bounded
    /// by its elements' λmax(Dₑ⁻¹Kₑ)). `n` is the operator's length.
    pub fn with_bound(
        be: &B,
        n: usize,
        lambda_max: f64,
        opts: &PrecondOptions,
    ) -> Result<Self, SolveError> {
        let mut m = Chebyshev {
            degree: opts.chebyshev_degree.max(1),
            lambda_min: lambda_max / opts.chebyshev_ratio,
            lambda_max,
            lambda_ritz: lambda_max,
            gershgorin: None,
            mode: PrecisionMode::F64,
            level: Level::F64,
            work: None,
            low: None,
            pending: Vec::new(),
            n,
        };
        m.enter(be, Level::F64, None)?;
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
                be.prepare_chebyshev()?;
                if self.work.is_none() {
                    self.work = Some(be.cheb_work(self.n)?);
                }
            }
            Some(h) => {
                be.prepare_scaled()?;
                let a = be.upload_scaled(&h)?;
                let choices = h.choices;
                let work = match self.low.take() {
                    Some(old) => old.work,
                    None => be.scaled_work(self.n)?,
                };
                self.low = Some(Low { a, choices, work });
            }
        }
        Ok(())
    }

    /// θ, δ, σ of the recurrence (module doc).
    fn interval(&self) -> (f64, f64, f64) {
        let theta = 0.5 * (self.lambda_max + self.lambda_min);
        let delta = 0.5 * (self.lambda_max - self.lambda_min);
        (theta, delta, theta / delta)
    }

    /// The f64 polynomial on the operator: z = q(D⁻¹A) D⁻¹ r.
    fn run_f64<A: LinearOperator<B> + ?Sized>(
        &self,
        be: &B,
        a: &mut A,
        w: &mut ChebWork<B::Vector>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        let (theta, delta, sigma) = self.interval();
        let mut rho = 1.0 / sigma;
        be.cheb_init(a.diagonal(), 1.0 / theta, r, w, z)?; // res = r; d = D⁻¹r/θ; z = d
        for _ in 1..self.degree {
            let rho_next = 1.0 / (2.0 * sigma - rho);
            // res −= A d; d_next = ρ₁ρ₀ d + (2ρ₁/δ) D⁻¹ res; z += d_next
            a.cheb_step(be, rho_next * rho, 2.0 * rho_next / delta, w, z)?;
            std::mem::swap(&mut w.d, &mut w.d_next);
            rho = rho_next;
        }
        Ok(())
    }

    /// The same polynomial below f64, on Â: z = S q(Â) S r.
    fn run_scaled(
        &self,
        be: &B,
        l: &mut Low<B>,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        let (theta, delta, sigma) = self.interval();
        let mut rho = 1.0 / sigma;
        let k = self.degree;
        be.scaled_init(&l.a, 1.0 / theta, r, &mut l.work, z, k == 1)?; // r̂ = S r; res = r̂; d = r̂/θ; ẑ = d
        for step in 1..k {
            let rho_next = 1.0 / (2.0 * sigma - rho);
            // res −= Â d; d_next = ρ₁ρ₀ d + (2ρ₁/δ) res; ẑ += d_next
            let (alpha, beta) = (rho_next * rho, 2.0 * rho_next / delta);
            be.scaled_step(&l.a, alpha, beta, &mut l.work, z, step + 1 == k)?;
            std::mem::swap(&mut l.work.d, &mut l.work.d_next);
            rho = rho_next;
        }
        Ok(())
    }
}

impl<B: ChebyshevLevels, A: LinearOperator<B> + ?Sized> Preconditioner<B, A> for Chebyshev<B> {
    fn apply(
        &mut self,
        be: &B,
        a: &mut A,
        r: &B::Vector,
        z: &mut B::Vector,
    ) -> Result<(), BackendError> {
        if let Some(mut l) = self.low.take() {
            let out = self.run_scaled(be, &mut l, r, z);
            self.low = Some(l);
            return out;
        }
        let mut w = self.work.take().expect("f64 level has its vectors");
        let out = self.run_f64(be, a, &mut w, r, z);
        self.work = Some(w);
        out
    }

    fn raise_precision(&mut self, be: &B, a: &mut A) -> Result<Option<String>, BackendError> {
        if self.pending.is_empty() {
            return Ok(None);
        }
        let level = self.pending.remove(0);
        let host = match (level, a.host_quad_diag(be)?) {
            (Level::F64, _) | (_, None) => None,
            (_, Some(h)) => scaled(&h, level),
        };
        self.enter(be, level, host)?;
        Ok(Some(self.precision_label()))
    }
}

impl<B: ChebyshevLevels> PrecondInfo for Chebyshev<B> {
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
        let mut params = BTreeMap::from([
            ("degree".to_string(), self.degree as f64),
            ("lambda_min".to_string(), self.lambda_min),
            ("lambda_max".to_string(), self.lambda_max),
            ("lambda_ritz".to_string(), self.lambda_ritz),
        ]);
        if let Some(g) = self.gershgorin {
            params.insert("lambda_gershgorin".to_string(), g);
        }
        PrecondReport {
            name: "chebyshev".into(),
            params,
            multigrid: None,
        }
    }
}

impl<B: ChebyshevLevels> Chebyshev<B> {
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
