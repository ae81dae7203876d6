//! Leakage on placed sources (package layouts with temperature-dependent
//! leakage): a layer's blocks at its
//! `origin` equal the same blocks written in domain coordinates; a layer's
//! own leakage over its outline is the exponential of the mean over the
//! outline's cells that have material (a region "none" inside it excluded)
//! and no leakage lands on a cell without material (energy balance); a
//! region's block leaks at its own mean temperature.

use cuth::backend::cpu::CpuBackend;
use cuth::linalg::PrecondKind;
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions, SteadyOutcome};
use std::path::Path;

const N: usize = 16; // 16 x 16 cells of 0.125 mm over a 2 mm domain

fn solve(text: &str) -> SteadyOutcome {
    let s = Stack::from_toml(text, Path::new("test.toml")).unwrap();
    let mut o = SteadyOptions::from_stack(&s, PrecondKind::Multigrid);
    o.rtol = 1e-13;
    o.max_iter = 200_000;
    o.nonlinear.tol_k = 1e-10;
    o.nonlinear.energy_tol = 1e-9;
    solve_steady(&CpuBackend::new(), &s, &o).unwrap()
}

const HEAD: &str = "[chip]\nwidth=2e-3\nlength=2e-3\n[grid]\nnx=16\nny=16\n\
    [boundary]\nambient=300\nh_top=2e4\n[materials.si]\nk=100\nheat_capacity=1e6\n\
    [materials.cu]\nk=400\nheat_capacity=3.5e6\n";
const SINK: &str = "[[layers]]\nname=\"plate\"\nmaterial=\"cu\"\nthickness=5e-4\n";

/// Mean of layer-0 temperatures over the cells [x0, x1) × [y0, y1) for which `keep`.
fn mean(
    t: &[f64],
    (x0, x1): (usize, usize),
    (y0, y1): (usize, usize),
    keep: impl Fn(usize, usize) -> bool,
) -> f64 {
    let cells: Vec<f64> = (y0..y1)
        .flat_map(|y| (x0..x1).map(move |x| (x, y)))
        .filter(|&(x, y)| keep(x, y))
        .map(|(x, y)| t[x + N * y])
        .collect();
    cells.iter().sum::<f64>() / cells.len() as f64
}

fn leak(p_ref: f64, t_ref: f64, beta: f64, t: f64) -> f64 {
    p_ref * (beta * (t - t_ref)).exp()
}

#[test]
fn blocks_at_an_origin_equal_the_blocks_moved_by_hand() {
    let blocks = |dx: f64, dy: f64| {
        format!(
            "blocks=[{{ name=\"core\", x={}, y={}, width=5e-4, height=2.5e-4, power=0.3, \
             leakage={{ p_ref=0.05, t_ref=310.0, beta=0.04 }} }}, \
             {{ name=\"io\", x={}, y={}, width=2.5e-4, height=5e-4, power=0.1 }}]\n",
            dx,
            dy,
            dx + 5e-4,
            dy + 2.5e-4
        )
    };
    let at_origin = format!(
        "{HEAD}[[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\norigin={{ x=7.5e-4, y=5e-4 }}\n\
         [layers.power]\ntype=\"blocks\"\n{}{SINK}",
        blocks(0.0, 0.0)
    );
    let by_hand = format!(
        "{HEAD}[[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n\
         [layers.power]\ntype=\"blocks\"\n{}{SINK}",
        blocks(7.5e-4, 5e-4)
    );
    let (a, b) = (solve(&at_origin), solve(&by_hand));
    let (la, lb) = (a.summary.nonlinear.unwrap(), b.summary.nonlinear.unwrap());
    assert_eq!(la.leakage_w.len(), 1);
    assert_eq!(la.leakage_w[0].0, "die/core");
    assert!(
        (la.leakage_w[0].1 - lb.leakage_w[0].1).abs() < 1e-12,
        "{la:?} {lb:?}"
    );
    let worst = a
        .temperature_k
        .iter()
        .zip(&b.temperature_k)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-9, "max |dT| {worst} K");
    // The block's cells: x 6..10, y 4..6 (0.125 mm cells).
    let t = mean(&a.temperature_k, (6, 10), (4, 6), |_, _| true);
    assert!((la.leakage_w[0].1 - leak(0.05, 310.0, 0.04, t)).abs() < 1e-9);
}

