//! Plain-text layout shared by every table cuth prints: numbers and
//! coordinates without float noise, names cut to a column, rows aligned in
//! columns. Split from `table.rs` (the steady report) because the CSV and
//! time-series writers and the CLI's sweep, bench and topopt tables use these
//! helpers too, and none of them needs the report itself.

/// Widest column of the table: longer names are cut (ending in `…`).
pub const MAX_COL: usize = 48;

/// A number for a parameter list: plain for moderate magnitudes, scientific
/// otherwise, with trailing zeros dropped (`4`, `0.25`, `1.2e-5`).
pub fn num(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e9 {
        format!("{v:.0}")
    } else if (1e-3..1e6).contains(&v.abs()) {
        let s = format!("{v:.4}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        format!("{v:.3e}")
    }
}

/// A number for people: `sig` significant digits, so a sum of steps reads
/// `0.208`, not `2.0800000000000002e-1`; plain for moderate magnitudes,
/// scientific otherwise (`3.333e-7`), trailing zeros dropped.
pub fn human(v: f64, sig: usize) -> String {
    let sig = sig.max(1);
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let e = v.abs().log10().floor() as i32;
    if (-3..6).contains(&e) {
        let decimals = (sig as i32 - 1 - e).max(0) as usize;
        trim(format!("{v:.decimals$}"))
    } else {
        let s = format!("{:.*e}", sig - 1, v);
        let (m, exp) = s.split_once('e').expect("scientific");
        format!("{}e{exp}", trim(m.to_string()))
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

/// `s` cut to `max` characters, ending in `…` when cut, so one long name
/// cannot push a column out of line.
pub fn cut(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        s.chars().take(max - 1).chain(['…']).collect()
    }
}

/// Rows of cells laid out in columns as wide as their widest cell (header
/// included), two spaces apart; `right[c]` right-aligns column `c`
/// (numbers). Widths count characters, so `µ` and `°` take one.
pub fn columns(rows: &[Vec<String>], right: &[bool], indent: usize) -> Vec<String> {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|v| v.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            let cells: Vec<String> = r
                .iter()
                .enumerate()
                .map(|(c, v)| {
                    let pad = " ".repeat(widths[c] - v.chars().count());
                    if right.get(c) == Some(&true) {
                        pad + v
                    } else if c + 1 == r.len() {
                        v.clone() // no trailing blanks
                    } else {
                        v.clone() + &pad
                    }
                })
                .collect();
            format!("{}{}", " ".repeat(indent), cells.join("  "))
        })
        .collect()
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
}

#[cfg(test)]
mod human_tests {
    use super::human;

    #[test]
    fn numbers_for_people_keep_their_precision_only() {
        assert_eq!(human(0.20800000000000002, 6), "0.208");
        assert_eq!(human(14.0, 5), "14");
        assert_eq!(human(14.03456, 5), "14.035");
        assert_eq!(human(3.333e-7, 6), "3.333e-7");
        assert_eq!(human(2.5e7, 5), "2.5e7");
        assert_eq!(human(0.0, 5), "0");
    }
}
