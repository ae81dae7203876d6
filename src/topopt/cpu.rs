//! The elastic operator on the CPU backend: node-centred and matrix-free.
//! Each node gathers, from each of its (up to 8) elements, that element's
//! displacement vector and the three rows of Eₑ Kₑ belonging to the node, so
//! every output entry is written by exactly one task: no atomics, no races,
//! and results independent of the thread count. The same flops as an
//! element-wise scatter (8 nodes × 3 rows × 24 = 576 per element).
//!
//! Every [`OperatorKind`] runs this one implementation (the kinds differ
//! only in GPU scheduling). `OpPrecision::F32` really computes in f32 (Kₑ,
//! Eₑ, x rounded to f32, f32 accumulation, result widened to f64) so the
//! residual-correction loop is exercised on the CPU as on the GPU.

use super::backend::{ElasticBackend, OpPrecision, OperatorKind};
use super::element::ElementMatrix;
use super::mesh::{Mesh, LOCAL_NODES};
use super::mg::Transfer;
use crate::backend::cpu::CpuBackend;
use crate::backend::BackendError;
use rayon::prelude::*;

/// Nodes per parallel task; fixed, so chunked reductions are deterministic.
const NODE_CHUNK: usize = 512;

/// The operator's data on the host.
pub struct CpuElastic {
    mesh: Mesh,
    ke64: [[f64; 24]; 24],
    ke32: [[f32; 24]; 24],
    e64: Vec<f64>,
    e32: Vec<f32>,
    fixed: Vec<bool>,
    pub kind: OperatorKind,
    /// Scratch: the masked input of the last pass.
    xm64: Vec<f64>,
    xm32: Vec<f32>,
}

/// The float type an operator pass computes in.
trait Real: Copy + Send + Sync + std::ops::Add<Output = Self> + std::ops::Mul<Output = Self> {
    const ZERO: Self;
    fn of(v: f64) -> Self;
    fn wide(self) -> f64;
}

impl Real for f64 {
    const ZERO: f64 = 0.0;
    fn of(v: f64) -> f64 {
        v
    }
    fn wide(self) -> f64 {
        self
    }
}

impl Real for f32 {
    const ZERO: f32 = 0.0;
    fn of(v: f64) -> f32 {
        v as f32
    }
    fn wide(self) -> f64 {
        self as f64
    }
}

fn check(n: usize, lens: &[usize]) -> Result<(), BackendError> {
    match lens.iter().find(|&&l| l != n) {
        Some(&l) => Err(BackendError::Length(n, l)),
        None => Ok(()),
    }
}

impl CpuElastic {
    /// The element moduli Eₑ (f64).
    pub(crate) fn moduli(&self) -> &[f64] {
        &self.e64
    }

    /// xm = x with fixed DOFs zeroed, in the operator's float type: a fixed
    /// DOF's value must not reach a free row.
    fn masked<T: Real>(&self, x: &[f64], xm: &mut Vec<T>) {
        xm.resize(x.len(), T::ZERO);
        xm.par_iter_mut()
            .zip(x.par_iter().zip(self.fixed.par_iter()))
            .for_each(|(m, (&v, &f))| *m = if f { T::ZERO } else { T::of(v) });
    }

