//! The pipeline around the solver on a GPU: vectors come down in
//! pieces through the backend's pinned staging buffers unchanged; the
//! statistics folded from the solution piece by piece as it comes off the
//! device equal plain loops over the whole field, and a solve that keeps
//! only layer maps reports the same statistics and maps as one that keeps
//! the whole field. `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu -- --ignored --nocapture pipeline::

use crate::util::{gpu, Rng};
use cuth::backend::Backend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::output::blocks::layer_block_stats;
use cuth::stack::Stack;
use cuth::thermal::block_stats_device::CHUNK;
use cuth::thermal::steady::{solve_steady_for, KeepField, SteadyOptions};
use std::path::Path;

#[test]
#[ignore]
fn pieces_come_down_unchanged() {
    let be = gpu();
    let mut rng = Rng::new(15);
    // Below the direct-copy threshold, one staging buffer's worth and a
    // ragged last piece (the staging buffers grow between the two).
    for n in [1000, 5 << 20, (33 << 20) + 7] {
        let host = rng.vec(n, -1.0, 1.0);
        let v = be.upload(&host).unwrap();
        let mut got = vec![f64::NAN; n];
        let mut next = 0;
        let mut pieces = 0;
        be.download_pieces(&v, &mut |first, piece| {
            assert_eq!(first, next, "pieces in order, no gaps");
            got[first..first + piece.len()].copy_from_slice(piece);
            next += piece.len();
            pieces += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(next, n);
        assert!(got == host, "n = {n}: a value changed on the way");
        assert!(be.download(&v).unwrap() == host, "n = {n}: download");
        println!("  {n} values in {pieces} pieces");
    }
}

#[test]
#[ignore]
fn folded_statistics_equal_the_whole_field() {
    // 1024 × 1024 × 18 = 18.9 M cells: two staged pieces.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/mol_f2f.toml");
    let stack = Stack::load(&path).unwrap().with_grid(1024, 1024).unwrap();
    let grid = Grid::from_stack(&stack);
    let opts = SteadyOptions::from_stack(&stack, PrecondKind::Multigrid);
    let (whole, _) = solve_steady_for(
        gpu(),
        &stack,
        &grid,
        &opts,
        &KeepField::Whole,
        Default::default(),
    )
    .unwrap();
    let keep = KeepField::Maps(vec![1]);
    let (lean, maps) =
        solve_steady_for(gpu(), &stack, &grid, &opts, &keep, Default::default()).unwrap();
    let t = &whole.temperature_k;
    assert_eq!(t.len(), grid.len());
    assert!(lean.temperature_k.is_empty());
    let plane = grid.plane();
    for (l, s) in whole.summary.layers.iter().enumerate() {
        // Plain loops over the downloaded field.
        let r = grid.layer_z[l].start * plane..grid.layer_z[l].end * plane;
        let min = t[r.clone()].iter().copied().fold(f64::INFINITY, f64::min);
        let imax = r
            .clone()
            .fold(r.start, |b, i| if t[i] > t[b] { i } else { b });
        let avg = t[r.clone()].iter().sum::<f64>() / r.len() as f64;
        assert_eq!((s.t_min_k, s.t_max_k), (min, t[imax]), "layer {l}");
        assert_eq!(grid.index(s.hottest.x, s.hottest.y, s.hottest.z), imax);
        assert!((s.t_avg_k - avg).abs() <= 1e-12 * avg, "layer {l}");
        // The lean solve: the same numbers (the same solve, to rounding).
        let o = &lean.summary.layers[l];
        for (a, b) in [
            (o.t_min_k, s.t_min_k),
            (o.t_avg_k, s.t_avg_k),
            (o.t_max_k, s.t_max_k),
        ] {
            assert!((a - b).abs() <= 1e-9, "layer {l}: {a} vs {b}");
        }
    }
    assert!(whole.summary.energy.relative_error < 1e-9);
    assert!(lean.summary.energy.relative_error < 1e-9);
    // Layer 1's map kept, the others not: the layers with blocks have
    // their blocks' statistics reduced on the device instead.
    assert_eq!(maps.maps.len(), stack.layers.len());
    let want = grid.layer_map(t, 1);
    let got = maps.maps[1].as_deref().unwrap();
    let worst = (got.iter().zip(&want)).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(worst <= 1e-9, "layer 1 map differs by {worst} K");
    for (l, m) in maps.maps.iter().enumerate() {
        assert_eq!(m.is_some(), l == 1, "layer {l}");
    }
    println!(
        "  T max {:.9} K, energy balance {:.1e}",
        whole.summary.hottest.t_k, whole.summary.energy.relative_error
    );
}

/// The statistics reduced on the device (`QuadDiagOps::field_partials`)
/// against the host fold of the same field: per chunk min, max and hottest
/// cell exact and sums within 1e-12 relative; probes and layer maps bit for
/// bit; the folded layer statistics and energy terms likewise. On hbm_2p5d
/// (absent cells, a non-uniform grid, blocks, probes, several powered
/// layers) and on mol_f2f at 1100 × 700 (planes of 24 chunks, the last
/// ragged).
#[test]
#[ignore]
fn device_statistics_equal_the_host_fold() {
    use cuth::thermal::device::ThermalOps;
    use cuth::thermal::field_stats::device::host_partials;
    use cuth::thermal::field_stats::{FieldStats, Piece};
    use cuth::thermal::steady::{rasterize_layers, Coupling};
    let be = gpu();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let hbm = Stack::load(&root.join("configs/hbm_2p5d.toml")).unwrap();
    let mol = (Stack::load(&root.join("configs/mol_f2f.toml")).unwrap())
        .with_grid(1100, 700)
        .unwrap();
    let mut rng = Rng::new(1515);
    for stack in [hbm, mol] {
        let grid = Grid::from_stack(&stack);
        let power = rasterize_layers(&stack, &grid).unwrap();
        let plane = grid.plane();
        let mut x = rng.vec(grid.len(), -2.0, 60.0);
        // Equal maxima in one layer, in different chunks: the first wins.
        x[5] = 99.0;
        x[plane - 1] = 99.0;
        let g_top = rng.vec(plane, 0.0, 1e-3);
        let g_bottom = rng.vec(plane, 0.0, 1e-5);
        let coupling = Coupling {
            power_in_w: 2.0,
            g_top: &g_top,
            g_bottom: &g_bottom,
        };
        let maps: Vec<bool> = (0..stack.layers.len()).map(|l| l % 3 == 1).collect();
        let c = 0.5;
        let mut host = FieldStats::new(&stack, &grid, &power, coupling, c, &maps, false);
        host.fold(0, Piece::Shifted(&x)).unwrap();
        let host = host.finish().unwrap();
        let mut dev = FieldStats::new(&stack, &grid, &power, coupling, c, &maps, false);
        let req = dev.request();
        let want = host_partials(&req, &x, &g_top, &g_bottom);
        let (xd, gt, gb) = (
            be.upload(&x).unwrap(),
            be.upload(&g_top).unwrap(),
            be.upload(&g_bottom).unwrap(),
        );
        let got = be.field_partials(&xd, &gt, &gb, &req).unwrap().unwrap();
        drop(req);
        let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-300);
        assert_eq!(got.chunks.len(), want.chunks.len());
        for (k, (g, w)) in got.chunks.iter().zip(&want.chunks).enumerate() {
            assert_eq!(
                (g[0], g[3], g[6]),
                (w[0], w[3], w[6]),
                "chunk {k}: min, max, hottest"
            );
            for i in [1, 2, 4, 5] {
                assert!(
                    rel(g[i], w[i]) <= 1e-12 || g[i] == w[i],
                    "chunk {k} [{i}]: {} vs {}",
                    g[i],
                    w[i]
                );
            }
        }
        assert!(got.probe_x == want.probe_x, "probes");
        assert!(got.maps == want.maps, "layer maps");
        dev.fold_partials(got).unwrap();
        let dev = dev.finish().unwrap();
        for (l, (d, h)) in dev.layers.iter().zip(&host.layers).enumerate() {
            assert_eq!(
                (d.t_min_k, d.t_max_k, d.hottest),
                (h.t_min_k, h.t_max_k, h.hottest),
                "layer {l}"
            );
            assert!(rel(d.t_avg_k, h.t_avg_k) <= 1e-12, "layer {l} mean");
        }
        assert_eq!(dev.layers[0].hottest, 5, "the first of equal maxima");
        let (de, he) = (&dev.energy, &host.energy);
        assert!(rel(de.heat_out_top_w, he.heat_out_top_w) <= 1e-12);
        assert!(rel(de.heat_out_bottom_w, he.heat_out_bottom_w) <= 1e-12);
        assert!(dev.probes == host.probes && dev.maps == host.maps);
        println!(
            "  {}: {} chunks, {} probes' cells, {} maps: equal",
            stack.source.display(),
            want.chunks.len(),
            want.probe_x.len(),
            want.maps.len()
        );
    }
}

/// Per-block statistics reduced on the device from the layer maps it
/// builds (`thermal::block_stats_device`) against `layer_block_stats` of
/// the host fold's maps (NaN at absent cells, as the outputs mark them):
/// min, max and the centre cell exact; the mean within 1e-13 relative, or
/// for blocks of n > 10⁴ cells within 4·n·u (the error bound of the
/// reference's own loop over n terms), and within 1e-13 of a compensated
/// sum (Neumaier) over `coverage`. On hotspot_ev6_3d (129 units, the
/// non-uniform grid snapped to their edges), on it at 97 × 61 and on
/// hbm_2p5d at 241 × 179 (uniform grids: blocks clip cells' corners and
/// edges; planes of two chunks) with absent cells marked and not, and on
/// hbm_2p5d as shipped (blocks over absent cells), with extra blocks:
/// random rectangles, one over the whole footprint (several chunks), one
/// of no area. Half the layers with blocks also have their map
/// downloaded, the others not.
#[test]
#[ignore]
fn device_block_statistics_equal_layer_block_stats() {
    use cuth::power::{Block, Rect};
    use cuth::thermal::block_stats_device::{block_stats, layer_blocks};
    use cuth::thermal::device::ThermalOps;
    use cuth::thermal::field_stats::{FieldStats, Piece};
    use cuth::thermal::steady::{rasterize_layers, Coupling};
    let be = gpu();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let load = |name: &str| Stack::load(&root.join("configs").join(name)).unwrap();
    let cases = [
        (load("hotspot_ev6_3d.toml"), true),
        (load("hotspot_ev6_3d.toml").with_grid(97, 61).unwrap(), true),
        (load("hbm_2p5d.toml").with_grid(241, 179).unwrap(), true),
        (load("hbm_2p5d.toml").with_grid(241, 179).unwrap(), false),
        (load("hbm_2p5d.toml"), true),
    ];
    let mut rng = Rng::new(1516);
    for (case, (stack, mark)) in cases.into_iter().enumerate() {
        let grid = Grid::from_stack(&stack);
        let mut power = rasterize_layers(&stack, &grid).unwrap();
        if case == 0 {
            let units: usize = power.iter().map(|p| p.blocks.len()).sum();
            assert_eq!(units, 129, "hotspot_ev6_3d's units");
            assert!(!grid.is_uniform());
        }
        let (w, h) = (grid.width(), grid.length());
        for p in power.iter_mut().filter(|p| !p.blocks.is_empty()) {
            for k in 0..20 {
                let (x0, y0) = (rng.uniform(-0.1 * w, w), rng.uniform(-0.1 * h, h));
                let (dx, dy) = (rng.uniform(0.0, 0.4 * w), rng.uniform(0.0, 0.4 * h));
                let rect = Rect {
                    x0,
                    y0,
                    x1: x0 + dx,
                    y1: y0 + dy,
                };
                p.blocks.push(Block::new(format!("r{k}"), rect, 0.0));
            }
            // A block of several rectangles: one block over their union.
            let parts = p.blocks[p.blocks.len() - 3..].iter();
            let rects = parts.map(|b| b.rects[0]).collect();
            p.blocks.push(Block {
                name: "split".into(),
                rects,
                power_w: 1.0,
            });
            for (name, x0, y0, x1, y1) in [("all", 0.0, 0.0, w, h), ("line", 0.3, 0.1, 0.3, 0.9)] {
                let (x0, x1) = if name == "all" {
                    (x0, x1)
                } else {
                    (x0 * w, x1 * w)
                };
                let (y0, y1) = if name == "all" {
                    (y0, y1)
                } else {
                    (y0 * h, y1 * h)
                };
                p.blocks
                    .push(Block::new(name, Rect { x0, y0, x1, y1 }, 1.0));
            }
        }
        let x = rng.vec(grid.len(), -2.0, 60.0);
        let g = vec![0.0; grid.plane()];
        let coupling = Coupling {
            power_in_w: 1.0,
            g_top: &g,
            g_bottom: &g,
        };
        let c = 0.5;
        // The host fold's maps of every layer: the reference.
        let every = vec![true; stack.layers.len()];
        let mut host = FieldStats::new(&stack, &grid, &power, coupling, c, &every, false);
        host.fold(0, Piece::Shifted(&x)).unwrap();
        let host = host.finish().unwrap();
        let lbs = layer_blocks(&grid, &power);
        let asked: Vec<bool> = (0..stack.layers.len())
            .map(|l| (lbs.iter().position(|lb| lb.layer == l)).is_some_and(|i| i % 2 == 0))
            .collect();
        let none = vec![Vec::new(); stack.layers.len()];
        let dev = FieldStats::new(&stack, &grid, &power, coupling, c, &asked, false);
        let mut req = dev.request();
        req.blocks = lbs.into();
        if !mark {
            req.absent = &none;
        }
        let (xd, gd) = (be.upload(&x).unwrap(), be.upload(&g).unwrap());
        let got = be.field_partials(&xd, &gd, &gd, &req).unwrap().unwrap();
        assert_eq!(got.maps.len(), asked.iter().filter(|&&a| a).count());
        let dev_stats = block_stats(&stack, &power, &req.blocks, &got.blocks).unwrap();
        let (mut n, mut several, mut over_absent) = (0, 0, 0);
        for lb in req.blocks.iter() {
            let l = lb.layer;
            let mut map = host.maps[l].clone().unwrap();
            let layer = &stack.layers[l];
            if mark {
                let absent = cuth::assemble::absent_plane(&grid, &power[l], layer.material);
                for (m, _) in map.iter_mut().zip(&absent).filter(|(_, a)| **a) {
                    *m = f64::NAN;
                }
            }
            let want = layer_block_stats(&layer.name, &map, &power[l].blocks, &grid);
            let got = dev_stats[l].as_ref().unwrap();
            assert_eq!(got.len(), want.len());
            for (b, (g, w)) in got.iter().zip(&want).enumerate() {
                assert_eq!((&g.layer, &g.block), (&w.layer, &w.block));
                assert_eq!(g.power_w, w.power_w);
                let (Some(g), Some(w)) = (g.temp, w.temp) else {
                    assert_eq!(g.temp, w.temp, "case {case} layer {l} block {b}");
                    continue;
                };
                let same = |a: f64, b: f64| a == b || (a.is_nan() && b.is_nan());
                let at = format!("case {case} layer {l} block {b}: {g:?} vs {w:?}");
                assert!(same(g.min_k, w.min_k) && same(g.max_k, w.max_k), "{at}");
                assert!(same(g.center_k, w.center_k), "{at}");
                n += 1;
                if w.avg_k.is_nan() {
                    assert!(g.avg_k.is_nan(), "{at}");
                    over_absent += 1;
                    continue;
                }
                let cells = power[l].blocks[b].coverage(&grid);
                let bound = match cells.len() {
                    k if k > 10_000 => 4.0 * k as f64 * f64::EPSILON / 2.0,
                    _ => 1e-13,
                };
                let rel = |a: f64, b: f64| (a - b).abs() / b.abs();
                assert!(rel(g.avg_k, w.avg_k) <= bound, "{at}: > {bound:e}");
                // Neumaier: Σ a·t and Σ a compensated.
                let (mut s, mut cs, mut ar, mut ca) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
                let add = |s: &mut f64, c: &mut f64, v: f64| {
                    let t = *s + v;
                    *c += if s.abs() >= v.abs() {
                        (*s - t) + v
                    } else {
                        (v - t) + *s
                    };
                    *s = t;
                };
                for (i, a) in &cells {
                    add(&mut s, &mut cs, a * map[*i]);
                    add(&mut ar, &mut ca, *a);
                }
                let exact = (s + cs) / (ar + ca);
                assert!(rel(g.avg_k, exact) <= 1e-13, "{at}: compensated {exact}");
                several += usize::from(cells.len() > CHUNK);
            }
        }
        if case >= 2 {
            let absent_blocks = usize::from(mark);
            assert!(
                over_absent >= absent_blocks,
                "hbm_2p5d: blocks over absent cells"
            );
        }
        if case == 3 {
            assert!(
                several > 0,
                "hbm_2p5d: blocks of several chunks with a mean"
            );
        }
        println!(
            "  {} ({}x{}, absent marked: {mark}): {n} blocks equal, {several} of \
             several chunks, {over_absent} over absent cells",
            stack.source.display(),
            grid.nx,
            grid.ny
        );
    }
}

/// A solve that keeps no map (`--no-maps`) on hotspot_ev6_3d: no layer map
/// comes down, every layer with blocks has their statistics from the
/// device, and they equal `layer_block_stats` of the whole field's maps
/// of the same solve (to 1e-9 K: two solves).
#[test]
#[ignore]
fn a_solve_without_maps_reduces_blocks_on_the_device() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/hotspot_ev6_3d.toml");
    let stack = Stack::load(&path).unwrap();
    let grid = Grid::from_stack(&stack);
    let opts = SteadyOptions::from_stack(&stack, PrecondKind::Multigrid);
    let (whole, _) = solve_steady_for(
        gpu(),
        &stack,
        &grid,
        &opts,
        &KeepField::Whole,
        Default::default(),
    )
    .unwrap();
    let keep = KeepField::Maps(Vec::new());
    let (lean, kept) =
        solve_steady_for(gpu(), &stack, &grid, &opts, &keep, Default::default()).unwrap();
    assert!(kept.maps.iter().all(Option::is_none), "no map came down");
    let mut n = 0;
    for (l, p) in lean.power.iter().enumerate() {
        let got = kept.blocks.get(l).and_then(Option::as_ref);
        assert_eq!(got.is_some(), !p.blocks.is_empty(), "layer {l}: blocks");
        let Some(got) = got else { continue };
        // As the outputs make it: NaN at absent cells.
        let mut map = grid.layer_map(&whole.temperature_k, l);
        let absent = cuth::assemble::absent_plane(&grid, p, stack.layers[l].material);
        for (m, _) in map.iter_mut().zip(&absent).filter(|(_, a)| **a) {
            *m = f64::NAN;
        }
        let want = layer_block_stats(&stack.layers[l].name, &map, &p.blocks, &grid);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.block, w.block);
            let block = &g.block;
            let (g, w) = (g.temp.unwrap(), w.temp.unwrap());
            for (a, b) in [
                (g.min_k, w.min_k),
                (g.avg_k, w.avg_k),
                (g.max_k, w.max_k),
                (g.center_k, w.center_k),
            ] {
                assert!((a - b).abs() <= 1e-9, "layer {l} {block}: {a} vs {b}");
            }
        }
        n += got.len();
    }
    assert_eq!(n, 129, "hotspot_ev6_3d's units");
    println!("  {n} blocks from the device equal the whole field's");
}
