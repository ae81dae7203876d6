//! k(T) with absent cells (CPU): the 1-D slab of `tests/solver/nonlinear.rs`
//! (k = k0·(T/T0)^n over a heater, cooled on top through h) as the one
//! present column of a 3 × 3 domain whose other cells have no material
//! (outlines with `fill = "none"`). Against the Kirchhoff-transform closed
//! form, and against the same slab without absent cells, cell for cell.

use cuth::backend::cpu::CpuBackend;
use cuth::linalg::PrecondKind;
use cuth::stack::Stack;
use cuth::thermal::steady::{solve_steady, SteadyOptions};
use std::path::Path;

const SLAB_N: usize = 400;

fn slab(n: f64, absent_around: bool) -> Stack {
    let (domain, grid, outline) = if absent_around {
        (
            "[package]\nwidth=3e-3\nlength=3e-3\n[grid]\nnx=3\nny=3\n",
            3,
            "outline={ x=1e-3, y=1e-3, width=1e-3, length=1e-3 }\nfill=\"none\"\n",
        )
    } else {
        (
            "[package]\nwidth=1e-3\nlength=1e-3\n[grid]\nnx=1\nny=1\n",
            1,
            "",
        )
    };
    assert!(grid > 0);
    let text = format!(
        "{domain}[boundary]\nambient=300\nh_top=1e4\n\
         [materials.heater]\nk=100\nheat_capacity=1e6\n\
         [materials.slab]\nk={{ k300 = 10.0, exponent = {n} }}\nheat_capacity=1e6\n\
         [solver]\nprecond=\"jacobi\"\n\
         [[layers]]\nname=\"heater\"\nmaterial=\"heater\"\nthickness=1e-5\n{outline}\
         power={{ type=\"uniform\", total=0.05 }}\n\
         [[layers]]\nname=\"slab\"\nmaterial=\"slab\"\nthickness=1e-3\ncells={SLAB_N}\n{outline}"
    );
    Stack::from_toml(&text, Path::new("test.toml")).unwrap()
}

fn solve(s: &Stack) -> Vec<f64> {
    let mut o = SteadyOptions::from_stack(s, PrecondKind::Jacobi);
    o.rtol = 1e-11;
    o.max_iter = 200_000;
    o.nonlinear.tol_k = 1e-10;
    o.nonlinear.energy_tol = 1e-9;
    let out = solve_steady(&CpuBackend::new(), s, &o).unwrap();
    let nl = out.summary.nonlinear.as_ref().expect("a nonlinear report");
    assert!(nl.outer_iterations > 1);
    assert!(
        out.summary.energy.relative_error < 1e-9,
        "{:?}",
        out.summary.energy
    );
    out.temperature_k
}

#[test]
fn kt_slab_among_absent_cells_matches_kirchhoff_and_the_bare_slab() {
    for n in [-1.3f64, 0.8] {
        let with_absent = solve(&slab(n, true));
        let bare = solve(&slab(n, false));
        // Kirchhoff: Φ(T) = T0/(n+1)·(T/T0)^(n+1) is linear in z through the
        // source-free slab, and the surface sits at T_s = T_amb + q/h.
        let (q, h, k0, t0, l): (f64, f64, f64, f64, f64) = (0.05 / 1e-6, 1e4, 10.0, 300.0, 1e-3);
        let ts = 300.0 + q / h;
        let (mut worst, mut same): (f64, f64) = (0.0, 0.0);
        for i in 0..SLAB_N {
            let z = (i as f64 + 0.5) * l / SLAB_N as f64;
            let u = (ts / t0).powf(n + 1.0) + (n + 1.0) * q * (l - z) / (k0 * t0);
            let exact = t0 * u.powf(1.0 / (n + 1.0));
            // The centre cell (4) of the 3 × 3 plane; the heater is z = 0.
            let got = with_absent[(1 + i) * 9 + 4];
            worst = worst.max((got - exact).abs());
            same = same.max((got - bare[1 + i]).abs());
        }
        println!("n = {n}: max |T − T_exact| = {worst:.3e} K, max |T − T_bare| = {same:.3e} K");
        // Measured 9.0e-8 K (n = −1.3) and 5.0e-8 K (n = 0.8); identical to
        // the bare slab to 6e-14 K.
        assert!(worst < 1e-6, "n = {n}: max |T − T_exact| = {worst:e} K");
        assert!(same < 1e-9, "n = {n}: max |T − T_bare| = {same:e} K");
        // The heater cell too.
        assert!((with_absent[4] - bare[0]).abs() < 1e-8);
    }
}
