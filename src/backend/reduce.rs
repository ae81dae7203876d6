//! Host reductions whose rounding is fixed by a chunk size rather than by the
//! thread count, so that a sum taken on the host and the same sum taken on a
//! device in the same chunks give the same bits.

use rayon::prelude::*;

/// Cells per chunk of a plane (fixed: the sums' rounding depends on it).
pub const CHUNK: usize = 1 << 15;

/// Σ v in fixed chunks of [`CHUNK`], the chunks in parallel and added in
/// order: the same bits on every run and thread count (a plane of power or
/// of film conductances; a sequential loop over 67 M values took 60 ms).
pub fn chunked_sum(v: &[f64], f: impl Fn(f64) -> f64 + Sync) -> f64 {
    let parts: Vec<f64> = v
        .par_chunks(CHUNK)
        .map(|c| c.iter().map(|&x| f(x)).sum::<f64>())
        .collect();
    parts.iter().sum()
}
