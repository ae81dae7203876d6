//! Imports from other thermal simulators: a HotSpot model (`.config` plus an
//! `.lcf` layer file or a single `.flp`, with `.ptrace` power) or a 3D-ICE
//! stack description (`.stk` plus its floorplans) becomes a cuth stack TOML.
//!
//! Everything cuth can represent is carried over with units converted; each
//! approximation gets a TOML comment where it applies; anything cuth cannot
//! represent (3D-ICE microchannels and pin fins, HotSpot's secondary heat
//! path, lateral-flow-free layers, leakage loops, ...) is an
//! [`ImportError::Unsupported`] that names it and where it was written, never
//! silently dropped. The result is checked by loading it as a [`Stack`] and
//! rasterizing every layer's power before anything is written.
//!
//! - [`hotspot`]: `.config` / `.lcf` / materials readers and the conversion;
//!   floorplans and power traces go through [`crate::formats::flp`] and
//!   [`crate::formats::ptrace`], and are *referenced* (relative paths), not copied.
//! - [`threedice`]: a tokenizer and recursive-descent parser for `.stk` and
//!   3D-ICE floorplans; power goes inline (`blocks`), transients to a CSV trace.
//! - [`emit`]: the TOML writer shared by both.

pub mod emit;
pub mod hotspot;
mod hotspot_channels;
mod hotspot_coolant;
mod hotspot_files;
mod hotspot_keys;
mod hotspot_layers;
mod hotspot_package;
pub mod threedice;

use crate::grid::Grid;
pub use crate::stack::units::shift_decimal;
use crate::stack::Stack;
use std::path::{Component, Path, PathBuf};

/// Why an import failed. All are input faults (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The cause is the error's source (printed once, after this message).
    #[error("{file}: cannot read")]
    Io {
        file: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The file does not follow its format's grammar.
    #[error("{}: {message}", at(file, *line))]
    Syntax {
        file: PathBuf,
        line: usize,
        message: String,
    },
    /// Valid input that cuth's model cannot represent; `what` names the feature.
    #[error("{}: {what} cannot be represented in cuth: {why}", at(file, *line))]
    Unsupported {
        file: PathBuf,
        line: usize,
        what: String,
        why: String,
    },
    /// A value or a combination of files that is wrong (no line to point at).
    #[error("{file}: {message}")]
    Invalid { file: PathBuf, message: String },
    /// A floorplan or power trace that does not read.
    #[error(transparent)]
    Read(#[from] crate::formats::ReadError),
    /// The generated stack does not load: a bug of the importer or input
    /// the stack checks reject (e.g. a unit outside the footprint).
    #[error("the imported stack does not load: {0}")]
    Check(String),
}

/// Where a setting was read: `file:line`, or line 0 for a setting given on
/// the command line (HotSpot's flags override its configuration file).
fn at(file: &Path, line: usize) -> String {
    if line == 0 {
        format!("{}, overridden on the command line", file.display())
    } else {
        format!("{}:{line}", file.display())
    }
}

/// A file the import writes besides the stack TOML (e.g. a CSV power trace).
#[derive(Clone, Debug)]
pub struct ExtraFile {
    /// File name, written next to the stack TOML.
    pub name: String,
    pub contents: String,
}

/// The result of an import: the stack text, extra files, and notes for the
/// user (approximations and how to run a transient), also present as TOML
/// comments.
#[derive(Clone, Debug)]
pub struct Imported {
    pub toml: String,
    pub extra: Vec<ExtraFile>,
    pub notes: Vec<String>,
    /// The command to run next, when not `cuth solve STACK` (a transient).
    pub next: Option<String>,
}

/// Reads a file into a string with an [`ImportError::Io`] naming it: a
/// regular file of at most [`crate::input::MAX_TEXT_BYTES`], as every input
/// (`/dev/zero` or a FIFO is refused, not read forever).
pub(crate) fn read_text(path: &Path) -> Result<String, ImportError> {
    crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|source| ImportError::Io {
        file: path.to_path_buf(),
        source,
    })
}

/// A file named inside `owner` (an `.lcf`, `.config` or `.stk`), resolved
/// relative to `owner`'s directory unless absolute.
pub(crate) fn beside(owner: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        owner.parent().unwrap_or(Path::new("")).join(p)
    }
}

