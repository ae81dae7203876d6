//! The on-disk kernel cache's pure parts (no CUDA): keys, the entry format,
//! atomic writes, damaged entries and unwritable folders, with a stand-in
//! compiler that counts its calls. tests/gpu/kernel_cache.rs runs it for
//! real.

use cuth::backend::cuda::kernel_cache::{self as kc, CacheKey, KernelImage, KeyParts, Source};
use std::cell::Cell;

/// Notes are process-wide: the tests that make or read them take turns.
static NOTES: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn notes_turn() -> std::sync::MutexGuard<'static, ()> {
    NOTES.lock().unwrap_or_else(|e| e.into_inner())
}

fn parts<'a>(source: &'a str, options: &'a [String], arch: &'a str) -> KeyParts<'a> {
    KeyParts {
        source,
        entry_points: &["blas1_axpy", "blas1_dot"],
        options,
        nvrtc: (13, 0),
        compute_capability: (9, 0),
        arch,
        cuth_version: "0.1.0",
    }
}

fn key(source: &str) -> CacheKey {
    let opts = vec!["--gpu-architecture=sm_90".to_string()];
    CacheKey::new("blas1.cu", &parts(source, &opts, "sm_90"))
}

fn cubin(bytes: &[u8]) -> KernelImage {
    KernelImage {
        kind: kc::ImageKind::Cubin,
        bytes: bytes.to_vec(),
    }
}

#[test]
fn key_changes_with_every_input() {
    let opts = vec!["--gpu-architecture=sm_90".to_string()];
    let base = parts("kernel A", &opts, "sm_90");
    let k0 = CacheKey::new("blas1.cu", &base);
    assert_eq!(
        k0,
        CacheKey::new("blas1.cu", &base.clone()),
        "deterministic"
    );
    let other_opts = vec!["--gpu-architecture=sm_90".to_string(), "-G".to_string()];
    let variants = [
        KeyParts {
            source: "kernel B",
            ..base.clone()
        },
        KeyParts {
            options: &other_opts,
            ..base.clone()
        },
        KeyParts {
            arch: "sm_100",
            ..base.clone()
        },
        KeyParts {
            compute_capability: (10, 0),
            ..base.clone()
        },
        KeyParts {
            nvrtc: (13, 1),
            ..base.clone()
        },
        KeyParts {
            entry_points: &["blas1_axpy"],
            ..base.clone()
        },
        KeyParts {
            cuth_version: "0.1.1",
            ..base.clone()
        },
    ];
    let mut digests = vec![k0.digest];
    for v in &variants {
        digests.push(CacheKey::new("blas1.cu", v).digest);
    }
    let mut unique = digests.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), digests.len(), "{digests:x?}");
    // Moving a byte between two fields changes the key too.
    let split = KeyParts {
        entry_points: &["blas1_axp", "yblas1_dot"],
        ..base.clone()
    };
    assert_ne!(CacheKey::new("blas1.cu", &split).digest, k0.digest);
    assert!(k0.file_name(kc::ImageKind::Cubin).starts_with("blas1-"));
    assert!(k0.file_name(kc::ImageKind::Cubin).ends_with(".cubin"));
}

#[test]
fn entry_round_trips_and_damage_is_detected() {
    let img = cubin(b"\x7fELF some cubin bytes");
    let e = kc::encode_entry(42, &img);
    assert_eq!(kc::decode_entry(&e), Some((42, img.clone())));
    for cut in [0, 10, e.len() - 1] {
        assert_eq!(kc::decode_entry(&e[..cut]), None, "truncated at {cut}");
    }
    for at in [0, 9, 24, 30, 36, e.len() - 1] {
        let mut bad = e.clone();
        bad[at] ^= 0x20;
        let d = kc::decode_entry(&bad);
        // Only a flipped digest byte still decodes, to another key.
        assert!(d.is_none() || d.unwrap().0 != 42, "flip at {at} not caught");
    }
    let ptx = KernelImage::ptx(b".version 8.0".to_vec());
    assert_eq!(ptx.bytes.last(), Some(&0), "PTX is NUL-terminated");
    assert_eq!(kc::decode_entry(&kc::encode_entry(7, &ptx)), Some((7, ptx)));
}

