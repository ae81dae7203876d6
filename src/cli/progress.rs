//! The steady solve's progress line on stderr, as `--help` promises: once
//! the solve has run for a second, a spinner with PCG's iteration count and
//! residual (read from `cuth::linalg::progress`), refreshed ten times a
//! second and cleared at the end. Only on a terminal: piped or redirected
//! stderr gets nothing, and `--quiet` or `--json` turn it off.

use cuth::linalg::progress::latest;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A solve shorter than this shows nothing.
const DELAY: Duration = Duration::from_secs(1);
const REFRESH: Duration = Duration::from_millis(100);

/// The progress line of one solve; dropping it stops and clears it.
pub struct SolveProgress {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl SolveProgress {
    /// Starts the watcher when `wanted` and stderr is a terminal.
    pub fn start(wanted: bool) -> SolveProgress {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = (wanted && std::io::stderr().is_terminal()).then(|| {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || watch(&stop))
        });
        SolveProgress { stop, thread }
    }
}

impl Drop for SolveProgress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn watch(stop: &AtomicBool) {
    let t0 = Instant::now();
    let (reports_before, _, _) = latest();
    let mut bar: Option<ProgressBar> = None;
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(REFRESH);
        if bar.is_none() && t0.elapsed() >= DELAY {
            let b = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
                .with_elapsed(t0.elapsed());
            // The template is fixed; fall back to the default rather than
            // panic if indicatif ever rejects it.
            let style = ProgressStyle::with_template("{spinner} {elapsed} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            b.set_style(style);
            bar = Some(b);
        }
        if let Some(b) = &bar {
            let (reports, it, rel) = latest();
            b.set_message(if reports > reports_before {
                format!("PCG iteration {it}, residual {rel:.2e}")
            } else {
                "assembling and setting up the preconditioner".to_string()
            });
            b.tick();
        }
    }
    if let Some(b) = bar {
        b.finish_and_clear();
    }
}
