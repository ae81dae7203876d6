//! The harness's V-cycle: `linalg::mg`'s smoother, transfers and coarse
//! operator through `MultigridOps` on the CPU, with variants of the plan
//! (`plan=`), of the coarse in-plane face factor (`face=`), of the sweeps on
//! level 0 (`pre0=`) and a two-grid (`twogrid=1`: level 1 solved by 60 cycles).

use crate::{arg, Args};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::mg::{ColumnUpdate, Guess, MultigridOps};
use cuth::linalg::mg::{line_pivots, plan_for, AxisMap, Coarsening, CoarsestInverse};
use cuth::linalg::QuadDiag;

pub struct Level {
    pub a: QuadDiag,
    pub piv: Vec<f64>,
    /// In-plane lines relaxed after the zebra z sweep: (axis 0 = y-line at (x, z), 1 = x-line at (y, z)).
    pub lines: Vec<(u8, usize, usize)>,
}

/// In-plane lines to relax: a y-line (x, z) when at least `frac` of its cells
/// are y-strong (sy > rho * sx and sy > sz), likewise x-lines.
pub fn select_lines(
    a: &QuadDiag,
    rho: f64,
    frac: f64,
    step: Option<&Coarsening>,
) -> Vec<(u8, usize, usize)> {
    let paired = |starts: &[usize], k: usize| {
        let j = starts.partition_point(|&s| s <= k) - 1;
        starts[j + 1] - starts[j] == 2
    };
    let pairx = |xx: usize| step.is_none_or(|c| paired(&c.xstart, xx));
    let pairy = |y: usize| step.is_none_or(|c| paired(&c.ystart, y));
    let (nx, ny, nz) = (a.nx, a.ny, a.nz);
    let plane = nx * ny;
    let s = |i: usize, xx: usize, y: usize, z: usize| {
        let mut sx = 0.0;
        let mut sy = 0.0;
        let mut sz = 0.0;
        if xx + 1 < nx {
            sx += a.gx[i];
        }
        if xx > 0 {
            sx += a.gx[i - 1];
        }
        if y + 1 < ny {
            sy += a.gy[i];
        }
        if y > 0 {
            sy += a.gy[i - nx];
        }
        if z + 1 < nz {
            sz += a.gz[i];
        }
        if z > 0 {
            sz += a.gz[i - plane];
        }
        (sx, sy, sz)
    };
    let mut out = Vec::new();
    for z in 0..nz {
        for xx in 0..nx {
            let k = (0..ny)
                .filter(|&y| {
                    let (sx, sy, sz) = s(xx + nx * y + plane * z, xx, y, z);
                    sy > rho * sx && sy > sz
                })
                .count();
            if k as f64 >= frac * ny as f64 && ny > 1 && pairx(xx) {
                out.push((0, xx, z));
            }
        }
        for y in 0..ny {
            let k = (0..nx)
                .filter(|&xx| {
                    let (sx, sy, sz) = s(xx + nx * y + plane * z, xx, y, z);
                    sx > rho * sy && sx > sz
                })
                .count();
            if k as f64 >= frac * nx as f64 && nx > 1 && pairy(y) {
                out.push((1, y, z));
            }
        }
    }
    out
}

