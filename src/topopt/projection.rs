//! Smoothed Heaviside projection (Wang, Lazarov & Sigmund 2011), threshold
//! η = 0.5: ρ̄ = (tanh βη + tanh β(ρ̃ − η)) / (tanh βη + tanh β(1 − η)).
//! It maps 0 → 0 and 1 → 1 for every β and tends to a step at η as β grows,
//! pushing the filtered field towards black and white; continuation raises β
//! gradually because a sharp projection early makes OC oscillate.

use rayon::prelude::*;

pub const ETA: f64 = 0.5;

/// ρ̄ from ρ̃, elementwise.
pub fn project(beta: f64, filtered: &[f64], out: &mut [f64]) {
    let (a, d) = consts(beta);
    out.par_iter_mut()
        .zip(filtered.par_iter())
        .for_each(|(o, &x)| *o = (a + (beta * (x - ETA)).tanh()) / d);
}

/// dρ̄/dρ̃ = β (1 − tanh² β(ρ̃ − η)) / (tanh βη + tanh β(1 − η)).
pub fn derivative(beta: f64, filtered: &[f64], out: &mut [f64]) {
    let (_, d) = consts(beta);
    out.par_iter_mut()
        .zip(filtered.par_iter())
        .for_each(|(o, &x)| {
            let t = (beta * (x - ETA)).tanh();
            *o = beta * (1.0 - t * t) / d;
        });
}

fn consts(beta: f64) -> (f64, f64) {
    let a = (beta * ETA).tanh();
    (a, a + (beta * (1.0 - ETA)).tanh())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixes_0_half_1_and_derivative_matches_differences() {
        for beta in [1.0, 4.0, 32.0] {
            let mut y = [0.0; 3];
            project(beta, &[0.0, 0.5, 1.0], &mut y);
            assert!(y[0].abs() < 1e-15 && (y[1] - 0.5).abs() < 1e-15 && (y[2] - 1.0).abs() < 1e-15);
            let x = [0.3];
            let (mut d, mut p, mut m) = ([0.0], [0.0], [0.0]);
            derivative(beta, &x, &mut d);
            project(beta, &[0.3 + 1e-6], &mut p);
            project(beta, &[0.3 - 1e-6], &mut m);
            assert!(((p[0] - m[0]) / 2e-6 - d[0]).abs() < 1e-6 * d[0].max(1.0));
        }
    }
}
