//! On-disk cache of compiled kernel images, as CuPy's `~/.cupy/kernel_cache`
//! and PyTorch's JIT cache: NVRTC takes 0.1–0.5 s a family, a cached CUBIN
//! loads in milliseconds. The key is a 128-bit hash of everything the image
//! depends on ([`KeyParts`]: program source with the common prelude, entry
//! points, NVRTC options and version, the device's compute capability and
//! architecture, cuth's version); the value is NVRTC's output, a CUBIN for
//! the device's own `sm_XY` (so the driver does not JIT it) or PTX when the
//! device is newer than NVRTC.
//!
//! Location: the folder the backend is given
//! ([`CudaKnobs::kernel_cache`](crate::knobs::CudaKnobs::kernel_cache),
//! where the environment names it), or none for no cache. Entries
//! are written atomically (a temporary file in the cache folder, then a
//! rename), so a concurrent run reads a whole entry or none. An entry that
//! is truncated, corrupt, for another key, or that the driver refuses to
//! load is compiled again and overwritten: the cache never fails a run. A
//! folder that cannot be written is skipped, with a note that `--verbose`
//! prints ([`take_notes`]). Pure file logic: no CUDA here, so everything is
//! tested on any machine with a stand-in compiler.

use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// What NVRTC produced: a CUBIN for one real architecture, or PTX text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    Cubin,
    Ptx,
}

impl ImageKind {
    fn extension(self) -> &'static str {
        match self {
            ImageKind::Cubin => "cubin",
            ImageKind::Ptx => "ptx",
        }
    }
}

/// A compiled family as `cuModuleLoadData` takes it (PTX ends with a NUL).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelImage {
    pub kind: ImageKind,
    pub bytes: Vec<u8>,
}

impl KernelImage {
    /// A PTX image from its text, NUL-terminated for the driver.
    pub fn ptx(mut bytes: Vec<u8>) -> KernelImage {
        if bytes.last() != Some(&0) {
            bytes.push(0);
        }
        KernelImage {
            kind: ImageKind::Ptx,
            bytes,
        }
    }
}

/// Everything a compiled image depends on.
#[derive(Clone, Debug)]
pub struct KeyParts<'a> {
    /// The whole program NVRTC compiles (prelude included).
    pub source: &'a str,
    pub entry_points: &'a [&'a str],
    pub options: &'a [String],
    pub nvrtc: (i32, i32),
    /// Compute capability of the device the image is for.
    pub compute_capability: (i32, i32),
    /// `sm_90`, `compute_100`, ...
    pub arch: &'a str,
    pub cuth_version: &'a str,
}

/// A cache key: the family's file stem (for readable names) and the hash.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    pub stem: String,
    pub digest: u128,
}

impl CacheKey {
    /// The key of `family` (its file name, `blas1.cu`) with `parts`.
    pub fn new(family: &str, parts: &KeyParts) -> CacheKey {
        let mut h = Fnv128::new();
        // Each field is length-prefixed, so no two different tuples hash
        // the same stream of bytes.
        h.field(b"cuth-kernel-cache-v1");
        h.field(parts.cuth_version.as_bytes());
        h.field(parts.source.as_bytes());
        for e in parts.entry_points {
            h.field(e.as_bytes());
        }
        h.field(b"|options");
        for o in parts.options {
            h.field(o.as_bytes());
        }
        h.field(format!("nvrtc {}.{}", parts.nvrtc.0, parts.nvrtc.1).as_bytes());
        let cc = parts.compute_capability;
        h.field(format!("cc {}.{} {}", cc.0, cc.1, parts.arch).as_bytes());
        CacheKey {
            stem: family.trim_end_matches(".cu").to_string(),
            digest: h.0,
        }
    }

    /// File name of the entry for an image of `kind`.
    pub fn file_name(&self, kind: ImageKind) -> String {
        format!("{}-{:032x}.{}", self.stem, self.digest, kind.extension())
    }
}

/// FNV-1a, 128 bits: stable across Rust versions and machines (std's
/// hashers promise neither), and ample for a few dozen entries.
struct Fnv128(u128);

impl Fnv128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013b;

    fn new() -> Fnv128 {
        Fnv128(Self::OFFSET)
    }

    fn bytes(&mut self, b: &[u8]) {
        for &x in b {
            self.0 ^= x as u128;
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }

    fn field(&mut self, b: &[u8]) {
        self.bytes(&(b.len() as u64).to_le_bytes());
        self.bytes(b);
    }
}

/// Checksum of an entry's payload (FNV-1a, 64 bits).
fn checksum(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf29ce484222325u64, |h, &x| {
        (h ^ x as u64).wrapping_mul(0x100000001b3)
    })
}

const MAGIC: &[u8; 8] = b"CUTHKC01";
const HEADER: usize = 8 + 16 + 1 + 8 + 8;

