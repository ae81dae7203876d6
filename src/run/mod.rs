//! What a run needs before its work starts: its plan, resolved once from
//! what the caller asked for, and the device it solves on, opened one way
//! for every command (probe, fallback, kernels loaded while the host
//! works).

pub mod device;
pub mod plan;

pub use device::{
    check_ordinal, open, open_while, Backends, Device, DeviceChoice, DeviceProbe, OpenError,
    OpenRequest, Opened,
};
pub use plan::{
    check_host_memory, check_warnings, precision_on, Outputs, PlanError, PlanRequest, RunPlan,
    SolverRequest,
};