    /// y = K x given xm (see [`Self::masked`]); returns Σ f(d, y_d), summed
    /// per chunk and then in chunk order.
    fn apply<T: Real>(
        &self,
        ke: &[[T; 24]; 24],
        e: &[T],
        x: &[f64],
        xm: &[T],
        y: &mut [f64],
        f: impl Fn(usize, f64) -> f64 + Sync,
    ) -> f64 {
        let m = self.mesh;
        let [nx, ny, nz] = [m.nelx, m.nely, m.nelz];
        let (sy, sz) = (nx + 1, (nx + 1) * (ny + 1));
        // Node-index offset of local node b from local node 0.
        let off: [usize; 8] = LOCAL_NODES.map(|[di, dj, dk]| di + dj * sy + dk * sz);
        let parts: Vec<f64> = y
            .par_chunks_mut(3 * NODE_CHUNK)
            .enumerate()
            .map(|(c, chunk)| {
                let mut part = 0.0;
                for (k, yn) in chunk.chunks_mut(3).enumerate() {
                    let n = c * NODE_CHUNK + k;
                    let [i, j, l] = m.node_coords(n);
                    let mut acc = [T::ZERO; 3];
                    for (a, o) in LOCAL_NODES.iter().enumerate() {
                        // The element in which node n is local node a.
                        if i < o[0] || j < o[1] || l < o[2] {
                            continue;
                        }
                        let (ex, ey, ez) = (i - o[0], j - o[1], l - o[2]);
                        if ex >= nx || ey >= ny || ez >= nz {
                            continue;
                        }
                        let base = n - off[a];
                        let mut xe = [T::ZERO; 24];
                        for (b, ob) in off.iter().enumerate() {
                            let g = 3 * (base + ob);
                            xe[3 * b] = xm[g];
                            xe[3 * b + 1] = xm[g + 1];
                            xe[3 * b + 2] = xm[g + 2];
                        }
                        let ee = e[m.element(ex, ey, ez)];
                        for (cmp, acc_c) in acc.iter_mut().enumerate() {
                            let row = &ke[3 * a + cmp];
                            let mut s = T::ZERO;
                            for q in 0..24 {
                                s = s + row[q] * xe[q];
                            }
                            *acc_c = *acc_c + ee * s;
                        }
                    }
                    for (cmp, out) in yn.iter_mut().enumerate() {
                        let d = 3 * n + cmp;
                        // Fixed DOFs act as identity rows (see backend.rs).
                        *out = if self.fixed[d] { x[d] } else { acc[cmp].wide() };
                        part += f(d, *out);
                    }
                }
                part
            })
            .collect();
        parts.into_iter().sum()
    }
}

impl ElasticBackend for CpuBackend {
    fn check_elastic_capacity(
        &self,
        mesh: &Mesh,
        extra_vectors: usize,
    ) -> Result<(), BackendError> {
        let (host, solver) = super::backend::memory_estimate(mesh, extra_vectors);
        super::backend::check_host_memory(mesh, host + solver, "use a coarser mesh (--nelx)")
    }

    type Elastic = CpuElastic;

    fn elastic_new(
        &self,
        mesh: &Mesh,
        ke: &ElementMatrix,
        fixed: &[bool],
        kind: OperatorKind,
    ) -> Result<CpuElastic, BackendError> {
        check(mesh.dofs(), &[fixed.len()])?;
        Ok(CpuElastic {
            mesh: *mesh,
            ke64: ke.0,
            ke32: ke.0.map(|r| r.map(|v| v as f32)),
            e64: vec![1.0; mesh.elements()],
            e32: vec![1.0; mesh.elements()],
            fixed: fixed.to_vec(),
            kind,
            xm64: Vec::new(),
            xm32: Vec::new(),
        })
    }

    fn elastic_set_moduli(&self, op: &mut CpuElastic, e: &[f64]) -> Result<(), BackendError> {
        check(op.mesh.elements(), &[e.len()])?;
        op.e64.copy_from_slice(e);
        op.e32 = e.iter().map(|&v| v as f32).collect();
        Ok(())
    }

    fn elastic_apply_dot(
        &self,
        op: &mut CpuElastic,
        precision: OpPrecision,
        x: &Vec<f64>,
        y: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        check(op.mesh.dofs(), &[x.len(), y.len()])?;
        let dot = |d: usize, v: f64| x[d] * v;
        s[out] = match precision {
            OpPrecision::F64 => {
                let mut xm = std::mem::take(&mut op.xm64);
                op.masked(x, &mut xm);
                let v = op.apply(&op.ke64, &op.e64, x, &xm, y, dot);
                op.xm64 = xm;
                v
            }
            OpPrecision::F32 => {
                let mut xm = std::mem::take(&mut op.xm32);
                op.masked(x, &mut xm);
                let v = op.apply(&op.ke32, &op.e32, x, &xm, y, dot);
                op.xm32 = xm;
                v
            }
        };
        Ok(())
    }

