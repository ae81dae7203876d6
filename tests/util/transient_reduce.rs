//! The records reduced where the solve runs (`StepField::Needed`) against
//! the records folded from the downloaded field (`StepField::Every`), for
//! backward Euler and TR-BDF2, on `hbm_2p5d` (blocks and a probe in a layer
//! of three z cells, absent cells, a non-uniform grid). The same solve on
//! both sides (one backend) agrees to 1e-12 relative; CUDA against the CPU
//! to the solver's tolerance. Only the snapshots' and the last step's
//! fields reach the observer when reduced.

use super::repo_path;
use cuth::backend::cpu::CpuBackend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::layer_power;
use cuth::power::schedule::PowerSchedule;
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::transient::{
    run_transient, InitState, Scheme, StepField, StepView, Stepping, TransientOptions,
    TransientOutcome,
};

fn hbm() -> Stack {
    Stack::load(&repo_path("configs/hbm_2p5d.toml"))
        .unwrap()
        .with_grid(40, 36)
        .unwrap()
}

/// `steps` of 10 ms by `scheme`, the field every step or where needed;
/// also the steps whose field reached the observer.
fn run<B: ThermalBackend + 'static>(
    be: &B,
    s: &Stack,
    scheme: Scheme,
    step_field: StepField,
) -> (TransientOutcome, Vec<usize>) {
    let mut solver = SteadyOptions::from_stack(s, PrecondKind::Chebyshev);
    solver.rtol = 1e-10;
    solver.max_iter = 100_000;
    let opts = TransientOptions {
        solver,
        dt: 1e-2,
        steps: 7,
        init: InitState::Ambient,
        snapshot_every: Some(3),
        stepping: Stepping {
            scheme,
            time_tol_k: None,
        },
        step_field,
    };
    let grid = Grid::from_stack(s);
    let base = (0..s.layers.len())
        .map(|l| layer_power(s, &grid, l).unwrap())
        .collect();
    let mut seen = Vec::new();
    let mut observe = |v: &StepView| {
        if v.temperature_k.is_some() {
            seen.push(v.record.step);
        }
        Ok(())
    };
    let sched = PowerSchedule::constant(base);
    let out = run_transient(be, s, &grid, &sched, &opts, &mut observe).unwrap();
    (out, seen)
}

/// |a − b| ≤ `rel`·max(|a|, |b|, `floor`), NaN equal to NaN.
fn close(a: f64, b: f64, rel: f64, floor: f64, what: &str) {
    if a.is_nan() && b.is_nan() {
        return;
    }
    let scale = a.abs().max(b.abs()).max(floor);
    assert!((a - b).abs() <= rel * scale, "{what}: {a:e} vs {b:e}");
}

fn compare(got: &TransientOutcome, want: &TransientOutcome, rel: f64) {
    assert_eq!(got.records.len(), want.records.len());
    for (g, w) in got.records.iter().zip(&want.records) {
        let at = |what: &str| format!("step {} {what}", g.step);
        let pairs = [
            (&g.layer_max_k, &w.layer_max_k, "layer max"),
            (&g.layer_avg_k, &w.layer_avg_k, "layer mean"),
            (&g.probe_k, &w.probe_k, "probe"),
        ];
        for (a, b, what) in pairs {
            assert_eq!(a.len(), b.len());
            a.iter()
                .zip(b)
                .for_each(|(a, b)| close(*a, *b, rel, 0.0, &at(what)));
        }
        assert_eq!(g.blocks.len(), w.blocks.len());
        for (a, b) in g.blocks.iter().zip(&w.blocks) {
            close(a.min_k, b.min_k, rel, 0.0, &at("block min"));
            close(a.avg_k, b.avg_k, rel, 0.0, &at("block mean"));
            close(a.max_k, b.max_k, rel, 0.0, &at("block max"));
        }
        let (e, f) = (&g.energy, &w.energy);
        // The imbalance is a residual: against the step's energy.
        let scale = e.power_w.abs() * 1e-2;
        close(e.power_w, f.power_w, rel, 0.0, &at("power"));
        close(e.heat_out_w, f.heat_out_w, rel, 0.0, &at("heat out"));
        close(e.stored_j, f.stored_j, rel, 0.0, &at("stored"));
        close(e.imbalance_j, f.imbalance_j, rel, scale, &at("imbalance"));
    }
}

/// The reduced records of `be` against the host-folded ones of
/// `reference`, for both schemes, to `rel`.
pub fn reduced_records_equal_the_host_fold<B, R>(be: &B, reference: &R, rel: f64)
where
    B: ThermalBackend + 'static,
    R: ThermalBackend + 'static,
{
    let s = hbm();
    assert!(!s.probes.is_empty());
    for scheme in [Scheme::BackwardEuler, Scheme::TrBdf2] {
        let (want, every) = run(reference, &s, scheme, StepField::Every);
        let (got, needed) = run(be, &s, scheme, StepField::Needed);
        assert_eq!(every, (1..=7).collect::<Vec<_>>());
        assert_eq!(needed, [3, 6, 7], "snapshots and the last step");
        assert!(got.block_names.len() > 1);
        compare(&got, &want, rel);
        let worst = (got.temperature_k.iter().zip(&want.temperature_k))
            .map(|(a, b)| (a - b).abs() / a.abs())
            .fold(0.0, f64::max);
        assert!(worst <= rel, "{scheme:?}: final field {worst:e}");
    }
}

/// The CPU's reduction against its own host fold.
pub fn on_the_cpu() {
    let cpu = CpuBackend::new();
    reduced_records_equal_the_host_fold(&cpu, &cpu, 1e-12);
}
