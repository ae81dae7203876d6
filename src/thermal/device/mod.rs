//! The thermal work done where the solve's vectors live, kept out of the
//! executor: the executor (`backend`) knows vectors, BLAS-1, reductions and
//! the Quad-Diag, Chebyshev, multigrid and batch kernels, and nothing of
//! stacks, powers or temperatures. [`ThermalOps`] adds the steady assembly,
//! the films' totals, the post-solve statistics and the right-hand-side
//! shift; [`nonlinear::NonlinearOps`] adds the outer iteration of
//! temperature-dependent solves. The CPU (`cpu`) takes every default (it
//! assembles and reduces on the host); CUDA (`cuda`) launches the kernel
//! families it declares itself (`kernels/assemble.cu`, `nonlinear.cu`,
//! `stats.cu`), compiled by the executor's NVRTC machinery and checked at
//! every launch, as the elastic operator's do. [`ThermalBackend`] names the
//! set the thermal drivers need.

pub mod cpu;
pub mod cuda;
pub mod nonlinear;

use crate::backend::{Backend, BackendError, ChebyshevBackend, QuadDiagOps};
use crate::thermal::assembly_input::AssemblyInput;
use crate::thermal::field_stats::device::{StatsPartials, StatsRequest};

/// The thermal system's own work on a device, on top of its Quad-Diag
/// matrix; every method has a host default, so an executor that assembles
/// and reduces on the host implements none.
pub trait ThermalOps: QuadDiagOps {
    /// The steady system of `inp` built on this device (device assembly):
    /// the matrix and the right-hand side where they will be
    /// used, and the planes' conductances to ambient on the host. `None`
    /// where this executor assembles on the host (the CPU, in parallel).
    fn assemble_on_device(
        &self,
        inp: &AssemblyInput,
    ) -> Result<Option<DeviceAssemblyOf<Self>>, BackendError> {
        let _ = inp;
        Ok(None)
    }
    /// Σ v (a plane of films) in the fixed chunks of
    /// [`CHUNK`](crate::backend::reduce::CHUNK), added in order, reduced where v lives
    /// (the default downloads it).
    fn chunked_total(&self, v: &Self::Vector) -> Result<f64, BackendError> {
        let h = self.download(v)?;
        Ok(crate::backend::reduce::chunked_sum(&h, |x| x))
    }

    /// The post-solve statistics of the solution `x` reduced where it lives
    /// ([`crate::thermal::field_stats::device`]), with the films `g_top`
    /// and `g_bottom` of its device assembly. `None`: this executor does
    /// not, and the caller folds the downloaded field.
    fn field_partials(
        &self,
        x: &Self::Vector,
        g_top: &Self::Vector,
        g_bottom: &Self::Vector,
        req: &StatsRequest,
    ) -> Result<Option<StatsPartials>, BackendError> {
        let _ = (x, g_top, g_bottom, req);
        Ok(None)
    }

    /// b −= c·amb(a), the shift of `linalg::offset` applied where b lives
    /// (the default goes through the host).
    fn shift_rhs(
        &self,
        a: &Self::Matrix,
        c: f64,
        b: &mut Self::Vector,
    ) -> Result<(), BackendError> {
        let amb = self.host_matrix(a)?.amb.clone();
        let mut h = self.download(b)?;
        if h.len() != amb.len() {
            return Err(BackendError::Length(h.len(), amb.len()));
        }
        h.iter_mut().zip(&amb).for_each(|(x, e)| *x -= c * e);
        *b = self.upload(&h)?;
        Ok(())
    }
}

/// The capabilities the thermal drivers need: the executor's solver set and
/// the thermal work on the same device.
pub trait ThermalBackend: ChebyshevBackend + nonlinear::NonlinearOps {}

impl<B: ChebyshevBackend + nonlinear::NonlinearOps> ThermalBackend for B {}

/// What [`ThermalOps::assemble_on_device`] returns.
pub struct DeviceAssembly<M, V> {
    pub a: M,
    /// Power per cell, W.
    pub rhs: V,
    /// Conductance to ambient per top-plane cell, W/K (one plane, where the
    /// matrix lives: the statistics read it there).
    pub g_top: V,
    /// Same for the bottom plane (zeros when adiabatic).
    pub g_bottom: V,
}

/// [`DeviceAssembly`] of backend `B`'s matrix and vector types.
pub type DeviceAssemblyOf<B> = DeviceAssembly<<B as QuadDiagOps>::Matrix, <B as Backend>::Vector>;
