//! Anderson acceleration of a fixed-point iteration x ← G(x) (Walker & Ni,
//! SIAM J. Numer. Anal. 49 (2011), "Anderson acceleration for fixed-point
//! iterations", type II with mixing 1).
//!
//! With fₖ = G(xₖ) − xₖ and the last `depth` differences
//! ΔFᵢ = fᵢ₊₁ − fᵢ, ΔGᵢ = G(xᵢ₊₁) − G(xᵢ), the next iterate is
//!
//!   xₖ₊₁ = G(xₖ) − ΔG γ,   γ = argmin ‖fₖ − ΔF γ‖₂,
//!
//! the combination of the last iterates whose linearized residual is
//! smallest. The small least-squares problem is solved through its normal
//! equations (Cholesky, at most `depth` × `depth`), dropping the oldest
//! differences while the Gram matrix is ill-conditioned. For a scalar map
//! with depth 1 this is the secant method. [`Anderson::next_in_range`] adds
//! the temperature iterations' safeguard (a plain Picard step when the
//! extrapolation leaves the physical range); the caller resets the history
//! ([`Anderson::reset`]) when its residual grows. The history vectors live
//! on the solve's backend ([`NonlinearOps`]); only the m × m system is
//! solved on the host.

use crate::backend::BackendError;
use crate::thermal::device::nonlinear::NonlinearOps;
use std::collections::VecDeque;

/// Largest depth accepted (`--anderson`).
pub const MAX_DEPTH: usize = 10;

/// Reciprocal condition number below which the oldest difference is dropped.
const MIN_RCOND: f64 = 1e-12;

/// The history lives where the iterates do (vectors `V` of a backend);
/// only the small least-squares problem is solved on the host, from dot
/// products of the history computed where it lives.
pub struct Anderson<V> {
    depth: usize,
    /// Length of the iterates.
    n: usize,
    /// xₖ₋₁'s residual and map value.
    last: Option<(V, V)>,
    /// (ΔF, ΔG) columns, oldest first.
    diffs: VecDeque<(V, V)>,
    /// Vectors of dropped differences, reused before allocating.
    spare: Vec<V>,
    /// Times the history was dropped ([`Anderson::reset`]).
    pub restarts: usize,
}

impl<V> Anderson<V> {
    /// Depth `depth` for iterates of `n` values.
    pub fn new(depth: usize, n: usize) -> Anderson<V> {
        Anderson {
            depth: depth.min(MAX_DEPTH),
            n,
            last: None,
            diffs: VecDeque::new(),
            spare: Vec::new(),
            restarts: 0,
        }
    }

    /// Forgets the history: the next step is a plain fixed-point step.
    pub fn reset(&mut self) {
        if self.last.is_some() {
            self.restarts += 1;
        }
        if let Some((f, g)) = self.last.take() {
            self.spare.extend([f, g]);
        }
        for (df, dg) in self.diffs.drain(..) {
            self.spare.extend([df, dg]);
        }
    }

    /// Hands back a spent iterate of the caller's (one of ours), so that
    /// the next [`Self::next`] reuses it instead of allocating.
    pub fn recycle(&mut self, v: V) {
        if self.spare.len() < 2 * self.depth + 4 {
            self.spare.push(v);
        }
    }

    /// A copy of `v`, in a spare vector if there is one.
    fn copy_of<B: NonlinearOps<Vector = V>>(&mut self, be: &B, v: &V) -> Result<V, BackendError> {
        let mut c = match self.spare.pop() {
            Some(c) => c,
            None => be.zeros(self.n)?,
        };
        be.copy(v, &mut c)?;
        Ok(c)
    }

