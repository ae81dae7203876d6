//! The per-array range scan and the rounding toward zero into f16 / f32
//! that the module's rule relies on (parallel, chunked, SIMD bulk for f16).

use super::{LowArray, Storage};
use half::{f16, slice::HalfFloatSliceExt};
use rayon::prelude::*;

/// Smallest positive normal f16.
pub(super) const F16_MIN_NORMAL: f64 = 6.103_515_625e-5; // 2^-14
/// The scaled maximum lands in [2^14, 2^15).
pub(super) const F16_TOP: f64 = 32768.0;

/// The power of two that puts `max` in [2^14, 2^15).
pub(super) fn f16_scale(max: f64) -> f64 {
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
pub(super) fn rule(max: f64, min: f64) -> Storage {
    if max == 0.0 || min * f16_scale(max) >= F16_MIN_NORMAL {
        Storage::F16
    } else {
        Storage::F32
    }
}

/// Rows per parallel task: large enough to amortise rayon's scheduling, small
/// enough to balance and to keep a task's working set in cache.
pub(super) const CHUNK: usize = 1 << 14;
/// Rows converted to f16 in one bulk (SIMD) call, through stack buffers.
pub(super) const BLOCK: usize = 1024;

/// Largest and smallest nonzero |value(i)| over 0..n (∞ for the minimum of
/// none). Max and min are exact, so the split cannot change the result.
pub(super) fn range_of(n: usize, value: impl Fn(usize) -> f64 + Sync) -> (f64, f64) {
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
pub(super) fn convert(
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
pub(super) fn f16_toward_zero_bulk(src: &[f32], dst: &mut [f16], back: &mut [f32]) {
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

pub(super) fn f32_toward_zero(v: f64) -> f32 {
    let r = v as f32;
    if (r as f64).abs() > v.abs() {
        f32::from_bits(r.to_bits() - 1)
    } else {
        r
    }
}

/// The scalar reference of `f16_toward_zero_bulk` (tests).
#[cfg(test)]
pub(super) fn f16_toward_zero(v: f64) -> f16 {
    let r = f16::from_f64(v);
    if r.to_f64().abs() > v.abs() {
        f16::from_bits(r.to_bits() - 1)
    } else {
        r
    }
}
