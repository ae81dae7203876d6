//! Mixed precision on the CPU backend: the low-precision
//! Chebyshev path must reach the same f64 tolerance as the f64 solve,
//! measured independently with `true_relative_residual`; its preconditioner
//! must equal the f64 one to the storage precision; and a preconditioner
//! that stalls must make PCG switch up, or fail, never report convergence.
//! (The mol_f2f solve's body, shared with the GPU tests, is in `util::mixed`.)

use crate::util as common;

use common::{mixed, Rng};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::BackendError;
use cuth::linalg::precond::chebyshev::Chebyshev;
use cuth::linalg::{
    build_precond, pcg, true_relative_residual, CgParams, LinearOperator, PrecisionMode,
    PrecondInfo, PrecondKind, PrecondOptions, PrecondReport, Preconditioner, QuadDiag,
    QuadDiagOperator, SolveError, Stop,
};
use half::f16;
use std::collections::BTreeMap;

/// An SPD thermal-like matrix: weak in-plane, strong z couplings, a weak film
/// to ambient (`extra`) on the top plane.
fn random_matrix(rng: &mut Rng, dims: (usize, usize, usize), extra: f64) -> QuadDiag {
    let top = dims.0 * dims.1 * (dims.2 - 1);
    common::random_matrix(
        rng,
        dims,
        |r| r.uniform(10.0, 1000.0),
        |_, i| if i >= top { extra } else { 0.0 },
    )
}

fn opts(mode: PrecisionMode) -> PrecondOptions {
    PrecondOptions {
        precision: mode,
        ..PrecondOptions::default()
    }
}

fn params(rtol: f64) -> CgParams {
    CgParams {
        stop: Stop::relative(rtol),
        max_iter: 5000,
        check_every: 1,
        ..CgParams::default()
    }
}

const MODES: [PrecisionMode; 4] = [
    PrecisionMode::F64,
    PrecisionMode::F32,
    PrecisionMode::F16,
    PrecisionMode::Mixed,
];

#[test]
fn every_precision_reaches_the_f64_tolerance_on_a_random_system() {
    let be = CpuBackend::new();
    let mut rng = Rng::new(11);
    let a = random_matrix(&mut rng, (23, 19, 6), 1e-2);
    let b: Vec<f64> = (0..a.len()).map(|_| rng.uniform(0.0, 1.0)).collect();
    let rtol = 1e-10;
    let mut reference = None;
    for mode in MODES {
        let mut op = QuadDiagOperator::new(&be, &a, a.len());
        let mut m =
            build_precond(PrecondKind::Chebyshev, &be, &mut op, Some(&a), &opts(mode)).unwrap();
        let mut x = vec![0.0; a.len()];
        let info = pcg(&be, &mut op, m.as_mut(), &b, &mut x, &params(rtol)).unwrap();
        let rel = true_relative_residual(&be, &mut op, &b, &x, 1.0).unwrap();
        let xr: &Vec<f64> = reference.get_or_insert_with(|| x.clone());
        let dx = common::max_rel_diff(&x, xr);
        println!(
            "{:<5} {} iterations, true rel residual {rel:.2e}, x vs f64 {dx:.1e}",
            mode.name(),
            info.iterations
        );
        assert!(
            rel <= rtol,
            "{}: true residual {rel:e} > {rtol:e}",
            mode.name()
        );
        // Both solutions are within rtol·cond of the exact one; cond(A) of
        // this small system is ~1e4.
        assert!(dx < 1e-5, "{}: x differs from f64 by {dx:e}", mode.name());
    }
}

#[test]
fn mixed_solve_of_mol_f2f_meets_rtol_and_matches_f64() {
    let modes = [PrecisionMode::Mixed, PrecisionMode::F16];
    mixed::mixed_solve_of_mol_f2f_meets_rtol_and_matches_f64(&CpuBackend::new(), 48, &modes);
}

