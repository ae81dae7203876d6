//! Executors. The solver (PCG, preconditioners, eigenvalue estimate) is written
//! once against these traits; the CPU backend (rayon, the reference) and the
//! CUDA backend (cudarc + NVRTC kernels from `kernels/*.cu`) supply storage and
//! the fused kernels. Each method's doc gives its math; every kernel makes one
//! pass over memory.
//!
//! [`Backend`] is the core every solver needs: f64 vectors, scalar slots,
//! BLAS-1 and reductions. Capability traits add the kernels of one kind of
//! operator or preconditioner, each implemented beside its kernels
//! (`cpu/<family>.rs`, `cuda/<family>.rs`): [`QuadDiagOps`] (the thermal
//! matrix), [`ChebyshevOps`] (the Chebyshev steps in f64 for any operator
//! with a diagonal), [`ScaledChebyshevOps`] (the steps below f64 on the
//! Jacobi-scaled Â, generic over the arithmetic's element type) and
//! [`mg::MultigridOps`] (the multigrid preconditioner's grid operations).
//! [`batch::BatchOps`] runs PCG and the multigrid cycle over k right-hand
//! sides at once (sweeps). [`ChebyshevBackend`] names the solver set.
//!
//! The executor knows no physics: what an application does on the device
//! is its own capability trait, implemented for these executors in its own
//! module with its own kernel families (`thermal::device::ThermalOps` for
//! assembly, leakage, statistics and right-hand-side shifts,
//! `topopt::ElasticBackend` for the matrix-free elasticity operator).
//!
//! Scalars produced by reductions stay on the device in a [`Backend::Scalars`]
//! buffer of numbered slots; kernels that need a coefficient read it from there
//! as a ratio of two slots (α = `s[num]/s[den]`), so a CG iteration needs no
//! host round trip. The host reads slots only when it checks convergence.

pub mod batch;
mod chebyshev;
pub mod cpu;
pub mod cuda;
pub mod memory_limit;
pub mod mg;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod reduce;

use crate::matrix::advection::Advection;
use crate::matrix::QuadDiag;
use serde::Serialize;
use std::borrow::Cow;

pub use chebyshev::{ChebWork, ChebyshevBackend, ChebyshevOps, ScaledChebyshevOps};

#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    #[error("CUDA is not available on this machine: {0}")]
    CudaUnavailable(String),
    #[error("CUDA driver: {0}")]
    Driver(String),
    /// A backend algorithm that failed on its numbers, on any device (a
    /// multigrid hierarchy whose coarsest operator is not SPD): not the
    /// driver's fault, so not worded as one.
    #[error("{0}")]
    Numerical(String),
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
    #[error("{0}")]
    Unsupported(&'static str),
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

/// The vectors CG's update step x += α p;  r −= α q reads and writes, kept
/// together because the single and the batched update take the same four.
pub struct CgStep<'v, V> {
    /// The search direction.
    pub p: &'v V,
    /// A p.
    pub q: &'v V,
    /// The iterate.
    pub x: &'v mut V,
    /// The residual.
    pub r: &'v mut V,
}

/// What [`Backend::download_pieces`] hands each piece to: `(first index,
/// values)`.
pub type PieceFn<'f> = dyn FnMut(usize, &[f64]) -> Result<(), BackendError> + 'f;

/// The core of an executor: storage, scalar slots, BLAS-1 and reductions.
pub trait Backend {
    /// A vector of f64 living on this device.
    type Vector;
    /// A small array of f64 slots living on this device.
    type Scalars;

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
    /// when a solve of `cells` rows cannot fit on this device. Part of a
    /// solve's planning: uploads do not check (a multigrid hierarchy uploads
    /// several smaller matrices under one plan).
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

