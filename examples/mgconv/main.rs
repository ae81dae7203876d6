//! Issue 13 research harness (branch `mgconv`): why a graded grid needs more
//! multigrid-PCG iterations than the uniform grid of the same cell count.
//! A host re-implementation of the V-cycle (same smoother, transfers and
//! coarse operator as `linalg::mg`, through `MultigridOps` on the CPU) with
//! variants, PCG on it with Lanczos (Ritz) estimates of the spectrum of MA,
//! and where the extreme Ritz vectors live.
//!
//! `cargo run --release --example mgconv -- STACK CELL [key=value ...]`
//! keys: grid=graded|uniform|pow2, twogrid=1, w=1, pre0=N (sweeps on level 0),
//! sweeps=N, face=redisc|galerkin|mixhalf|mixone|count,
//! plan=ship|left|asc|max|maxt with slack=X (env MINRED: skip steps keeping
//! more than this fraction of the cells; env SPLIT=i,..: level-0 pairs holding
//! these fine indices become singles), rand=1 (random rhs), dump=1 (per
//! fine column: width and aggregate size at each level), line=y,z,x0,x1
//! (the slowest mode's values along x), lib=1 (the library's `Multigrid`,
//! to check that the harness's cycle gives the same iterations).
//! In-plane line relaxation (branch `mglines`): lines=1 adds exact x- and
//! y-line solves after the zebra z sweep (pre; before it, reversed, post):
//! a y-line (x, z) when at least frac of its cells have sy > rho·sx and
//! sy > sz (x-lines likewise), on levels 0..=linelv, and with onlypairs=1
//! (default) only on columns (rows) the level's step pairs; plan=halve
//! pairs by index (every axis halves, whatever the widths).
//! Findings: benchmarks/2026-11-30-cpu-mgconv/findings.txt.

mod cycle;
mod spectrum;

use cuth::backend::cpu::CpuBackend;
use cuth::linalg::mg::{Coarsening, MgOptions, Multigrid};
use cuth::linalg::{Preconditioner, QuadDiagOperator};
use cuth::stack::Stack;
use cycle::Mg;
use spectrum::{classes, pcg, where_};
use std::collections::HashMap;

pub type Args = HashMap<String, String>;