/// The scaled low-precision Chebyshev S q(Â) S r against the f64 one
/// q(D⁻¹A) D⁻¹ r: equal up to the storage and f32 rounding.
#[test]
fn low_precision_chebyshev_equals_the_f64_polynomial() {
    let be = CpuBackend::new();
    let mut rng = Rng::new(12);
    let a = random_matrix(&mut rng, (17, 13, 5), 0.5);
    let r: Vec<f64> = (0..a.len()).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let apply = |mode, degree| {
        let o = PrecondOptions {
            chebyshev_degree: degree,
            ..opts(mode)
        };
        let mut op = QuadDiagOperator::new(&be, &a, a.len());
        let mut m = Chebyshev::new(&be, &mut op, Some(&a), &o).unwrap();
        let mut z = vec![f64::NAN; a.len()];
        m.apply(&be, &mut op, &r, &mut z).unwrap();
        z
    };
    for degree in [1, 2, 6] {
        let z64 = apply(PrecisionMode::F64, degree);
        for (mode, tol) in [(PrecisionMode::F32, 1e-5), (PrecisionMode::F16, 5e-3)] {
            let z = apply(mode, degree);
            let e = common::max_rel_diff(&z, &z64);
            println!(
                "degree {degree} {}: max rel diff {e:.2e} (tol {tol:.0e})",
                mode.name()
            );
            assert!(e < tol, "degree {degree} {}: {e:e}", mode.name());
        }
    }
}

/// Mixed mode builds only its first level at set-up; each switch builds the
/// next one from the backend's matrix. After each switch the preconditioner
/// must be exactly the one a fixed mode builds up front, and close to f64.
#[test]
fn a_lazily_built_level_equals_the_one_built_up_front() {
    let be = CpuBackend::new();
    let mut rng = Rng::new(13);
    let a = random_matrix(&mut rng, (31, 23, 7), 0.5);
    let r: Vec<f64> = (0..a.len()).map(|_| rng.uniform(-1.0, 1.0)).collect();
    let op = || QuadDiagOperator::new(&be, &a, a.len());
    let apply = |m: &mut Chebyshev<CpuBackend>| {
        let mut z = vec![f64::NAN; a.len()];
        m.apply(&be, &mut op(), &r, &mut z).unwrap();
        z
    };
    let fixed = |mode| {
        let mut m = Chebyshev::new(&be, &mut op(), Some(&a), &opts(mode)).unwrap();
        (apply(&mut m), m.precision().unwrap())
    };
    let mut m = Chebyshev::new(&be, &mut op(), Some(&a), &opts(PrecisionMode::Mixed)).unwrap();
    let start = m.precision().unwrap();
    assert_eq!(start.current, "f32 [gx,gy,gz f16,f16,f16]");
    assert_eq!(start.matrix_bytes_per_row, 6);
    let z_rule = apply(&mut m);

    let (z32, p32) = fixed(PrecisionMode::F32);
    let label = m.raise_precision(&be, &mut op()).unwrap();
    assert_eq!(label.as_deref(), Some("f32 [gx,gy,gz f32,f32,f32]"));
    let now = m.precision().unwrap();
    assert_eq!((&now.current, now.matrix_bytes_per_row), (&p32.current, 12));
    assert_eq!(now.storage.len(), 3);
    for (c, f) in now.storage.iter().zip(&p32.storage) {
        assert_eq!(
            (c.storage, c.max, c.min_nonzero, c.max_rel_error),
            (f.storage, f.max, f.min_nonzero, f.max_rel_error)
        );
    }
    let z = apply(&mut m);
    assert!(z.iter().zip(&z32).all(|(a, b)| a.to_bits() == b.to_bits()));

    let (z64, _) = fixed(PrecisionMode::F64);
    assert_eq!(
        m.raise_precision(&be, &mut op()).unwrap().as_deref(),
        Some("f64")
    );
    let z = apply(&mut m);
    assert!(z.iter().zip(&z64).all(|(a, b)| a.to_bits() == b.to_bits()));
    assert_eq!(m.raise_precision(&be, &mut op()).unwrap(), None);

    // Each level approximates the f64 polynomial to its storage precision.
    let e_rule = common::max_rel_diff(&z_rule, &z64);
    let e32 = common::max_rel_diff(&z32, &z64);
    println!("vs f64: rule {e_rule:.1e}, f32 {e32:.1e}");
    assert!(e_rule < 5e-3 && e32 < 1e-5, "rule {e_rule:e}, f32 {e32:e}");
}

