//! Tests of [`super::layer_power`]: every power source, conservation on
//! random rectangles, footprint checks, and the real HotSpot example files
//! shipped under `configs/hotspot/`.

use super::*;
use crate::grid::Grid;
use crate::stack::Stack;
use std::path::{Path, PathBuf};

/// Shipped copies of HotSpot's example4 (`ev6_3D_*`), UVA licence.
const HOTSPOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/configs/hotspot");

/// A stack of `layers` (TOML `[[layers]]` tables) on a `w`×`l` m footprint,
/// as if read from `dir/stack.toml`, so relative paths resolve in `dir`.
fn stack(dir: &Path, w: f64, l: f64, nx: usize, ny: usize, layers: &str) -> Stack {
    let text = format!(
        "[chip]\nwidth = {w:?}\nlength = {l:?}\n[grid]\nnx = {nx}\nny = {ny}\n\
         [boundary]\nambient = 300.0\nh_top = 1e4\n\
         [materials.si]\nk = 100.0\nheat_capacity = 1.75e6\n{layers}"
    );
    Stack::from_toml(&text, &dir.join("stack.toml")).unwrap()
}

fn layer(name: &str, extra: &str) -> String {
    format!("[[layers]]\nname = \"{name}\"\nmaterial = \"si\"\nthickness = 1e-4\n{extra}\n")
}

fn power(s: &Stack, l: usize) -> Result<LayerPower, PowerError> {
    layer_power(s, &Grid::from_stack(s), l)
}

fn rel_err(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(f64::MIN_POSITIVE)
}

/// xorshift64*: deterministic and dependency-free, enough for test geometry.
struct Rng(u64);