#[test]
fn layer_leakage_covers_its_outline_cells_with_material() {
    // A 1 x 1 mm die (cells 4..12) with fill none, a 0.25 mm hole of
    // material "none" in it (cells 4..6 x 4..6), uniform power and its own
    // leakage, on a plate over the whole domain.
    let text = format!(
        "{HEAD}[[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\nfill=\"none\"\n\
         outline={{ x=5e-4, y=5e-4, width=1e-3, length=1e-3 }}\n\
         power={{ type=\"blocks\", blocks=[{{ name=\"b\", x=2.5e-4, y=0.0, width=7.5e-4, height=1e-3, power=0.5 }}] }}\n\
         leakage={{ p_ref=0.1, t_ref=305.0, beta=0.05 }}\n\
         [[layers.regions]]\nname=\"hole\"\nx=5e-4\ny=5e-4\nwidth=2.5e-4\nlength=2.5e-4\nmaterial=\"none\"\n{SINK}"
    );
    let out = solve(&text);
    let nl = out.summary.nonlinear.unwrap();
    assert_eq!(nl.leakage_w.len(), 1);
    assert_eq!(nl.leakage_w[0].0, "die");
    let hole = |x: usize, y: usize| (4..6).contains(&x) && (4..6).contains(&y);
    let t = mean(&out.temperature_k, (4, 12), (4, 12), |x, y| !hole(x, y));
    let expect = leak(0.1, 305.0, 0.05, t);
    assert!(
        (nl.leakage_w[0].1 - expect).abs() < 1e-9 * expect,
        "{} vs {expect}",
        nl.leakage_w[0].1
    );
    // Everything put in comes out: none of the leakage fell on a cell without material.
    let e = out.summary.energy;
    assert!((e.power_in_w - 0.5 - expect).abs() < 1e-9, "{e:?}");
    assert!(e.relative_error < 1e-9, "{e:?}");
}

#[test]
fn a_regions_block_leaks_at_its_own_mean_temperature() {
    // A region (cells 8..16 x 0..8) with its own blocks, placed at the
    // region's corner; the hot block is cells 10..14 x 2..4.
    let text = format!(
        "{HEAD}[[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n\
         [[layers.regions]]\nname=\"chiplet\"\nx=1e-3\ny=0.0\nwidth=1e-3\nlength=1e-3\nmaterial=\"si\"\n\
         power={{ type=\"blocks\", blocks=[{{ name=\"hot\", x=2.5e-4, y=2.5e-4, width=5e-4, height=2.5e-4, power=0.4, \
         leakage={{ p_ref=0.08, t_ref=300.0, beta=0.03 }} }}] }}\n{SINK}"
    );
    let out = solve(&text);
    let nl = out.summary.nonlinear.unwrap();
    assert_eq!(nl.leakage_w.len(), 1);
    assert_eq!(nl.leakage_w[0].0, "die/chiplet/hot");
    let t = mean(&out.temperature_k, (10, 14), (2, 4), |_, _| true);
    let expect = leak(0.08, 300.0, 0.03, t);
    assert!((nl.leakage_w[0].1 - expect).abs() < 1e-9 * expect);
    assert!(expect > 0.08, "the block runs above t_ref: {t} K");
    assert!(out.summary.energy.relative_error < 1e-9);
}

#[test]
fn a_regions_leakage_is_checked() {
    let text = format!(
        "{HEAD}[[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n\
         [[layers.regions]]\nname=\"chiplet\"\nx=1e-3\ny=0.0\nwidth=1e-3\nlength=1e-3\nmaterial=\"si\"\n\
         power={{ type=\"blocks\", blocks=[{{ name=\"hot\", x=0.0, y=0.0, width=5e-4, height=2.5e-4, power=0.4, \
         leakage={{ p_ref=0.08, t_ref=300.0, beta=3.0 }} }}] }}\n{SINK}"
    );
    let err = Stack::from_toml(&text, Path::new("test.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("regions[0].power.blocks[0].leakage.beta"),
        "{err}"
    );
}
