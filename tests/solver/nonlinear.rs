//! Temperature-dependent physics against independent references:
//! a 1-D slab with k(T) = k0·(T/T0)^n against its Kirchhoff-transform closed
//! form, a lumped leakage case against its scalar fixed point (bisection),
//! runaway detected, and constant inputs kept on the linear path.

use cuth::assemble::{assemble, assemble_cells, assemble_cells_into, cell_materials, System};
use cuth::backend::cpu::CpuBackend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::layer_power;
use cuth::stack::Stack;
use cuth::thermal::nonlinear::NonlinearError;
use cuth::thermal::steady::{solve_steady, SteadyError, SteadyOptions};
use std::path::Path;

fn stack(text: &str) -> Stack {
    Stack::from_toml(text, Path::new("test.toml")).unwrap()
}

fn tight(stack: &Stack, precond: PrecondKind) -> SteadyOptions {
    let mut o = SteadyOptions::from_stack(stack, precond);
    o.rtol = 1e-13;
    o.max_iter = 200_000;
    o.nonlinear.tol_k = 1e-10;
    o.nonlinear.energy_tol = 1e-9;
    o
}

const SLAB_N: usize = 2000;

/// A heater (constant k) under a slab of thickness L with k = k0 (T/300)^n,
/// cooled on top through h: the flux q = P/A crosses the slab.
fn slab(n: f64) -> String {
    format!(
        "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=1\nny=1\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.heater]\nk=100\nheat_capacity=1e6\n\
         [materials.slab]\nk={{ k300 = 10.0, exponent = {n} }}\nheat_capacity=1e6\n\
         [solver]\nprecond=\"jacobi\"\n\
         [[layers]]\nname=\"heater\"\nmaterial=\"heater\"\nthickness=1e-5\npower={{ type=\"uniform\", total=0.05 }}\n\
         [[layers]]\nname=\"slab\"\nmaterial=\"slab\"\nthickness=1e-3\ncells={SLAB_N}\n"
    )
}

#[test]
fn slab_with_power_law_k_matches_the_kirchhoff_transform() {
    for n in [-1.3f64, 0.8] {
        let s = stack(&slab(n));
        // A 2000-cell chain: f64 PCG stagnates near 1e-12.
        let opts = SteadyOptions {
            rtol: 1e-11,
            ..tight(&s, PrecondKind::Jacobi)
        };
        let out = solve_steady(&CpuBackend::new(), &s, &opts).unwrap();
        let nl = out.summary.nonlinear.as_ref().expect("a nonlinear report");
        assert!(nl.outer_iterations > 1);
        // Kirchhoff: Φ(T) = ∫ k/k0 dT = T0/(n+1)·(T/T0)^(n+1); Φ is linear in
        // z through a source-free slab: Φ(T(z)) = Φ(T_s) + q (L − z)/k0, and
        // the surface sits at T_s = T_amb + q/h exactly.
        let (q, h, k0, t0, l): (f64, f64, f64, f64, f64) = (0.05 / 1e-6, 1e4, 10.0, 300.0, 1e-3);
        let ts = 300.0 + q / h;
        let mut worst: f64 = 0.0;
        let mut linear_gap: f64 = 0.0;
        for i in 0..SLAB_N {
            let z = (i as f64 + 0.5) * l / SLAB_N as f64;
            let u = (ts / t0).powf(n + 1.0) + (n + 1.0) * q * (l - z) / (k0 * t0);
            let exact = t0 * u.powf(1.0 / (n + 1.0));
            let got = out.temperature_k[1 + i];
            worst = worst.max((got - exact).abs());
            // What a constant k0 would give: the test can tell the difference.
            linear_gap = linear_gap.max((ts + q * (l - z) / k0 - exact).abs());
        }
        println!("n = {n}: max |T − T_exact| = {worst:.3e} K (constant-k gap {linear_gap:.3} K)");
        assert!(worst < 1e-6, "n = {n}: {worst:e} K");
        assert!(linear_gap > 1e-2);
    }
}

