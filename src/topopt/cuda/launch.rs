//! Launchers of `kernels/topopt.cu`, one per schedule, each launch checked
//! through [`CudaBackend::run`]. Grids: element kernels one thread per
//! element (the fused one in blocks of [`FUSED_BLOCK`]), the node-centred
//! kernel one per node (with its own reduction partials), the fix-up on the
//! backend's reduction grid. Dot products use the deterministic last-block
//! reduction of `common.cu`.

use super::TOPOPT;
use super::{zeros, CudaElastic};
use crate::backend::cuda::launch::{driver_err, rows_config, slot};
use crate::backend::cuda::CudaBackend;
use crate::backend::BackendError;
use crate::topopt::backend::{OpPrecision, OperatorKind};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// Threads per block of the fused kernel. The paper uses 128; with
/// warp-merged atomics 512 measured fastest on the H200 (f64 at 1M elements:
/// 176 µs against 286 at 128). A multiple of 32, as the merged kernel's warp
/// shuffles need, and its launch bound.
pub const FUSED_BLOCK: u32 = 512;

/// Mesh sizes as the kernels take them (`int`; checked in `elastic_new`).
pub(super) fn dims(op: &CudaElastic) -> (i32, i32, i32, i32) {
    let m = &op.mesh;
    (
        m.elements() as i32,
        m.nelx as i32,
        m.nely as i32,
        m.nelz as i32,
    )
}

/// What the fix-up of an apply writes, as the kernels' `mode` argument.
#[derive(Clone, Copy, Debug)]
#[repr(i32)]
pub(super) enum Fixup {
    /// y = K x, s[out] = x·y.
    ApplyDot = 0,
    /// y = b − K x, s[out] = y·y.
    Residual = 1,
}

/// The vectors of one apply: `b` is read by [`Fixup::Residual`] only (an
/// apply passes x again), and the dot lands in `s[out]`.
pub(super) struct ApplyVectors<'a> {
    pub x: &'a CudaSlice<f64>,
    pub b: &'a CudaSlice<f64>,
    pub y: &'a mut CudaSlice<f64>,
    pub fixup: Fixup,
    pub s: &'a mut CudaSlice<f64>,
    pub out: usize,
}

