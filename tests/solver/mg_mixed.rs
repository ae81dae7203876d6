//! The f32 multigrid hierarchy (`--mg-precision f32`, `auto`) against the
//! f64 one on the CPU: every shipped config at a small grid reaches the
//! same true residual, with temperatures within a bound derived from rtol
//! (`util::mg::f32_mg_agrees_with_f64`) and iteration counts close to
//! f64's; the f32 cycle is symmetric to f32 rounding and positive; `auto`
//! starts in f32 and reports it.

use crate::util as common;

use common::mg::{f32_mg_agrees_with_f64, load, mg_options, system};
use cuth::backend::cpu::CpuBackend;
use cuth::linalg::mg::{MgOptions, MgPrecision, Multigrid};
use cuth::linalg::{Preconditioner, QuadDiagOperator};
use cuth::thermal::steady::solve_steady;

#[test]
fn f32_multigrid_agrees_with_f64_on_every_shipped_config() {
    let be = CpuBackend::new();
    for (name, i64, i32) in f32_mg_agrees_with_f64(&be, &be, 32, 1e-8, MgPrecision::F32) {
        // Rounding the cycle to f32 costs at most a few iterations.
        assert!(i32 <= i64 + 2, "{name}: f32 {i32} it vs f64 {i64}");
    }
}

#[test]
fn f32_multigrid_agrees_with_f64_on_mol_f2f_at_128() {
    let be = CpuBackend::new();
    let s = load("configs/mol_f2f.toml", Some((128, 128)));
    let o64 = mg_options(&s, 1e-8);
    let mut o32 = o64.clone();
    o32.precond_opts.mg.precision = MgPrecision::F32;
    let r = solve_steady(&be, &s, &o64).unwrap();
    let l = solve_steady(&be, &s, &o32).unwrap();
    let (i64, i32) = (r.summary.solver.iterations, l.summary.solver.iterations);
    println!("mol_f2f 128²: f64 {i64} it, f32 {i32} it");
    assert!(i32 <= i64 + 1);
    let mg = l.summary.solver.precond.multigrid.as_ref().unwrap();
    assert_eq!(mg.precision, "f32");
}

#[test]
fn f32_cycle_is_symmetric_to_f32_rounding_and_positive() {
    let be = CpuBackend::new();
    let a = system(&load("configs/mol_f2f.toml", Some((24, 20))));
    let opts = MgOptions {
        precision: MgPrecision::F32,
        ..MgOptions::default()
    };
    let mut m = Multigrid::new(&be, &a, &opts).unwrap();
    let n = a.len();
    let mut op = QuadDiagOperator::new(&be, &a, n);
    let mut rng = common::Rng::new(7);
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    for _ in 0..3 {
        let (x, y) = (rng.vec(n, -1.0, 1.0), rng.vec(n, -1.0, 1.0));
        let (mut mx, mut my) = (vec![0.0; n], vec![0.0; n]);
        m.apply(&be, &mut op, &x, &mut mx).unwrap();
        m.apply(&be, &mut op, &y, &mut my).unwrap();
        let (xmy, mxy) = (dot(&x, &my), dot(&mx, &y));
        let scale = dot(&mx, &mx).sqrt() * dot(&y, &y).sqrt();
        assert!(
            (xmy - mxy).abs() <= 1e-4 * scale,
            "<x,My> {xmy} vs <Mx,y> {mxy}"
        );
        assert!(dot(&x, &mx) > 0.0);
    }
}

#[test]
fn auto_starts_in_f32_and_matches_f64() {
    let be = CpuBackend::new();
    let s = load("configs/hbm_2p5d.toml", Some((32, 32)));
    let o64 = mg_options(&s, 1e-8);
    let mut oa = o64.clone();
    oa.precond_opts.mg.precision = MgPrecision::Auto;
    let r = solve_steady(&be, &s, &o64).unwrap();
    let l = solve_steady(&be, &s, &oa).unwrap();
    let mg = l.summary.solver.precond.multigrid.as_ref().unwrap();
    assert!(mg.precision.starts_with("f32") || mg.precision.starts_with("f64 (auto"));
    assert!(l.summary.solver.final_true_residual <= 1e-8);
    let dt = r
        .temperature_k
        .iter()
        .zip(&l.temperature_k)
        .filter(|(a, b)| a.is_finite() && b.is_finite())
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(dt < 1e-3, "{dt}");
}

#[test]
fn auto_falls_back_to_the_f64_cycle_and_f32_stays() {
    let be = CpuBackend::new();
    let a = system(&load("configs/hotspot_ev6_3d.toml", Some((20, 18))));
    let n = a.len();
    let mut op = QuadDiagOperator::new(&be, &a, n);
    let with = |precision| MgOptions {
        precision,
        ..MgOptions::default()
    };
    let mut f64 = Multigrid::new(&be, &a, &with(MgPrecision::F64)).unwrap();
    let mut f32 = Multigrid::new(&be, &a, &with(MgPrecision::F32)).unwrap();
    let mut auto = Multigrid::new(&be, &a, &with(MgPrecision::Auto)).unwrap();
    assert_eq!(auto.mg_report().precision, "f32 (auto)");
    // A fixed f32 hierarchy has no level to switch to; f64 has none either.
    assert_eq!(f32.raise_precision(&be, &mut op).unwrap(), None);
    assert_eq!(f64.raise_precision(&be, &mut op).unwrap(), None);
    assert_eq!(
        auto.raise_precision(&be, &mut op).unwrap().as_deref(),
        Some("mg f64")
    );
    assert_eq!(auto.mg_report().precision, "f64 (auto, fell back)");
    assert_eq!(auto.raise_precision(&be, &mut op).unwrap(), None);
    // After the fall-back, the cycle is the f64 one, bit for bit.
    let r = common::Rng::new(3).vec(n, -1.0, 1.0);
    let (mut z64, mut za) = (vec![0.0; n], vec![0.0; n]);
    f64.apply(&be, &mut op, &r, &mut z64).unwrap();
    auto.apply(&be, &mut op, &r, &mut za).unwrap();
    assert_eq!(z64, za);
    assert_eq!(
        f64.mg_report().hierarchy_bytes,
        auto.mg_report().hierarchy_bytes
    );
}