/// A uniform film on a thin, highly conducting layer: every cell at one
/// temperature, T = T_amb + (P + p_ref e^{β(T − t_ref)})/G.
fn lumped(p_ref: f64, beta: f64) -> String {
    format!(
        "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=4\nny=4\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.si]\nk=1000\nheat_capacity=1e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n\
         power={{ type=\"uniform\", total=0.02 }}\n\
         leakage={{ p_ref = {p_ref}, t_ref = 300.0, beta = {beta} }}\n"
    )
}

#[test]
fn lumped_leakage_matches_its_scalar_fixed_point() {
    let (p_ref, beta) = (0.01, 0.02);
    let s = stack(&lumped(p_ref, beta));
    let out = solve_steady(&CpuBackend::new(), &s, &tight(&s, PrecondKind::Jacobi)).unwrap();
    // G of the whole footprint: half the layer in series with the film.
    let g = 1e-6 / (1e-4 / (2.0 * 1000.0) + 1.0 / 1e4);
    let f = |t: f64| g * (t - 300.0) - 0.02 - p_ref * (beta * (t - 300.0)).exp();
    let (mut lo, mut hi) = (300.0, 400.0);
    assert!(f(lo) < 0.0 && f(hi) > 0.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            hi = mid
        } else {
            lo = mid
        }
    }
    let t_star = 0.5 * (lo + hi);
    for t in &out.temperature_k {
        assert!((t - t_star).abs() < 1e-7, "{t} vs {t_star}");
    }
    let nl = out.summary.nonlinear.unwrap();
    let leak = p_ref * (beta * (t_star - 300.0)).exp();
    assert!((nl.leakage_total_w - leak).abs() < 1e-9 * leak.max(1.0));
    assert_eq!(nl.leakage_w.len(), 1);
    assert_eq!(nl.leakage_w[0].0, "die");
    // Energy: the leakage is in the balance.
    let e = &out.summary.energy;
    assert!((e.power_in_w - 0.02 - leak).abs() < 1e-9);
    assert!(e.relative_error < 1e-9);
}

#[test]
fn block_leakage_uses_the_block_mean_temperature() {
    let text = "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=8\nny=8\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.si]\nk=100\nheat_capacity=1e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n\
         [layers.power]\ntype=\"blocks\"\nblocks=[\
         { name=\"core\", x=0.0, y=0.0, width=5e-4, height=5e-4, power=0.02, leakage={ p_ref=0.005, t_ref=320.0, beta=0.03 } },\
         { name=\"cache\", x=5e-4, y=5e-4, width=5e-4, height=5e-4, power=0.01 }]\n";
    let s = stack(text);
    let out = solve_steady(&CpuBackend::new(), &s, &tight(&s, PrecondKind::Multigrid)).unwrap();
    let nl = out.summary.nonlinear.unwrap();
    assert_eq!(nl.leakage_w.len(), 1);
    assert_eq!(nl.leakage_w[0].0, "die/core");
    // The block covers the 4 × 4 lower-left cells exactly.
    let mut mean = 0.0;
    for y in 0..4 {
        for x in 0..4 {
            mean += out.temperature_k[x + 8 * y] / 16.0;
        }
    }
    let expect = 0.005 * (0.03 * (mean - 320.0)).exp();
    assert!((nl.leakage_w[0].1 - expect).abs() < 1e-8 * expect, "{nl:?}");
    assert!(out.summary.energy.relative_error < 1e-9);
}

#[test]
fn runaway_is_an_error_naming_the_place_and_the_leakage() {
    let s = stack(&lumped(1.0, 0.1));
    let err = solve_steady(&CpuBackend::new(), &s, &tight(&s, PrecondKind::Jacobi))
        .err()
        .expect("runaway");
    match &err {
        SteadyError::Nonlinear(NonlinearError::Runaway {
            hottest, leakage_w, ..
        }) => {
            assert_eq!(hottest, "die");
            assert!(*leakage_w > 1.0);
        }
        e => panic!("not a runaway: {e}"),
    }
    let msg = err.to_string();
    assert!(msg.contains("runaway") && msg.contains("die"), "{msg}");
}

