//! The benchmark's linear systems: a stack (mol_f2f by default) at an N × N
//! in-plane grid with every layer one z cell thick, assembled exactly as a
//! steady solve assembles it (power → grid → assemble), and its export as
//! raw arrays for peer baselines (`bench/cupy.py`).

use anyhow::{Context, Result};
use cuth::assemble::{assemble, System};
use cuth::error::InputError;
use cuth::grid::Grid;
use cuth::power::layer_power;
use cuth::stack::Stack;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The shipped stack `bench` runs without `--stack`, relative to the repository.
const DEFAULT_STACK: &str = "configs/mol_f2f.toml";

/// The benchmark stack: `given`, else [`DEFAULT_STACK`] from the current
/// directory, a directory above the cuth binary (`target/release/cuth` in a
/// checkout) or the source tree cuth was built from, in that order; else an
/// input error (exit 2) that says what to pass.
pub fn bench_stack(given: Option<&Path>) -> Result<PathBuf, InputError> {
    if let Some(p) = given {
        return Ok(p.to_path_buf());
    }
    // The empty path is the current directory (the path stays relative).
    let mut roots = vec![PathBuf::new()];
    if let Ok(exe) = std::env::current_exe() {
        roots.extend(exe.ancestors().skip(1).map(Path::to_path_buf));
    }
    roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    find_stack(&roots)
}

/// [`DEFAULT_STACK`] under the first of `roots` that has it.
fn find_stack(roots: &[PathBuf]) -> Result<PathBuf, InputError> {
    roots
        .iter()
        .map(|r| r.join(DEFAULT_STACK))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            InputError(format!(
                "no --stack given, and the default {DEFAULT_STACK} is not in the current \
                 directory, above the cuth binary or in the source tree it was built from; \
                 pass --stack FILE (a cuth stack TOML, e.g. configs/mol_f2f.toml of a cuth checkout)"
            ))
        })
}

/// An assembled benchmark system and how long it took to build.
pub struct BenchSystem {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub sys: System,
    pub assemble_s: f64,
    /// The right-hand side was all zeros and was replaced (see [`build`]).
    pub synthetic_rhs: bool,
}

impl BenchSystem {
    pub fn cells(&self) -> usize {
        self.nx * self.ny * self.nz
    }

    /// `128x128x10`.
    pub fn label(&self) -> String {
        format!("{}x{}x{}", self.nx, self.ny, self.nz)
    }
}

/// The stack at `n` × `n` with every layer's `cells` forced to 1, so that nz
/// is the layer count (10 for mol_f2f) at every size.
pub fn stack_at(base: &Stack, n: usize) -> Result<Stack> {
    let mut s = base
        .clone()
        .with_grid(n, n)
        .with_context(|| format!("setting the grid to {n}x{n}"))?;
    for l in &mut s.layers {
        l.cells = 1;
    }
    Ok(s)
}

/// Assembles the system of `base` at `n` × `n`. A right-hand side with no
/// power at all would make PCG return at once, so it is replaced by 1 W per
/// cell (and flagged) rather than timing nothing.
pub fn build(base: &Stack, n: usize) -> Result<BenchSystem> {
    let t0 = Instant::now();
    let stack = stack_at(base, n)?;
    let grid = Grid::from_stack(&stack);
    let power = (0..stack.layers.len())
        .map(|l| layer_power(&stack, &grid, l))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("power maps at {n}x{n}"))?;
    let mut sys = assemble(&stack, &grid, &power);
    let synthetic_rhs = sys.rhs.iter().all(|&p| p == 0.0);
    if synthetic_rhs {
        sys.rhs.iter_mut().for_each(|p| *p = 1.0);
    }
    Ok(BenchSystem {
        nx: grid.nx,
        ny: grid.ny,
        nz: grid.nz,
        sys,
        assemble_s: t0.elapsed().as_secs_f64(),
        synthetic_rhs,
    })
}

fn write_f64(path: &Path, v: &[f64]) -> Result<()> {
    let f = std::fs::File::create(path).with_context(|| format!("creating {}", path.display()))?;
    let mut w = BufWriter::with_capacity(1 << 22, f);
    for chunk in v.chunks(1 << 16) {
        let bytes: Vec<u8> = chunk.iter().flat_map(|x| x.to_le_bytes()).collect();
        w.write_all(&bytes)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

/// Writes `dir/<nx>x<ny>/{d,gx,gy,gz,amb,rhs}.bin` (raw little-endian f64, n
/// values each) and `meta.json`; returns the system's directory.
pub fn export(dir: &Path, s: &BenchSystem, stack_path: &Path) -> Result<PathBuf> {
    let out = dir.join(format!("{}x{}", s.nx, s.ny));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let a = &s.sys.a;
    for (name, v) in [
        ("d", &a.d),
        ("gx", &a.gx),
        ("gy", &a.gy),
        ("gz", &a.gz),
        ("amb", &a.amb),
        ("rhs", &s.sys.rhs),
    ] {
        write_f64(&out.join(format!("{name}.bin")), v)?;
    }
    let meta = serde_json::json!({
        "nx": s.nx,
        "ny": s.ny,
        "nz": s.nz,
        "n": s.cells(),
        "dtype": "float64",
        "byte_order": "little",
        "index": "i = x + nx*(y + ny*z)",
        "matrix": "symmetric; A[i,i] = d[i], A[i,i+1] = -gx[i], A[i,i+nx] = -gy[i], \
                   A[i,i+nx*ny] = -gz[i]; a neighbour exists iff its index is in [0, n)",
        "rhs": "W per cell; the system is A theta = rhs, theta = T - T_ambient",
        "synthetic_rhs": s.synthetic_rhs,
        "stack": stack_path.display().to_string(),
        "generator": format!("cuth {} bench --export", env!("CARGO_PKG_VERSION")),
    });
    let meta_path = out.join("meta.json");
    std::fs::write(&meta_path, serde_json::to_string_pretty(&meta)? + "\n")
        .with_context(|| format!("writing {}", meta_path.display()))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_stack_is_found_or_named() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir_all(b.join("configs")).unwrap();
        std::fs::write(b.join(DEFAULT_STACK), "").unwrap();
        assert_eq!(
            find_stack(&[a.clone(), b.clone()]).unwrap(),
            b.join(DEFAULT_STACK)
        );
        let m = find_stack(&[a]).unwrap_err().to_string();
        assert!(
            m.contains("--stack FILE") && m.contains(DEFAULT_STACK),
            "{m}"
        );
        let given = bench_stack(Some(Path::new("x.toml"))).unwrap();
        assert_eq!(given, Path::new("x.toml"));
    }
}
