//! The CSV form of a sweep manifest: one row per (case, layer), the cases
//! in the order they first appear, for tables written by a script or a
//! spreadsheet:
//!
//! ```csv
//! case,layer,file,power,row
//! idle,logic_feol,maps/idle.csv,4.0,
//! idle,memory_feol,,0.8,
//! burst,logic_feol,maps/burst.png,,
//! burst,memory_feol,mem.ptrace,,3
//! ```
//!
//! `case` and `layer` are required columns; `file`, `power` and `row`
//! optional (any order; `#` starts a comment line). Per row: a `.ptrace`
//! file is a trace row of the layer's floorplan (`row` 0-based, default the
//! mean of the rows); another file is a raster (`power`, if given, rescales
//! it to that many watts); no file, `power` watts spread uniformly. Block
//! rectangles need the TOML manifest. Paths are relative to the manifest. A
//! malformed row, an unknown column or layer, or a (case, layer) given twice
//! is bad input (exit 2), with the line.

use super::layer_name::layer_index;
use cuth::error::InputError;
use cuth::stack::{PowerSpec, Stack};
use cuth::thermal::sweep::SweepCase;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub fn from_csv(path: &Path, stack: &Stack) -> Result<Vec<SweepCase>, InputError> {
    let text = cuth::input::read_text(path, cuth::input::MAX_TEXT_BYTES)
        .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    let bad = |line: u64, what: String| InputError(format!("{}:{line}: {what}", path.display()));
    let mut reader = csv::ReaderBuilder::new()
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes());
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| bad(1, e.to_string()))?
        .iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    let mut cols: HashMap<&str, usize> = HashMap::new();
    for (i, h) in header.iter().enumerate() {
        let known = ["case", "layer", "file", "power", "row"];
        let Some(name) = known.iter().find(|k| **k == h) else {
            return Err(bad(
                1,
                format!("unknown column `{h}` (columns: {})", known.join(", ")),
            ));
        };
        if cols.insert(name, i).is_some() {
            return Err(bad(1, format!("column `{h}` given twice")));
        }
    }
    for need in ["case", "layer"] {
        if !cols.contains_key(need) {
            return Err(bad(1, format!("no `{need}` column")));
        }
    }
    let base = path.parent().unwrap_or(Path::new("."));
    let mut cases: Vec<SweepCase> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for rec in reader.records() {
        let rec = rec.map_err(|e| bad(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = rec.position().map_or(0, |p| p.line());
        let cell = |c: &str| cols.get(c).and_then(|&i| rec.get(i)).unwrap_or("");
        let name = cell("case");
        if name.is_empty() {
            return Err(bad(line, "empty `case`".into()));
        }
        let l = layer_index(stack, cell("layer"), path).map_err(|e| bad(line, e.0))?;
        let power = match cell("power") {
            "" => None,
            v => Some(
                v.parse::<f64>()
                    .ok()
                    .filter(|p| (0.0..=cuth::power::MAX_POWER_W).contains(p))
                    .ok_or_else(|| {
                        bad(
                            line,
                            format!(
                                "case `{name}`: power `{v}` is not a number of watts \
                                 between 0 and {:e}",
                                cuth::power::MAX_POWER_W
                            ),
                        )
                    })?,
            ),
        };
        let row = match cell("row") {
            "" => None,
            v => Some(
                v.parse::<usize>()
                    .map_err(|_| bad(line, format!("row `{v}` is not a row number")))?,
            ),
        };
        let spec = match cell("file") {
            "" => match (power, row) {
                (_, Some(_)) => return Err(bad(line, "`row` needs a .ptrace `file`".into())),
                (Some(total), None) => PowerSpec::Uniform { total },
                (None, None) => return Err(bad(line, "neither `file` nor `power`".into())),
            },
            f => {
                let file = PathBuf::from(f);
                let ptrace = file
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("ptrace"));
                match (ptrace, power, row) {
                    (true, Some(_), _) => {
                        return Err(bad(
                            line,
                            "a .ptrace row sets its own power: no `power`".into(),
                        ))
                    }
                    (true, None, row) => PowerSpec::Ptrace { file, row },
                    (false, _, Some(_)) => {
                        return Err(bad(line, "`row` is for .ptrace files".into()))
                    }
                    (false, total, None) => PowerSpec::Raster { file, total },
                }
            }
        };
        let at = *by_name.entry(name.to_string()).or_insert_with(|| {
            cases.push(SweepCase {
                name: name.to_string(),
                power: Vec::new(),
                maps: Vec::new(),
            });
            cases.len() - 1
        });
        let case = &mut cases[at];
        if case.power.iter().any(|(k, _)| *k == l) {
            return Err(bad(
                line,
                format!("case `{name}` sets layer `{}` twice", stack.layers[l].name),
            ));
        }
        case.power.push((l, resolve(base, spec)));
    }
    Ok(cases)
}

/// Paths relative to the manifest's directory.
fn resolve(base: &Path, spec: PowerSpec) -> PowerSpec {
    let abs = |p: PathBuf| if p.is_absolute() { p } else { base.join(p) };
    match spec {
        PowerSpec::Raster { file, total } => PowerSpec::Raster {
            file: abs(file),
            total,
        },
        PowerSpec::Ptrace { file, row } => PowerSpec::Ptrace {
            file: abs(file),
            row,
        },
        other => other,
    }
}