/// A Jacobi preconditioner whose input passes through unscaled f16, as a
/// naive f16 path would: residual entries under f16's range flush to zero,
/// so once the residual is small PCG makes no progress on them. Raising the
/// precision swaps in exact Jacobi.
struct FlushingJacobi {
    exact: bool,
    can_raise: bool,
    /// Instead of flushing, multiply each z_i by a fresh random factor in
    /// (0.05, 1.95) (an inconsistent M, as from arithmetic noise far above
    /// the working precision): CG loses conjugacy and stops making progress,
    /// without breaking down.
    noisy: bool,
    rng: Rng,
}

impl<A: LinearOperator<CpuBackend> + ?Sized> Preconditioner<CpuBackend, A> for FlushingJacobi {
    fn apply(
        &mut self,
        _be: &CpuBackend,
        a: &mut A,
        r: &Vec<f64>,
        z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        let d = a.diagonal();
        for i in 0..r.len() {
            let ri = if self.exact {
                r[i]
            } else if self.noisy {
                r[i] * self.rng.uniform(0.05, 1.95)
            } else {
                f16::from_f64(r[i]).to_f64()
            };
            z[i] = ri / d[i];
        }
        Ok(())
    }
    fn raise_precision(
        &mut self,
        _be: &CpuBackend,
        _a: &mut A,
    ) -> Result<Option<String>, BackendError> {
        if self.can_raise && !self.exact {
            self.exact = true;
            Ok(Some("f64".into()))
        } else {
            Ok(None)
        }
    }
}

impl PrecondInfo for FlushingJacobi {
    fn report(&self) -> PrecondReport {
        PrecondReport {
            name: "flushing-jacobi".into(),
            params: BTreeMap::new(),
            multigrid: None,
        }
    }
}

/// Runs the mock without and with a level to switch up to; the first must
/// fail, the second switch once and converge. Returns the switch iteration.
fn stall_case(noisy: bool) -> usize {
    let be = CpuBackend::new();
    let mut rng = Rng::new(13);
    let a = random_matrix(&mut rng, (20, 20, 4), 1.0);
    // ‖b‖ ~ 1e-4 per entry: the residual reaches f16's subnormal range
    // (< 6e-5) after a few decades, long before rtol.
    let b: Vec<f64> = (0..a.len()).map(|_| 1e-4 * rng.uniform(0.5, 1.5)).collect();
    let rtol = 1e-10;
    let p = CgParams {
        max_iter: 4000,
        ..params(rtol)
    };

    let mut stuck = FlushingJacobi {
        exact: false,
        can_raise: false,
        noisy,
        rng: Rng::new(1),
    };
    let mut x = vec![0.0; a.len()];
    let mut op = QuadDiagOperator::new(&be, &a, a.len());
    match pcg(&be, &mut op, &mut stuck, &b, &mut x, &p) {
        Ok(info) => panic!("reported convergence after {} iterations", info.iterations),
        Err(SolveError::NoConvergence { rel, .. } | SolveError::Stagnated { rel, .. }) => {
            let t = true_relative_residual(&be, &mut op, &b, &x, 1.0).unwrap();
            println!("f16-only: failed as it must, residual {rel:.2e} (true {t:.2e})");
            assert!(t > rtol);
        }
        Err(e @ SolveError::Breakdown { .. }) => println!("f16-only: failed as it must: {e}"),
        Err(e) => panic!("unexpected error {e}"),
    }

    let mut adaptive = FlushingJacobi {
        exact: false,
        can_raise: true,
        noisy,
        rng: Rng::new(1),
    };
    let mut x = vec![0.0; a.len()];
    let info = pcg(&be, &mut op, &mut adaptive, &b, &mut x, &p).unwrap();
    let t = true_relative_residual(&be, &mut op, &b, &x, 1.0).unwrap();
    println!(
        "adaptive: switches {:?}, {} iterations, true residual {t:.2e}",
        info.precision_switches, info.iterations
    );
    assert_eq!(info.precision_switches.len(), 1, "one switch to f64");
    assert!(t <= rtol, "true residual {t:e}");
    info.precision_switches[0].0
}

/// Flushing makes r·z vanish: PCG breaks down, which is a failure, or with
/// a level to go to, a switch.
#[test]
fn a_breakdown_under_low_precision_switches_up_or_fails() {
    stall_case(false);
}

/// No progress, no breakdown: the plateau detector must switch.
#[test]
fn a_plateau_under_low_precision_switches_up_or_fails() {
    let at = stall_case(true);
    assert!(at >= 1000, "switched at {at}, before the stall window");
}
