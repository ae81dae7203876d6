//! Checks of the liquid-cooled steady state against hand-computed
//! references: the single straight channel, the energy balance, the mirror
//! of a reversed flow, the fast-flow limit.

use super::*;
use crate::backend::cpu::CpuBackend;
use std::path::Path;

/// Three layers: a powered silicon die, a 4RM cavity of one channel
/// (walls 25 µm, channel 50 µm: three columns), a silicon lid. The solid is
/// made nearly non-conducting along the flow (`ky`) and the side and top
/// films nearly closed, so that each slice's power reaches the coolant
/// through the bottom film alone: the case with a closed-form answer.
fn straight_channel(ny: usize, flow: &str, direction: &str, extra: &str) -> String {
    format!(
        r#"
[chip]
width = "100 um"
length = "1 mm"
[grid]
nx = 3
ny = {ny}
[boundary]
ambient = 300
{extra}
[materials]
si = {{ kx = 150, ky = 1e-6, kz = 150, heat_capacity = 1.6e6 }}
[[layers]]
name = "die"
material = "si"
thickness = "50 um"
power = {{ type = "uniform", total = 0.5 }}
[[layers]]
name = "cavity"
material = "si"
thickness = "100 um"
[layers.cavity]
model = "4rm"
channel_width = "50 um"
wall_width = "50 um"
first_wall_width = "25 um"
last_wall_width = "25 um"
flow = "{flow}"
direction = "{direction}"
inlet = "300 K"
coolant = {{ heat_capacity = 4.172638e6 }}
h = {{ side = 1e-9, top = 1e-9, bottom = 2e5 }}
[[layers]]
name = "lid"
material = "si"
thickness = "50 um"
"#
    )
}

fn solve(text: &str) -> LiquidSolution {
    let stack = Stack::from_toml(text, Path::new("test.toml")).unwrap();
    solve_liquid(&CpuBackend::new(), &stack, 1e-12).unwrap()
}

#[test]
fn straight_channel_rises_linearly_with_the_wall_a_film_above() {
    let ny = 16;
    // Fast enough that neighbouring slices differ by 0.5 mK, so that the
    // solid's small `ky` carries < 1e-10 K worth along the flow (at 10
    // ml/min it shows: 2e-8 K at the ends, where a slice has one neighbour).
    let s = solve(&straight_channel(ny, "1000 ml/min", "+y", ""));
    let w = 1000e-6 / 60.0 * 4.172638e6;
    let q = 0.5 / ny as f64; // W per slice
    let (dx, dy) = (50e-6, 1e-3 / ny as f64);
    let film_k_per_w = 1.0 / (2e5 * dx * dy) + 25e-6 / (150.0 * dx * dy);
    let plane = 3 * ny;
    for p in 0..ny {
        let fluid = s.theta[plane + 1 + 3 * p];
        let want = q * (p + 1) as f64 / w;
        assert!(
            (fluid - want).abs() < 1e-9,
            "coolant at {p}: {fluid} vs {want}"
        );
        let die = s.theta[1 + 3 * p];
        assert!(
            (die - fluid - q * film_k_per_w).abs() < 1e-9,
            "die over coolant at {p}: {} vs {}",
            die - fluid,
            q * film_k_per_w
        );
    }
    assert_eq!(s.method, "bicgstab");
}

#[test]
fn power_leaves_through_sinks_and_coolant() {
    let s = solve(&straight_channel(12, "0.05 ml/min", "+y", "h_top = 5e3"));
    assert!(s.sinks_w > 0.01 * s.power_w && s.coolant_w > 0.01 * s.power_w);
    assert!(s.balance_error() < 1e-10, "{}", s.balance_error());
}

#[test]
fn reversing_the_flow_mirrors_the_field() {
    let ny = 10;
    let extra = "h_top = 5e3";
    let a = solve(&straight_channel(ny, "0.05 ml/min", "+y", extra));
    let b = solve(&straight_channel(ny, "0.05 ml/min", "-y", extra));
    for z in 0..3 {
        for y in 0..ny {
            for x in 0..3 {
                let i = x + 3 * (y + ny * z);
                let m = x + 3 * (ny - 1 - y + ny * z);
                assert!((a.theta[i] - b.theta[m]).abs() < 1e-9 * a.theta[i].abs().max(1.0));
            }
        }
    }
}

#[test]
fn fast_flow_holds_the_coolant_at_the_inlet() {
    let ny = 8;
    let rise = |flow: &str| {
        let s = solve(&straight_channel(ny, flow, "+y", ""));
        s.coolant.outlet_theta(&s.theta)[0]
    };
    let (slow, fast, faster) = (rise("0.1 ml/min"), rise("10 ml/min"), rise("1000 ml/min"));
    assert!(slow > fast && fast > faster && faster > 0.0);
    // The outlet rises as 1/ṁ: P/(ṁ c).
    let w = 1000e-6 / 60.0 * 4.172638e6;
    assert!((faster - 0.5 / w).abs() < 1e-9 * faster.max(1e-12) + 1e-12);
}

