//! The stepping API's checks, one body per backend (`solver`'s tests run
//! them on the CPU, `gpu`'s on CUDA): against the one-shot drivers it must
//! agree with (`solve_steady`, `run_transient` under a trace of the same
//! powers), and its promise that a refused call changes nothing.

use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::power::schedule::PowerSchedule;
use cuth::power::trace::parse_csv_trace;
use cuth::simulation::{Simulation, SimulationError, State};
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::{rasterize_layers, solve_steady, SteadyOptions};
use cuth::thermal::transient::{run_transient, InitState, StepView, TransientOptions};
use std::path::Path;

fn two_dies(n: usize) -> Stack {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/3dice_two_dies.toml"
    ));
    Stack::load(path).unwrap().with_grid(n, n).unwrap()
}

fn options(s: &Stack) -> SteadyOptions {
    let mut o = SteadyOptions::from_stack(s, PrecondKind::Multigrid);
    o.rtol = 1e-10;
    o
}

/// `steps` steps of `dt` from ambient under the solver of [`options`], as a
/// session takes them.
fn transient_options(s: &Stack, dt: f64, steps: usize) -> TransientOptions {
    TransientOptions {
        solver: options(s),
        dt,
        steps,
        init: InitState::Ambient,
        snapshot_every: None,
        stepping: Default::default(),
        step_field: Default::default(),
    }
}

/// Largest |a − b|.
fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

/// `tol_k`: 0 where both sides assemble alike (the CPU), else the
/// agreement asked of a device that assembles `solve_steady`'s system
/// itself.
pub fn steady_solve_equals_the_one_shot_solve<B: ThermalBackend + 'static>(be: &B, tol_k: f64) {
    let s = two_dies(24);
    let want = solve_steady(be, &s, &options(&s)).unwrap().temperature_k;
    let mut sim = Simulation::open(be, s.clone(), options(&s)).unwrap();
    let report = sim.solve_steady().unwrap();
    let first = sim.temperature_k().unwrap();
    assert!(
        max_diff(&first, &want) <= tol_k,
        "{:e} K",
        max_diff(&first, &want)
    );
    assert!(report.iterations > 0 && report.dt_s.is_none() && report.time_s == 0.0);
    // A second solve reuses the hierarchy and gives the same field.
    sim.solve_steady().unwrap();
    assert_eq!(sim.temperature_k().unwrap(), first);
}

/// Block powers set before each step give the field of `run_transient`
/// under a trace of the same rows.
pub fn steps_equal_a_transient_run_under_the_same_powers<B: ThermalBackend + 'static>(
    be: &B,
    tol_k: f64,
) {
    let s = two_dies(16);
    let rows = [
        [0.5, 0.5, 3.0, 2.0, 1.0],
        [1.0, 0.2, 6.0, 0.5, 1.0],
        [0.0, 0.0, 1.0, 4.0, 2.5],
    ];
    let names = ["Bank0", "Bank1", "Core0", "Core1", "Cache"];
    let dt = 0.01;
    let steps_per_row = 3;
    let mut csv = format!("time,{}\n", names.join(","));
    for (r, row) in rows.iter().enumerate() {
        let t = (r * steps_per_row) as f64 * dt;
        let vals: Vec<String> = row.iter().map(|v| v.to_string()).collect();
        csv += &format!("{t},{}\n", vals.join(","));
    }
    let trace = parse_csv_trace(&csv, Path::new("rows.csv")).unwrap();
    let grid = Grid::from_stack(&s);
    let base = rasterize_layers(&s, &grid).unwrap();
    let sched = PowerSchedule::with_trace(&s, &grid, base, trace).unwrap();
    let steps = rows.len() * steps_per_row;
    let opts = transient_options(&s, dt, steps);
    let mut fields = Vec::new();
    let mut observe = |v: &StepView| {
        fields.push(v.temperature_k.expect("every field").to_vec());
        Ok(())
    };
    let run = run_transient(
        be,
        &s,
        &cuth::grid::Grid::from_stack(&s),
        &sched,
        &opts,
        &mut observe,
    )
    .unwrap();

    let mut sim = Simulation::open(be, s.clone(), options(&s)).unwrap();
    let mut worst: f64 = 0.0;
    for k in 0..steps {
        let row = &rows[k / steps_per_row];
        let powers: Vec<(&str, f64)> = names.iter().copied().zip(row.iter().copied()).collect();
        sim.set_block_powers(&powers).unwrap();
        let r = sim.step(dt).unwrap();
        assert!((r.time_s - (k + 1) as f64 * dt).abs() < 1e-15);
        let want: f64 = row.iter().sum();
        assert!(
            (r.power_w - want).abs() < 1e-12 * want,
            "{} vs {want}",
            r.power_w
        );
        let t = sim.temperature_k().unwrap();
        let d = t.iter().zip(&fields[k]).map(|(a, b)| (a - b).abs());
        worst = worst.max(d.fold(0.0, f64::max));
    }
    assert!(worst <= tol_k.max(1e-9), "largest difference {worst:e} K");
    let last = sim.temperature_k().unwrap();
    assert!(max_diff(&last, &run.temperature_k) <= tol_k);
    // The blocks read the same maxima as the run's last record.
    let blocks = sim.blocks().unwrap();
    let last = run.records.last().unwrap();
    for (name, rec) in run.block_names.iter().zip(&last.blocks) {
        let b = blocks
            .iter()
            .find(|b| format!("{}.{}", b.layer, b.block) == *name)
            .unwrap();
        assert!((b.max_k.unwrap() - rec.max_k).abs() <= tol_k, "{name}");
    }
}

