//! Every CUDA kernel family the binary embeds compiles with NVRTC, as the
//! run time compiles it (`kernels::compile_image`: the common prelude, the
//! `#line` directives, the same options, a CUBIN), for the H200's `sm_90`
//! and for the oldest GPU a run accepts with this NVRTC (its lowest
//! architecture that `pick_arch` takes: sm_75 with NVRTC 13, sm_70 with
//! NVRTC 12). NVRTC needs no GPU and no driver, so CI runs this with
//! libnvrtc from PyPI (`.ci/run`): a kernel NVRTC rejects fails here, with
//! its log and file, instead of on the GPU machine.
//!
//! Without libnvrtc on the loader path (`LD_LIBRARY_PATH`) the compile test
//! says why on stderr and passes, unless `CUTH_REQUIRE_NVRTC=1` (CI), where
//! it fails. The inventory test needs no NVRTC: `kernel_families::all()`
//! must name every `kernels/*.cu` file (but the prelude) once, embedding
//! its current text.

use cuth::backend::cuda::kernel_cache::ImageKind;
use cuth::backend::cuda::{arch, kernels, KernelFamily};
use cuth::kernel_families;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;

/// The prelude every family is compiled with, not a family itself.
const PRELUDE: &str = "common.cu";

/// Writes past libtest's output capture (which only takes `print!`), so
/// that a skipped check is seen in a plain `cargo test` run.
fn note(s: &str) {
    let _ = writeln!(std::io::stderr(), "{s}");
}

#[test]
fn every_kernel_file_is_a_family() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let on_disk: BTreeSet<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cu") && n != PRELUDE)
        .collect();
    let families = kernel_families::all();
    let listed: BTreeSet<String> = families.iter().map(|f| f.file.to_string()).collect();
    assert_eq!(listed.len(), families.len(), "a file listed twice");
    assert_eq!(
        on_disk, listed,
        "kernels/*.cu (left) and kernel_families::all() (right) differ"
    );
    for f in &families {
        let text = std::fs::read_to_string(dir.join(f.file)).unwrap();
        // A family may embed another file before its own (batch.cu: mg.cu).
        assert!(
            f.source.ends_with(&text),
            "{}: the embedded source does not end with the file's text",
            f.file
        );
    }
}

/// NVRTC's version and architectures, or why it cannot be used here.
fn nvrtc() -> Option<((i32, i32), Vec<i32>)> {
    let found = arch::nvrtc_version().and_then(|v| Ok((v, arch::supported_archs()?)));
    match found {
        Ok(found) => Some(found),
        Err(e) if std::env::var("CUTH_REQUIRE_NVRTC").is_ok_and(|v| v == "1") => {
            panic!(
                "CUTH_REQUIRE_NVRTC=1 but {e} (LD_LIBRARY_PATH: {:?})",
                std::env::var("LD_LIBRARY_PATH").unwrap_or_default()
            )
        }
        Err(e) => {
            note(&format!(
                "kernels_nvrtc: NOT RUN: {e}; put libnvrtc on LD_LIBRARY_PATH \
                 (.ci/run installs it) or set CUTH_REQUIRE_NVRTC=1 to make this a failure"
            ));
            None
        }
    }
}

/// The architectures to check, as `pick_arch` names them for a GPU of that
/// compute capability: the H200, and the oldest GPU a run accepts with this
/// NVRTC (the lowest architecture it offers that `pick_arch` takes).
fn targets(supported: &[i32]) -> Vec<String> {
    let pick = |a: i32| arch::pick_arch((a / 10, a % 10), supported);
    let mut by_age = supported.to_vec();
    by_age.sort_unstable();
    let lowest = by_age.into_iter().find(|&a| pick(a).is_ok());
    let lowest = lowest.unwrap_or_else(|| panic!("no architecture of {supported:?} is accepted"));
    let mut archs: Vec<String> = [90, lowest]
        .into_iter()
        .map(|a| pick(a).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    archs.dedup();
    archs
}

/// Compiles `family` for `arch`; the error names the file and holds the log.
fn check(family: &KernelFamily, arch: &str) -> Result<String, String> {
    let t = std::time::Instant::now();
    let img = kernels::compile_image(family, arch).map_err(|e| format!("{arch}: {e}"))?;
    if img.kind != ImageKind::Cubin {
        return Err(format!("kernels/{}: {arch}: PTX, not a CUBIN", family.file));
    }
    // The CUBIN's symbol table names every kernel a run loads from it.
    let has = |name: &str| {
        img.bytes
            .windows(name.len() + 1)
            .any(|w| w[..name.len()] == *name.as_bytes() && w[name.len()] == 0)
    };
    let missing: Vec<_> = family.entry_points.iter().filter(|n| !has(n)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "kernels/{}: {arch}: no kernel {missing:?} in the CUBIN",
            family.file
        ));
    }
    Ok(format!(
        "kernels/{:<18} {arch}: {:>8} bytes of CUBIN, {} kernels, {:.2} s",
        family.file,
        img.bytes.len(),
        family.entry_points.len(),
        t.elapsed().as_secs_f64()
    ))
}

#[test]
fn every_family_compiles_with_nvrtc() {
    let Some((version, supported)) = nvrtc() else {
        return;
    };
    let archs = targets(&supported);
    println!("NVRTC {}.{}, architectures {archs:?}", version.0, version.1);
    let jobs: Vec<(&KernelFamily, &str)> = kernel_families::all()
        .into_iter()
        .flat_map(|f| archs.iter().map(move |a| (f, a.as_str())))
        .collect();
    // On up to four threads (NVRTC programs are independent); results in the jobs' order.
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(4);
    let results: Vec<Result<String, String>> = std::thread::scope(|s| {
        let chunks: Vec<_> = (0..threads)
            .map(|t| {
                let mine: Vec<_> = jobs.iter().skip(t).step_by(threads).copied().collect();
                s.spawn(move || {
                    mine.into_iter()
                        .map(|(f, a)| check(f, a))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut per: Vec<_> = chunks
            .into_iter()
            .map(|h| h.join().unwrap().into_iter())
            .collect();
        (0..jobs.len())
            .map(|i| per[i % threads].next().unwrap())
            .collect()
    });
    let mut failed = Vec::new();
    for r in results {
        match r {
            Ok(line) => println!("{line}"),
            Err(e) => failed.push(e),
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {} compiles failed:\n\n{}",
        failed.len(),
        jobs.len(),
        failed.join("\n\n")
    );
}
