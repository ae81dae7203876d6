//! The optimizer's progress bar on stderr: one tick per iteration, the
//! latest compliance, volume and grayness as its message. indicatif hides it
//! when stderr is not a terminal, so logs and CI output stay clean.

use super::HistoryRow;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

const TEMPLATE: &str = "{prefix} [{bar:30}] {pos}/{len} {elapsed_precise} {msg}";

/// A bar for at most `max_iterations` iterations, drawn on stderr.
pub fn progress_bar(max_iterations: usize) -> ProgressBar {
    let bar =
        ProgressBar::with_draw_target(Some(max_iterations as u64), ProgressDrawTarget::stderr());
    // The template is a constant; fall back to the default style rather
    // than panic if indicatif ever rejects it.
    let style = ProgressStyle::with_template(TEMPLATE)
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix("topopt");
    bar
}

/// The message shown after iteration `row`.
pub fn progress_message(row: &HistoryRow) -> String {
    format!(
        "c {:.4e}  vol {:.3}  gray {:.3}  cg {}  p {}  beta {}",
        row.compliance, row.volume, row.grayness, row.cg_iterations, row.penal, row.beta
    )
}
