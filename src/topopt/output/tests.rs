//! Checks of the topopt outputs against independent references: the VTK
//! file parsed back byte by byte, PNG pixels at computed positions, the
//! isosurface's closedness (every directed edge matched by its reverse),
//! its volume against 4/3·πr³ and against the exact volume of a cut box,
//! the STL layout, and the staged writer's all-or-nothing behaviour. This
//! file holds the shared fields and the VTK and PNG checks; the isosurface
//! and STL ones are in `tests/isosurface.rs`, the history, summary and
//! staged-writer ones in `tests/files.rs`.

mod files;
mod isosurface;

use super::views::{grey, view_layout};
use super::*;

/// Deterministic pseudo-random numbers in [0, 1) (64-bit LCG, top bits).
fn lcg(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed
        .wrapping_mul(2862933555777941757)
        .wrapping_add(3037000493);
    move || {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn field(n: [usize; 3], h: f64, rho: &[f64]) -> DensityField<'_> {
    DensityField {
        nelx: n[0],
        nely: n[1],
        nelz: n[2],
        h,
        rho,
    }
}

/// A ball of radius `r` in the unit cube, `n` elements a side: ρ falls
/// linearly from 1 to 0 across two elements around the sphere, so the 0.5
/// level set is the sphere |x − c| = r.
fn ball(n: usize, r: f64) -> Vec<f64> {
    let h = 1.0 / n as f64;
    let mut rho = Vec::with_capacity(n * n * n);
    for k in 0..n {
        for j in 0..n {
            for i in 0..n {
                let d = [i, j, k].map(|a| (a as f64 + 0.5) * h - 0.5);
                let dist = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                rho.push((0.5 + (r - dist) / (2.0 * h)).clamp(0.0, 1.0));
            }
        }
    }
    rho
}

// ---------------------------------------------------------------- VTK

/// The value of `name="..."` in `text`, after `tag`.
fn attr<'a>(text: &'a str, tag: &str, name: &str) -> &'a str {
    let t = &text[text.find(tag).unwrap_or_else(|| panic!("no {tag}"))..];
    let key = format!(" {name}=\"");
    let start = t.find(&key).unwrap_or_else(|| panic!("no {name} in {tag}")) + key.len();
    &t[start..start + t[start..].find('"').unwrap()]
}

#[test]
fn vtk_image_parses_back_and_round_trips_the_densities() {
    let n = [5, 4, 3];
    let mut r = lcg(1);
    let mut rho: Vec<f64> = (0..60).map(|_| r()).collect();
    rho[7] = 1e-300; // extremes survive bit for bit
    rho[8] = 1.0;
    let bytes = vtk_image(&field(n, 2.5e-3, &rho));

    let marker = b"<AppendedData encoding=\"raw\">";
    let at = bytes
        .windows(marker.len())
        .position(|w| w == marker)
        .expect("AppendedData");
    let underscore = at + bytes[at..].iter().position(|&b| b == b'_').unwrap();
    let header = std::str::from_utf8(&bytes[..underscore]).expect("ASCII header");
    assert!(header.starts_with("<?xml version=\"1.0\"?>\n<VTKFile"));
    assert_eq!(attr(header, "<VTKFile", "type"), "ImageData");
    assert_eq!(attr(header, "<VTKFile", "byte_order"), "LittleEndian");
    assert_eq!(attr(header, "<VTKFile", "header_type"), "UInt64");
    assert_eq!(attr(header, "<ImageData", "WholeExtent"), "0 5 0 4 0 3");
    assert_eq!(attr(header, "<ImageData", "Origin"), "0 0 0");
    assert_eq!(
        attr(header, "<ImageData", "Spacing"),
        "0.0025 0.0025 0.0025"
    );
    assert_eq!(attr(header, "<Piece", "Extent"), "0 5 0 4 0 3");
    assert_eq!(attr(header, "<CellData", "Scalars"), "density");
    for (k, v) in [
        ("type", "Float64"),
        ("Name", "density"),
        ("NumberOfComponents", "1"),
        ("format", "appended"),
        ("offset", "0"),
    ] {
        assert_eq!(attr(header, "<DataArray", k), v);
    }

    let body = &bytes[underscore + 1..];
    let count = u64::from_le_bytes(body[..8].try_into().unwrap());
    assert_eq!(count, 8 * 60, "byte count of 60 Float64 values");
    let data = &body[8..8 + count as usize];
    let back: Vec<f64> = data
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(back.len(), 60);
    assert!(back
        .iter()
        .zip(&rho)
        .all(|(a, b)| a.to_bits() == b.to_bits()));
    let tail = std::str::from_utf8(&body[8 + count as usize..]).unwrap();
    assert_eq!(tail, "\n  </AppendedData>\n</VTKFile>\n");
}

