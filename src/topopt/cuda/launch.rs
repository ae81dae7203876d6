//! Launchers of `kernels/topopt.cu`, one per schedule, each launch checked
//! through [`CudaBackend::run`]. Grids: element kernels one thread per
//! element (the fused one with the operator's block size), the node-centred
//! kernel one per node (with its own reduction partials), the fix-up on the backend's reduction grid. Dot
//! products use the deterministic last-block reduction of `common.cu`.

use super::TOPOPT;
use super::{zeros, CudaElastic, F32Atomics, KeSource};
use crate::backend::cuda::launch::{driver_err, rows_config, slot};
use crate::backend::cuda::CudaBackend;
use crate::backend::BackendError;
use crate::topopt::backend::{OpPrecision, OperatorKind};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

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

impl CudaBackend {
    pub(super) fn topo_zero<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
        &self,
        v: &mut CudaSlice<T>,
    ) -> Result<(), BackendError> {
        self.stream()
            .memset_zeros(v)
            .map_err(|e| driver_err("zeroing the topopt accumulator", e))
    }

    /// `mode` 0: y = K x, s[out] = x·y.  `mode` 1: y = b − K x, s[out] = y·y.
    /// In the given precision and the operator's schedule.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn topo_apply(
        &self,
        op: &mut CudaElastic,
        prec: OpPrecision,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
        mode: i32,
        s: &mut CudaSlice<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let out = slot(s, out)?;
        match (op.kind, prec, op.f32_atomics) {
            (OperatorKind::NodeCentred, _, _) => {
                return self.topo_node(op, prec, x, b, y, mode, s, out)
            }
            (OperatorKind::Fused, OpPrecision::F32, F32Atomics::F32) => {
                self.topo_fused_a32(op, x)?;
                let acc = op.acc32.as_ref().expect("allocated by topo_fused_a32");
                return self.topo_finish("topopt_finish_f32", op, acc, x, b, y, mode, s, out);
            }
            (OperatorKind::Fused, _, _) => self.topo_fused(op, prec, x, y)?,
        }
        // K_ff x accumulated in y; fix-up in place (acc aliases y).
        const NAME: &str = "topopt_finish_f64";
        let f = self.kernel(&TOPOPT, NAME)?;
        let n = op.mesh.dofs() as i64;
        let red = self.reduce_scratch();
        let mut args = self.stream().launch_builder(&f);
        args.arg(&*y)
            .arg(x)
            .arg(&op.fixed)
            .arg(b)
            .arg(&*y)
            .arg(&n)
            .arg(&mode);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&out);
        // SAFETY: arguments in the kernel's order and types; every vector
        // has mesh.dofs() entries (checked by the callers).
        unsafe { self.run(NAME, &mut args, red.config(op.mesh.dofs())) }
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
        match (op.kind, prec, op.f32_atomics) {
            (OperatorKind::NodeCentred, _, _) => return Ok(false),
            (OperatorKind::Fused, OpPrecision::F32, F32Atomics::F32) => {
                self.topo_fused_a32(op, x)?
            }
            (OperatorKind::Fused, _, _) => self.topo_fused(op, prec, x, acc)?,
        }
        Ok(true)
    }

    /// The fix-up from a separate (f32) accumulator.
    #[allow(clippy::too_many_arguments)]
    fn topo_finish(
        &self,
        name: &'static str,
        op: &CudaElastic,
        acc: &CudaSlice<f32>,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
        mode: i32,
        s: &mut CudaSlice<f64>,
        out: i32,
    ) -> Result<(), BackendError> {
        let f = self.kernel(&TOPOPT, name)?;
        let n = op.mesh.dofs() as i64;
        let red = self.reduce_scratch();
        let mut args = self.stream().launch_builder(&f);
        args.arg(acc)
            .arg(x)
            .arg(&op.fixed)
            .arg(b)
            .arg(y)
            .arg(&n)
            .arg(&mode);
        args.arg(&red.partials).arg(&red.ticket).arg(s).arg(&out);
        // SAFETY: as in topo_apply.
        unsafe { self.run(name, &mut args, red.config(op.mesh.dofs())) }
    }

    /// acc = 0, then acc += Eₑ Kₑ uₑ over all elements (fused kernel, f64
    /// atomics; f64 or f32 arithmetic).
    fn topo_fused(
        &self,
        op: &CudaElastic,
        prec: OpPrecision,
        x: &CudaSlice<f64>,
        acc: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.topo_zero(acc)?;
        let (nel, nelx, nely, _) = dims(op);
        let cfg = fused_config(nel as usize, op.block);
        let name = match (prec, op.ke_source) {
            (OpPrecision::F64, KeSource::Shared) => "topopt_fused_f64",
            (OpPrecision::F64, KeSource::Param) => "topopt_fusedp_f64",
            (OpPrecision::F64, KeSource::ParamMerged) => "topopt_fusedm_f64",
            (OpPrecision::F32, KeSource::Shared) => "topopt_fused_f32_a64",
            (OpPrecision::F32, KeSource::Param) => "topopt_fusedp_f32_a64",
            (OpPrecision::F32, KeSource::ParamMerged) => "topopt_fusedm_f32_a64",
        };
        let f = self.kernel(&TOPOPT, name)?;
        let mut args = self.stream().launch_builder(&f);
        push_ke(&mut args, op, prec);
        args.arg(x)
            .arg(&op.fixed)
            .arg(acc)
            .arg(&nel)
            .arg(&nelx)
            .arg(&nely);
        // SAFETY: Ke has 576 entries, E nel, x/fixed/acc mesh.dofs().
        unsafe { self.run(name, &mut args, cfg) }
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
        let name = match op.ke_source {
            KeSource::Shared => "topopt_fused_f32_a32",
            KeSource::Param => "topopt_fusedp_f32_a32",
            KeSource::ParamMerged => "topopt_fusedm_f32_a32",
        };
        let f = self.kernel(&TOPOPT, name)?;
        let mut args = self.stream().launch_builder(&f);
        match op.ke_source {
            KeSource::Shared => args.arg(&op.ke32),
            KeSource::Param | KeSource::ParamMerged => args.arg(&*op.kp32),
        };
        args.arg(&op.e32).arg(&*x32).arg(&op.fixed).arg(&mut *acc32);
        args.arg(&nel).arg(&nelx).arg(&nely);
        // SAFETY: as in topo_fused.
        unsafe { self.run(name, &mut args, fused_config(nel as usize, op.block)) }
    }

    /// Node-centred y = K x (mode 0) or y = b − K x (mode 1), with the dot.
    #[allow(clippy::too_many_arguments)]
    fn topo_node(
        &self,
        op: &CudaElastic,
        prec: OpPrecision,
        x: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        y: &mut CudaSlice<f64>,
        mode: i32,
        s: &mut CudaSlice<f64>,
        out: i32,
    ) -> Result<(), BackendError> {
        let (_, nelx, nely, nelz) = dims(op);
        let name = match (prec, op.ke_source) {
            (OpPrecision::F64, KeSource::Shared) => "topopt_node_f64",
            (OpPrecision::F64, _) => "topopt_nodep_f64",
            (OpPrecision::F32, KeSource::Shared) => "topopt_node_f32",
            (OpPrecision::F32, _) => "topopt_nodep_f32",
        };
        let f = self.kernel(&TOPOPT, name)?;
        let mut args = self.stream().launch_builder(&f);
        push_ke(&mut args, op, prec);
        args.arg(x).arg(&op.fixed).arg(b).arg(y);
        args.arg(&nelx).arg(&nely).arg(&nelz).arg(&mode);
        args.arg(&op.node_partials)
            .arg(&op.node_ticket)
            .arg(s)
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

/// Kₑ and Eₑ of the precision, Kₑ from where the operator keeps it.
fn push_ke<'a>(args: &mut cudarc::driver::LaunchArgs<'a>, op: &'a CudaElastic, prec: OpPrecision) {
    match (prec, op.ke_source) {
        (OpPrecision::F64, KeSource::Shared) => args.arg(&op.ke64).arg(&op.e64),
        (OpPrecision::F64, _) => args.arg(&*op.kp64).arg(&op.e64),
        (OpPrecision::F32, KeSource::Shared) => args.arg(&op.ke32).arg(&op.e32),
        (OpPrecision::F32, _) => args.arg(&*op.kp32).arg(&op.e32),
    };
}

