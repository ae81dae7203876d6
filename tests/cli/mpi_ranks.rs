//! `mpirun -n N cuth solve` (feature `mpi`): the field solved over N = 2, 3
//! and 4 ranks equals the one-rank solve to 1e-9 K in every cell, in as
//! many iterations ±1, on shipped stacks; rank 0 alone writes. Needs
//! Open MPI's `mpirun` on PATH (`.ci/run` installs it).

use crate::util::cli::{cuth_path, s};
use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const GRID: &str = "32x32";

/// `mpirun -n N cuth ARGS` from the repository root.
fn mpirun(n: usize, args: &[&str]) -> Output {
    let mut c = Command::new("mpirun");
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        c.arg("--allow-run-as-root");
    }
    c.args(["--oversubscribe", "-n", &n.to_string()])
        .arg(cuth_path())
        .args(args)
        .current_dir(ROOT)
        // One thread a rank: ranks share the machine's cores.
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .expect("mpirun runs (install Open MPI)")
}

/// The field of field.npy (f64, little-endian).
fn npy_f64(path: &Path) -> Vec<f64> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let (header, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize,
            12,
        ),
    };
    let text = std::str::from_utf8(&bytes[start..start + header]).unwrap();
    assert!(text.contains("'<f8'"), "{text}");
    bytes[start + header..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// Solves `stack` on `n` ranks into `out`: (field in K, iterations).
fn solve(n: usize, stack: &str, out: &Path) -> (Vec<f64>, u64) {
    let o = mpirun(
        n,
        &[
            "solve",
            stack,
            "--grid",
            GRID,
            "--device",
            "cpu",
            "--kelvin",
            "--npy",
            "f64",
            "--quiet",
            "--out",
            s(out),
        ],
    );
    assert!(
        o.status.success(),
        "{n} ranks, {stack}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["solver"]["precond"]["name"], "zline");
    let detail = summary["device"]["detail"].as_str().unwrap();
    assert!(detail.starts_with(&format!("{n} MPI ranks")), "{detail}");
    let iters = summary["solver"]["iterations"].as_u64().unwrap();
    (npy_f64(&out.join("field.npy")), iters)
}

#[test]
fn ranks_solve_the_one_rank_field() {
    let dir = tempfile::tempdir().unwrap();
    for stack in [
        "configs/mol_f2f.toml",
        "configs/hbm_2p5d.toml",
        "configs/3dice_two_dies.toml",
    ] {
        let name = Path::new(stack).file_stem().unwrap().to_str().unwrap();
        let (one, iters) = solve(1, stack, &dir.path().join(format!("{name}-1")));
        // NaN where a layer has no material (an outline's outside).
        assert!(one.len() >= 32 * 32 * 2 && one.iter().any(|t| t.is_finite()));
        for n in [2, 3, 4] {
            let out = dir.path().join(format!("{name}-{n}"));
            let (field, it) = solve(n, stack, &out);
            assert_eq!(field.len(), one.len());
            let worst = one
                .iter()
                .zip(&field)
                .map(|(a, b)| match (a.is_nan(), b.is_nan()) {
                    (true, true) => 0.0,
                    (false, false) => (a - b).abs(),
                    _ => f64::INFINITY,
                })
                .fold(0.0, f64::max);
            assert!(
                worst <= 1e-9,
                "{name}, {n} ranks: {worst:e} K from one rank"
            );
            assert!(
                it.abs_diff(iters) <= 1,
                "{name}: {it} vs {iters} iterations"
            );
        }
    }
}

/// The ranks' solve takes linear stacks; a temperature-dependent one is
/// refused with the reason, by every rank, without outputs.
#[test]
fn a_nonlinear_stack_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("kt");
    let o = mpirun(
        2,
        &[
            "solve",
            "configs/mol_f2f_kt.toml",
            "--grid",
            GRID,
            "--device",
            "cpu",
            "--out",
            s(&out),
        ],
    );
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("only linear stacks"), "{err}");
    assert!(!out.join("summary.json").exists());
}
