//! `cuth info`: the compute devices (the `--device` choice is resolved in
//! `plan`); and the environment's knobs, which every command that computes
//! reads where it starts.

use cuth::backend::{cpu::CpuBackend, cuda, Backend};
use cuth::knobs::Knobs;

/// The environment's knobs, read once where a command starts; the
/// process-wide ones (the memory caps, the profile's device waits) take
/// effect here, before anything plans or times with them.
pub fn knobs() -> anyhow::Result<Knobs> {
    let knobs = Knobs::from_env()?;
    cuth::backend::memory_limit::set_caps(knobs.memory);
    cuth::profile::set_sync_parts(knobs.profile_sync);
    Ok(knobs)
}

pub fn info_text(knobs: &Knobs) -> String {
    let cpu = CpuBackend::new().report();
    let mut s = format!(
        "cuth {}\ncpu: {} ({})\n",
        env!("CARGO_PKG_VERSION"),
        cpu.name,
        cpu.detail
    );
    s.push_str(&cuda::info_text());
    s.push_str(&cuda::kernel_cache::info_line(
        knobs.cuda.kernel_cache.as_deref(),
    ));
    s.push('\n');
    s
}