/// An entry's bytes: magic, key digest, kind, payload length and checksum
/// (little-endian), then the payload.
pub fn encode_entry(digest: u128, image: &KernelImage) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + image.bytes.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&digest.to_le_bytes());
    out.push(match image.kind {
        ImageKind::Cubin => 0,
        ImageKind::Ptx => 1,
    });
    out.extend_from_slice(&(image.bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(&checksum(&image.bytes).to_le_bytes());
    out.extend_from_slice(&image.bytes);
    out
}

/// The digest and image of an entry; `None` when anything does not match
/// (magic, length, checksum, kind).
pub fn decode_entry(b: &[u8]) -> Option<(u128, KernelImage)> {
    if b.len() < HEADER || &b[..8] != MAGIC {
        return None;
    }
    let digest = u128::from_le_bytes(b[8..24].try_into().ok()?);
    let kind = match b[24] {
        0 => ImageKind::Cubin,
        1 => ImageKind::Ptx,
        _ => return None,
    };
    let len = u64::from_le_bytes(b[25..33].try_into().ok()?);
    let sum = u64::from_le_bytes(b[33..41].try_into().ok()?);
    let payload = &b[HEADER..];
    if payload.len() as u64 != len || checksum(payload) != sum || payload.is_empty() {
        return None;
    }
    let bytes = payload.to_vec();
    Some((digest, KernelImage { kind, bytes }))
}

static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

pub(crate) fn note(s: String) {
    NOTES.lock().unwrap_or_else(|e| e.into_inner()).push(s);
}

/// Notes on cache entries that were skipped or replaced since the last
/// call (for `--verbose`); the cache never fails a run.
pub fn take_notes() -> Vec<String> {
    std::mem::take(&mut *NOTES.lock().unwrap_or_else(|e| e.into_inner()))
}

/// Where an image came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Disk,
    Compiled,
}

/// The entry for `key` in `dir`, if present and whole (either kind).
pub fn read(dir: &Path, key: &CacheKey) -> Option<KernelImage> {
    for kind in [ImageKind::Cubin, ImageKind::Ptx] {
        let path = dir.join(key.file_name(kind));
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        match decode_entry(&bytes) {
            Some((d, img)) if d == key.digest && img.kind == kind => return Some(img),
            _ => note(format!(
                "kernel cache: {} is damaged; compiling again",
                path.display()
            )),
        }
    }
    None
}

/// Writes the entry atomically: a temporary file beside it, then a rename
/// over any older one.
pub fn write(dir: &Path, key: &CacheKey, image: &KernelImage) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new().prefix(".tmp-").tempfile_in(dir)?;
    tmp.write_all(&encode_entry(key.digest, image))?;
    tmp.as_file().sync_data()?;
    tmp.persist(dir.join(key.file_name(image.kind)))
        .map_err(|e| e.error)?;
    Ok(())
}

/// The image for `key`: from `dir` when a whole entry is there, else from
/// `compile` (then stored; a failed store is only a note).
pub fn get_or_compile<E>(
    dir: Option<&Path>,
    key: &CacheKey,
    compile: impl FnOnce() -> Result<KernelImage, E>,
) -> Result<(KernelImage, Source), E> {
    if let Some(dir) = dir {
        let hit = crate::profile::part("kernels/cache_read", || read(dir, key));
        if let Some(img) = hit {
            return Ok((img, Source::Disk));
        }
    }
    let img = compile()?;
    if let Some(dir) = dir {
        store(dir, key, &img);
    }
    Ok((img, Source::Compiled))
}

/// [`write()`], failures turned into a note.
pub fn store(dir: &Path, key: &CacheKey, image: &KernelImage) {
    let r = crate::profile::part("kernels/cache_write", || write(dir, key, image));
    if let Err(e) = r {
        note(format!(
            "kernel cache: cannot write under {}: {e}; not cached",
            dir.display()
        ));
    }
}

/// The entries under `dir`: (file name, bytes), sorted by name.
pub fn entries(dir: &Path) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let kernel = name.ends_with(".cubin") || name.ends_with(".ptx");
            (kernel && !name.starts_with('.')).then(|| (name, e.metadata().map_or(0, |m| m.len())))
        })
        .collect();
    v.sort();
    v
}

/// One line for `cuth info`: the folder `dir` and its entries, or why the
/// cache is off.
pub fn info_line(dir: Option<&Path>) -> String {
    match dir {
        None => "kernel cache: off (CUTH_NO_KERNEL_CACHE, or no HOME)".into(),
        Some(d) => {
            let e = entries(d);
            let bytes: u64 = e.iter().map(|(_, b)| b).sum();
            format!(
                "kernel cache: {} ({} entries, {:.1} MiB)",
                d.display(),
                e.len(),
                bytes as f64 / (1u64 << 20) as f64
            )
        }
    }
}
