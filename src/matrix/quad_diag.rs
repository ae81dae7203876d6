//! Quad-Diag storage of the symmetric 7-point operator: the
//! diagonal and the three upper off-diagonals, each of length n, stored as
//! positive conductances so that `A[i, i+1] = -gx[i]`, etc.
//!
//! Bytes per row of a f64 SpMV: 4 matrix values + x + y = 48 B.
//!
//! The residual b − A x is formed differently, from temperature differences:
//! `(A x)[i] = amb[i] x[i] + Σ g (x[i] − x[j])`. With the diagonal form, a
//! row of a nearly uniform field (a copper sink at +80 K) subtracts numbers
//! N² times larger than the power in the row, and the f64 rounding alone puts
//! the relative residual above 1e-8 at 2048² (measured). The difference form
//! loses nothing there, so the residual that PCG restarts from and that is
//! reported is the true one to working precision.

/// Host-side Quad-Diag matrix; backends upload it into their own storage.
#[derive(Clone, Debug, PartialEq)]
pub struct QuadDiag {
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    /// A[i, i].
    pub d: Vec<f64>,
    /// −A[i, i+1]; 0 where x = nx−1.
    pub gx: Vec<f64>,
    /// −A[i, i+nx]; 0 where y = ny−1.
    pub gy: Vec<f64>,
    /// −A[i, i+nx·ny]; 0 where z = nz−1.
    pub gz: Vec<f64>,
    /// `d[i]` minus the row's off-diagonal conductances, kept exactly (the
    /// coupling to ambient; 0 inside the stack). Read only by the residual.
    pub amb: Vec<f64>,
    /// Column widths (len nx) and row widths (len ny), m, of a non-uniform
    /// grid, for multigrid's rediscretisation; empty: all cells alike.
    pub wx: Vec<f64>,
    pub wy: Vec<f64>,
}

impl QuadDiag {
    pub fn zeros(nx: usize, ny: usize, nz: usize) -> QuadDiag {
        let n = nx * ny * nz;
        QuadDiag {
            nx,
            ny,
            nz,
            d: vec![0.0; n],
            gx: vec![0.0; n],
            gy: vec![0.0; n],
            gz: vec![0.0; n],
            amb: vec![0.0; n],
            wx: Vec::new(),
            wy: Vec::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.d.len()
    }

    pub fn is_empty(&self) -> bool {
        self.d.is_empty()
    }

    /// `(A x)[i]` for one row: the reference formula every backend must match.
    #[inline]
    pub fn row_apply(&self, x: &[f64], i: usize) -> f64 {
        let (sx, sy) = (1, self.nx);
        let sz = self.nx * self.ny;
        let mut y = self.d[i] * x[i];
        if i + sx < x.len() {
            y -= self.gx[i] * x[i + sx];
        }
        if i >= sx {
            y -= self.gx[i - sx] * x[i - sx];
        }
        if i + sy < x.len() {
            y -= self.gy[i] * x[i + sy];
        }
        if i >= sy {
            y -= self.gy[i - sy] * x[i - sy];
        }
        if i + sz < x.len() {
            y -= self.gz[i] * x[i + sz];
        }
        if i >= sz {
            y -= self.gz[i - sz] * x[i - sz];
        }
        y
    }

    /// `b[i] − (A x)[i]` from differences (see the module doc): the
    /// reference every backend's residual must match.
    #[inline]
    pub fn row_residual(&self, x: &[f64], b: &[f64], i: usize) -> f64 {
        let (sx, sy) = (1, self.nx);
        let sz = self.nx * self.ny;
        let xi = x[i];
        let mut y = self.amb[i] * xi;
        if i + sx < x.len() {
            y += self.gx[i] * (xi - x[i + sx]);
        }
        if i >= sx {
            y += self.gx[i - sx] * (xi - x[i - sx]);
        }
        if i + sy < x.len() {
            y += self.gy[i] * (xi - x[i + sy]);
        }
        if i >= sy {
            y += self.gy[i - sy] * (xi - x[i - sy]);
        }
        if i + sz < x.len() {
            y += self.gz[i] * (xi - x[i + sz]);
        }
        if i >= sz {
            y += self.gz[i - sz] * (xi - x[i - sz]);
        }
        b[i] - y
    }

    /// Gershgorin bound on λmax(D⁻¹A): max over rows of Σ|a_ij| / a_ii.
    pub fn gershgorin_jacobi(&self) -> f64 {
        let (sx, sy, sz) = (1, self.nx, self.nx * self.ny);
        let n = self.len();
        let mut worst: f64 = 0.0;
        for i in 0..n {
            let mut off = self.gx[i].abs() + self.gy[i].abs() + self.gz[i].abs();
            if i >= sx {
                off += self.gx[i - sx].abs();
            }
            if i >= sy {
                off += self.gy[i - sy].abs();
            }
            if i >= sz {
                off += self.gz[i - sz].abs();
            }
            worst = worst.max((self.d[i].abs() + off) / self.d[i]);
        }
        worst
    }
}
