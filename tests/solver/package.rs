//! Packages on a non-uniform grid against independent references:
//! an outline over the whole domain changes nothing; absent cells keep the
//! system SPD (dense Cholesky) and the dense solve equals PCG's; a region
//! equals the same patch written as a floorplan unit; fluxes of a linear
//! field balance exactly on grids with cell ratios of 50 and power stays
//! conservative there; a die smaller than its spreader converges to a uniform
//! fine grid of the same geometry; multigrid's iteration count stays flat
//! under refinement and cell aspect ratio;
//! cooling maps; energy balance of every shipped example.

use crate::util as common;

use common::{dense_solve, is_positive_definite, stack};
use cuth::assemble::{assemble, System};
use cuth::backend::cpu::CpuBackend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::layer_power;
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions, SteadyOutcome};
use std::path::Path;

fn system(s: &Stack) -> (Grid, System) {
    let grid = Grid::from_stack(s);
    let power: Vec<_> = (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect();
    let sys = assemble(s, &grid, &power);
    (grid, sys)
}

fn solve(s: &Stack, kind: PrecondKind, rtol: f64) -> SteadyOutcome {
    let mut o = SteadyOptions::from_stack(s, kind);
    o.precond = kind;
    o.rtol = rtol;
    o.max_iter = 20_000;
    solve_steady(&CpuBackend::new(), s, &o).unwrap()
}

const MATERIALS: &str = "[materials.si]\nk = 130.0\nheat_capacity = 1.6e6\n\
     [materials.tim]\nk = 4.0\nheat_capacity = 4e6\n\
     [materials.cu]\nk = 400.0\nheat_capacity = 3.5e6\n";

/// A die (outline `die`, mm) with `p` W on a TIM of the die's size on a
/// copper spreader over the whole `w` × `w` mm domain; `grid` is the
/// `[grid]` body.
fn die_on_spreader(w: f64, die: [f64; 4], grid: &str, p: f64) -> String {
    let outline = format!(
        "outline = {{ x = \"{} mm\", y = \"{} mm\", width = \"{} mm\", length = \"{} mm\" }}\n",
        die[0], die[1], die[2], die[3]
    );
    format!(
        "[package]\nwidth = \"{w} mm\"\nlength = \"{w} mm\"\n[grid]\n{grid}\n\
         [boundary]\nambient = 300.0\nh_top = 5000.0\n{MATERIALS}\
         [[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = \"100 um\"\n{outline}fill = \"none\"\n\
         power = {{ type = \"uniform\", total = {p} }}\n\
         [[layers]]\nname = \"tim\"\nmaterial = \"tim\"\nthickness = \"20 um\"\n{outline}\
         [[layers]]\nname = \"spreader\"\nmaterial = \"cu\"\nthickness = \"1 mm\"\ncells = 2\n"
    )
}

#[test]
fn outline_over_the_whole_domain_changes_nothing() {
    let base = "[chip]\nwidth = \"3 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 7\nny = 5\n\
                [boundary]\nambient = 300.0\nh_top = 1e4\n";
    let layer = "[[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = \"100 um\"\n\
                 power = { type = \"blocks\", blocks = [{ name = \"b\", x = \"0.3 mm\", y = \"0.2 mm\", \
                 width = \"1.1 mm\", height = \"0.9 mm\", power = 1.5 }] }\n";
    let plain = stack(&format!("{base}{MATERIALS}{layer}"));
    let outlined = stack(&format!(
        "{base}{MATERIALS}{layer}outline = {{ x = 0.0, y = 0.0, width = \"3 mm\", length = \"2 mm\" }}\n\
         fill = \"none\"\n"
    ));
    let (_, a) = system(&plain);
    let (_, b) = system(&outlined);
    assert_eq!(a.a, b.a);
    assert_eq!((a.rhs, a.capacity, a.g_top), (b.rhs, b.capacity, b.g_top));
}

fn dense(a: &cuth::linalg::QuadDiag) -> Vec<Vec<f64>> {
    let n = a.len();
    let mut m = vec![vec![0.0; n]; n];
    for (i, row) in m.iter_mut().enumerate() {
        row[i] = a.d[i];
    }
    for (off, g) in [(1, &a.gx), (a.nx, &a.gy), (a.nx * a.ny, &a.gz)] {
        for i in 0..n {
            if g[i] != 0.0 {
                m[i][i + off] -= g[i];
                m[i + off][i] -= g[i];
            }
        }
    }
    m
}

#[test]
fn absent_cells_keep_the_system_spd_and_drop_out() {
    // Die 1.2 × 0.9 mm off-centre in a 3 × 2.5 mm domain, uniform 8 × 6 grid
    // (cells straddle the die's edges: partly absent cells too).
    let s = stack(&die_on_spreader(
        3.0,
        [0.4, 0.5, 1.2, 0.9],
        "nx = 8\nny = 6",
        2.0,
    ));
    let (grid, sys) = system(&s);
    let a = &sys.a;
    let plane = grid.plane();
    let mut absent = 0;
    for i in 0..2 * plane {
        if sys.capacity[i] == 0.0 {
            absent += 1;
            assert_eq!((a.d[i], a.gz[i], sys.rhs[i]), (1.0, 0.0, 0.0), "row {i}");
        }
    }
    assert!(absent > 20, "{absent} absent cells");
    let m = dense(a);
    assert!(is_positive_definite(&m), "not SPD");
    let theta = dense_solve(m, sys.rhs.clone());
    let out = solve(&s, PrecondKind::Multigrid, 1e-12);
    for (i, th) in theta.iter().enumerate() {
        let t = out.temperature_k[i] - s.ambient_k;
        assert!((t - th).abs() <= 1e-9 * 10.0, "cell {i}: {t} vs dense {th}");
    }
    // Energy: the power leaves through the top film.
    let top: f64 = (0..plane)
        .map(|j| sys.g_top[j] * theta[theta.len() - plane + j])
        .sum();
    assert!((top - 2.0).abs() < 1e-9, "{top}");
    // Every preconditioner converges on it.
    for kind in [
        PrecondKind::Jacobi,
        PrecondKind::Chebyshev,
        PrecondKind::None,
    ] {
        let o = solve(&s, kind, 1e-10);
        let d = common::max_rel_diff(&o.temperature_k, &out.temperature_k);
        assert!(d < 1e-9, "{kind:?}: {d}");
    }
}

#[test]
fn a_region_equals_the_same_patch_as_a_floorplan_unit() {
    let dir = tempfile::tempdir().unwrap();
    // Specific heat 2e6, resistivity 0.01 -> k 100.
    std::fs::write(
        dir.path().join("die.flp"),
        "tsv\t0.0007\t0.0005\t0.00033\t0.00041\t2e6\t0.01\n",
    )
    .unwrap();
    let head = "[chip]\nwidth = \"2 mm\"\nlength = \"1.5 mm\"\n[grid]\nnx = 9\nny = 7\n\
                [boundary]\nambient = 300.0\nh_top = 1e4\n[materials.k100]\nk = 100.0\n\
                heat_capacity = 2e6\n";
    let layer = "[[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = \"100 um\"\n\
                 power = { type = \"uniform\", total = 1.0 }\n";
    let with_flp = format!("{head}{MATERIALS}{layer}floorplan = \"die.flp\"\n");
    let with_region = format!(
        "{head}{MATERIALS}{layer}[[layers.regions]]\nname = \"tsv\"\nx = \"0.33 mm\"\ny = \"0.41 mm\"\n\
         width = \"0.7 mm\"\nlength = \"0.5 mm\"\nmaterial = \"k100\"\n"
    );
    let load = |t: &str| Stack::from_toml(t, &dir.path().join("s.toml")).unwrap();
    let (_, a) = system(&load(&with_flp));
    let (_, b) = system(&load(&with_region));
    let close = |x: &[f64], y: &[f64]| common::max_rel_diff(x, y) < 1e-13;
    assert!(close(&a.a.d, &b.a.d) && close(&a.a.gx, &b.a.gx) && close(&a.a.gy, &b.a.gy));
    assert!(close(&a.a.amb, &b.a.amb) && close(&a.capacity, &b.capacity));
    assert!(a
        .a
        .gx
        .iter()
        .zip(&b.a.gx)
        .any(|(x, y)| x != &0.0 && y != &0.0));
    // The patch did change the layer (so the comparison can fail).
    let (_, plain) = system(&load(&format!("{head}{MATERIALS}{layer}")));
    assert!(!close(&plain.a.gx, &a.a.gx));
}

/// A stack with the given column and row widths (non-uniform), one silicon
/// layer and a block of `p` W at `rect` (mm).
fn on_widths(wx: Vec<f64>, wy: Vec<f64>, rect: [f64; 4], p: f64) -> Stack {
    let (w, l): (f64, f64) = (wx.iter().sum(), wy.iter().sum());
    let mut s = stack(&format!(
        "[chip]\nwidth = {w}\nlength = {l}\n[grid]\nnx = 1\nny = 1\n\
         [boundary]\nambient = 300.0\nh_top = 1e4\nh_bottom = 1e3\n{MATERIALS}\
         [[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = \"50 um\"\ncells = 2\n\
         power = {{ type = \"blocks\", blocks = [{{ name = \"b\", x = \"{} mm\", y = \"{} mm\", \
         width = \"{} mm\", height = \"{} mm\", power = {p} }}] }}\n",
        rect[0], rect[1], rect[2], rect[3]
    ));
    (s.nx, s.ny) = (wx.len(), wy.len());
    s.plane_edges = Some((cuth::grid::edges_of(&wx), cuth::grid::edges_of(&wy)));
    s
}

#[test]
fn fluxes_and_power_are_conserved_with_cell_ratios_of_50() {
    let u = 2e-5;
    let wx: Vec<f64> = [1.0, 50.0, 1.0, 3.0, 50.0, 7.0, 1.0]
        .iter()
        .map(|f| f * u)
        .collect();
    let wy: Vec<f64> = [50.0, 1.0, 2.0, 50.0, 1.0].iter().map(|f| f * u).collect();
    let s = on_widths(wx.clone(), wy.clone(), [0.01, 0.5, 1.5, 1.5], 3.0);
    let (grid, sys) = system(&s);
    // Power: the block's watts, all of them, by overlap area.
    let total: f64 = sys.rhs.iter().sum();
    assert!((total - 3.0).abs() < 1e-13, "{total}");
    let (nx, ny) = (grid.nx, grid.ny);
    let area = |x0: f64, x1: f64, y0: f64, y1: f64| {
        (x1.min(1.51e-3) - x0.max(0.01e-3)).max(0.0) * (y1.min(2.0e-3) - y0.max(0.5e-3)).max(0.0)
    };
    for y in 0..ny {
        for x in 0..nx {
            let a = area(grid.xe[x], grid.xe[x + 1], grid.ye[y], grid.ye[y + 1]);
            let want = 3.0 * a / (1.5e-3 * 1.5e-3);
            let got = sys.rhs[x + nx * y] + sys.rhs[x + nx * y + nx * ny];
            assert!((got - want).abs() < 1e-12, "({x}, {y}): {got} vs {want}");
        }
    }
    // A field linear in x (then in y): two-point fluxes between cell centres
    // are exact, so every interior cell passes on what it receives.
    let a = &sys.a;
    for (axis, g, stride) in [(0, &a.gx, 1), (1, &a.gy, nx)] {
        let theta: Vec<f64> = (0..grid.len())
            .map(|i| {
                let (x, y, _) = grid.coords(i);
                if axis == 0 {
                    3.0 + 2e3 * grid.x_center(x)
                } else {
                    1.0 - 5e2 * grid.y_center(y)
                }
            })
            .collect();
        for i in 0..grid.len() {
            let (x, y, _) = grid.coords(i);
            let (k, n) = if axis == 0 { (x, nx) } else { (y, ny) };
            if k == 0 || k + 1 == n {
                continue;
            }
            let fin = g[i - stride] * (theta[i - stride] - theta[i]);
            let fout = g[i] * (theta[i] - theta[i + stride]);
            assert!(
                (fin - fout).abs() <= 1e-12 * fin.abs(),
                "axis {axis} cell {i}: {fin} vs {fout}"
            );
        }
    }
    // Against the half-cell formula written out.
    let dz = 25e-6;
    for x in 0..nx - 1 {
        let want = wy[0] * dz / (wx[x] / (2.0 * 130.0) + wx[x + 1] / (2.0 * 130.0));
        assert!((a.gx[x] - want).abs() <= 1e-14 * want, "gx[{x}]");
    }
    // Energy balance through PCG with multigrid on this grid.
    let out = solve(&s, PrecondKind::Multigrid, 1e-12);
    assert!(
        out.summary.energy.relative_error < 1e-10,
        "{:?}",
        out.summary.energy
    );
}

fn hottest(out: &SteadyOutcome) -> f64 {
    out.summary.hottest.t_k
}

#[test]
fn die_smaller_than_its_spreader_converges_to_the_uniform_fine_grid() {
    // 8 mm spreader, 2 × 1.5 mm die at (2.5, 3.25) mm. Reference: the uniform
    // grid of 31.25 um (256 × 256), which every die edge lies on.
    let die = [2.5, 3.25, 2.0, 1.5];
    let reference = stack(&die_on_spreader(8.0, die, "nx = 256\nny = 256", 3.0));
    let t_ref = hottest(&solve(&reference, PrecondKind::Multigrid, 1e-10));
    let mut errors = Vec::new();
    for cell in ["250 um", "125 um", "62.5 um", "31.25 um"] {
        let s = stack(&die_on_spreader(
            8.0,
            die,
            &format!("cell = \"{cell}\""),
            3.0,
        ));
        assert!(s.plane_edges.is_some());
        let out = solve(&s, PrecondKind::Multigrid, 1e-10);
        assert!(out.summary.energy.relative_error < 1e-8);
        errors.push(((hottest(&out) - t_ref).abs(), out.grid.plane()));
    }
    println!("reference {t_ref} K; |error| K, plane cells: {errors:?}");
    for w in errors.windows(2) {
        assert!(w[1].0 < w[0].0, "no convergence: {errors:?}");
    }
    let (err, cells) = *errors.last().unwrap();
    assert!(err < 0.05, "{err} K");
    assert!(cells * 3 < 256 * 256, "{cells} cells");
}

/// Multigrid converges on graded grids with absent cells, in fewer
/// iterations than Chebyshev, and its count stays flat under refinement and
/// under the cells' aspect ratio: the size-graded coarsening merges the die's
/// narrow columns first (`linalg::mg::plan_graded`). Before it, with plain
/// 2 × 2 coarsening, the count grew as 45, 74, 98, 129 from 200 to 25 um
/// cells and reached 461 with no `max_cell` cap (BENCHMARKS.md's git history, "Packages").
#[test]
fn multigrid_converges_on_graded_grids_with_absent_cells() {
    let die = [5.0, 6.0, 2.0, 1.5];
    let mut iters = Vec::new();
    let grids = [
        "cell = \"200 um\"",
        "cell = \"100 um\"",
        "cell = \"50 um\"",
        "cell = \"25 um\"",
        // Aspect ratios up to 640 where die columns cross overhang rows.
        "cell = \"25 um\"\nmax_cell = \"16 mm\"",
    ];
    for grid in grids {
        let s = stack(&die_on_spreader(16.0, die, grid, 3.0));
        let out = solve(&s, PrecondKind::Multigrid, 1e-8);
        assert!(out.summary.energy.relative_error < 1e-6);
        iters.push((out.grid.nx, out.summary.solver.iterations));
    }
    println!("(nx, iterations): {iters:?}");
    assert!(iters.iter().all(|i| i.1 <= 20), "{iters:?}");
    let (lo, hi) = iters
        .iter()
        .fold((usize::MAX, 0), |(a, b), i| (a.min(i.1), b.max(i.1)));
    assert!(2 * hi <= 3 * lo, "not flat: {iters:?}");
    let s = stack(&die_on_spreader(16.0, die, "cell = \"50 um\"", 3.0));
    let cheb = solve(&s, PrecondKind::Chebyshev, 1e-8);
    assert!(cheb.summary.solver.iterations > 5 * iters[2].1, "{iters:?}");
}

#[test]
fn cooling_maps_over_the_whole_face_equal_the_number() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("h.csv"), "5000,5000,5000\n5000,5000,5000\n").unwrap();
    let body = |h: &str| {
        die_on_spreader(4.0, [1.0, 1.0, 1.5, 1.0], "cell = \"200 um\"", 1.0)
            .replace("h_top = 5000.0", h)
    };
    let load = |t: &str| Stack::from_toml(t, &dir.path().join("s.toml")).unwrap();
    let (_, plain) = system(&load(&body("h_top = 5000.0")));
    let rects = body(
        "h_top = [{ x = 0.0, y = 0.0, width = \"4 mm\", length = \"2 mm\", h = 5000.0 },\n\
         { x = 0.0, y = \"2 mm\", width = \"4 mm\", length = \"2 mm\", h = 5000.0 }]",
    );
    let raster = body("h_top = { file = \"h.csv\" }");
    for t in [rects, raster] {
        let (_, m) = system(&load(&t));
        assert!(common::max_rel_diff(&m.g_top, &plain.g_top) < 1e-12);
    }
    // Half the face cooled, by a map twice as strong: the power still leaves,
    // only through the cooled half.
    let half = load(&body(
        "h_top = [{ x = 0.0, y = 0.0, width = \"2 mm\", length = \"4 mm\", h = 10000.0 }]",
    ));
    let (grid, m) = system(&half);
    for (j, g) in m.g_top.iter().enumerate() {
        let cooled = grid.x_center(j % grid.nx) < 2e-3;
        assert_eq!(*g > 0.0, cooled, "cell {j}");
    }
    let out = solve(&half, PrecondKind::Multigrid, 1e-12);
    assert!(out.summary.energy.relative_error < 1e-10);
}

#[test]
fn every_shipped_example_balances_energy_to_1e_10() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut names = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "toml") {
            let s = Stack::load(&p).unwrap();
            let out = solve(&s, PrecondKind::Multigrid, 1e-11);
            let e = &out.summary.energy;
            assert!(e.relative_error < 1e-10, "{}: {e:?}", p.display());
            names.push(p.file_name().unwrap().to_string_lossy().to_string());
        }
    }
    assert!(names.iter().any(|n| n == "hbm_2p5d.toml"), "{names:?}");
}
