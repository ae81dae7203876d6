//! The pipeline around the solver on a GPU (issue 15): vectors come down in
//! pieces through the backend's pinned staging buffers unchanged; the
//! statistics folded from the solution piece by piece as it comes off the
//! device equal plain loops over the whole field, and a solve that keeps
//! only layer maps reports the same statistics and maps as one that keeps
//! the whole field. `#[ignore]`d: needs a GPU.
//!
//! cargo test --release --test gpu_pipeline -- --ignored --nocapture

mod common;

use common::{gpu, Rng};
use cuth::backend::Backend;
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::stack::Stack;
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
    let (whole, _) =
        solve_steady_for(gpu(), &stack, &opts, &KeepField::Whole, Default::default()).unwrap();
    let keep = KeepField::Maps(vec![1]);
    let (lean, maps) = solve_steady_for(gpu(), &stack, &opts, &keep, Default::default()).unwrap();
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
    // Layer 1's map (and those of layers with blocks) kept, the others not.
    assert_eq!(maps.len(), stack.layers.len());
    let want = grid.layer_map(t, 1);
    let got = maps[1].as_deref().unwrap();
    let worst = (got.iter().zip(&want)).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(worst <= 1e-9, "layer 1 map differs by {worst} K");
    for (l, m) in maps.iter().enumerate() {
        let blocks = !lean.power[l].blocks.is_empty();
        assert_eq!(m.is_some(), l == 1 || blocks, "layer {l}");
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
    use cuth::backend::QuadDiagOps;
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
