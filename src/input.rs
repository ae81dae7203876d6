//! Reading input files with stated limits: only regular files are read
//! (not devices, FIFOs or directories: `/dev/zero` or `/dev/urandom` would
//! never end), and none larger than its limit, checked before reading and
//! again while reading (the file may grow). The limits
//! (docs/src/reliability.md, "Input limits"): text inputs (stack,
//! floorplan, power trace, topopt problem) [`MAX_TEXT_BYTES`], rasters (CSV or PNG) [`MAX_RASTER_BYTES`], state files
//! the size their grid implies.

use std::io::{self, Read};
use std::path::Path;

/// Stack files, floorplans, power traces, topopt problem files: 64 MiB.
pub const MAX_TEXT_BYTES: u64 = 64 << 20;
/// CSV and PNG power rasters: 256 MiB.
pub const MAX_RASTER_BYTES: u64 = 256 << 20;

/// The bytes of `path`, a regular file of at most `limit` bytes.
pub fn read_limited(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    let too_big = || {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("larger than the limit of {limit} bytes"),
        )
    };
    if meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)?
        .take(limit + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    Ok(bytes)
}

/// [`read_limited`] as UTF-8 text.
pub fn read_text(path: &Path, limit: u64) -> io::Result<String> {
    String::from_utf8(read_limited(path, limit)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_and_oversized_files_are_refused() {
        let e = read_limited(Path::new("/dev/zero"), 10).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        assert!(read_limited(dir.path(), 10).is_err());
        let f = dir.path().join("f");
        std::fs::write(&f, [7u8; 11]).unwrap();
        let e = read_limited(&f, 10).unwrap_err();
        assert!(e.to_string().contains("limit of 10 bytes"), "{e}");
        assert_eq!(read_limited(&f, 11).unwrap(), [7u8; 11]);
    }
}
