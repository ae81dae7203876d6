//! The f32 multigrid hierarchy on CUDA (`kernels/mg.cu`'s `*_f32`
//! instantiations). `#[ignore]`d: run on a GPU machine with
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 mg_mixed::
//! ```
//!
//! Every shipped config at 64² (or its own grid): CUDA f32 against the CPU
//! f64 and against CUDA f64 (true residual ≤ rtol, temperatures within the
//! rtol-derived bound of `util::mg::f32_mg_agrees_with_f64`); CUDA f32
//! against the CPU f32 (the same iterations ±1); mol_f2f at 512² with the
//! hierarchy's memory in f64 and f32.

use crate::util::gpu;
use crate::util::mg::{f32_mg_agrees_with_f64, load, mg_options};
use cuth::backend::cpu::CpuBackend;
use cuth::linalg::mg::MgPrecision;
use cuth::thermal::steady::solve_steady;

#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_f32_multigrid_agrees_with_cpu_f64() {
    for (name, i64, i32) in
        f32_mg_agrees_with_f64(&CpuBackend::new(), gpu(), 64, 1e-8, MgPrecision::F32)
    {
        assert!(i32 <= i64 + 2, "{name}: cuda f32 {i32} it vs cpu f64 {i64}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_f32_multigrid_agrees_with_cuda_f64() {
    for (name, i64, i32) in f32_mg_agrees_with_f64(gpu(), gpu(), 64, 1e-8, MgPrecision::F32) {
        assert!(i32 <= i64 + 2, "{name}: f32 {i32} it vs f64 {i64}");
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_auto_multigrid_agrees_with_cuda_f64() {
    f32_mg_agrees_with_f64(gpu(), gpu(), 64, 1e-8, MgPrecision::Auto);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn cuda_f32_matches_cpu_f32_and_halves_the_coarse_levels() {
    let s = load("configs/mol_f2f.toml", Some((512, 512)));
    let o64 = mg_options(&s, 1e-8);
    let mut o32 = o64.clone();
    o32.precond_opts.mg.precision = MgPrecision::F32;
    let c = solve_steady(&CpuBackend::new(), &s, &o32).unwrap();
    let g = solve_steady(gpu(), &s, &o32).unwrap();
    let g64 = solve_steady(gpu(), &s, &o64).unwrap();
    let (ic, ig) = (c.summary.solver.iterations, g.summary.solver.iterations);
    assert!(ic.abs_diff(ig) <= 1, "cpu f32 {ic} it, cuda f32 {ig} it");
    let dt = c
        .temperature_k
        .iter()
        .zip(&g.temperature_k)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(dt < 1e-5, "{dt} K");
    let m32 = g.summary.solver.precond.multigrid.as_ref().unwrap();
    let m64 = g64.summary.solver.precond.multigrid.as_ref().unwrap();
    println!(
        "mol_f2f 512²: cuda f64 {} it, f32 {ig} it; hierarchy {} B (f64) vs {} B (f32); per level f64 {:?} f32 {:?}",
        g64.summary.solver.iterations,
        m64.hierarchy_bytes,
        m32.hierarchy_bytes,
        m64.levels.iter().map(|l| l.memory_bytes).collect::<Vec<_>>(),
        m32.levels.iter().map(|l| l.memory_bytes).collect::<Vec<_>>(),
    );
    for (l64, l32) in m64.levels.iter().zip(&m32.levels).skip(1) {
        assert_eq!(l32.memory_bytes * 2, l64.memory_bytes);
    }
}

/// `cuth solve` on a GPU, run as a user runs it: its hierarchy is `auto`
/// unless `--mg-precision` says otherwise, and the default answer equals
/// the f64 hierarchy's within 1e-6 K at every layer's extremes and mean;
/// a k(T) stack keeps f64.
#[test]
#[ignore = "needs a CUDA GPU"]
fn cli_solve_takes_the_auto_hierarchy_by_default() {
    use crate::util::cli::{cuth, ok, s};
    let dir = tempfile::tempdir().unwrap();
    let solve = |stack: &str, extra: &[&str], name: &str| -> serde_json::Value {
        let out = dir.path().join(name);
        let mut args = vec!["solve", stack, "--device", "cuda", "--grid", "256x256"];
        args.extend(["--no-maps", "--quiet", "--out", s(&out)]);
        args.extend(extra);
        ok(&cuth(&args));
        let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let mg_precision = |v: &serde_json::Value| {
        v["solver"]["precond"]["multigrid"]["precision"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let default = solve("configs/mol_f2f.toml", &[], "default");
    let f64 = solve("configs/mol_f2f.toml", &["--mg-precision", "f64"], "f64");
    assert_eq!(mg_precision(&default), "f32 (auto)");
    assert_eq!(mg_precision(&f64), "f64");
    let (ld, lf) = (
        default["layers"].as_array().unwrap(),
        f64["layers"].as_array().unwrap(),
    );
    assert_eq!(ld.len(), lf.len());
    let mut worst = 0.0f64;
    for (a, b) in ld.iter().zip(lf) {
        for key in ["t_min_k", "t_avg_k", "t_max_k"] {
            let d = (a[key].as_f64().unwrap() - b[key].as_f64().unwrap()).abs();
            worst = worst.max(d);
        }
    }
    println!(
        "mol_f2f 256²: default {} it, f64 {} it, max |ΔT| of layer extremes and means {worst:.2e} K",
        default["solver"]["iterations"], f64["solver"]["iterations"]
    );
    assert!(worst <= 1e-6, "{worst} K");
    let kt = solve("configs/mol_f2f_kt.toml", &[], "kt");
    assert_eq!(mg_precision(&kt), "f64");
}
