//! Where the running PCG stands, for a progress display: after each residual
//! check PCG stores its iteration count and relative residual here (two
//! relaxed atomic stores: no I/O, no lock, nothing that slows the loop), and
//! a watcher (the CLI's progress line, shown only on a terminal) reads them.
//! Process-wide, so concurrent solves (a sweep's jobs) overwrite each other:
//! good enough for a display, never used for a result.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

static ITERATIONS: AtomicUsize = AtomicUsize::new(0);
static RESIDUAL_BITS: AtomicU64 = AtomicU64::new(0);
/// Residual checks so far: a watcher tells a new report from an old one.
static REPORTS: AtomicUsize = AtomicUsize::new(0);

/// PCG's latest iteration count and relative residual.
pub fn report(iterations: usize, rel_residual: f64) {
    ITERATIONS.store(iterations, Ordering::Relaxed);
    RESIDUAL_BITS.store(rel_residual.to_bits(), Ordering::Relaxed);
    REPORTS.fetch_add(1, Ordering::Relaxed);
}

/// The latest report: (reports so far, iterations, relative residual).
pub fn latest() -> (usize, usize, f64) {
    (
        REPORTS.load(Ordering::Relaxed),
        ITERATIONS.load(Ordering::Relaxed),
        f64::from_bits(RESIDUAL_BITS.load(Ordering::Relaxed)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_is_read_back() {
        let (n0, _, _) = latest();
        report(17, 2.5e-7);
        let (n, it, rel) = latest();
        // Other tests' solves may report in between: only monotone facts.
        assert!(n > n0);
        assert!(it > 0 && rel.is_finite());
    }
}