// ---------------------------------------------------------------- PNG

#[test]
fn views_decode_with_the_laid_out_size_and_show_a_single_voxel() {
    let n = [7, 6, 5];
    // One solid voxel off every mid-plane (mid = 3, 3, 2).
    let voxel = [1, 4, 3];
    let mut rho = vec![0.0; 7 * 6 * 5];
    rho[voxel[0] + 7 * (voxel[1] + 6 * voxel[2])] = 1.0;
    let f = field(n, 1.0, &rho);
    let pngs = view_pngs(&f).unwrap();
    let names: Vec<&str> = pngs.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(names, ["view_x.png", "view_y.png", "view_z.png"]);
    let (white, black) = (grey(0.0), grey(1.0));
    assert_eq!((white.0, black.0), ([255; 3], [0; 3]));

    for (axis, (_, bytes)) in pngs.iter().enumerate() {
        let img = image::load_from_memory(bytes).unwrap().to_rgb8();
        let l = view_layout(&f, axis);
        assert_eq!((img.width(), img.height()), (l.width, l.height));
        let (u, v) = [(1, 2), (0, 2), (0, 1)][axis];
        let (nu, nv) = (n[u] as u32, n[v] as u32);
        assert_eq!(l.merge, 1);
        assert_eq!((l.panel_w, l.panel_h), (nu * l.px, nv * l.px));
        let black_in = |at: (u32, u32)| -> Vec<(u32, u32)> {
            let mut cells = Vec::new();
            for cv in 0..nv {
                for cu in 0..nu {
                    // Centre of element (cu, cv)'s pixel block, v up.
                    let x = at.0 + cu * l.px + l.px / 2;
                    let y = at.1 + (nv - 1 - cv) * l.px + l.px / 2;
                    let p = *img.get_pixel(x, y);
                    assert!(p == white || p == black, "axis {axis}: {p:?}");
                    if p == black {
                        cells.push((cu, cv));
                    }
                }
            }
            cells
        };
        let want = (voxel[u] as u32, voxel[v] as u32);
        assert_eq!(
            black_in(l.max_at),
            [want],
            "max projection along axis {axis}"
        );
        assert!(
            black_in(l.slice_at).is_empty(),
            "mid-plane along axis {axis}"
        );
    }
}

#[test]
fn views_merge_elements_by_their_maximum_on_long_fields() {
    let n = [2100, 3, 2];
    let mut rho = vec![0.0; 2100 * 6];
    rho[1234 + 2100 * (1 + 3)] = 1.0; // (1234, 1, 1): on the z mid-plane
    let f = field(n, 1.0, &rho);
    let l = view_layout(&f, 2);
    assert_eq!((l.merge, l.px), (3, 1));
    assert_eq!(l.panel_w, 700);
    let img = image::load_from_memory(&view_pngs(&f).unwrap()[2].1)
        .unwrap()
        .to_rgb8();
    // Column 1234 / 3 = 411, row for y = 1 of a 1-pixel-per-block panel of height 1.
    let rows = 3u32.div_ceil(3);
    for at in [l.slice_at, l.max_at] {
        let p = *img.get_pixel(at.0 + 411, at.1 + rows - 1);
        assert_eq!(p, grey(1.0));
        assert_eq!(*img.get_pixel(at.0 + 410, at.1), grey(0.0));
    }
}

#[test]
fn view_texts_are_drawn_with_the_truetype_font() {
    let f = field([7, 6, 5], 1.0, &[0.5; 7 * 6 * 5]);
    let img = image::load_from_memory(&view_pngs(&f).unwrap()[0].1)
        .unwrap()
        .to_rgb8();
    let l = view_layout(&f, 0);
    // The title band (above the panels): ink, and anti-aliased edges, which
    // a bitmap font (ink or background only) does not have.
    let (mut ink, mut shades) = (0, 0);
    for y in 0..l.slice_at.1.saturating_sub(2) {
        for x in 0..l.width {
            let p = img.get_pixel(x, y).0;
            if p[0] < 100 {
                ink += 1;
            } else if p[0] < 240 {
                shades += 1;
            }
        }
    }
    assert!(ink > 50 && shades > 50, "ink {ink}, shades {shades}");
    // Nothing drawn over the panels: a uniform density is one grey there.
    let g = grey(0.5);
    for at in [l.slice_at, l.max_at] {
        for y in at.1..at.1 + l.panel_h {
            for x in at.0..at.0 + l.panel_w {
                assert_eq!(*img.get_pixel(x, y), g, "({x}, {y})");
            }
        }
    }
}
