//! The fold against plain sequential loops over the whole field, and its
//! independence from how the field is cut into pieces.

use super::*;
use std::path::Path;

const STACK: &str = r#"
    [chip]
    width = "3 mm"
    length = "2.5 mm"
    [grid]
    nx = 4
    ny = 4
    [boundary]
    ambient = 300.0
    h_top = 1e4
    h_bottom = 50.0
    [materials.si]
    k = 100.0
    heat_capacity = 1.6e6
    [[layers]]
    name = "a"
    material = "si"
    thickness = "100 um"
    cells = 2
    [[layers]]
    name = "b"
    material = "si"
    thickness = "50 um"
    [[probes]]
    name = "p"
    x = "1.1 mm"
    y = "0.7 mm"
    layer = "a"
"#;

/// A 300 × 250 × 3 grid (a plane of 75 000 cells: chunks end inside it) and
/// a rough field: x values, c, θ and T.
fn setup() -> (Stack, Grid, Vec<LayerPower>, Vec<f64>, Vec<f64>) {
    let stack = Stack::from_toml(STACK, Path::new("t.toml"))
        .unwrap()
        .with_grid(300, 250)
        .unwrap();
    let grid = Grid::from_stack(&stack);
    let power = vec![LayerPower::default(), LayerPower::default()];
    let mut s = 12345u64;
    let x: Vec<f64> = (0..grid.len())
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 11) as f64 / (1u64 << 53) as f64 * 40.0 - 3.0
        })
        .collect();
    let g_top: Vec<f64> = (0..grid.plane())
        .map(|j| 1e-3 * (1 + j % 7) as f64)
        .collect();
    let g_bottom: Vec<f64> = (0..grid.plane()).map(|j| 1e-5 * (j % 3) as f64).collect();
    (stack, grid, power, x, [g_top, g_bottom].concat())
}

fn fold_in(cuts: &[usize], keep_whole: bool) -> FieldSummary {
    let (stack, grid, power, x, g) = setup();
    let plane = grid.plane();
    let coupling = Coupling {
        power_in_w: 2.5,
        g_top: &g[..plane],
        g_bottom: &g[plane..],
    };
    let mut f = FieldStats::new(
        &stack,
        &grid,
        &power,
        coupling,
        0.75,
        &[true, false],
        keep_whole,
    );
    let mut lo = 0;
    for &hi in cuts.iter().chain([&x.len()]) {
        f.fold(lo, Piece::Shifted(&x[lo..hi])).unwrap();
        lo = hi;
    }
    f.finish().unwrap()
}

#[test]
fn pieces_do_not_change_a_bit() {
    let one = fold_in(&[], true);
    // Cuts inside chunks, at a plane's end and one value apart.
    let many = fold_in(
        &[1, 40_000, 40_001, 75_000, 100_003, 150_000, 200_000],
        true,
    );
    assert_eq!(one.layers, many.layers);
    assert_eq!(one.probes, many.probes);
    assert_eq!(one.maps, many.maps);
    assert_eq!(one.whole, many.whole);
    assert_eq!(one.energy.heat_out_top_w, many.energy.heat_out_top_w);
    assert_eq!(one.energy.heat_out_bottom_w, many.energy.heat_out_bottom_w);
}

#[test]
fn matches_sequential_loops_over_the_whole_field() {
    let (stack, grid, _, x, g) = setup();
    let s = fold_in(&[77_777], true);
    let plane = grid.plane();
    // T as the solve computes it: θ = x + c, T = θ + ambient.
    let theta: Vec<f64> = x.iter().map(|v| v + 0.75).collect();
    let t: Vec<f64> = theta.iter().map(|v| v + stack.ambient_k).collect();
    assert_eq!(s.whole.as_deref(), Some(&t[..]));
    for (l, ls) in s.layers.iter().enumerate() {
        let r = grid.layer_z[l].start * plane..grid.layer_z[l].end * plane;
        let cells = &t[r.clone()];
        let min = cells.iter().copied().fold(f64::INFINITY, f64::min);
        let mut imax = r.start;
        for i in r.clone() {
            if t[i] > t[imax] {
                imax = i;
            }
        }
        let avg = cells.iter().sum::<f64>() / cells.len() as f64;
        assert_eq!((ls.t_min_k, ls.t_max_k, ls.hottest), (min, t[imax], imax));
        assert!(
            (ls.t_avg_k - avg).abs() <= 1e-13 * avg,
            "{} vs {avg}",
            ls.t_avg_k
        );
    }
    // Layer a's map is the mean over its two z cells, as Grid::layer_map.
    assert_eq!(s.maps[0].as_deref(), Some(&grid.layer_map(&t, 0)[..]));
    assert!(s.maps[1].is_none());
    let top: f64 = (0..plane).map(|j| g[j] * theta[2 * plane + j]).sum();
    let bottom: f64 = (0..plane).map(|j| g[plane + j] * theta[j]).sum();
    assert!((s.energy.heat_out_top_w - top).abs() <= 1e-12 * top.abs());
    assert!((s.energy.heat_out_bottom_w - bottom).abs() <= 1e-12 * bottom.abs());
    let want = (top + bottom - 2.5).abs() / 2.5;
    assert!((s.energy.relative_error - want).abs() <= 1e-12 * want.max(1.0));
    // The probe averages its two z cells of layer a.
    let j = grid.column_of(1.1e-3) + 300 * grid.row_of(0.7e-3);
    assert_eq!(s.probes, vec![(t[j] + t[plane + j]) / 2.0]);
}

#[test]
fn a_gap_or_a_short_field_is_an_error() {
    let (stack, grid, power, x, g) = setup();
    let plane = grid.plane();
    let coupling = Coupling {
        power_in_w: 1.0,
        g_top: &g[..plane],
        g_bottom: &g[plane..],
    };
    let mut f = FieldStats::new(&stack, &grid, &power, coupling, 0.0, &[], false);
    assert!(f.fold(10, Piece::Shifted(&x[10..20])).is_err());
    f.fold(0, Piece::Shifted(&x[..20])).unwrap();
    assert!(f.finish().is_err());
}
