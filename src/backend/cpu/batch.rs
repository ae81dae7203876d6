//! [`BatchOps`] on the CPU: the single-vector kernels (`kernels`,
//! `mg_cycle`, `mg`) run on each vector of the batch in turn, each parallel
//! over its rows as usual; the masking and the fused stopping test are done
//! here on the host. The reference of the CUDA batch kernels.

use super::kernels;
use super::{mg, mg_cycle};
use super::{ratio, same_len, CpuBackend};
use crate::backend::batch::{Active, BatchCheck, BatchOps, BatchSums};
use crate::backend::mg::Relax;
use crate::backend::{BackendError, CgStep, Ratio};
use crate::matrix::coarsen::Coarsening;
use crate::matrix::QuadDiag;

/// Whether vector j of the batch is still iterating.
fn active(s: &[f64], mask: usize, j: usize) -> bool {
    s[mask + j] > 0.0
}

/// The vectors of a batch of `k`, checked to hold k·n rows each.
fn rows(k: usize, n: usize, lens: &[usize]) -> Result<(), BackendError> {
    for &len in lens {
        same_len(k * n, len)?;
    }
    Ok(())
}

/// The slot `base + j` must exist for every j < k.
fn slots(s: &[f64], k: usize, bases: &[usize]) -> Result<(), BackendError> {
    match bases.iter().find(|&&b| b + k > s.len()) {
        Some(&b) => Err(BackendError::Length(b + k, s.len())),
        None => Ok(()),
    }
}

impl BatchOps for CpuBackend {
    type BatchScratch = ();
    type HostBuffer = Vec<f64>;

    fn host_buffer(&self, len: usize) -> Result<Vec<f64>, BackendError> {
        Ok(vec![0.0; len])
    }

    fn upload_from(&self, host: &Vec<f64>, dst: &mut Vec<f64>) -> Result<(), BackendError> {
        use crate::backend::Backend;
        self.copy(host, dst)
    }

    fn download_to(&self, src: &Vec<f64>, host: &mut Vec<f64>) -> Result<(), BackendError> {
        use crate::backend::Backend;
        self.copy(src, host)
    }

    fn batch_scratch(&self, _k: usize, _n: usize) -> Result<(), BackendError> {
        Ok(())
    }

    fn set_slots(
        &self,
        s: &mut Vec<f64>,
        first: usize,
        values: &[f64],
    ) -> Result<(), BackendError> {
        slots(s, values.len(), &[first])?;
        s[first..first + values.len()].copy_from_slice(values);
        Ok(())
    }

