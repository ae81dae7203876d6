//! [`BatchOps`] on CUDA: launchers of `kernels/batch.cu` (compiled with
//! `mg.cu` prepended, whose multigrid bodies it runs per vector). Every
//! kernel runs on a 2D grid, y the vector of the batch; reductions keep one
//! partial per (block, vector) and one ticket per vector in a
//! [`CudaBatchScratch`]. Lengths and slots are checked here, on the host,
//! because the kernels trust them.

pub use super::batch_launch::CudaBatchScratch;
use super::batch_launch::{bases, check_k, grid, rows, ROW_CAP};
use super::kernels::{KernelFamily, BLOCK};
use super::launch::driver_err;
use super::mg_cycle::CudaTransfer;
use super::transfer::PinnedBuffer;
use super::{same_len, CudaBackend, CudaMatrix};
use crate::backend::batch::{Active, BatchCheck, BatchOps, BatchSums, HostBuffer};
use crate::backend::mg::{Guess, Relax};
use crate::backend::{BackendError, CgStep, Ratio};
use cudarc::driver::{CudaSlice, PushKernelArg};

/// `kernels/batch.cu`, with `kernels/mg.cu` before it.
pub static BATCH: KernelFamily = KernelFamily {
    file: "batch.cu",
    source: concat!(
        "#line 1 \"mg.cu\"\n",
        include_str!("../../../kernels/mg.cu"),
        "\n#line 1 \"batch.cu\"\n",
        include_str!("../../../kernels/batch.cu")
    ),
    entry_points: &[
        "bq_dot_f64",
        "bq_spmv_dot_f64",
        "bq_residual_f64",
        "bq_cg_update_f64",
        "bq_xpay_f64",
        "bq_mg_smooth_f64",
        "bq_mg_restrict_f64",
        "bq_mg_prolong_f64",
        "bq_mg_dense_f64",
    ],
};

impl BatchOps for CudaBackend {
    type BatchScratch = CudaBatchScratch;
    type HostBuffer = PinnedBuffer;

    fn host_buffer(&self, len: usize) -> Result<PinnedBuffer, BackendError> {
        // The one pinned type of the backend (`transfer`), zero-filled.
        let mut h = self.pinned(len)?;
        h.values_mut()?.fill(0.0);
        Ok(h)
    }

    fn upload_from(
        &self,
        host: &PinnedBuffer,
        dst: &mut CudaSlice<f64>,
    ) -> Result<(), BackendError> {
        same_len(host.len(), dst.len())?;
        self.htod_pinned(host, host.len(), dst, 0)
    }

    fn download_to(
        &self,
        src: &CudaSlice<f64>,
        host: &mut PinnedBuffer,
    ) -> Result<(), BackendError> {
        same_len(host.len(), src.len())?;
        self.dtoh_pinned(src, 0, src.len(), host)
    }

    fn prepare_batch(&self) -> Result<(), BackendError> {
        self.load(&BATCH)
    }

    fn batch_scratch(&self, k: usize, _n: usize) -> Result<CudaBatchScratch, BackendError> {
        check_k(k)?;
        let resident = self.info().multiprocessors * self.info().max_threads_per_multiprocessor
            / BLOCK as usize;
        let blocks = (2 * resident / k).clamp(4, 1024);
        let stream = self.stream();
        Ok(CudaBatchScratch {
            partials: stream
                .alloc_zeros::<f64>(k * blocks)
                .map_err(|e| driver_err("allocating batch partials", e))?,
            tickets: stream
                .alloc_zeros::<u32>(k)
                .map_err(|e| driver_err("allocating batch tickets", e))?,
            k,
            blocks,
        })
    }

    fn set_slots(
        &self,
        s: &mut CudaSlice<f64>,
        first: usize,
        values: &[f64],
    ) -> Result<(), BackendError> {
        if first + values.len() > s.len() {
            return Err(BackendError::Length(first + values.len(), s.len()));
        }
        let mut view = s.slice_mut(first..first + values.len());
        self.stream()
            .memcpy_htod(values, &mut view)
            .map_err(|e| driver_err("uploading batch scalars", e))
    }