/// Exact solve of one in-plane line with everything else held (Thomas).
fn line_solve(a: &QuadDiag, b: &[f64], x: &mut [f64], axis: u8, p: usize, z: usize) {
    let (nx, ny, nz) = (a.nx, a.ny, a.nz);
    let plane = nx * ny;
    let (n, idx): (usize, Box<dyn Fn(usize) -> usize>) = if axis == 0 {
        (ny, Box::new(move |k| p + nx * k + plane * z))
    } else {
        (nx, Box::new(move |k| k + nx * p + plane * z))
    };
    let mut c = vec![0.0; n];
    let mut r = vec![0.0; n];
    for k in 0..n {
        let i = idx(k);
        let (xx, y) = (i % nx, (i / nx) % ny);
        let mut rhs = b[i];
        if axis == 0 {
            if xx + 1 < nx {
                rhs += a.gx[i] * x[i + 1];
            }
            if xx > 0 {
                rhs += a.gx[i - 1] * x[i - 1];
            }
        } else {
            if y + 1 < ny {
                rhs += a.gy[i] * x[i + nx];
            }
            if y > 0 {
                rhs += a.gy[i - nx] * x[i - nx];
            }
        }
        if z + 1 < nz {
            rhs += a.gz[i] * x[i + plane];
        }
        if z > 0 {
            rhs += a.gz[i - plane] * x[i - plane];
        }
        let off = |i: usize| if axis == 0 { a.gy[i] } else { a.gx[i] };
        let lower = if k > 0 { off(idx(k - 1)) } else { 0.0 };
        let upper = if k + 1 < n { off(i) } else { 0.0 };
        let den = a.d[i] - if k > 0 { lower * c[k - 1] } else { 0.0 };
        c[k] = upper / den;
        r[k] = (rhs + if k > 0 { lower * r[k - 1] } else { 0.0 }) / den;
    }
    for k in (0..n).rev() {
        let v = r[k] + if k + 1 < n { c[k] * x[idx(k + 1)] } else { 0.0 };
        x[idx(k)] = v;
    }
}

pub struct Mg {
    pub levels: Vec<Level>,
    pub steps: Vec<Coarsening>,
    pub inv: CoarsestInverse,
    pub twogrid: bool,
    pub gamma: usize,
    pub pre0: usize,
    pub sweeps: usize,
}

/// Face factor of a coarse face k of an axis map, by variant.
pub fn face_maps(w: &[f64], c_start: &[usize], variant: &str) -> AxisMap {
    let n = *c_start.last().unwrap();
    let nc = c_start.len() - 1;
    let mut m = AxisMap::new(w, n, nc, |k| c_start[k]..c_start[k + 1]);
    for k in 0..nc.saturating_sub(1) {
        let (lsz, rsz) = (c_start[k + 1] - c_start[k], c_start[k + 2] - c_start[k + 1]);
        match variant {
            "redisc" => {}
            "galerkin" => {
                m.num[k] = 1.0;
                m.den[k] = 1.0;
            }
            // Mixed pair/single faces at the pair-pair value 1/2.
            "mixhalf" => {
                if lsz != rsz {
                    m.num[k] = 1.0;
                    m.den[k] = 2.0;
                }
            }
            // Mixed faces Galerkin (1).
            "mixone" => {
                if lsz != rsz {
                    m.num[k] = 1.0;
                    m.den[k] = 1.0;
                }
            }
            // Harmonic-style: 1/(number of cells) averaged.
            "count" => {
                m.num[k] = 2.0;
                m.den[k] = (lsz + rsz) as f64;
            }
            _ => panic!("face variant {variant}"),
        }
    }
    m
}

