//! `timeseries.csv` of a transient run: one row per step with the time, the
//! solver's iterations, the energy of the step, per-layer max and mean,
//! per-block min, mean and max, and each `[[probes]]` reading. Written
//! through the `csv` crate, so names with commas or quotes are quoted.

use super::layout::short;
use super::TempUnit;
use crate::thermal::transient::StepRecord;
use std::io;

/// Header: `step,time_s,trace_row,iterations,power_w,heat_out_w,stored_j`,
/// then `leakage_w` when the stack leaks (total leakage, W, included in
/// power_w), `outer_iterations` when the stack is temperature-dependent
/// (solves of the step: 1 semi-implicit, up to `--nonlinear-iterations`;
/// `iterations` is the sum of the step's PCG iterations over its solves),
/// then `<layer>_max_<u>,<layer>_avg_<u>` per layer,
/// `<layer>.<block>_min_<u>,_avg_<u>,_max_<u>` per block (the block's own
/// name when it already names its die and is unique) and
/// `probe.<name>_<u>` per probe (`<u>` = `c` or `k`). Times are printed
/// without float noise (`0.015`, not `1.5000000000000001e-2`).
pub fn timeseries_csv(
    records: &[StepRecord],
    layers: &[String],
    blocks: &[String],
    probes: &[String],
    unit: TempUnit,
) -> io::Result<String> {
    let u = unit.suffix();
    let mut header: Vec<String> = [
        "step",
        "time_s",
        "trace_row",
        "iterations",
        "power_w",
        "heat_out_w",
        "stored_j",
    ]
    .map(String::from)
    .to_vec();
    let leaks = records.first().is_some_and(|r| r.leakage_w.is_some());
    if leaks {
        header.push("leakage_w".into());
    }
    let outer = records.iter().any(|r| r.outer_iterations.is_some());
    if outer {
        header.push("outer_iterations".into());
    }
    for l in layers {
        header.push(format!("{l}_max_{u}"));
        header.push(format!("{l}_avg_{u}"));
    }
    for b in column_stems(blocks) {
        for s in ["min", "avg", "max"] {
            header.push(format!("{b}_{s}_{u}"));
        }
    }
    for p in probes {
        header.push(format!("probe.{p}_{u}"));
    }
    let mut w = ::csv::Writer::from_writer(Vec::new());
    w.write_record(&header)?;
    let t = |v: f64| format!("{:.6}", unit.convert_k(v));
    for r in records {
        let e = &r.energy;
        let mut row = vec![
            r.step.to_string(),
            time(r.time_s),
            r.trace_row.map_or(String::new(), |k| k.to_string()),
            r.iterations.to_string(),
            format!("{:e}", e.power_w),
            format!("{:e}", e.heat_out_w),
            format!("{:e}", e.stored_j),
        ];
        if leaks {
            row.push(format!("{:e}", r.leakage_w.unwrap_or(0.0)));
        }
        if outer {
            row.push(r.outer_iterations.unwrap_or(0).to_string());
        }
        for (m, a) in r.layer_max_k.iter().zip(&r.layer_avg_k) {
            row.push(t(*m));
            row.push(t(*a));
        }
        for b in &r.blocks {
            row.extend([t(b.min_k), t(b.avg_k), t(b.max_k)]);
        }
        row.extend(r.probe_k.iter().map(|&p| t(p)));
        w.write_record(&row)?;
    }
    let bytes = w.into_inner().map_err(|e| e.into_error())?;
    String::from_utf8(bytes).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// A time in seconds: the shortest of plain decimals (to 1e-12 s) and
/// Rust's round-trip form, so `k·Δt` prints as `0.015`, not
/// `0.015000000000000001`.
fn time(t: f64) -> String {
    let plain = format!("{t:.12}");
    let plain = plain.trim_end_matches('0').trim_end_matches('.');
    let rounded: f64 = plain.parse().unwrap_or(t);
    // Only drop digits that are float noise (relative 1e-9), never data.
    if (rounded - t).abs() <= 1e-9 * t.abs() && plain.len() <= 20 {
        plain.to_string()
    } else {
        short_or_exact(t)
    }
}

fn short_or_exact(t: f64) -> String {
    let s = short(t);
    if s.parse::<f64>().ok() == Some(t) {
        s
    } else {
        format!("{t:e}")
    }
}

#[cfg(test)]
mod tests {
    use super::time;

    #[test]
    fn times_without_float_noise() {
        assert_eq!(time(0.0), "0");
        assert_eq!(time(3.0 * 0.005), "0.015");
        assert_eq!(time(0.1 + 0.2), "0.3");
        assert_eq!(time(2.5), "2.5");
        assert_eq!(time(3.333e-6 * 3.0), "0.000009999");
        // Below the plain form's resolution the value is kept in full.
        assert_eq!(time(1e-13), "1e-13");
    }
}

/// Column stems of `<layer>.<block>` names: a block already named after its
/// die (`TOP_DIE.Hotspot1` on layer `TOP_DIE_source`, as a 3D-ICE import
/// names them) keeps its own name rather than repeating the die, where that
/// name is unique among the columns.
fn column_stems(blocks: &[String]) -> Vec<String> {
    let short = |b: &String| -> Option<String> {
        let (layer, block) = b.split_once('.')?;
        let (die, _) = block.split_once('.')?;
        layer.starts_with(die).then(|| block.to_string())
    };
    let candidates: Vec<Option<String>> = blocks.iter().map(short).collect();
    blocks
        .iter()
        .zip(&candidates)
        .map(|(b, c)| match c {
            Some(c)
                if candidates.iter().filter(|o| o.as_ref() == Some(c)).count() == 1
                    && !blocks.contains(c) =>
            {
                c.clone()
            }
            _ => b.clone(),
        })
        .collect()
}

#[cfg(test)]
mod stem_tests {
    use super::column_stems;

    #[test]
    fn a_die_named_twice_is_named_once_when_unique() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            column_stems(&v(&["TOP_DIE_source.TOP_DIE.Hotspot1", "die.alu"])),
            v(&["TOP_DIE.Hotspot1", "die.alu"])
        );
        // Two layers of one die with the same unit: both keep their layer.
        let same = v(&["D_a.D.u", "D_b.D.u"]);
        assert_eq!(column_stems(&same), same);
    }
}
