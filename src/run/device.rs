//! The device of a run, and the one way every command opens it: CUDA's
//! availability probed on a thread from the moment the run starts, the
//! fallback of `auto` to the CPU, and the kernel families the run will
//! launch read from the kernel cache (or compiled) and loaded on several
//! threads, optionally while the caller's host work runs beside it.

use crate::backend::cpu::CpuBackend;
use crate::backend::cuda::{self, CudaBackend, KernelFamily};
use crate::backend::BackendError;
use crate::error::{Classify, ErrorKind};
use crate::knobs::CudaKnobs;
use crate::linalg::PrecondKind;
use crate::profile::part;
use std::thread::JoinHandle;

/// `--device auto|cpu|cuda|cuda:N` as asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The GPU (ordinal 0) when CUDA is usable, else the CPU (with a note).
    Auto,
    Cpu,
    /// `cuda` is `cuda:0`.
    Cuda(usize),
}

impl DeviceChoice {
    /// The device this choice gives when CUDA is usable: what host work
    /// done before the device opens plans for (the device assembly's input,
    /// the memory plan's executor).
    pub fn intended(self) -> Device {
        match self {
            DeviceChoice::Cpu => Device::Cpu,
            DeviceChoice::Auto => Device::Cuda(0),
            DeviceChoice::Cuda(n) => Device::Cuda(n),
        }
    }
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" => Ok(DeviceChoice::Cuda(0)),
            _ => s
                .strip_prefix("cuda:")
                .and_then(|n| n.parse::<usize>().ok())
                .map(DeviceChoice::Cuda)
                .ok_or_else(|| format!("`{s}` is not auto, cpu, cuda or cuda:N (N = GPU ordinal)")),
        }
    }
}

/// The device a run solves on, once it is open.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Cpu,
    Cuda(usize),
}

impl Device {
    /// `cpu` or `cuda:N`, as the choice is spelled.
    pub fn name(self) -> String {
        match self {
            Device::Cpu => "cpu".into(),
            Device::Cuda(n) => format!("cuda:{n}"),
        }
    }
}

/// Why a device could not be opened (a failed run, exit 1, as a missing
/// GPU is).
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    #[error("--device cuda:{ordinal}: this machine has {count} CUDA device(s){}", ordinals(*.count))]
    NoSuchDevice { ordinal: usize, count: usize },
    #[error(transparent)]
    Backend(#[from] BackendError),
}

fn ordinals(count: usize) -> String {
    match count {
        0 => String::new(),
        1 => " (use cuda:0)".to_string(),
        _ => format!(" (use cuda:0 to cuda:{})", count - 1),
    }
}

impl Classify for OpenError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Failure
    }
}

/// Fails unless CUDA is usable and has GPU ordinal `n`. Loads the driver
/// and NVRTC and initializes CUDA (`cuInit`, ~0.1 s on an H200), which is
/// why [`open_while`] calls it on its own thread.
pub fn check_ordinal(n: usize) -> Result<(), OpenError> {
    let count = cuda::device::device_count()?;
    match n < count {
        true => Ok(()),
        false => Err(OpenError::NoSuchDevice { ordinal: n, count }),
    }
}

/// `auto`'s probe of CUDA (driver, NVRTC, `cuInit`), started with the run
/// so that it overlaps the stack's loading; [`open`] joins it. Other
/// choices start nothing.
pub struct DeviceProbe(Option<JoinHandle<Result<(), BackendError>>>);

impl DeviceProbe {
    pub fn start(choice: DeviceChoice) -> DeviceProbe {
        DeviceProbe((choice == DeviceChoice::Auto).then(|| std::thread::spawn(cuda::available)))
    }

    /// `Err` only for `auto` with CUDA unusable.
    fn join(self) -> Result<(), BackendError> {
        match self.0 {
            Some(t) => t.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            None => Ok(()),
        }
    }
}

/// What the opened backend must have ready.
#[derive(Clone, Debug)]
pub struct OpenRequest<'a> {
    pub choice: DeviceChoice,
    /// Kernel families to load at open (others load on first use).
    pub families: Vec<&'static KernelFamily>,
    /// Values of the largest staged download, to pin up front (0: none).
    pub staged: usize,
    pub knobs: &'a CudaKnobs,
}

impl<'a> OpenRequest<'a> {
    /// What a steady solve or a stepping session launches: the core's,
    /// the Quad-Diag, assembly and statistics kernels, and those of
    /// `precond`; `staged` values of staging.
    pub fn steady(
        choice: DeviceChoice,
        precond: PrecondKind,
        staged: usize,
        knobs: &'a CudaKnobs,
    ) -> Self {
        use crate::thermal::device::cuda::{ASSEMBLE, STATS};
        let mut families = vec![&cuda::BLAS1, &cuda::QUAD_DIAG, &ASSEMBLE, &STATS];
        families.extend(precond.needs().kernel_families);
        OpenRequest {
            choice,
            families,
            staged,
            knobs,
        }
    }

