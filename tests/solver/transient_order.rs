//! Time schemes against the exact solution of the semi-discrete system
//! C θ' = P − A θ, the matrix exponential computed apart from the code
//! under test (a Jacobi eigen-decomposition of C^-1/2 A C^-1/2 of a tiny
//! stack): backward Euler's observed order 1 and TR-BDF2's 2, each within
//! 0.2; adaptive TR-BDF2 meets --time-tol against that reference and lands
//! on every trace row's start; a k(T) stack steps adaptively.

use crate::util::{dense_solve, stack};
use cuth::assemble::assemble;
use cuth::backend::cpu::CpuBackend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::schedule::PowerSchedule;
use cuth::power::trace::parse_csv_trace;
use cuth::power::{layer_power, LayerPower};
use cuth::stack::Stack;
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::transient::{
    run_transient, InitState, Scheme, StepView, Stepping, TransientOptions, TransientOutcome,
};
use std::path::Path;

/// Three cells in x, two layers (a powered die on a slower spreader): time
/// constants a decade apart, so the run is mildly stiff.
fn slab() -> Stack {
    stack(
        "[chip]\nwidth=\"3 mm\"\nlength=\"1 mm\"\n[grid]\nnx=3\nny=1\n[boundary]\nambient=300\nh_top=2e4\n\
         [materials.si]\nk=100\nheat_capacity=1.6e6\n[materials.cu]\nk=20\nheat_capacity=3.4e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=\"200 um\"\n\
         [layers.power]\ntype=\"blocks\"\n\
         [[layers.power.blocks]]\nname=\"hot\"\nx=0\ny=0\nwidth=\"1 mm\"\nheight=\"1 mm\"\npower=0.4\n\
         [[layers]]\nname=\"lid\"\nmaterial=\"cu\"\nthickness=\"300 um\"\n",
    )
}