impl Rng {
    /// Uniform in [0, 1).
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn unpowered_and_uniform_layers() {
    let dir = tempfile::tempdir().unwrap();
    let layers = layer("a", "") + &layer("b", "power = { type = \"uniform\", total = 3.5 }");
    let s = stack(dir.path(), 1e-3, 2e-3, 7, 5, &layers);
    let p = power(&s, 0).unwrap();
    assert_eq!(p.map_w, vec![0.0; 35]);
    assert_eq!((p.total_w, p.blocks.len(), p.patches.len()), (0.0, 0, 0));
    let p = power(&s, 1).unwrap();
    assert_eq!(p.total_w, 3.5);
    assert!(p.map_w.iter().all(|&m| m == 3.5 / 35.0));
    let m = power(&s, 2).unwrap_err().to_string();
    assert!(
        m.contains("layers[2]") && m.contains("the stack has 2"),
        "{m}"
    );
}

/// A `uniform` source over the whole domain of a graded grid: every cell
/// gets the same power density (was the same watts per cell, 25 times the
/// density in a 0.1 mm cell beside 0.5 mm ones).
#[test]
fn uniform_power_on_a_graded_grid_is_uniform_density() {
    let text = "[chip]\nwidth = \"10 mm\"\nlength = \"8 mm\"\n[grid]\ncell = \"0.5 mm\"\n\
                [boundary]\nambient = 300.0\nh_top = 1e4\n\
                [materials.si]\nk = 100.0\nheat_capacity = 1.75e6\n"
        .to_string()
        + &layer("heater", "power = { type = \"uniform\", total = 10.0 }")
        + "[[layers.regions]]\nname = \"patch\"\nx = \"2.05 mm\"\ny = \"2.05 mm\"\n\
           width = \"0.1 mm\"\nlength = \"0.1 mm\"\nmaterial = \"si\"\n";
    let s = Stack::from_toml(&text, Path::new("stack.toml")).unwrap();
    let g = Grid::from_stack(&s);
    assert!(!g.is_uniform());
    let p = layer_power(&s, &g, 0).unwrap();
    let density = 10.0 / (10e-3 * 8e-3);
    for (j, w) in p.map_w.iter().enumerate() {
        assert!(
            rel_err(w / g.cell_area(j), density) < 1e-12,
            "cell {j}: {w} W"
        );
    }
    assert!(rel_err(p.map_w.iter().sum(), 10.0) < 1e-13);
}

/// The required conservation test: random rectangles, some straddling cell
/// edges, some on cell edges, some touching the footprint's edges, one
/// covering it, some inside one cell, on grids that do not divide evenly.
#[test]
fn random_rectangles_conserve_power() {
    let dir = tempfile::tempdir().unwrap();
    let (w, l) = (1.3e-3, 0.9e-3);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (nx, ny) in [(7, 5), (64, 64), (100, 37)] {
        let (dx, dy) = (w / nx as f64, l / ny as f64);
        let mut specs = String::new();
        let mut input = 0.0;
        for i in 0..60 {
            let (x, bw, y, bh) = match i % 6 {
                0 => {
                    let (x, y) = (0.9 * w * rng.next(), 0.9 * l * rng.next());
                    (
                        x,
                        (w - x) * (0.01 + 0.99 * rng.next()),
                        y,
                        (l - y) * (0.01 + 0.99 * rng.next()),
                    )
                }
                1 => (
                    0.0,
                    w * (0.05 + 0.9 * rng.next()),
                    0.0,
                    l * (0.05 + 0.9 * rng.next()),
                ),
                2 => {
                    let (bw, bh) = (w * (0.05 + 0.9 * rng.next()), l * (0.05 + 0.9 * rng.next()));
                    (w - bw, bw, l - bh, bh)
                }
                3 => {
                    let (ix, iy) = (
                        (rng.next() * (nx / 2) as f64) as usize,
                        (rng.next() * (ny / 2) as f64) as usize,
                    );
                    (ix as f64 * dx, 2.0 * dx, iy as f64 * dy, 3.0 * dy)
                }
                4 => (0.0, w, 0.0, l),
                _ => {
                    let (ix, iy) = (
                        (rng.next() * nx as f64) as usize,
                        (rng.next() * ny as f64) as usize,
                    );
                    (
                        ix as f64 * dx + 0.25 * dx,
                        0.01 * dx,
                        iy as f64 * dy + 0.5 * dy,
                        0.3 * dy,
                    )
                }
            };
            let p = 0.1 + 10.0 * rng.next();
            input += p;
            specs += &format!(
                "{{ name = \"r{i}\", x = {x:?}, y = {y:?}, width = {bw:?}, height = {bh:?}, power = {p:?} }},\n"
            );
        }
        let body = layer(
            "die",
            &format!("power = {{ type = \"blocks\", blocks = [\n{specs}] }}"),
        );
        let s = stack(dir.path(), w, l, nx, ny, &body);
        let p = power(&s, 0).unwrap();
        assert_eq!(p.map_w.len(), nx * ny);
        assert_eq!(p.blocks.len(), 60);
        assert!(p.map_w.iter().all(|&m| m >= 0.0));
        let grid_total: f64 = p.map_w.iter().sum();
        assert!(
            rel_err(p.total_w, input) <= 1e-12,
            "{nx}x{ny}: total_w {} vs {input}",
            p.total_w
        );
        assert!(
            rel_err(grid_total, input) <= 1e-12,
            "{nx}x{ny}: grid {grid_total} vs {input}"
        );
    }
}

#[test]
fn block_outside_footprint_is_an_error_tiny_overshoot_is_clamped() {
    let dir = tempfile::tempdir().unwrap();
    let blocks = |x: f64| {
        layer(
            "logic",
            &format!(
                "power = {{ type = \"blocks\", blocks = [\n\
                 {{ name = \"a\", x = 0.0, y = 0.0, width = 1e-4, height = 1e-4, power = 1.0 }},\n\
                 {{ name = \"core1\", x = {x:?}, y = 5e-4, width = 5e-4, height = 5e-4, power = 2.0 }}] }}"
            ),
        )
    };
    let s = stack(dir.path(), 1e-3, 1e-3, 8, 8, &blocks(5.1e-4));
    let m = power(&s, 0).unwrap_err().to_string();
    assert!(m.contains("stack.toml"), "{m}");
    assert!(
        m.contains("layers[0] (logic).power.blocks[1] (core1)"),
        "{m}"
    );
    assert!(m.contains("footprint [0, 0.001] × [0, 0.001] m"), "{m}");
    // 1e-15 m past the edge, as rounded HotSpot coordinates produce: accepted.
    let s = stack(dir.path(), 1e-3, 1e-3, 8, 8, &blocks(5e-4 + 1e-15));
    let p = power(&s, 0).unwrap();
    assert_eq!(p.blocks[1].rects[0].x1, 1e-3);
    assert!(rel_err(p.map_w.iter().sum(), 3.0) <= 1e-14);
}

#[test]
fn csv_top_left_pixel_lands_at_max_y_min_x() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hot.csv"), "2,0\n0,0\n").unwrap();
    let body = layer("a", "power = { type = \"raster\", file = \"hot.csv\" }")
        + &layer(
            "b",
            "power = { type = \"raster\", file = \"hot.csv\", total = 5.0 }",
        );
    let s = stack(dir.path(), 1e-3, 2e-3, 4, 4, &body);
    let p = power(&s, 0).unwrap();
    assert_eq!(p.total_w, 2.0);
    for y in 0..4 {
        for x in 0..4 {
            let want = if x < 2 && y >= 2 { 0.5 } else { 0.0 };
            assert!((p.map_w[x + 4 * y] - want).abs() < 1e-15, "cell ({x}, {y})");
        }
    }
    let p = power(&s, 1).unwrap();
    assert_eq!(p.total_w, 5.0);
    assert!((p.map_w[3 * 4] - 1.25).abs() < 1e-15);
}

