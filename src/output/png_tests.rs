//! Tests of the heat map picture: size, outlines, colour bar ticks, absent
//! cells, non-uniform cells and long titles.

use super::*;
use crate::output::colormap::inferno;
use crate::output::raster::{uniform_edges, HATCH_BG, HATCH_LINE};
use crate::power::Rect;

fn block(name: &str, x0: f64, y0: f64, x1: f64, y1: f64) -> Block {
    Block::new(name, Rect { x0, y0, x1, y1 }, 1.0)
}

fn draw(values: &[f64], xe: &[f64], ye: &[f64], blocks: &[Block]) -> (RgbImage, MapRect) {
    render_with_rect(&HeatMap {
        x_edges_m: xe,
        y_edges_m: ye,
        values,
        title: "layer 0: die (°C)",
        unit: "°C",
        blocks,
    })
    .unwrap()
}

/// 4 × 3 cells of 1 mm: value 300.5 + 10 y + x.
fn ramp() -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let v = (0..12)
        .map(|i| 300.5 + 10.0 * (i / 4) as f64 + (i % 4) as f64)
        .collect();
    (v, uniform_edges(4, 1e-3), uniform_edges(3, 1e-3))
}

#[test]
fn map_keeps_its_aspect_with_y_up() {
    let (v, xe, ye) = ramp();
    let (img, r) = draw(&v, &xe, &ye, &[]);
    assert_eq!((r.w, r.h), (512, 384), "128 px per 1 mm cell");
    assert!(img.width() > r.x + r.w && img.height() > r.y + r.h);
    let colour = |t: f64| image::Rgb(inferno((t - 300.5) / 23.0));
    assert_eq!(
        *img.get_pixel(r.x + 10, r.y + 10),
        colour(320.5),
        "top-left is max y"
    );
    assert_eq!(*img.get_pixel(r.x + 10, r.y + r.h - 10), colour(300.5));
    assert_eq!(*img.get_pixel(r.x + r.w - 10, r.y + 10), colour(323.5));
}

#[test]
fn outlines_and_names_are_drawn_over_the_map() {
    let (v, xe, ye) = ramp();
    let (plain, r) = draw(&v, &xe, &ye, &[]);
    let blocks = [
        block("core0", 0.0, 0.0, 2e-3, 2e-3),
        block("l2", 2e-3, 0.0, 4e-3, 3e-3),
    ];
    let (drawn, r2) = draw(&v, &xe, &ye, &blocks);
    assert_eq!(r, r2);
    assert_eq!(plain.dimensions(), drawn.dimensions());
    // The left edge of core0 runs down the map's left side at x = r.x; its
    // top edge at 2 mm (row r.y + 128) is black across the block.
    let top = r.y + 128;
    let differ = (r.x + 5..r.x + 250)
        .filter(|&x| plain.get_pixel(x, top) != drawn.get_pixel(x, top))
        .count();
    assert!(differ > 200, "outline pixels: {differ}");
    // The name sits at the block's centre: pixels there change too.
    let (cx, cy) = (r.x + 128, r.y + 256);
    let near = (cx - 20..cx + 20)
        .flat_map(|x| (cy - 6..cy + 6).map(move |y| (x, y)))
        .filter(|&(x, y)| plain.get_pixel(x, y) != drawn.get_pixel(x, y))
        .count();
    assert!(near > 20, "name pixels: {near}");
    // Nothing outside the map and its frame moves.
    for (x, y, p) in drawn.enumerate_pixels() {
        let inside = x + 1 >= r.x && x <= r.x + r.w && y + 1 >= r.y && y <= r.y + r.h;
        if !inside {
            assert_eq!(p, plain.get_pixel(x, y), "({x}, {y})");
        }
    }
}

#[test]
fn colour_bar_labels_are_distinct_and_apart() {
    for (lo, hi) in [
        (45.0, 83.7),
        (300.0, 300.003),
        (-5.0, 1e4),
        (1e17, 1e17 + 64.0),
    ] {
        let t = ticks::spaced(lo, hi, f64::from(MIN_BAR_PX - 1), MIN_TICK_GAP);
        assert!(t.len() >= 2, "{lo}..{hi}: {t:?}");
        let mut labels: Vec<&str> = t.iter().map(|(_, s)| s.as_str()).collect();
        labels.dedup();
        assert_eq!(labels.len(), t.len(), "{t:?}");
        for w in t.windows(2) {
            let gap = (w[1].0 - w[0].0) / (hi - lo) * f64::from(MIN_BAR_PX - 1);
            assert!(gap >= MIN_TICK_GAP - 1e-9, "{t:?}");
        }
    }
}

