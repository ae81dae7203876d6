//! The CUDA implementation of the thermal work: [`ThermalOps`] and
//! [`NonlinearOps`](super::nonlinear::NonlinearOps) for [`CudaBackend`],
//! launching the kernel families declared here (the steady and transient
//! assembly and the k(T) tables: `assemble`, `assemble_inputs`,
//! `assemble_kt`; the outer iteration's reductions and the leakage:
//! `nonlinear`, `nonlinear_reduce`, `leakage`; the post-solve statistics:
//! `stats`). Each family is compiled the first time one of its kernels is
//! launched, through the executor's NVRTC machinery, and every launch goes
//! through [`CudaBackend`]'s checked launcher.

mod assemble;
mod assemble_inputs;
mod assemble_kt;
mod leakage;
mod nonlinear;
mod nonlinear_reduce;
mod stats;

pub use assemble::{DeviceSystem, ASSEMBLE};
pub use nonlinear::CudaPhysics;
pub use nonlinear_reduce::NONLINEAR;
pub use stats::STATS;

use super::{DeviceAssembly, ThermalOps};
use crate::backend::cuda::{CudaBackend, CudaMatrix, KernelFamily};
use crate::backend::BackendError;
use crate::thermal::assembly_input::AssemblyInput;
use crate::thermal::field_stats::device::{StatsPartials, StatsRequest};
use cudarc::driver::CudaSlice;

/// The thermal kernel families (see [`crate::kernel_families`], the
/// inventory of every family the binary embeds).
pub fn families() -> [&'static KernelFamily; 3] {
    [&ASSEMBLE, &NONLINEAR, &STATS]
}

impl ThermalOps for CudaBackend {
    fn assemble_on_device(
        &self,
        inp: &AssemblyInput,
    ) -> Result<Option<DeviceAssembly<CudaMatrix, CudaSlice<f64>>>, BackendError> {
        if self.knobs().host_assembly {
            return Ok(None);
        }
        let sys = self.assemble_steady(inp)?;
        // The films stay on the device: the statistics read them there
        // (`field_partials`), the offset sums them there.
        Ok(Some(DeviceAssembly {
            g_top: sys.g_top,
            g_bottom: sys.g_bottom,
            a: sys.a,
            rhs: sys.rhs,
        }))
    }

    fn chunked_total(&self, v: &CudaSlice<f64>) -> Result<f64, BackendError> {
        self.chunked_total_kernel(v)
    }

    fn field_partials(
        &self,
        x: &CudaSlice<f64>,
        g_top: &CudaSlice<f64>,
        g_bottom: &CudaSlice<f64>,
        req: &StatsRequest,
    ) -> Result<Option<StatsPartials>, BackendError> {
        self.field_partials_kernels(x, g_top, g_bottom, req)
            .map(Some)
    }

    fn shift_rhs(
        &self,
        a: &CudaMatrix,
        c: f64,
        b: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        self.shift_rhs_kernel(a, c, b)
    }
}
