//! Transient runs on CUDA against the CPU: a linear stack
//! with a power trace, assembled on the device (A, C, films, the power of
//! each trace row by a kernel, the stored heat by a device dot);
//! `mol_f2f_kt` with k(T) silicon (and with leakage), semi-implicit and
//! iterated per step (Anderson), and from `--init steady`; the trace stack
//! with only a heat-capacity law (C(T) assembled per cell without any k
//! law) and a leaking block. Every temperature-dependent step goes through
//! the one step over `NonlinearOps` on both backends. The CPU run is the
//! host-assembled reference; fields agree to 1e-9 K, the outer iterations
//! per step are the same, and the device run's energy balance closes.
//! Also the CPU's checks against independent references
//! (`util::transient`) run on CUDA. `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu -- --ignored --nocapture --test-threads=1 transient_device::

use crate::util::kt::{base_power, config, max_abs, transient as run, with_logic_leakage};
use crate::util::{gpu, stack, transient};
use cuth::backend::cpu::CpuBackend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::schedule::PowerSchedule;
use cuth::power::trace::parse_csv_trace;
use cuth::stack::Stack;
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::transient::{InitState, Scheme, Stepping, TransientOptions, TransientOutcome};
use std::path::Path;

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
        stepping: Default::default(),
        step_field: Default::default(),
    }
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

/// Three layers (a die with two blocks, a TIM, a spreader), a cooled
/// bottom; `si_c`: the silicon's heat capacity (a number or a law),
/// `leak_b`: block b's leakage (empty: none).
fn trace_stack(si_c: &str, leak_b: &str) -> Stack {
    let text = format!(
        "[chip]\nwidth=\"2 mm\"\nlength=\"1.6 mm\"\n[grid]\nnx=40\nny=32\n\
         [boundary]\nambient=300\nh_top=2e4\nh_bottom=500\n\
         [materials.si]\nk=130\nheat_capacity={si_c}\n\
         [materials.tim]\nk=4\nheat_capacity=2e6\n\
         [materials.cu]\nk=390\nheat_capacity=3.45e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=\"100 um\"\ncells=3\n\
         [layers.power]\ntype=\"blocks\"\n\
         [[layers.power.blocks]]\nname=\"a\"\nx=0\ny=0\nwidth=\"1 mm\"\nheight=\"1.6 mm\"\npower=0.5\n\
         [[layers.power.blocks]]\nname=\"b\"\nx=\"1.2 mm\"\ny=\"0.4 mm\"\nwidth=\"0.6 mm\"\nheight=\"0.8 mm\"\npower=0.25\n{leak_b}\n\
         [[layers]]\nname=\"tim\"\nmaterial=\"tim\"\nthickness=\"20 um\"\n\
         [[layers]]\nname=\"spreader\"\nmaterial=\"cu\"\nthickness=\"300 um\"\ncells=2\n"
    );
    stack(&text)
}

