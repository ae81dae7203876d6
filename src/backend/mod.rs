//! Executors. The solver (PCG, preconditioners, eigenvalue estimate) is written
//! once against [`Backend`]; the CPU backend (rayon, the reference) and the
//! CUDA backend (cudarc + NVRTC kernels from `kernels/*.cu`) supply storage and
//! the fused kernels. Each method's doc gives its math; every kernel makes one
//! pass over memory.
//!
//! Scalars produced by reductions stay on the device in a [`Backend::Scalars`]
//! buffer of numbered slots; kernels that need a coefficient read it from there
//! as a ratio of two slots (α = s[num]/s[den]), so a CG iteration needs no
//! host round trip. The host reads slots only when it checks convergence.

pub mod cpu;
pub mod cuda;
pub mod mg;

use crate::linalg::precision::ScaledQuadDiag;
use crate::linalg::QuadDiag;
use serde::Serialize;
use std::borrow::Cow;

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("CUDA is not available on this machine: {0}")]
    CudaUnavailable(String),
    #[error("CUDA driver: {0}")]
    Driver(String),
    #[error("NVRTC could not compile {file}: {message}\n{log}")]
    Compile {
        file: String,
        message: String,
        log: String,
    },
    #[error(
        "the problem needs {needed} bytes of {memory} but only {free} are free \
         ({size} {unit}); {advice}"
    )]
    OutOfMemory {
        needed: u64,
        free: u64,
        /// Cells of a thermal grid, elements of a topopt mesh.
        size: usize,
        /// "cells" or "elements".
        unit: &'static str,
        /// "device memory" or "host memory".
        memory: &'static str,
        /// What the user can do, e.g. "use a coarser --grid or --device cpu".
        advice: &'static str,
    },
    #[error("vector lengths differ: {0} vs {1}")]
    Length(usize, usize),
}

/// Which device ran the solve, for `summary.json` and `cuth info`.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceReport {
    /// `cpu` or `cuda`.
    pub backend: String,
    /// Human-readable device name (CPU model / GPU name).
    pub name: String,
    /// Threads (CPU) or multiprocessors (GPU), memory, driver: free text.
    pub detail: String,
}

/// Which slots of a scalar buffer form a coefficient `s[num] / s[den]`.
#[derive(Clone, Copy, Debug)]
pub struct Ratio {
    pub num: usize,
    pub den: usize,
}

pub trait Backend {
    /// A vector of f64 living on this device.
    type Vector;
    /// A Quad-Diag matrix living on this device.
    type Matrix;
    /// A small array of f64 slots living on this device.
    type Scalars;
    /// The Jacobi-scaled Â of the low-precision Chebyshev, each off-diagonal
    /// in its own storage format (`linalg::precision`).
    type LowMatrix;
    /// A vector of f32 living on this device (the low-precision
    /// preconditioner's work vectors).
    type LowVector;

    fn report(&self) -> DeviceReport;

    /// Waits until every operation queued on this device has finished (and
    /// reports any error it raised). A no-op where operations are
    /// synchronous; timing code calls it before reading a clock.
    fn synchronize(&self) -> Result<(), BackendError> {
        Ok(())
    }

    /// How often PCG should read the residual back when the caller has no
    /// preference: every iteration where that is free (CPU), less often where
    /// each read is a host round trip (GPU).
    fn check_interval(&self) -> usize {
        1
    }

    /// Fails early, before the stack is assembled or anything is allocated,
    /// when a solve of `cells` rows cannot fit on this device.
    fn check_capacity(&self, cells: usize) -> Result<(), BackendError> {
        self.check_capacity_with(cells, 0)
    }

    /// [`Backend::check_capacity`] for a driver that keeps `extra_vectors`
    /// n-vectors of its own beside the solve's (the transient stepper's
    /// C/Δt and source, say).
    fn check_capacity_with(&self, cells: usize, extra_vectors: usize) -> Result<(), BackendError> {
        let _ = (cells, extra_vectors);
        Ok(())
    }

