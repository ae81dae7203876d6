//! The non-symmetric part of a liquid-cooled system: each coolant cell's
//! coupling to the cell upstream of it and, with central differencing
//! (`stack::AdvectionScheme::Central`), to the cell downstream. The solid
//! stack keeps its Quad-Diag (whose diagonal holds each coolant cell's
//! advective outflow); only these couplings are added, so a stack without
//! cavities stores nothing more.
//!
//! Storage: per coolant cell a row index and an upstream index (u32) and
//! one coefficient (f64), 16 B per coolant cell; central differencing adds
//! a downstream index and coefficient, 12 B more. The solid cells add none.
//! The entries run along each coolant line in flow order, so that one pass
//! forward (upwind: the line's bidiagonal chain) or forward and back
//! (central: its tridiagonal chain) solves a line.

/// `(A x)[cell[k]] −= w[k] · x[up[k]]` for every entry with an upstream
/// cell, and `(A x)[cell[k]] += w_down[k] · x[down[k]]` for every entry
/// with a downstream coupling.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Advection {
    /// Row of each coolant cell.
    pub cell: Vec<u32>,
    /// The cell upstream of it, or [`INLET`] for a line's first cell.
    pub up: Vec<u32>,
    /// ṁ·c carried in from upstream, W/K: A[cell, up] = −w.
    pub w: Vec<f64>,
    /// The cell downstream of it ([`OUTLET`] for a line's last cell);
    /// empty when no entry has one (upwind).
    pub down: Vec<u32>,
    /// A[cell, down] = +w_down; empty with `down`.
    pub w_down: Vec<f64>,
    /// A[cell, cell] = d − w_self: the part of the Quad-Diag's diagonal
    /// that the operator takes back (empty with `down`). Central
    /// differencing keeps the upwind diagonal ṁ·c in the Quad-Diag, so
    /// that the multigrid of the symmetric part sees the coolant as the
    /// sink it is, and takes the difference back here.
    pub w_self: Vec<f64>,
}

/// No upstream cell: the coolant enters at the inlet temperature (a
/// right-hand-side term).
pub const INLET: u32 = u32::MAX;

/// No downstream coupling: a line's last cell.
pub const OUTLET: u32 = u32::MAX;

impl Advection {
    /// Coolant cells.
    pub fn len(&self) -> usize {
        self.cell.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cell.is_empty()
    }

    /// Whether some entry couples downstream (central differencing).
    pub fn has_down(&self) -> bool {
        !self.down.is_empty()
    }

    /// The diagonal the operator takes back at entry `k` (0 upwind).
    pub fn self_of(&self, k: usize) -> f64 {
        self.w_self.get(k).copied().unwrap_or(0.0)
    }

    /// The downstream coupling of entry `k`, if any.
    fn down_of(&self, k: usize) -> Option<(usize, f64)> {
        match self.down.get(k) {
            Some(&d) if d != OUTLET => Some((d as usize, self.w_down[k])),
            _ => None,
        }
    }

    /// y += `scale` · (the couplings L) x on the coolant cells only, A =
    /// S − L: −1 completes a Quad-Diag product into A x, +1 a Quad-Diag
    /// residual into b − A x.
    pub fn add_couplings(&self, scale: f64, x: &[f64], y: &mut [f64]) {
        for (k, (&c, &u)) in self.cell.iter().zip(&self.up).enumerate() {
            let mut l = 0.0;
            if u != INLET {
                l += self.w[k] * x[u as usize];
            }
            if let Some((d, wd)) = self.down_of(k) {
                l -= wd * x[d];
            }
            l += self.self_of(k) * x[c as usize];
            y[c as usize] += scale * l;
        }
    }

    /// z = (D − L)⁻¹ r on the coolant cells, D the diagonal `d` (less
    /// `w_self`), L the
    /// couplings of each line: a forward pass in flow order (the Thomas
    /// algorithm's; the whole solve for upwind couplings) and, with
    /// downstream couplings, the pass back. Exact for the chain of a line
    /// cut from its walls. Entries of z off the coolant are untouched.
    pub fn line_solve(&self, d: &[f64], r: &[f64], z: &mut [f64]) {
        // The forward pass's ratios c'_k = w_down / pivot (central only).
        let mut ratio = vec![0.0; if self.has_down() { self.len() } else { 0 }];
        let mut start = 0;
        for k in 0..self.len() {
            let (c, u) = (self.cell[k] as usize, self.up[k]);
            if u == INLET {
                start = k;
            }
            let (upstream, prev_ratio) = match u {
                INLET => (0.0, 0.0),
                _ => (
                    self.w[k] * z[u as usize],
                    ratio.get(k.wrapping_sub(1)).copied().unwrap_or(0.0),
                ),
            };
            let pivot = d[c] - self.self_of(k) + self.w[k] * prev_ratio;
            z[c] = (r[c] + upstream) / pivot;
            if let Some((_, wd)) = self.down_of(k) {
                ratio[k] = wd / pivot;
            }
            let last = self.up.get(k + 1).is_none_or(|&n| n == INLET);
            if last && !ratio.is_empty() {
                for j in (start..k).rev() {
                    if let Some((dn, _)) = self.down_of(j) {
                        z[self.cell[j] as usize] -= ratio[j] * z[dn];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line of 4 cells, central couplings: the line solve against a
    /// dense tridiagonal solve written out by hand (Cramer-free: the
    /// product of the answer with the matrix gives r back).
    #[test]
    fn line_solve_inverts_the_tridiagonal_chain() {
        let a = Advection {
            cell: vec![7, 2, 5, 0],
            up: vec![INLET, 7, 2, 5],
            w: vec![0.0, 1.5, 1.5, 1.5],
            down: vec![2, 5, 0, OUTLET],
            w_down: vec![1.5, 1.5, 1.5, 0.0],
            w_self: vec![1.5, 3.0, 3.0, 1.5],
        };
        let mut d = vec![0.0; 8];
        for (&c, v) in a.cell.iter().zip([3.5, 3.7, 3.9, 4.0]) {
            d[c as usize] = v;
        }
        let r: Vec<f64> = (0..8).map(|i| 1.0 + i as f64).collect();
        let mut z = vec![-9.0; 8];
        a.line_solve(&d, &r, &mut z);
        // (D − L) z = r on the line's rows.
        let mut lz = vec![0.0; 8];
        a.add_couplings(1.0, &z, &mut lz);
        for &c in &a.cell {
            let c = c as usize;
            let got = d[c] * z[c] - lz[c];
            // (the self coupling is in lz: d·z − (… + w_self z))
            assert!((got - r[c]).abs() < 1e-12, "row {c}: {got} vs {}", r[c]);
        }
        assert_eq!(z[1], -9.0, "a cell off the line is untouched");
    }

    /// Upwind lines: one forward pass, z = (r + w z_up) / d.
    #[test]
    fn upwind_line_solve_is_the_forward_sweep() {
        let a = Advection {
            cell: vec![0, 1, 2, 3, 4],
            up: vec![INLET, 0, 1, INLET, 3],
            w: vec![2.0; 5],
            ..Advection::default()
        };
        let d = vec![3.0; 5];
        let r = vec![1.0; 5];
        let mut z = vec![0.0; 5];
        a.line_solve(&d, &r, &mut z);
        let z1 = 1.0 / 3.0;
        let z2 = (1.0 + 2.0 * z1) / 3.0;
        let z3 = (1.0 + 2.0 * z2) / 3.0;
        assert_eq!(z[..3], [z1, z2, z3]);
        assert_eq!(z[3..], [z1, z2]);
    }
}
