//! Temperature-dependent transients against scalar references: a
//! lumped die with k(T), c(T) and leakage is one ODE,
//! C(T) dT/dt = P + P_leak(T) − G(T)(T − T_amb); cuth's iterated backward
//! Euler (`--nonlinear-iterations`) must equal the scalar implicit step
//! (solved here by Newton), the semi-implicit default must differ by O(Δt),
//! and both must converge to a fine RK4 reference. Also: `--init steady`
//! with laws and leakage, a step that does not converge, Anderson against
//! Picard on the same fixed point.

use cuth::backend::cpu::CpuBackend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::layer_power;
use cuth::power::schedule::PowerSchedule;
use cuth::stack::Stack;
use cuth::thermal::nonlinear::NonlinearError;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use cuth::thermal::transient::{
    run_transient, InitState, Scheme, StepView, Stepping, TransientError, TransientOptions,
    TransientOutcome,
};
use std::path::Path;

fn stack(text: &str) -> Stack {
    Stack::from_toml(text, Path::new("test.toml")).unwrap()
}

fn tight(stack: &Stack) -> SteadyOptions {
    let mut o = SteadyOptions::from_stack(stack, PrecondKind::Jacobi);
    o.rtol = 1e-13;
    o.max_iter = 100_000;
    o.nonlinear.tol_k = 1e-11;
    o.nonlinear.energy_tol = 1e-9;
    o
}

// The lumped die: 1 mm², 100 µm, h = 1e4 W/(m² K), ambient 300 K.
const P_W: f64 = 0.2;
const P_REF: f64 = 0.01;
const BETA: f64 = 0.02;
const AREA: f64 = 1e-6;
const DZ: f64 = 1e-4;
const H: f64 = 1e4;
const TA: f64 = 300.0;

/// Uniform power on one layer cooled on top: every cell at one temperature.
fn lumped() -> String {
    format!(
        "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=4\nny=4\n[boundary]\nambient={TA}\nh_top={H}\n\
         [materials.die]\nk={{ k300 = 0.5, exponent = -1.3 }}\nheat_capacity={{ c300 = 1e6, exponent = 1.0 }}\n\
         [[layers]]\nname=\"die\"\nmaterial=\"die\"\nthickness={DZ}\n\
         power={{ type=\"uniform\", total={P_W} }}\n\
         leakage={{ p_ref = {P_REF}, t_ref = 300.0, beta = {BETA} }}\n"
    )
}

fn k(t: f64) -> f64 {
    0.5 * (t / 300.0).powf(-1.3)
}
/// Heat capacity of the die, J/K.
fn cap(t: f64) -> f64 {
    1e6 * (t / 300.0) * AREA * DZ
}
/// Conductance to ambient: half the layer in series with the film, W/K.
fn g(t: f64) -> f64 {
    AREA / (DZ / (2.0 * k(t)) + 1.0 / H)
}
fn leak(t: f64) -> f64 {
    P_REF * (BETA * (t - 300.0)).exp()
}

/// The implicit step from `tn`: C(T)/Δt (T − Tn) + G(T)(T − Ta) − P − P_leak(T) = 0,
/// by Newton with a central-difference derivative.
fn implicit_step(tn: f64, dt: f64) -> f64 {
    let f = |t: f64| cap(t) / dt * (t - tn) + g(t) * (t - TA) - P_W - leak(t);
    let mut t = tn;
    for _ in 0..100 {
        let d = (f(t + 1e-5) - f(t - 1e-5)) / 2e-5;
        let step = f(t) / d;
        t -= step;
        if step.abs() < 1e-13 {
            return t;
        }
    }
    panic!("Newton did not converge from {tn}");
}

/// T(t_end) of the ODE by RK4 with 200 000 steps.
fn reference(t_end: f64) -> f64 {
    let rhs = |t: f64| (P_W + leak(t) - g(t) * (t - TA)) / cap(t);
    let n = 200_000;
    let h = t_end / n as f64;
    let mut t = TA;
    for _ in 0..n {
        let k1 = rhs(t);
        let k2 = rhs(t + 0.5 * h * k1);
        let k3 = rhs(t + 0.5 * h * k2);
        let k4 = rhs(t + h * k3);
        t += h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
    }
    t
}

fn run(
    s: &Stack,
    dt: f64,
    steps: usize,
    iterations: usize,
    init: InitState,
) -> Result<TransientOutcome, TransientError> {
    run_anderson(s, dt, steps, iterations, init, None)
}

