//! The human-readable run report on stdout: what was solved, on what, how the
//! solver did, whether energy balances, per-layer temperatures, the hottest
//! cell and where the time went. Built as one string ([`format_table`]) so it
//! can be tested and is written in one piece; `summary.json` holds the same
//! facts for machines.

use super::layout::{columns, cut, num, short, MAX_COL};
use super::TempUnit;
use crate::thermal::summary::Summary;
use std::fmt::Write as _;
use std::io::Write as _;

/// Prints [`format_table`] to stdout. Write errors are ignored on purpose:
/// `cuth solve … | head` closes the pipe early, and that must not turn into a
/// panic or a failed run after the results are already on disk.
pub fn print_table(summary: &Summary, unit: TempUnit, verbose: bool) {
    let text = format_table(summary, unit, verbose);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writing to a `String` cannot fail, so `writeln!`'s result is dropped here
/// rather than at every line.
macro_rules! put {
    ($dst:expr) => {{
        let _ = writeln!($dst);
    }};
    ($dst:expr, $($arg:tt)*) => {{
        let _ = writeln!($dst, $($arg)*);
    }};
}

/// The report as text: what a thermal engineer asks first (grid, power,
/// energy balance, temperatures per layer, hottest cell, probes), the
/// solver in one line. `verbose` adds the solver's details (method,
/// precision, preconditioner parameters such as the Chebyshev λ bounds,
/// iteration cap, stop reason) and every timing. Lengths in mm and µm,
/// which read better than metres at chip scale.
pub fn format_table(s: &Summary, unit: TempUnit, verbose: bool) -> String {
    let mut o = String::new();
    put_run(&mut o, s, verbose);
    put_solver(&mut o, s, verbose);
    put_energy(&mut o, s, unit);
    put_layers(&mut o, s, unit);
    put_hottest_and_probes(&mut o, s, unit);
    put_timings(&mut o, s, verbose);
    o
}

/// Title, stack, grid and device.
fn put_run(o: &mut String, s: &Summary, verbose: bool) {
    put!(o, "cuth {}  steady state", s.cuth_version);
    if let Some(title) = &s.title {
        put!(o, "{:<10} {title}", "title");
    }
    put!(o, "{:<10} {}", "stack", s.stack);
    let g = &s.grid;
    put!(
        o,
        "{:<10} {} x {} x {} = {} cells, {} {} x {} mm",
        "grid",
        g.nx,
        g.ny,
        g.nz,
        g.cells,
        if g.graded { "smallest cell" } else { "cell" },
        short(g.dx_m * 1e3),
        short(g.dy_m * 1e3)
    );
    let d = &s.device;
    let detail = if d.detail.is_empty() || !verbose {
        String::new()
    } else {
        format!(" ({})", d.detail)
    };
    put!(o, "{:<10} {}: {}{detail}", "device", d.backend, d.name);
}

/// The solver in one line; with `verbose`, its method, preconditioner and
/// stop.
fn put_solver(o: &mut String, s: &Summary, verbose: bool) {
    let sv = &s.solver;
    put!(
        o,
        "{:<10} {} in {} iterations, residual {:.1e}{}",
        "solver",
        if sv.converged {
            "converged"
        } else {
            "NOT converged"
        },
        sv.iterations,
        sv.final_true_residual,
        if verbose {
            ""
        } else {
            " (--verbose for details)"
        }
    );
    if verbose {
        let params: Vec<String> = sv
            .precond
            .params
            .iter()
            .map(|(k, v)| format!("{k}={}", num(*v)))
            .collect();
        let params = if params.is_empty() {
            String::new()
        } else {
            format!(" ({})", params.join(", "))
        };
        put!(
            o,
            "{:<10} {} {}, preconditioner {}{params}",
            "",
            sv.method,
            sv.precision,
            sv.precond.name
        );
        put!(
            o,
            "{:<10} max {} iterations, final true residual {:.3e} (rtol {:.1e}): {}",
            "",
            sv.max_iter,
            sv.final_true_residual,
            sv.rtol,
            sv.stop_reason
        );
        if sv.residual_replacements > 0 {
            put!(
                o,
                "{:<10} restarted {} time(s) from the true residual (recurrence drift)",
                "",
                sv.residual_replacements
            );
        }
    }
}

fn put_energy(o: &mut String, s: &Summary, unit: TempUnit) {
    let sym = unit.symbol();
    let t = |k: f64| unit.convert_k(k);
    let e = &s.energy;
    let coolant = e.heat_out_coolant_w.unwrap_or(0.0);
    let coolant_part = match e.heat_out_coolant_w {
        Some(w) => format!(", coolant {w:.6}"),
        None => String::new(),
    };
    put!(
        o,
        "{:<10} power in {:.6} W, heat out {:.6} W (top {:.6}, bottom {:.6}{coolant_part}), balance {:.1e}",
        "energy",
        e.power_in_w,
        e.heat_out_top_w + e.heat_out_bottom_w + coolant,
        e.heat_out_top_w,
        e.heat_out_bottom_w,
        e.relative_error
    );
    put!(o, "{:<10} {:.2} {sym}", "ambient", t(s.ambient_k));
    for c in &s.coolant {
        put!(
            o,
            "{:<10} {} ({}, {:.4} ml/min): {:.6} W, inlet {:.2} {sym}, outlet mean {:.2} {sym}, max {:.2} {sym}",
            "coolant",
            c.layer,
            c.model,
            c.flow_m3_s * 6e7,
            c.heat_w,
            t(c.inlet_k),
            t(c.outlet_mean_k),
            t(c.outlet_max_k)
        );
    }
    put!(o);
}

/// One row per layer: material, thickness, power and its temperatures.
fn put_layers(o: &mut String, s: &Summary, unit: TempUnit) {
    let sym = unit.symbol();
    let t = |k: f64| unit.convert_k(k);
    let mut rows = vec![[
        "#",
        "layer",
        "material",
        "thick µm",
        "power W",
        &format!("min {sym}"),
        &format!("avg {sym}"),
        &format!("max {sym}"),
    ]
    .map(String::from)
    .to_vec()];
    for (i, l) in s.layers.iter().enumerate() {
        rows.push(vec![
            i.to_string(),
            cut(&l.name, MAX_COL),
            cut(&l.material, MAX_COL),
            format!("{:.3}", l.thickness_m * 1e6),
            format!("{:.4}", l.power_w),
            format!("{:.2}", t(l.t_min_k)),
            format!("{:.2}", t(l.t_avg_k)),
            format!("{:.2}", t(l.t_max_k)),
        ]);
    }
    let right = [true, false, false, true, true, true, true, true];
    for line in columns(&rows, &right, 0) {
        put!(o, "{line}");
    }
    put!(o);
}

fn put_hottest_and_probes(o: &mut String, s: &Summary, unit: TempUnit) {
    let sym = unit.symbol();
    let t = |k: f64| unit.convert_k(k);
    let h = &s.hottest;
    let at = |x_m: f64, y_m: f64| format!("x {} mm, y {} mm", short(x_m * 1e3), short(y_m * 1e3));
    // On a die, its own frame first (where its floorplan has 0, 0), then
    // the domain's.
    let place = match &h.die {
        Some(d) => format!(
            "at {} on die {} ({} in the domain; cell {}, {}, {})",
            at(d.x_m, d.y_m),
            d.name,
            at(h.x_m, h.y_m),
            h.x,
            h.y,
            h.z
        ),
        None => format!("at {} (cell {}, {}, {})", at(h.x_m, h.y_m), h.x, h.y, h.z),
    };
    put!(
        o,
        "{:<10} {:.2} {sym} in {} {place}",
        "hottest",
        t(h.t_k),
        h.layer
    );
    if !s.probes.is_empty() {
        put!(o, "probes");
        let rows: Vec<Vec<String>> = s
            .probes
            .iter()
            .map(|p| {
                vec![
                    cut(&p.name, MAX_COL),
                    format!("{:.2} {sym}", t(p.t_k)),
                    format!("in {}", cut(&p.layer, MAX_COL)),
                    format!(
                        "at x {} mm, y {} mm, z {} µm{}",
                        short(p.x_m * 1e3),
                        short(p.y_m * 1e3),
                        short(p.z_m * 1e6),
                        match &p.die {
                            Some(d) => format!(" (die {}: {})", d.name, at(d.x_m, d.y_m)),
                            None => String::new(),
                        }
                    ),
                ]
            })
            .collect();
        for line in columns(&rows, &[false, true], 11) {
            put!(o, "{line}");
        }
    }
}

/// The total time; with `verbose`, every phase and part.
fn put_timings(o: &mut String, s: &Summary, verbose: bool) {
    let total: f64 = s.timings_s.iter().map(|(_, secs)| secs).sum();
    if verbose && !s.timings_s.is_empty() {
        put!(o, "timings");
        let rows: Vec<Vec<String>> = s
            .timings_s
            .iter()
            .map(|(phase, secs)| vec![cut(phase, MAX_COL), format!("{secs:.3} s")])
            .collect();
        for line in columns(&rows, &[false, true], 11) {
            put!(o, "{line}");
        }
        if let Some(w) = s.wall_s {
            put!(o, "{:<10} {w:.3} s", "wall");
        }
        if !s.timings_detail_s.is_empty() {
            put!(o, "timing parts");
            let rows: Vec<Vec<String>> = (s.timings_detail_s.iter())
                .map(|(part, secs)| vec![cut(part, MAX_COL), format!("{secs:.3} s")])
                .collect();
            for line in columns(&rows, &[false, true], 11) {
                put!(o, "{line}");
            }
        }
    } else if !s.timings_s.is_empty() {
        put!(o, "{:<10} {total:.3} s", "time");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_shows_each_section() {
        let s = super::super::tests::summary();
        let k = format_table(&s, TempUnit::Kelvin, true);
        let c = format_table(&s, TempUnit::Celsius, true);
        for needle in ["grid", "device", "chebyshev", "energy", "hottest", "solve"] {
            assert!(c.contains(needle), "missing {needle}:\n{c}");
        }
        // Layer rows: name, thickness in µm, temperatures in the unit.
        assert!(c.contains("si"), "{c}");
        assert!(k.contains("max K") && c.contains("max °C"));
        assert!(k.contains("350.00") && c.contains("76.85"), "{k}\n{c}");
        assert!(c.contains("100.000"), "thickness in µm:\n{c}");
    }

    #[test]
    fn default_table_speaks_thermal_and_verbose_adds_the_solver() {
        let s = super::super::tests::summary();
        let plain = format_table(&s, TempUnit::Celsius, false);
        let verbose = format_table(&s, TempUnit::Celsius, true);
        assert!(
            plain.contains("converged in") && plain.contains("--verbose"),
            "{plain}"
        );
        // Preconditioner internals (λ bounds, degree) only with --verbose.
        let params: Vec<&String> = s.solver.precond.params.keys().collect();
        assert!(!params.is_empty());
        for k in params {
            assert!(!plain.contains(&format!("{k}=")), "{k} in\n{plain}");
            assert!(
                verbose.contains(&format!("{k}=")),
                "{k} missing in\n{verbose}"
            );
        }
        assert!(
            !plain.contains("timings") && plain.contains("time "),
            "{plain}"
        );
        assert!(
            verbose.contains("timings") && verbose.contains("rtol"),
            "{verbose}"
        );
    }

    #[test]
    fn columns_stay_aligned_for_any_value() {
        let mut s = super::super::tests::summary();
        s.layers[0].name = "a_layer_name_far_longer_than_any_column_should_ever_be_allowed".into();
        s.layers[0].power_w = 123_456_789.123;
        s.layers[0].t_max_k = 1e12;
        s.layers[1].thickness_m = 3.0;
        s.layers[1].material = "ünïcödé µ-material".into();
        let text = format_table(&s, TempUnit::Celsius, false);
        let lines: Vec<&str> = text.lines().collect();
        let head = lines
            .iter()
            .position(|l| l.contains("layer") && l.contains("material"))
            .unwrap();
        let table: Vec<&str> = lines[head..head + 1 + s.layers.len()].to_vec();
        // Every row as long as the header, and each column's right edge in
        // the same character position.
        let len = |l: &str| l.chars().count();
        assert!(table.iter().all(|l| len(l) == len(table[0])), "{text}");
        for col in ["power W", "max °C", "thick µm"] {
            let at = table[0].find(col).unwrap() + col.len();
            let edge = table[0][..at].chars().count();
            for l in &table[1..] {
                let c: Vec<char> = l.chars().collect();
                assert!(c[edge - 1] != ' ', "{col} misaligned:\n{text}");
                assert!(
                    edge == c.len() || c[edge] == ' ',
                    "{col} misaligned:\n{text}"
                );
            }
        }
        assert!(text.contains("…"), "long name cut:\n{text}");
    }
}
