//! Power traces over time for transient runs: a HotSpot `.ptrace` (one row
//! per sampling interval, `--sample-interval` seconds) or a CSV whose first
//! column is the time in seconds (`time,<block>,<block>,...`), told apart by
//! their content ([`detect_format`]); CSV is read through the `csv` crate. Each row holds
//! from its time until the next row's time (piecewise constant); the last row
//! holds forever. Hands rows of block powers to `power::schedule`.

use super::ptrace::parse_ptrace;
use super::{invalid, ReadError};
use std::path::{Path, PathBuf};

/// When each row of a trace starts.
#[derive(Clone, Debug, PartialEq)]
pub enum RowTimes {
    /// Row k starts at `k · interval` seconds (HotSpot `.ptrace`).
    Interval(f64),
    /// Row k starts at `times[k]` seconds, strictly increasing (CSV).
    Listed(Vec<f64>),
}

/// A trace with a time axis: block names, rows of powers (W) and row times.
#[derive(Clone, Debug)]
pub struct TimeTrace {
    pub file: PathBuf,
    pub names: Vec<String>,
    pub rows: Vec<Vec<f64>>,
    pub times: RowTimes,
}

impl TimeTrace {
    /// The row in force at time `t` (s): the last row starting at or before
    /// `t`; before the first row's time, the first row.
    pub fn row_at(&self, t: f64) -> usize {
        let last = self.rows.len() - 1;
        match &self.times {
            RowTimes::Interval(dt) => ((t / dt).floor().max(0.0) as usize).min(last),
            RowTimes::Listed(times) => times.partition_point(|&s| s <= t).saturating_sub(1),
        }
    }
}

impl TimeTrace {
    /// How long each row holds, s, for averaging: a `.ptrace` row one
    /// interval; a CSV row until the next, its last as long as the mean of
    /// the others (equal weights for a one-row trace).
    pub fn row_durations(&self) -> Vec<f64> {
        match &self.times {
            RowTimes::Interval(dt) => vec![*dt; self.rows.len()],
            RowTimes::Listed(t) if t.len() < 2 => vec![1.0; t.len()],
            RowTimes::Listed(t) => {
                let mut d: Vec<f64> = t.windows(2).map(|w| w[1] - w[0]).collect();
                d.push((t[t.len() - 1] - t[0]) / (t.len() - 1) as f64);
                d
            }
        }
    }
}

/// The two trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceFormat {
    /// `time,<block>,...` with commas.
    Csv,
    /// HotSpot `.ptrace`: whitespace-separated names, then rows.
    Ptrace,
}

impl TraceFormat {
    /// How the format is called in messages.
    pub fn describe(self) -> &'static str {
        match self {
            TraceFormat::Csv => "a CSV trace (its own `time` column)",
            TraceFormat::Ptrace => "a HotSpot .ptrace (rows --sample-interval apart)",
        }
    }
}

/// The format of trace text, decided by its content, not its name: a header
/// line (the first that is neither blank nor a `#` comment) with a comma is
/// CSV, one without is a `.ptrace` (HotSpot separates names by whitespace).
/// A lone `time` is a CSV header without blocks, so that its fault is
/// reported as such rather than as a `.ptrace` block named `time`.
pub fn detect_format(text: &str) -> TraceFormat {
    let header = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    match header {
        Some(h) if h.contains(',') || h.eq_ignore_ascii_case("time") => TraceFormat::Csv,
        _ => TraceFormat::Ptrace,
    }
}

impl TimeTrace {
    /// The format the trace was read as.
    pub fn format(&self) -> TraceFormat {
        match self.times {
            RowTimes::Listed(_) => TraceFormat::Csv,
            RowTimes::Interval(_) => TraceFormat::Ptrace,
        }
    }
}

/// Reads a trace, CSV or `.ptrace` as its content says ([`detect_format`];
/// the extension does not decide). A CSV needs a time column and takes no
/// `sample_interval`; a `.ptrace`'s rows are `sample_interval` seconds apart
/// (`default_interval`, one row per time step, when not given).
pub fn read_time_trace(
    path: &Path,
    sample_interval: Option<f64>,
    default_interval: f64,
) -> Result<TimeTrace, ReadError> {
    let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|source| {
        ReadError::Io {
            file: path.to_path_buf(),
            source,
        }
    })?;
    if detect_format(&text) == TraceFormat::Csv {
        if sample_interval.is_some() {
            return Err(invalid(
                path,
                "--sample-interval",
                "a CSV trace gives its own times in the `time` column; drop --sample-interval",
            ));
        }
        return parse_csv_trace(&text, path);
    }
    let dt = sample_interval.unwrap_or(default_interval);
    if !(dt.is_finite() && dt > 0.0) {
        return Err(invalid(
            path,
            "--sample-interval",
            format!("must be a positive number of seconds, got {dt}"),
        ));
    }
    let p = parse_ptrace(&text, path)?;
    Ok(TimeTrace {
        file: path.to_path_buf(),
        names: p.names,
        rows: p.rows,
        times: RowTimes::Interval(dt),
    })
}

