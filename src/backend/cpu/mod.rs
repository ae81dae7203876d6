//! The CPU executor: plain f64 loops parallelized with rayon. It is the
//! reference every other backend is tested against. Reductions sum fixed-size
//! chunks and then the chunk sums in order, so results do not depend on the
//! thread count or on scheduling.

mod kernels;
mod mg;
mod mixed;

use super::{Backend, BackendError, DeviceReport, Ratio};
use crate::linalg::precision::ScaledQuadDiag;
use crate::linalg::QuadDiag;
use std::borrow::Cow;

/// Rows per parallel task; also the reduction chunk, fixed for determinism.
pub(crate) const CHUNK: usize = 8192;

#[derive(Clone, Debug, Default)]
pub struct CpuBackend;

impl CpuBackend {
    pub fn new() -> Self {
        CpuBackend
    }
}

fn same_len(a: usize, b: usize) -> Result<(), BackendError> {
    if a == b {
        Ok(())
    } else {
        Err(BackendError::Length(a, b))
    }
}

impl Backend for CpuBackend {
    type Vector = Vec<f64>;
    type Matrix = QuadDiag;
    type Scalars = Vec<f64>;
    type LowMatrix = ScaledQuadDiag;
    type LowVector = Vec<f32>;

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
    fn upload_matrix(&self, a: &QuadDiag) -> Result<QuadDiag, BackendError> {
        Ok(a.clone())
    }
    fn scalars(&self, n: usize) -> Result<Vec<f64>, BackendError> {
        Ok(vec![0.0; n])
    }
    fn read_scalars(&self, s: &Vec<f64>) -> Result<Vec<f64>, BackendError> {
        Ok(s.clone())
    }

    fn host_matrix<'m>(&self, a: &'m QuadDiag) -> Result<Cow<'m, QuadDiag>, BackendError> {
        Ok(Cow::Borrowed(a))
    }

    fn spmv(&self, a: &QuadDiag, x: &Vec<f64>, y: &mut Vec<f64>) -> Result<(), BackendError> {
        same_len(a.len(), x.len())?;
        same_len(a.len(), y.len())?;
        kernels::spmv(a, x, y);
        Ok(())
    }
    fn residual(
        &self,
        a: &QuadDiag,
        b: &Vec<f64>,
        x: &Vec<f64>,
        r: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(a.len(), b.len())?;
        same_len(a.len(), x.len())?;
        same_len(a.len(), r.len())?;
        s[out] = kernels::residual(a, b, x, r);
        Ok(())
    }
    fn spmv_dot(
        &self,
        a: &QuadDiag,
        p: &Vec<f64>,
        q: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(a.len(), p.len())?;
        same_len(a.len(), q.len())?;
        s[out] = kernels::spmv_dot(a, p, q);
        Ok(())
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
        p: &Vec<f64>,
        q: &Vec<f64>,
        x: &mut Vec<f64>,
        r: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
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
    fn jacobi(&self, a: &QuadDiag, r: &Vec<f64>, z: &mut Vec<f64>) -> Result<(), BackendError> {
        same_len(a.len(), r.len())?;
        same_len(a.len(), z.len())?;
        kernels::jacobi(&a.d, r, z);
        Ok(())
    }
    fn cheb_init(
        &self,
        a: &QuadDiag,
        c: f64,
        r: &Vec<f64>,
        res: &mut Vec<f64>,
        d: &mut Vec<f64>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        for v in [r.len(), res.len(), d.len(), z.len()] {
            same_len(a.len(), v)?;
        }
        kernels::cheb_init(&a.d, c, r, res, d, z);
        Ok(())
    }
    fn cheb_step(
        &self,
        a: &QuadDiag,
        alpha: f64,
        beta: f64,
        d: &Vec<f64>,
        d_next: &mut Vec<f64>,
        res: &mut Vec<f64>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        for v in [d.len(), d_next.len(), res.len(), z.len()] {
            same_len(a.len(), v)?;
        }
        kernels::cheb_step(a, alpha, beta, d, d_next, res, z);
        Ok(())
    }

    fn upload_low_matrix(&self, a: &ScaledQuadDiag) -> Result<ScaledQuadDiag, BackendError> {
        Ok(a.clone())
    }
    fn zeros_low(&self, n: usize) -> Result<Vec<f32>, BackendError> {
        Ok(vec![0.0; n])
    }
    fn cheb_init_low(
        &self,
        a: &ScaledQuadDiag,
        c: f64,
        r: &Vec<f64>,
        res: &mut Vec<f32>,
        d: &mut Vec<f32>,
        zhat: &mut Vec<f32>,
        z: &mut Vec<f64>,
        last: bool,
    ) -> Result<(), BackendError> {
        for v in [r.len(), res.len(), d.len(), zhat.len(), z.len()] {
            same_len(a.len(), v)?;
        }
        mixed::cheb_init(a, c as f32, r, res, d, zhat, z, last);
        Ok(())
    }
    fn cheb_step_low(
        &self,
        a: &ScaledQuadDiag,
        alpha: f64,
        beta: f64,
        d: &Vec<f32>,
        d_next: &mut Vec<f32>,
        res: &mut Vec<f32>,
        zhat: &mut Vec<f32>,
        z: &mut Vec<f64>,
        last: bool,
    ) -> Result<(), BackendError> {
        for v in [d.len(), d_next.len(), res.len(), zhat.len(), z.len()] {
            same_len(a.len(), v)?;
        }
        mixed::cheb_step(a, alpha as f32, beta as f32, d, d_next, res, zhat, z, last);
        Ok(())
    }
}

/// s[num]/s[den], 0 when the denominator is 0 (CG has then converged exactly).
fn ratio(s: &[f64], r: Ratio) -> f64 {
    if s[r.den] == 0.0 {
        0.0
    } else {
        s[r.num] / s[r.den]
    }
}

/// MemAvailable from /proc/meminfo, bytes (None where it cannot be read).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
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
