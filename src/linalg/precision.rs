//! Storage precision of the Chebyshev preconditioner's matrix, chosen per
//! diagonal from the matrix itself (issue #6).
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
        match self {
            LowArray::F16 { .. } => 2,
            LowArray::F32(_) => 4,
        }
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
    /// Every pass is a parallel map: at 2048²×10 (42 M rows) this runs at
    /// setup and must not cost more than a few PCG iterations.
    pub fn new(a: &QuadDiag, level: Level) -> ScaledQuadDiag {
        let n = a.len();
        let inv_sqrt: Vec<f64> = a.d.par_iter().map(|d| 1.0 / d.sqrt()).collect();
        let s = inv_sqrt.par_iter().map(|&v| v as f32).collect();
        let strides = [1, a.nx, a.nx * a.ny];
        let names = ["gx", "gy", "gz"];
        let mut choices = Vec::new();
        let g = [&a.gx, &a.gy, &a.gz].map(|src| {
            let k = choices.len();
            let st = strides[k];
            let scaled: Vec<f64> = (0..n)
                .into_par_iter()
                .map(|i| {
                    if i + st < n && src[i] != 0.0 {
                        src[i] * inv_sqrt[i] * inv_sqrt[i + st]
                    } else {
                        0.0
                    }
                })
                .collect();
            let want = match level {
                Level::Rule => choose_storage(&scaled),
                Level::F16 => Storage::F16,
                Level::F32 | Level::F64 => Storage::F32,
            };
            let arr = store(&scaled, want);
            choices.push(describe(names[k], &scaled, &arr));
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
            .map(|a| match a.storage() {
                Storage::F16 => "f16",
                Storage::F32 => "f32",
            })
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Smallest positive normal f16.
const F16_MIN_NORMAL: f64 = 6.103_515_625e-5; // 2^-14
/// The scaled maximum lands in [2^14, 2^15).
const F16_TOP: f64 = 32768.0;

/// The power of two that puts `max` in [2^14, 2^15).
fn f16_scale(max: f64) -> f64 {
    if max > 0.0 {
        2f64.powi((F16_TOP / max).log2().floor() as i32)
    } else {
        1.0
    }
}

/// The module doc's rule for one scaled array.
pub fn choose_storage(values: &[f64]) -> Storage {
    let (max, min) = range(values);
    if max == 0.0 || min * f16_scale(max) >= F16_MIN_NORMAL {
        Storage::F16
    } else {
        Storage::F32
    }
}

/// Largest and smallest nonzero |value| (∞ for the minimum of none).
fn range(values: &[f64]) -> (f64, f64) {
    values
        .par_iter()
        .filter(|v| **v != 0.0)
        .fold(
            || (0.0f64, f64::INFINITY),
            |(mx, mn), &v| (mx.max(v.abs()), mn.min(v.abs())),
        )
        .reduce(
            || (0.0f64, f64::INFINITY),
            |a, b| (a.0.max(b.0), a.1.min(b.1)),
        )
}

/// Rounds toward zero into `storage` (module doc: keeps Â SPD).
pub fn store(values: &[f64], storage: Storage) -> LowArray {
    match storage {
        Storage::F32 => LowArray::F32(values.par_iter().map(|&v| f32_toward_zero(v)).collect()),
        Storage::F16 => {
            let scale = f16_scale(range(values).0);
            LowArray::F16 {
                v: values.iter().map(|&v| f16_toward_zero(v * scale)).collect(),
                inv_scale: (1.0 / scale) as f32,
            }
        }
    }
}

fn f32_toward_zero(v: f64) -> f32 {
    let r = v as f32;
    if (r as f64).abs() > v.abs() {
        f32::from_bits(r.to_bits() - 1)
    } else {
        r
    }
}

fn f16_toward_zero(v: f64) -> f16 {
    let r = f16::from_f64(v);
    if r.to_f64().abs() > v.abs() {
        f16::from_bits(r.to_bits() - 1)
    } else {
        r
    }
}

fn describe(name: &'static str, scaled: &[f64], arr: &LowArray) -> ArrayChoice {
    let (max, min) = range(scaled);
    let max_rel_error = scaled
        .par_iter()
        .enumerate()
        .filter(|(_, v)| **v != 0.0)
        .map(|(i, v)| (v - arr.get(i) as f64).abs() / v.abs())
        .reduce(|| 0.0, f64::max);
    ArrayChoice {
        name,
        storage: arr.storage(),
        max,
        min_nonzero: if min.is_finite() { min } else { 0.0 },
        max_rel_error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_range_gets_f16_wide_range_f32() {
        let narrow: Vec<f64> = (0..100).map(|i| 1e-3 + i as f64 * 1e-4).collect();
        assert_eq!(choose_storage(&narrow), Storage::F16);
        // 1e-9 .. 0.5 spans 5e8 < 2^29: still normal after the scale.
        assert_eq!(choose_storage(&[0.5, 1e-9, 0.0]), Storage::F16);
        // 1e-10 .. 0.5 spans 5e9 > 2^29: the small value would be subnormal.
        assert_eq!(choose_storage(&[0.5, 1e-10, 0.0]), Storage::F32);
        assert_eq!(choose_storage(&[0.0, 0.0]), Storage::F16);
    }

    #[test]
    fn rounding_is_toward_zero_and_within_format_precision() {
        let values: Vec<f64> = (1..2000).map(|i| (i as f64 * 0.731).sin().abs()).collect();
        for storage in [Storage::F16, Storage::F32] {
            let arr = store(&values, storage);
            let tol = match storage {
                Storage::F16 => 2f64.powi(-10),
                Storage::F32 => 2f64.powi(-23),
            };
            for (i, &v) in values.iter().enumerate() {
                let got = arr.get(i) as f64;
                assert!(got <= v, "{storage:?} rounded {v} up to {got}");
                assert!((v - got) / v <= tol, "{storage:?}: {v} -> {got}");
            }
        }
    }

    /// The scaled values equal g/√(dᵢdⱼ) to the format's precision, and the
    /// unscaled stored couplings keep A's diagonal dominance (so M is SPD).
    #[test]
    fn scaled_matrix_is_jacobi_scaled_and_dominant() {
        let (nx, ny, nz) = (5, 4, 3);
        let mut a = QuadDiag::zeros(nx, ny, nz);
        let n = a.len();
        for i in 0..n {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            a.gx[i] = if x + 1 < nx {
                1e-3 * (1 + i % 3) as f64
            } else {
                0.0
            };
            a.gy[i] = if y + 1 < ny { 2e-3 } else { 0.0 };
            a.gz[i] = if z + 1 < nz { 50.0 + i as f64 } else { 0.0 };
        }
        for i in 0..n {
            let mut d = a.gx[i] + a.gy[i] + a.gz[i];
            d += if i >= 1 { a.gx[i - 1] } else { 0.0 };
            d += if i >= nx { a.gy[i - nx] } else { 0.0 };
            d += if i >= nx * ny { a.gz[i - nx * ny] } else { 0.0 };
            a.d[i] = d;
        }
        for level in [Level::Rule, Level::F16, Level::F32] {
            let s = ScaledQuadDiag::new(&a, level);
            // Back to conductances: g'ᵢⱼ = ĝ'ᵢⱼ √(dᵢdⱼ).
            let unscale =
                |k: usize, i: usize, j: usize| s.g[k].get(i) as f64 * (a.d[i] * a.d[j]).sqrt();
            for i in 0..n {
                let want = a.gz[i] / (a.d[i] * a.d.get(i + nx * ny).copied().unwrap_or(1.0)).sqrt();
                let got = s.g[2].get(i) as f64;
                assert!(got <= want + 1e-12 && want - got <= 1e-3 * want, "row {i}");
                // A' keeps A's diagonal dominance: dᵢ ≥ Σⱼ g'ᵢⱼ.
                let mut off = 0.0;
                for (k, st) in [(0, 1), (1, nx), (2, nx * ny)] {
                    if i + st < n {
                        off += unscale(k, i, i + st);
                    }
                    if i >= st {
                        off += unscale(k, i - st, i);
                    }
                }
                assert!(off <= a.d[i] * (1.0 + 1e-12), "row {i} at {level:?}");
            }
        }
    }
}