#[test]
fn cavity_errors_name_the_field() {
    let err = |text: &str| {
        Stack::from_toml(text, Path::new("s.toml"))
            .unwrap_err()
            .to_string()
    };
    let base = straight_channel(4, "1 ml/min", "+y", "");
    let e = err(&base.replace("direction = \"+y\"", "direction = \"up\""));
    assert!(e.contains("s.toml") && e.contains("flow direction"), "{e}");
    let e = err(&base.replace("flow = \"1 ml/min\"", "flow = \"1 furlong\""));
    assert!(e.contains("flow rate"), "{e}");
    let e = err(&base.replace("channel_width = \"50 um\"", "channel_width = \"40 um\""));
    assert!(
        e.contains("cavity.channel_width") && e.contains("channels"),
        "{e}"
    );
    let e = err(&base.replace("model = \"4rm\"", "model = \"4rm\"\ncolour = 1"));
    assert!(e.contains("colour"), "{e}");
    let e = err(&base.replace("nx = 3", "nx = 4"));
    assert!(e.contains("grid.nx") && e.contains("must be 3"), "{e}");
    let e = err(&base.replace("h = { side", "hh = { side"));
    assert!(e.contains("hh"), "{e}");
}

/// BiCGStab with the upwind multigrid against a dense solve of the same
/// small non-symmetric system (Gaussian elimination with partial pivoting).
#[test]
fn bicgstab_matches_a_dense_solve() {
    let s = solve(&straight_channel(5, "0.05 ml/min", "+y", "h_top = 5e3"));
    let n = s.theta.len();
    let mut m = vec![vec![0.0; n]; n];
    for (j, col) in (0..n).map(|j| {
        (j, {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let mut y: Vec<f64> = (0..n).map(|i| s.system.a.row_apply(&e, i)).collect();
            s.coolant.advection.add_couplings(-1.0, &e, &mut y);
            y
        })
    }) {
        for i in 0..n {
            m[i][j] = col[i];
        }
    }
    let mut b = s.system.rhs.clone();
    for k in 0..n {
        let p = (k..n)
            .max_by(|&a, &c| m[a][k].abs().total_cmp(&m[c][k].abs()))
            .unwrap();
        m.swap(k, p);
        b.swap(k, p);
        let (pivot, rest) = m.split_at_mut(k + 1);
        let pivot = &pivot[k];
        for (i, row) in rest.iter_mut().enumerate() {
            let f = row[k] / pivot[k];
            for (r, p) in row[k..].iter_mut().zip(&pivot[k..]) {
                *r -= f * p;
            }
            b[k + 1 + i] -= f * b[k];
        }
    }
    let mut x = vec![0.0; n];
    for k in (0..n).rev() {
        x[k] = (b[k] - (k + 1..n).map(|j| m[k][j] * x[j]).sum::<f64>()) / m[k][k];
    }
    for (a, d) in s.theta.iter().zip(&x) {
        assert!((a - d).abs() < 1e-8 * d.abs().max(1.0), "{a} vs {d}");
    }
}

/// 3D-ICE's central differencing on the straight channel: the coolant's
/// chain C(θ₁ + θ₂) = q, C(θₚ₊₁ − θₚ₋₁) = q, C(θₙ − θₙ₋₁) = q (C = ṁc/2, q
/// per slice through the bottom film), solved here densely, and the
/// mixed outlet at inlet + P/(ṁ c) as any conservative scheme gives.
#[test]
fn central_differencing_solves_3dice_chain() {
    let ny = 8;
    let text = straight_channel(ny, "1000 ml/min", "+y", "").replace(
        "direction = \"+y\"",
        "direction = \"+y\"\nadvection = \"central\"",
    );
    let s = solve(&text);
    let w = 1000e-6 / 60.0 * 4.172638e6;
    let (c, q) = (0.5 * w, 0.5 / ny as f64);
    // The chain as a dense system, by Gaussian elimination.
    let mut m = vec![vec![0.0; ny + 1]; ny];
    for (p, row) in m.iter_mut().enumerate() {
        match p {
            0 => (row[0], row[1]) = (c, c),
            p if p + 1 == ny => (row[p - 1], row[p]) = (-c, c),
            p => (row[p - 1], row[p + 1]) = (-c, c),
        }
        row[ny] = q;
    }
    for k in 0..ny {
        let piv = (k..ny)
            .max_by(|&a, &b| m[a][k].abs().total_cmp(&m[b][k].abs()))
            .unwrap();
        m.swap(k, piv);
        for i in 0..ny {
            if i != k {
                let f = m[i][k] / m[k][k];
                let pivot_row = m[k].clone();
                for (v, p) in m[i].iter_mut().zip(&pivot_row) {
                    *v -= f * p;
                }
            }
        }
    }
    let plane = 3 * ny;
    for (p, row) in m.iter().enumerate() {
        let want = row[ny] / row[p];
        let fluid = s.theta[plane + 1 + 3 * p];
        assert!(
            (fluid - want).abs() < 1e-9,
            "coolant at {p}: {fluid} vs {want}"
        );
    }
    assert!(s.balance_error() < 1e-10, "{}", s.balance_error());
    let outlet = s.theta[plane + 1 + 3 * (ny - 1)];
    assert!((outlet - 0.5 / w).abs() < 1e-9, "{outlet}");
}
