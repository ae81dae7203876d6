//! Transient runs on CUDA against the CPU (issues 15, 17): a linear stack
//! with a power trace, assembled on the device (A, C, films, the power of
//! each trace row by a kernel, the stored heat by a device dot), and
//! `mol_f2f_kt` with k(T) silicon (and with leakage), semi-implicit and
//! iterated per step (Anderson), stepped on the device through
//! `NonlinearOps`. The CPU run is the
//! host-assembled reference; fields agree to 1e-9 K, the outer iterations
//! per step are the same, and the device run's energy balance closes.
//! `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu_transient_device -- --ignored --nocapture --test-threads=1

mod common;

use common::{gpu, stack};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::ChebyshevBackend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::layer_power;
use cuth::power::schedule::PowerSchedule;
use cuth::power::trace::parse_csv_trace;
use cuth::power::LayerPower;
use cuth::stack::Stack;
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::transient::{
    run_transient, InitState, StepView, TransientOptions, TransientOutcome,
};
use std::path::Path;

fn base_power(s: &Stack) -> Vec<LayerPower> {
    let grid = Grid::from_stack(s);
    (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect()
}

fn run<B: ChebyshevBackend + 'static>(
    be: &B,
    s: &Stack,
    sched: &PowerSchedule,
    opts: &TransientOptions,
) -> TransientOutcome {
    let mut observe = |_: &StepView| Ok(());
    run_transient(be, s, sched, opts, &mut observe).expect("transient runs")
}

fn options(s: &Stack, dt: f64, steps: usize, iterations: usize, rtol: f64) -> TransientOptions {
    let mut solver = SteadyOptions::from_stack(s, PrecondKind::Chebyshev);
    solver.rtol = rtol;
    solver.max_iter = 100_000;
    solver.nonlinear.transient_iterations = iterations;
    solver.nonlinear.tol_k = 1e-8;
    TransientOptions {
        solver,
        dt,
        steps,
        init: InitState::Ambient,
        snapshot_every: None,
    }
}

