//! Slab decomposition in y: rank r of N owns the planes `y0..y1` of every
//! z layer (balanced, each rank at least one plane), stored as its own
//! `nx × (y1 − y0) × nz` Quad-Diag with local index `x + nx·(yl + nyl·z)`.
//! The couplings across a slab's faces are kept beside it (`up`, `down`:
//! one x–z plane each), and a product exchanges one plane of x with each
//! neighbouring rank.
//!
//! Traffic of one product per rank: the local SpMV's 48 B/row, plus
//! 2 · 8 · nx · nz bytes sent to (and received from) each neighbour.

use super::RankBackend;
use crate::backend::{Backend, BackendError, ChebWork, QuadDiagOps};
use crate::linalg::LinearOperator;
use crate::matrix::QuadDiag;
use ::mpi::traits::*;

/// This rank's planes of a grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slab {
    pub nx: usize,
    /// Planes of the whole grid.
    pub ny: usize,
    pub nz: usize,
    /// The planes `y0..y1` are this rank's.
    pub y0: usize,
    pub y1: usize,
    pub rank: usize,
    pub ranks: usize,
}

impl Slab {
    /// Rank `rank`'s slab of `ranks` over `ny` planes: the first `ny % ranks`
    /// ranks get one plane more.
    pub fn of(
        nx: usize,
        ny: usize,
        nz: usize,
        rank: usize,
        ranks: usize,
    ) -> Result<Slab, BackendError> {
        if ranks == 0 || ny < ranks {
            return Err(BackendError::Unsupported(
                "more MPI ranks than y planes: use fewer ranks or a finer --grid",
            ));
        }
        let (base, extra) = (ny / ranks, ny % ranks);
        let y0 = rank * base + rank.min(extra);
        let y1 = y0 + base + usize::from(rank < extra);
        Ok(Slab {
            nx,
            ny,
            nz,
            y0,
            y1,
            rank,
            ranks,
        })
    }

    /// Planes of this slab.
    pub fn planes(&self) -> usize {
        self.y1 - self.y0
    }

    /// Rows of this slab.
    pub fn rows(&self) -> usize {
        self.nx * self.planes() * self.nz
    }

    /// Entries of one x–z plane: what a halo exchange sends each way.
    pub fn plane_len(&self) -> usize {
        self.nx * self.nz
    }

    /// The global row range of this slab's rows of layer z (one contiguous run).
    fn global_run(&self, z: usize) -> std::ops::Range<usize> {
        let start = self.nx * (self.y0 + self.ny * z);
        start..start + self.nx * self.planes()
    }

    /// This slab's rows of a whole-grid vector.
    pub fn extract(&self, global: &[f64]) -> Vec<f64> {
        let mut v = Vec::with_capacity(self.rows());
        for z in 0..self.nz {
            v.extend_from_slice(&global[self.global_run(z)]);
        }
        v
    }

    /// Writes this slab's rows `local` into a whole-grid vector.
    pub fn insert(&self, local: &[f64], global: &mut [f64]) {
        let run = self.nx * self.planes();
        for z in 0..self.nz {
            global[self.global_run(z)].copy_from_slice(&local[z * run..(z + 1) * run]);
        }
    }

    /// Local rows of plane `yl` (local), in plane order `x + nx·z`.
    fn plane_rows(&self, yl: usize) -> impl Iterator<Item = usize> + '_ {
        let (nx, nyl) = (self.nx, self.planes());
        (0..self.nz).flat_map(move |z| {
            let start = nx * (yl + nyl * z);
            start..start + nx
        })
    }
}

/// This rank's rows of a Quad-Diag matrix: the slab's own matrix (no
/// coupling past its faces) and the face couplings.
pub struct SlabMatrix {
    pub slab: Slab,
    /// The slab's matrix; `gy` is 0 on its last plane.
    pub a: QuadDiag,
    /// Coupling of the last plane to the next rank's first (global `gy` of
    /// plane y1 − 1), in plane order `x + nx·z`; zeros on the last rank.
    pub up: Vec<f64>,
    /// Coupling of the first plane to the previous rank's last (global `gy`
    /// of plane y0 − 1); zeros on rank 0.
    pub down: Vec<f64>,
}

