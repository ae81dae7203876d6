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
use half::{f16, slice::HalfFloatSliceExt};
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
    let (max, min) = range_of(values.len(), |i| values[i]);
    rule(max, min)
}

/// The rule from an array's largest and smallest nonzero |value|.
fn rule(max: f64, min: f64) -> Storage {
    if max == 0.0 || min * f16_scale(max) >= F16_MIN_NORMAL {
        Storage::F16
    } else {
        Storage::F32
    }
}

/// Rows per parallel task: large enough to amortise rayon's scheduling, small
/// enough to balance and to keep a task's working set in cache.
const CHUNK: usize = 1 << 14;
/// Rows converted to f16 in one bulk (SIMD) call, through stack buffers.
const BLOCK: usize = 1024;

/// Largest and smallest nonzero |value(i)| over 0..n (∞ for the minimum of
/// none). Max and min are exact, so the split cannot change the result.
fn range_of(n: usize, value: impl Fn(usize) -> f64 + Sync) -> (f64, f64) {
    (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|k| {
            let (mut mx, mut mn) = (0.0f64, f64::INFINITY);
            for i in k * CHUNK..n.min((k + 1) * CHUNK) {
                let v = value(i);
                if v != 0.0 {
                    mx = mx.max(v.abs());
                    mn = mn.min(v.abs());
                }
            }
            (mx, mn)
        })
        .reduce(
            || (0.0f64, f64::INFINITY),
            |a, b| (a.0.max(b.0), a.1.min(b.1)),
        )
}

/// Rounds toward zero into `storage` (module doc: keeps Â SPD).
pub fn store(values: &[f64], storage: Storage) -> LowArray {
    let max = range_of(values.len(), |i| values[i]).0;
    convert(values.len(), |i| values[i], storage, max).0
}

/// `value(0..n)` rounded toward zero into `storage` (f16 scaled by the power
/// of two that `max` calls for), and the largest relative rounding error of a
/// nonzero value, read back as `LowArray::get` reads it.
fn convert(
    n: usize,
    value: impl Fn(usize) -> f64 + Sync,
    storage: Storage,
    max: f64,
) -> (LowArray, f64) {
    let rel = |v: f64, got: f32| {
        if v != 0.0 {
            (v - got as f64).abs() / v.abs()
        } else {
            0.0
        }
    };
    match storage {
        Storage::F32 => {
            let mut out = vec![0f32; n];
            let err = out
                .par_chunks_mut(CHUNK)
                .enumerate()
                .map(|(k, o)| {
                    let mut e = 0.0f64;
                    for (j, o) in o.iter_mut().enumerate() {
                        let v = value(k * CHUNK + j);
                        *o = f32_toward_zero(v);
                        e = e.max(rel(v, *o));
                    }
                    e
                })
                .reduce(|| 0.0, f64::max);
            (LowArray::F32(out), err)
        }
        Storage::F16 => {
            let scale = f16_scale(max);
            let inv_scale = (1.0 / scale) as f32;
            let mut out = vec![f16::ZERO; n];
            let err = out
                .par_chunks_mut(CHUNK)
                .enumerate()
                .map(|(k, o)| {
                    let mut e = 0.0f64;
                    let (mut v, mut x, mut back) = ([0f64; BLOCK], [0f32; BLOCK], [0f32; BLOCK]);
                    for (b, o) in o.chunks_mut(BLOCK).enumerate() {
                        let (m, base) = (o.len(), k * CHUNK + b * BLOCK);
                        for j in 0..m {
                            v[j] = value(base + j);
                            x[j] = f32_toward_zero(v[j] * scale);
                        }
                        f16_toward_zero_bulk(&x[..m], o, &mut back[..m]);
                        for j in 0..m {
                            e = e.max(rel(v[j], back[j] * inv_scale));
                        }
                    }
                    e
                })
                .reduce(|| 0.0, f64::max);
            (LowArray::F16 { v: out, inv_scale }, err)
        }
    }
}

