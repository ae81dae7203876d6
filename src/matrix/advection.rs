//! The non-symmetric part of a liquid-cooled system: each coolant cell's
//! upwind coupling to the cell upstream of it. The solid stack keeps its
//! Quad-Diag (whose diagonal holds each coolant cell's advective outflow
//! ṁ·c); only these couplings are added, so a stack without cavities stores
//! nothing more.
//!
//! Storage: per coolant cell a row index and an upstream index (u32) and
//! one coefficient (f64), 16 B per coolant cell; the solid cells add none.
//! The entries run along each coolant line in flow order, so that a single
//! forward pass solves the line's bidiagonal chain.

/// `(A x)[cell[k]] −= w[k] · x[up[k]]` for every entry with an upstream cell.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Advection {
    /// Row of each coolant cell.
    pub cell: Vec<u32>,
    /// The cell upstream of it, or [`INLET`] for a line's first cell.
    pub up: Vec<u32>,
    /// ṁ·c of the line through the cell, W/K: A[cell, up] = −w.
    pub w: Vec<f64>,
}

/// No upstream cell: the coolant enters at the inlet temperature (a
/// right-hand-side term).
pub const INLET: u32 = u32::MAX;

impl Advection {
    /// Coolant cells.
    pub fn len(&self) -> usize {
        self.cell.len()
    }

    pub fn is_empty(&self) -> bool {
        self.cell.is_empty()
    }

    /// y += `scale` · (the upstream couplings) x, on the coolant cells
    /// only: −1 completes a Quad-Diag product into A x, +1 a Quad-Diag
    /// residual into b − A x.
    pub fn add_upstream(&self, scale: f64, x: &[f64], y: &mut [f64]) {
        for ((&c, &u), &w) in self.cell.iter().zip(&self.up).zip(&self.w) {
            if u != INLET {
                y[c as usize] += scale * w * x[u as usize];
            }
        }
    }

    /// z = (D − L)⁻¹ r on the coolant cells, D the diagonal `d`, L the
    /// upstream couplings: one pass in flow order, exact for the chain of a
    /// line cut from its walls. Entries of z off the coolant are untouched.
    pub fn upwind_sweep(&self, d: &[f64], r: &[f64], z: &mut [f64]) {
        for ((&c, &u), &w) in self.cell.iter().zip(&self.up).zip(&self.w) {
            let c = c as usize;
            let upstream = if u == INLET { 0.0 } else { w * z[u as usize] };
            z[c] = (r[c] + upstream) / d[c];
        }
    }
}
