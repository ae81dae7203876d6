//! Storage precision of the Chebyshev preconditioner's matrix, chosen per
//! diagonal from the matrix itself.
//!
//! Why Jacobi scaling first: with S = D^-1/2 the scaled operator Â = S A S has
//! a unit diagonal (nothing to store) and off-diagonals ĝ = g/√(dᵢdⱼ) in
//! [0, 1] (diagonal dominance), whatever the conductances in W/K; those span
//! many decades across a stack and would not fit f16 unscaled. Chebyshev on
//! D⁻¹A equals S·q(Â)·S, so the preconditioner is z = S q(Â) (S r) with the
//! same λ interval.
//!
//! The rule, per off-diagonal array (ĝx, ĝy, ĝz):
//! - values are rounded toward zero, never up: the stored Â' = S A' S, where
//!   A' has A's diagonal and weaker couplings, so A' stays diagonally dominant
//!   like A, hence Â' is SPD and M = S q(Â') S is SPD and fixed, as CG needs,
//!   whatever the format (the perturbation, ≤ 2^-10 relative, is far inside
//!   the 10 % safety margin on λmax);
//! - f16 stores ĝ·2^k, the power of two 2^k putting the array's largest value
//!   just under 2^15, so the array uses f16's top exponents; f16 is chosen when
//!   every nonzero value then lands in f16's normal range (relative rounding
//!   ≤ 2^-10), i.e. when the array's dynamic range max/min is below
//!   2^(15+14) ≈ 5e8; otherwise a value would lose relative precision (or
//!   flush to zero) and the array is stored in f32 (range never an issue).
//!
//! The outer PCG keeps x, r, p, q and every reduction in f64, so the
//! preconditioner's precision bounds the convergence rate, not the attainable
//! accuracy; the final residual is checked in f64 like the f64 solve.

use super::QuadDiag;
use half::f16;
use rayon::prelude::*;
use serde::Serialize;

/// How the whole solve treats precision (`--precision`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PrecisionMode {
    /// Everything in f64.
    F64,
    /// Preconditioner in f32 (storage and arithmetic), fixed.
    F32,
    /// Preconditioner matrix forced to f16 storage (f32 arithmetic), fixed.
    F16,
    /// Start from the per-diagonal rule (f16 where it allows), switch up
    /// (f32, then f64) when PCG stagnates.
    Mixed,
}

impl PrecisionMode {
    pub fn name(self) -> &'static str {
        match self {
            PrecisionMode::F64 => "f64",
            PrecisionMode::F32 => "f32",
            PrecisionMode::F16 => "f16",
            PrecisionMode::Mixed => "mixed",
        }
    }

    /// Levels the preconditioner goes through, first to last.
    pub fn levels(self) -> &'static [Level] {
        match self {
            PrecisionMode::F64 => &[Level::F64],
            PrecisionMode::F32 => &[Level::F32],
            PrecisionMode::F16 => &[Level::F16],
            PrecisionMode::Mixed => &[Level::Rule, Level::F32, Level::F64],
        }
    }
}

/// One precision level of the preconditioner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Per-diagonal rule (module doc), f32 vectors.
    Rule,
    /// Every diagonal f16, f32 vectors.
    F16,
    /// Every diagonal and vector f32.
    F32,
    /// The f64 Chebyshev on D⁻¹A.
    F64,
}

/// Storage format of one array.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    F16,
    F32,
}

impl Storage {
    pub fn name(self) -> &'static str {
        match self {
            Storage::F16 => "f16",
            Storage::F32 => "f32",
        }
    }

    /// Bytes per stored value.
    pub fn bytes(self) -> usize {
        match self {
            Storage::F16 => 2,
            Storage::F32 => 4,
        }
    }
}

/// One scaled off-diagonal array in its storage format.
#[derive(Clone, Debug, PartialEq)]
pub enum LowArray {
    /// Value = bits · `inv_scale` (a power of two).
    F16 {
        v: Vec<f16>,
        inv_scale: f32,
    },
    F32(Vec<f32>),
}