#[test]
fn raster_total_rules() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("zero.csv"), "0,0\n0,0\n").unwrap();
    let img = image::GrayImage::from_raw(3, 2, vec![0, 50, 100, 200, 0, 0]).unwrap();
    img.save(dir.path().join("map.png")).unwrap();
    let body = layer("png", "power = { type = \"raster\", file = \"map.png\" }")
        + &layer(
            "png_total",
            "power = { type = \"raster\", file = \"map.png\", total = 7.0 }",
        )
        + &layer(
            "zero",
            "power = { type = \"raster\", file = \"zero.csv\", total = 1.0 }",
        )
        + &layer("gone", "power = { type = \"raster\", file = \"gone.csv\" }");
    // A file missing when the stack is read is an error of the stack (the
    // field that names it); one removed after that, of the power.
    let gone = dir.path().join("gone.csv");
    std::fs::write(&gone, "1\n").unwrap();
    let s = stack(dir.path(), 1e-3, 1e-3, 5, 3, &body);
    std::fs::remove_file(&gone).unwrap();
    let m = power(&s, 0).unwrap_err().to_string();
    assert!(
        m.contains("layers[0] (png).power.total") && m.contains("map.png"),
        "{m}"
    );
    let p = power(&s, 1).unwrap();
    assert_eq!(p.total_w, 7.0);
    assert!(rel_err(p.map_w.iter().sum(), 7.0) <= 1e-14);
    let m = power(&s, 2).unwrap_err().to_string();
    assert!(
        m.contains("layers[2] (zero).power.total") && m.contains("every pixel is 0"),
        "{m}"
    );
    let e = power(&s, 3).unwrap_err();
    assert!(
        matches!(e, PowerError::Io { .. }) && e.to_string().contains("gone.csv"),
        "{e}"
    );
}

/// HotSpot example4's core layer: 112 units (4 of them TSV bundles with a
/// material override), powers from the 3D trace, whose other layers'
/// columns must be ignored. Expected totals computed independently from the
/// files (mean of the 9 rows over the core layer's columns; row 0).
#[test]
fn hotspot_core_layer_with_trace() {
    let dir = PathBuf::from(HOTSPOT);
    let body = layer(
        "core",
        "floorplan = \"ev6_3D_core_layer.flp\"\npower = { type = \"ptrace\", file = \"ev6_3D.ptrace\" }",
    ) + &layer(
        "core_row0",
        "floorplan = \"ev6_3D_core_layer.flp\"\npower = { type = \"ptrace\", file = \"ev6_3D.ptrace\", row = 0 }",
    ) + &layer("tim", "floorplan = \"ev6_3D_TIM_TSV.flp\"");
    let s = stack(&dir, 0.0124, 0.01276, 64, 64, &body);
    let p = power(&s, 0).unwrap();
    assert_eq!((p.blocks.len(), p.patches.len()), (112, 4));
    assert!(
        rel_err(p.total_w, 138.7651111111111) <= 1e-12,
        "{}",
        p.total_w
    );
    assert!(rel_err(p.map_w.iter().sum(), p.total_w) <= 1e-12);
    let p = power(&s, 1).unwrap();
    assert!(rel_err(p.total_w, 195.61) <= 1e-12, "{}", p.total_w);
    let icache = p.blocks.iter().find(|b| b.name == "Icache_0").unwrap();
    assert_eq!(icache.power_w, 8.27);
    let p = power(&s, 2).unwrap();
    assert_eq!((p.blocks.len(), p.patches.len(), p.total_w), (4, 2, 0.0));
    for patch in &p.patches {
        assert_eq!(patch.material.k, [1.0 / 0.0058; 3]);
        assert_eq!(patch.material.heat_capacity, 4e6);
    }
}