impl CudaBackend {
    pub(super) fn topo_zero<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        v: &mut CudaSlice<T>,
    ) -> Result<(), BackendError> {
        self.stream()
            .memset_zeros(v)
            .map_err(|e| driver_err("zeroing the topopt accumulator", e))
    }

    /// The apply and its fix-up (see [`Fixup`]), in the given precision and
    /// the operator's schedule.
    pub(super) fn topo_apply(
        &self,
        op: &mut CudaElastic,
        prec: OpPrecision,
        v: ApplyVectors<'_>,
    ) -> Result<(), BackendError> {
        match (op.kind, prec) {
            (OperatorKind::NodeCentred, _) => self.topo_node(op, prec, v),
            (OperatorKind::Fused, OpPrecision::F32) => {
                self.topo_fused_a32(op, v.x)?;
                let acc = op.acc32.as_ref().expect("allocated by topo_fused_a32");
                self.topo_finish(op, Some(acc), v)
            }
            (OperatorKind::Fused, OpPrecision::F64) => {
                self.topo_fused_f64(op, v.x, v.y)?;
                // K_ff x accumulated in y; fix-up in place.
                self.topo_finish(op, None, v)
            }
        }
    }

    /// The element pass alone: zeroing and the element kernels of the atomic
    /// (fused) schedule, without the fix-up and dot (the benchmark's kernel-only
    /// time). Returns false, doing nothing, for the node-centred schedule,
    /// which is one kernel.
    pub fn topo_element_pass(
        &self,
        op: &mut CudaElastic,
        prec: OpPrecision,
        x: &CudaSlice<f64>,
        acc: &mut CudaSlice<f64>,
    ) -> Result<bool, BackendError> {
        match (op.kind, prec) {
            (OperatorKind::NodeCentred, _) => return Ok(false),
            (OperatorKind::Fused, OpPrecision::F32) => self.topo_fused_a32(op, x)?,
            (OperatorKind::Fused, OpPrecision::F64) => self.topo_fused_f64(op, x, acc)?,
        }
        Ok(true)
    }

    /// The fix-up from the f32 accumulator `acc32`, or (None) from y itself,
    /// where the f64 kernel accumulated.
    fn topo_finish(
        &self,
        op: &CudaElastic,
        acc32: Option<&CudaSlice<f32>>,
        v: ApplyVectors<'_>,
    ) -> Result<(), BackendError> {
        let out = slot(v.s, v.out)?;
        let name = match acc32 {
            Some(_) => "topopt_finish_f32",
            None => "topopt_finish_f64",
        };
        let f = self.kernel(&TOPOPT, name)?;
        let n = op.mesh.dofs() as i64;
        let mode = v.fixup as i32;
        let red = self.reduce_scratch();
        let mut args = self.stream().launch_builder(&f);
        match acc32 {
            Some(acc) => args.arg(acc),
            // acc aliases y (the kernel's acc is not __restrict__).
            None => args.arg(&*v.y),
        };
        args.arg(v.x)
            .arg(&op.fixed)
            .arg(v.b)
            .arg(&*v.y)
            .arg(&n)
            .arg(&mode);
        args.arg(&red.partials).arg(&red.ticket).arg(v.s).arg(&out);
        // SAFETY: arguments in the kernel's order and types; every vector
        // has mesh.dofs() entries (checked by the callers).
        unsafe { self.run(name, &mut args, red.config(op.mesh.dofs())) }
    }

    /// acc = 0, then acc += Eₑ Kₑ uₑ over all elements (fused kernel, f64
    /// arithmetic and atomics).
    fn topo_fused_f64(
        &self,
        op: &CudaElastic,
        x: &CudaSlice<f64>,
        acc: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.topo_zero(acc)?;
        let (nel, nelx, nely, _) = dims(op);
        const NAME: &str = "topopt_fusedm_f64";
        let f = self.kernel(&TOPOPT, NAME)?;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&*op.kp64).arg(&op.e64);
        args.arg(x)
            .arg(&op.fixed)
            .arg(acc)
            .arg(&nel)
            .arg(&nelx)
            .arg(&nely);
        // SAFETY: Ke has 576 entries, E nel, x/fixed/acc mesh.dofs().
        unsafe { self.run(NAME, &mut args, fused_config(nel as usize)) }
    }

    /// x32 = x; acc32 = 0; acc32 += Eₑ Kₑ uₑ, all f32.
    fn topo_fused_a32(&self, op: &mut CudaElastic, x: &CudaSlice<f64>) -> Result<(), BackendError> {
        let dofs = op.mesh.dofs();
        if op.x32.is_none() {
            op.x32 = Some(zeros(self, dofs, "x (f32)")?);
            op.acc32 = Some(zeros(self, dofs, "the f32 accumulator")?);
        }
        let (nel, nelx, nely, _) = dims(op);
        let CudaElastic { x32, acc32, .. } = op;
        let (x32, acc32) = (x32.as_mut().expect("set"), acc32.as_mut().expect("set"));
        {
            const NAME: &str = "topopt_to_f32";
            let f = self.kernel(&TOPOPT, NAME)?;
            let n = dofs as i64;
            let mut args = self.stream().launch_builder(&f);
            args.arg(x).arg(&mut *x32).arg(&n);
            // SAFETY: both have mesh.dofs() entries.
            unsafe { self.run(NAME, &mut args, rows_config(dofs))? };
        }
        self.topo_zero(acc32)?;
        const NAME: &str = "topopt_fusedm_f32_a32";
        let f = self.kernel(&TOPOPT, NAME)?;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&*op.kp32);
        args.arg(&op.e32).arg(&*x32).arg(&op.fixed).arg(&mut *acc32);
        args.arg(&nel).arg(&nelx).arg(&nely);
        // SAFETY: as in topo_fused_f64.
        unsafe { self.run(NAME, &mut args, fused_config(nel as usize)) }
    }

    /// Node-centred apply with its fix-up and dot, in one kernel.
    fn topo_node(
        &self,
        op: &CudaElastic,
        prec: OpPrecision,
        v: ApplyVectors<'_>,
    ) -> Result<(), BackendError> {
        let out = slot(v.s, v.out)?;
        let mode = v.fixup as i32;
        let (_, nelx, nely, nelz) = dims(op);
        let name = match prec {
            OpPrecision::F64 => "topopt_nodep_f64",
            OpPrecision::F32 => "topopt_nodep_f32",
        };
        let f = self.kernel(&TOPOPT, name)?;
        let mut args = self.stream().launch_builder(&f);
        match prec {
            OpPrecision::F64 => args.arg(&*op.kp64).arg(&op.e64),
            OpPrecision::F32 => args.arg(&*op.kp32).arg(&op.e32),
        };
        args.arg(v.x).arg(&op.fixed).arg(v.b).arg(v.y);
        args.arg(&nelx).arg(&nely).arg(&nelz).arg(&mode);
        args.arg(&op.node_partials)
            .arg(&op.node_ticket)
            .arg(v.s)
            .arg(&out);
        // SAFETY: vectors mesh.dofs(), E nel, Ke 576; one thread per node in
        // blocks of BLOCK, one partial per block (allocated in elastic_new).
        unsafe { self.run(name, &mut args, rows_config(op.mesh.nodes())) }
    }

    /// diag = Σₑ Eₑ diag(Kₑ) per DOF, 1 on fixed DOFs.
    pub(super) fn topo_diag(
        &self,
        op: &CudaElastic,
        diag: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let (_, nelx, nely, nelz) = dims(op);
        const NAME: &str = "topopt_diag_f64";
        let f = self.kernel(&TOPOPT, NAME)?;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&op.ke64).arg(&op.e64).arg(&op.fixed).arg(diag);
        args.arg(&nelx).arg(&nely).arg(&nelz);
        // SAFETY: diag/fixed mesh.dofs(), E nel, Ke 576.
        unsafe { self.run(NAME, &mut args, rows_config(op.mesh.nodes())) }
    }

    /// cₑ = uₑᵀ Kₑ uₑ, copied to the host.
    pub(super) fn topo_energies(
        &self,
        op: &mut CudaElastic,
        u: &CudaSlice<f64>,
    ) -> Result<Vec<f64>, BackendError> {
        self.topo_energies_device(op, u)?;
        let c = op.energies.as_ref().expect("computed above");
        let host = self
            .stream()
            .clone_dtoh(c)
            .map_err(|e| driver_err("downloading element energies", e))?;
        self.sync("downloading element energies")?;
        Ok(host)
    }

    /// The element energies into `op.energies` (allocated on first use),
    /// left on the device.
    pub(super) fn topo_energies_device(
        &self,
        op: &mut CudaElastic,
        u: &CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let (nel, nelx, nely, _) = dims(op);
        if op.energies.is_none() {
            op.energies = Some(zeros(self, nel as usize, "element energies")?);
        }
        let c = op.energies.as_mut().expect("allocated above");
        const NAME: &str = "topopt_energy_f64";
        let f = self.kernel(&TOPOPT, NAME)?;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&op.ke64).arg(u).arg(&op.fixed).arg(&mut *c);
        args.arg(&nel).arg(&nelx).arg(&nely);
        // SAFETY: u/fixed mesh.dofs(), c nel, Ke 576.
        unsafe { self.run(NAME, &mut args, rows_config(nel as usize)) }
    }
}

/// One thread per element in blocks of [`FUSED_BLOCK`].
fn fused_config(nel: usize) -> LaunchConfig {
    let blocks = nel
        .div_ceil(FUSED_BLOCK as usize)
        .clamp(1, i32::MAX as usize);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (FUSED_BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::{fused_config, FUSED_BLOCK};
    use crate::topopt::cuda::KeParam;

    #[test]
    fn fused_grid_covers_every_element_once_per_thread() {
        let block = FUSED_BLOCK as usize;
        for nel in [1usize, 12, 64_000, 4_913_000] {
            let cfg = fused_config(nel);
            let threads = cfg.grid_dim.0 as usize * block;
            assert!(threads >= nel && threads - nel < block);
            assert_eq!(cfg.block_dim, (FUSED_BLOCK, 1, 1));
        }
        assert!(FUSED_BLOCK.is_multiple_of(32));
    }

    #[test]
    fn ke_parameter_is_the_c_struct_size() {
        // TopoKe64 / TopoKe32 in kernels/topopt.cu: 576 entries, no padding.
        assert_eq!(std::mem::size_of::<KeParam<f64>>(), 576 * 8);
        assert_eq!(std::mem::size_of::<KeParam<f32>>(), 576 * 4);
    }
}
