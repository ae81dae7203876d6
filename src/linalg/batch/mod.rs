//! Batched PCG: k systems A x_j = b_j with one matrix, solved together
//! (for sweeps), written once over [`BatchOps`] (CPU and CUDA).
//!
//! Every vector follows exactly the recurrence of [`crate::linalg::pcg()`]
//! from x = 0 (same coefficients, same stopping test r·r ≤ threshold at
//! every iteration), so each answer equals its own single solve to
//! rounding. The test runs on the device, fused into the update
//! ([`BatchOps::batch_cg_update`]): a vector that converges (or breaks
//! down) is masked at once, x frozen at the iterate where its own solve
//! would have stopped, and every later kernel skips it. The host reads the
//! statuses only every `check_every` iterations, to learn whether the
//! whole batch is done. Afterwards the true residual b − A x of every
//! vector is recomputed in one batched pass; a vector whose recurrence
//! converged but whose true residual did not (the single solve would then
//! restart from it) is reported [`BatchOutcome::Unconfirmed`], for the
//! caller to solve alone.
//!
//! Scalars: slot q of vector j at q·k + j (see `backend::batch`).

pub mod mg;

use super::params::{SolveError, Stop};
use crate::backend::batch::{Active, BatchCheck, BatchOps, BatchSums};
use crate::backend::{BackendError, CgStep, Ratio};

const RR: usize = 0;
const BB: usize = 1;
const PQ: usize = 2;
const RZ: [usize; 2] = [3, 4];
const TOL: usize = 5;
const STATUS: usize = 6;
const ITERS: usize = 7;
const TRUE_RR: usize = 8;
const SLOTS: usize = 9;

/// z = M⁻¹ r on the vectors of a batch that are still iterating (`on`).
pub trait BatchPreconditioner<B: BatchOps> {
    fn apply(
        &mut self,
        be: &B,
        a: &B::Matrix,
        r: &B::Vector,
        z: &mut B::Vector,
        on: Active<'_, B>,
    ) -> Result<(), BackendError>;
}

/// The work vectors (k·n rows each), scalars and scratch of a batch.
pub struct BatchWork<B: BatchOps> {
    k: usize,
    n: usize,
    s: B::Scalars,
    r: B::Vector,
    z: B::Vector,
    p: B::Vector,
    q: B::Vector,
    /// All zeros: x's start.
    zero: B::Vector,
    scratch: B::BatchScratch,
}

impl<B: BatchOps> BatchWork<B> {
    pub fn new(be: &B, k: usize, n: usize) -> Result<Self, BackendError> {
        Ok(BatchWork {
            k,
            n,
            s: be.scalars(SLOTS * k)?,
            r: be.zeros(k * n)?,
            z: be.zeros(k * n)?,
            p: be.zeros(k * n)?,
            q: be.zeros(k * n)?,
            zero: be.zeros(k * n)?,
            scratch: be.batch_scratch(k, n)?,
        })
    }

    /// Vectors of the batch.
    pub fn k(&self) -> usize {
        self.k
    }

    /// Rows of each vector.
    pub fn rows(&self) -> usize {
        self.n
    }

    /// n-vectors a batch of k holds on the device: b, x and the five here.
    pub fn vectors(k: usize) -> usize {
        7 * k
    }
}

/// How one vector of the batch ended.
#[derive(Debug)]
pub enum BatchOutcome {
    /// Converged; the true r·r and b·b after the solve.
    Converged {
        iterations: usize,
        true_rr: f64,
        bb: f64,
    },
    /// The recurrence converged, the true residual did not: solve it alone.
    Unconfirmed {
        iterations: usize,
    },
    Failed(SolveError),
    /// A padding slot (no system).
    Empty,
}

/// When a batch's solves stop: each vector's own test, and the limits
/// they share.
#[derive(Clone, Copy, Debug)]
pub struct BatchStops<'s> {
    /// Vector j's stopping test, None for a padding slot (b_j should then
    /// be 0).
    pub stops: &'s [Option<Stop>],
    pub max_iter: usize,
    /// Read the statuses back every this many iterations.
    pub check_every: usize,
}

