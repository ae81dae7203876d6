//! `sweep.csv`: one row per case, in case order, temperatures in kelvin at
//! full precision (shortest round-trip decimal). Columns: `case_index`,
//! `case`, `status` (`ok` or `failed`), `reason`, `iterations`,
//! `true_residual`, `power_w`, then `<layer>.max_k` and `<layer>.avg_k` per
//! layer, then `<layer>.<block>.max_k` per block (the union over the cases,
//! in order of first appearance; empty where a case has no such block).
//! Shard tables are joined by [`merge`] on the column names.

use cuth::error::InputError;
use cuth::stack::Stack;
use cuth::thermal::sweep::CaseResult;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

const FIXED: [&str; 7] = [
    "case_index",
    "case",
    "status",
    "reason",
    "iterations",
    "true_residual",
    "power_w",
];

/// A table held as column names and rows of cells keyed by column.
pub struct Table {
    pub columns: Vec<String>,
    /// By case index.
    pub rows: BTreeMap<usize, HashMap<String, String>>,
}

impl Table {
    pub fn failed(&self) -> usize {
        self.rows
            .values()
            .filter(|r| r.get("status").map(String::as_str) != Some("ok"))
            .count()
    }

    fn add_column(&mut self, name: &str) {
        if !self.columns.iter().any(|c| c == name) {
            self.columns.push(name.to_string());
        }
    }

    /// The CSV text.
    pub fn to_csv(&self) -> anyhow::Result<String> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(&self.columns)?;
        for row in self.rows.values() {
            w.write_record(
                self.columns
                    .iter()
                    .map(|c| row.get(c).map(String::as_str).unwrap_or("")),
            )?;
        }
        Ok(String::from_utf8(w.into_inner()?)?)
    }
}

/// The table of `results` (any order) on `stack`.
pub fn from_results(stack: &Stack, results: &[CaseResult]) -> Table {
    let mut t = Table {
        columns: FIXED.iter().map(|s| s.to_string()).collect(),
        rows: BTreeMap::new(),
    };
    for l in &stack.layers {
        t.add_column(&format!("{}.max_k", l.name));
        t.add_column(&format!("{}.avg_k", l.name));
    }
    let mut sorted: Vec<&CaseResult> = results.iter().collect();
    sorted.sort_by_key(|r| r.index);
    for r in sorted {
        let mut row = HashMap::new();
        row.insert("case_index".into(), r.index.to_string());
        row.insert("case".into(), r.name.clone());
        match &r.outcome {
            Ok(s) => {
                row.insert("status".into(), "ok".into());
                row.insert("iterations".into(), s.iterations.to_string());
                row.insert("true_residual".into(), format!("{:e}", s.true_residual));
                row.insert("power_w".into(), s.power_w.to_string());
                for (l, (max, avg)) in stack.layers.iter().zip(&s.layers) {
                    row.insert(format!("{}.max_k", l.name), max.to_string());
                    row.insert(format!("{}.avg_k", l.name), avg.to_string());
                }
                for (name, max) in &s.blocks {
                    let col = format!("{name}.max_k");
                    t.add_column(&col);
                    row.insert(col, max.map(|m| m.to_string()).unwrap_or_default());
                }
            }
            Err(reason) => {
                row.insert("status".into(), "failed".into());
                row.insert("reason".into(), reason.clone());
            }
        }
        t.rows.insert(r.index, row);
    }
    t
}

/// Joins shard tables: the union of their columns (first table's order
/// first), rows by `case_index`; a case index in two tables, or a table
/// without the fixed columns, is bad input.
pub fn merge(files: &[std::path::PathBuf]) -> Result<Table, InputError> {
    let mut t = Table {
        columns: Vec::new(),
        rows: BTreeMap::new(),
    };
    for f in files {
        let bad = |m: String| InputError(format!("{}: {m}", f.display()));
        let text = cuth::input::read_text(f, cuth::input::MAX_TEXT_BYTES)
            .map_err(|e| bad(format!("cannot read: {e}")))?;
        let mut r = csv::Reader::from_reader(text.as_bytes());
        let header: Vec<String> = r
            .headers()
            .map_err(|e| bad(e.to_string()))?
            .iter()
            .map(String::from)
            .collect();
        if header.len() < FIXED.len() || header[..FIXED.len()] != FIXED {
            return Err(bad(format!(
                "not a sweep table: the columns must start with {}",
                FIXED.join(",")
            )));
        }
        header.iter().for_each(|c| t.add_column(c));
        for (line, rec) in r.records().enumerate() {
            let rec = rec.map_err(|e| bad(e.to_string()))?;
            let row: HashMap<String, String> = header
                .iter()
                .cloned()
                .zip(rec.iter().map(String::from))
                .collect();
            let index = row["case_index"]
                .parse::<usize>()
                .map_err(|_| bad(format!("row {}: case_index is not a number", line + 1)))?;
            if t.rows.insert(index, row).is_some() {
                return Err(bad(format!(
                    "case_index {index} is also in an earlier table (shards overlap)"
                )));
            }
        }
    }
    Ok(t)
}

/// Writes `table` and its `summary` as one transaction under `dir`.
pub fn summary_counts(t: &Table) -> serde_json::Value {
    serde_json::json!({
        "cases": t.rows.len(),
        "solved": t.rows.len() - t.failed(),
        "failed": t.failed(),
        "failed_cases": t.rows.values()
            .filter(|r| r.get("status").map(String::as_str) != Some("ok"))
            .map(|r| serde_json::json!({
                "case_index": r.get("case_index"),
                "case": r.get("case"),
                "reason": r.get("reason"),
            }))
            .collect::<Vec<_>>(),
    })
}

/// Stages `sweep.csv` and `summary.json` in `txn`.
pub fn stage(
    txn: &cuth::output::Transaction,
    table: &Table,
    summary: &serde_json::Value,
) -> anyhow::Result<()> {
    txn.write(Path::new("sweep.csv"), table.to_csv()?.as_bytes())?;
    let mut json = serde_json::to_string_pretty(summary)?;
    json.push('\n');
    txn.write(Path::new("summary.json"), json.as_bytes())?;
    Ok(())
}