    /// [`Self::next`] for a temperature iteration (θ = T − ambient, K):
    /// Anderson's iterate when it is finite, not below the lower of 0 and
    /// G's minimum, and not above `t_max_k` once `ambient_k` is added; else
    /// `None` with the history dropped, and the caller takes G(θₖ) = `g`.
    pub fn next_in_range<B: NonlinearOps<Vector = V>>(
        &mut self,
        be: &B,
        x: &V,
        g: &V,
        ambient_k: f64,
        t_max_k: f64,
    ) -> Result<Option<V>, BackendError> {
        let next = self.next(be, x, g)?;
        let floor = be.nl_range(g)?.min.min(0.0);
        let r = be.nl_range(&next)?;
        if r.finite && r.min >= floor && r.max + ambient_k <= t_max_k {
            return Ok(Some(next));
        }
        self.spare.push(next);
        self.reset();
        Ok(None)
    }

    /// The next iterate from xₖ = `x` and G(xₖ) = `g`, on `be`.
    pub fn next<B: NonlinearOps<Vector = V>>(
        &mut self,
        be: &B,
        x: &V,
        g: &V,
    ) -> Result<V, BackendError> {
        let mut out = self.copy_of(be, g)?;
        if self.depth == 0 {
            return Ok(out);
        }
        // f = g − x
        let mut f = self.copy_of(be, g)?;
        be.nl_axpby(Some(x), -1.0, 1.0, &mut f, 0.0)?;
        if let Some((mut df, mut dg)) = self.last.take() {
            // ΔF = f − f_old, ΔG = g − g_old, in the old vectors' storage.
            be.nl_axpby(Some(&f), 1.0, -1.0, &mut df, 0.0)?;
            be.nl_axpby(Some(g), 1.0, -1.0, &mut dg, 0.0)?;
            if self.diffs.len() == self.depth {
                if let Some((a, b)) = self.diffs.pop_front() {
                    self.spare.extend([a, b]);
                }
            }
            self.diffs.push_back((df, dg));
        }
        while !self.diffs.is_empty() {
            let m = self.diffs.len();
            let mut gram = vec![0.0; m * m];
            let mut rhs = vec![0.0; m];
            for i in 0..m {
                rhs[i] = be.nl_dot(&self.diffs[i].0, &f)?;
                for j in 0..=i {
                    let v = be.nl_dot(&self.diffs[i].0, &self.diffs[j].0)?;
                    gram[i * m + j] = v;
                    gram[j * m + i] = v;
                }
            }
            match cholesky_solve(&mut gram, &mut rhs, m) {
                Some(gamma) => {
                    // out −= γᵢ ΔGᵢ
                    for (gi, (_, dg)) in gamma.iter().zip(&self.diffs) {
                        be.nl_axpby(Some(dg), -gi, 1.0, &mut out, 0.0)?;
                    }
                    break;
                }
                None => {
                    if let Some((a, b)) = self.diffs.pop_front() {
                        self.spare.extend([a, b]);
                    }
                }
            }
        }
        let g_copy = self.copy_of(be, g)?;
        self.last = Some((f, g_copy));
        Ok(out)
    }
}

