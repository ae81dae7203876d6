//! `summary.json`: whatever the optimizer reports (problem, parameters,
//! final compliance, timings, device), pretty-printed. The optimizer owns
//! the content; this stage only fixes the format.

/// Pretty JSON with a trailing newline.
pub fn summary_json(summary: &serde_json::Value) -> serde_json::Result<String> {
    let mut s = serde_json::to_string_pretty(summary)?;
    s.push('\n');
    Ok(s)
}