    fn elastic_residual(
        &self,
        op: &mut CpuElastic,
        b: &Vec<f64>,
        x: &Vec<f64>,
        r: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        check(op.mesh.dofs(), &[b.len(), x.len(), r.len()])?;
        // r = K x, then r = b − r with its chunked norm.
        let mut xm = std::mem::take(&mut op.xm64);
        op.masked(x, &mut xm);
        op.apply(&op.ke64, &op.e64, x, &xm, r, |_, _| 0.0);
        op.xm64 = xm;
        s[out] = r
            .par_chunks_mut(3 * NODE_CHUNK)
            .zip(b.par_chunks(3 * NODE_CHUNK))
            .map(|(rc, bc)| {
                let mut part = 0.0;
                for (ri, bi) in rc.iter_mut().zip(bc) {
                    *ri = bi - *ri;
                    part += *ri * *ri;
                }
                part
            })
            .collect::<Vec<f64>>()
            .into_iter()
            .sum();
        Ok(())
    }

    fn elastic_diagonal(
        &self,
        op: &mut CpuElastic,
        diag: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        let m = op.mesh;
        check(m.dofs(), &[diag.len()])?;
        diag.par_chunks_mut(3).enumerate().for_each(|(n, dn)| {
            let [i, j, l] = m.node_coords(n);
            let mut acc = [0.0; 3];
            for (a, off) in LOCAL_NODES.iter().enumerate() {
                if i < off[0] || j < off[1] || l < off[2] {
                    continue;
                }
                let (ex, ey, ez) = (i - off[0], j - off[1], l - off[2]);
                if ex >= m.nelx || ey >= m.nely || ez >= m.nelz {
                    continue;
                }
                let e = op.e64[m.element(ex, ey, ez)];
                for (c, v) in acc.iter_mut().enumerate() {
                    *v += e * op.ke64[3 * a + c][3 * a + c];
                }
            }
            for (c, d) in dn.iter_mut().enumerate() {
                *d = if op.fixed[3 * n + c] { 1.0 } else { acc[c] };
            }
        });
        Ok(())
    }

    type ElasticTransfer = Transfer;

    fn elastic_transfer_new(&self, t: &Transfer) -> Result<Transfer, BackendError> {
        Ok(t.clone())
    }

    fn elastic_restrict(
        &self,
        t: &Transfer,
        rf: &Vec<f64>,
        rc: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        check(t.fine.dofs(), &[rf.len()])?;
        check(t.coarse.dofs(), &[rc.len()])?;
        t.restrict(rf, rc);
        Ok(())
    }

    fn elastic_prolong_add(
        &self,
        t: &Transfer,
        xc: &Vec<f64>,
        xf: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        check(t.fine.dofs(), &[xf.len()])?;
        check(t.coarse.dofs(), &[xc.len()])?;
        t.prolong_add(xc, xf);
        Ok(())
    }

    fn elastic_coarsen_moduli(
        &self,
        t: &Transfer,
        fine: &CpuElastic,
        coarse: &mut CpuElastic,
    ) -> Result<(), BackendError> {
        check(t.fine.elements(), &[fine.e64.len()])?;
        let e = t.coarse_moduli(&fine.e64);
        self.elastic_set_moduli(coarse, &e)
    }

    fn elastic_moduli(&self, op: &CpuElastic) -> Result<Vec<f64>, BackendError> {
        Ok(op.e64.clone())
    }

    fn dense_matvec(
        &self,
        a: &Vec<f64>,
        x: &Vec<f64>,
        y: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        let n = x.len();
        check(n * n, &[a.len()])?;
        check(n, &[y.len()])?;
        y.par_iter_mut().enumerate().for_each(|(i, yi)| {
            *yi = a[i * n..(i + 1) * n]
                .iter()
                .zip(x)
                .map(|(p, q)| p * q)
                .sum();
        });
        Ok(())
    }

    fn element_energies(
        &self,
        op: &mut CpuElastic,
        u: &Vec<f64>,
    ) -> Result<Vec<f64>, BackendError> {
        let m = op.mesh;
        check(m.dofs(), &[u.len()])?;
        Ok((0..m.elements())
            .into_par_iter()
            .map(|e| {
                let dofs = m.element_dofs(e);
                let ue: [f64; 24] =
                    std::array::from_fn(|q| if op.fixed[dofs[q]] { 0.0 } else { u[dofs[q]] });
                let mut c = 0.0;
                for (r, row) in op.ke64.iter().enumerate() {
                    let s: f64 = row.iter().zip(&ue).map(|(k, v)| k * v).sum();
                    c += ue[r] * s;
                }
                c
            })
            .collect())
    }
}