impl LowArray {
    pub fn storage(&self) -> Storage {
        match self {
            LowArray::F16 { .. } => Storage::F16,
            LowArray::F32(_) => Storage::F32,
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> f32 {
        match self {
            LowArray::F16 { v, inv_scale } => v[i].to_f32() * inv_scale,
            LowArray::F32(v) => v[i],
        }
    }

    /// Bytes per row.
    pub fn bytes(&self) -> usize {
        self.storage().bytes()
    }
}

/// What the rule saw in one array (for summary.json and `cuth bench`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ArrayChoice {
    pub name: &'static str,
    pub storage: Storage,
    /// Largest and smallest nonzero scaled value.
    pub max: f64,
    pub min_nonzero: f64,
    /// Largest relative rounding error of a nonzero value in the chosen format.
    pub max_rel_error: f64,
}

/// Â = S A S in low precision: the unit diagonal is implicit.
#[derive(Clone, Debug)]
pub struct ScaledQuadDiag {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// S = D^-1/2, f32, used on the way in and out (the same values both
    /// times, so M stays symmetric).
    pub s: Vec<f32>,
    /// ĝx, ĝy, ĝz.
    pub g: [LowArray; 3],
    pub choices: Vec<ArrayChoice>,
}

impl ScaledQuadDiag {
    pub fn len(&self) -> usize {
        self.s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.s.is_empty()
    }

    /// Builds Â for `level` (not `Level::F64`, which needs no scaled copy).
    /// At 2048²×18 (75 M rows) this runs at set-up and must not cost more than
    /// a few PCG iterations, so each array takes two parallel streaming
    /// passes (range, then convert) that recompute ĝ from A instead of
    /// materialising it in f64.
    pub fn new(a: &QuadDiag, level: Level) -> ScaledQuadDiag {
        let n = a.len();
        let (inv_sqrt, s): (Vec<f64>, Vec<f32>) =
            a.d.par_iter()
                .map(|d| {
                    let v = 1.0 / d.sqrt();
                    (v, v as f32)
                })
                .unzip();
        let strides = [1, a.nx, a.nx * a.ny];
        let names = ["gx", "gy", "gz"];
        let mut choices = Vec::new();
        let g = [&a.gx, &a.gy, &a.gz].map(|src| {
            let k = choices.len();
            let st = strides[k];
            let inv = &inv_sqrt;
            let scaled = |i: usize| {
                if i + st < n && src[i] != 0.0 {
                    src[i] * inv[i] * inv[i + st]
                } else {
                    0.0
                }
            };
            let (max, min) = range_of(n, scaled);
            let want = match level {
                Level::Rule => rule(max, min),
                Level::F16 => Storage::F16,
                Level::F32 | Level::F64 => Storage::F32,
            };
            let (arr, max_rel_error) = convert(n, scaled, want, max);
            choices.push(ArrayChoice {
                name: names[k],
                storage: want,
                max,
                min_nonzero: if min.is_finite() { min } else { 0.0 },
                max_rel_error,
            });
            arr
        });
        ScaledQuadDiag {
            nx: a.nx,
            ny: a.ny,
            nz: a.nz,
            s,
            g,
            choices,
        }
    }

    /// `(Â x)[i]` in f32, the reference of the low-precision kernels.
    #[inline]
    pub fn row_apply(&self, x: &[f32], i: usize) -> f32 {
        let n = x.len();
        let [gx, gy, gz] = &self.g;
        let (sy, sz) = (self.nx, self.nx * self.ny);
        let mut y = x[i];
        if i + 1 < n {
            y -= gx.get(i) * x[i + 1];
        }
        if i >= 1 {
            y -= gx.get(i - 1) * x[i - 1];
        }
        if i + sy < n {
            y -= gy.get(i) * x[i + sy];
        }
        if i >= sy {
            y -= gy.get(i - sy) * x[i - sy];
        }
        if i + sz < n {
            y -= gz.get(i) * x[i + sz];
        }
        if i >= sz {
            y -= gz.get(i - sz) * x[i - sz];
        }
        y
    }

    /// Bytes per row of the three stored arrays.
    pub fn matrix_bytes(&self) -> usize {
        self.g.iter().map(LowArray::bytes).sum()
    }

    /// `f16,f16,f32` for ĝx, ĝy, ĝz.
    pub fn storage_label(&self) -> String {
        self.g
            .iter()
            .map(|a| a.storage().name())
            .collect::<Vec<_>>()
            .join(",")
    }
}

mod convert;
#[cfg(test)]
mod tests;

pub use convert::{choose_storage, store};
use convert::{convert, range_of, rule};