/// Batched PCG on the k systems A x_j = b_j, b and x of k·n rows (x is
/// overwritten: every solve starts from 0).
pub fn batch_pcg<B: BatchOps>(
    be: &B,
    a: &B::Matrix,
    m: &mut dyn BatchPreconditioner<B>,
    b: &B::Vector,
    x: &mut B::Vector,
    work: &mut BatchWork<B>,
    stop: BatchStops<'_>,
) -> Result<Vec<BatchOutcome>, BackendError> {
    let BatchStops {
        stops,
        max_iter,
        check_every,
    } = stop;
    let k = work.k;
    if stops.len() != k {
        return Err(BackendError::Length(stops.len(), k));
    }
    let BatchWork {
        s,
        r,
        z,
        p,
        q,
        zero,
        scratch,
        ..
    } = work;
    let mut sums = BatchSums { k, s, scratch };
    be.copy(zero, x)?;
    be.copy(b, r)?; // r = b − A·0
    let status = STATUS * k;
    be.set_slots(sums.s, status, &vec![1.0; k])?;
    be.batch_dot(b, b, BB * k, status, &mut sums)?; // b·b = r·r
    let v = be.read_scalars(sums.s)?;
    let bb: Vec<f64> = (0..k).map(|j| v[BB * k + j]).collect();
    let tol2: Vec<f64> = (0..k)
        .map(|j| stops[j].map_or(0.0, |st| st.threshold_sq(bb[j])))
        .collect();
    // Already converged (b = 0 among them: x = 0 = b), or padding.
    let start: Vec<f64> = (0..k)
        .map(|j| match stops[j] {
            Some(_) if bb[j] > tol2[j] => 1.0,
            _ => 0.0,
        })
        .collect();
    be.set_slots(sums.s, TOL * k, &tol2)?;
    be.set_slots(sums.s, status, &start)?;
    be.set_slots(sums.s, ITERS * k, &vec![0.0; k])?;
    let mut done = start.iter().all(|&st| st <= 0.0);
    if !done {
        m.apply(be, a, r, z, sums.active(status))?; // z = M⁻¹ r
        be.batch_dot(r, z, RZ[0] * k, status, &mut sums)?; // r·z
        be.copy(z, p)?; // p = z
    }
    let check_every = check_every.max(1);
    let mut it = 0;
    while !done && it < max_iter {
        let (cur, next) = (RZ[it % 2] * k, RZ[(it + 1) % 2] * k);
        be.batch_spmv_dot(a, p, q, PQ * k, status, &mut sums)?; // q = A p; p·q
        let check = BatchCheck {
            rr: RR * k,
            tol: TOL * k,
            status,
            iters: ITERS * k,
            iteration: it + 1,
        };
        let alpha = Ratio {
            num: cur,
            den: PQ * k,
        };
        let step = CgStep { p, q, x, r };
        be.batch_cg_update(alpha, step, &check, &mut sums)?; // x, r, r·r, test
        it += 1;
        if it.is_multiple_of(check_every) || it == max_iter {
            let v = be.read_scalars(sums.s)?;
            done = v[status..status + k].iter().all(|&st| st <= 0.0);
            if done || it == max_iter {
                break;
            }
        }
        m.apply(be, a, r, z, sums.active(status))?; // z = M⁻¹ r
        be.batch_dot(r, z, next, status, &mut sums)?; // r·z
        let beta = Ratio {
            num: next,
            den: cur,
        };
        be.batch_xpay(beta, z, p, sums.active(status))?; // p = z + β p
    }
    be.batch_residual(a, b, x, r, TRUE_RR * k, &mut sums)?; // true r·r
    let v = be.read_scalars(sums.s)?;
    let at = |q: usize, j: usize| v[q * k + j];
    Ok((0..k)
        .map(|j| {
            let Some(stop) = stops[j] else {
                return BatchOutcome::Empty;
            };
            let iterations = at(ITERS, j) as usize;
            match at(STATUS, j) {
                st if st > 0.0 => BatchOutcome::Failed(SolveError::NoConvergence {
                    iters: it,
                    rel: stop.relative_residual(at(RR, j), bb[j]),
                    rtol: stop.rtol,
                }),
                st if st < 0.0 => BatchOutcome::Failed(SolveError::Breakdown {
                    iters: iterations,
                    what: format!(
                        "p·Ap = {:e}, r·r = {:e}: the matrix or preconditioner is not SPD",
                        at(PQ, j),
                        at(RR, j)
                    ),
                }),
                _ if bb[j] == 0.0 || at(TRUE_RR, j) <= tol2[j] => BatchOutcome::Converged {
                    iterations,
                    true_rr: at(TRUE_RR, j),
                    bb: bb[j],
                },
                _ => BatchOutcome::Unconfirmed { iterations },
            }
        })
        .collect())
}
