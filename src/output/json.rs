//! `summary.json`: the [`Summary`] as pretty-printed JSON and nothing else,
//! so that it is the one machine-readable record of a run (per-layer stats,
//! energy balance, solver report, timings, device). Temperatures stay in
//! kelvin whatever the display unit, as the field names (`t_max_k`) say.

use crate::thermal::summary::Summary;
use std::io;

/// Pretty JSON of the summary, with a trailing newline. Non-finite numbers
/// (a failed solve) become `null`, as serde_json writes them.
pub fn summary_json(summary: &Summary) -> io::Result<String> {
    let mut s = serde_json::to_string_pretty(summary)?;
    s.push('\n');
    Ok(s)
}
