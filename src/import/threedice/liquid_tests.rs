//! The liquid-cooled cases of 3D-ICE's own test suite and its example
//! (copied unedited into tests/data/3dice/liquid): each imports, loads
//! with the cavity it declares, in SI units, and solves on the CPU at its
//! own grid with power = coolant + sinks to 1e-10.

use super::import;
use crate::backend::cpu::CpuBackend;
use crate::output::threedice::tcoolant_files;
use crate::stack::cavity::{htc, PinDistribution};
use crate::stack::{CavityModel, Stack};
use crate::thermal::liquid::{solve_liquid, LiquidSolution};
use std::path::Path;

fn import_and_solve(rel: &str) -> (Stack, LiquidSolution, String) {
    let stk = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/3dice/liquid")
        .join(rel);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("imported.toml");
    let imported = import(&stk, &out).unwrap();
    let stack = Stack::from_toml(&imported.toml, &out).unwrap();
    let s = solve_liquid(&CpuBackend::new(), &stack, 1e-12).unwrap();
    assert!(s.balance_error() < 1e-10, "{rel}: {}", s.balance_error());
    (stack, s, imported.toml)
}

/// The three cases share a stack: die1, the cavity, die2, no heat sink,
/// 48 ml/min (or 1.1066 m/s) of water at 300 K; all the power leaves in
/// the coolant.
fn cavity_between_dies(stack: &Stack, s: &LiquidSolution) -> crate::stack::Cavity {
    let names: Vec<&str> = stack.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(names[2], "channel1", "{names:?}");
    assert_eq!(stack.layers[2].thickness_m, 1e-4);
    assert_eq!((stack.ambient_k, stack.h_top), (300.0, 0.0));
    assert!(s.sinks_w.abs() < 1e-12 * s.power_w);
    let c = stack.layers[2].cavity.clone().unwrap();
    assert_eq!((c.inlet_k, c.coolant_heat_capacity), (300.0, 4172638.0));
    c
}

#[test]
fn threedice_microchannel_4rm_cases_import_and_balance() {
    for rel in [
        "mc4rm/steady/2dies_four_elements.stk",
        "mc4rm/steady/2dies_background.stk",
        "mc4rm/transient/2dies_background.stk",
        "mc4rm/transient/2dies_four_elements.stk",
    ] {
        let (stack, s, toml) = import_and_solve(rel);
        let c = cavity_between_dies(&stack, &s);
        assert!(matches!(
            c.model,
            CavityModel::FourResistor { channels: 100, .. }
        ));
        assert_eq!((stack.nx, stack.ny), (201, 50));
        assert_eq!((c.h_side, c.h_top, c.h_bottom), (27132.0, 47132.0, 57132.0));
        assert!((c.flow_m3_s - 48e-6 / 60.0).abs() < 1e-20);
        assert!(toml.contains("flow = \"48.0 ml/min\""), "{rel}");
        assert!(toml.contains("(side 2.7132e-08, top 4.7132e-08, bottom 5.7132e-08 W/(um^2 K))"));
    }
}

#[test]
fn threedice_microchannel_2rm_cases_import_and_balance() {
    for rel in [
        "mc2rm/steady/2dies_four_elements.stk",
        "mc2rm/steady/2dies_background.stk",
        "mc2rm/transient/2dies_background.stk",
        "mc2rm/transient/2dies_four_elements.stk",
    ] {
        let (stack, s, _) = import_and_solve(rel);
        let c = cavity_between_dies(&stack, &s);
        assert_eq!(
            c.model,
            CavityModel::TwoResistor {
                channel_m: 5e-5,
                wall_m: 5e-5
            }
        );
        assert_eq!((stack.nx, stack.ny), (50, 50));
        assert_eq!((c.h_top, c.h_bottom), (47132.0, 57132.0));
        // The outlets carry it all: mean rise P/(ṁ c).
        let w = 48e-6 / 60.0 * 4172638.0;
        let mean: f64 = s.coolant.outlet_theta(&s.theta).iter().sum::<f64>() / 50.0;
        assert!((mean - s.power_w / w).abs() < 1e-8 * mean, "{rel}");
    }
}

#[test]
fn threedice_pin_fin_cases_import_and_balance() {
    for rel in [
        "pf2rm/steady/2dies_four_elements.stk",
        "pf2rm/steady/2dies_background.stk",
        "pf2rm/transient/2dies_background.stk",
        "pf2rm/transient/2dies_four_elements.stk",
    ] {
        let (stack, s, _) = import_and_solve(rel);
        let c = cavity_between_dies(&stack, &s);
        assert_eq!(
            c.model,
            CavityModel::PinFin {
                diameter_m: 5e-5,
                pitch_m: 1e-4,
                distribution: PinDistribution::Inline
            }
        );
        let h = htc::pin_fin_h(1.1066, false);
        assert_eq!((c.h_top, c.h_bottom), (h, h));
        assert!((c.flow_m3_s - 1.1066 * 0.01 * 1e-4).abs() < 1e-18);
    }
}

#[test]
fn threedice_example_with_two_4rm_cavities_and_a_sink() {
    let (stack, s, toml) = import_and_solve("bin/example_steady.stk");
    let cavities = stack.layers.iter().filter(|l| l.cavity.is_some()).count();
    assert_eq!(cavities, 2);
    assert_eq!(stack.nx, 101);
    let (sinks, fluid) = (s.sinks_w, s.coolant_w);
    assert!(
        sinks > 0.2 * s.power_w && fluid > 0.2 * s.power_w,
        "{sinks} {fluid}"
    );
    assert!(toml.contains("[output.threedice]"));
    // Tcoolant (TOP_CHANNEL, "output5.txt", maximum, final): the hottest
    // outlet of the top cavity, in 3D-ICE's layout.
    assert!(toml.contains("kind = \"Tcoolant\""), "{toml}");
    let top = stack
        .layers
        .iter()
        .position(|l| l.name == "TOP_CHANNEL")
        .unwrap();
    let hottest = s
        .coolant
        .lines
        .iter()
        .filter(|l| l.layer == top)
        .map(|l| stack.ambient_k + s.theta[*l.cells.last().unwrap()])
        .fold(f64::NEG_INFINITY, f64::max);
    let outlets = s.coolant.outlets(stack.ambient_k, &s.theta);
    let files = tcoolant_files(&stack, &[(0.0, outlets)]);
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].name, "output5.txt");
    let text = String::from_utf8(files[0].bytes.clone()).unwrap();
    let want = format!(
        "% Maximum temperatures for the outlet of the channel TOP_CHANNEL\n\
         % Time(s) \t Temperature(K)\n0.000 \t {hottest:7.3}\n"
    );
    assert_eq!(text, want);
    assert!(hottest > 300.5, "{hottest}");
}
