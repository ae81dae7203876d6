//! The CUDA executor of the elastic operator: [`ElasticBackend`] for
//! [`CudaBackend`], launching the kernels of `kernels/topopt.cu` (compiled
//! with the other families by the backend's NVRTC machinery, every launch
//! checked). K(E) is never formed: the device holds Kₑ (as by-value kernel
//! parameters in f64 and f32, and as an f64 buffer for the diagonal and the
//! energies), the moduli Eₑ (f64 and f32), the fixed-DOF mask (one byte per
//! DOF) and the scratch of the chosen schedule, allocated on first use:
//!
//! - [`OperatorKind::Fused`]: one kernel, then the fix-up and dot. Atomics
//!   are warp-merged (x-neighbouring lanes add their shared face before
//!   scattering); in f32, x is converted first and the kernel accumulates
//!   with f32 atomics into an f32 accumulator.
//! - [`OperatorKind::NodeCentred`]: one kernel per apply (fix-up and dot
//!   fused in), no atomics, bitwise deterministic.
//!
//! Each is the fastest variant measured on an H200 (BENCHMARKS.md,
//! "Topology optimization"). The launchers are in
//! `launch.rs`; this file holds the operator's state and the trait's
//! dispatch.

pub mod design;
mod launch;
pub mod mg;

pub use launch::FUSED_BLOCK;
use launch::{ApplyVectors, Fixup};

use super::backend::{ElasticBackend, OpPrecision, OperatorKind};
use super::element::ElementMatrix;
use super::mesh::Mesh;
use super::mg::Transfer;
use crate::backend::cuda::launch::driver_err;
use crate::backend::cuda::{same_len, CudaBackend, KernelFamily};
use crate::backend::BackendError;
use cudarc::driver::CudaSlice;

/// `kernels/topopt.cu`, compiled the first time a topopt kernel is launched
/// (a thermal solve never compiles it).
pub static TOPOPT: KernelFamily = KernelFamily {
    file: "topopt.cu",
    source: include_str!("../../../kernels/topopt.cu"),
    entry_points: ENTRY_POINTS,
};

const ENTRY_POINTS: &[&str] = &[
    "topopt_fusedm_f64",
    "topopt_fusedm_f32_a32",
    "topopt_finish_f64",
    "topopt_finish_f32",
    "topopt_to_f32",
    "topopt_nodep_f64",
    "topopt_nodep_f32",
    "topopt_diag_f64",
    "topopt_energy_f64",
];

/// Kₑ by value, the `TopoKe64` / `TopoKe32` parameter of `kernels/topopt.cu`:
/// the unrolled multiply-adds take its entries as constant-bank operands,
/// with no load instructions.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct KeParam<T>(pub(crate) [T; 576]);

// SAFETY: a plain array of f32/f64, laid out as the C struct it stands for.
unsafe impl cudarc::driver::DeviceRepr for KeParam<f64> {}
unsafe impl cudarc::driver::DeviceRepr for KeParam<f32> {}

/// The operator's device data; see the module documentation.
#[derive(Debug)]
pub struct CudaElastic {
    mesh: Mesh,
    kind: OperatorKind,
    ke64: CudaSlice<f64>,
    kp64: Box<KeParam<f64>>,
    kp32: Box<KeParam<f32>>,
    e64: CudaSlice<f64>,
    e32: CudaSlice<f32>,
    fixed: CudaSlice<u8>,
    /// x in f32 and the f32 accumulator of the fused f32 apply.
    x32: Option<CudaSlice<f32>>,
    acc32: Option<CudaSlice<f32>>,
    /// Reduction scratch of the node-centred kernel (one partial per block
    /// of its one-thread-per-node grid) and its ticket.
    node_partials: CudaSlice<f64>,
    node_ticket: CudaSlice<u32>,
    /// Element energies before the copy to the host.
    energies: Option<CudaSlice<f64>>,
}

impl CudaElastic {
    pub fn mesh(&self) -> &Mesh {
        &self.mesh
    }