/// The records of CSV text through the `csv` crate (quoted names allowed,
/// fields trimmed, rows of any length: checked by the caller), each with its
/// line number; blank lines and lines starting with `#` are skipped.
fn csv_records(text: &str, file: &Path) -> Result<Vec<(usize, csv::StringRecord)>, ReadError> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut out = Vec::new();
    for record in rdr.records() {
        let record = record.map_err(|e| {
            let field = e
                .position()
                .map_or("csv".to_string(), |p| format!("line {}", p.line()));
            invalid(file, field, e.to_string())
        })?;
        let first = record.get(0).unwrap_or("");
        if first.starts_with('#') || (record.len() == 1 && first.is_empty()) {
            continue;
        }
        let line = record.position().map_or(0, |p| p.line() as usize);
        out.push((line, record));
    }
    Ok(out)
}

/// Parses a CSV trace: header `time,<names...>`, then rows of a time (s,
/// finite, ≥ 0, strictly increasing) and one power (W, finite, ≥ 0) per name.
/// Blank lines and lines starting with `#` are skipped; names may be quoted
/// (as cuth's own `timeseries.csv` quotes them).
pub fn parse_csv_trace(text: &str, file: &Path) -> Result<TimeTrace, ReadError> {
    let records = csv_records(text, file)?;
    let mut lines = records.iter();
    let Some((hl, header)) = lines.next() else {
        return Err(invalid(
            file,
            "header",
            "the trace is empty: no header line",
        ));
    };
    let hl = *hl;
    let names = block_names(header, hl, file)?;
    let cols = names.len() + 1;
    let (mut times, mut rows) = (Vec::new(), Vec::new());
    let mut prev: Option<(usize, f64)> = None;
    for (line, vals) in lines {
        let at = format!("line {line}");
        if vals.len() != cols {
            return Err(invalid(
                file,
                at,
                format!(
                    "{} values, but the header on line {hl} has {} columns",
                    vals.len(),
                    cols
                ),
            ));
        }
        let t = match vals[0].parse::<f64>() {
            Ok(t) if t.is_finite() && t >= 0.0 => t,
            _ => {
                return Err(invalid(
                    file,
                    format!("{at}, column 1 (time)"),
                    format!("`{}` is not a time (a finite number ≥ 0, s)", &vals[0]),
                ))
            }
        };
        if let Some((pl, pt)) = prev {
            if t <= pt {
                return Err(invalid(
                    file,
                    format!("{at}, column 1 (time)"),
                    format!("time {t} is not after {pt} on line {pl}: times must increase"),
                ));
            }
        }
        prev = Some((*line, t));
        let row = vals
            .iter()
            .skip(1)
            .enumerate()
            .map(|(j, s)| match s.parse::<f64>() {
                Ok(p) if (0.0..=super::MAX_POWER_W).contains(&p) => Ok(p),
                _ => Err(invalid(
                    file,
                    format!("{at}, column {} ({})", j + 2, names[j]),
                    format!("`{s}` is not a power (a number from 0 to 1e9 W)"),
                )),
            })
            .collect::<Result<Vec<f64>, _>>()?;
        times.push(t);
        rows.push(row);
    }
    if rows.is_empty() {
        return Err(invalid(
            file,
            format!("line {hl}"),
            "the trace has a header but no rows",
        ));
    }
    // A run starts at t = 0, as HotSpot's and 3D-ICE's traces do: a first
    // row at a later time leaves the power before it unsaid, and holding
    // that row from 0 would silently move the whole workload earlier.
    if times[0] > 0.0 {
        let line = records[1].0;
        return Err(invalid(
            file,
            format!("line {line}, column 1 (time)"),
            format!(
                "the first row is at {} s, but a run starts at 0 s: add a row at time 0 \
                 with the power until then",
                times[0]
            ),
        ));
    }
    Ok(TimeTrace {
        file: file.to_path_buf(),
        names,
        rows,
        times: RowTimes::Listed(times),
    })
}