    fn batch_dot(
        &self,
        x: &Vec<f64>,
        y: &Vec<f64>,
        out: usize,
        mask: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError> {
        let (k, s) = (sums.k, &mut *sums.s);
        let n = x.len() / k.max(1);
        rows(k, n, &[x.len(), y.len()])?;
        slots(s, k, &[out, mask])?;
        for j in 0..k {
            if !active(s, mask, j) {
                continue;
            }
            let r = j * n..(j + 1) * n;
            s[out + j] = kernels::dot(&x[r.clone()], &y[r]);
        }
        Ok(())
    }

    fn batch_spmv_dot(
        &self,
        a: &QuadDiag,
        p: &Vec<f64>,
        q: &mut Vec<f64>,
        out: usize,
        mask: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError> {
        let (k, s) = (sums.k, &mut *sums.s);
        let n = a.len();
        rows(k, n, &[p.len(), q.len()])?;
        slots(s, k, &[out, mask])?;
        for j in 0..k {
            if !active(s, mask, j) {
                continue;
            }
            let r = j * n..(j + 1) * n;
            s[out + j] = kernels::spmv_dot(a, &p[r.clone()], &mut q[r]);
        }
        Ok(())
    }

    fn batch_residual(
        &self,
        a: &QuadDiag,
        b: &Vec<f64>,
        x: &Vec<f64>,
        r: &mut Vec<f64>,
        out: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError> {
        let (k, s) = (sums.k, &mut *sums.s);
        let n = a.len();
        rows(k, n, &[b.len(), x.len(), r.len()])?;
        slots(s, k, &[out])?;
        for j in 0..k {
            let v = j * n..(j + 1) * n;
            s[out + j] = kernels::residual(a, &b[v.clone()], &x[v.clone()], &mut r[v]);
        }
        Ok(())
    }

    fn batch_cg_update(
        &self,
        alpha: Ratio,
        v: CgStep<'_, Vec<f64>>,
        c: &BatchCheck,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError> {
        let CgStep { p, q, x, r } = v;
        let (k, s) = (sums.k, &mut *sums.s);
        let n = p.len() / k.max(1);
        rows(k, n, &[p.len(), q.len(), x.len(), r.len()])?;
        slots(
            s,
            k,
            &[alpha.num, alpha.den, c.rr, c.tol, c.status, c.iters],
        )?;
        for j in 0..k {
            if !active(s, c.status, j) {
                continue;
            }
            let a = ratio(
                s,
                Ratio {
                    num: alpha.num + j,
                    den: alpha.den + j,
                },
            );
            let v = j * n..(j + 1) * n;
            let rr = kernels::cg_update(
                a,
                &p[v.clone()],
                &q[v.clone()],
                &mut x[v.clone()],
                &mut r[v],
            );
            s[c.rr + j] = rr;
            let pq = s[alpha.den + j];
            if pq.is_nan() || pq <= 0.0 || !rr.is_finite() {
                s[c.status + j] = -1.0;
                s[c.iters + j] = c.iteration as f64;
            } else if rr <= s[c.tol + j] {
                s[c.status + j] = 0.0;
                s[c.iters + j] = c.iteration as f64;
            }
        }
        Ok(())
    }

    fn batch_xpay(
        &self,
        beta: Ratio,
        z: &Vec<f64>,
        p: &mut Vec<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        let n = z.len() / k.max(1);
        rows(k, n, &[z.len(), p.len()])?;
        slots(s, k, &[beta.num, beta.den, mask])?;
        for j in (0..k).filter(|&j| active(s, mask, j)) {
            let b = ratio(
                s,
                Ratio {
                    num: beta.num + j,
                    den: beta.den + j,
                },
            );
            let v = j * n..(j + 1) * n;
            kernels::xpay(b, &z[v.clone()], &mut p[v]);
        }
        Ok(())
    }

    fn batch_mg_smooth(
        &self,
        a: &QuadDiag,
        relax: Relax<'_, Self>,
        b: &Vec<f64>,
        x: &mut Vec<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        let n = a.len();
        rows(k, n, &[b.len(), x.len()])?;
        slots(s, k, &[mask])?;
        for j in (0..k).filter(|&j| active(s, mask, j)) {
            let v = j * n..(j + 1) * n;
            mg_cycle::smooth(a, relax, &b[v.clone()], &mut x[v])?;
        }
        Ok(())
    }

    fn batch_mg_restrict_residual(
        &self,
        a: &QuadDiag,
        c: &Coarsening,
        b: &Vec<f64>,
        x: &Vec<f64>,
        bc: &mut Vec<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        let (n, nc) = (a.len(), c.coarse_len());
        rows(k, n, &[b.len(), x.len()])?;
        rows(k, nc, &[bc.len()])?;
        slots(s, k, &[mask])?;
        for j in (0..k).filter(|&j| active(s, mask, j)) {
            let v = j * n..(j + 1) * n;
            mg::restrict_residual(a, c, &b[v.clone()], &x[v], &mut bc[j * nc..(j + 1) * nc])?;
        }
        Ok(())
    }

    fn batch_mg_prolong_add(
        &self,
        c: &Coarsening,
        xc: &Vec<f64>,
        x: &mut Vec<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        let (n, nc) = (c.nx * c.ny * c.nz, c.coarse_len());
        rows(k, n, &[x.len()])?;
        rows(k, nc, &[xc.len()])?;
        slots(s, k, &[mask])?;
        for j in (0..k).filter(|&j| active(s, mask, j)) {
            mg_cycle::prolong_add(c, &xc[j * nc..(j + 1) * nc], &mut x[j * n..(j + 1) * n])?;
        }
        Ok(())
    }

    fn batch_mg_dense_apply(
        &self,
        m: &Vec<f64>,
        n: usize,
        b: &Vec<f64>,
        x: &mut Vec<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        rows(k, n, &[b.len(), x.len()])?;
        slots(s, k, &[mask])?;
        for j in (0..k).filter(|&j| active(s, mask, j)) {
            let v = j * n..(j + 1) * n;
            mg_cycle::dense_apply(m, n, &b[v.clone()], &mut x[v])?;
        }
        Ok(())
    }
}
