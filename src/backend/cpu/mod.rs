//! The CPU executor: plain f64 loops parallelized with rayon. It is the
//! reference every other backend is tested against. This file holds the core
//! ([`Backend`]); `kernels` the Quad-Diag and f64 Chebyshev operations,
//! `mixed` the f32 Chebyshev on Â, `topopt::cpu` the elasticity operator. Reductions sum fixed-size
//! chunks and then the chunk sums in order, so results do not depend on the
//! thread count or on scheduling.

mod advection;
mod batch;
mod kernels;
mod mg;
mod mg_cycle;
mod mg_low;
mod mixed;
mod pool;

pub use pool::on_this_thread;

use super::{Backend, BackendError, CgStep, DeviceReport, Ratio};

/// Rows per parallel task; also the reduction chunk, fixed for determinism.
pub(crate) const CHUNK: usize = 8192;

#[derive(Clone, Debug, Default)]
pub struct CpuBackend;

impl CpuBackend {
    pub fn new() -> Self {
        CpuBackend
    }
}

pub(crate) fn same_len(a: usize, b: usize) -> Result<(), BackendError> {
    if a == b {
        Ok(())
    } else {
        Err(BackendError::Length(a, b))
    }
}

impl Backend for CpuBackend {
    type Vector = Vec<f64>;
    type Scalars = Vec<f64>;

    fn report(&self) -> DeviceReport {
        DeviceReport {
            backend: "cpu".into(),
            name: cpu_model(),
            detail: format!("{} rayon threads, f64", rayon::current_num_threads()),
        }
    }

    /// Host bytes of a steady solve: assembly (Quad-Diag 5 arrays, rhs,
    /// capacity) plus the solver's vectors (x, b, r, z, p, q, res, d, d_next
    /// and the shifted rhs): about 20 f64 per cell, plus the caller's extras.
    fn check_capacity_with(&self, cells: usize, extra_vectors: usize) -> Result<(), BackendError> {
        let needed = (20 + extra_vectors as u64) * 8 * cells as u64;
        match available_memory() {
            Some(free) if needed > free => Err(BackendError::OutOfMemory {
                needed,
                free,
                size: cells,
                unit: "cells",
                memory: "host memory",
                advice: "use a coarser --grid",
            }),
            _ => Ok(()),
        }
    }

    fn zeros(&self, n: usize) -> Result<Vec<f64>, BackendError> {
        Ok(vec![0.0; n])
    }
    fn upload(&self, host: &[f64]) -> Result<Vec<f64>, BackendError> {
        Ok(host.to_vec())
    }
    fn download(&self, v: &Vec<f64>) -> Result<Vec<f64>, BackendError> {
        Ok(v.clone())
    }
    fn download_pieces(
        &self,
        v: &Vec<f64>,
        f: &mut crate::backend::PieceFn,
    ) -> Result<(), BackendError> {
        f(0, v)
    }
    fn download_into(&self, v: &Vec<f64>, host: &mut [f64]) -> Result<(), BackendError> {
        use rayon::prelude::*;
        same_len(v.len(), host.len())?;
        host.par_chunks_mut(CHUNK)
            .zip(v.par_chunks(CHUNK))
            .for_each(|(h, d)| h.copy_from_slice(d));
        Ok(())
    }
    fn copy(&self, src: &Vec<f64>, dst: &mut Vec<f64>) -> Result<(), BackendError> {
        same_len(src.len(), dst.len())?;
        dst.copy_from_slice(src);
        Ok(())
    }
    fn scalars(&self, n: usize) -> Result<Vec<f64>, BackendError> {
        Ok(vec![0.0; n])
    }
    fn read_scalars(&self, s: &Vec<f64>) -> Result<Vec<f64>, BackendError> {
        Ok(s.clone())
    }

    fn dot(
        &self,
        x: &Vec<f64>,
        y: &Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(x.len(), y.len())?;
        s[out] = kernels::dot(x, y);
        Ok(())
    }
    fn cg_update(
        &self,
        alpha: Ratio,
        v: CgStep<'_, Vec<f64>>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let CgStep { p, q, x, r } = v;
        same_len(p.len(), q.len())?;
        same_len(p.len(), x.len())?;
        same_len(p.len(), r.len())?;
        let a = ratio(s, alpha);
        s[out] = kernels::cg_update(a, p, q, x, r);
        Ok(())
    }
    fn xpay(
        &self,
        beta: Ratio,
        z: &Vec<f64>,
        p: &mut Vec<f64>,
        s: &Vec<f64>,
    ) -> Result<(), BackendError> {
        same_len(z.len(), p.len())?;
        kernels::xpay(ratio(s, beta), z, p);
        Ok(())
    }
    fn axpby(
        &self,
        alpha: f64,
        x: &Vec<f64>,
        beta: f64,
        y: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        same_len(x.len(), y.len())?;
        kernels::axpby(alpha, x, beta, y);
        Ok(())
    }
    fn mul_add(
        &self,
        w: &Vec<f64>,
        x: &Vec<f64>,
        b: &Vec<f64>,
        out: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        for v in [x.len(), b.len(), out.len()] {
            same_len(w.len(), v)?;
        }
        kernels::mul_add(w, x, b, out);
        Ok(())
    }
    fn divide(&self, r: &Vec<f64>, d: &Vec<f64>, z: &mut Vec<f64>) -> Result<(), BackendError> {
        same_len(r.len(), d.len())?;
        same_len(r.len(), z.len())?;
        kernels::divide(d, r, z);
        Ok(())
    }
}

/// s[num]/s[den], 0 when the denominator is 0 (CG has then converged exactly).
pub(crate) fn ratio(s: &[f64], r: Ratio) -> f64 {
    if s[r.den] == 0.0 {
        0.0
    } else {
        s[r.num] / s[r.den]
    }
}

/// MemAvailable from /proc/meminfo, bytes (None where it cannot be read),
/// capped by [`MemoryCaps::host`](crate::knobs::MemoryCaps::host) (see
/// [`crate::backend::memory_limit`]).
pub fn available_memory() -> Option<u64> {
    let system = (|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    })();
    use crate::backend::memory_limit::{capped, caps};
    capped(system, caps().host)
}

/// Peak resident set size of this process so far, bytes (`getrusage`).
pub fn peak_rss_bytes() -> Option<u64> {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a whole rusage into the pointer it is given.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr()) };
    if rc != 0 {
        return None;
    }
    // SAFETY: initialised by the successful call above (and zeroed before).
    let u = unsafe { u.assume_init() };
    // Linux reports ru_maxrss in KiB.
    u64::try_from(u.ru_maxrss).ok().map(|k| k * 1024)
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}
