//! The batched capability: the kernels of PCG and of the multigrid cycle
//! over k right-hand sides at once, for `linalg::batch`. A batch
//! vector is an ordinary [`Backend::Vector`] of k·n rows, vector j in rows
//! j·n..(j+1)·n (`[k][n]`); the k systems share one matrix.
//!
//! Scalars are per vector: slot q of vector j is `s[q + j]`, the caller
//! passing the base q (PCG lays out its slots q·k apart). `mask` is the base
//! of the per-vector status (1 iterating, 0 converged, −1 broke down): a
//! vector whose status is ≤ 0 is skipped whole by every method that takes a
//! mask, so converged vectors drop out of the batch on the device, with no
//! host round trip. [`BatchCheck`] fuses PCG's stopping test into the
//! update. CPU: `backend/cpu/batch.rs` (a loop over the vectors); CUDA:
//! `backend/cuda/batch.rs` launching `kernels/batch.cu` (2D grids, the y
//! index the vector).

use super::mg::{MultigridOps, Relax};
use super::{Backend, BackendError, CgStep, Ratio};

/// The slot bases of PCG's fused per-vector stopping test (see
/// [`BatchOps::batch_cg_update`]).
#[derive(Clone, Copy, Debug)]
pub struct BatchCheck {
    /// Where r·r goes.
    pub rr: usize,
    /// The squared threshold on r·r.
    pub tol: usize,
    /// The status (the mask).
    pub status: usize,
    /// Where the iteration is recorded when the status changes.
    pub iters: usize,
    /// This iteration's number (1-based).
    pub iteration: usize,
}

/// The vectors of a batch that a kernel works on: of its `k`, those whose
/// status `s[mask + j]` is > 0. The kernels read their coefficients from
/// the same scalars, so the two travel together.
pub struct Active<'s, B: Backend + ?Sized> {
    pub k: usize,
    pub s: &'s B::Scalars,
    pub mask: usize,
}

impl<B: Backend + ?Sized> Clone for Active<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend + ?Sized> Copy for Active<'_, B> {}

/// Where the batched reductions of `k` vectors land: the per-vector scalar
/// slots, and the scratch of their partial sums. PCG holds one for the
/// whole solve and lends it to every reducing kernel.
pub struct BatchSums<'w, B: BatchOps + ?Sized> {
    pub k: usize,
    pub s: &'w mut B::Scalars,
    pub scratch: &'w mut B::BatchScratch,
}

impl<B: BatchOps + ?Sized> BatchSums<'_, B> {
    /// The vectors whose status at `mask` is > 0, for the kernels that
    /// only read the scalars.
    pub fn active(&self, mask: usize) -> Active<'_, B> {
        Active {
            k: self.k,
            s: self.s,
            mask,
        }
    }
}

/// Host memory a batch is copied through: page-locked on a GPU, so that
/// copies run at the link's speed and are queued (asynchronous) like
/// kernels; a plain `Vec` on the CPU. It may be filled or read on another
/// thread while the device works on something else.
pub trait HostBuffer: Send {
    /// The values, once every copy queued on them has finished.
    fn values(&self) -> Result<&[f64], BackendError>;
    /// As [`HostBuffer::values`], for writing.
    fn values_mut(&mut self) -> Result<&mut [f64], BackendError>;
}

impl HostBuffer for Vec<f64> {
    fn values(&self) -> Result<&[f64], BackendError> {
        Ok(self)
    }
    fn values_mut(&mut self) -> Result<&mut [f64], BackendError> {
        Ok(self)
    }
}

pub trait BatchOps: MultigridOps {
    /// Per-batch device scratch (reduction partials and tickets).
    type BatchScratch;
    /// See [`HostBuffer`].
    type HostBuffer: HostBuffer;

    /// A zero-filled host buffer of `len` values.
    fn host_buffer(&self, len: usize) -> Result<Self::HostBuffer, BackendError>;
    /// dst = host, queued: `host` may be rewritten once its
    /// [`HostBuffer::values_mut`] returns.
    fn upload_from(
        &self,
        host: &Self::HostBuffer,
        dst: &mut Self::Vector,
    ) -> Result<(), BackendError>;
    /// host = src, queued: [`HostBuffer::values`] waits for it.
    fn download_to(
        &self,
        src: &Self::Vector,
        host: &mut Self::HostBuffer,
    ) -> Result<(), BackendError>;

    /// Readies the kernels (compiles them, on a GPU).
    fn prepare_batch(&self) -> Result<(), BackendError> {
        Ok(())
    }
    /// Scratch for batches of `k` vectors of `n` rows.
    fn batch_scratch(&self, k: usize, n: usize) -> Result<Self::BatchScratch, BackendError>;
    /// `s[first + i] = values[i]`.
    fn set_slots(
        &self,
        s: &mut Self::Scalars,
        first: usize,
        values: &[f64],
    ) -> Result<(), BackendError>;

    /// s[out + j] = x_j·y_j.
    fn batch_dot(
        &self,
        x: &Self::Vector,
        y: &Self::Vector,
        out: usize,
        mask: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError>;
    /// q_j = A p_j;  s[out + j] = p_j·q_j.
    fn batch_spmv_dot(
        &self,
        a: &Self::Matrix,
        p: &Self::Vector,
        q: &mut Self::Vector,
        out: usize,
        mask: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError>;
    /// r_j = b_j − A x_j (difference form);  s[out + j] = r_j·r_j, for
    /// every vector (no mask: the true residual of converged ones).
    fn batch_residual(
        &self,
        a: &Self::Matrix,
        b: &Self::Vector,
        x: &Self::Vector,
        r: &mut Self::Vector,
        out: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError>;
    /// α_j = s[alpha.num + j]/s[alpha.den + j];  x_j += α_j p_j;
    /// r_j −= α_j q_j;  s[check.rr + j] = r_j·r_j; then PCG's stopping
    /// test per vector: status −1 when p·Ap (slot alpha.den) is not
    /// positive or r·r not finite, 0 when r·r ≤ s[check.tol + j], with
    /// `check.iteration` recorded in s[check.iters + j] when it changes.
    fn batch_cg_update(
        &self,
        alpha: Ratio,
        v: CgStep<'_, Self::Vector>,
        check: &BatchCheck,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError>;
    /// β_j = s[beta.num + j]/s[beta.den + j];  p_j = z_j + β_j p_j.
    fn batch_xpay(
        &self,
        beta: Ratio,
        z: &Self::Vector,
        p: &mut Self::Vector,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError>;

    /// [`MultigridOps::mg_smooth`] on every vector.
    fn batch_mg_smooth(
        &self,
        a: &Self::Matrix,
        relax: Relax<'_, Self>,
        b: &Self::Vector,
        x: &mut Self::Vector,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError>;
    /// [`MultigridOps::mg_restrict_residual`] on every vector.
    fn batch_mg_restrict_residual(
        &self,
        a: &Self::Matrix,
        c: &Self::Transfer,
        b: &Self::Vector,
        x: &Self::Vector,
        bc: &mut Self::Vector,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError>;
    /// [`MultigridOps::mg_prolong_add`] on every vector.
    fn batch_mg_prolong_add(
        &self,
        c: &Self::Transfer,
        xc: &Self::Vector,
        x: &mut Self::Vector,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError>;
    /// [`MultigridOps::mg_dense_apply`] on every vector.
    fn batch_mg_dense_apply(
        &self,
        m: &Self::Vector,
        n: usize,
        b: &Self::Vector,
        x: &mut Self::Vector,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError>;
}