impl Mg {
    pub fn new(a: &QuadDiag, args: &Args) -> Mg {
        let be = CpuBackend::new();
        let pl: String = arg(args, "plan", "ship".to_string());
        let steps = match pl.as_str() {
            "ship" => plan_for(a.nx, a.ny, a.nz, &a.wx, &a.wy),
            "halve" => {
                let (mut nx, mut ny) = (a.nx, a.ny);
                let mut st = Vec::new();
                while nx * ny * a.nz > 1024 && (nx > 1 || ny > 1) {
                    let h = |n: usize| -> Vec<usize> {
                        let mut v: Vec<usize> = (0..n).step_by(2).collect();
                        v.push(n);
                        v
                    };
                    let (xs, ys) = (h(nx), h(ny));
                    nx = xs.len() - 1;
                    ny = ys.len() - 1;
                    st.push(Coarsening::from_starts(a.nz, xs, ys));
                }
                st
            }
            _ => my_plan(&a.wx, &a.wy, a.nz, &pl, arg(args, "slack", 1.5)),
        };
        let face: String = arg(args, "face", "redisc".to_string());
        let mut levels = vec![Level {
            a: a.clone(),
            piv: line_pivots(a),
            lines: Vec::new(),
        }];
        for c in &steps {
            let up = &levels.last().unwrap().a;
            let mx = face_maps(&up.wx, &c.xstart, &face);
            let my = face_maps(&up.wy, &c.ystart, &face);
            let ac = be.mg_coarsen(up, &mx, &my).unwrap();
            let piv = line_pivots(&ac);
            levels.push(Level {
                a: ac,
                piv,
                lines: Vec::new(),
            });
        }
        let (rho, frac, maxl): (f64, f64, usize) = (
            arg(args, "rho", 2.0),
            arg(args, "frac", 0.25),
            arg(args, "linelv", 0),
        );
        if arg(args, "lines", 0) == 1 {
            let nl = levels.len();
            let fine = levels[0].a.len() as f64;
            let mut total = 0.0;
            for (l, lv) in levels.iter_mut().enumerate().take(nl - 1) {
                if l <= maxl {
                    let st = if arg(args, "onlypairs", 1) == 1 {
                        Some(&steps[l])
                    } else {
                        None
                    };
                    lv.lines = select_lines(&lv.a, rho, frac, st);
                    let cells: usize = lv
                        .lines
                        .iter()
                        .map(|&(ax, _, _)| if ax == 0 { lv.a.ny } else { lv.a.nx })
                        .sum();
                    eprintln!(
                        "level {l}: {} lines, {:.3} of the level's cells",
                        lv.lines.len(),
                        cells as f64 / lv.a.len() as f64
                    );
                    total += cells as f64 / fine;
                }
            }
            eprintln!(
                "line work: {total:.3} fine levels of cells per line pass (x and y together)"
            );
        }
        let inv = CoarsestInverse::new(&levels.last().unwrap().a).unwrap();
        Mg {
            levels,
            steps,
            inv,
            twogrid: arg(args, "twogrid", 0) == 1,
            gamma: if arg(args, "w", 0) == 1 { 2 } else { 1 },
            pre0: arg(args, "pre0", 1),
            sweeps: arg(args, "sweeps", 1),
        }
    }

    fn smooth(&self, l: usize, b: &[f64], x: &mut Vec<f64>, order: [u32; 2]) {
        let be = CpuBackend::new();
        let lv = &self.levels[l];
        let bv = b.to_vec();
        let fwd = order[0] == 0;
        if !fwd {
            for &(ax, p, z) in lv.lines.iter().rev() {
                line_solve(&lv.a, b, x, ax, p, z);
            }
        }
        for c in order {
            be.mg_smooth(&lv.a, &lv.piv, c, ColumnUpdate::Line, Guess::Full, &bv, x)
                .unwrap();
        }
        if fwd {
            for &(ax, p, z) in lv.lines.iter() {
                line_solve(&lv.a, b, x, ax, p, z);
            }
        }
    }

    fn cycle(&self, l: usize, b: &[f64], x: &mut Vec<f64>, exact_below: bool) {
        let be = CpuBackend::new();
        let last = self.levels.len() - 1;
        if l == last {
            let mut out = vec![0.0; b.len()];
            be.mg_dense_apply(&self.inv.values, self.inv.n, &b.to_vec(), &mut out)
                .unwrap();
            *x = out;
            return;
        }
        if exact_below && l == 1 {
            // "Exact" solve of level 1: many V-cycles.
            x.iter_mut().for_each(|v| *v = 0.0);
            for _ in 0..60 {
                self.cycle(1, b, x, false);
            }
            return;
        }
        let nu = if l == 0 { self.pre0 } else { self.sweeps };
        for _ in 0..nu {
            self.smooth(l, b, x, [0, 1]);
        }
        let c = &self.steps[l];
        let mut bc = vec![0.0; c.coarse_len()];
        be.mg_restrict_residual(&self.levels[l].a, c, &b.to_vec(), x, &mut bc)
            .unwrap();
        let mut xc = vec![0.0; bc.len()];
        for _ in 0..self.gamma {
            self.cycle(l + 1, &bc, &mut xc, exact_below);
        }
        be.mg_prolong_add(c, &xc, x).unwrap();
        for _ in 0..nu {
            self.smooth(l, b, x, [1, 0]);
        }
    }

    pub fn apply(&self, r: &[f64]) -> Vec<f64> {
        let mut z = vec![0.0; r.len()];
        self.cycle(0, r, &mut z, self.twogrid);
        z
    }
}