#[test]
fn miss_compiles_and_stores_then_hit_reads() {
    let dir = tempfile::tempdir().unwrap();
    let k = key("kernel A");
    let calls = Cell::new(0);
    let compile = || {
        calls.set(calls.get() + 1);
        Ok::<_, String>(cubin(b"image A"))
    };
    let (img, src) = kc::get_or_compile(Some(dir.path()), &k, compile).unwrap();
    assert_eq!((src, calls.get()), (Source::Compiled, 1));
    assert_eq!(kc::entries(dir.path()).len(), 1);
    let (again, src) = kc::get_or_compile(Some(dir.path()), &k, compile).unwrap();
    assert_eq!((src, calls.get()), (Source::Disk, 1));
    assert_eq!(again, img);
    // Another source is another key: compiled, not read.
    let (_, src) = kc::get_or_compile(Some(dir.path()), &key("kernel B"), compile).unwrap();
    assert_eq!((src, calls.get()), (Source::Compiled, 2));
    assert_eq!(kc::entries(dir.path()).len(), 2);
    // Compile errors pass through and store nothing.
    let failed = kc::get_or_compile(Some(dir.path()), &key("bad"), || Err("nvrtc".to_string()));
    assert_eq!(failed, Err("nvrtc".to_string()));
    assert_eq!(kc::entries(dir.path()).len(), 2);
}

#[test]
fn damaged_entries_are_compiled_again_and_overwritten() {
    let _turn = notes_turn();
    let dir = tempfile::tempdir().unwrap();
    let k = key("kernel A");
    let path = dir.path().join(k.file_name(kc::ImageKind::Cubin));
    let good = cubin(b"the real image");
    let whole = kc::encode_entry(k.digest, &good);
    let damaged: Vec<Vec<u8>> = vec![
        Vec::new(),
        whole[..whole.len() / 2].to_vec(),
        whole.iter().map(|b| b ^ 0xff).collect(),
        // A whole entry, but of another key (a renamed file).
        kc::encode_entry(k.digest ^ 1, &good),
    ];
    for bytes in damaged {
        std::fs::write(&path, &bytes).unwrap();
        let calls = Cell::new(0);
        let (img, src) = kc::get_or_compile(Some(dir.path()), &k, || {
            calls.set(calls.get() + 1);
            Ok::<_, ()>(good.clone())
        })
        .unwrap();
        assert_eq!((src, calls.get(), &img), (Source::Compiled, 1, &good));
        assert_eq!(std::fs::read(&path).unwrap(), whole, "entry overwritten");
    }
    assert!(kc::take_notes().iter().any(|n| n.contains("damaged")));
}

#[test]
fn unwritable_folder_is_skipped_with_a_note() {
    let _turn = notes_turn();
    let dir = tempfile::tempdir().unwrap();
    // A file where the cache folder should be: nothing can be created in it.
    let blocked = dir.path().join("not-a-dir");
    std::fs::write(&blocked, b"x").unwrap();
    let (img, src) =
        kc::get_or_compile(Some(&blocked), &key("A"), || Ok::<_, ()>(cubin(b"img"))).unwrap();
    assert_eq!((src, img), (Source::Compiled, cubin(b"img")));
    let notes = kc::take_notes();
    assert!(
        notes.iter().any(|n| n.contains("cannot write")),
        "{notes:?}"
    );
}

#[test]
fn concurrent_writers_never_expose_a_partial_entry() {
    let _turn = notes_turn();
    let dir = tempfile::tempdir().unwrap();
    let k = key("kernel A");
    let images: Vec<KernelImage> = (0..4u8).map(|i| cubin(&vec![i + 1; 1 << 20])).collect();
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        for img in &images {
            let (d, k) = (dir.path(), &k);
            sc.spawn(move || {
                for _ in 0..8 {
                    kc::write(d, k, img).unwrap();
                }
            });
        }
        let reader = sc.spawn(|| {
            let mut seen = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(img) = kc::read(dir.path(), &k) {
                    assert!(images.contains(&img), "a read saw a mixed or partial entry");
                    seen += 1;
                }
            }
            seen
        });
        std::thread::sleep(std::time::Duration::from_millis(300));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
    });
    assert!(kc::take_notes().iter().all(|n| !n.contains("damaged")));
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}
