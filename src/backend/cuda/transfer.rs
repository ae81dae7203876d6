//! Host ↔ device copies through page-locked memory:
//! [`PinnedBuffer`] is the one pinned host type of the backend, used by the
//! staged downloads here and as a batched sweep's double buffers
//! (`BatchOps::HostBuffer`, `batch.rs`). A pageable `cuMemcpyDtoH` ran at
//! about 1.3 GB/s on the H200 host (BENCHMARKS.md): the
//! driver bounces through its own small pinned buffer and the fresh
//! destination pages fault one by one. Here a large vector comes down in
//! pieces of [`STAGE_VALUES`] through two buffers in turn: while the GPU
//! fills one, the host works on the other ([`CudaBackend::download_pieces`]:
//! the post-solve statistics fold each piece, so the field never has to be
//! held whole; [`CudaBackend::download_to`]: the CPU threads copy it into
//! the destination, faulting its pages in parallel). Small copies keep the
//! direct path. The backend's [`TransferKnobs`](crate::knobs::TransferKnobs) can turn the staging off
//! (for comparison) or size its buffers. Large uploads (the device
//! assembly's power maps) go up through the same two buffers
//! ([`CudaBackend::upload_staged`]).

use super::launch::driver_err;
use super::CudaBackend;
use crate::backend::batch::HostBuffer;
use crate::backend::BackendError;
use cudarc::driver::{CudaEvent, CudaSlice, DevicePtr, DevicePtrMut, PinnedHostSlice};
use rayon::prelude::*;
use std::sync::Mutex;

/// Values per staging buffer (32 MiB of f64); a vector shorter than this
/// gets buffers of its own length. The backend keeps its buffers between
/// downloads. 32 MiB rather than 128: pinning two 128 MiB buffers on the
/// init thread slowed the context's module loads beside it (H200, 2048²:
/// non-PCG 0.55 s against 0.61 s), while 8192² ran in the same wall time
/// (7.26 s against 7.30 s; BENCHMARKS.md).
pub const STAGE_VALUES: usize = 4 << 20;
/// Copies shorter than this go directly (pageable).
const DIRECT_BELOW: usize = 4 << 20;

/// Page-locked host memory (plain, not write-combined: the host reads it
/// too), with the event of the last copy queued into or out of it:
/// [`HostBuffer::values`] waits for that copy only, not for later work on
/// the stream. The event is the buffer's own, recorded explicitly: the
/// backend turns cudarc's event tracking off (one stream), and with it the
/// events `PinnedHostSlice` would record itself.
#[derive(Debug)]
pub struct PinnedBuffer {
    host: PinnedHostSlice<f64>,
    len: usize,
    /// The last copy's event (a lock: an upload reads the buffer through
    /// `&self`).
    done: Mutex<Option<CudaEvent>>,
}

impl PinnedBuffer {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Waits for the last copy queued on the buffer.
    fn wait(&self) -> Result<(), BackendError> {
        match &*self.done.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => e
                .synchronize()
                .map_err(|e| driver_err("waiting for a copy through pinned memory", e)),
            None => Ok(()),
        }
    }

    fn mark(&self, e: CudaEvent) {
        *self.done.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
    }

    fn ptr(&self) -> Result<*mut f64, BackendError> {
        // The slice's own event is never recorded (see the type's doc), so
        // this does not wait; `wait` does.
        (self.host.as_ptr().map(|p| p as *mut f64)).map_err(|e| driver_err("pinned memory", e))
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        // No copy may still read or write the memory when it is unpinned
        // and freed (an error here has already been reported, or will be
        // at the next synchronization).
        let _ = self.wait();
    }
}

impl HostBuffer for PinnedBuffer {
    fn values(&self) -> Result<&[f64], BackendError> {
        self.wait()?;
        // SAFETY: `len` values of page-locked memory owned by `host`, no
        // copy in flight (waited above), borrowed for the life of `&self`.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr()?, self.len) })
    }
    fn values_mut(&mut self) -> Result<&mut [f64], BackendError> {
        self.wait()?;
        // SAFETY: as above, borrowed mutably through `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr()?, self.len) })
    }
}

impl CudaBackend {
    /// Values per staging buffer: [`STAGE_VALUES`], or
    /// [`TransferKnobs::stage_mib`](crate::knobs::TransferKnobs::stage_mib) MiB of f64 (at least the direct-copy
    /// threshold).
    pub fn stage_values(&self) -> usize {
        (self.knobs.transfer.stage_mib)
            .map(|mib| (mib << 20) / std::mem::size_of::<f64>())
            .map_or(STAGE_VALUES, |v| v.max(DIRECT_BELOW))
    }