    /// Free memory of this device in bytes, for a run's memory plan
    /// (`thermal::memory_plan`); `None` where the vectors live in host
    /// memory (the CPU), which the plan counts as host memory.
    fn device_free_memory(&self) -> Result<Option<u64>, BackendError> {
        Ok(None)
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
    /// Hands `v` to `f` in consecutive pieces `(first index, values)`, in
    /// order, so that a caller can reduce a vector larger than it wants to
    /// hold on the host (the post-solve statistics). On a GPU
    /// through two pinned staging buffers, the next piece copied while `f`
    /// reads this one; where the vector is host memory, in one piece
    /// without a copy.
    fn download_pieces(&self, v: &Self::Vector, f: &mut PieceFn) -> Result<(), BackendError> {
        let h = self.download(v)?;
        f(0, &h)
    }
    /// dst = src
    fn copy(&self, src: &Self::Vector, dst: &mut Self::Vector) -> Result<(), BackendError>;
    /// `n` slots, zero-filled.
    fn scalars(&self, n: usize) -> Result<Self::Scalars, BackendError>;
    /// Reads every slot back to the host (a synchronization point on a GPU).
    fn read_scalars(&self, s: &Self::Scalars) -> Result<Vec<f64>, BackendError>;

    /// `s[out]` = x·y
    fn dot(
        &self,
        x: &Self::Vector,
        y: &Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// α = `s[alpha.num]/s[alpha.den]`;  x += α p;  r −= α q;  `s[out]` = r·r
    fn cg_update(
        &self,
        alpha: Ratio,
        v: CgStep<'_, Self::Vector>,
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
    /// y = α x + β y with host scalars (24 B/row): the updates of Krylov
    /// methods whose scalars are read back every iteration (BiCGStab).
    /// With β = 0, y is not read (as BLAS), so it may hold anything, a NaN
    /// included.
    fn axpby(
        &self,
        alpha: f64,
        x: &Self::Vector,
        beta: f64,
        y: &mut Self::Vector,
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
    /// z = r ⊘ d (element-wise): Jacobi, z = D⁻¹ r, with the diagonal d of
    /// any operator (24 B/row).
    fn divide(
        &self,
        r: &Self::Vector,
        d: &Self::Vector,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;
}

/// The Quad-Diag matrix (`matrix::QuadDiag`) on a device.
pub trait QuadDiagOps: Backend {
    /// A Quad-Diag matrix living on this device ('static: a solver holds
    /// it beside preconditioners that outlive one call).
    type Matrix: 'static;

    /// Readies the kernels of this capability (compiles them, on a GPU) so
    /// that their first launch is not timed with the compiler. A solve's
    /// planning calls it; launching without it works too.
    fn prepare_quad_diag(&self) -> Result<(), BackendError> {
        Ok(())
    }

    /// The upstream couplings of a liquid-cooled stack's coolant cells
    /// (`matrix::advection`) on this device: the non-symmetric part a
    /// thermal operator may carry beside its Quad-Diag.
    type Advection: 'static;

    /// Copies `a` to the device. Checks lengths only: whether the solve fits
    /// is the planning's question ([`Backend::check_capacity`]).
    fn upload_matrix(&self, a: &QuadDiag) -> Result<Self::Matrix, BackendError>;
    /// `a` on the host, for the rare step that needs A after the upload (a
    /// mixed-precision switch builds its next level from it): borrowed where
    /// the matrix already lives on the host, else downloaded, so that no
    /// host copy has to be kept for the whole solve just in case.
    fn host_matrix<'m>(&self, a: &'m Self::Matrix) -> Result<Cow<'m, QuadDiag>, BackendError>;
    /// The diagonal D of `a`, as a vector of this device.
    fn diagonal<'m>(&self, a: &'m Self::Matrix) -> &'m Self::Vector;

    fn upload_advection(&self, a: &Advection) -> Result<Self::Advection, BackendError>;
    /// `y[cell] += scale · w · x[up]` on the coolant cells alone (16 B per
    /// coolant cell + the x and y it touches).
    fn add_couplings(
        &self,
        a: &Self::Advection,
        scale: f64,
        x: &Self::Vector,
        y: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// `z[cell] = (r[cell] + w z[up]) / d[cell]`, in flow order along each
    /// coolant line; the other entries of z are kept.
    fn line_solve(
        &self,
        a: &Self::Advection,
        d: &Self::Vector,
        r: &Self::Vector,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// y = A x
    fn spmv(
        &self,
        a: &Self::Matrix,
        x: &Self::Vector,
        y: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// r = b − A x (difference form, see `QuadDiag`);  `s[out]` = r·r
    fn residual(
        &self,
        a: &Self::Matrix,
        b: &Self::Vector,
        x: &Self::Vector,
        r: &mut Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// q = A p;  `s[out]` = p·q
    fn spmv_dot(
        &self,
        a: &Self::Matrix,
        p: &Self::Vector,
        q: &mut Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;
    /// z = D⁻¹ r, D = diag(A): [`Backend::divide`] by A's own diagonal.
    fn jacobi(
        &self,
        a: &Self::Matrix,
        r: &Self::Vector,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError> {
        self.divide(r, self.diagonal(a), z)
    }
    /// The Chebyshev preconditioner's later step with A d fused in (A read
    /// once): res −= A d;  d_next = α d + β D⁻¹ res;  z += d_next.
    fn cheb_step(
        &self,
        a: &Self::Matrix,
        alpha: f64,
        beta: f64,
        w: &mut ChebWork<Self::Vector>,
        z: &mut Self::Vector,
    ) -> Result<(), BackendError>;
}