/// The block names of a CSV trace's header (line `hl`): `time` first, then
/// unique, non-empty names.
fn block_names(
    header: &csv::StringRecord,
    hl: usize,
    file: &Path,
) -> Result<Vec<String>, ReadError> {
    let cols: Vec<&str> = header.iter().collect();
    if !cols[0].eq_ignore_ascii_case("time") {
        return Err(invalid(
            file,
            format!("line {hl}, column 1"),
            format!(
                "the first column must be `time` (seconds), got `{}`",
                cols[0]
            ),
        ));
    }
    let names: Vec<String> = cols[1..].iter().map(|s| s.to_string()).collect();
    if names.is_empty() {
        return Err(invalid(
            file,
            format!("line {hl}"),
            "no block columns after `time`",
        ));
    }
    for (j, n) in names.iter().enumerate() {
        if n.is_empty() {
            return Err(invalid(
                file,
                format!("line {hl}, column {}", j + 2),
                "empty block name",
            ));
        }
        if let Some(k) = names[..j].iter().position(|m| m == n) {
            return Err(invalid(
                file,
                format!("line {hl}"),
                format!("block `{n}` appears in columns {} and {}", k + 2, j + 2),
            ));
        }
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(text: &str) -> Result<TimeTrace, ReadError> {
        parse_csv_trace(text, Path::new("w.csv"))
    }

    #[test]
    fn csv_rows_hold_until_the_next_time() {
        let t = csv("# workload\ntime, a, b\n0, 1, 2\n0.5, 3, 4\n2.0, 5, 6\n").unwrap();
        assert_eq!(t.names, ["a", "b"]);
        assert_eq!(t.rows[1], [3.0, 4.0]);
        let at = |s: f64| t.row_at(s);
        assert_eq!(
            [at(0.0), at(0.49), at(0.5), at(1.99), at(2.0), at(1e9)],
            [0, 0, 1, 1, 2, 2]
        );
    }

    /// The power before a late first row is unknown: refused, naming the row.
    #[test]
    fn a_trace_must_start_at_time_zero() {
        for text in ["time,a\n1e9,7\n2e9,8\n", "# w\ntime,a\n\n1e-6,7\n"] {
            let m = csv(text).unwrap_err().to_string();
            assert!(
                m.contains("column 1 (time)") && m.contains("add a row at time 0"),
                "{m}"
            );
        }
        let m = csv("time,a\n1e9,7\n").unwrap_err().to_string();
        assert!(m.contains("line 2") && m.contains("1000000000 s"), "{m}");
    }

    #[test]
    fn ptrace_rows_are_sample_intervals_apart() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.ptrace");
        std::fs::write(&p, "a b\n1 2\n3 4\n5 6\n").unwrap();
        let t = read_time_trace(&p, Some(0.25), 1.0).unwrap();
        assert_eq!(t.times, RowTimes::Interval(0.25));
        let rows: Vec<usize> = [0.0, 0.2, 0.25, 0.6, 10.0]
            .iter()
            .map(|&s| t.row_at(s))
            .collect();
        assert_eq!(rows, [0, 0, 1, 2, 2]);
        // Without --sample-interval: one row per step of the default.
        let t = read_time_trace(&p, None, 1e-3).unwrap();
        assert_eq!(t.row_at(1.5e-3), 1);
        let m = read_time_trace(&p, Some(-1.0), 1.0)
            .unwrap_err()
            .to_string();
        assert!(
            m.contains("--sample-interval") && m.contains("x.ptrace"),
            "{m}"
        );
    }

    #[test]
    fn bad_csv_traces_name_the_line_and_column() {
        let m = csv("time,a\n0,1\n0.5,2\n0.5,3\n").unwrap_err().to_string();
        assert!(
            m.contains("w.csv") && m.contains("line 4") && m.contains("must increase"),
            "{m}"
        );
        let m = csv("t,a\n0,1\n").unwrap_err().to_string();
        assert!(m.contains("`time`"), "{m}");
        let m = csv("time,a,b\n0,1\n").unwrap_err().to_string();
        assert!(m.contains("line 2") && m.contains("3 columns"), "{m}");
        let m = csv("time,a\n0,-1\n").unwrap_err().to_string();
        assert!(m.contains("column 2 (a)"), "{m}");
        let m = csv("time,a\nx,1\n").unwrap_err().to_string();
        assert!(m.contains("column 1 (time)"), "{m}");
        let m = csv("time,a,a\n0,1,1\n").unwrap_err().to_string();
        assert!(m.contains("`a`"), "{m}");
        let m = csv("time,a\n").unwrap_err().to_string();
        assert!(m.contains("no rows"), "{m}");
    }

    #[test]
    fn quoted_names_and_comments_read_with_their_line_numbers() {
        let t = csv("# made by hand\n\ntime,\"core,0\", b\n0,1,2\n").unwrap();
        assert_eq!(t.names, ["core,0", "b"]);
        let m = csv("# c\ntime,a\n\n0,1\n1,x\n").unwrap_err().to_string();
        assert!(m.contains("line 5, column 2 (a)"), "{m}");
    }

    #[test]
    fn the_format_is_decided_by_content_not_extension() {
        assert_eq!(detect_format("# c\ntime,a\n0,1\n"), TraceFormat::Csv);
        assert_eq!(detect_format("a b\n1 2\n"), TraceFormat::Ptrace);
        assert_eq!(detect_format(""), TraceFormat::Ptrace);
        let dir = tempfile::tempdir().unwrap();
        // A CSV named .ptrace and a .ptrace named .csv.
        let (c, p) = (dir.path().join("w.ptrace"), dir.path().join("w.csv"));
        std::fs::write(&c, "time,a\n0,1\n1,2\n").unwrap();
        std::fs::write(&p, "a b\n1 2\n3 4\n").unwrap();
        let tc = read_time_trace(&c, None, 0.5).unwrap();
        assert_eq!((tc.format(), tc.row_at(1.0)), (TraceFormat::Csv, 1));
        let tp = read_time_trace(&p, Some(0.25), 1.0).unwrap();
        assert_eq!(tp.format(), TraceFormat::Ptrace);
        assert_eq!(tp.names, ["a", "b"]);
    }
}
