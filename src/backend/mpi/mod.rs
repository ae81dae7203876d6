//! The MPI executor (feature `mpi`): one solve over several processes, each
//! holding a slab of the grid. A [`RankBackend`] is the CPU backend on this
//! rank's rows with the reductions made global, so the Krylov code
//! (`linalg::pcg`) runs unchanged over ranks: every dot product becomes a
//! local partial sum and one collective. The operator ([`SlabOperator`],
//! `slab.rs`) exchanges one x–z plane with each neighbouring rank per
//! product, behind the interior rows' work; [`ZLine`] is a preconditioner
//! that needs no communication at all.
//!
//! Global sums are formed identically on every rank: each rank's partial is
//! gathered to all (`MPI_Allgather`) and summed in rank order, so every rank
//! takes the same branch of the Krylov loop (an `MPI_Allreduce` may round
//! differently on different ranks).

mod slab;
mod zline;

use super::cpu::CpuBackend;
use super::{Backend, BackendError, CgStep, DeviceReport, Ratio};
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::*;
use std::cell::Cell;

pub use slab::{Slab, SlabMatrix, SlabOperator};
pub use zline::ZLine;

/// This rank's executor: the CPU kernels on its slab's rows and the
/// communicator of the solve.
pub struct RankBackend {
    comm: SimpleCommunicator,
    cpu: CpuBackend,
    /// Bytes this rank has sent in halo planes (for the report).
    sent_bytes: Cell<u64>,
    /// Global reductions made (for the report).
    reductions: Cell<u64>,
}

impl RankBackend {
    pub fn new(comm: SimpleCommunicator) -> Self {
        RankBackend {
            comm,
            cpu: CpuBackend::new(),
            sent_bytes: Cell::new(0),
            reductions: Cell::new(0),
        }
    }

    pub fn comm(&self) -> &SimpleCommunicator {
        &self.comm
    }

    pub fn rank(&self) -> usize {
        self.comm.rank() as usize
    }

    pub fn size(&self) -> usize {
        self.comm.size() as usize
    }

    /// Halo bytes this rank has sent so far.
    pub fn sent_bytes(&self) -> u64 {
        self.sent_bytes.get()
    }

    /// Global reductions made so far.
    pub fn reductions(&self) -> u64 {
        self.reductions.get()
    }

    pub(crate) fn count_sent(&self, bytes: usize) {
        self.sent_bytes.set(self.sent_bytes.get() + bytes as u64);
    }

    /// Σ over ranks of `local`, the same on every rank (summed in rank
    /// order from an all-gather).
    pub fn global_sum(&self, local: f64) -> f64 {
        self.reductions.set(self.reductions.get() + 1);
        let mut all = vec![0.0f64; self.size()];
        self.comm.all_gather_into(&local, &mut all[..]);
        all.iter().sum()
    }

    /// Max over ranks of `local`.
    pub fn global_max(&self, local: f64) -> f64 {
        let mut all = vec![0.0f64; self.size()];
        self.comm.all_gather_into(&local, &mut all[..]);
        all.into_iter().fold(f64::NEG_INFINITY, f64::max)
    }

    /// Makes slot `out` of `s` (a local partial) global.
    fn reduce_slot(&self, s: &mut [f64], out: usize) {
        s[out] = self.global_sum(s[out]);
    }
}

impl Backend for RankBackend {
    type Vector = Vec<f64>;
    type Scalars = Vec<f64>;

    fn report(&self) -> DeviceReport {
        let cpu = self.cpu.report();
        DeviceReport {
            backend: "cpu".into(),
            name: cpu.name,
            detail: format!(
                "{} MPI ranks, slabs in y; rank 0: {}",
                self.size(),
                cpu.detail
            ),
        }
    }

    fn zeros(&self, n: usize) -> Result<Vec<f64>, BackendError> {
        self.cpu.zeros(n)
    }
    fn upload(&self, host: &[f64]) -> Result<Vec<f64>, BackendError> {
        self.cpu.upload(host)
    }
    fn download(&self, v: &Vec<f64>) -> Result<Vec<f64>, BackendError> {
        self.cpu.download(v)
    }
    fn copy(&self, src: &Vec<f64>, dst: &mut Vec<f64>) -> Result<(), BackendError> {
        self.cpu.copy(src, dst)
    }
    fn scalars(&self, n: usize) -> Result<Vec<f64>, BackendError> {
        self.cpu.scalars(n)
    }
    fn read_scalars(&self, s: &Vec<f64>) -> Result<Vec<f64>, BackendError> {
        Ok(s.clone())
    }

    /// `s[out]` = x·y: the local partial, then its global sum.
    fn dot(
        &self,
        x: &Vec<f64>,
        y: &Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        self.cpu.dot(x, y, s, out)?;
        self.reduce_slot(s, out);
        Ok(())
    }
    /// x += α p;  r −= α q;  `s[out]` = r·r (global).
    fn cg_update(
        &self,
        alpha: Ratio,
        v: CgStep<'_, Vec<f64>>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        self.cpu.cg_update(alpha, v, s, out)?;
        self.reduce_slot(s, out);
        Ok(())
    }
    /// p = z + β p (local).
    fn xpay(
        &self,
        beta: Ratio,
        z: &Vec<f64>,
        p: &mut Vec<f64>,
        s: &Vec<f64>,
    ) -> Result<(), BackendError> {
        self.cpu.xpay(beta, z, p, s)
    }
    fn axpby(
        &self,
        alpha: f64,
        x: &Vec<f64>,
        beta: f64,
        y: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        self.cpu.axpby(alpha, x, beta, y)
    }
    fn mul_add(
        &self,
        w: &Vec<f64>,
        x: &Vec<f64>,
        b: &Vec<f64>,
        out: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        self.cpu.mul_add(w, x, b, out)
    }
    fn divide(&self, r: &Vec<f64>, d: &Vec<f64>, z: &mut Vec<f64>) -> Result<(), BackendError> {
        self.cpu.divide(r, d, z)
    }
}
