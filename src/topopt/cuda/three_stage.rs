//! Launchers of the three-stage schedule
//! ([`OperatorKind::ThreeStage`](crate::topopt::backend::OperatorKind)):
//! gather the element vectors, multiply them by Kₑ in a batch, scatter the
//! products with atomics. The paper's baseline, kept as the reference the
//! fused and node-centred schedules are measured and tested against; split
//! from `launch.rs`, which holds those and dispatches between all three.

use super::launch::dims;
use super::TOPOPT;
use super::{zeros, CudaElastic};
use crate::backend::cuda::launch::rows_config;
use crate::backend::cuda::CudaBackend;
use crate::backend::BackendError;
use crate::topopt::backend::OpPrecision;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

impl CudaBackend {
    /// acc = 0; gather uₑ = Eₑ x[dofs(e)]; vₑ = Kₑ uₑ; acc[dofs(e)] += vₑ.
    pub(super) fn topo_three_stage(
        &self,
        op: &mut CudaElastic,
        prec: OpPrecision,
        x: &CudaSlice<f64>,
        acc: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        let (nel, nelx, nely, _) = dims(op);
        let len = 24 * nel as usize;
        // Gather and scatter: blockIdx.y is the local DOF.
        let per_dof = LaunchConfig {
            grid_dim: (rows_config(nel as usize).grid_dim.0, 24, 1),
            ..rows_config(nel as usize)
        };
        match prec {
            OpPrecision::F64 if op.stages64.is_none() => {
                op.stages64 = Some((
                    zeros(self, len, "element vectors")?,
                    zeros(self, len, "element products")?,
                ));
            }
            OpPrecision::F32 if op.stages32.is_none() => {
                op.stages32 = Some((
                    zeros(self, len, "element vectors (f32)")?,
                    zeros(self, len, "element products (f32)")?,
                ));
            }
            _ => {}
        }
        self.topo_zero(acc)?;
        let names: [&'static str; 3] = match prec {
            OpPrecision::F64 => ["topopt_gather_f64", "topopt_gemm_f64", "topopt_scatter_f64"],
            OpPrecision::F32 => ["topopt_gather_f32", "topopt_gemm_f32", "topopt_scatter_f32"],
        };
        let CudaElastic {
            stages64,
            stages32,
            ke64,
            ke32,
            e64,
            e32,
            fixed,
            ..
        } = op;
        let dims = (nel, nelx, nely);
        match prec {
            OpPrecision::F64 => {
                let (u, v) = stages64.as_mut().expect("allocated above");
                self.topo_stages(names, ke64, e64, fixed, x, u, v, acc, dims, per_dof)
            }
            OpPrecision::F32 => {
                let (u, v) = stages32.as_mut().expect("allocated above");
                self.topo_stages(names, ke32, e32, fixed, x, u, v, acc, dims, per_dof)
            }
        }
    }

    /// The three launches of the three-stage operator, in the element
    /// precision `T` (the kernels named in `names` take T for Kₑ, Eₑ and the
    /// element buffers u, v; x and acc are f64).
    #[allow(clippy::too_many_arguments)]
    fn topo_stages<T: cudarc::driver::DeviceRepr>(
        &self,
        names: [&'static str; 3],
        ke: &CudaSlice<T>,
        e: &CudaSlice<T>,
        fixed: &CudaSlice<u8>,
        x: &CudaSlice<f64>,
        u: &mut CudaSlice<T>,
        v: &mut CudaSlice<T>,
        acc: &mut CudaSlice<f64>,
        (nel, nelx, nely): (i32, i32, i32),
        per_dof: LaunchConfig,
    ) -> Result<(), BackendError> {
        let stream = self.stream();
        let g = self.kernel(&TOPOPT, names[0])?;
        let mut ga = stream.launch_builder(&g);
        ga.arg(e)
            .arg(x)
            .arg(fixed)
            .arg(&mut *u)
            .arg(&nel)
            .arg(&nelx)
            .arg(&nely);
        // SAFETY: u has 24·nel entries, E nel, x/fixed mesh.dofs().
        unsafe { self.run(names[0], &mut ga, per_dof)? };
        let m = self.kernel(&TOPOPT, names[1])?;
        let mut ma = stream.launch_builder(&m);
        ma.arg(ke).arg(&*u).arg(&mut *v).arg(&nel);
        // SAFETY: u, v 24·nel; Ke 576.
        unsafe { self.run(names[1], &mut ma, rows_config(nel as usize))? };
        let sc = self.kernel(&TOPOPT, names[2])?;
        let mut sa = stream.launch_builder(&sc);
        sa.arg(&*v).arg(acc).arg(&nel).arg(&nelx).arg(&nely);
        // SAFETY: v 24·nel, acc mesh.dofs().
        unsafe { self.run(names[2], &mut sa, per_dof) }
    }
}