/// Largest |a − b|.
fn max_abs(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// Every step's layer maxima and the final field agree to `tol` K.
fn compare(cpu: &TransientOutcome, dev: &TransientOutcome, tol: f64) {
    assert_eq!(cpu.records.len(), dev.records.len());
    for (c, d) in cpu.records.iter().zip(&dev.records) {
        let e = max_abs(&c.layer_max_k, &d.layer_max_k);
        let p = (c.energy.power_w - d.energy.power_w).abs();
        println!(
            "step {}: layer max differ {e:.2e} K, power {p:.2e} W, PCG {} / {}, outer {:?} / {:?}",
            c.step, c.iterations, d.iterations, c.outer_iterations, d.outer_iterations
        );
        assert!(e <= tol, "step {}: {e:e} K", c.step);
        assert!(p <= 1e-12 * c.energy.power_w.max(1.0), "step {}", c.step);
        assert_eq!(c.trace_row, d.trace_row);
        assert_eq!(c.outer_iterations, d.outer_iterations, "step {}", c.step);
    }
    let e = max_abs(&cpu.temperature_k, &dev.temperature_k);
    println!("final field: max |CUDA − CPU| = {e:.2e} K");
    assert!(e <= tol, "{e:e} K");
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn linear_trace_device_assembly_matches_cpu() {
    // Three layers (a patched die with two blocks, a TIM, a spreader), a
    // cooled bottom, and a trace that drives block b over 8 steps.
    let s = stack(
        "[chip]\nwidth=\"2 mm\"\nlength=\"1.6 mm\"\n[grid]\nnx=40\nny=32\n\
         [boundary]\nambient=300\nh_top=2e4\nh_bottom=500\n\
         [materials.si]\nk=130\nheat_capacity=1.63e6\n\
         [materials.tim]\nk=4\nheat_capacity=2e6\n\
         [materials.cu]\nk=390\nheat_capacity=3.45e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=\"100 um\"\ncells=3\n\
         [layers.power]\ntype=\"blocks\"\n\
         [[layers.power.blocks]]\nname=\"a\"\nx=0\ny=0\nwidth=\"1 mm\"\nheight=\"1.6 mm\"\npower=0.5\n\
         [[layers.power.blocks]]\nname=\"b\"\nx=\"1.2 mm\"\ny=\"0.4 mm\"\nwidth=\"0.6 mm\"\nheight=\"0.8 mm\"\npower=0.25\n\
         [[layers]]\nname=\"tim\"\nmaterial=\"tim\"\nthickness=\"20 um\"\n\
         [[layers]]\nname=\"spreader\"\nmaterial=\"cu\"\nthickness=\"300 um\"\ncells=2\n",
    );
    let grid = Grid::from_stack(&s);
    let trace = parse_csv_trace(
        "time,b\n0,1.0\n0.002,0\n0.004,2.0\n0.006,0.5\n",
        Path::new("t.csv"),
    )
    .unwrap();
    let sched = PowerSchedule::with_trace(&s, &grid, base_power(&s), trace).unwrap();
    let opts = options(&s, 1e-3, 8, 0, 1e-12);
    let cpu = run(&CpuBackend::new(), &s, &sched, &opts);
    let dev = run(gpu(), &s, &sched, &opts);
    compare(&cpu, &dev, 1e-9);
    // The device's stored heat (Σ C θ' differences) against the host's.
    for (c, d) in cpu.records.iter().zip(&dev.records).skip(1) {
        let (sc, sd) = (c.energy.stored_j, d.energy.stored_j);
        println!("step {}: stored {sc:e} J / {sd:e} J", c.step);
        assert!(
            (sc - sd).abs() <= 1e-9 * sc.abs().max(1e-12),
            "step {}",
            c.step
        );
        let scale = d.energy.power_w * opts.dt;
        assert!(
            d.energy.imbalance_j.abs() <= 1e-8 * scale,
            "step {}",
            c.step
        );
    }
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn mol_f2f_kt_iterated_matches_cpu() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/mol_f2f_kt.toml");
    let path = match Path::new("configs/mol_f2f_kt.toml").exists() {
        true => Path::new("configs/mol_f2f_kt.toml").to_path_buf(),
        false => path,
    };
    let text = std::fs::read_to_string(&path).unwrap();
    // As given, and with a per-cell leakage on the logic raster.
    let logic = "file = \"../powermaps/mol_logic.csv\" }";
    assert!(text.contains(logic));
    let leaky = text.replacen(
        logic,
        &format!("{logic}\nleakage = {{ p_ref = 0.8, t_ref = 358.15, beta = 0.017 }}"),
        1,
    );
    for (name, text) in [("mol_f2f_kt", &text), ("mol_f2f_kt + leakage", &leaky)] {
        let s = Stack::from_toml(text, &path)
            .unwrap()
            .with_grid(48, 40)
            .unwrap();
        let sched = PowerSchedule::constant(base_power(&s));
        for iterations in [0, 20] {
            // 1e-12 stagnates on this stack (CPU and CUDA alike).
            let opts = options(&s, 1e-2, 5, iterations, 1e-11);
            let cpu = run(&CpuBackend::new(), &s, &sched, &opts);
            let dev = run(gpu(), &s, &sched, &opts);
            println!("{name}, --nonlinear-iterations {iterations}");
            compare(&cpu, &dev, 1e-9);
            for (c, d) in cpu.records.iter().zip(&dev.records) {
                if let (Some(lc), Some(ld)) = (c.leakage_w, d.leakage_w) {
                    assert!((lc - ld).abs() <= 1e-9 * lc.abs(), "step {}", c.step);
                }
                assert_eq!(c.leakage_w.is_some(), d.leakage_w.is_some());
                let (sc, sd) = (c.energy.stored_j, d.energy.stored_j);
                assert!(
                    (sc - sd).abs() <= 1e-6 * sc.abs().max(1e-12),
                    "step {}",
                    c.step
                );
            }
        }
    }
}