    /// A pinned buffer of `len` values, uninitialised: every reader must
    /// have it filled first (by a copy, or [`HostBuffer::values_mut`]).
    pub(crate) fn pinned(&self, len: usize) -> Result<PinnedBuffer, BackendError> {
        // SAFETY: page-locked memory of `len` f64 (any bit pattern is a
        // valid f64); flags 0: plain, cached memory, which the host reads.
        let host = unsafe { self.ctx.alloc_pinned_with_flags::<f64>(len.max(1), 0) }
            .map_err(|e| driver_err("allocating page-locked host memory", e))?;
        Ok(PinnedBuffer {
            host,
            len,
            done: Mutex::new(None),
        })
    }

    /// buf[..hi − lo] = v[lo..hi], queued; the buffer's event marks it.
    pub(crate) fn dtoh_pinned(
        &self,
        v: &CudaSlice<f64>,
        lo: usize,
        hi: usize,
        buf: &mut PinnedBuffer,
    ) -> Result<(), BackendError> {
        if lo > hi || hi > v.len() || hi - lo > buf.len {
            return Err(BackendError::Length(hi - lo, buf.len));
        }
        let err = |e| driver_err("downloading into pinned memory", e);
        // A new copy into the buffer must not overtake a reader: the host
        // holds no borrow here (`&mut`), and the last copy is ordered
        // before this one on the stream.
        let dst = buf.ptr()?;
        let (src, _read) = v.device_ptr(&self.stream);
        // SAFETY: `hi − lo` values inside `v` to as many inside the buffer;
        // the host reads them only after the event recorded below.
        unsafe {
            let host = std::slice::from_raw_parts_mut(dst, hi - lo);
            cudarc::driver::result::memcpy_dtoh_async(
                host,
                src + (lo * std::mem::size_of::<f64>()) as u64,
                self.stream.cu_stream(),
            )
            .map_err(err)?;
        }
        buf.mark(self.stream.record_event(None).map_err(err)?);
        Ok(())
    }

    /// dst[at..at + len] = buf[..len], queued; the buffer's event marks it,
    /// so that the buffer is rewritten only once the copy has read it.
    pub(crate) fn htod_pinned(
        &self,
        buf: &PinnedBuffer,
        len: usize,
        dst: &mut CudaSlice<f64>,
        at: usize,
    ) -> Result<(), BackendError> {
        if len > buf.len || at + len > dst.len() {
            return Err(BackendError::Length(at + len, dst.len().min(at + buf.len)));
        }
        let err = |e| driver_err("uploading from pinned memory", e);
        let src = buf.ptr()?;
        let (dptr, _write) = dst.device_ptr_mut(&self.stream);
        // SAFETY: `len` values of the buffer to as many inside `dst`; the
        // host writes the buffer again only after the event recorded below.
        unsafe {
            let host = std::slice::from_raw_parts(src as *const f64, len);
            let dptr = dptr + (at * std::mem::size_of::<f64>()) as u64;
            cudarc::driver::result::memcpy_htod_async(dptr, host, self.stream.cu_stream())
                .map_err(err)?;
        }
        buf.mark(self.stream.record_event(None).map_err(err)?);
        Ok(())
    }

    /// Calls `f(first, values)` for consecutive pieces of `v`, in order,
    /// each at most [`STAGE_VALUES`] long: piece k + 1 is copied while `f`
    /// reads piece k. A vector shorter than the direct-copy threshold comes
    /// in one piece.
    pub(crate) fn download_pieces(
        &self,
        v: &CudaSlice<f64>,
        f: &mut crate::backend::PieceFn,
    ) -> Result<(), BackendError> {
        let n = v.len();
        if n < DIRECT_BELOW || self.knobs.transfer.pageable_download {
            let mut h = vec![0.0; n];
            self.stream
                .memcpy_dtoh(v, &mut h)
                .map_err(|e| driver_err("downloading a vector", e))?;
            self.sync("downloading a vector")?;
            return f(0, &h);
        }
        let chunk = self.stage_values().min(n);
        let chunks = n.div_ceil(chunk);
        let range = |k: usize| (k * chunk, ((k + 1) * chunk).min(n));
        let mut bufs = self.staging_buffers(chunk)?;
        let mut run = || -> Result<(), BackendError> {
            for k in 0..2.min(chunks) {
                let (lo, hi) = range(k);
                self.dtoh_pinned(v, lo, hi, &mut bufs[k % 2])?;
            }
            for k in 0..chunks {
                let (lo, hi) = range(k);
                // Waits for copy k only (the buffer's event).
                f(lo, &bufs[k % 2].values()?[..hi - lo])?;
                if k + 2 < chunks {
                    let (lo, hi) = range(k + 2);
                    self.dtoh_pinned(v, lo, hi, &mut bufs[k % 2])?;
                }
            }
            Ok(())
        };
        let result = run();
        if result.is_err() {
            // No copy may still write into the buffers when they are freed
            // or lent again.
            let _ = self.stream.synchronize();
        }
        *self.staging.lock().unwrap_or_else(|p| p.into_inner()) = bufs.into();
        result
    }