/// The temperature field and the time.
fn snapshot<B: ThermalBackend + 'static>(sim: &mut Simulation<B>) -> (Vec<f64>, f64) {
    (sim.temperature_k().unwrap(), sim.time_s())
}

pub fn refused_calls_change_nothing<B: ThermalBackend + 'static>(be: &B) {
    let s = two_dies(12);
    let mut sim = Simulation::open(be, s.clone(), options(&s)).unwrap();
    sim.step(0.01).unwrap();
    let before = snapshot(&mut sim);
    let field = |e: SimulationError| match e {
        SimulationError::Invalid { field, .. } => field,
        e => panic!("not an input error: {e}"),
    };
    // One bad entry refuses the whole call, the good ones included.
    let e = sim
        .set_block_powers(&[("Core0", 9.0), ("nosuch", 1.0)])
        .unwrap_err();
    assert_eq!(field(e), "block `nosuch`");
    for w in [f64::NAN, f64::INFINITY, -1.0] {
        let e = sim.set_block_powers(&[("Core0", w)]).unwrap_err();
        assert_eq!(field(e), "block `Core0`");
    }
    for dt in [0.0, -1.0, f64::NAN] {
        assert_eq!(field(sim.step(dt).unwrap_err()), "dt");
    }
    let plane = sim.grid().plane();
    let layer = s
        .layers
        .iter()
        .find(|l| l.power.is_some())
        .unwrap()
        .name
        .clone();
    assert!(sim.set_layer_map(&layer, vec![1.0; plane - 1]).is_err());
    assert!(sim.set_layer_map("nosuch", vec![0.0; plane]).is_err());
    let mut bad = vec![0.0; plane];
    bad[3] = f64::NAN;
    assert!(sim.set_layer_map(&layer, bad).is_err());
    let hot = State {
        time_s: 0.0,
        temperature_k: vec![1e300; sim.grid().len()],
    };
    assert_eq!(field(sim.restore(&hot).unwrap_err()), "state");
    assert_eq!(snapshot(&mut sim), before);

    // So the next step is the one an untouched session takes.
    let mut twin = Simulation::open(be, s.clone(), options(&s)).unwrap();
    twin.step(0.01).unwrap();
    sim.step(0.01).unwrap();
    twin.step(0.01).unwrap();
    assert_eq!(snapshot(&mut sim), snapshot(&mut twin));
}

/// A layer map that powers cells without material (HotSpot's ev6 core die,
/// inside the sink's domain with `fill = "none"` around it) is refused:
/// its power would leave the energy balance. The same map inside the
/// outline is taken.
pub fn a_map_on_cells_without_material_is_refused<B: ThermalBackend + 'static>(be: &B) {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/hotspot_ev6_3d.toml"
    ));
    let s = Stack::load(path).unwrap().with_grid(16, 16).unwrap();
    let mut sim = Simulation::open(be, s.clone(), options(&s)).unwrap();
    let grid = Grid::from_stack(&s);
    let l = s.layers.iter().position(|l| l.name == "L4_cores").unwrap();
    let e = sim
        .set_layer_map("L4_cores", vec![1e-3; grid.plane()])
        .unwrap_err();
    assert!(
        matches!(&e, SimulationError::Invalid { field, message }
            if field == "layer `L4_cores` map" && message.contains("no material")),
        "{e}"
    );
    let base = rasterize_layers(&s, &grid).unwrap();
    let absent = cuth::assemble::absent_plane(&grid, &base[l], s.layers[l].material);
    assert!(absent.iter().any(|a| *a) && absent.iter().any(|a| !*a));
    let inside: Vec<f64> = absent.iter().map(|a| if *a { 0.0 } else { 1e-3 }).collect();
    sim.set_layer_map("L4_cores", inside).unwrap();
}