/// [`run`] by `stepping` (`--scheme`, `--time-tol`).
fn run_stepping(
    s: &Stack,
    dt: f64,
    steps: usize,
    iterations: usize,
    stepping: Stepping,
) -> Result<TransientOutcome, TransientError> {
    let grid = Grid::from_stack(s);
    let base: Vec<_> = (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect();
    let mut solver = tight(s);
    solver.nonlinear.transient_iterations = iterations;
    let opts = TransientOptions {
        solver,
        dt,
        steps,
        init: InitState::Ambient,
        snapshot_every: None,
        stepping,
        step_field: Default::default(),
    };
    let mut observe = |_: &StepView| Ok(());
    let sched = PowerSchedule::constant(base);
    run_transient(
        &CpuBackend::new(),
        s,
        &cuth::grid::Grid::from_stack(s),
        &sched,
        &opts,
        &mut observe,
    )
}

#[test]
fn adaptive_trbdf2_steps_k_c_and_leakage() {
    // Adaptive TR-BDF2, semi-implicit and iterated, against the RK4
    // reference: both closer than backward Euler at the same --dt, with the
    // energy account closed and steps smaller than --dt taken.
    let s = stack(&lumped());
    let t_ref = reference(T_END);
    let steps = 4;
    let dt = T_END / steps as f64;
    let be = run(&s, dt, steps, 30, InitState::Ambient).unwrap();
    let err_be = (series(&be)[steps] - t_ref).abs();
    let stepping = Stepping {
        scheme: Scheme::TrBdf2,
        time_tol_k: Some(1e-3),
    };
    for iterations in [0, 30] {
        let tr = run_stepping(&s, dt, steps, iterations, stepping).unwrap();
        let err = (series(&tr)[steps] - t_ref).abs();
        let st = &tr.summary.stepping;
        println!("iterations {iterations}: error {err:e} K (BE {err_be:e}), {st:?}");
        assert!(err < err_be / 4.0, "{err:e} vs backward Euler {err_be:e}");
        assert!(st.steps_taken > steps && st.min_dt_s < dt);
        assert!(tr.summary.energy.max_step_relative_imbalance < 1e-9);
        assert_eq!(tr.summary.scheme, "trbdf2");
    }
}

/// [`run`] with the Anderson depth of the iterated steps (`None`: default).
fn run_anderson(
    s: &Stack,
    dt: f64,
    steps: usize,
    iterations: usize,
    init: InitState,
    anderson: Option<usize>,
) -> Result<TransientOutcome, TransientError> {
    let grid = Grid::from_stack(s);
    let base: Vec<_> = (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect();
    let mut solver = tight(s);
    solver.nonlinear.transient_iterations = iterations;
    if let Some(a) = anderson {
        solver.nonlinear.anderson = a;
    }
    let opts = TransientOptions {
        solver,
        dt,
        steps,
        init,
        snapshot_every: None,
        stepping: Default::default(),
        step_field: Default::default(),
    };
    let mut observe = |_: &StepView| Ok(());
    run_transient(
        &CpuBackend::new(),
        s,
        &cuth::grid::Grid::from_stack(s),
        &PowerSchedule::constant(base),
        &opts,
        &mut observe,
    )
}

/// The die's temperature after each step (the field is uniform).
fn series(o: &TransientOutcome) -> Vec<f64> {
    o.records.iter().map(|r| r.layer_max_k[0]).collect()
}

const T_END: f64 = 0.04;

#[test]
fn iterated_steps_equal_the_scalar_implicit_step_and_converge_in_dt() {
    let s = stack(&lumped());
    let mut err_iter = Vec::new();
    let mut gap_semi = Vec::new();
    let t_ref = reference(T_END);
    for steps in [10usize, 20] {
        let dt = T_END / steps as f64;
        let it = run(&s, dt, steps, 30, InitState::Ambient).unwrap();
        let semi = run(&s, dt, steps, 0, InitState::Ambient).unwrap();
        // Every step: cuth's converged step against Newton's scalar step
        // from the same Tⁿ, and the trajectory against the scalar one.
        let got = series(&it);
        let mut t = TA;
        for (n, r) in it.records.iter().enumerate().skip(1) {
            let from_cuth = implicit_step(got[n - 1], dt);
            t = implicit_step(t, dt);
            assert!(
                (got[n] - from_cuth).abs() < 1e-9,
                "step {n}: {} vs {from_cuth}",
                got[n]
            );
            assert!((got[n] - t).abs() < 1e-9, "step {n}: {} vs {t}", got[n]);
            let outer = r.outer_iterations.unwrap();
            assert!((2..=30).contains(&outer), "step {n}: {outer} solves");
            assert!((r.leakage_w.unwrap() - leak(got[n])).abs() < 1e-9);
        }
        let nl = it.summary.nonlinear.as_ref().unwrap();
        assert_eq!(nl.mode, "iterated");
        assert!(nl.outer_iterations_per_step_max >= 2);
        let sn = semi.summary.nonlinear.as_ref().unwrap();
        assert_eq!(sn.mode, "semi-implicit");
        assert_eq!(sn.outer_iterations_per_step_max, 1);
        let (t_it, t_semi) = (got[steps], series(&semi)[steps]);
        err_iter.push((t_it - t_ref).abs());
        gap_semi.push((t_it - t_semi).abs());
        // The energy account closes either way.
        assert!(it.summary.energy.max_step_relative_imbalance < 1e-9);
    }
    println!("T_ref {t_ref:.9} K; implicit error {err_iter:?}; semi − implicit {gap_semi:?}");
    // Semi-implicit differs from the converged step by O(Δt): visible, and
    // halved (to first order) with Δt.
    assert!(gap_semi[0] > 1e-3, "{gap_semi:?}");
    let r = gap_semi[0] / gap_semi[1];
    assert!((1.6..2.4).contains(&r), "semi-implicit gap ratio {r}");
    // Backward Euler converged: first order towards the fine reference.
    let r = err_iter[0] / err_iter[1];
    assert!((1.6..2.4).contains(&r), "implicit error ratio {r}");
    assert!(err_iter[1] < 1.0, "{err_iter:?}");
}

#[test]
fn a_step_that_does_not_converge_is_an_error_naming_it() {
    let s = stack(&lumped());
    // Two solves cannot reach 1e-11 K on a step that changes T by kelvins.
    match run(&s, 4e-3, 3, 2, InitState::Ambient) {
        Err(TransientError::NonlinearStep {
            step,
            source: NonlinearError::NoConvergence { iterations, .. },
            ..
        }) => {
            assert_eq!(step, 1);
            assert_eq!(iterations, 2);
        }
        Err(e) => panic!("wrong error: {e}"),
        Ok(_) => panic!("converged in 2 solves to 1e-11 K?"),
    }
}

#[test]
fn init_steady_with_laws_and_leakage_starts_at_the_steady_field() {
    let s = stack(&lumped());
    let steady = solve_steady(&CpuBackend::new(), &s, &tight(&s)).unwrap();
    // The scalar steady balance G(T)(T − Ta) = P + P_leak(T), by bisection.
    let f = |t: f64| g(t) * (t - TA) - P_W - leak(t);
    let (mut lo, mut hi) = (TA, 450.0);
    assert!(f(lo) < 0.0 && f(hi) > 0.0);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            hi = mid
        } else {
            lo = mid
        }
    }
    for t in &steady.temperature_k {
        assert!((t - lo).abs() < 1e-8, "{t} vs {lo}");
    }
    for iterations in [0, 10] {
        let o = run(&s, 1e-3, 3, iterations, InitState::Steady).unwrap();
        assert_eq!(o.summary.init, "steady");
        for r in &o.records {
            assert!(
                (r.layer_max_k[0] - lo).abs() < 1e-8,
                "step {}: {}",
                r.step,
                r.layer_max_k[0]
            );
        }
    }
}

