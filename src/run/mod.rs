//! What a run needs before its work starts: the device it solves on,
//! opened one way for every command (probe, fallback, kernels loaded while
//! the host works).

pub mod device;

pub use device::{
    check_ordinal, open, open_while, Backends, Device, DeviceChoice, DeviceProbe, OpenError,
    OpenRequest, Opened,
};
