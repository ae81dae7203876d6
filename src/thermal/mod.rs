//! Drivers: steady state and transient (backward Euler or TR-BDF2) from a resolved stack to a
//! temperature field and a [`summary::Summary`].

pub mod assembly_input;
pub mod block_stats;
pub mod block_stats_device;
pub mod device;
pub mod field_stats;
pub mod liquid;
mod liquid_nonlinear;
pub mod liquid_steady;
pub mod memory_plan;
pub mod nonlinear;
pub mod probes;
pub mod steady;
mod steady_device;
pub mod steady_options;
#[cfg(feature = "mpi")]
pub mod steady_ranks;
pub mod summarize;
pub mod summary;
pub mod sweep;
pub mod sweep_batch;
pub mod transient;
