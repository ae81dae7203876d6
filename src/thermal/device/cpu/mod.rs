//! The CPU's thermal work: the host defaults of [`ThermalOps`] (the system
//! is assembled in parallel on the host, the statistics fold the field where
//! it already is) and the outer iteration of temperature-dependent solves.

mod nonlinear;

pub use nonlinear::CpuPhysics;

use super::ThermalOps;
use crate::backend::cpu::CpuBackend;

impl ThermalOps for CpuBackend {}
