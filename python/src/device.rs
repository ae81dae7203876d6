//! The devices a Python process solves on: each choice (`auto`, `cpu`,
//! `cuda:N`) is opened once, as the command line opens it
//! ([`cuth::run::open`]: `auto` probes CUDA and falls back to the CPU with
//! a note), and kept for the life of the process. Stacks and sessions
//! borrow it; a [`Simulation`](cuth::simulation::Simulation) borrows its
//! backend, so the backend must outlive every session a script holds.
//! The CLI never tears its device down either (the driver reclaims the
//! context at exit), so each opened backend is leaked once on purpose:
//! at most one per choice, never per call.

use cuth::backend::cpu::CpuBackend;
use cuth::backend::cuda::CudaBackend;
use cuth::linalg::PrecondKind;
use cuth::run::{Backends, Device, DeviceChoice, DeviceProbe, OpenRequest};
use std::sync::Mutex;

/// An opened backend, borrowed for the process's life.
#[derive(Clone, Copy)]
pub enum Dev {
    Cpu(&'static CpuBackend),
    Cuda(&'static CudaBackend),
}

/// The backend and the device it runs on.
#[derive(Clone, Copy)]
pub struct Opened {
    pub dev: Dev,
    pub device: Device,
}

static OPENED: Mutex<Vec<(DeviceChoice, Opened)>> = Mutex::new(Vec::new());

/// The backend of `choice`, opened on first use (with the kernels of
/// `precond` loaded; other families load when first launched).
pub fn open(choice: DeviceChoice, precond: PrecondKind) -> anyhow::Result<Opened> {
    let mut opened = OPENED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, o)) = opened.iter().find(|(c, _)| *c == choice) {
        return Ok(*o);
    }
    let knobs = cuth::knobs::Knobs::from_env()?;
    cuth::backend::memory_limit::set_caps(knobs.memory);
    let req = OpenRequest::steady(choice, precond, 0, &knobs.cuda);
    let o = cuth::run::open(&req, DeviceProbe::start(choice))?;
    if let Some(why) = &o.fallback {
        eprintln!("cuth: note: {why}; solving on the CPU");
    }
    let dev = match o.backend {
        Backends::Cpu(be) => Dev::Cpu(Box::leak(Box::new(be))),
        Backends::Cuda(be) => Dev::Cuda(Box::leak(be)),
    };
    let o = Opened {
        dev,
        device: o.device,
    };
    opened.push((choice, o));
    Ok(o)
}

/// Runs `$body` with `$be` bound to the backend of `$dev`, whichever it is.
macro_rules! with_backend {
    ($dev:expr, |$be:ident| $body:expr) => {
        match $dev {
            $crate::device::Dev::Cpu($be) => $body,
            $crate::device::Dev::Cuda($be) => $body,
        }
    };
}
pub(crate) use with_backend;