    fn batch_dot(
        &self,
        x: &CudaSlice<f64>,
        y: &CudaSlice<f64>,
        out: usize,
        mask: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError> {
        let (k, s, sc) = (sums.k, &mut *sums.s, &mut *sums.scratch);
        self.scratch_for(sc, k)?;
        let n = x.len() / k;
        rows(k, n, &[x.len(), y.len()])?;
        let [out, mask] = bases(s, k, [out, mask])?;
        const NAME: &str = "bq_dot_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let nn = n as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(x)
            .arg(y)
            .arg(&nn)
            .arg(&sc.partials)
            .arg(&sc.tickets);
        args.arg(s).arg(&out).arg(&mask);
        // SAFETY: arguments in the kernel's order and types; lengths checked.
        unsafe { self.run(NAME, &mut args, grid(n, k, sc.blocks)) }
    }

    fn batch_spmv_dot(
        &self,
        a: &CudaMatrix,
        p: &CudaSlice<f64>,
        q: &mut CudaSlice<f64>,
        out: usize,
        mask: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError> {
        let (k, s, sc) = (sums.k, &mut *sums.s, &mut *sums.scratch);
        self.scratch_for(sc, k)?;
        let n = a.len();
        rows(k, n, &[p.len(), q.len()])?;
        let [out, mask] = bases(s, k, [out, mask])?;
        const NAME: &str = "bq_spmv_dot_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let (nn, sy, sz) = (n as i64, a.nx as i64, a.plane() as i64);
        let mut args = self.stream().launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(p).arg(q).arg(&nn).arg(&sy).arg(&sz);
        args.arg(&sc.partials)
            .arg(&sc.tickets)
            .arg(s)
            .arg(&out)
            .arg(&mask);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, grid(n, k, sc.blocks)) }
    }