/// The trace that drives block b over 8 steps of 1 ms.
fn trace_schedule(s: &Stack) -> PowerSchedule {
    let grid = Grid::from_stack(s);
    let trace = parse_csv_trace(
        "time,b\n0,1.0\n0.002,0\n0.004,2.0\n0.006,0.5\n",
        Path::new("t.csv"),
    )
    .unwrap();
    PowerSchedule::with_trace(s, &grid, base_power(s), trace).unwrap()
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn linear_trace_device_assembly_matches_cpu() {
    let s = trace_stack("1.63e6", "");
    let sched = trace_schedule(&s);
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
    let path = config("mol_f2f_kt.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    // As given, and with a per-cell leakage on the logic raster.
    let leaky = with_logic_leakage(&text);
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

#[test]
#[ignore = "needs a CUDA GPU"]
fn heat_capacity_law_and_steady_start_match_cpu() {
    // C(T) without any k law (assembled per cell on the device), with a
    // leaking block, semi-implicit and iterated, under the trace.
    let s = trace_stack(
        "{ c300 = 1.63e6, exponent = 1.0 }",
        "leakage={ p_ref=0.1, t_ref=300.0, beta=0.02 }",
    );
    assert!(!s.k_varies() && s.is_nonlinear());
    let sched = trace_schedule(&s);
    for iterations in [0, 20] {
        let opts = options(&s, 1e-3, 8, iterations, 1e-12);
        let cpu = run(&CpuBackend::new(), &s, &sched, &opts);
        let dev = run(gpu(), &s, &sched, &opts);
        println!("c(T) + leaking block, --nonlinear-iterations {iterations}");
        compare(&cpu, &dev, 1e-9);
        for d in dev.records.iter().skip(1) {
            let scale = d.energy.power_w * opts.dt;
            assert!(
                d.energy.imbalance_j.abs() <= 1e-8 * scale,
                "step {}",
                d.step
            );
        }
    }
    // --init steady on the device: the nonlinear steady state, then steps.
    let path = config("mol_f2f_kt.toml");
    let text = with_logic_leakage(&std::fs::read_to_string(&path).unwrap());
    let s = Stack::from_toml(&text, &path)
        .unwrap()
        .with_grid(48, 40)
        .unwrap();
    let sched = PowerSchedule::constant(base_power(&s));
    let mut opts = options(&s, 1e-2, 3, 20, 1e-11);
    opts.init = InitState::Steady;
    let cpu = run(&CpuBackend::new(), &s, &sched, &opts);
    let dev = run(gpu(), &s, &sched, &opts);
    println!("mol_f2f_kt + leakage from --init steady");
    compare(&cpu, &dev, 1e-9);
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn uniform_layer_decays_as_discrete_backward_euler() {
    transient::uniform_layer_decays_as_discrete_backward_euler(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn layered_stack_matches_backward_euler_chain() {
    transient::layered_stack_matches_backward_euler_chain(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn long_run_reaches_the_steady_solution() {
    transient::long_run_reaches_the_steady_solution(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn steady_init_stays_put() {
    transient::steady_init_stays_put(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn every_step_balances_energy_to_solver_tolerance() {
    transient::every_step_balances_energy_to_solver_tolerance(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn trace_rows_apply_piecewise_constant() {
    transient::trace_rows_apply_piecewise_constant(gpu());
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn a_capped_step_reports_the_users_rtol() {
    transient::a_capped_step_reports_the_users_rtol(gpu());
}

/// Adaptive TR-BDF2 on CUDA against the CPU: the same steps (every end
/// time and the accepted and rejected counts) and fields to 1e-9 K, on the
/// linear trace stack (device assembly) and with a heat-capacity law and a
/// leaking block (the nonlinear step over `NonlinearOps`).
#[test]
#[ignore = "needs a CUDA GPU"]
fn adaptive_trbdf2_matches_cpu() {
    let law = "{ c300 = 1.63e6, exponent = 0.5 }";
    let leak = "leakage={ p_ref = 0.02, t_ref = 300.0, beta = 0.02 }";
    for (name, s) in [
        ("linear", trace_stack("1.63e6", "")),
        ("c(T) + leakage", trace_stack(law, leak)),
    ] {
        let sched = trace_schedule(&s);
        let mut opts = options(&s, 1e-3, 8, 0, 1e-12);
        opts.stepping = Stepping {
            scheme: Scheme::TrBdf2,
            time_tol_k: Some(1e-3),
        };
        let cpu = run(&CpuBackend::new(), &s, &sched, &opts);
        let dev = run(gpu(), &s, &sched, &opts);
        println!("{name}: CPU {:?}", cpu.summary.stepping);
        println!("{name}: CUDA {:?}", dev.summary.stepping);
        assert_eq!(cpu.step_ends_s, dev.step_ends_s, "{name}");
        let (c, d) = (&cpu.summary.stepping, &dev.summary.stepping);
        assert_eq!(
            (c.steps_taken, c.steps_rejected, c.step_setups),
            (d.steps_taken, d.steps_rejected, d.step_setups),
            "{name}"
        );
        assert!(
            c.steps_taken > 8,
            "{name}: the rows' starts force smaller steps"
        );
        compare(&cpu, &dev, 1e-9);
        assert!(
            dev.summary.energy.max_step_relative_imbalance < 1e-8,
            "{name}"
        );
    }
}

/// The records reduced on the GPU (`StepField::Needed`) against the CPU's
/// folded from its field: equal to the solver's tolerance (the solves
/// differ by rounding; on one backend they agree to 1e-12).
#[test]
#[ignore = "needs a CUDA GPU"]
fn reduced_records_equal_the_host_fold() {
    crate::util::transient_reduce::reduced_records_equal_the_host_fold(
        gpu(),
        &CpuBackend::new(),
        1e-8,
    );
}
