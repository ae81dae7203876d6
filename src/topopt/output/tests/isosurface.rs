//! Checks of the isosurface ([`isosurface`]): closed and consistently
//! oriented (every directed edge matched by its reverse) for a ball, every
//! corner configuration and random fields, its volume against 4/3·πr³ and
//! against the exact volume of a cut box; and the binary STL's layout. A
//! topic of `tests.rs`, whose fields it uses.

use super::*;
use std::collections::HashMap;

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