#[test]
fn constant_inputs_keep_the_linear_path() {
    // All-constant laws (a one-coefficient polynomial is a constant).
    let text = "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=4\nny=4\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.si]\nk={ poly = [130.0] }\nheat_capacity=1e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\npower={ type=\"uniform\", total=0.02 }\n";
    let s = stack(text);
    assert!(!s.is_nonlinear());
    let out = solve_steady(&CpuBackend::new(), &s, &tight(&s, PrecondKind::Jacobi)).unwrap();
    assert!(out.summary.nonlinear.is_none());
}

#[test]
fn per_cell_assembly_of_constant_properties_is_bit_identical() {
    // mol_f2f has floorplan-free layers; hotspot_ev6_3d has material patches.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    for name in ["mol_f2f.toml", "hotspot_ev6_3d.toml"] {
        let s = Stack::load(&root.join(name))
            .unwrap()
            .with_grid(24, 20)
            .unwrap();
        assert!(!s.is_nonlinear());
        let grid = Grid::from_stack(&s);
        let power: Vec<_> = (0..s.layers.len())
            .map(|l| layer_power(&s, &grid, l).unwrap())
            .collect();
        let t: Vec<f64> = (0..grid.len()).map(|i| 300.0 + (i % 97) as f64).collect();
        let a = assemble(&s, &grid, &power);
        let b = assemble_cells(
            &s,
            &grid,
            &power,
            &cell_materials(&s, &grid, &power, &t).unwrap(),
        );
        assert_eq!(system_bits(&a), system_bits(&b), "{name}");
    }
}

/// Every array of a system, as bits (NaN-safe, −0 ≠ 0).
fn system_bits(s: &System) -> Vec<Vec<u64>> {
    let a = &s.a;
    let dims = vec![a.nx as u64, a.ny as u64, a.nz as u64];
    [&a.d, &a.gx, &a.gy, &a.gz, &a.amb, &a.wx, &a.wy]
        .into_iter()
        .chain([&s.rhs, &s.capacity, &s.g_top, &s.g_bottom])
        .map(|v| v.iter().map(|x| x.to_bits()).collect())
        .chain([dims])
        .collect()
}

#[test]
fn reassembly_in_place_overwrites_every_entry() {
    // A k(T) stack, and one with material patches; into a system of the
    // same size filled with NaN (every entry must be written) and into one
    // of another size (reallocated).
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    for name in ["mol_f2f_kt.toml", "hotspot_ev6_3d.toml"] {
        let s = Stack::load(&root.join(name))
            .unwrap()
            .with_grid(24, 20)
            .unwrap();
        let grid = Grid::from_stack(&s);
        let power: Vec<_> = (0..s.layers.len())
            .map(|l| layer_power(&s, &grid, l).unwrap())
            .collect();
        let t: Vec<f64> = (0..grid.len()).map(|i| 300.0 + (i % 89) as f64).collect();
        let cells = cell_materials(&s, &grid, &power, &t).unwrap();
        let fresh = assemble_cells(&s, &grid, &power, &cells);

        let mut dirty = fresh.clone();
        let a = &mut dirty.a;
        for v in [&mut a.d, &mut a.gx, &mut a.gy, &mut a.gz, &mut a.amb] {
            v.fill(f64::NAN);
        }
        (a.wx, a.wy) = (vec![f64::NAN; 3], vec![f64::NAN; 5]);
        for v in [&mut dirty.rhs, &mut dirty.capacity, &mut dirty.g_top] {
            v.fill(f64::NAN);
        }
        dirty.g_bottom.fill(f64::NAN);
        assemble_cells_into(&s, &grid, &power, &cells, &mut dirty);
        assert_eq!(system_bits(&dirty), system_bits(&fresh), "{name}");

        let small = s.clone().with_grid(5, 3).unwrap();
        let small_grid = Grid::from_stack(&small);
        let small_power: Vec<_> = (0..small.layers.len())
            .map(|l| layer_power(&small, &small_grid, l).unwrap())
            .collect();
        let mut other = assemble(&small, &small_grid, &small_power);
        assemble_cells_into(&s, &grid, &power, &cells, &mut other);
        assert_eq!(system_bits(&other), system_bits(&fresh), "{name}");
    }
}