    pub fn kind(&self) -> OperatorKind {
        self.kind
    }

    /// Switches the schedule (the benchmark runs every kind on one operator;
    /// scratch is allocated on first use).
    pub fn set_kind(&mut self, kind: OperatorKind) {
        self.kind = kind;
    }

    /// Device bytes held now (scratch included once allocated).
    pub fn device_bytes(&self) -> u64 {
        fn b<T>(s: &CudaSlice<T>) -> u64 {
            s.num_bytes() as u64
        }
        let mut t = b(&self.ke64) + b(&self.e64) + b(&self.e32) + b(&self.fixed);
        t += b(&self.node_partials) + b(&self.node_ticket);
        t += self.x32.as_ref().map_or(0, b) + self.acc32.as_ref().map_or(0, b);
        t + self.energies.as_ref().map_or(0, b)
    }
}

fn zeros<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    be: &CudaBackend,
    n: usize,
    what: &str,
) -> Result<CudaSlice<T>, BackendError> {
    be.stream()
        .alloc_zeros::<T>(n)
        .map_err(|e| driver_err(&format!("allocating {what}"), e))
}

fn upload<T: cudarc::driver::DeviceRepr>(
    be: &CudaBackend,
    host: &[T],
    what: &str,
) -> Result<CudaSlice<T>, BackendError> {
    be.stream()
        .clone_htod(host)
        .map_err(|e| driver_err(&format!("uploading {what}"), e))
}

