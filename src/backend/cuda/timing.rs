//! GPU-side timing for the benchmark: CUDA events around a batch of
//! launches, CUDA graphs (which replay kernels back to back without the
//! host's launch cost, to see the kernel's own time at small sizes), and the
//! device-to-device copy bandwidth every kernel figure is compared with.

use super::launch::driver_err;
use super::CudaBackend;
use crate::backend::BackendError;
use cudarc::driver::sys::{CUevent_flags, CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::{CudaEvent, CudaGraph, DevicePtr};
use std::sync::atomic::Ordering;

/// Copy bandwidth counted as bytes read + written, GB/s (10⁹ B/s).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct CopyBandwidth {
    pub bytes_per_copy: u64,
    pub median_ms: f64,
    pub gb_per_s: f64,
}

/// Median of a non-empty sample (NaN if empty).
pub fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// A CUDA graph a solver replays ([`CudaBackend::record`]).
pub struct Recording(CudaGraph);

// SAFETY: a graph must not be used from two threads at once; a `Recording`
// is launched only through its owner (`&` access under the owner's `&mut`
// apply), so moving it to another thread with its owner is sound. It is
// not `Sync`.
unsafe impl Send for Recording {}

impl CudaBackend {
    fn timing_event(&self) -> Result<CudaEvent, BackendError> {
        self.ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| driver_err("creating a timing event", e))
    }

    /// GPU time of what `f` enqueues, in ms, measured by two events on the
    /// backend's stream (waits for completion).
    pub fn time_ms(
        &self,
        f: impl FnOnce() -> Result<(), BackendError>,
    ) -> Result<f64, BackendError> {
        let (start, stop) = (self.timing_event()?, self.timing_event()?);
        start
            .record(&self.stream)
            .map_err(|e| driver_err("recording an event", e))?;
        f()?;
        stop.record(&self.stream)
            .map_err(|e| driver_err("recording an event", e))?;
        let ms = start
            .elapsed_ms(&stop)
            .map_err(|e| driver_err("reading an event", e))?;
        Ok(ms as f64)
    }

    /// Captures what `f` enqueues into a CUDA graph instead of running it.
    /// Per-launch synchronization is suspended during capture (a capturing
    /// stream cannot be synchronized).
    pub fn capture(
        &self,
        f: impl FnOnce() -> Result<(), BackendError>,
    ) -> Result<CudaGraph, BackendError> {
        self.sync("before graph capture")?;
        let was = self.sync_each_launch.swap(false, Ordering::Relaxed);
        self.stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .map_err(|e| driver_err("beginning graph capture", e))?;
        let body = f();
        // End the capture whatever happened, or the stream stays unusable.
        let graph = self.stream.end_capture(CUgraphInstantiate_flags(0));
        self.sync_each_launch.store(was, Ordering::Relaxed);
        body?;
        graph
            .map_err(|e| driver_err("instantiating the graph", e))?
            .ok_or_else(|| BackendError::Driver("graph capture recorded nothing".into()))
    }

    /// [`Self::capture`] for a solver to replay, `None` while launches are
    /// checked one by one ([`CudaKnobs::sync_each_launch`]) or graphs are
    /// off ([`CudaKnobs::no_graphs`]).
    ///
    /// [`CudaKnobs::sync_each_launch`]: crate::knobs::CudaKnobs::sync_each_launch
    /// [`CudaKnobs::no_graphs`]: crate::knobs::CudaKnobs::no_graphs
    pub fn record(
        &self,
        f: &mut dyn FnMut() -> Result<(), BackendError>,
    ) -> Result<Option<Recording>, BackendError> {
        if self.sync_each_launch.load(Ordering::Relaxed) || !self.graphs.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let graph = self.capture(f)?;
        graph
            .upload()
            .map_err(|e| driver_err("uploading a graph", e))?;
        Ok(Some(Recording(graph)))
    }

    /// Launches a recording made by [`Self::record`].
    pub fn replay(&self, r: &Recording) -> Result<(), BackendError> {
        r.0.launch().map_err(|e| driver_err("launching a graph", e))
    }

    /// The device address of `v`'s storage.
    pub fn address<T>(&self, v: &cudarc::driver::CudaSlice<T>) -> usize {
        let (ptr, _guard) = v.device_ptr(&self.stream);
        ptr as usize
    }

    /// GPU time of one replay of `graph`, in ms.
    pub fn time_graph_ms(&self, graph: &CudaGraph) -> Result<f64, BackendError> {
        self.time_ms(|| {
            graph
                .launch()
                .map_err(|e| driver_err("launching a graph", e))
        })
    }

    /// Device-to-device copy bandwidth over two buffers of `bytes` each
    /// (reads + writes counted), median of `reps` timed copies after one
    /// warm-up. Buffers far larger than L2 measure DRAM.
    pub fn copy_bandwidth(&self, bytes: usize, reps: usize) -> Result<CopyBandwidth, BackendError> {
        use crate::backend::Backend;
        let n = (bytes / 8).max(1);
        let src = self.zeros(n)?;
        let mut dst = self.zeros(n)?;
        self.copy(&src, &mut dst)?;
        let mut ms = Vec::with_capacity(reps);
        for _ in 0..reps.max(1) {
            ms.push(self.time_ms(|| self.copy(&src, &mut dst))?);
        }
        let median_ms = median(ms);
        let moved = 2 * 8 * n as u64;
        Ok(CopyBandwidth {
            bytes_per_copy: moved,
            median_ms,
            gb_per_s: moved as f64 / (median_ms * 1e-3) / 1e9,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(vec![]).is_nan());
    }
}
