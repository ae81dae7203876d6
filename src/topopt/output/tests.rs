//! Checks of the topopt outputs against independent references: the VTK
//! file parsed back byte by byte, PNG pixels at computed positions, the
//! isosurface's closedness (every directed edge matched by its reverse),
//! its volume against 4/3·πr³ and against the exact volume of a cut box,
//! the STL layout, and the staged writer's all-or-nothing behaviour.

use super::views::{grey, view_layout};
use super::*;
use std::collections::HashMap;

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

// ---------------------------------------------------------------- isosurface

/// Closed and consistently oriented: each directed edge (by exact vertex
/// bits) occurs once and its reverse once, so every edge is shared by
/// exactly two triangles that traverse it in opposite directions.
fn assert_closed(mesh: &Mesh) {
    let key = |p: [f32; 3]| p.map(f32::to_bits);
    let mut directed: HashMap<([u32; 3], [u32; 3]), usize> = HashMap::new();
    for t in &mesh.triangles {
        for k in 0..3 {
            let (a, b) = (key(t[k]), key(t[(k + 1) % 3]));
            assert_ne!(a, b, "degenerate triangle {t:?}");
            *directed.entry((a, b)).or_default() += 1;
        }
    }
    for (&(a, b), &count) in &directed {
        assert_eq!(count, 1, "edge {a:?} → {b:?} used {count} times one way");
        assert_eq!(
            directed.get(&(b, a)),
            Some(&1),
            "edge {a:?} → {b:?} unmatched"
        );
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

#[test]
fn sphere_is_closed_and_its_volume_converges_to_four_thirds_pi_r_cubed() {
    let r = 0.3;
    let exact = 4.0 / 3.0 * std::f64::consts::PI * r * r * r;
    let err = |n: usize| {
        let rho = ball(n, r);
        let mesh = isosurface(&field([n; 3], 1.0 / n as f64, &rho), 0.5);
        assert_closed(&mesh);
        let v = mesh.volume();
        assert!(v > 0.0, "outward orientation gives a positive volume");
        (v - exact).abs() / exact
    };
    let (coarse, fine) = (err(16), err(32));
    assert!(coarse < 0.03, "16³: volume off by {:.2} %", 100.0 * coarse);
    // Second order: doubling the resolution cuts the error about fourfold.
    assert!(fine < coarse / 2.5, "16³: {coarse:.2e}, 32³: {fine:.2e}");
}

#[test]
fn every_corner_configuration_gives_a_closed_surface() {
    // A 2 × 2 × 2 field is one inner cube; the zero pad closes it off.
    let mut r = lcg(7);
    for config in 0..=255u8 {
        let rho: Vec<f64> = (0..8)
            .map(|c| {
                let x = r();
                if config >> c & 1 == 1 {
                    0.5 + 0.5 * x.max(1e-3)
                } else {
                    0.5 * x
                }
            })
            .collect();
        let mesh = isosurface(&field([2, 2, 2], 1.0, &rho), 0.5);
        assert_closed(&mesh);
        let v = mesh.volume();
        assert_eq!(v > 0.0, config != 0, "config {config:#010b}: volume {v}");
    }
}

#[test]
fn random_fields_give_closed_oriented_surfaces() {
    for seed in 0..20 {
        let mut r = lcg(seed);
        let n = [6, 5, 4];
        let rho: Vec<f64> = (0..120).map(|_| r()).collect();
        let mesh = isosurface(&field(n, 0.1, &rho), 0.5);
        assert_closed(&mesh);
        assert!(mesh.volume() > 0.0, "seed {seed}");
        // Nothing outside the padded box of sample centres.
        for p in mesh.triangles.iter().flatten() {
            for (d, &x) in p.iter().enumerate() {
                assert!((0.0..=n[d] as f32 * 0.1).contains(&x), "{p:?}");
            }
        }
    }
}

#[test]
fn densities_equal_to_the_level_give_no_degenerate_triangles() {
    // Values on a coarse ladder that includes 0.5 itself, plus values
    // within f32 rounding of it.
    for seed in 0..10 {
        let mut r = lcg(100 + seed);
        let rho: Vec<f64> = (0..120)
            .map(|_| match (r() * 6.0) as usize {
                0 => 0.5 + 1e-12,
                1 => 0.5 - 1e-12,
                k => 0.25 * (k - 1) as f64 - 0.25,
            })
            .collect();
        assert!(rho.contains(&0.5));
        let mesh = isosurface(&field([6, 5, 4], 1e-3, &rho), 0.5);
        assert_closed(&mesh);
        assert!(mesh.volume() > 0.0);
    }
}

#[test]
fn void_gives_no_triangles_and_solid_a_closed_cut_box() {
    let n = [3, 4, 5];
    let h = 0.5;
    let void = vec![0.499; 60];
    assert!(isosurface(&field(n, h, &void), 0.5).triangles.is_empty());

    let solid = vec![1.0; 60];
    let mesh = isosurface(&field(n, h, &solid), 0.5);
    assert_closed(&mesh);
    // The surface lies on the domain faces, with edges and corners cut by
    // the interpolation: each box edge loses a prism of section h²/8 along
    // its (n−1)·h between end centres, each corner h³/8 − h³/48. So
    // V/h³ = nx·ny·nz − (nx + ny + nz − 3)/2 − 5/6 (a single element gives
    // the octahedron 1/6).
    let (a, b, c) = (3.0, 4.0, 5.0);
    let want = (a * b * c - (a + b + c - 3.0) / 2.0 - 5.0 / 6.0) * h * h * h;
    assert!(
        (mesh.volume() - want).abs() < 1e-9,
        "{} vs {want}",
        mesh.volume()
    );
    let one = isosurface(&field([1, 1, 1], 1.0, &[1.0]), 0.5);
    assert!((one.volume() - 1.0 / 6.0).abs() < 1e-12);
    // Bounding box = the domain.
    for d in 0..3 {
        let xs = mesh.triangles.iter().flatten().map(|p| p[d]);
        let (lo, hi) = xs.fold((f32::MAX, f32::MIN), |(l, u), x| (l.min(x), u.max(x)));
        assert_eq!((lo, hi), (0.0, n[d] as f32 * 0.5));
    }
}

#[test]
fn non_finite_densities_count_as_void() {
    let rho = [f64::NAN, 1.0, f64::INFINITY, 1.0];
    let with_nan = isosurface(&field([4, 1, 1], 1.0, &rho), 0.5);
    let with_zero = isosurface(&field([4, 1, 1], 1.0, &[0.0, 1.0, 0.0, 1.0]), 0.5);
    assert_closed(&with_nan);
    assert_eq!(with_nan.triangles, with_zero.triangles);
}

// ---------------------------------------------------------------- STL

#[test]
fn binary_stl_has_header_count_and_fifty_bytes_a_triangle() {
    let rho = ball(8, 0.3);
    let mesh = isosurface(&field([8; 3], 0.125, &rho), 0.5);
    let n = mesh.triangles.len();
    assert!(n > 0);
    let stl = stl_binary(&mesh, "ball ✓");
    assert_eq!(stl.len(), 84 + 50 * n);
    assert!(!stl.starts_with(b"solid"));
    assert!(stl[..80].starts_with(b"cuth topopt: ball _"));
    assert_eq!(
        u32::from_le_bytes(stl[80..84].try_into().unwrap()) as usize,
        n
    );
    let f = |o: usize| f32::from_le_bytes(stl[o..o + 4].try_into().unwrap());
    for (i, t) in mesh.triangles.iter().enumerate().step_by(17) {
        let o = 84 + 50 * i;
        let normal = [f(o), f(o + 4), f(o + 8)];
        let len = normal.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((len - 1.0).abs() < 1e-5);
        for (k, p) in t.iter().enumerate() {
            for (d, &x) in p.iter().enumerate() {
                assert_eq!(f(o + 12 + 12 * k + 4 * d), x);
            }
        }
        // Outward: the normal points away from the ball's centre.
        let c: Vec<f32> = (0..3)
            .map(|d| t.iter().map(|p| p[d]).sum::<f32>() / 3.0 - 0.5)
            .collect();
        assert!(normal.iter().zip(&c).map(|(a, b)| a * b).sum::<f32>() > 0.0);
        assert_eq!(&stl[o + 48..o + 50], &[0, 0]);
    }
    let empty = stl_binary(&Mesh::default(), "");
    assert_eq!(empty.len(), 84);
    assert_eq!(&empty[80..84], &[0, 0, 0, 0]);
}

// ---------------------------------------------------------------- CSV, JSON, files

fn rows() -> Vec<HistoryRow> {
    (1..=3)
        .map(|i| HistoryRow {
            iteration: i,
            compliance: 100.0 / i as f64,
            volume: 0.3,
            grayness: 0.1 / i as f64,
            cg_iterations: 10 * i,
            seconds: 0.25,
            beta: 1.0,
            penal: 3.0,
        })
        .collect()
}

#[test]
fn history_csv_has_the_header_and_one_row_per_iteration() {
    let rows = rows();
    let csv = history_csv(&rows);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "iteration,compliance,volume,grayness,cg_iterations,seconds,beta,penal"
    );
    assert_eq!(lines.len(), 4);
    for (line, r) in lines[1..].iter().zip(&rows) {
        let v: Vec<f64> = line.split(',').map(|s| s.parse().unwrap()).collect();
        let want = [
            r.iteration as f64,
            r.compliance,
            r.volume,
            r.grayness,
            r.cg_iterations as f64,
            r.seconds,
            r.beta,
            r.penal,
        ];
        assert_eq!(v, want);
    }
    assert_eq!(history_csv(&[]).lines().count(), 1);
    assert!(progress_message(&rows[0]).contains("vol 0.300"));
}

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn write_outputs_writes_every_file_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let rho = ball(10, 0.3);
    let f = field([10; 3], 0.1, &rho);
    let summary = serde_json::json!({"problem": "ball", "compliance": 1.5});
    let dir = tmp.path().join("out");
    let paths = write_outputs(&dir, &f, &rows(), &summary).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let want = [
        "density.vti",
        "view_x.png",
        "view_y.png",
        "view_z.png",
        "design.stl",
        "history.csv",
        "summary.json",
    ];
    assert_eq!(names, want);
    let mut sorted = want.map(String::from).to_vec();
    sorted.sort();
    assert_eq!(listing(&dir), sorted, "no temporaries left");
    assert_eq!(std::fs::read(&paths[0]).unwrap(), vtk_image(&f));
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&paths[6]).unwrap()).unwrap();
    assert_eq!(back, summary);
    let stl = std::fs::read(&paths[4]).unwrap();
    assert_eq!(stl.len(), 84 + 50 * isosurface(&f, 0.5).triangles.len());

    // A commit that cannot complete (a directory squats on the STL's
    // name) removes what was staged and leaves no real file.
    let blocked = tmp.path().join("blocked");
    std::fs::create_dir_all(blocked.join("design.stl")).unwrap();
    assert!(write_outputs(&blocked, &f, &rows(), &summary).is_err());
    assert_eq!(listing(&blocked), ["design.stl"]);

    // A directory that cannot be created: under a regular file.
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert!(write_outputs(&file.join("out"), &f, &rows(), &summary).is_err());

    // A malformed field is refused before anything is created.
    let short = field([10; 3], 0.1, &rho[..999]);
    let fresh = tmp.path().join("fresh");
    let err = write_outputs(&fresh, &short, &rows(), &summary).unwrap_err();
    assert!(
        format!("{err:#}").contains("999 values for 10 × 10 × 10 = 1000"),
        "{err:#}"
    );
    assert!(!fresh.exists());
}

#[test]
fn field_check_names_the_fault() {
    let rho = [0.5; 6];
    assert_eq!(field([1, 2, 3], 1.0, &rho).check(), Ok(()));
    assert!(matches!(
        field([0, 2, 3], 1.0, &rho).check(),
        Err(FieldError::Empty { .. })
    ));
    assert!(matches!(
        field([2, 2, 2], 1.0, &rho).check(),
        Err(FieldError::Length {
            want: 8,
            got: 6,
            ..
        })
    ));
    assert!(matches!(
        field([usize::MAX, 2, 3], 1.0, &rho).check(),
        Err(FieldError::TooLarge { .. })
    ));
    for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            field([1, 2, 3], h, &rho).check(),
            Err(FieldError::ElementSize(_))
        ));
    }
}