    /// `parts` one after another into `dst` (their total length) through
    /// the two staging buffers: the host's threads fill one with piece
    /// k + 1 while piece k is copied from the other. Used when the buffers
    /// are pinned already (a run that downloads maps) or the upload is large
    /// enough to pay for pinning them and keeping them pinned (26 ms and
    /// 64 MiB of peak RSS). Measured on the H200 (2026-11-30,
    /// BENCHMARKS.md's git history): 8192²'s power maps (1 GiB) 0.14 → 0.06 s; 4096²'s
    /// (268 MB) 0.046 → 0.041 s, not worth the 64 MiB; hence 512 MiB.
    /// Returns `false`, copying nothing, otherwise (or with
    /// [`TransferKnobs::pageable_upload`](crate::knobs::TransferKnobs::pageable_upload), for comparison).
    pub(crate) fn upload_staged(
        &self,
        parts: &[&[f64]],
        dst: &mut CudaSlice<f64>,
    ) -> Result<bool, BackendError> {
        let n: usize = parts.iter().map(|p| p.len()).sum();
        super::same_len(n, dst.len())?;
        let stage = self.stage_values();
        let chunk = stage.min(n);
        let kept = (self
            .staging
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter())
        .filter(|b| b.len() >= chunk)
        .count();
        let pays = n >= 16 * stage || (kept == 2 && n >= DIRECT_BELOW);
        if !pays || self.knobs.transfer.pageable_upload {
            return Ok(false);
        }
        let mut bufs = self.staging_buffers(chunk)?;
        let mut run = || -> Result<(), BackendError> {
            let (mut at, mut k) = (0, 0);
            for piece in parts.iter().flat_map(|p| p.chunks(chunk)) {
                let buf = &mut bufs[k % 2];
                // Waits for the copy that last read this buffer only.
                (buf.values_mut()?[..piece.len()].par_chunks_mut(1 << 16))
                    .zip(piece.par_chunks(1 << 16))
                    .for_each(|(d, s)| d.copy_from_slice(s));
                self.htod_pinned(buf, piece.len(), dst, at)?;
                (at, k) = (at + piece.len(), k + 1);
            }
            Ok(())
        };
        let result = run();
        if result.is_err() {
            // No copy may still read the buffers when they are lent again.
            let _ = self.stream.synchronize();
        }
        *self.staging.lock().unwrap_or_else(|p| p.into_inner()) = bufs.into();
        result.map(|()| true)
    }

    /// Pins the staging buffers a download of `values` values will use
    /// now (pinning the two 32 MiB buffers took 26 ms on the H200: a caller can do it
    /// while the host is busy with something else).
    pub fn reserve_staging(&self, values: usize) -> Result<(), BackendError> {
        if values < DIRECT_BELOW {
            return Ok(());
        }
        let bufs = self.staging_buffers(values.min(self.stage_values()))?;
        *self.staging.lock().unwrap_or_else(|p| p.into_inner()) = bufs.into();
        Ok(())
    }

    /// The two staging buffers, of at least `len` values: the backend's
    /// own when they are large enough, else new ones (which it keeps).
    fn staging_buffers(&self, len: usize) -> Result<[PinnedBuffer; 2], BackendError> {
        let kept = std::mem::take(&mut *self.staging.lock().unwrap_or_else(|p| p.into_inner()));
        match <[PinnedBuffer; 2]>::try_from(kept) {
            Ok(b) if b[0].len() >= len && b[1].len() >= len => Ok(b),
            // Too small (or none): freed here, new ones made.
            _ => Ok([self.pinned(len)?, self.pinned(len)?]),
        }
    }

    /// Copies `v` into `dst` (same length) and waits for it.
    pub(crate) fn download_to(
        &self,
        v: &CudaSlice<f64>,
        dst: &mut [f64],
        what: &str,
    ) -> Result<(), BackendError> {
        super::same_len(v.len(), dst.len())?;
        self.download_pieces(v, &mut |lo, piece| {
            dst[lo..lo + piece.len()]
                .par_chunks_mut(1 << 16)
                .zip(piece.par_chunks(1 << 16))
                .for_each(|(d, s)| d.copy_from_slice(s));
            Ok(())
        })
        .map_err(|e| match e {
            BackendError::Driver(m) => BackendError::Driver(format!("downloading {what}: {m}")),
            e => e,
        })
    }
}