/// Solves the SPD system `a` (m × m, row-major) · γ = `b` by Cholesky;
/// `None` when a pivot is below [`MIN_RCOND`] of the largest diagonal.
fn cholesky_solve(a: &mut [f64], b: &mut [f64], m: usize) -> Option<Vec<f64>> {
    let scale = (0..m).map(|i| a[i * m + i]).fold(0.0, f64::max);
    if !(scale > 0.0 && scale.is_finite()) {
        return None;
    }
    for j in 0..m {
        let mut d = a[j * m + j];
        for k in 0..j {
            d -= a[j * m + k] * a[j * m + k];
        }
        // Also catches a NaN pivot.
        if d.is_nan() || d <= MIN_RCOND * scale {
            return None;
        }
        let d = d.sqrt();
        a[j * m + j] = d;
        for i in j + 1..m {
            let mut v = a[i * m + j];
            for k in 0..j {
                v -= a[i * m + k] * a[j * m + k];
            }
            a[i * m + j] = v / d;
        }
    }
    // L y = b, then Lᵀ γ = y.
    for i in 0..m {
        let s: f64 = (0..i).map(|k| a[i * m + k] * b[k]).sum();
        b[i] = (b[i] - s) / a[i * m + i];
    }
    for i in (0..m).rev() {
        let s: f64 = (i + 1..m).map(|k| a[k * m + i] * b[k]).sum();
        b[i] = (b[i] - s) / a[i * m + i];
    }
    Some(b.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::CpuBackend;

    /// Iterations of x ← G(x) from x0 until |G(x) − x| ≤ tol.
    fn iterations(depth: usize, g: impl Fn(f64) -> f64, x0: f64, tol: f64) -> (usize, f64) {
        let mut acc = Anderson::new(depth, 1);
        let mut x = vec![x0];
        for k in 1..=10_000 {
            let gx = vec![g(x[0])];
            if (gx[0] - x[0]).abs() <= tol {
                return (k, gx[0]);
            }
            x = acc.next(&CpuBackend, &x, &gx).unwrap();
        }
        panic!("no convergence");
    }

    #[test]
    fn anderson_beats_picard_on_a_slow_scalar_map_and_finds_the_same_point() {
        // The lumped leakage balance near runaway: T = Ta + (P + p e^{β(T−Ta)})/G,
        // contraction factor β p e^{β(T*−Ta)}/G ≈ 0.8 at the fixed point
        // (runaway from p ≈ 0.1353 W on).
        let (ta, p, g, pl, beta) = (300.0, 1.0, 0.05, 0.132, 0.05);
        let map = |t: f64| ta + (p + pl * (beta * (t - ta)).exp()) / g;
        let (n_picard, t_picard) = iterations(0, map, ta, 1e-10);
        let (n_anderson, t_anderson) = iterations(3, map, ta, 1e-10);
        // An independent reference: bisection on the balance.
        let f = |t: f64| map(t) - t;
        let (mut lo, mut hi) = (ta, ta + 40.0);
        assert!(f(lo) > 0.0 && f(hi) < 0.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if f(mid) > 0.0 {
                lo = mid
            } else {
                hi = mid
            }
        }
        println!("picard {n_picard}, anderson {n_anderson}, T* = {lo}");
        assert!((t_picard - lo).abs() < 1e-8 && (t_anderson - lo).abs() < 1e-8);
        assert!(
            n_picard > 50,
            "the case must be slow for Picard: {n_picard}"
        );
        assert!(n_anderson * 4 < n_picard, "{n_anderson} vs {n_picard}");
    }

    #[test]
    fn a_linear_map_is_solved_exactly_once_the_history_spans_it() {
        // x ← M x + c in 2-D: Anderson(2) is exact after 3 residuals.
        let map = |x: &[f64]| {
            vec![
                0.9 * x[0] + 0.05 * x[1] + 1.0,
                0.1 * x[0] + 0.8 * x[1] - 2.0,
            ]
        };
        let mut acc = Anderson::new(2, 2);
        let mut x = vec![0.0, 0.0];
        for _ in 0..3 {
            let g = map(&x);
            x = acc.next(&CpuBackend, &x, &g).unwrap();
        }
        let g = map(&x);
        let res = (g[0] - x[0]).abs().max((g[1] - x[1]).abs());
        assert!(res < 1e-9, "{res}");
    }

    #[test]
    fn a_singular_history_falls_back_without_nan() {
        let mut acc = Anderson::new(3, 2);
        let x = vec![1.0, 2.0];
        // The same residual twice: ΔF = 0, the Gram matrix is singular.
        let a = acc.next(&CpuBackend, &x, &vec![2.0, 3.0]).unwrap();
        let b = acc.next(&CpuBackend, &x, &vec![2.0, 3.0]).unwrap();
        assert_eq!(a, vec![2.0, 3.0]);
        assert_eq!(b, vec![2.0, 3.0]);
    }
}
