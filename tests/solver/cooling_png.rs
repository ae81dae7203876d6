//! PNG cooling maps: a pixel's luma maps linearly from black =
//! `h_min` to white = `h_max`. Against the same cooling written as
//! rectangles and as one number: the same temperatures; and the keys'
//! checks.

use cuth::backend::cpu::CpuBackend;
use cuth::linalg::PrecondKind;
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use std::path::Path;

fn stack_with(dir: &Path, h_top: &str) -> Result<Stack, String> {
    let text = format!(
        "[chip]\nwidth=2e-3\nlength=2e-3\n[grid]\nnx=16\nny=16\n\
         [boundary]\nambient=300\nh_top={h_top}\n[materials.si]\nk=100\nheat_capacity=1e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n\
         power={{ type=\"blocks\", blocks=[{{ name=\"hot\", x=2.5e-4, y=5e-4, width=5e-4, height=5e-4, power=0.2 }}] }}\n\
         [[layers]]\nname=\"lid\"\nmaterial=\"si\"\nthickness=3e-4\n"
    );
    let path = dir.join("stack.toml");
    std::fs::write(&path, &text).unwrap();
    Stack::load(&path).map_err(|e| e.to_string())
}

fn temperatures(s: &Stack) -> Vec<f64> {
    let mut o = SteadyOptions::from_stack(s, PrecondKind::Multigrid);
    o.rtol = 1e-13;
    o.max_iter = 100_000;
    let out = solve_steady(&CpuBackend::new(), s, &o).unwrap();
    assert!(out.summary.energy.relative_error < 1e-9);
    out.temperature_k
}

fn max_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f64::max)
}

fn png(dir: &Path, name: &str, w: u32, h: u32, px: Vec<u8>) {
    image::GrayImage::from_raw(w, h, px)
        .unwrap()
        .save(dir.join(name))
        .unwrap();
}

#[test]
fn white_and_black_halves_equal_one_rectangle() {
    let dir = tempfile::tempdir().unwrap();
    // Two pixels: left white, right black; h_min defaults to 0.
    png(dir.path(), "half.png", 2, 1, vec![255, 0]);
    let map = stack_with(dir.path(), "{ file = \"half.png\", h_max = 2e4 }").unwrap();
    let rect = stack_with(
        dir.path(),
        "[{ x = 0.0, y = 0.0, width = 1e-3, length = 2e-3, h = 2e4 }]",
    )
    .unwrap();
    let d = max_diff(&temperatures(&map), &temperatures(&rect));
    assert!(d < 1e-9, "max |dT| {d} K");
}

#[test]
fn grey_maps_between_h_min_and_h_max() {
    let dir = tempfile::tempdir().unwrap();
    // 51 / 255 = 0.2: h = 1e3 + 0.2 · (6e3 − 1e3) = 2e3 everywhere.
    png(dir.path(), "grey.png", 3, 2, vec![51; 6]);
    let map = stack_with(
        dir.path(),
        "{ file = \"grey.png\", h_min = 1e3, h_max = 6e3 }",
    )
    .unwrap();
    let uniform = stack_with(dir.path(), "2000.0").unwrap();
    let d = max_diff(&temperatures(&map), &temperatures(&uniform));
    assert!(d < 1e-9, "max |dT| {d} K");
}

#[test]
fn png_and_csv_keys_are_checked() {
    let dir = tempfile::tempdir().unwrap();
    png(dir.path(), "m.png", 1, 1, vec![255]);
    std::fs::write(dir.path().join("m.csv"), "1e4\n").unwrap();
    let cases = [
        ("{ file = \"m.png\" }", "boundary.h_top.h_max"),
        (
            "{ file = \"m.png\", h_min = 5e3, h_max = 1e3 }",
            "boundary.h_top.h_min",
        ),
        ("{ file = \"m.png\", h_max = -1.0 }", "boundary.h_top.h_max"),
        ("{ file = \"m.csv\", h_max = 1e3 }", "boundary.h_top.h_max"),
    ];
    for (h, field) in cases {
        let e = stack_with(dir.path(), h).unwrap_err();
        assert!(e.contains(field), "{h}: {e}");
    }
    // A black PNG with h_min 0 would make the face adiabatic.
    png(dir.path(), "black.png", 1, 1, vec![0]);
    let e = stack_with(dir.path(), "{ file = \"black.png\", h_max = 1e3 }").unwrap_err();
    assert!(e.contains("adiabatic"), "{e}");
    // The CSV raster is unchanged: W/(m^2 K) per pixel.
    assert!(stack_with(dir.path(), "{ file = \"m.csv\" }").is_ok());
}
