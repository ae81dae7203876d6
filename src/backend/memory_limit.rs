//! The caps a user can put on the memory a run may take
//! ([`MemoryCaps`]), applied where the executors report their free memory,
//! so that a plan, a refusal and a test that fakes a small machine all see
//! the same figure. Process-wide, as the kernel cache is: the caller sets
//! them once ([`set_caps`], the command line from its knobs) and every
//! report of free memory after that is capped; until then none is.

use crate::knobs::MemoryCaps;
use std::sync::RwLock;

static CAPS: RwLock<MemoryCaps> = RwLock::new(MemoryCaps {
    host: None,
    device: None,
});

/// Caps every later report of free memory by `caps`.
pub fn set_caps(caps: MemoryCaps) {
    *CAPS.write().unwrap_or_else(|e| e.into_inner()) = caps;
}

/// The caps in force.
pub fn caps() -> MemoryCaps {
    *CAPS.read().unwrap_or_else(|e| e.into_inner())
}

/// Free memory as seen by a plan: the system's figure capped by `cap`
/// (either alone where the other is unknown).
pub fn capped(system: Option<u64>, cap: Option<u64>) -> Option<u64> {
    match (system, cap) {
        (Some(s), Some(c)) => Some(s.min(c)),
        (s, c) => s.or(c),
    }
}
