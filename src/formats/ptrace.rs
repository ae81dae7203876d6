//! HotSpot power trace (`.ptrace`) reader: the first non-comment line names
//! the units (whitespace separated), every later line gives one power sample
//! per unit, in watts. A 3D trace holds the units of every layer, so lookups
//! are by name and unused columns are fine. Hands per-unit powers (the mean of
//! the rows for steady state, as HotSpot does, or one chosen row) to
//! `power::layer_power`.

use super::{invalid, ReadError};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A parsed trace: unit names and rows of powers, W.
#[derive(Clone, Debug)]
pub struct PowerTrace {
    /// The file it came from, for messages.
    pub file: PathBuf,
    pub names: Vec<String>,
    /// Data rows, each `names.len()` long.
    pub rows: Vec<Vec<f64>>,
    column: HashMap<String, usize>,
}

/// Reads and parses a power trace file.
pub fn read_ptrace(path: &Path) -> Result<PowerTrace, ReadError> {
    let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|source| {
        ReadError::Io {
            file: path.to_path_buf(),
            source,
        }
    })?;
    parse_ptrace(&text, path)
}

/// Parses trace text; `file` is used in messages. Blank lines and lines
/// starting with `#` are skipped (HotSpot has no comments, but they cost
/// nothing and help hand-written traces).
pub fn parse_ptrace(text: &str, file: &Path) -> Result<PowerTrace, ReadError> {
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
    let Some((header_line, header)) = lines.next() else {
        return Err(invalid(
            file,
            "header",
            "the trace is empty: no header line of unit names",
        ));
    };
    let names: Vec<String> = header.split_whitespace().map(str::to_string).collect();
    let mut column = HashMap::with_capacity(names.len());
    for (j, name) in names.iter().enumerate() {
        if let Some(first) = column.insert(name.clone(), j) {
            return Err(invalid(
                file,
                format!("line {header_line}"),
                format!(
                    "unit `{name}` appears in columns {} and {}; names must be unique",
                    first + 1,
                    j + 1
                ),
            ));
        }
    }
    let mut rows = Vec::new();
    for (line, l) in lines {
        let at = format!("line {line}");
        let row = l
            .split_whitespace()
            .enumerate()
            .map(|(j, s)| match s.parse::<f64>() {
                Ok(p) if (0.0..=super::MAX_POWER_W).contains(&p) => Ok(p),
                _ => Err(invalid(
                    file,
                    &at,
                    format!(
                        "column {} ({}): `{s}` is not a power (a number from 0 to 1e9 W)",
                        j + 1,
                        names.get(j).map_or("beyond the header", String::as_str)
                    ),
                )),
            })
            .collect::<Result<Vec<f64>, _>>()?;
        if row.len() != names.len() {
            return Err(invalid(
                file,
                at,
                format!(
                    "{} values, but the header on line {header_line} names {} units",
                    row.len(),
                    names.len()
                ),
            ));
        }
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(invalid(
            file,
            format!("line {header_line}"),
            "the trace has a header but no rows of powers",
        ));
    }
    Ok(PowerTrace {
        file: file.to_path_buf(),
        names,
        rows,
        column,
    })
}

impl PowerTrace {
    /// Column of unit `name`, if the header lists it.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.column.get(name).copied()
    }

    /// Per-column mean over all rows: HotSpot's steady-state input.
    pub fn mean(&self) -> Vec<f64> {
        let mut sum = vec![0.0; self.names.len()];
        for row in &self.rows {
            for (s, p) in sum.iter_mut().zip(row) {
                *s += p;
            }
        }
        let n = self.rows.len() as f64;
        sum.into_iter().map(|s| s / n).collect()
    }

    /// Data row `i` (0-based, header excluded).
    pub fn row(&self, i: usize) -> Option<&[f64]> {
        self.rows.get(i).map(Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PowerTrace, ReadError> {
        parse_ptrace(text, Path::new("t.ptrace"))
    }

    #[test]
    fn mean_and_row() {
        let t = parse("# trace\na\tb  c\n1 2 3\n\n3 4 5\n").unwrap();
        assert_eq!(t.names, ["a", "b", "c"]);
        assert_eq!(t.mean(), [2.0, 3.0, 4.0]);
        assert_eq!(t.row(1), Some(&[3.0, 4.0, 5.0][..]));
        assert_eq!(t.row(2), None);
        assert_eq!(t.column("c"), Some(2));
        assert_eq!(t.column("d"), None);
    }

    #[test]
    fn bad_traces_name_the_line() {
        let m = parse("a b\n1 2\n1 2 3\n").unwrap_err().to_string();
        assert!(
            m.contains("t.ptrace") && m.contains("line 3") && m.contains("3 values"),
            "{m}"
        );
        let m = parse("a b\n1\n").unwrap_err().to_string();
        assert!(m.contains("line 2") && m.contains("names 2 units"), "{m}");
        let m = parse("a b\n1 x\n").unwrap_err().to_string();
        assert!(m.contains("line 2") && m.contains("column 2 (b)"), "{m}");
        let m = parse("a b\n1 -2\n").unwrap_err().to_string();
        assert!(m.contains("`-2`"), "{m}");
        let m = parse("a b a\n1 2 3\n").unwrap_err().to_string();
        assert!(m.contains("line 1") && m.contains("`a`"), "{m}");
        let m = parse("a b\n").unwrap_err().to_string();
        assert!(m.contains("no rows"), "{m}");
        let m = parse("\n# nothing\n").unwrap_err().to_string();
        assert!(m.contains("empty"), "{m}");
    }
}
