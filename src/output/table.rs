//! The human-readable run report on stdout: what was solved, on what, how the
//! solver did, whether energy balances, per-layer temperatures, the hottest
//! cell and where the time went. Built as one string ([`format_table`]) so it
//! can be tested and is written in one piece; `summary.json` holds the same
//! facts for machines.

/// Widest padded column of the table (longer names overflow it).
const MAX_COL: usize = 48;

use super::TempUnit;
use crate::thermal::summary::Summary;
use std::fmt::Write as _;
use std::io::Write as _;

/// Prints [`format_table`] to stdout. Write errors are ignored on purpose:
/// `cuth solve … | head` closes the pipe early, and that must not turn into a
/// panic or a failed run after the results are already on disk.
pub fn print_table(summary: &Summary, unit: TempUnit) {
    let text = format_table(summary, unit);
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// A number for a parameter list: plain for moderate magnitudes, scientific
/// otherwise, with trailing zeros dropped (`4`, `0.25`, `1.2e-5`).
fn num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e9 {
        format!("{v:.0}")
    } else if (1e-3..1e6).contains(&v.abs()) {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.3e}")
    }
}

/// A coordinate without float noise: at most 6 significant decimals,
/// trailing zeros dropped (`0.015`, not `0.015000000000000001`).
pub(crate) fn short(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
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

/// The report as text. Temperatures are shown in `unit`; lengths in mm and
/// µm, which read better than metres at chip scale.
pub fn format_table(s: &Summary, unit: TempUnit) -> String {
    let sym = unit.symbol();
    let t = |k: f64| unit.convert_k(k);
    let mut o = String::new();

    put!(o, "cuth {}  steady state", s.cuth_version);
    if let Some(title) = &s.title {
        put!(o, "{:<10} {title}", "title");
    }
    put!(o, "{:<10} {}", "stack", s.stack);
    let g = &s.grid;
    put!(
        o,
        "{:<10} {} x {} x {} = {} cells, cell {:.4} x {:.4} mm",
        "grid",
        g.nx,
        g.ny,
        g.nz,
        g.cells,
        g.dx_m * 1e3,
        g.dy_m * 1e3
    );
    let d = &s.device;
    let detail = if d.detail.is_empty() {
        String::new()
    } else {
        format!(" ({})", d.detail)
    };
    put!(o, "{:<10} {}: {}{detail}", "device", d.backend, d.name);

    let sv = &s.solver;
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
        "solver",
        sv.method,
        sv.precision,
        sv.precond.name
    );
    put!(
        o,
        "{:<10} {} iterations (max {}), final true residual {:.3e} (rtol {:.1e}), {}: {}",
        "",
        sv.iterations,
        sv.max_iter,
        sv.final_true_residual,
        sv.rtol,
        if sv.converged {
            "converged"
        } else {
            "NOT converged"
        },
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
    let e = &s.energy;
    put!(
        o,
        "{:<10} power in {:.6} W, heat out {:.6} W (top {:.6}, bottom {:.6}), relative error {:.2e}",
        "energy",
        e.power_in_w,
        e.heat_out_top_w + e.heat_out_bottom_w,
        e.heat_out_top_w,
        e.heat_out_bottom_w,
        e.relative_error
    );
    put!(o, "{:<10} {:.2} {sym}", "ambient", t(s.ambient_k));
    put!(o);

    let name_w = s
        .layers
        .iter()
        .map(|l| l.name.chars().count())
        .chain([5])
        .max()
        .unwrap_or(5)
        // Column widths are capped: a longer name overflows its column,
        // and a width beyond u16 would panic in `format!`.
        .min(MAX_COL);
    let mat_w = s
        .layers
        .iter()
        .map(|l| l.material.chars().count())
        .chain([8])
        .max()
        .unwrap_or(8)
        // Column widths are capped: a longer name overflows its column,
        // and a width beyond u16 would panic in `format!`.
        .min(MAX_COL);
    let (tmin, tavg, tmax) = (
        format!("min {sym}"),
        format!("avg {sym}"),
        format!("max {sym}"),
    );
    put!(
        o,
        "{:>3}  {:<name_w$}  {:<mat_w$}  {:>10}  {:>10}  {:>9}  {:>9}  {:>9}",
        "#",
        "layer",
        "material",
        "thick µm",
        "power W",
        tmin,
        tavg,
        tmax
    );
    for (i, l) in s.layers.iter().enumerate() {
        put!(
            o,
            "{i:>3}  {:<name_w$}  {:<mat_w$}  {:>10.3}  {:>10.4}  {:>9.2}  {:>9.2}  {:>9.2}",
            l.name,
            l.material,
            l.thickness_m * 1e6,
            l.power_w,
            t(l.t_min_k),
            t(l.t_avg_k),
            t(l.t_max_k)
        );
    }
    put!(o);

    let h = &s.hottest;
    put!(
        o,
        "{:<10} {:.2} {sym} in {} at x {:.3} mm, y {:.3} mm (cell {}, {}, {})",
        "hottest",
        t(h.t_k),
        h.layer,
        h.x_m * 1e3,
        h.y_m * 1e3,
        h.x,
        h.y,
        h.z
    );
    if !s.probes.is_empty() {
        let w = s
            .probes
            .iter()
            .map(|p| p.name.chars().count())
            .chain([5])
            .max()
            .unwrap_or(5)
            .min(MAX_COL);
        put!(o, "probes");
        for p in &s.probes {
            put!(
                o,
                "{:<10} {:<w$}  {:>9.2} {sym}  in {} at x {} mm, y {} mm, z {} µm",
                "",
                p.name,
                t(p.t_k),
                p.layer,
                short(p.x_m * 1e3),
                short(p.y_m * 1e3),
                short(p.z_m * 1e6)
            );
        }
    }
    if !s.timings_s.is_empty() {
        let phase_w = s
            .timings_s
            .iter()
            .map(|(p, _)| p.chars().count())
            .max()
            .unwrap_or(0)
            .min(MAX_COL);
        put!(o, "timings");
        for (phase, secs) in &s.timings_s {
            put!(o, "{:<10} {phase:<phase_w$}  {secs:>9.3} s", "");
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_short() {
        assert_eq!(num(4.0), "4");
        assert_eq!(num(0.25), "0.25");
        assert_eq!(num(1.2e-5), "1.200e-5");
        assert_eq!(num(12345.678), "12345.678");
        assert_eq!(short(0.1 + 0.2), "0.3");
        assert_eq!(short(1.5000000000000001e-2), "0.015");
        assert_eq!(short(-0.0), "0");
        assert_eq!(short(2.0), "2");
    }

    #[test]
    fn table_shows_each_section() {
        let s = super::super::tests::summary();
        let k = format_table(&s, TempUnit::Kelvin);
        let c = format_table(&s, TempUnit::Celsius);
        for needle in ["grid", "device", "chebyshev", "energy", "hottest", "solve"] {
            assert!(c.contains(needle), "missing {needle}:\n{c}");
        }
        // Layer rows: name, thickness in µm, temperatures in the unit.
        assert!(c.contains("si"), "{c}");
        assert!(k.contains("max K") && c.contains("max °C"));
        assert!(k.contains("350.00") && c.contains("76.85"), "{k}\n{c}");
        assert!(c.contains("100.000"), "thickness in µm:\n{c}");
    }
}