/// A leaking block on a die with silicon's k(T); runaway from p_ref ≈ 0.18 W
/// on. Close below it the leakage's loop gain β·∂P_leak/∂T / G is near 1,
/// so Picard is slow.
fn near_runaway(p_ref: f64) -> String {
    format!(
        "[chip]\nwidth=2e-3\nlength=2e-3\n[grid]\nnx=12\nny=12\n[boundary]\nambient=300\nh_top=2e4\n\
         [materials.si]\nk={{ k300 = 148.0, exponent = -1.3 }}\nheat_capacity=1.6e6\n\
         [materials.tim]\nk=2.0\nheat_capacity=2e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\ncells=2\n\
         [layers.power]\ntype=\"blocks\"\nblocks=[\
         {{ name=\"core\", x=0.0, y=0.0, width=1e-3, height=1e-3, power=0.2, leakage={{ p_ref={p_ref}, t_ref=300.0, beta=0.05 }} }},\
         {{ name=\"io\", x=1e-3, y=1e-3, width=1e-3, height=1e-3, power=0.05 }}]\n\
         [[layers]]\nname=\"tim\"\nmaterial=\"tim\"\nthickness=5e-5\n"
    )
}

#[test]
fn anderson_and_picard_reach_the_same_fixed_point_anderson_in_fewer_iterations() {
    let s = stack(&near_runaway(0.175));
    let mut results = Vec::new();
    for depth in [0, 1, 3, 5] {
        let mut o = tight(&s);
        o.precond = PrecondKind::Multigrid;
        o.nonlinear.tol_k = 1e-9;
        o.nonlinear.anderson = depth;
        let out = solve_steady(&CpuBackend::new(), &s, &o).unwrap();
        let nl = out.summary.nonlinear.clone().unwrap();
        println!(
            "depth {depth}: {} outer iterations ({}), peak {:.6} K, leakage {:.6} W",
            nl.outer_iterations,
            nl.method,
            out.temperature_k.iter().copied().fold(0.0, f64::max),
            nl.leakage_total_w
        );
        results.push((nl.outer_iterations, out.temperature_k));
    }
    let (picard_iters, picard_t) = &results[0];
    assert!(*picard_iters > 20, "not a slow case: {picard_iters}");
    for (iters, t) in &results[1..] {
        let gap = t
            .iter()
            .zip(picard_t)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        assert!(gap < 1e-6, "{gap}");
        assert!(3 * iters < *picard_iters, "{iters} vs {picard_iters}");
    }
}

