//! `history.csv`: one row per optimizer iteration, for plotting convergence.
//! Numbers use Rust's shortest round-trip formatting, so the file reproduces
//! the values bit for bit; the header is written even with no rows, so the
//! columns are the same in every run.

use super::HistoryRow;
use std::fmt::Write;

/// The column names, in order.
pub const HEADER: &str = "iteration,compliance,volume,grayness,cg_iterations,seconds,beta,penal";

/// The CSV text, header first, `\n` line ends.
pub fn history_csv(rows: &[HistoryRow]) -> String {
    let mut s = String::with_capacity(64 * (rows.len() + 1));
    s.push_str(HEADER);
    s.push('\n');
    for r in rows {
        // Writing to a String cannot fail.
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{}",
            r.iteration,
            r.compliance,
            r.volume,
            r.grayness,
            r.cg_iterations,
            r.seconds,
            r.beta,
            r.penal
        );
    }
    s
}
