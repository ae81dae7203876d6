//! What `cuth sweep` prints on stdout: thermal by default (cases solved and
//! failed, the hottest case, per layer the hottest case and the mean of the
//! cases' averages), the solver's details with `--verbose` (iterations per
//! case, worst true residual, preconditioner, rtol, device, batch, set-up
//! and solve times), as `solve`'s table does. Read from the table, so a
//! `--merge` prints the same thermal part.

use super::table::Table;
use cuth::output::{self, TempUnit};
use std::fmt::Write as _;

/// A number of the table, if the cell holds one.
fn cell(row: &std::collections::HashMap<String, String>, col: &str) -> Option<f64> {
    row.get(col)?.parse().ok()
}

/// The stdout report of a sweep or merge; `summary` is its summary.json.
pub fn format_report(
    table: &Table,
    summary: &serde_json::Value,
    unit: TempUnit,
    verbose: bool,
) -> String {
    let mut o = String::new();
    let t = |k: f64| format!("{:.2}", unit.convert_k(k));
    let sym = unit.symbol();
    let rate = summary["cases_per_s"]
        .as_f64()
        .map(|r| format!(", {r:.1} cases/s"))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "{} cases: {} solved, {} failed{rate}",
        summary["cases"], summary["solved"], summary["failed"]
    );
    let ok: Vec<_> = table
        .rows
        .values()
        .filter(|r| r.get("status").map(String::as_str) == Some("ok"))
        .collect();
    // Layers: the `<layer>.max_k` columns that have an `<layer>.avg_k` twin
    // (block columns have no avg).
    let layers: Vec<&str> = table
        .columns
        .iter()
        .filter_map(|c| c.strip_suffix(".max_k"))
        .filter(|l| table.columns.iter().any(|c| *c == format!("{l}.avg_k")))
        .collect();
    let name = |r: &std::collections::HashMap<String, String>| {
        let n = r.get("case").map_or("?", String::as_str);
        output::cut(n, output::MAX_COL)
    };
    let mut rows = vec![vec![
        "layer".to_string(),
        format!("max {sym}"),
        "hottest case".into(),
        format!("mean avg {sym}"),
    ]];
    let mut hottest: Option<(f64, String, &str)> = None;
    for l in &layers {
        let max_col = format!("{l}.max_k");
        let avg_col = format!("{l}.avg_k");
        // The first case of the highest value (cases in index order).
        let best = ok
            .iter()
            .filter_map(|r| cell(r, &max_col).map(|v| (v, r)))
            .fold(None, |b: Option<(f64, _)>, (v, r)| match b {
                Some((bv, _)) if bv >= v => b,
                _ => Some((v, r)),
            });
        let avgs: Vec<f64> = ok.iter().filter_map(|r| cell(r, &avg_col)).collect();
        let Some((max, r)) = best else { continue };
        let mean = avgs.iter().sum::<f64>() / avgs.len().max(1) as f64;
        if hottest.as_ref().is_none_or(|h| max > h.0) {
            hottest = Some((max, name(r), l));
        }
        rows.push(vec![
            output::cut(l, output::MAX_COL),
            t(max),
            name(r),
            t(mean),
        ]);
    }
    if let Some((max, case, layer)) = &hottest {
        let _ = writeln!(o, "hottest    {} {sym} in {layer}, case {case}", t(*max));
        for line in output::columns(&rows, &[false, true, false, true], 0) {
            let _ = writeln!(o, "{line}");
        }
    }
    let failed = summary["failed_cases"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for f in failed.iter().take(5) {
        let _ = writeln!(
            o,
            "failed     {}: {}",
            f["case"].as_str().unwrap_or("?"),
            f["reason"].as_str().unwrap_or("?")
        );
    }
    if failed.len() > 5 {
        let _ = writeln!(o, "failed     ... {} more in sweep.csv", failed.len() - 5);
    }
    let its: Vec<f64> = ok.iter().filter_map(|r| cell(r, "iterations")).collect();
    if verbose {
        if !its.is_empty() {
            let res = ok
                .iter()
                .filter_map(|r| cell(r, "true_residual"))
                .fold(0.0, f64::max);
            let _ = writeln!(
                o,
                "solver     {:.1} iterations per case (max {}), worst true residual {res:.3e}",
                its.iter().sum::<f64>() / its.len() as f64,
                its.iter().fold(0.0, |a: f64, b| a.max(*b))
            );
        }
        if let Some(p) = summary["precond"].as_str() {
            let _ = writeln!(
                o,
                "           preconditioner {p}, rtol {:e}, batch {}",
                summary["rtol"].as_f64().unwrap_or(f64::NAN),
                summary["batch"]
            );
        }
        if let Some(d) = summary["device"].as_str() {
            let _ = writeln!(o, "device     {d}");
        }
        if let (Some(a), Some(b)) = (summary["setup_s"].as_f64(), summary["solve_s"].as_f64()) {
            let _ = writeln!(o, "time       set-up {a:.3} s, solve {b:.3} s");
        }
    } else if !its.is_empty() {
        let _ = writeln!(
            o,
            "solver     {:.1} iterations per case (--verbose for details)",
            its.iter().sum::<f64>() / its.len() as f64
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashMap};

    fn table() -> Table {
        let columns: Vec<String> = [
            "case_index",
            "case",
            "status",
            "reason",
            "iterations",
            "true_residual",
            "power_w",
            "die.max_k",
            "die.avg_k",
            "a_rather_long_layer_name_for_alignment.max_k",
            "a_rather_long_layer_name_for_alignment.avg_k",
            "die.core.max_k",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let row = |i: usize, case: &str, vals: &[(&str, &str)]| {
            let mut r: HashMap<String, String> = HashMap::new();
            r.insert("case_index".into(), i.to_string());
            r.insert("case".into(), case.into());
            for (k, v) in vals {
                r.insert(k.to_string(), v.to_string());
            }
            r
        };
        let long = "a_rather_long_layer_name_for_alignment";
        let mut rows = BTreeMap::new();
        rows.insert(
            0,
            row(
                0,
                "cool",
                &[
                    ("status", "ok"),
                    ("iterations", "10"),
                    ("true_residual", "1e-9"),
                    ("die.max_k", "350"),
                    ("die.avg_k", "330"),
                    (&format!("{long}.max_k"), "320"),
                    (&format!("{long}.avg_k"), "310"),
                    ("die.core.max_k", "400"),
                ],
            ),
        );
        rows.insert(
            1,
            row(
                1,
                "hot",
                &[
                    ("status", "ok"),
                    ("iterations", "14"),
                    ("true_residual", "5e-9"),
                    ("die.max_k", "373.15"),
                    ("die.avg_k", "340"),
                    (&format!("{long}.max_k"), "330"),
                    (&format!("{long}.avg_k"), "320"),
                    ("die.core.max_k", "300"),
                ],
            ),
        );
        rows.insert(
            2,
            row(
                2,
                "bad",
                &[("status", "failed"), ("reason", "map: no such file")],
            ),
        );
        Table { columns, rows }
    }

    #[test]
    fn thermal_by_default_solver_with_verbose() {
        let t = table();
        let summary = serde_json::json!({
            "cases": 3, "solved": 2, "failed": 1,
            "failed_cases": [{"case_index": "2", "case": "bad", "reason": "map: no such file"}],
            "precond": "mg", "rtol": 1e-8, "batch": 1, "device": "cpu (1 job(s) x 2 thread(s))",
            "setup_s": 0.5, "solve_s": 1.25, "cases_per_s": 1.6,
        });
        let plain = format_report(&t, &summary, TempUnit::Celsius, false);
        let verbose = format_report(&t, &summary, TempUnit::Celsius, true);
        // The hottest case over all layers (a block column is not a layer).
        assert!(
            plain.contains("hottest    100.00 °C in die, case hot"),
            "{plain}"
        );
        assert!(
            plain.contains("failed     bad: map: no such file"),
            "{plain}"
        );
        assert!(plain.contains("--verbose"), "{plain}");
        for detail in ["preconditioner mg", "rtol", "residual", "set-up", "device"] {
            assert!(!plain.contains(detail), "{detail} in\n{plain}");
            assert!(verbose.contains(detail), "{detail} missing in\n{verbose}");
        }
        assert!(
            verbose.contains("12.0 iterations per case (max 14)"),
            "{verbose}"
        );
        // Mean of the cases' averages, per layer.
        assert!(plain.contains("61.85"), "{plain}"); // (330 + 340) / 2 K in °C
                                                     // Columns aligned: the value columns end at the same character.
        let lines: Vec<&str> = plain
            .lines()
            .filter(|l| l.contains("°C") || l.starts_with("die") || l.starts_with("a_rather"))
            .collect();
        let table: Vec<&str> = lines
            .iter()
            .copied()
            .filter(|l| !l.starts_with("hottest"))
            .collect();
        assert_eq!(table.len(), 3, "{plain}");
        let widths: Vec<usize> = table.iter().map(|l| l.chars().count()).collect();
        assert!(widths.windows(2).all(|w| w[0] == w[1]), "{plain}");
        // Kelvin on request.
        let k = format_report(&t, &summary, TempUnit::Kelvin, false);
        assert!(k.contains("373.15 K in die"), "{k}");
    }
}
