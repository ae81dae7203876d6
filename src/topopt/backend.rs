//! What a backend supplies for the elastic solve (a capability trait, like
//! `backend::QuadDiagOps`), on top of the core `Backend` (whose f64 vectors,
//! scalar slots, BLAS-1 and reductions the Krylov layer uses). The operator K(E) v is matrix-free:
//! per-element moduli Eₑ times the one unit element matrix `Kₑ`, gathered and
//! scattered through the mesh numbering of [`super::mesh`]; K is never formed.
//!
//! Fixed (Dirichlet, zero-displacement) DOFs are eliminated symmetrically:
//! their rows and columns act as the identity, so `(K v)ᵢ = vᵢ` on a fixed
//! DOF and a fixed DOF's value never reaches a free one. Right-hand sides are
//! zero there, so the solution is too.

use super::element::ElementMatrix;
use super::mesh::Mesh;
use super::mg::transfer::Transfer;
use crate::backend::BackendError;
use crate::linalg::precond::chebyshev::ChebyshevLevels;

/// How the operator is scheduled on the device. The CPU has one
/// implementation and accepts every kind; the GPU implements each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
pub enum OperatorKind {
    /// One kernel: gather, multiply with Kₑ held in shared memory, atomic
    /// scatter (the paper's fused kernel).
    #[default]
    Fused,
    /// One thread per node gathers from its (up to) 8 elements: no atomics,
    /// deterministic.
    NodeCentred,
}

/// Arithmetic of the operator. Vectors stay f64 in the interface; `F32`
/// computes (and may store Kₑ, Eₑ and intermediates) in f32, for use inside
/// an f64 residual-correction loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
pub enum OpPrecision {
    F64,
    F32,
}

/// Bytes a run on `mesh` needs, counted before anything is allocated so that
/// a mesh too large for the machine is refused with a clear error rather than
/// an aborted allocation: (host: the design arrays of the optimizer, about 16
/// f64 per element, and the problem's force and fixed mask; solver: where the
/// operator runs, ten f64 DOF vectors of PCG and the displacement, the f32
/// operand/accumulator of the f32 operator, the mask, Eₑ in f64 and f32 and the
/// element energies, plus `extra_vectors` DOF vectors of the
/// preconditioner, `PrecondKind::extra_vectors`, plus the design loop's 11
/// element fields where it runs: x, x_new, the best ρ̄ and the eight of
/// `design::Fields`).
pub fn memory_estimate(mesh: &Mesh, extra_vectors: usize) -> (u64, u64) {
    let (nel, dofs) = (mesh.elements() as u64, mesh.dofs() as u64);
    let host = 128 * nel + 9 * dofs;
    let vectors = 10 + extra_vectors as u64;
    let design = 11 * 8 * nel;
    let solver = (vectors * 8 + 2 * 4 + 1) * dofs + (8 + 4 + 8) * nel + design;
    (host, solver)
}

/// Fails when `needed` bytes of host memory are not available.
pub fn check_host_memory(
    mesh: &Mesh,
    needed: u64,
    advice: &'static str,
) -> Result<(), BackendError> {
    match crate::backend::cpu::available_memory() {
        Some(free) if needed > free => Err(BackendError::OutOfMemory {
            needed,
            free,
            size: mesh.elements(),
            unit: "elements",
            memory: "host memory",
            advice,
        }),
        _ => Ok(()),
    }
}

