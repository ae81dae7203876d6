//! `cuth info`: the compute devices (the `--device` choice is resolved in `plan`).

use cuth::backend::{cpu::CpuBackend, cuda, Backend};

pub fn info_text() -> String {
    let cpu = CpuBackend::new().report();
    let mut s = format!(
        "cuth {}\ncpu: {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        cpu.name,
        cpu.detail
    );
    s.push_str(&cuda::info_text());
    s.push_str(&cuda::kernel_cache::info_line());
    s.push('\n');
    s
}