pub fn state_restores_and_long_steps_reach_the_steady_field<B: ThermalBackend + 'static>(be: &B) {
    let s = two_dies(12);
    let mut sim = Simulation::open(be, s.clone(), options(&s)).unwrap();
    sim.step(0.02).unwrap();
    let saved = sim.state().unwrap();
    sim.step(0.02).unwrap();
    let next = sim.temperature_k().unwrap();
    sim.restore(&saved).unwrap();
    assert_eq!(sim.time_s(), saved.time_s);
    sim.step(0.02).unwrap();
    let again = sim.temperature_k().unwrap();
    let d = next.iter().zip(&again).map(|(a, b)| (a - b).abs());
    assert!(d.fold(0.0, f64::max) < 1e-9);

    // Backward Euler with Δt far beyond the stack's time constants is the
    // steady solve.
    sim.step(1e6).unwrap();
    let stepped = sim.temperature_k().unwrap();
    sim.solve_steady().unwrap();
    let steady = sim.temperature_k().unwrap();
    let rise = steady.iter().map(|t| t - s.ambient_k).fold(0.0, f64::max);
    let d = stepped.iter().zip(&steady).map(|(a, b)| (a - b).abs());
    assert!(d.fold(0.0, f64::max) < 1e-6 * rise);
}

pub fn a_layer_map_scales_the_field_linearly<B: ThermalBackend + 'static>(be: &B) {
    let s = two_dies(12);
    let mut sim = Simulation::open(be, s.clone(), options(&s)).unwrap();
    // Every powered layer but one switched off, that one at its own map,
    // then at twice it: θ doubles.
    let grid = sim.grid().clone();
    let base = rasterize_layers(&s, &grid).unwrap();
    let powered: Vec<usize> = (0..s.layers.len())
        .filter(|&l| base[l].total_w > 0.0)
        .collect();
    assert!(powered.len() >= 2, "the test needs two powered layers");
    for &l in &powered[1..] {
        sim.set_layer_map(&s.layers[l].name, vec![0.0; grid.plane()])
            .unwrap();
    }
    let name = &s.layers[powered[0]].name;
    let map = base[powered[0]].map_w.clone();
    sim.set_layer_map(name, map.clone()).unwrap();
    sim.solve_steady().unwrap();
    let one = sim.temperature_k().unwrap();
    sim.set_layer_map(name, map.iter().map(|w| 2.0 * w).collect())
        .unwrap();
    let r = sim.solve_steady().unwrap();
    assert!((r.power_w - 2.0 * base[powered[0]].total_w).abs() < 1e-9);
    let two = sim.temperature_k().unwrap();
    let amb = s.ambient_k;
    let rise = one.iter().map(|t| t - amb).fold(0.0, f64::max);
    let d = one
        .iter()
        .zip(&two)
        .map(|(a, b)| ((b - amb) - 2.0 * (a - amb)).abs());
    assert!(d.fold(0.0, f64::max) < 1e-7 * rise);
    // The blocks of a layer set whole report no power.
    let b = sim.blocks().unwrap();
    assert!(b
        .iter()
        .filter(|b| &b.layer == name)
        .all(|b| b.power_w.is_none()));
    let h = sim.hottest().unwrap();
    assert!((h.t_k - two.iter().copied().fold(f64::MIN, f64::max)).abs() == 0.0);
}

fn liquid(ny: usize) -> Stack {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/liquid_f2f.toml"
    ));
    Stack::load(path).unwrap().with_grid(201, ny).unwrap()
}

/// A liquid-cooled stack: the session's steady field is `solve_steady`'s
/// (BiCGStab over the upwind multigrid, the inlets' enthalpy in), and its
/// steps are `run_transient`'s under the stack's own power; long steps
/// settle on the steady field.
pub fn liquid_session_equals_the_one_shot_drivers<B: ThermalBackend + 'static>(be: &B, tol_k: f64) {
    let s = liquid(24);
    let want = solve_steady(be, &s, &options(&s)).unwrap().temperature_k;
    let mut sim = Simulation::open(be, s.clone(), options(&s)).unwrap();
    let report = sim.solve_steady().unwrap();
    let steady = sim.temperature_k().unwrap();
    let d = max_diff(&steady, &want);
    assert!(d <= tol_k.max(1e-9), "steady: {d:e} K");
    assert!(report.iterations > 0);
    // The stack's own power, stepped from ambient as `cuth transient` does.
    let dt = 0.02;
    let steps = 6;
    let grid = Grid::from_stack(&s);
    let base = rasterize_layers(&s, &grid).unwrap();
    let opts = transient_options(&s, dt, steps);
    let mut fields = Vec::new();
    let mut observe = |v: &StepView| {
        fields.push(v.temperature_k.expect("every field").to_vec());
        Ok(())
    };
    let sched = PowerSchedule::constant(base);
    run_transient(be, &s, &grid, &sched, &opts, &mut observe).unwrap();
    let mut sim = Simulation::open(be, s.clone(), options(&s)).unwrap();
    for (k, field) in fields.iter().enumerate() {
        sim.step(dt).unwrap();
        let d = max_diff(&sim.temperature_k().unwrap(), field);
        assert!(d <= tol_k.max(1e-9), "step {}: {d:e} K", k + 1);
    }
    // Steps far longer than the stack's time constants reach the steady
    // field (backward Euler's fixed point is the steady state).
    for _ in 0..3 {
        sim.step(1e6).unwrap();
    }
    let d = max_diff(&sim.temperature_k().unwrap(), &steady);
    assert!(d < 1e-6, "after long steps: {d:e} K");
}
