//! The cases of a sweep, read before any work: a directory of power rasters
//! (one case per `.csv`/`.png` file, sorted by name, each replacing the power
//! of one layer) or a TOML manifest:
//!
//! ```toml
//! [[case]]
//! name = "idle"
//! power.logic_feol = { type = "raster", file = "maps/idle.csv" }
//! power.memory_feol = { type = "ptrace", file = "mem.ptrace", row = 3 }
//!
//! [[case]]
//! name = "burst"
//! power.logic_feol = { type = "blocks", blocks = [
//!     { name = "core0", x = "1 mm", y = "1 mm", width = "2 mm", height = "2 mm", power = 4.0 } ] }
//! ```
//!
//! or a CSV manifest (`csv_manifest.rs`: one row per case and layer).
//!
//! Each `power.<layer>` has the syntax of a stack layer's `power` (paths
//! relative to the manifest); layers a case does not name keep the stack's
//! own power. A manifest that cannot be parsed, or names a layer the stack
//! lacks, is bad input (exit 2); a case whose map is bad fails on its own.

use super::layer_name::layer_index;
use cuth::error::InputError;
use cuth::stack::{PowerSpec, Stack};
use cuth::thermal::sweep::SweepCase;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Manifest {
    #[serde(default)]
    case: Vec<CaseEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseEntry {
    name: String,
    #[serde(default)]
    power: BTreeMap<String, PowerSpec>,
}

/// Reads `path` (a directory or a `.toml` manifest) into cases; `layer`
/// names the layer a directory's rasters power (default: the first layer
/// of the stack with power).
pub fn load_cases(
    path: &Path,
    stack: &Stack,
    layer: Option<&str>,
) -> Result<Vec<SweepCase>, InputError> {
    let csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let cases = if path.is_dir() {
        from_dir(path, stack, layer)?
    } else if csv {
        super::csv_manifest::from_csv(path, stack)?
    } else {
        from_manifest(path, stack)?
    };
    if cases.is_empty() {
        return Err(InputError(format!("{}: no cases", path.display())));
    }
    Ok(cases)
}

fn from_dir(dir: &Path, stack: &Stack, layer: Option<&str>) -> Result<Vec<SweepCase>, InputError> {
    let l = match layer {
        Some(name) => layer_index(stack, name, dir)?,
        None => stack
            .layers
            .iter()
            .position(|l| l.power.is_some())
            .ok_or_else(|| {
                // A package's dies are often regions: their power is theirs,
                // not the layer's, and a case map does not replace it.
                let in_regions: Vec<&str> = stack
                    .layers
                    .iter()
                    .filter(|l| l.regions.iter().any(|r| r.power.is_some()))
                    .map(|l| l.name.as_str())
                    .collect();
                let why = if in_regions.is_empty() {
                    "the stack has no powered layer".to_string()
                } else {
                    format!(
                        "no layer has a power source of its own (the power of {} is in its \
                         [[layers.regions]], which a case map does not replace)",
                        in_regions.join(", ")
                    )
                };
                InputError(format!(
                    "{}: {why}; name the layer whose power the maps replace with --layer",
                    dir.display()
                ))
            })?,
    };
    let read = std::fs::read_dir(dir)
        .map_err(|e| InputError(format!("{}: cannot read: {e}", dir.display())))?;
    let mut files: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            let ext = p.extension().and_then(|e| e.to_str()).unwrap_or("");
            p.is_file() && (ext.eq_ignore_ascii_case("csv") || ext.eq_ignore_ascii_case("png"))
        })
        .collect();
    files.sort();
    Ok(files
        .into_iter()
        .map(|file| SweepCase {
            name: file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
            power: vec![(l, PowerSpec::Raster { file, total: None })],
            maps: Vec::new(),
        })
        .collect())
}

fn from_manifest(path: &Path, stack: &Stack) -> Result<Vec<SweepCase>, InputError> {
    let text = cuth::input::read_text(path, cuth::input::MAX_TEXT_BYTES)
        .map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    let m: Manifest =
        toml::from_str(&text).map_err(|e| InputError(format!("{}: {e}", path.display())))?;
    let mut seen = std::collections::HashSet::new();
    let mut cases = Vec::with_capacity(m.case.len());
    for (i, c) in m.case.into_iter().enumerate() {
        if !seen.insert(c.name.clone()) {
            return Err(InputError(format!(
                "{}: case[{i}]: the name `{}` is used twice",
                path.display(),
                c.name
            )));
        }
        let mut power = Vec::new();
        for (layer, spec) in c.power {
            let l = layer_index(stack, &layer, path)?;
            let field = format!("case[{i}] ({}).power.{layer}", c.name);
            let spec =
                Stack::check_power(path, &field, spec).map_err(|e| InputError(e.to_string()))?;
            power.push((l, spec));
        }
        cases.push(SweepCase {
            name: c.name,
            power,
            maps: Vec::new(),
        });
    }
    Ok(cases)
}

/// `I/N` for `--shard` (0 ≤ I < N).
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`{s}` is not I/N with 0 <= I < N (e.g. 0/4)");
    let (a, b) = s.split_once('/').ok_or_else(bad)?;
    let (i, n) = (
        a.trim().parse::<usize>().map_err(|_| bad())?,
        b.trim().parse::<usize>().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::parse_shard;

    #[test]
    fn shard_values() {
        assert_eq!(parse_shard("0/4"), Ok((0, 4)));
        assert_eq!(parse_shard("3/4"), Ok((3, 4)));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("1").is_err());
    }
}
