//! The rule's choices and the rounding's direction and bounds.

use super::convert::*;
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