#[test]
fn anderson_keeps_runaway_detection() {
    // No fixed point: the leakage outgrows the package.
    let s = stack(&near_runaway(0.2));
    for depth in [0, 3] {
        let mut o = tight(&s);
        o.nonlinear.anderson = depth;
        match solve_steady(&CpuBackend::new(), &s, &o) {
            Err(cuth::thermal::steady::SteadyError::Nonlinear(NonlinearError::Runaway {
                hottest,
                ..
            })) => assert_eq!(hottest, "die/core", "depth {depth}"),
            Err(e) => panic!("depth {depth}: not a runaway: {e}"),
            Ok(o) => panic!(
                "depth {depth}: converged at {:?}",
                o.summary.nonlinear.map(|n| n.outer_iterations)
            ),
        }
    }
}

#[test]
fn cli_iterated_steps_report_outer_iterations_and_a_failed_step_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lumped.toml");
    std::fs::write(&file, lumped()).unwrap();
    let run = |extra: &[&str], out: &str| {
        std::process::Command::new(crate::util::cli::cuth_path())
            .args([
                "transient",
                "--device",
                "cpu",
                "--quiet",
                "--dt",
                "4e-3",
                "--steps",
                "3",
            ])
            .args(extra)
            .arg("--out")
            .arg(dir.path().join(out))
            .arg(&file)
            .output()
            .unwrap()
    };
    let ok = run(&["--nonlinear-iterations", "20", "--init", "steady"], "ok");
    assert_eq!(
        ok.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("ok/summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["init"], "steady");
    assert_eq!(summary["nonlinear"]["mode"], "iterated");
    assert_eq!(summary["nonlinear"]["max_iterations_per_step"], 20);
    let ts = std::fs::read_to_string(dir.path().join("ok/timeseries.csv")).unwrap();
    let header: Vec<&str> = ts.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "outer_iterations")
        .expect("column");
    for line in ts.lines().skip(2) {
        let outer: usize = line.split(',').nth(col).unwrap().parse().unwrap();
        // From the steady state a step changes nothing: one solve (two at most).
        assert!((1..=2).contains(&outer), "{line}");
    }

    let bad = run(
        &["--nonlinear-iterations", "2", "--nonlinear-tol", "1e-12"],
        "bad",
    );
    assert_eq!(bad.status.code(), Some(1));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("step 1") && err.contains("did not converge"),
        "{err}"
    );
    assert!(!dir.path().join("bad").exists());

    let refused = run(&["--nonlinear-iterations", "5000"], "refused");
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn anderson_in_iterated_steps_finds_the_same_step_in_fewer_solves() {
    // Long steps (near the steady state) with a stronger leakage (Picard
    // contracts by about 0.6 per solve at the fixed point, 369.3 K).
    let text = lumped().replace("p_ref = 0.01", "p_ref = 0.025");
    let s = stack(&text);
    let dt = 5.0;
    let picard = run_anderson(&s, dt, 3, 200, InitState::Ambient, Some(0)).unwrap();
    let anderson = run_anderson(&s, dt, 3, 200, InitState::Ambient, Some(3)).unwrap();
    // Both against Newton's scalar implicit step with this leakage.
    let p_ref = 0.025;
    let step = |tn: f64| {
        let f = |t: f64| {
            cap(t) / dt * (t - tn) + g(t) * (t - TA) - P_W - p_ref * (BETA * (t - 300.0)).exp()
        };
        let mut t = tn;
        for _ in 0..100 {
            let d = (f(t + 1e-5) - f(t - 1e-5)) / 2e-5;
            t -= f(t) / d;
        }
        t
    };
    let (sp, sa) = (series(&picard), series(&anderson));
    for n in 1..sp.len() {
        let want = step(sp[n - 1]);
        assert!(
            (sp[n] - want).abs() < 1e-7,
            "picard step {n}: {} vs {want}",
            sp[n]
        );
        assert!(
            (sa[n] - sp[n]).abs() < 1e-7,
            "step {n}: {} vs {}",
            sa[n],
            sp[n]
        );
    }
    let total = |o: &TransientOutcome| o.summary.nonlinear.as_ref().unwrap().outer_iterations_total;
    let (np, na) = (total(&picard), total(&anderson));
    println!("solves over 3 steps: picard {np}, anderson {na}");
    assert!(np >= 15, "the case must be slow for Picard: {np}");
    assert!(2 * na <= np, "{na} vs {np}");
}