impl SlabMatrix {
    /// Slices `slab`'s rows out of the whole matrix `a`.
    pub fn new(a: &QuadDiag, slab: Slab) -> SlabMatrix {
        let cut = |v: &[f64]| {
            if v.is_empty() {
                Vec::new()
            } else {
                slab.extract(v)
            }
        };
        let mut local = QuadDiag {
            nx: slab.nx,
            ny: slab.planes(),
            nz: slab.nz,
            d: cut(&a.d),
            gx: cut(&a.gx),
            gy: cut(&a.gy),
            gz: cut(&a.gz),
            amb: cut(&a.amb),
            wx: a.wx.clone(),
            wy: if a.wy.is_empty() {
                Vec::new()
            } else {
                a.wy[slab.y0..slab.y1].to_vec()
            },
        };
        let plane = |y: usize| -> Vec<f64> {
            (0..slab.nz)
                .flat_map(|z| {
                    let start = slab.nx * (y + slab.ny * z);
                    a.gy[start..start + slab.nx].iter().copied()
                })
                .collect()
        };
        let up = plane(slab.y1 - 1);
        let down = if slab.y0 > 0 {
            plane(slab.y0 - 1)
        } else {
            vec![0.0; slab.plane_len()]
        };
        let top: Vec<usize> = slab.plane_rows(slab.planes() - 1).collect();
        for i in top {
            local.gy[i] = 0.0;
        }
        SlabMatrix {
            slab,
            a: local,
            up,
            down,
        }
    }
}

/// A [`SlabMatrix`] as the operator PCG sees, with its halo buffers.
pub struct SlabOperator<'m> {
    m: &'m SlabMatrix,
    /// The neighbours' planes of the last exchange (`x + nx·z`).
    halo_up: Vec<f64>,
    halo_down: Vec<f64>,
    send_up: Vec<f64>,
    send_down: Vec<f64>,
    /// Local rows of the first and last plane.
    first: Vec<usize>,
    last: Vec<usize>,
}

impl<'m> SlabOperator<'m> {
    pub fn new(m: &'m SlabMatrix) -> Self {
        let s = m.slab;
        let n = s.plane_len();
        SlabOperator {
            m,
            halo_up: vec![0.0; n],
            halo_down: vec![0.0; n],
            send_up: vec![0.0; n],
            send_down: vec![0.0; n],
            first: s.plane_rows(0).collect(),
            last: s.plane_rows(s.planes() - 1).collect(),
        }
    }

    /// Sends x's first and last planes to the neighbours and receives theirs
    /// into the halos, running `interior` (the local product) while the
    /// planes travel.
    fn exchange<R>(&mut self, be: &RankBackend, x: &[f64], interior: impl FnOnce() -> R) -> R {
        let s = self.m.slab;
        let (below, above) = (s.rank > 0, s.rank + 1 < s.ranks);
        if !below && !above {
            return interior();
        }
        for (k, &i) in self.first.iter().enumerate() {
            self.send_down[k] = x[i];
        }
        for (k, &i) in self.last.iter().enumerate() {
            self.send_up[k] = x[i];
        }
        let comm = be.comm();
        let bytes = 8 * s.plane_len() * (usize::from(below) + usize::from(above));
        be.count_sent(bytes);
        let (send_up, send_down) = (&self.send_up, &self.send_down);
        let (halo_up, halo_down) = (&mut self.halo_up, &mut self.halo_down);
        ::mpi::request::scope(|scope| {
            let mut reqs = Vec::new();
            let mut recvs = Vec::new();
            if below {
                let p = comm.process_at_rank(s.rank as i32 - 1);
                recvs.push(p.immediate_receive_into(scope, &mut halo_down[..]));
                reqs.push(p.immediate_send(scope, &send_down[..]));
            }
            if above {
                let p = comm.process_at_rank(s.rank as i32 + 1);
                recvs.push(p.immediate_receive_into(scope, &mut halo_up[..]));
                reqs.push(p.immediate_send(scope, &send_up[..]));
            }
            let r = interior();
            for q in recvs {
                q.wait();
            }
            for q in reqs {
                q.wait();
            }
            r
        })
    }
}