/// `x` rounded to 12 significant digits: drops binary noise from sums and
/// products of decimal inputs (`3 × 0.05` → `0.15`).
pub fn round12(x: f64) -> f64 {
    format!("{x:.11e}").parse().unwrap_or(x)
}

/// `path` as written from `dir` (both made absolute first): a relative path
/// when they share a root, else `path` absolute. Used to reference input files
/// from the generated TOML, whose relative paths are taken from its directory.
pub fn relative_to(path: &Path, dir: &Path) -> PathBuf {
    let abs = |p: &Path| -> PathBuf {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        // Lexical normalisation (no symlink resolution: the files may not exist yet).
        let mut out = PathBuf::new();
        for c in p.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other.as_os_str()),
            }
        }
        out
    };
    let (p, d) = (abs(path), abs(dir));
    let pc: Vec<_> = p.components().collect();
    let dc: Vec<_> = d.components().collect();
    let common = pc.iter().zip(&dc).take_while(|(a, b)| a == b).count();
    if common == 0 {
        return p;
    }
    let mut rel = PathBuf::new();
    for _ in common..dc.len() {
        rel.push("..");
    }
    for c in &pc[common..] {
        rel.push(c.as_os_str());
    }
    rel
}

/// Loads `toml` as if it were written at `out_path`, and rasterizes every
/// layer's power on its grid: the import never writes a stack that
/// `cuth solve` would reject.
pub fn check_loads(toml: &str, out_path: &Path) -> Result<Stack, ImportError> {
    let stack = Stack::from_toml(toml, out_path).map_err(|e| ImportError::Check(e.to_string()))?;
    let grid = Grid::from_stack(&stack);
    for l in 0..stack.layers.len() {
        crate::power::layer_power(&stack, &grid, l)
            .map_err(|e| ImportError::Check(e.to_string()))?;
    }
    Ok(stack)
}

/// What `cuth solve FILE` should say when FILE is another tool's input.
pub fn suggest_import(path: &Path) -> Option<String> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    let p = path.display();
    Some(match ext.as_str() {
        "lcf" => format!(
            "{p} is a HotSpot layer configuration file, not a cuth stack: convert it with \
             `cuth import hotspot --lcf {p} --config HOTSPOT.config [--ptrace POWER.ptrace] \
             --out STACK.toml`, then solve STACK.toml"
        ),
        "config" => format!(
            "{p} is a HotSpot configuration file, not a cuth stack: convert it with \
             `cuth import hotspot --config {p} --lcf LAYERS.lcf (or --flp FLOORPLAN.flp) \
             [--ptrace POWER.ptrace] --out STACK.toml`, then solve STACK.toml"
        ),
        "flp" => format!(
            "{p} is a floorplan, not a cuth stack: reference it from a stack's `floorplan` key, \
             or convert a HotSpot model with `cuth import hotspot --flp {p} --config \
             HOTSPOT.config --ptrace POWER.ptrace --out STACK.toml`"
        ),
        "stk" => format!(
            "{p} is a 3D-ICE stack description, not a cuth stack: convert it with \
             `cuth import 3dice {p} --out STACK.toml`, then solve STACK.toml"
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_to(Path::new("/a/b/c.flp"), Path::new("/a/d")),
            PathBuf::from("../b/c.flp")
        );
        assert_eq!(
            relative_to(Path::new("/a/b/c.flp"), Path::new("/a/b")),
            PathBuf::from("c.flp")
        );
        assert_eq!(
            relative_to(Path::new("/a/./b/../b/c.flp"), Path::new("/a/b/")),
            PathBuf::from("c.flp")
        );
    }

    #[test]
    fn suggestions_name_the_import() {
        let s = suggest_import(Path::new("x/ev6.lcf")).unwrap();
        assert!(s.contains("cuth import hotspot --lcf x/ev6.lcf"), "{s}");
        let s = suggest_import(Path::new("a.stk")).unwrap();
        assert!(s.contains("cuth import 3dice a.stk"), "{s}");
        assert!(suggest_import(Path::new("a.toml")).is_none());
    }
}
