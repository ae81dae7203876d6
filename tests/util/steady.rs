//! Steady solves against closed forms, one body per backend
//! (`solver::analytic` and `solver::preconditioners` run them on the CPU,
//! `gpu::steady` on CUDA): uniform power under adiabatic sides is a 1D
//! series-resistance network, solved here by hand; energy balance on a
//! stack with hot spots; Chebyshev needs fewer iterations than Jacobi on
//! the shipped memory-on-logic stack and reaches the same temperatures.

use super::{repo_path, stack, Rng};
use cuth::linalg::PrecondKind;
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::{solve_steady, SteadyOptions};

fn options(precond: PrecondKind) -> SteadyOptions {
    let mut o = SteadyOptions::from_stack(&stack(MINI), precond);
    o.rtol = 1e-11;
    o.max_iter = 100_000;
    o
}

const MINI: &str = "[chip]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=2\nny=2\n[boundary]\nambient=300\nh_top=1e3\n\
                    [materials.a]\nk=1\nheat_capacity=1e6\n[[layers]]\nname=\"a\"\nmaterial=\"a\"\nthickness=1e-4\n";

/// Temperatures of the z nodes of a 1D chain: node powers `p`, conductances
/// `g_up[j]` between node j and j+1, films `g_top`, `g_bottom` to ambient.
/// Solved as a tridiagonal system (Thomas algorithm), independent of cuth.
fn chain(p: &[f64], g_up: &[f64], g_top: f64, g_bottom: f64) -> Vec<f64> {
    let n = p.len();
    let (mut lower, mut diag, mut upper) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for j in 0..n {
        if j + 1 < n {
            diag[j] += g_up[j];
            diag[j + 1] += g_up[j];
            upper[j] = -g_up[j];
            lower[j + 1] = -g_up[j];
        }
    }
    diag[n - 1] += g_top;
    diag[0] += g_bottom;
    let (mut c, mut d) = (vec![0.0; n], vec![0.0; n]);
    for j in 0..n {
        let m = diag[j] - if j > 0 { lower[j] * c[j - 1] } else { 0.0 };
        c[j] = upper[j] / m;
        d[j] = (p[j] - if j > 0 { lower[j] * d[j - 1] } else { 0.0 }) / m;
    }
    let mut t = vec![0.0; n];
    for j in (0..n).rev() {
        t[j] = d[j] - if j + 1 < n { c[j] * t[j + 1] } else { 0.0 };
    }
    t
}

/// Per unit area: the 1D network of a stack whose powered layers are uniform.
fn series_solution(s: &Stack, layer_power_w: &[f64]) -> Vec<f64> {
    let area = s.width_m * s.length_m;
    let (mut dz, mut kz, mut p) = (vec![], vec![], vec![]);
    for (l, layer) in s.layers.iter().enumerate() {
        for _ in 0..layer.cells {
            dz.push(layer.thickness_m / layer.cells as f64);
            kz.push(layer.material.k[2]);
            p.push(layer_power_w[l] / area / layer.cells as f64);
        }
    }
    let n = dz.len();
    let g_up: Vec<f64> = (0..n.saturating_sub(1))
        .map(|j| 1.0 / (dz[j] / (2.0 * kz[j]) + dz[j + 1] / (2.0 * kz[j + 1])))
        .collect();
    let g_top = 1.0 / (dz[n - 1] / (2.0 * kz[n - 1]) + 1.0 / s.h_top);
    let g_bottom = s
        .h_bottom
        .map_or(0.0, |h| 1.0 / (dz[0] / (2.0 * kz[0]) + 1.0 / h));
    chain(&p, &g_up, g_top, g_bottom)
        .iter()
        .map(|t| t + s.ambient_k)
        .collect()
}

fn layered(rng: &mut Rng, h_bottom: bool) -> (Stack, Vec<f64>) {
    let layers = 3 + (rng.next_u64() % 4) as usize;
    let mut t = format!(
        "[chip]\nwidth=\"3 mm\"\nlength=\"2 mm\"\n[grid]\nnx=5\nny=4\n[boundary]\nambient=318.15\nh_top={}\n",
        rng.uniform(500.0, 5e4)
    );
    if h_bottom {
        t += &format!("h_bottom={}\n", rng.uniform(10.0, 1e3));
    }
    let mut powers = vec![];
    for l in 0..layers {
        t += &format!(
            "[materials.m{l}]\nkx={}\nky={}\nkz={}\nheat_capacity=2e6\n",
            rng.uniform(1.0, 300.0),
            rng.uniform(1.0, 300.0),
            rng.uniform(0.5, 300.0)
        );
    }
    for l in 0..layers {
        let power = if rng.next_u64().is_multiple_of(2) {
            rng.uniform(0.1, 5.0)
        } else {
            0.0
        };
        powers.push(power);
        t += &format!(
            "[[layers]]\nname=\"l{l}\"\nmaterial=\"m{l}\"\nthickness=\"{} um\"\ncells={}\n",
            rng.uniform(2.0, 800.0),
            1 + rng.next_u64() % 4
        );
        if power > 0.0 {
            t += &format!("power = {{ type = \"uniform\", total = {power} }}\n");
        }
    }
    (stack(&t), powers)
}

