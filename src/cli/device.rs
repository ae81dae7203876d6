//! `--device auto|cpu|cuda`: which backend a solve runs on, and `cuth info`.

use cuth::backend::{cpu::CpuBackend, cuda, Backend};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DeviceChoice {
    /// The GPU when CUDA is usable, else the CPU (with a one-line notice).
    Auto,
    Cpu,
    Cuda,
}

/// The device a solve will run on, decided before any work starts.
pub enum Resolved {
    Cpu,
    Cuda,
}

/// Picks the device; `notice` receives the one line printed when `auto`
/// falls back to the CPU.
pub fn resolve(choice: DeviceChoice, notice: &mut dyn FnMut(&str)) -> anyhow::Result<Resolved> {
    Ok(match choice {
        DeviceChoice::Cpu => Resolved::Cpu,
        DeviceChoice::Cuda => {
            cuda::available()?;
            Resolved::Cuda
        }
        DeviceChoice::Auto => match cuda::available() {
            Ok(()) => Resolved::Cuda,
            Err(e) => {
                notice(&format!("cuth: note: {e}; solving on the CPU"));
                Resolved::Cpu
            }
        },
    })
}

pub fn info_text() -> String {
    let cpu = CpuBackend::new().report();
    let mut s = format!(
        "cuth {}\ncpu: {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        cpu.name,
        cpu.detail
    );
    s.push_str(&cuda::info_text());
    s
}