fn to_f32(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

impl ElasticBackend for CudaBackend {
    fn check_elastic_capacity(
        &self,
        mesh: &Mesh,
        extra_vectors: usize,
    ) -> Result<(), BackendError> {
        let (host, solver) = super::backend::memory_estimate(mesh, extra_vectors);
        let (free, _) = self.memory_info()?;
        if solver > free {
            return Err(BackendError::OutOfMemory {
                needed: solver,
                free,
                size: mesh.elements(),
                unit: "elements",
                memory: "device memory",
                advice: "use a coarser mesh (--nelx) or --device cpu",
            });
        }
        super::backend::check_host_memory(mesh, host, "use a coarser mesh (--nelx)")
    }

    type Elastic = CudaElastic;

    /// Moduli start at 1 (E0) until [`ElasticBackend::elastic_set_moduli`].
    fn elastic_new(
        &self,
        mesh: &Mesh,
        ke: &ElementMatrix,
        fixed: &[bool],
        kind: OperatorKind,
    ) -> Result<CudaElastic, BackendError> {
        same_len(mesh.dofs(), fixed.len())?;
        // Compiled here, at set-up, rather than in the first timed apply.
        self.load(&TOPOPT)?;
        // The kernels index DOFs with 32-bit ints.
        if mesh.dofs() >= i32::MAX as usize || mesh.elements() == 0 {
            return Err(BackendError::Driver(format!(
                "topopt mesh {}x{}x{} ({} DOFs): the GPU operator needs 1 to 2^31 - 1 DOFs",
                mesh.nelx,
                mesh.nely,
                mesh.nelz,
                mesh.dofs()
            )));
        }
        let flat = ke.flat();
        let ones = vec![1.0f64; mesh.elements()];
        let mask: Vec<u8> = fixed.iter().map(|&f| u8::from(f)).collect();
        let kp64 = Box::new(KeParam(std::array::from_fn(|i| flat[i])));
        let kp32 = Box::new(KeParam(std::array::from_fn(|i| flat[i] as f32)));
        Ok(CudaElastic {
            mesh: *mesh,
            kind,
            ke64: upload(self, &flat, "Ke")?,
            kp64,
            kp32,
            e64: upload(self, &ones, "element moduli")?,
            e32: upload(self, &to_f32(&ones), "element moduli (f32)")?,
            fixed: upload(self, &mask, "the fixed-DOF mask")?,
            node_partials: zeros(
                self,
                mesh.nodes()
                    .div_ceil(crate::backend::cuda::kernels::BLOCK as usize),
                "node-centred reduction partials",
            )?,
            node_ticket: zeros(self, 1, "node-centred reduction ticket")?,
            x32: None,
            acc32: None,
            energies: None,
        })
    }

    fn elastic_set_moduli(&self, op: &mut CudaElastic, e: &[f64]) -> Result<(), BackendError> {
        same_len(op.mesh.elements(), e.len())?;
        let s = self.stream();
        s.memcpy_htod(e, &mut op.e64)
            .map_err(|err| driver_err("uploading element moduli", err))?;
        s.memcpy_htod(&to_f32(e), &mut op.e32)
            .map_err(|err| driver_err("uploading element moduli (f32)", err))?;
        // The f32 host copy must outlive the asynchronous copy.
        self.sync("uploading element moduli")
    }

    fn elastic_apply_dot(
        &self,
        op: &mut CudaElastic,
        precision: OpPrecision,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        same_len(op.mesh.dofs(), x.len())?;
        same_len(op.mesh.dofs(), y.len())?;
        // y = K x, s[out] = x·y (b unused, x stands in).
        let v = ApplyVectors {
            x,
            b: x,
            y,
            fixup: Fixup::ApplyDot,
            s,
            out,
        };
        self.topo_apply(op, precision, v)
    }

    fn elastic_residual(
        &self,
        op: &mut CudaElastic,
        b: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        for len in [b.len(), x.len(), r.len()] {
            same_len(op.mesh.dofs(), len)?;
        }
        // r = b − K x, s[out] = r·r, always f64.
        let v = ApplyVectors {
            x,
            b,
            y: r,
            fixup: Fixup::Residual,
            s,
            out,
        };
        self.topo_apply(op, OpPrecision::F64, v)
    }

    fn elastic_diagonal(
        &self,
        op: &mut CudaElastic,
        diag: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(op.mesh.dofs(), diag.len())?;
        self.topo_diag(op, diag)
    }

    type ElasticTransfer = mg::CudaTransfer;

    fn elastic_transfer_new(&self, t: &Transfer) -> Result<mg::CudaTransfer, BackendError> {
        self.topmg_transfer(t)
    }

    fn elastic_restrict(
        &self,
        t: &mg::CudaTransfer,
        rf: &CudaSlice<f64>,
        rc: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.topmg_apply(t, true, rf, rc)
    }

    fn elastic_prolong_add(
        &self,
        t: &mg::CudaTransfer,
        xc: &CudaSlice<f64>,
        xf: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.topmg_apply(t, false, xc, xf)
    }

    fn elastic_coarsen_moduli(
        &self,
        t: &mg::CudaTransfer,
        fine: &CudaElastic,
        coarse: &mut CudaElastic,
    ) -> Result<(), BackendError> {
        self.topmg_coarse_moduli(t, fine, coarse)
    }

    fn elastic_moduli(&self, op: &CudaElastic) -> Result<Vec<f64>, BackendError> {
        let host = self
            .stream()
            .clone_dtoh(&op.e64)
            .map_err(|e| driver_err("downloading element moduli", e))?;
        self.sync("downloading element moduli")?;
        Ok(host)
    }

    fn dense_matvec(
        &self,
        a: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.topmg_dense_matvec(a, x, y)
    }

    fn element_energies(
        &self,
        op: &mut CudaElastic,
        u: &CudaSlice<f64>,
    ) -> Result<Vec<f64>, BackendError> {
        same_len(op.mesh.dofs(), u.len())?;
        self.topo_energies(op, u)
    }
}

/// topopt's kernel families: the operator's, the multigrid transfers' and
/// the design update's (listed with the executor's in
/// [`crate::kernel_families::all`]).
pub fn families() -> [&'static KernelFamily; 3] {
    [&TOPOPT, &design::TOPOPT_DESIGN, &mg::TOPOPT_MG]
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_point_is_in_its_source() {
        for f in super::families() {
            assert!(f.missing_entry_points(|_| None).is_empty(), "{}", f.file);
        }
    }
}
