//! The kernel cache on a GPU, through the `cuth` binary (each run is a new
//! process, so nothing is kept in memory between runs): the first run
//! compiles and writes CUBINs, the second loads them without NVRTC and
//! gives a bitwise identical field, a truncated entry and an entry the
//! driver refuses are compiled again and overwritten, and with the cache
//! off nothing is written. `CUTH_BIN` names the binary when it is not where
//! cargo built it (a staged GPU machine).

use crate::util::cli::cuth_path as cuth;
use cuth::backend::cuda::kernel_cache as kc;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Run {
    field: Vec<u8>,
    /// `timings_detail_s` names.
    parts: Vec<String>,
    stderr: String,
}

fn solve(cache: Option<&Path>, out: &Path) -> Run {
    let stack = Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/mol_f2f.toml");
    let mut cmd = Command::new(cuth());
    cmd.arg("solve")
        .arg(&stack)
        .args([
            "--device",
            "cuda",
            "--grid",
            "256x256",
            "--json",
            "--verbose",
        ])
        .args(["--no-maps", "--npy", "f64", "--out"])
        .arg(out)
        .env_remove("CUTH_NO_KERNEL_CACHE");
    match cache {
        Some(d) => cmd.env("CUTH_CACHE_DIR", d),
        None => cmd.env("CUTH_NO_KERNEL_CACHE", "1"),
    };
    let o = cmd.output().expect("running cuth");
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "cuth failed: {stderr}");
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).expect("summary JSON");
    let parts = (s["timings_detail_s"]
        .as_array()
        .expect("timings_detail_s")
        .iter())
    .map(|p| p[0].as_str().unwrap().to_string())
    .collect();
    let field = std::fs::read(out.join("field.npy")).expect("field.npy");
    Run {
        field,
        parts,
        stderr,
    }
}

fn compiled(r: &Run) -> bool {
    r.parts.iter().any(|p| p == "kernels/compile")
}

/// The BLAS-1 family's entry (every run loads it).
fn blas1_entry(dir: &Path) -> PathBuf {
    let e = kc::entries(dir);
    let name = e
        .iter()
        .find(|(n, _)| n.starts_with("blas1-"))
        .expect("blas1 entry");
    dir.join(&name.0)
}

#[test]
#[ignore = "needs a CUDA GPU"]
fn second_run_loads_from_the_cache_with_the_same_answer() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let first = solve(Some(&cache), &tmp.path().join("o1"));
    assert!(compiled(&first), "first run compiles: {:?}", first.parts);
    let entries = kc::entries(&cache);
    println!("entries after the first run: {entries:?}");
    assert!(entries.len() >= 3, "{entries:?}");
    // The device's own sm_XY: CUBINs, not PTX.
    assert!(entries.iter().all(|(n, b)| n.ends_with(".cubin") && *b > 0));

    let second = solve(Some(&cache), &tmp.path().join("o2"));
    assert!(
        !compiled(&second),
        "second run compiled: {:?}",
        second.parts
    );
    assert!(second.parts.iter().any(|p| p == "kernels/cache_read"));
    assert_eq!(kc::entries(&cache), entries, "nothing rewritten");
    assert!(
        first.field == second.field,
        "cached kernels change the field"
    );

    // A truncated entry: compiled again, overwritten whole.
    let path = blas1_entry(&cache);
    let whole = std::fs::read(&path).unwrap();
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    let third = solve(Some(&cache), &tmp.path().join("o3"));
    assert!(compiled(&third), "{:?}", third.parts);
    assert!(third.stderr.contains("damaged"), "{}", third.stderr);
    assert!(kc::decode_entry(&std::fs::read(&path).unwrap()).is_some());
    assert!(third.field == first.field);

    // A whole entry (header and checksum right) the driver refuses.
    let (digest, _) = kc::decode_entry(&std::fs::read(&path).unwrap()).unwrap();
    let junk = kc::KernelImage {
        kind: kc::ImageKind::Cubin,
        // NUL-terminated: the driver reads what is not ELF as PTX text.
        bytes: b"not an ELF image, nor PTX\0".repeat(64),
    };
    std::fs::write(&path, kc::encode_entry(digest, &junk)).unwrap();
    let fourth = solve(Some(&cache), &tmp.path().join("o4"));
    assert!(fourth.stderr.contains("did not load"), "{}", fourth.stderr);
    let (_, fixed) = kc::decode_entry(&std::fs::read(&path).unwrap()).unwrap();
    assert_ne!(fixed, junk, "the refused entry was overwritten");
    assert!(fourth.field == first.field);

    // Cache off: compiled, nothing written anywhere we can see.
    let off = solve(None, &tmp.path().join("o5"));
    assert!(compiled(&off));
    assert!(off.field == first.field);
    assert_eq!(kc::entries(&cache).len(), entries.len());
}