#[test]
fn transient_leakage_is_semi_implicit() {
    use cuth::power::schedule::PowerSchedule;
    use cuth::thermal::transient::{run_transient, InitState, StepView, TransientOptions};
    let (p_ref, beta) = (0.01, 0.02);
    let s = stack(&lumped(p_ref, beta));
    let grid = Grid::from_stack(&s);
    let base: Vec<_> = (0..s.layers.len())
        .map(|l| layer_power(&s, &grid, l).unwrap())
        .collect();
    let (dt, steps) = (2e-3, 40);
    let opts = TransientOptions {
        solver: tight(&s, PrecondKind::Jacobi),
        dt,
        steps,
        init: InitState::Ambient,
        snapshot_every: None,
        stepping: Default::default(),
        step_field: Default::default(),
    };
    let mut observe = |_: &StepView| Ok(());
    let out = run_transient(
        &CpuBackend::new(),
        &s,
        &cuth::grid::Grid::from_stack(&s),
        &PowerSchedule::constant(base),
        &opts,
        &mut observe,
    )
    .unwrap();
    // Lumped backward Euler with the leakage at the previous step:
    // (C/Δt + G) Tⁿ⁺¹ = C/Δt Tⁿ + G T_amb + P + p_ref e^{β(Tⁿ − t_ref)}.
    let g = 1e-6 / (1e-4 / (2.0 * 1000.0) + 1.0 / 1e4);
    let c = 1e6 * 1e-6 * 1e-4;
    let mut t = 300.0;
    for (k, r) in out.records.iter().enumerate().skip(1) {
        let leak = p_ref * (beta * (t - 300.0)).exp();
        t = (c / dt * t + g * 300.0 + 0.02 + leak) / (c / dt + g);
        assert!(
            (r.layer_max_k[0] - t).abs() < 1e-8,
            "step {k}: {} vs {t}",
            r.layer_max_k[0]
        );
        // The step's leakage is the one it used, at Tⁿ.
        assert!((r.leakage_w.unwrap() - leak).abs() < 1e-12);
    }
}

#[test]
fn cli_runaway_exits_1_and_writes_nothing_and_converged_summary_reports_leakage() {
    let dir = tempfile::tempdir().unwrap();
    let cuth = env!("CARGO_BIN_EXE_cuth");
    let run = |p_ref: f64, beta: f64, out: &str| {
        let file = dir.path().join(format!("{out}.toml"));
        std::fs::write(&file, lumped(p_ref, beta)).unwrap();
        std::process::Command::new(cuth)
            .args([
                "solve",
                "--device",
                "cpu",
                "--json",
                "--precond",
                "jacobi",
                "--out",
            ])
            .arg(dir.path().join(out))
            .arg(&file)
            .output()
            .unwrap()
    };
    let bad = run(1.0, 0.1, "hot");
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("thermal runaway") && err.contains("die"),
        "{err}"
    );
    assert!(!dir.path().join("hot").exists());

    let good = run(0.01, 0.02, "ok");
    assert_eq!(good.status.code(), Some(0));
    let json: serde_json::Value = serde_json::from_slice(&good.stdout).unwrap();
    let nl = &json["nonlinear"];
    assert!(nl["outer_iterations"].as_u64().unwrap() >= 2);
    assert!(nl["final_change_k"].as_f64().unwrap() <= 1e-4);
    assert!(nl["leakage_total_w"].as_f64().unwrap() > 0.01);
    assert_eq!(nl["leakage_w"][0][0], "die");
    assert!(dir.path().join("ok").join("summary.json").exists());
}