    fn batch_residual(
        &self,
        a: &CudaMatrix,
        b: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        r: &mut CudaSlice<f64>,
        out: usize,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError> {
        let (k, s, sc) = (sums.k, &mut *sums.s, &mut *sums.scratch);
        self.scratch_for(sc, k)?;
        let n = a.len();
        rows(k, n, &[b.len(), x.len(), r.len()])?;
        let [out] = bases(s, k, [out])?;
        const NAME: &str = "bq_residual_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let (nn, sy, sz) = (n as i64, a.nx as i64, a.plane() as i64);
        let no_mask: i32 = -1;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&a.amb).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(b).arg(x).arg(r).arg(&nn).arg(&sy).arg(&sz);
        args.arg(&sc.partials)
            .arg(&sc.tickets)
            .arg(s)
            .arg(&out)
            .arg(&no_mask);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, grid(n, k, sc.blocks)) }
    }

    fn batch_cg_update(
        &self,
        alpha: Ratio,
        v: CgStep<'_, CudaSlice<f64>>,
        c: &BatchCheck,
        sums: &mut BatchSums<'_, Self>,
    ) -> Result<(), BackendError> {
        let CgStep { p, q, x, r } = v;
        let (k, s, sc) = (sums.k, &mut *sums.s, &mut *sums.scratch);
        self.scratch_for(sc, k)?;
        let n = p.len() / k;
        rows(k, n, &[p.len(), q.len(), x.len(), r.len()])?;
        let [num, den, rr, tol, status, iters] =
            bases(s, k, [alpha.num, alpha.den, c.rr, c.tol, c.status, c.iters])?;
        const NAME: &str = "bq_cg_update_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let nn = n as i64;
        let iteration = c.iteration as f64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(p).arg(q).arg(x).arg(r).arg(&nn);
        args.arg(s).arg(&num).arg(&den);
        args.arg(&sc.partials).arg(&sc.tickets);
        args.arg(&rr)
            .arg(&tol)
            .arg(&status)
            .arg(&iters)
            .arg(&iteration);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, grid(n, k, sc.blocks)) }
    }

    fn batch_xpay(
        &self,
        beta: Ratio,
        z: &CudaSlice<f64>,
        p: &mut CudaSlice<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        check_k(k)?;
        let n = z.len() / k;
        rows(k, n, &[z.len(), p.len()])?;
        let [num, den, mask] = bases(s, k, [beta.num, beta.den, mask])?;
        const NAME: &str = "bq_xpay_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let nn = n as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(z)
            .arg(p)
            .arg(&nn)
            .arg(s)
            .arg(&num)
            .arg(&den)
            .arg(&mask);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, grid(n, k, ROW_CAP)) }
    }

    fn batch_mg_smooth(
        &self,
        a: &CudaMatrix,
        relax: Relax<'_, Self>,
        b: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Relax {
            inv_pivots,
            colour,
            guess,
            made_by,
        } = relax;
        let Active { k, s, mask } = on;
        check_k(k)?;
        same_len(a.len(), inv_pivots.len())?;
        rows(k, a.len(), &[b.len(), x.len()])?;
        if let Some(t) = made_by {
            same_len(a.nx, t.as_ref().nxc)?;
            same_len(a.ny, t.as_ref().nyc)?;
        }
        let [mask] = bases(s, k, [mask])?;
        const NAME: &str = "bq_mg_smooth_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let (nx, ny, nz) = (a.nx as i64, a.ny as i64, a.nz as i64);
        let colour = (colour & 1) as i32;
        let zero: i32 = match guess {
            Guess::Full => 0,
            Guess::ColourZero => 1,
            Guess::Zero => 2,
        };
        let columns = a.nx.div_ceil(2) * a.ny;
        let mut args = self.stream().launch_builder(&f);
        args.arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(inv_pivots).arg(b).arg(x);
        args.arg(&nx).arg(&ny).arg(&nz);
        args.arg(&colour).arg(&zero);
        let null = 0u64;
        match made_by {
            Some(t) => args.arg(&t.maps),
            None => args.arg(&null),
        };
        args.arg(s).arg(&mask);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, grid(columns, k, ROW_CAP)) }
    }

    fn batch_mg_restrict_residual(
        &self,
        a: &CudaMatrix,
        t: &CudaTransfer,
        b: &CudaSlice<f64>,
        x: &CudaSlice<f64>,
        bc: &mut CudaSlice<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        let c = t.as_ref();
        check_k(k)?;
        same_len(a.len(), c.nx * c.ny * c.nz)?;
        rows(k, a.len(), &[b.len(), x.len()])?;
        rows(k, c.coarse_len(), &[bc.len()])?;
        let [mask] = bases(s, k, [mask])?;
        const NAME: &str = "bq_mg_restrict_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let dims = [c.nx, c.ny, c.nz, c.nxc, c.nyc].map(|v| v as i64);
        let mut args = self.stream().launch_builder(&f);
        args.arg(&a.d).arg(&a.gx).arg(&a.gy).arg(&a.gz);
        args.arg(b).arg(x).arg(bc);
        for d in &dims {
            args.arg(d);
        }
        args.arg(&t.maps).arg(s).arg(&mask);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, grid(c.coarse_len(), k, ROW_CAP)) }
    }

    fn batch_mg_prolong_add(
        &self,
        t: &CudaTransfer,
        xc: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        let c = t.as_ref();
        check_k(k)?;
        let n = c.nx * c.ny * c.nz;
        rows(k, n, &[x.len()])?;
        rows(k, c.coarse_len(), &[xc.len()])?;
        let [mask] = bases(s, k, [mask])?;
        const NAME: &str = "bq_mg_prolong_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let dims = [c.nx, c.ny, c.nz, c.nxc, c.nyc].map(|v| v as i64);
        let mut args = self.stream().launch_builder(&f);
        args.arg(xc).arg(x);
        for d in &dims {
            args.arg(d);
        }
        args.arg(&t.maps).arg(s).arg(&mask);
        // SAFETY: as above.
        unsafe { self.run(NAME, &mut args, grid(n, k, ROW_CAP)) }
    }

    fn batch_mg_dense_apply(
        &self,
        m: &CudaSlice<f64>,
        n: usize,
        b: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
        on: Active<'_, Self>,
    ) -> Result<(), BackendError> {
        let Active { k, s, mask } = on;
        check_k(k)?;
        same_len(n * n, m.len())?;
        rows(k, n, &[b.len(), x.len()])?;
        let [mask] = bases(s, k, [mask])?;
        const NAME: &str = "bq_mg_dense_f64";
        let f = self.kernel(&BATCH, NAME)?;
        let nn = n as i64;
        let mut args = self.stream().launch_builder(&f);
        args.arg(m).arg(b).arg(x).arg(&nn).arg(s).arg(&mask);
        // SAFETY: as above; one warp per row.
        unsafe { self.run(NAME, &mut args, grid(32 * n, k, ROW_CAP)) }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_entry_point_is_in_its_source() {
        assert!(super::BATCH.missing_entry_points(|_| None).is_empty());
    }
}