fn base_power(s: &Stack) -> Vec<LayerPower> {
    let grid = Grid::from_stack(s);
    (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect()
}

fn options(s: &Stack, dt: f64, steps: usize, stepping: Stepping) -> TransientOptions {
    let mut solver = SteadyOptions::from_stack(s, PrecondKind::Jacobi);
    solver.rtol = 1e-13;
    solver.max_iter = 10_000;
    TransientOptions {
        solver,
        dt,
        steps,
        init: InitState::Ambient,
        snapshot_every: None,
        stepping,
        step_field: Default::default(),
    }
}

fn run(s: &Stack, sched: &PowerSchedule, opts: &TransientOptions) -> TransientOutcome {
    let mut observe = |_: &StepView| Ok(());
    run_transient(
        &CpuBackend::new(),
        s,
        &cuth::grid::Grid::from_stack(s),
        sched,
        opts,
        &mut observe,
    )
    .expect("transient runs")
}

/// Eigenvalues and eigenvectors (columns) of the symmetric `m`, by cyclic
/// Jacobi rotations.
fn jacobi_eigen(mut m: Vec<Vec<f64>>) -> (Vec<f64>, Vec<Vec<f64>>) {
    let n = m.len();
    let mut v: Vec<Vec<f64>> = (0..n)
        .map(|i| (0..n).map(|j| f64::from(u8::from(i == j))).collect())
        .collect();
    for _ in 0..100 {
        let off: f64 = (0..n)
            .flat_map(|i| (0..n).filter(move |&j| j != i).map(move |j| (i, j)))
            .map(|(i, j)| m[i][j] * m[i][j])
            .sum();
        if off < 1e-30 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                if m[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (m[q][q] - m[p][p]) / (2.0 * m[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let (c, s) = (1.0 / (t * t + 1.0).sqrt(), t / (t * t + 1.0).sqrt());
                for row in m.iter_mut() {
                    let (mkp, mkq) = (row[p], row[q]);
                    row[p] = c * mkp - s * mkq;
                    row[q] = s * mkp + c * mkq;
                }
                let (head, tail) = m.split_at_mut(q);
                for (mp, mq) in head[p].iter_mut().zip(tail[0].iter_mut()) {
                    let (mpk, mqk) = (*mp, *mq);
                    *mp = c * mpk - s * mqk;
                    *mq = s * mpk + c * mqk;
                }
                for row in v.iter_mut() {
                    let (vp, vq) = (row[p], row[q]);
                    row[p] = c * vp - s * vq;
                    row[q] = s * vp + c * vq;
                }
            }
        }
    }
    ((0..n).map(|i| m[i][i]).collect(), v)
}

/// The exact θ(t) of C θ' = P − A θ from θ(0) = 0, every cell.
struct Exact {
    theta_inf: Vec<f64>,
    lambda: Vec<f64>,
    v: Vec<Vec<f64>>,
    c_sqrt: Vec<f64>,
}

impl Exact {
    fn new(s: &Stack) -> Exact {
        let grid = Grid::from_stack(s);
        let sys = assemble(s, &grid, &base_power(s));
        let a = &sys.a;
        let n = a.len();
        let mut dense = vec![vec![0.0; n]; n];
        let plane = grid.nx * grid.ny;
        for i in 0..n {
            dense[i][i] = a.d[i];
            for (g, off) in [(&a.gx, 1), (&a.gy, grid.nx), (&a.gz, plane)] {
                if g[i] != 0.0 {
                    dense[i][i + off] = -g[i];
                    dense[i + off][i] = -g[i];
                }
            }
        }
        let theta_inf = dense_solve(dense.clone(), sys.rhs.clone());
        let c_sqrt: Vec<f64> = sys.capacity.iter().map(|c| c.sqrt()).collect();
        let m: Vec<Vec<f64>> = (0..n)
            .map(|i| {
                (0..n)
                    .map(|j| dense[i][j] / (c_sqrt[i] * c_sqrt[j]))
                    .collect()
            })
            .collect();
        let (lambda, v) = jacobi_eigen(m);
        Exact {
            theta_inf,
            lambda,
            v,
            c_sqrt,
        }
    }

    /// θ(t) = θ∞ − C^-1/2 V e^{−Λt} Vᵀ C^1/2 θ∞.
    fn at(&self, t: f64) -> Vec<f64> {
        let n = self.theta_inf.len();
        let y: Vec<f64> = (0..n).map(|i| self.c_sqrt[i] * self.theta_inf[i]).collect();
        let coef: Vec<f64> = (0..n)
            .map(|k| (0..n).map(|i| self.v[i][k] * y[i]).sum::<f64>() * (-self.lambda[k] * t).exp())
            .collect();
        (0..n)
            .map(|i| {
                let z: f64 = (0..n).map(|k| self.v[i][k] * coef[k]).sum();
                self.theta_inf[i] - z / self.c_sqrt[i]
            })
            .collect()
    }

    fn slowest_tau(&self) -> f64 {
        1.0 / self.lambda.iter().cloned().fold(f64::INFINITY, f64::min)
    }
}

fn max_error(out: &TransientOutcome, exact: &[f64], ambient: f64) -> f64 {
    out.temperature_k
        .iter()
        .zip(exact)
        .map(|(t, e)| (t - ambient - e).abs())
        .fold(0.0, f64::max)
}

/// The observed order from the errors at Δt, Δt/2, Δt/4 (the two finest).
fn observed_order(s: &Stack, scheme: Scheme) -> (f64, Vec<f64>) {
    let exact = Exact::new(s);
    let t_end = exact.slowest_tau();
    let want = exact.at(t_end);
    let errors: Vec<f64> = [8usize, 16, 32]
        .iter()
        .map(|&steps| {
            let opts = options(
                s,
                t_end / steps as f64,
                steps,
                Stepping {
                    scheme,
                    time_tol_k: None,
                },
            );
            let out = run(s, &PowerSchedule::constant(base_power(s)), &opts);
            max_error(&out, &want, s.ambient_k)
        })
        .collect();
    ((errors[1] / errors[2]).log2(), errors)
}

#[test]
fn backward_euler_is_first_order() {
    let (p, e) = observed_order(&slab(), Scheme::BackwardEuler);
    assert!((p - 1.0).abs() <= 0.2, "order {p}, errors {e:?}");
}

#[test]
fn trbdf2_is_second_order() {
    let (p, e) = observed_order(&slab(), Scheme::TrBdf2);
    assert!((p - 2.0).abs() <= 0.2, "order {p}, errors {e:?}");
}

#[test]
fn adaptive_steps_meet_the_tolerance_and_land_on_every_row() {
    let s = slab();
    let exact = Exact::new(&s);
    let tau = exact.slowest_tau();
    // Without rows: the error against the exact field stays near the
    // tolerance (a local estimate, so allow a few steps' worth), and steps
    // grow back to --dt once the start's transient has passed.
    let tol = 1e-4;
    let steps = 6;
    let dt = tau / 2.0;
    let opts = options(
        &s,
        dt,
        steps,
        Stepping {
            scheme: Scheme::TrBdf2,
            time_tol_k: Some(tol),
        },
    );
    let out = run(&s, &PowerSchedule::constant(base_power(&s)), &opts);
    let err = max_error(&out, &exact.at(steps as f64 * dt), s.ambient_k);
    let st = &out.summary.stepping;
    assert!(err <= 10.0 * tol, "error {err:e} K > 10 × {tol:e}");
    println!("error {err:e} K at tol {tol:e} K: {st:?}");
    assert!(st.steps_taken > steps && st.max_dt_s <= dt, "{st:?}");
    assert!(
        st.max_dt_s >= 8.0 * st.min_dt_s,
        "steps grow after the start: {st:?}"
    );
    // The same run at a 10× tighter tolerance is closer.
    let tight = options(
        &s,
        dt,
        steps,
        Stepping {
            scheme: Scheme::TrBdf2,
            time_tol_k: Some(tol / 10.0),
        },
    );
    let out_t = run(&s, &PowerSchedule::constant(base_power(&s)), &tight);
    let err_t = max_error(&out_t, &exact.at(steps as f64 * dt), s.ambient_k);
    assert!(err_t < err, "{err_t:e} vs {err:e}");

    // Rows starting off the multiples of --dt are landed on, bit for bit.
    let grid = Grid::from_stack(&s);
    let rows = format!("time,hot\n0,0.4\n{},0\n{},0.8\n", 0.3 * dt, 2.7 * dt);
    let trace = parse_csv_trace(&rows, Path::new("t.csv")).unwrap();
    let sched = PowerSchedule::with_trace(&s, &grid, base_power(&s), trace).unwrap();
    let out = run(&s, &sched, &opts);
    for t in [0.3 * dt, 2.7 * dt] {
        assert!(
            out.step_ends_s.contains(&t),
            "{t:e} not in {:?}",
            out.step_ends_s
        );
    }
    for k in 1..=steps {
        assert!(out.step_ends_s.contains(&(k as f64 * dt)));
    }
    // Energy: power in, heat out over the stages and stored heat balance.
    for r in &out.records[1..] {
        let e = &r.energy;
        let scale = (e.power_w * dt)
            .max(e.stored_j.abs())
            .max(e.heat_out_w * dt);
        assert!(
            e.imbalance_j.abs() <= 1e-9 * scale,
            "step {}: {e:?}",
            r.step
        );
    }
}