/// A floorplan unit given a `[materials]` entry with a law (`unit_materials`).
fn unit_law_stack(dir: &Path, flp: &str, unit_materials: &str) -> Stack {
    std::fs::write(dir.join("die.flp"), flp).unwrap();
    let text = format!(
        "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=4\nny=4\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.plain]\nk=20.0\nheat_capacity=1e6\n\
         [materials.kt]\nk={{ k300 = 10.0, exponent = -1.3 }}\nheat_capacity={{ c300 = 1e6, exponent = 1.0 }}\n\
         [[layers]]\nname=\"die\"\nmaterial=\"plain\"\nthickness=1e-4\nfloorplan=\"die.flp\"\n\
         unit_materials={unit_materials}\npower={{ type=\"uniform\", total=0.05 }}\n\
         [[layers]]\nname=\"cap\"\nmaterial=\"kt\"\nthickness=1e-4\n"
    );
    Stack::from_toml(&text, &dir.join("s.toml")).unwrap()
}

#[test]
fn a_unit_material_carries_its_law() {
    let dir = tempfile::tempdir().unwrap();
    // A unit over the whole footprint with the law: the layer-law solve.
    let s = unit_law_stack(dir.path(), "all 1e-3 1e-3 0 0\n", "{ all = \"kt\" }");
    assert!(s.is_nonlinear() && s.k_varies());
    let whole = solve_steady(&CpuBackend::new(), &s, &tight(&s, PrecondKind::Jacobi)).unwrap();
    let text = "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=4\nny=4\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.kt]\nk={ k300 = 10.0, exponent = -1.3 }\nheat_capacity={ c300 = 1e6, exponent = 1.0 }\n\
         [[layers]]\nname=\"die\"\nmaterial=\"kt\"\nthickness=1e-4\npower={ type=\"uniform\", total=0.05 }\n\
         [[layers]]\nname=\"cap\"\nmaterial=\"kt\"\nthickness=1e-4\n";
    let layer = solve_steady(
        &CpuBackend::new(),
        &stack(text),
        &tight(&s, PrecondKind::Jacobi),
    )
    .unwrap();
    for (a, b) in whole.temperature_k.iter().zip(&layer.temperature_k) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    // A unit over x in [0, 0.375 mm]: cell column 0 inside, column 1 half.
    let s = unit_law_stack(dir.path(), "left 3.75e-4 1e-3 0 0\n", "{ left = \"kt\" }");
    let grid = Grid::from_stack(&s);
    let power: Vec<_> = (0..s.layers.len())
        .map(|l| layer_power(&s, &grid, l).unwrap())
        .collect();
    let t: Vec<f64> = (0..grid.len()).map(|i| 310.0 + i as f64).collect();
    let cells = cell_materials(&s, &grid, &power, &t).unwrap();
    let kt = |t: f64| 10.0 * (t / 300.0).powf(-1.3);
    for y in 0..4 {
        let j = 4 * y;
        assert!((cells[j].k[0] - kt(t[j])).abs() < 1e-12);
        assert!((cells[j].heat_capacity - 1e6 * t[j] / 300.0).abs() < 1e-6);
        let half = 0.5 * kt(t[j + 1]) + 0.5 * 20.0;
        assert!(
            (cells[j + 1].k[2] - half).abs() < 1e-12,
            "{:?}",
            cells[j + 1]
        );
        assert_eq!(cells[j + 2].k, [20.0; 3]);
    }
    // Faults: a unit the floorplan lacks; unit_materials without a floorplan.
    let s = unit_law_stack(dir.path(), "all 1e-3 1e-3 0 0\n", "{ none = \"kt\" }");
    let grid = Grid::from_stack(&s);
    let err = layer_power(&s, &grid, 0).unwrap_err().to_string();
    assert!(
        err.contains("unit_materials.none") && err.contains("no unit"),
        "{err}"
    );
    let bad = "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=4\nny=4\n[boundary]\nambient=300\nh_top=1e4\n\
         [materials.kt]\nk=1.0\nheat_capacity=1e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"kt\"\nthickness=1e-4\nunit_materials={ a = \"kt\" }\n";
    let err = Stack::from_toml(bad, Path::new("b.toml"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("needs the layer's `floorplan`"), "{err}");
}
