//! Decoded raster power maps kept across the cases of a sweep: a manifest
//! that scales one CSV raster per case (`total = ...`) decoded it once per
//! case, which made case preparation the bottleneck at 1000+ cases/s
//! (BENCHMARKS.md, sweeps). [`RasterCache::read`] decodes a file the first
//! time and hands out the same [`Raster`] afterwards, keyed by path; the
//! scaling and rasterizing stay per case, so a case's map is bit for bit
//! the uncached one. Failures are not kept (each case that names a bad file
//! reports it). Bounded: past [`RasterCache::new`]'s byte budget new rasters
//! are decoded per use and not kept, so a sweep over 10 000 distinct maps
//! holds no more than the budget (and an empty slot per path). Workers that
//! need the same file at once wait for one decode.

use super::PowerError;
use crate::formats::csv_raster::{read_raster, Raster};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where [`super::layer::layer_power_with`] gets raster files from.
pub trait RasterSource: Sync {
    fn read(&self, path: &Path) -> Result<Arc<Raster>, PowerError>;
}

/// Every read decodes the file (`cuth solve`, one use per file).
pub struct Direct;

impl RasterSource for Direct {
    fn read(&self, path: &Path) -> Result<Arc<Raster>, PowerError> {
        read_raster(path).map(Arc::new).map_err(PowerError::from)
    }
}

/// Decoded rasters by path, up to a byte budget; shared by threads.
pub struct RasterCache {
    budget_bytes: usize,
    inner: Mutex<Kept>,
}

/// One file's decoded raster once read (and within the budget).
type Slot = Arc<Mutex<Option<Arc<Raster>>>>;

#[derive(Default)]
struct Kept {
    by_path: HashMap<PathBuf, Slot>,
    bytes: usize,
    decodes: usize,
}

/// A lock whose holder panicked still guards consistent data here (every
/// update is a single assignment), so poisoning is ignored.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl RasterCache {
    /// A cache that keeps at most `budget_bytes` of decoded values.
    pub fn new(budget_bytes: usize) -> RasterCache {
        RasterCache {
            budget_bytes,
            inner: Mutex::new(Kept::default()),
        }
    }

    /// How many times a file was decoded (for tests and reports).
    pub fn decodes(&self) -> usize {
        lock(&self.inner).decodes
    }
}

impl RasterSource for RasterCache {
    fn read(&self, path: &Path) -> Result<Arc<Raster>, PowerError> {
        let slot: Slot = Arc::clone(
            lock(&self.inner)
                .by_path
                .entry(path.to_path_buf())
                .or_default(),
        );
        // Workers that need the same file wait for one decode; different
        // files decode in parallel (only the slot is held meanwhile).
        let mut held = lock(&slot);
        if let Some(r) = held.as_ref() {
            return Ok(Arc::clone(r));
        }
        let r = Arc::new(read_raster(path)?);
        let size = r.values.len() * std::mem::size_of::<f64>();
        let mut k = lock(&self.inner);
        k.decodes += 1;
        if k.bytes + size <= self.budget_bytes {
            k.bytes += size;
            *held = Some(Arc::clone(&r));
        }
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_once_within_the_budget_and_never_keeps_failures() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        let b = dir.path().join("b.csv");
        std::fs::write(&a, "1,2\n3,4\n").unwrap();
        std::fs::write(&b, "5,6,7\n").unwrap();
        // Room for a (4 values) but not for b as well.
        let cache = RasterCache::new(4 * 8 + 8);
        for _ in 0..3 {
            assert_eq!(cache.read(&a).unwrap().values, [1.0, 2.0, 3.0, 4.0]);
        }
        assert_eq!(cache.decodes(), 1);
        for _ in 0..2 {
            assert_eq!(cache.read(&b).unwrap().values, [5.0, 6.0, 7.0]);
        }
        assert_eq!(cache.decodes(), 3, "b is over the budget: decoded per use");
        let bad = dir.path().join("bad.csv");
        std::fs::write(&bad, "1,x\n").unwrap();
        assert!(cache.read(&bad).is_err());
        std::fs::write(&bad, "8\n").unwrap();
        // The failure was not kept: the mended file reads.
        assert_eq!(cache.read(&bad).unwrap().values, [8.0]);
    }

    #[test]
    fn threads_reading_one_file_decode_it_once() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        std::fs::write(&a, "1,2\n3,4\n").unwrap();
        let cache = RasterCache::new(1 << 20);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| assert_eq!(cache.read(&a).unwrap().sum(), 10.0));
            }
        });
        assert_eq!(cache.decodes(), 1);
    }
}