impl LinearOperator<RankBackend> for SlabOperator<'_> {
    fn len(&self) -> usize {
        self.m.slab.rows()
    }

    /// q = A p;  `s[out]` = p·q (global): the slab's product while the
    /// planes travel, then the face couplings −g·p_halo on the first and
    /// last planes.
    fn apply_dot(
        &mut self,
        be: &RankBackend,
        p: &Vec<f64>,
        q: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let cpu = crate::backend::cpu::CpuBackend::new();
        let a = &self.m.a;
        self.exchange(be, p, || cpu.spmv_dot(a, p, q, s, out))?; // q = A_slab p; s[out] = p·q (local)
        let mut extra = 0.0;
        for (k, &i) in self.last.iter().enumerate() {
            let t = self.m.up[k] * self.halo_up[k];
            q[i] -= t;
            extra -= p[i] * t;
        }
        for (k, &i) in self.first.iter().enumerate() {
            let t = self.m.down[k] * self.halo_down[k];
            q[i] -= t;
            extra -= p[i] * t;
        }
        s[out] = be.global_sum(s[out] + extra);
        Ok(())
    }

    /// r = b − A x (difference form);  `s[out]` = r·r (global).
    fn residual(
        &mut self,
        be: &RankBackend,
        b: &Vec<f64>,
        x: &Vec<f64>,
        r: &mut Vec<f64>,
        s: &mut Vec<f64>,
        out: usize,
    ) -> Result<(), BackendError> {
        let cpu = crate::backend::cpu::CpuBackend::new();
        let a = &self.m.a;
        self.exchange(be, x, || cpu.residual(a, b, x, r, s, out))?;
        for (k, &i) in self.last.iter().enumerate() {
            r[i] -= self.m.up[k] * (x[i] - self.halo_up[k]);
        }
        for (k, &i) in self.first.iter().enumerate() {
            r[i] -= self.m.down[k] * (x[i] - self.halo_down[k]);
        }
        be.dot(r, r, s, out) // s[out] = r·r
    }

    fn diagonal(&self) -> &Vec<f64> {
        &self.m.a.d
    }

    fn cheb_step(
        &mut self,
        _be: &RankBackend,
        _alpha: f64,
        _beta: f64,
        _w: &mut ChebWork<Vec<f64>>,
        _z: &mut Vec<f64>,
    ) -> Result<(), BackendError> {
        Err(BackendError::Unsupported(
            "Chebyshev over MPI ranks is not implemented: use zline or jacobi",
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::Slab;

    #[test]
    fn slabs_cover_the_planes_once() {
        for (ny, ranks) in [(7, 3), (32, 4), (5, 5), (10, 1)] {
            let mut next = 0;
            for r in 0..ranks {
                let s = Slab::of(2, ny, 3, r, ranks).unwrap();
                assert_eq!(s.y0, next);
                assert!(s.planes() >= ny / ranks && s.planes() <= ny / ranks + 1);
                next = s.y1;
            }
            assert_eq!(next, ny);
        }
        assert!(Slab::of(2, 3, 3, 0, 4).is_err());
    }

    #[test]
    fn extract_then_insert_is_the_identity() {
        let (nx, ny, nz) = (3, 5, 2);
        let g: Vec<f64> = (0..nx * ny * nz).map(|i| i as f64).collect();
        let mut back = vec![f64::NAN; g.len()];
        for r in 0..2 {
            let s = Slab::of(nx, ny, nz, r, 2).unwrap();
            let l = s.extract(&g);
            assert_eq!(l.len(), s.rows());
            s.insert(&l, &mut back);
        }
        assert_eq!(back, g);
    }
}