/// One thread per element in blocks of `block` threads.
fn fused_config(nel: usize, block: u32) -> LaunchConfig {
    let blocks = nel.div_ceil(block as usize).clamp(1, i32::MAX as usize);
    LaunchConfig {
        grid_dim: (blocks as u32, 1, 1),
        block_dim: (block, 1, 1),
        shared_mem_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::{fused_config, KeSource};
    use crate::topopt::cuda::KeParam;

    #[test]
    fn fused_grid_covers_every_element_once_per_thread() {
        for (nel, block) in [(1usize, 32u32), (12, 128), (64_000, 512), (4_913_000, 96)] {
            let cfg = fused_config(nel, block);
            let threads = cfg.grid_dim.0 as usize * block as usize;
            assert!(threads >= nel && threads - nel < block as usize);
            assert_eq!(cfg.block_dim, (block, 1, 1));
        }
    }

    #[test]
    fn ke_parameter_is_the_c_struct_size() {
        // TopoKe64 / TopoKe32 in kernels/topopt.cu: 576 entries, no padding.
        assert_eq!(std::mem::size_of::<KeParam<f64>>(), 576 * 8);
        assert_eq!(std::mem::size_of::<KeParam<f32>>(), 576 * 4);
        assert_eq!(KeSource::default(), KeSource::ParamMerged);
    }
}
