//! A constant reference for the unknown: solve for x' = x − c·1 instead of x.
//!
//! Why: the attainable residual of any f64 vector x is limited by the rounding
//! of x itself, ≈ ε·g·|x| per row against a right-hand side that shrinks as
//! 1/N² with the in-plane grid. On mol_f2f the copper layers sit ~77 K above
//! ambient with in-plane conductances that do not shrink with N, and the
//! relative residual cannot go below ~1.3e-8 at 2048² (measured: PCG with
//! residual replacement stagnates there). The rise varies by only a few K
//! around the film's mean, so writing x = c + x' gives x' ~10× more digits.
//!
//! With A·1 = amb (the coupling to ambient, `QuadDiag::amb`),
//! A x' = b − c·amb. Choosing c = Σb / Σamb, the mean rise of a uniform film,
//! makes the shifted right-hand side sum to zero. Nothing changes when there
//! is no coupling to ambient.

use super::QuadDiag;

pub struct Offset {
    /// The constant c added back to the solution.
    pub c: f64,
    /// b − c·amb.
    pub rhs: Vec<f64>,
    /// ‖b‖ / ‖b − c·amb‖: the shifted system's residual relative to its own
    /// right-hand side, times this, is relative to the original ‖b‖.
    pub rtol_scale: f64,
    /// ‖b‖ of the original right-hand side: the reference of the solve's
    /// stopping test (`linalg::Stop::against`), so that the shifted solve
    /// stops at the same ‖r‖ ≤ rtol·‖b‖ as the plain one.
    pub b_norm: f64,
}

impl Offset {
    pub fn new(a: &QuadDiag, b: &[f64]) -> Offset {
        Offset::with_row_sums(&a.amb, b)
    }

    /// The offset of an operator whose row sums A·1 are `row_sums` (a
    /// Quad-Diag's are its `amb`; a liquid-cooled operator's differ).
    pub fn with_row_sums(row_sums: &[f64], b: &[f64]) -> Offset {
        let amb: f64 = row_sums.iter().sum();
        let c = if amb > 0.0 {
            b.iter().sum::<f64>() / amb
        } else {
            0.0
        };
        let rhs: Vec<f64> = b.iter().zip(row_sums).map(|(bi, ei)| bi - c * ei).collect();
        let norm = |v: &[f64]| v.iter().map(|t| t * t).sum::<f64>().sqrt();
        let (nb, ns) = (norm(b), norm(&rhs));
        let rtol_scale = if ns > 0.0 { nb / ns } else { 1.0 };
        Offset {
            c,
            rhs,
            rtol_scale,
            b_norm: nb,
        }
    }

    /// x = c + x'.
    pub fn restore(&self, shifted: &mut [f64]) {
        shifted.iter_mut().for_each(|x| *x += self.c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shifted_rhs_is_b_minus_a_times_the_constant() {
        let mut a = QuadDiag::zeros(3, 2, 2);
        for i in 0..a.len() {
            a.gx[i] = if i % 3 < 2 { 1.5 } else { 0.0 };
            a.gy[i] = if (i / 3) % 2 == 0 { 0.7 } else { 0.0 };
            a.gz[i] = if i < 6 { 2.0 } else { 0.0 };
            a.amb[i] = if i >= 6 { 0.25 } else { 0.0 };
        }
        for i in 0..a.len() {
            // d = off-diagonal sum + amb, as assembly makes it.
            let mut d = a.gx[i] + a.gy[i] + a.gz[i] + a.amb[i];
            if i >= 1 {
                d += a.gx[i - 1];
            }
            if i >= 3 {
                d += a.gy[i - 3];
            }
            if i >= 6 {
                d += a.gz[i - 6];
            }
            a.d[i] = d;
        }
        let b = vec![0.1, 0.0, 0.3, 0.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let off = Offset::new(&a, &b);
        assert!((off.c - 0.6 / 1.5).abs() < 1e-15);
        assert!(off.rhs.iter().sum::<f64>().abs() < 1e-15);
        // A·(c·1) = c·amb, by the row formula.
        let ones = vec![off.c; a.len()];
        for (i, (bi, ri)) in b.iter().zip(&off.rhs).enumerate() {
            let ac: f64 = a.row_apply(&ones, i);
            assert!((bi - ac - ri).abs() < 1e-14, "row {i}");
        }
    }
}