#[test]
fn ptrace_errors_name_the_block_or_the_row() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("two.flp"),
        "a 5e-4 1e-3 0 0\nb 5e-4 1e-3 5e-4 0\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("t.ptrace"), "a b other\n1 2 3\n3 4 5\n").unwrap();
    std::fs::write(dir.path().join("only_a.ptrace"), "a other\n1 2\n").unwrap();
    let trace = |extra: &str| {
        layer(
            "die",
            &format!("floorplan = \"two.flp\"\npower = {{ type = \"ptrace\", {extra} }}"),
        )
    };
    let body = trace("file = \"t.ptrace\"")
        + &trace("file = \"t.ptrace\", row = 2").replace("\"die\"", "\"die2\"")
        + &trace("file = \"only_a.ptrace\"").replace("\"die\"", "\"die3\"");
    let s = stack(dir.path(), 1e-3, 1e-3, 4, 4, &body);
    let p = power(&s, 0).unwrap();
    assert_eq!(p.total_w, 5.0);
    assert_eq!((p.blocks[0].power_w, p.blocks[1].power_w), (2.0, 3.0));
    // Block a is the left half: columns x = 0, 1 hold 2 W over 8 cells.
    assert!((p.map_w[0] - 0.25).abs() < 1e-15 && (p.map_w[3] - 0.375).abs() < 1e-15);
    let m = power(&s, 1).unwrap_err().to_string();
    assert!(
        m.contains("layers[1] (die2).power.row") && m.contains("2 data rows"),
        "{m}"
    );
    let m = power(&s, 2).unwrap_err().to_string();
    assert!(
        m.contains("only_a.ptrace") && m.contains("`b`") && m.contains("two.flp"),
        "{m}"
    );
}

#[test]
fn floorplan_outside_footprint_or_missing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("wide.flp"),
        "# c\nok 1e-3 1e-3 0 0\nbig 2e-3 1e-3 0 0\n",
    )
    .unwrap();
    let body = layer("a", "floorplan = \"wide.flp\"") + &layer("b", "floorplan = \"nope.flp\"");
    let s = stack(dir.path(), 1e-3, 1e-3, 4, 4, &body);
    let m = power(&s, 0).unwrap_err().to_string();
    assert!(m.contains("wide.flp") && m.contains("line 3 (big)"), "{m}");
    assert!(m.contains("[0, 0.001] × [0, 0.001] m"), "{m}");
    let e = power(&s, 1).unwrap_err();
    assert!(
        matches!(e, PowerError::Io { .. }) && e.to_string().contains("nope.flp"),
        "{e}"
    );
}

/// A block of several rectangles is one block whose power goes to each
/// rectangle by its share of the area: on 1 mm cells, 3 W over a 2 mm² and
/// a 1 mm² rectangle put 1 W in each of the three cells; a rectangle
/// outside the footprint is named by its index.
#[test]
fn block_of_rectangles_spreads_its_power_by_area() {
    let dir = tempfile::tempdir().unwrap();
    let rects = |x: f64| {
        layer(
            "logic",
            &format!(
                "power = {{ type = \"blocks\", blocks = [{{ name = \"l\", power = 3.0, rects = [\n\
                 {{ x = 0.0, y = 0.0, width = 2e-3, height = 1e-3 }},\n\
                 {{ x = {x:?}, y = 1e-3, width = 1e-3, height = 1e-3 }}] }}] }}"
            ),
        )
    };
    let s = stack(dir.path(), 3e-3, 2e-3, 3, 2, &rects(2e-3));
    let p = power(&s, 0).unwrap();
    assert_eq!(p.blocks.len(), 1);
    assert_eq!((p.blocks[0].rects.len(), p.blocks[0].power_w), (2, 3.0));
    let want = [1.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    for (got, want) in p.map_w.iter().zip(want) {
        assert!((got - want).abs() < 1e-12, "{:?}", p.map_w);
    }
    let s = stack(dir.path(), 3e-3, 2e-3, 3, 2, &rects(2.5e-3));
    let m = power(&s, 0).unwrap_err().to_string();
    assert!(
        m.contains("blocks[0] (l)") && m.contains("rects[1] of the block"),
        "{m}"
    );
}
