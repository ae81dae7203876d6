//! A session's reads after a step (the blocks, the probes, the hottest
//! cell), which a GPU reduces where the field lives, against the same
//! reads computed here from the whole field the session hands down: min,
//! max, probes and the hottest cell exactly, block means to rounding.

use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::simulation::Simulation;
use cuth::stack::Stack;
use cuth::thermal::block_stats::layer_block_stats;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::probes;
use cuth::thermal::steady::{rasterize_layers, SteadyOptions};
use std::path::Path;

pub fn reads_after_a_step_equal_those_of_the_field<B: ThermalBackend + 'static>(be: &B) {
    let path = Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/3dice_two_dies.toml"
    ));
    let s = Stack::load(path).unwrap().with_grid(40, 36).unwrap();
    let mut opts = SteadyOptions::from_stack(&s, PrecondKind::Multigrid);
    opts.rtol = 1e-10;
    let mut sim = Simulation::open(be, s.clone(), opts).unwrap();
    let first = sim.info().blocks[0].clone();
    sim.set_block_powers(&[(first.name.as_str(), 3.0 * first.power_w)])
        .unwrap();
    sim.step(2e-3).unwrap();
    sim.step(2e-3).unwrap();
    let (blocks, probes_k, hottest) = (
        sim.blocks().unwrap(),
        sim.probes().unwrap(),
        sim.hottest().unwrap(),
    );
    // Twice from one reduction: the same answer.
    assert_eq!(
        format!("{:?}", sim.hottest().unwrap()),
        format!("{hottest:?}")
    );

    let t = sim.temperature_k().unwrap();
    let grid = Grid::from_stack(&s);
    let power = rasterize_layers(&s, &grid).unwrap();
    let mut want = Vec::new();
    for (l, layer) in s.layers.iter().enumerate() {
        let map = grid.layer_map(&t, l);
        want.extend(layer_block_stats(
            &layer.name,
            &map,
            &power[l].blocks,
            &grid,
        ));
    }
    assert_eq!(blocks.len(), want.len());
    assert!(!blocks.is_empty());
    for (got, w) in blocks.iter().zip(&want) {
        assert_eq!((&got.layer, &got.block), (&w.layer, &w.block));
        let wt = w.temp.expect("every block covers cells");
        assert_eq!(got.max_k, Some(wt.max_k), "{}", got.block);
        assert_eq!(got.min_k, Some(wt.min_k), "{}", got.block);
        let avg = got.avg_k.unwrap();
        assert!(
            (avg - wt.avg_k).abs() <= 1e-12 * wt.avg_k,
            "{}: {avg} vs {}",
            got.block,
            wt.avg_k
        );
    }
    assert!(blocks.iter().any(|b| b.max_k > b.min_k));

    let cells = probes::probe_cells(&s, &grid);
    let want_probes = probes::read(&grid, &cells, &t);
    assert!(!want_probes.is_empty());
    let got_probes: Vec<f64> = probes_k.iter().map(|p| p.t_k).collect();
    assert_eq!(got_probes, want_probes);

    let (i, t_max) = (t.iter().copied().enumerate()).fold((0, f64::NEG_INFINITY), |m, (i, v)| {
        if v > m.1 {
            (i, v)
        } else {
            m
        }
    });
    assert_eq!(hottest.t_k, t_max);
    let (x, y, _) = grid.coords(i);
    assert_eq!(
        (hottest.x_m, hottest.y_m),
        (grid.x_center(x), grid.y_center(y))
    );
    assert!(t_max > s.ambient_k + 0.1);
}