    /// Vector of length n, zero-filled.
    fn zeros(&self, n: usize) -> Result<Self::Vector, BackendError>;
    fn upload(&self, host: &[f64]) -> Result<Self::Vector, BackendError>;
    fn download(&self, v: &Self::Vector) -> Result<Vec<f64>, BackendError>;
    /// [`Backend::download`] into a host buffer of the same length, for a
    /// caller that downloads every step: reusing the buffer spares a fresh
    /// allocation (and its page faults) per call.
    fn download_into(&self, v: &Self::Vector, host: &mut [f64]) -> Result<(), BackendError> {
        let h = self.download(v)?;
        if h.len() != host.len() {
            return Err(BackendError::Length(h.len(), host.len()));
        }
        host.copy_from_slice(&h);
        Ok(())
    }
    /// dst = src
    fn copy(&self, src: &Self::Vector, dst: &mut Self::Vector) -> Result<(), BackendError>;
    fn upload_matrix(&self, a: &QuadDiag) -> Result<Self::Matrix, BackendError>;
    /// `a` on the host, for the rare step that needs A after the upload (a
    /// mixed-precision switch builds its next level from it): borrowed where
    /// the matrix already lives on the host, else downloaded, so that no
    /// host copy has to be kept for the whole solve just in case.
    fn host_matrix<'m>(&self, a: &'m Self::Matrix) -> Result<Cow<'m, QuadDiag>, BackendError>;
    /// `n` slots, zero-filled.
    fn scalars(&self, n: usize) -> Result<Self::Scalars, BackendError>;
    /// Reads every slot back to the host (a synchronization point on a GPU).
    fn read_scalars(&self, s: &Self::Scalars) -> Result<Vec<f64>, BackendError>;

    /// y = A x
    fn spmv(
        &self,
        a: &Self::Matrix,
        x: &Self::Vector,
        y: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// r = b − A x;  s[out] = r·r
    fn residual(
        &self,
        a: &Self::Matrix,
        b: &Self::Vector,
        x: &Self::Vector,
        r: &mut Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// q = A p;  s[out] = p·q
    fn spmv_dot(
        &self,
        a: &Self::Matrix,
        p: &Self::Vector,
        q: &mut Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// s[out] = x·y
    fn dot(
        &self,
        x: &Self::Vector,
        y: &Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// α = s[alpha.num]/s[alpha.den];  x += α p;  r −= α q;  s[out] = r·r
    #[allow(clippy::too_many_arguments)]
    fn cg_update(
        &self,
        alpha: Ratio,
        p: &Self::Vector,
        q: &Self::Vector,
        x: &mut Self::Vector,
        r: &mut Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// β = s[beta.num]/s[beta.den];  p = z + β p
    fn xpay(
        &self,
        beta: Ratio,
        z: &Self::Vector,
        p: &mut Self::Vector,
        s: &Self::Scalars,
    ) -> Result<(), BackendError>;
    /// out = w ⊙ x + b (element-wise). The transient right-hand side
    /// C/Δt ⊙ θⁿ + P, formed where the vectors live (32 B/row).
    fn mul_add(
        &self,
        w: &Self::Vector,
        x: &Self::Vector,
        b: &Self::Vector,
        out: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// z = D⁻¹ r, D = diag(A)
    fn jacobi(
        &self,
        a: &Self::Matrix,
        r: &Self::Vector,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// First Chebyshev step: res = r;  d = c·D⁻¹ r;  z = d
    #[allow(clippy::too_many_arguments)]
    fn cheb_init(
        &self,
        a: &Self::Matrix,
        c: f64,
        r: &Self::Vector,
        res: &mut Self::Vector,
        d: &mut Self::Vector,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// Later Chebyshev steps: res −= A d;  d_next = α d + β D⁻¹ res;  z += d_next
    #[allow(clippy::too_many_arguments)]
    fn cheb_step(
        &self,
        a: &Self::Matrix,
        alpha: f64,
        beta: f64,
        d: &Self::Vector,
        d_next: &mut Self::Vector,
        res: &mut Self::Vector,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    fn upload_low_matrix(&self, a: &ScaledQuadDiag) -> Result<Self::LowMatrix, BackendError>;
    /// f32 vector of length n, zero-filled.
    fn zeros_low(&self, n: usize) -> Result<Self::LowVector, BackendError>;
    /// First Chebyshev step on Â (f32 arithmetic): r̂ = S r;  res = r̂;
    /// d = c·r̂;  ẑ = d.  When `last` (degree 1), only z = S d, in f64.
    #[allow(clippy::too_many_arguments)]
    fn cheb_init_low(
        &self,
        a: &Self::LowMatrix,
        c: f64,
        r: &Self::Vector,
        res: &mut Self::LowVector,
        d: &mut Self::LowVector,
        zhat: &mut Self::LowVector,
        z: &mut Self::Vector,
        last: bool,
    ) -> Result<(), BackendError>;
    /// Later Chebyshev steps on Â: res −= Â d;  d_next = α d + β res;
    /// ẑ += d_next.  When `last`, only z = S (ẑ + d_next), in f64.
    #[allow(clippy::too_many_arguments)]
    fn cheb_step_low(
        &self,
        a: &Self::LowMatrix,
        alpha: f64,
        beta: f64,
        d: &Self::LowVector,
        d_next: &mut Self::LowVector,
        res: &mut Self::LowVector,
        zhat: &mut Self::LowVector,
        z: &mut Self::Vector,
        last: bool,
    ) -> Result<(), BackendError>;
}