pub fn uniform_power_matches_series_resistance_solution<B: ThermalBackend + 'static>(be: &B) {
    let mut rng = Rng::new(2024);
    for case in 0..8 {
        let (s, powers) = layered(&mut rng, case % 2 == 1);
        let want = series_solution(&s, &powers);
        let out = solve_steady(be, &s, &options(PrecondKind::Chebyshev)).unwrap();
        let plane = s.nx * s.ny;
        let rise = want.iter().map(|t| t - s.ambient_k).fold(0.0f64, f64::max);
        for (i, t) in out.temperature_k.iter().enumerate() {
            let expect = want[i / plane];
            let err = (t - expect).abs() / rise;
            assert!(
                err < 1e-9,
                "case {case} cell {i}: {t} vs {expect} (rel to rise {err:e})"
            );
        }
    }
}

pub fn energy_balance_holds_with_hot_spots_and_two_sinks<B: ThermalBackend + 'static>(be: &B) {
    let t = "[chip]\nwidth=\"4 mm\"\nlength=\"3 mm\"\n[grid]\nnx=24\nny=17\n\
             [boundary]\nambient=300\nh_top=2e4\nh_bottom=150\n\
             [materials.si]\nk=130\nheat_capacity=1.63e6\n\
             [materials.beol]\nkx=20\nky=20\nkz=2\nheat_capacity=2e6\n\
             [[layers]]\nname=\"bulk\"\nmaterial=\"si\"\nthickness=\"100um\"\ncells=2\n\
             [[layers]]\nname=\"feol\"\nmaterial=\"si\"\nthickness=\"2um\"\n\
             power = { type = \"blocks\", blocks = [\n\
               { name = \"a\", x = \"0.3mm\", y = \"0.25mm\", width = \"1.1mm\", height = \"0.7mm\", power = 2.5 },\n\
               { name = \"b\", x = \"2.9mm\", y = \"2.1mm\", width = \"1.1mm\", height = \"0.9mm\", power = 0.75 } ] }\n\
             [[layers]]\nname=\"beol\"\nmaterial=\"beol\"\nthickness=\"10um\"\ncells=3\n";
    let s = stack(t);
    for precond in [PrecondKind::Jacobi, PrecondKind::Chebyshev] {
        let mut o = options(precond);
        o.rtol = 1e-12;
        let out = solve_steady(be, &s, &o).unwrap();
        let e = &out.summary.energy;
        assert!(
            (e.power_in_w - 3.25).abs() < 1e-12,
            "power in {}",
            e.power_in_w
        );
        assert!(e.heat_out_bottom_w > 0.0 && e.heat_out_top_w > e.heat_out_bottom_w);
        assert!(
            e.relative_error < 1e-8,
            "{precond:?}: energy balance {:e}",
            e.relative_error
        );
    }
}

/// Chebyshev needs fewer PCG iterations than Jacobi on mol_f2f at 128²,
/// and both reach the same temperatures.
pub fn chebyshev_needs_fewer_iterations_than_jacobi_on_mol_f2f_128<B: ThermalBackend + 'static>(
    be: &B,
) {
    let path = repo_path("configs/mol_f2f.toml");
    let stack = Stack::load(&path).unwrap().with_grid(128, 128).unwrap();
    let run = |kind| {
        let opts = SteadyOptions::from_stack(&stack, kind);
        let opts = SteadyOptions {
            precond: kind,
            ..opts
        };
        solve_steady(be, &stack, &opts).unwrap()
    };
    let jac = run(PrecondKind::Jacobi);
    let cheb = run(PrecondKind::Chebyshev);
    let (ij, ic) = (
        jac.summary.solver.iterations,
        cheb.summary.solver.iterations,
    );
    println!("mol_f2f 128x128: jacobi {ij} iterations, chebyshev {ic}");
    assert!(ic < ij, "chebyshev {ic} vs jacobi {ij}");
    let dt = jac
        .temperature_k
        .iter()
        .zip(&cheb.temperature_k)
        .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()));
    assert!(dt < 1e-3, "solutions differ by {dt} K");
}