#[test]
fn absent_cells_are_hatched_and_out_of_the_range() {
    // 2 × 2 cells, the top-left one absent; 1000 would be its value.
    let v = [10.0, 20.0, f64::NAN, 30.0];
    let e = uniform_edges(2, 1e-3);
    let (img, r) = draw(&v, &e, &e, &[]);
    let q = r.w / 2;
    let absent: Vec<[u8; 3]> = (r.x + 4..r.x + q - 4)
        .flat_map(|x| (r.y + 4..r.y + q - 4).map(move |y| (x, y)))
        .map(|(x, y)| img.get_pixel(x, y).0)
        .collect();
    assert!(absent.iter().all(|p| *p == HATCH_BG || *p == HATCH_LINE));
    // The range is 10..30: the hottest present cell takes the top colour.
    assert_eq!(img.get_pixel(r.x + r.w - 5, r.y + 5).0, inferno(1.0));
    assert_eq!(img.get_pixel(r.x + 5, r.y + r.h - 5).0, inferno(0.0));
}

#[test]
fn non_uniform_cells_take_their_width() {
    // Cells 0..1, 1..3, 3..4 mm wide, one row: the middle one is half the map.
    let v = [0.0, 1.0, 0.5];
    let (img, r) = draw(&v, &[0.0, 1e-3, 3e-3, 4e-3], &[0.0, 1e-3], &[]);
    let row = r.y + r.h / 2;
    let hot = (r.x..r.x + r.w)
        .filter(|&x| img.get_pixel(x, row).0 == inferno(1.0))
        .count() as f64;
    assert!(
        (hot / f64::from(r.w) - 0.5).abs() < 0.01,
        "{hot} of {}",
        r.w
    );
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let e = uniform_edges(2, 1e-3);
    let bad = |xe: &[f64], v: &[f64]| {
        render(&HeatMap {
            x_edges_m: xe,
            y_edges_m: &e,
            values: v,
            title: "",
            unit: "K",
            blocks: &[],
        })
        .is_err()
    };
    assert!(bad(&e, &[1.0; 3]));
    assert!(bad(&[0.0, 0.0, 1.0], &[1.0; 4]));
    assert!(bad(&[], &[]));
    // Constant and all-absent maps draw.
    assert!(!bad(&e, &[5.0; 4]));
    assert!(!bad(&e, &[f64::NAN; 4]));
}

/// A 2048² map is drawn at 1024² pixels and encodes to a bounded PNG (its
/// speed is a benchmark's business, not a unit test's).
#[test]
fn a_2048_square_map_is_drawn_at_1024_pixels() {
    let n = 2048;
    let v: Vec<f64> = (0..n * n).map(|i| (i % 977) as f64).collect();
    let e = uniform_edges(n, 1e-5);
    let (img, r) = draw(&v, &e, &e, &[block("a", 0.0, 0.0, 1e-2, 1e-2)]);
    let bytes = encode(&img).unwrap();
    assert_eq!((r.w, r.h), (1024, 1024));
    assert!(bytes.len() < 4 << 20);
}

/// Renders a synthetic floorplan map to `$TMPDIR/sample_layer.png` for a
/// look: `cargo test --release --lib output::png::tests::sample -- --ignored`.
#[test]
#[ignore]
fn sample_png() {
    let (nx, ny) = (120, 80);
    let values: Vec<f64> = (0..nx * ny)
        .map(|i| {
            let (x, y) = ((i % nx) as f64, (i / nx) as f64);
            let hot =
                |cx: f64, cy: f64, r: f64| (-((x - cx).powi(2) + (y - cy).powi(2)) / (r * r)).exp();
            if x > 110.0 && y > 70.0 {
                f64::NAN
            } else {
                45.0 + 38.0 * hot(85.0, 60.0, 9.0) + 15.0 * hot(30.0, 25.0, 18.0) + 0.05 * x
            }
        })
        .collect();
    let blocks = [
        block("core0", 0.0, 0.0, 6e-3, 4e-3),
        block("core1", 6e-3, 0.0, 12e-3, 4e-3),
        block("L2", 0.0, 4e-3, 12e-3, 8e-3),
    ];
    let img = render(&HeatMap {
        x_edges_m: &uniform_edges(nx, 100e-6),
        y_edges_m: &uniform_edges(ny, 100e-6),
        values: &values,
        title: "layer 3: logic_beol (°C)",
        unit: unit_label(TempUnit::Celsius),
        blocks: &blocks,
    })
    .unwrap();
    let path = std::env::temp_dir().join("sample_layer.png");
    std::fs::write(&path, encode(&img).unwrap()).unwrap();
    eprintln!("wrote {}", path.display());
}

/// A long title is cut to the longest prefix that fits, ending in `...`.
#[test]
fn long_title_is_cut_to_the_longest_prefix_that_fits() {
    let font = sans(TITLE_PX).unwrap();
    let long = "n".repeat(50_000);
    let cut = fit(&long, 400, &font);
    assert!(cut.ends_with("..."), "{cut}");
    assert!(text_width(&cut, &font) <= 400);
    let kept = cut.len() - 3;
    assert!(kept > 10, "{cut}");
    let one_more = "n".repeat(kept + 1) + "...";
    assert!(text_width(&one_more, &font) > 400);
    assert_eq!(fit("short", 400, &font), "short");
}
