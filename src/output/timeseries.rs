//! `timeseries.csv` of a transient run: one row per step with the time, the
//! solver's iterations, the energy of the step, per-layer max and mean and
//! per-block max temperature.

use super::TempUnit;
use crate::thermal::transient::StepRecord;
use std::fmt::Write;

/// Quotes a CSV field when it holds a comma, quote or newline.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Header: `step,time_s,trace_row,iterations,power_w,heat_out_w,stored_j,`
/// (then `leakage_w` when the stack leaks: total leakage, W, in power_w)
/// then `<layer>_max_<u>,<layer>_avg_<u>` per layer and `<layer>.<block>_max_<u>`
/// per block (`<u>` = `c` or `k`).
pub fn timeseries_csv(
    records: &[StepRecord],
    layers: &[String],
    blocks: &[String],
    unit: TempUnit,
) -> String {
    let u = unit.suffix();
    let mut out = String::from("step,time_s,trace_row,iterations,power_w,heat_out_w,stored_j");
    let leaks = records.first().is_some_and(|r| r.leakage_w.is_some());
    if leaks {
        out.push_str(",leakage_w");
    }
    for l in layers {
        let _ = write!(
            out,
            ",{},{}",
            field(&format!("{l}_max_{u}")),
            field(&format!("{l}_avg_{u}"))
        );
    }
    for b in blocks {
        let _ = write!(out, ",{}", field(&format!("{b}_max_{u}")));
    }
    out.push('\n');
    let t = |v: f64| unit.convert_k(v);
    for r in records {
        let row = r.trace_row.map_or(String::new(), |k| k.to_string());
        let e = &r.energy;
        let _ = write!(
            out,
            "{},{:e},{row},{},{:e},{:e},{:e}",
            r.step, r.time_s, r.iterations, e.power_w, e.heat_out_w, e.stored_j
        );
        if leaks {
            let _ = write!(out, ",{:e}", r.leakage_w.unwrap_or(0.0));
        }
        for (m, a) in r.layer_max_k.iter().zip(&r.layer_avg_k) {
            let _ = write!(out, ",{:.6},{:.6}", t(*m), t(*a));
        }
        for m in &r.block_max_k {
            let _ = write!(out, ",{:.6}", t(*m));
        }
        out.push('\n');
    }
    out
}