/// `dst` = `src` rounded toward zero to f16, and `back` = `dst` in f32.
/// Truncating to f32 first then to f16 equals truncating straight to f16
/// (every f16 is an f32), so this matches `f16_toward_zero` bit for bit
/// while letting `half` convert whole slices with SIMD: round to nearest,
/// then step the values that went up back by one ulp.
fn f16_toward_zero_bulk(src: &[f32], dst: &mut [f16], back: &mut [f32]) {
    dst.convert_from_f32_slice(src);
    dst.convert_to_f32_slice(back);
    let mut stepped = false;
    for ((d, b), x) in dst.iter_mut().zip(back.iter()).zip(src) {
        if b.abs() > x.abs() {
            *d = f16::from_bits(d.to_bits() - 1);
            stepped = true;
        }
    }
    if stepped {
        dst.convert_to_f32_slice(back);
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

/// The scalar reference of `f16_toward_zero_bulk` (tests).
#[cfg(test)]
fn f16_toward_zero(v: f64) -> f16 {
    let r = f16::from_f64(v);
    if r.to_f64().abs() > v.abs() {
        f16::from_bits(r.to_bits() - 1)
    } else {
        r
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

    /// The bulk SIMD truncation equals the scalar one bit for bit, on exact
    /// f16 values, their neighbours and midpoints, subnormals and signs.
    #[test]
    fn bulk_f16_truncation_matches_the_scalar_reference() {
        let mut values = vec![0.0, -0.0, 1e-30, 3e-8, -3e-8, 65504.0, 32767.9];
        for bits in (0u16..0x7c00).step_by(7) {
            let f = f16::from_bits(bits).to_f64();
            let up = f16::from_bits(bits + 1).to_f64();
            for v in [f, (f + up) / 2.0, f + (up - f) * 1e-9, up - (up - f) * 1e-9] {
                values.extend([v, -v]);
            }
        }
        let x: Vec<f32> = values.iter().map(|&v| f32_toward_zero(v)).collect();
        let mut got = vec![f16::ZERO; x.len()];
        let mut back = vec![0f32; x.len()];
        f16_toward_zero_bulk(&x, &mut got, &mut back);
        for (i, &v) in values.iter().enumerate() {
            let want = f16_toward_zero(v);
            assert_eq!(got[i].to_bits(), want.to_bits(), "{v:e}");
            assert_eq!(back[i].to_bits(), want.to_f32().to_bits(), "{v:e}");
        }
    }

    /// `ScaledQuadDiag::new` against a plain scalar construction from the
    /// module doc: ĝ = g/√(dᵢdⱼ) materialised in f64, the rule on its range,
    /// each value rounded toward zero alone. Rows span several parallel
    /// chunks, and the arrays' ranges make the rule pick both formats.
    #[test]
    fn scaled_matrix_matches_a_scalar_reference_bit_for_bit() {
        let (nx, ny, nz) = (61, 37, 17);
        let mut a = QuadDiag::zeros(nx, ny, nz);
        let n = a.len();
        assert!(n > 2 * CHUNK);
        for i in 0..n {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            let w = ((i as f64) * 0.618).fract();
            a.gx[i] = if x + 1 < nx { 0.5 + w } else { 0.0 };
            a.gy[i] = if y + 1 < ny {
                10f64.powf(-12.0 * w)
            } else {
                0.0
            };
            a.gz[i] = if z + 1 < nz && i % 5 != 0 {
                1e3 * (1.0 + w)
            } else {
                0.0
            };
        }
        for i in 0..n {
            let mut d = 1e-3 + a.gx[i] + a.gy[i] + a.gz[i];
            d += if i >= 1 { a.gx[i - 1] } else { 0.0 };
            d += if i >= nx { a.gy[i - nx] } else { 0.0 };
            d += if i >= nx * ny { a.gz[i - nx * ny] } else { 0.0 };
            a.d[i] = d;
        }
        let inv: Vec<f64> = a.d.iter().map(|d| 1.0 / d.sqrt()).collect();
        for level in [Level::Rule, Level::F16, Level::F32] {
            let s = ScaledQuadDiag::new(&a, level);
            assert!(s
                .s
                .iter()
                .zip(&inv)
                .all(|(s, v)| s.to_bits() == (*v as f32).to_bits()));
            for (k, (src, st)) in [(&a.gx, 1), (&a.gy, nx), (&a.gz, nx * ny)]
                .into_iter()
                .enumerate()
            {
                let scaled: Vec<f64> = (0..n)
                    .map(|i| {
                        if i + st < n && src[i] != 0.0 {
                            src[i] * inv[i] * inv[i + st]
                        } else {
                            0.0
                        }
                    })
                    .collect();
                let nonzero = scaled.iter().filter(|v| **v != 0.0);
                let max = nonzero.clone().fold(0.0f64, |m, v| m.max(v.abs()));
                let min = nonzero.fold(f64::INFINITY, |m, v| m.min(v.abs()));
                let rule = if min * f16_scale(max) >= F16_MIN_NORMAL {
                    Storage::F16
                } else {
                    Storage::F32
                };
                let want = match level {
                    Level::Rule => rule,
                    Level::F16 => Storage::F16,
                    _ => Storage::F32,
                };
                if level == Level::Rule {
                    // gy spans 12 decades: the rule must fall back to f32.
                    let expect = if k == 1 { Storage::F32 } else { Storage::F16 };
                    assert_eq!(want, expect, "array {k}");
                }
                let c = &s.choices[k];
                assert_eq!(
                    (c.storage, c.max, c.min_nonzero),
                    (want, max, min),
                    "{level:?} {k}"
                );
                let mut err = 0.0f64;
                for (i, &v) in scaled.iter().enumerate() {
                    let got = match (&s.g[k], want) {
                        (LowArray::F16 { v: h, inv_scale }, Storage::F16) => {
                            let scale = f16_scale(max);
                            assert_eq!(*inv_scale, (1.0 / scale) as f32);
                            assert_eq!(h[i].to_bits(), f16_toward_zero(v * scale).to_bits());
                            h[i].to_f32() * inv_scale
                        }
                        (LowArray::F32(g), Storage::F32) => {
                            assert_eq!(g[i].to_bits(), f32_toward_zero(v).to_bits());
                            g[i]
                        }
                        _ => panic!("{level:?} array {k}: wrong format"),
                    };
                    if v != 0.0 {
                        err = err.max((v - got as f64).abs() / v.abs());
                    }
                }
                assert_eq!(c.max_rel_error, err, "{level:?} {k}");
            }
        }
    }
}