    /// A backend with only the core's BLAS-1 kernels loaded up front.
    pub fn core(choice: DeviceChoice, knobs: &'a CudaKnobs) -> Self {
        OpenRequest {
            choice,
            families: vec![&cuda::BLAS1],
            staged: 0,
            knobs,
        }
    }
}

/// The backend a run opened.
pub enum Backends {
    Cpu(CpuBackend),
    Cuda(Box<CudaBackend>),
}

/// [`Backends`] with what the caller reports of the opening.
pub struct Opened {
    pub backend: Backends,
    pub device: Device,
    /// Why `auto` took the CPU, for the caller to print.
    pub fallback: Option<String>,
}

impl Opened {
    fn cpu(fallback: Option<String>) -> Opened {
        Opened {
            backend: Backends::Cpu(CpuBackend::new()),
            device: Device::Cpu,
            fallback,
        }
    }
}

/// Opens the device of `req`: the CPU, or the GPU with its families and
/// staging ready; `auto` with CUDA unusable opens the CPU and says why.
pub fn open(req: &OpenRequest, probe: DeviceProbe) -> Result<Opened, OpenError> {
    let ordinal = match req.choice {
        DeviceChoice::Cpu => return Ok(Opened::cpu(None)),
        DeviceChoice::Auto => 0,
        DeviceChoice::Cuda(n) => n,
    };
    if let Err(e) = part("device_init/probe", || probe.join()) {
        return Ok(Opened::cpu(Some(e.to_string())));
    }
    part("device_init/probe", || check_ordinal(ordinal))?;
    let be = open_cuda(ordinal, req)?;
    Ok(Opened {
        backend: Backends::Cuda(Box::new(be)),
        device: Device::Cuda(ordinal),
        fallback: None,
    })
}

/// [`open`] on a thread while `host` runs on this one: the host work that
/// does not need the device (rasterizing power, the host's share of the
/// assembly) overlaps the context's creation and the kernels' loading.
pub fn open_while<T>(
    req: &OpenRequest,
    probe: DeviceProbe,
    host: impl FnOnce() -> T,
) -> (Result<Opened, OpenError>, T) {
    std::thread::scope(|sc| {
        let device = sc.spawn(|| open(req, probe));
        let host = host();
        let opened = device
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (opened, host)
    })
}

/// The context, with the images of `req.families` read from the kernel
/// cache (or compiled) while it opens, then loaded on a thread each, with
/// the staging buffers pinned beside them.
fn open_cuda(ordinal: usize, req: &OpenRequest) -> Result<CudaBackend, BackendError> {
    let families = &req.families;
    let knobs = req.knobs;
    let (be, ()) = std::thread::scope(|sc| {
        let images = sc.spawn(|| {
            part("device_init/images", || {
                let dir = knobs.kernel_cache.as_deref();
                cuda::device::prefetch(ordinal, families, dir)
            })
        });
        let be = part("device_init/context", || {
            CudaBackend::open_with(ordinal, knobs)
        });
        (
            be,
            images
                .join()
                .unwrap_or_else(|p| std::panic::resume_unwind(p)),
        )
    });
    let be = be?;
    std::thread::scope(|sc| {
        let be = &be;
        let mut loads: Vec<_> = (families.iter())
            .map(|&f| sc.spawn(move || part("device_init/modules", || be.load(f))))
            .collect();
        if req.staged > 0 {
            let staged = req.staged;
            loads
                .push(sc.spawn(move || part("device_init/staging", || be.reserve_staging(staged))));
        }
        loads
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
    })?;
    Ok(be)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_choices_parse() {
        assert_eq!("cuda".parse(), Ok(DeviceChoice::Cuda(0)));
        assert_eq!("cuda:3".parse(), Ok(DeviceChoice::Cuda(3)));
        assert_eq!("cpu".parse(), Ok(DeviceChoice::Cpu));
        assert!("cuda:x".parse::<DeviceChoice>().is_err());
        assert!("gpu".parse::<DeviceChoice>().is_err());
    }

    #[test]
    fn the_cpu_opens_without_cuda() {
        let knobs = CudaKnobs::default();
        let req = OpenRequest::core(DeviceChoice::Cpu, &knobs);
        let opened = open(&req, DeviceProbe::start(DeviceChoice::Cpu)).unwrap();
        assert_eq!(opened.device, Device::Cpu);
        assert!(opened.fallback.is_none());
    }

    #[test]
    fn a_missing_ordinal_names_the_choice_and_the_count() {
        let e = OpenError::NoSuchDevice {
            ordinal: 3,
            count: 2,
        };
        assert_eq!(
            e.to_string(),
            "--device cuda:3: this machine has 2 CUDA device(s) (use cuda:0 to cuda:1)"
        );
    }
}