#[test]
fn a_heat_capacity_law_without_a_k_law_is_followed() {
    // Constant k = 0.5, c = 1e6·(T/300) J/(m³ K), no leakage: every solve
    // must assemble C(T) per cell although no conductivity varies.
    let text = lumped()
        .replace("k={ k300 = 0.5, exponent = -1.3 }", "k=0.5")
        .replace("leakage={ p_ref = 0.01, t_ref = 300.0, beta = 0.02 }\n", "");
    let s = stack(&text);
    assert!(!s.k_varies() && s.is_nonlinear());
    assert!(s.layers[0].leakage.is_none());
    let g0 = AREA / (DZ / (2.0 * 0.5) + 1.0 / H);
    // C(T)/Δt (T − Tn) + G (T − Ta) − P = 0, by Newton; and C at Tn
    // (semi-implicit), linear in T: solved directly.
    let implicit = |tn: f64, dt: f64| {
        let f = |t: f64| cap(t) / dt * (t - tn) + g0 * (t - TA) - P_W;
        let mut t = tn;
        for _ in 0..100 {
            let d = (f(t + 1e-5) - f(t - 1e-5)) / 2e-5;
            t -= f(t) / d;
        }
        t
    };
    let semi = |tn: f64, dt: f64| (cap(tn) / dt * tn + g0 * TA + P_W) / (cap(tn) / dt + g0);
    let constant_c = |tn: f64, dt: f64| (cap(TA) / dt * tn + g0 * TA + P_W) / (cap(TA) / dt + g0);
    let (dt, steps) = (4e-3, 10);
    for (iterations, step) in [(0, &semi as &dyn Fn(f64, f64) -> f64), (30, &implicit)] {
        let o = run(&s, dt, steps, iterations, InitState::Ambient).unwrap();
        let got = series(&o);
        let (mut t, mut t_const) = (TA, TA);
        for n in 1..=steps {
            assert!(
                (got[n] - step(got[n - 1], dt)).abs() < 1e-9,
                "--nonlinear-iterations {iterations}, step {n}: {} vs {}",
                got[n],
                step(got[n - 1], dt)
            );
            t = step(t, dt);
            t_const = constant_c(t_const, dt);
        }
        // The heat capacity's growth is visible: not the constant-C answer.
        println!(
            "--nonlinear-iterations {iterations}: T {:.6} K, scalar {t:.6} K, constant C {t_const:.6} K",
            got[steps]
        );
        assert!((got[steps] - t).abs() < 1e-8);
        assert!((t - t_const).abs() > 1e-2, "{t} vs {t_const}");
        assert!(o.summary.energy.max_step_relative_imbalance < 1e-9);
    }
}
