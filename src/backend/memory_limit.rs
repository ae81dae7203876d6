//! The caps a user can put on the memory a run may take, read where the
//! executors report their free memory, so that a plan, a refusal and a test
//! that fakes a small machine all see the same figure.

/// Environment variable that caps the host memory a run may use, bytes.
pub const HOST_LIMIT_ENV: &str = "CUTH_HOST_MEMORY_BYTES";
/// Environment variable that caps the device memory a run may use, bytes.
pub const DEVICE_LIMIT_ENV: &str = "CUTH_DEVICE_MEMORY_BYTES";

/// Free memory as seen by a plan: the system's figure capped by `env`.
pub fn capped(system: Option<u64>, env: &str) -> Option<u64> {
    let cap = std::env::var(env)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok());
    match (system, cap) {
        (Some(s), Some(c)) => Some(s.min(c)),
        (s, c) => s.or(c),
    }
}