/// Variants of `plan_graded`: the same targets, other pairings.
pub fn my_plan(wx: &[f64], wy: &[f64], nz: usize, mode: &str, slack: f64) -> Vec<Coarsening> {
    let minred: f64 = std::env::var("MINRED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1.0);
    let mut steps = Vec::new();
    let (mut wx, mut wy) = (wx.to_vec(), wy.to_vec());
    let h = wx.iter().chain(&wy).copied().fold(f64::INFINITY, f64::min);
    let mut target = 2.0 * h;
    let mut bump = 1.0;
    while wx.len() * wy.len() * nz > 1024 && (wx.len() > 1 || wy.len() > 1) {
        let lim = target * slack * (1.0 + 1e-9);
        let m = wx.iter().chain(&wy).copied().fold(f64::INFINITY, f64::min);
        let lim = if mode == "max" {
            m * slack * bump * (1.0 + 1e-9)
        } else {
            lim
        };
        let lim = if mode == "maxt" {
            target * 0.5 * slack * (1.0 + 1e-9)
        } else {
            lim
        };
        let mode = if mode == "maxt" { "max" } else { mode };
        let (mut xs, mut ys) = (agg(&wx, lim, mode), agg(&wy, lim, mode));
        if steps.is_empty() {
            // env SPLIT=i,j,..: at level 0, the pairs holding these fine
            // indices (x and y alike) become two singles.
            let split: Vec<usize> = std::env::var("SPLIT")
                .unwrap_or_default()
                .split(',')
                .filter_map(|t| t.parse().ok())
                .collect();
            for st in [&mut xs, &mut ys] {
                let mut out = vec![0];
                for r in st.windows(2) {
                    if r[1] - r[0] == 2 && split.iter().any(|&i| (r[0]..r[1]).contains(&i)) {
                        out.push(r[0] + 1);
                    }
                    out.push(r[1]);
                }
                *st = out;
            }
        }
        target *= 2.0;
        let red = ((xs.len() - 1) * (ys.len() - 1)) as f64 / (wx.len() * wy.len()) as f64;
        if (xs.len() == wx.len() + 1 && ys.len() == wy.len() + 1) || red > minred {
            bump *= 1.25;
            continue;
        }
        bump = 1.0;
        let sums = |w: &[f64], s: &[usize]| -> Vec<f64> {
            s.windows(2).map(|r| w[r[0]..r[1]].iter().sum()).collect()
        };
        (wx, wy) = (sums(&wx, &xs), sums(&wy, &ys));
        steps.push(Coarsening::from_starts(nz, xs, ys));
    }
    steps
}

pub fn agg(w: &[f64], lim: f64, mode: &str) -> Vec<usize> {
    let n = w.len();
    let mut paired = vec![false; n]; // paired[i]: i is the left of a pair
    let mut used = vec![false; n];
    match mode {
        "max" => {
            let mut i = 0;
            while i + 1 < n {
                if w[i].max(w[i + 1]) <= lim {
                    paired[i] = true;
                    i += 2;
                } else {
                    i += 1;
                }
            }
        }
        "left" => {
            let mut i = 0;
            while i + 1 < n {
                if w[i] + w[i + 1] <= lim {
                    paired[i] = true;
                    i += 2;
                } else {
                    i += 1;
                }
            }
        }
        "asc" | "asc2" => {
            let mut c: Vec<usize> = (0..n.saturating_sub(1)).collect();
            c.sort_by(|&i, &j| {
                (w[i] + w[i + 1])
                    .partial_cmp(&(w[j] + w[j + 1]))
                    .unwrap()
                    .then(i.cmp(&j))
            });
            for i in c {
                if w[i] + w[i + 1] <= lim && !used[i] && !used[i + 1] {
                    // asc2: never pair two cells of unequal widths (ratio > 1.05)
                    if mode == "asc2" && (w[i] / w[i + 1]).max(w[i + 1] / w[i]) > 1.05 {
                        continue;
                    }
                    paired[i] = true;
                    used[i] = true;
                    used[i + 1] = true;
                }
            }
        }
        _ => panic!("plan {mode}"),
    }
    let mut starts = vec![0];
    let mut i = 0;
    while i < n {
        i += if paired[i] { 2 } else { 1 };
        starts.push(i);
    }
    starts
}