pub fn arg<T: std::str::FromStr>(a: &Args, k: &str, d: T) -> T {
    a.get(k).and_then(|v| v.parse().ok()).unwrap_or(d)
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    let path = &argv[1];
    let cell = &argv[2];
    let args: Args = argv[3..]
        .iter()
        .filter_map(|s| {
            s.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    let text = std::fs::read_to_string(path).unwrap();
    let text = regex_cell(&text, cell);
    let g = Stack::from_toml(&text, std::path::Path::new(path)).unwrap();
    let grid = cuth::grid::Grid::from_stack(&g);
    let (wx, wy) = g.plane_widths.clone().expect("graded stack");
    let which: String = arg(&args, "grid", "graded".to_string());
    let s = match which.as_str() {
        "graded" => g.clone(),
        "uniform" => g.clone().with_grid(grid.nx, grid.ny).unwrap(),
        "pow2" => {
            let mut t = g.clone();
            t.plane_widths = Some((pow2(&wx), pow2(&wy)));
            t
        }
        _ => panic!("grid {which}"),
    };
    let grid = cuth::grid::Grid::from_stack(&s);
    let power: Vec<_> = (0..s.layers.len())
        .map(|l| cuth::power::layer_power(&s, &grid, l).unwrap())
        .collect();
    let sys = cuth::assemble::assemble(&s, &grid, &power);
    let a = sys.a;
    let (cx, cy) = (classes(&wx), classes(&wy));
    // Classes by position for the uniform grid.
    let pos = |w: &[f64], cls: &[usize], gw: &[f64]| -> Vec<usize> {
        let e = cuth::grid::edges_of(w);
        let mut acc = 0.0;
        gw.iter()
            .map(|v| {
                let c = acc + v / 2.0;
                acc += v;
                let k = e
                    .partition_point(|&t| t <= c)
                    .saturating_sub(1)
                    .min(cls.len() - 1);
                cls[k]
            })
            .collect()
    };
    let (cx, cy) = (pos(&wx, &cx, &grid.dx), pos(&wy, &cy, &grid.dy));
    let mg = Mg::new(&a, &args);
    let sizes: Vec<String> = mg
        .levels
        .iter()
        .map(|l| format!("{}x{}", l.a.nx, l.a.ny))
        .collect();
    let work: f64 = mg.levels.iter().map(|l| l.a.len() as f64).sum::<f64>() / a.len() as f64;
    println!(
        "{which} {cell} {:?}: levels {} work {work:.3}",
        args,
        sizes.join(" ")
    );
    if arg(&args, "dump", 0) == 1 {
        dump_axis(&grid.dx, &mg.steps);
    }
    let b = if arg(&args, "rand", 0) == 1 {
        let mut st = 12345u64;
        (0..a.len())
            .map(|_| {
                st ^= st << 13;
                st ^= st >> 7;
                st ^= st << 17;
                (st % 1000) as f64 / 500.0 - 1.0
            })
            .collect()
    } else {
        sys.rhs.clone()
    };
    let out = if arg(&args, "lib", 0) == 1 {
        let be = CpuBackend::new();
        let mut lib = Multigrid::new(&be, &a, &MgOptions::default()).unwrap();
        let mut op = QuadDiagOperator::new(&be, &a, a.len());
        let mut f = |r: &[f64]| {
            let mut z = vec![0.0; r.len()];
            lib.apply(&be, &mut op, &r.to_vec(), &mut z).unwrap();
            z
        };
        pcg(&a, &b, &mut f, 60)
    } else {
        let mut f = |r: &[f64]| mg.apply(r);
        pcg(&a, &b, &mut f, 60)
    };
    let rz = &out.ritz;
    println!(
        "  it(1e-8) {}  ritz min {:.4} {:.4} {:.4}  max {:.4} {:.4}  kappa {:.2}",
        out.it8,
        rz[0],
        rz[1],
        rz[2],
        rz[rz.len() - 2],
        rz[rz.len() - 1],
        rz[rz.len() - 1] / rz[0]
    );
    where_(&a, &out.vmin, &cx, &cy, "min mode");
    if let Some(r) = args.get("line") {
        // Values of the min mode along x at row y, plane z: line=y,z,x0,x1
        let v: Vec<usize> = r.split(',').map(|t| t.parse().unwrap()).collect();
        let (y, z) = (v[0], v[1]);
        let scale = out.vmin.iter().fold(0.0f64, |m, t| m.max(t.abs()));
        let row: Vec<String> = (v[2]..v[3])
            .map(|x| format!("{x}:{:+.3}", out.vmin[x + a.nx * (y + a.ny * z)] / scale))
            .collect();
        println!("  line y={y} z={z}: {}", row.join(" "));
        let col: Vec<String> = (0..a.nz)
            .map(|zz| {
                format!(
                    "{:+.3}",
                    out.vmin[v[2] + 4 + a.nx * (y + a.ny * zz)] / scale
                )
            })
            .collect();
        println!("  column x={} y={y}: {}", v[2] + 4, col.join(" "));
    }
    where_(&a, &out.vmax, &cx, &cy, "max mode");
}

fn regex_cell(text: &str, cell: &str) -> String {
    text.replace("cell = \"50 um\"", &format!("cell = \"{cell}\""))
}

fn dump_axis(w: &[f64], steps: &[Coarsening]) {
    // Width and aggregate size per level of each fine column.
    let mut s = String::new();
    for (i, v) in w.iter().enumerate() {
        let mut k = i;
        let mut sizes = vec![];
        for c in steps {
            let p = c.xmap[k];
            sizes.push(c.xstart[p + 1] - c.xstart[p]);
            k = p;
        }
        s += &format!(
            "{i}:{:.0}:{}  ",
            v * 1e6,
            sizes.iter().map(|v| v.to_string()).collect::<String>()
        );
    }
    println!("{s}");
}

/// The same die cells, the overhang in widths 2h, 2h, 4h, 4h, ... up to
/// the largest power of 2 not above the widest cell, the remainder last.
fn pow2(w: &[f64]) -> Vec<f64> {
    let h = w.iter().copied().fold(f64::MAX, f64::min);
    let cap = w.iter().copied().fold(0.0, f64::max);
    let lo = w.iter().position(|&v| v <= h * 1.01).unwrap();
    let hi = w.iter().rposition(|&v| v <= h * 1.01).unwrap();
    let side = |len: f64| -> Vec<f64> {
        let mut out = vec![];
        let (mut s, mut c, mut used) = (2.0 * h, 0, 0.0);
        loop {
            if used + s > len * (1.0 + 1e-9) {
                break;
            }
            out.push(s);
            used += s;
            c += 1;
            if c == 2 && 2.0 * s <= cap * 1.05 {
                s *= 2.0;
                c = 0;
            }
        }
        if len - used > 1e-3 * h {
            out.push(len - used);
        }
        out
    };
    let left: f64 = w[..lo].iter().sum();
    let right: f64 = w[hi + 1..].iter().sum();
    let mut l = side(left);
    l.reverse();
    l.extend(&w[lo..=hi]);
    l.extend(side(right));
    l
}
