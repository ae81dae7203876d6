//! Mixed precision on the CUDA backend against the CPU reference.
//! `#[ignore]`d: run on a GPU machine with
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 mixed::
//! ```
//!
//! (a) the low-precision Chebyshev kernels (`kernels/mixed.cu`) against the
//! CPU's on random matrices whose sizes are not multiples of the block size,
//! in both thread schedules and every storage level, through the f64 output
//! z, poisoned with NaN; (b) the steady solve of mol_f2f at 512² with
//! `--precision mixed` against f64 on the GPU: max |ΔT| < 1e-4 K and the f64
//! true residual within rtol.

use crate::util as common;

use common::{gpu, random_matrix, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::cuda::QdSchedule;
use cuth::backend::{Backend, QuadDiagOps, ScaledChebyshevOps};
use cuth::linalg::precision::{Level, ScaledQuadDiag};
use cuth::linalg::PrecisionMode;
use cuth::linalg::QuadDiagOperator;

/// Degree-1 init (writes z), then init + two middle steps + a last step
/// (writes z), on backend `be`.
fn mixed_ops<B: ScaledChebyshevOps<f32>>(be: &B, a: &ScaledQuadDiag, r: &[f64]) -> [Vec<f64>; 2] {
    let n = a.len();
    let am = be.upload_scaled(a).unwrap();
    let r = be.upload(r).unwrap();
    let mut w = be.scaled_work(n).unwrap();
    let mut z1 = be.upload(&vec![f64::NAN; n]).unwrap();
    be.scaled_init(&am, 0.7, &r, &mut w, &mut z1, true).unwrap();
    let mut z = be.upload(&vec![f64::NAN; n]).unwrap();
    be.scaled_init(&am, 0.7, &r, &mut w, &mut z, false).unwrap();
    for (k, (alpha, beta)) in [(0.3, 1.1), (0.45, 0.9), (0.5, 0.8)].iter().enumerate() {
        be.scaled_step(&am, *alpha, *beta, &mut w, &mut z, k == 2)
            .unwrap();
        std::mem::swap(&mut w.d, &mut w.d_next);
    }
    [be.download(&z1).unwrap(), be.download(&z).unwrap()]
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mixed_kernels_match_cpu() {
    let mut rng = Rng::new(21);
    for dims in [(7, 5, 3), (33, 17, 5), (129, 65, 9), (257, 255, 11)] {
        let a = random_matrix(
            &mut rng,
            dims,
            |r| 10f64.powf(r.uniform(0.0, 6.0)),
            |r, _| r.uniform(0.5, 1.5),
        );
        let r: Vec<f64> = (0..a.len()).map(|_| rng.uniform(-1.0, 1.0)).collect();
        // The rule's choice, then every f16/f32 combination of (gx, gy, gz).
        let (h, f) = (
            ScaledQuadDiag::new(&a, Level::F16),
            ScaledQuadDiag::new(&a, Level::F32),
        );
        let mut mats = vec![("rule", ScaledQuadDiag::new(&a, Level::Rule))];
        for bits in 0..8 {
            let mut m = h.clone();
            for k in 0..3 {
                if bits & (4 >> k) == 0 {
                    m.g[k] = f.g[k].clone();
                }
            }
            mats.push(("combo", m));
        }
        for (level, s) in mats {
            let h = mixed_ops(&CpuBackend::new(), &s, &r);
            for sched in [QdSchedule::Rows, QdSchedule::Columns] {
                gpu().set_schedule(sched);
                let g = mixed_ops(gpu(), &s, &r);
                for (name, gv, hv) in [("init z", &g[0], &h[0]), ("step z", &g[1], &h[1])] {
                    let nan = gv.iter().filter(|v| v.is_nan()).count();
                    assert_eq!(nan, 0, "{name}: {nan} rows unwritten");
                    let e = common::max_rel_diff(gv, hv);
                    println!(
                        "mixed {name} {} [{}] {:<7} {:?}: rel err {e:.2e} (tol 1e-5)",
                        level,
                        s.storage_label(),
                        sched.name(),
                        dims
                    );
                    assert!(
                        e < 1e-5,
                        "{name} at {dims:?} {level} [{}]: {e:e}",
                        s.storage_label()
                    );
                }
            }
            gpu().set_schedule(QdSchedule::Auto);
        }
    }
}

/// The CPU's check (`util::mixed`) at 512², timed: launches unsynchronized
/// for the wall times, synchronized again afterwards.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mixed_solve_of_mol_f2f_512_meets_rtol_and_matches_f64() {
    gpu().set_sync_each_launch(false);
    common::mixed::mixed_solve_of_mol_f2f_meets_rtol_and_matches_f64(
        gpu(),
        512,
        &[PrecisionMode::Mixed],
    );
    gpu().set_sync_each_launch(true);
}

/// A mixed-mode switch on the GPU builds its next level from the matrix
/// downloaded with `host_matrix` (nothing is kept on the host): the download
/// is A bit for bit, and the switched preconditioner matches the CPU's.
#[test]
#[ignore = "needs a CUDA GPU"]
fn mixed_switch_builds_the_next_level_from_the_device_matrix() {
    use cuth::linalg::precond::chebyshev::Chebyshev;
    use cuth::linalg::{PrecondOptions, Preconditioner};
    let mut rng = Rng::new(22);
    let a = random_matrix(
        &mut rng,
        (129, 65, 9),
        |r| 10f64.powf(r.uniform(0.0, 6.0)),
        |r, _| r.uniform(0.5, 1.5),
    );
    let r: Vec<f64> = (0..a.len()).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let be = gpu();
    let ad = be.upload_matrix(&a).unwrap();
    let back = be.host_matrix(&ad).unwrap();
    for (name, got, want) in [
        ("d", &back.d, &a.d),
        ("gx", &back.gx, &a.gx),
        ("gy", &back.gy, &a.gy),
        ("gz", &back.gz, &a.gz),
        ("amb", &back.amb, &a.amb),
    ] {
        assert!(
            got.iter()
                .zip(want)
                .all(|(g, w)| g.to_bits() == w.to_bits()),
            "{name} differs after the round trip"
        );
    }
    let opts = PrecondOptions {
        precision: PrecisionMode::Mixed,
        ..PrecondOptions::default()
    };
    let cpu = CpuBackend::new();
    let mut opc = QuadDiagOperator::new(&cpu, &a, a.len());
    let mut opg = QuadDiagOperator::new(be, &ad, a.len());
    let mut mc = Chebyshev::new(&cpu, &mut opc, Some(&a), &opts).unwrap();
    let mut mg = Chebyshev::new(be, &mut opg, Some(&a), &opts).unwrap();
    for _ in 0..2 {
        let (lc, lg) = (
            mc.raise_precision(&cpu, &mut opc).unwrap(),
            mg.raise_precision(be, &mut opg).unwrap(),
        );
        println!("switched to {lg:?} (cpu {lc:?})");
        assert_eq!(lc, lg);
        let mut zc = vec![f64::NAN; a.len()];
        mc.apply(&cpu, &mut opc, &r, &mut zc).unwrap();
        let rd = be.upload(&r).unwrap();
        let mut zd = be.upload(&vec![f64::NAN; a.len()]).unwrap();
        mg.apply(be, &mut opg, &rd, &mut zd).unwrap();
        let zg = be.download(&zd).unwrap();
        assert!(zg.iter().all(|v| v.is_finite()), "{lg:?}: rows unwritten");
        let e = common::max_rel_diff(&zg, &zc);
        println!("after switch to {lg:?}: rel err vs cpu {e:.2e} (tol 1e-5)");
        assert!(e < 1e-5, "{lg:?}: {e:e}");
    }
}
