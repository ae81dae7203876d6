//! Sub-phase timers of a run: the parts of the pipeline's phases
//! (kernel compilation, device allocation, host input preparation, the
//! post-solve statistics, frees) that `summary.json` reports under
//! `timings_detail_s` beside the phases of `timings_s`. Process-wide, as
//! the kernel cache is: code deep in a backend adds its part by name
//! without every caller threading a recorder through. Parts accumulate by
//! name; [`take`] empties them. [`set_sync_parts`] (the command line's
//! [`Knobs::profile_sync`](crate::knobs::Knobs::profile_sync)) makes the
//! solve wait for the device before each part ends ([`sync_parts`]), so
//! asynchronous device work is charged to the part that queued it (slower;
//! diagnosis).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Instant;

static PARTS: Mutex<Vec<(String, f64)>> = Mutex::new(Vec::new());
static SYNC_PARTS: AtomicBool = AtomicBool::new(false);

/// Adds `secs` to part `name` (created at the end of the list if new).
pub fn add(name: &str, secs: f64) {
    let mut p = PARTS.lock().unwrap_or_else(|e| e.into_inner());
    match p.iter_mut().find(|(n, _)| n == name) {
        Some((_, s)) => *s += secs,
        None => p.push((name.to_string(), secs)),
    }
}

/// Every part recorded since the last call, in first-recorded order.
pub fn take() -> Vec<(String, f64)> {
    std::mem::take(&mut *PARTS.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Times `f` as part `name`.
pub fn part<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let r = f();
    add(name, t.elapsed().as_secs_f64());
    r
}

/// Whether parts should wait for the device before they end (off until
/// [`set_sync_parts`]).
pub fn sync_parts() -> bool {
    SYNC_PARTS.load(Ordering::Relaxed)
}

/// Makes every later part wait for the device before it ends, or not.
pub fn set_sync_parts(on: bool) {
    SYNC_PARTS.store(on, Ordering::Relaxed);
}

/// Lap timer: [`Laps::lap`] records the time since the previous lap as a
/// part (or as a phase of a list the caller keeps).
pub struct Laps {
    last: Instant,
}

impl Default for Laps {
    fn default() -> Self {
        Laps::new()
    }
}

impl Laps {
    pub fn new() -> Laps {
        Laps {
            last: Instant::now(),
        }
    }

    /// Seconds since the previous lap (or the start), restarting the clock.
    pub fn split(&mut self) -> f64 {
        let now = Instant::now();
        let s = now.duration_since(self.last).as_secs_f64();
        self.last = now;
        s
    }

    /// [`Laps::split`] recorded as part `name`.
    pub fn lap(&mut self, name: &str) {
        let s = self.split();
        add(name, s);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn parts_accumulate_by_name() {
        // Other tests of the process may add parts too: only ours are checked.
        super::add("profile-test/a", 1.0);
        super::add("profile-test/b", 0.5);
        super::add("profile-test/a", 2.0);
        let p = super::take();
        let get = |n: &str| p.iter().find(|(k, _)| k == n).map(|(_, s)| *s);
        assert_eq!(get("profile-test/a"), Some(3.0));
        assert_eq!(get("profile-test/b"), Some(0.5));
    }
}