/// On top of the core [`crate::backend::Backend`] (through
/// [`ChebyshevLevels`]: the elastic solve runs `linalg`'s preconditioners,
/// whose kernels the backend must have).
pub trait ElasticBackend: ChebyshevLevels + 'static {
    /// The operator's device data: Kₑ (f64 and f32), Eₑ, the fixed-DOF mask,
    /// whatever scratch its schedule needs.
    type Elastic;

    /// Fails early, before the optimizer allocates anything, when a run on
    /// `mesh`, whose preconditioner keeps `extra_vectors` DOF vectors, cannot
    /// fit this device (see [`memory_estimate`]).
    fn check_elastic_capacity(&self, mesh: &Mesh, extra_vectors: usize)
        -> Result<(), BackendError>;

    /// `fixed[d]` marks DOF d as fixed; `fixed.len() == mesh.dofs()`.
    fn elastic_new(
        &self,
        mesh: &Mesh,
        ke: &ElementMatrix,
        fixed: &[bool],
        kind: OperatorKind,
    ) -> Result<Self::Elastic, BackendError>;

    /// Sets the element moduli Eₑ (length `mesh.elements()`), e.g.
    /// Emin + ρ̃ₑᵖ(E0 − Emin). Called once per design iteration.
    fn elastic_set_moduli(&self, op: &mut Self::Elastic, e: &[f64]) -> Result<(), BackendError>;

    /// y = K x;  `s[out]` = x·y (the p·Ap of CG).
    fn elastic_apply_dot(
        &self,
        op: &mut Self::Elastic,
        precision: OpPrecision,
        x: &Self::Vector,
        y: &mut Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;

    /// r = b − K x in f64;  `s[out]` = r·r. The true residual, never the
    /// recurrence.
    fn elastic_residual(
        &self,
        op: &mut Self::Elastic,
        b: &Self::Vector,
        x: &Self::Vector,
        r: &mut Self::Vector,
        s: &mut Self::Scalars,
        out: usize,
    ) -> Result<(), BackendError>;

    /// diag(K) (1 on fixed DOFs), for the Jacobi preconditioner.
    fn elastic_diagonal(
        &self,
        op: &mut Self::Elastic,
        diag: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// A multigrid transfer ([`Transfer`]) where the operator lives.
    type ElasticTransfer;

    /// Uploads the transfer `t` (its fixed masks and dimensions).
    fn elastic_transfer_new(&self, t: &Transfer) -> Result<Self::ElasticTransfer, BackendError>;

    /// rc = Pᵀ rf (fine residual to the coarse right-hand side).
    fn elastic_restrict(
        &self,
        t: &Self::ElasticTransfer,
        rf: &Self::Vector,
        rc: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// xf += P xc (coarse correction added to the fine iterate).
    fn elastic_prolong_add(
        &self,
        t: &Self::ElasticTransfer,
        xc: &Self::Vector,
        xf: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// The coarse operator's moduli from the fine one's: each coarse
    /// element the mean of its children ([`Transfer::coarse_moduli`]), f64
    /// and f32, where the operators live (nothing crosses to the host).
    fn elastic_coarsen_moduli(
        &self,
        t: &Self::ElasticTransfer,
        fine: &Self::Elastic,
        coarse: &mut Self::Elastic,
    ) -> Result<(), BackendError>;

    /// The element moduli Eₑ, copied to the host (the multigrid's coarsest
    /// level: a few dozen values).
    fn elastic_moduli(&self, op: &Self::Elastic) -> Result<Vec<f64>, BackendError>;

    /// y = A x with A dense, n×n row-major in a vector of n² (n = x.len()):
    /// the multigrid's coarsest solve by its inverse.
    fn dense_matvec(
        &self,
        a: &Self::Vector,
        x: &Self::Vector,
        y: &mut Self::Vector,
    ) -> Result<(), BackendError>;

    /// Element strain energies with the unit modulus, cₑ = uₑᵀ Kₑ uₑ, copied
    /// to the host (length `mesh.elements()`): compliance is Σ Eₑ cₑ and its
    /// sensitivity −p ρ̃ᵖ⁻¹ (E0 − Emin) cₑ.
    fn element_energies(
        &self,
        op: &mut Self::Elastic,
        u: &Self::Vector,
    ) -> Result<Vec<f64>, BackendError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn preconditioner_vectors_add_eight_bytes_per_dof_each() {
        let mesh = Mesh::new(10, 6, 4);
        let (h0, s0) = memory_estimate(&mesh, 0);
        let (h6, s6) = memory_estimate(&mesh, 6);
        assert_eq!(h0, h6);
        assert_eq!(s6 - s0, 6 * 8 * mesh.dofs() as u64);
    }
}
