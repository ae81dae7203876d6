//! Helpers of the tests that run the binary: run it, check exit codes and
//! messages, list a folder, write a stack, read `--save-state` files.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary under test: `CUTH_BIN` where set (a GPU machine runs test
/// binaries built elsewhere, beside a copied `cuth`), else cargo's build.
pub fn cuth_path() -> PathBuf {
    std::env::var_os("CUTH_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_cuth").into())
}

/// `cuth ARGS` from the repository root.
pub fn cuth(args: &[&str]) -> Output {
    cuth_env(args, &[])
}

/// `cuth ARGS` from the repository root with extra environment variables.
pub fn cuth_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(cuth_path())
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .envs(env.iter().copied())
        .output()
        .expect("cuth runs")
}

pub fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn ok(o: &Output) {
    assert!(o.status.success(), "stderr: {}", err(o));
}

pub fn fails_with(o: &Output, code: i32, needles: &[&str]) {
    let e = err(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` missing from: {e}");
    }
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Names in `dir`, sorted (empty when it does not exist).
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            // The run manifest is cuth's bookkeeping, not an output.
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n != ".cuth-run.json")
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A 2 x 2 mm stack with one silicon layer `die` and the extra lines `rest`.
pub fn die(rest: &str) -> String {
    format!(
        "[chip]\nwidth = \"2 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 8\nny = 8\n\
         [boundary]\nambient = 300\nh_top = 1e4\n[materials.si]\nk = 130\nheat_capacity = 1.6e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n{rest}"
    )
}

pub fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// Exit 2, stderr contains every needle, `out` not created.
pub fn input_error(args: &[&str], out: &Path, needles: &[&str]) {
    let o = cuth(args);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    for n in needles {
        assert!(e.contains(n), "{args:?}: `{n}` missing from: {e}");
    }
    assert!(!e.contains("panicked"), "{e}");
    assert!(!out.exists(), "{args:?} wrote {:?}", names(out));
}

pub const SMALL: [&str; 4] = ["--grid", "8x8", "--device", "cpu"];

/// Reads a `--save-state` file: dimensions and temperatures (K).
pub fn state(p: &Path) -> (String, Vec<f64>) {
    let b = std::fs::read(p).unwrap();
    let nl = b.iter().position(|&c| c == b'\n').unwrap();
    let t = b[nl + 1..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    (String::from_utf8(b[..nl].to_vec()).unwrap(), t)
}

pub fn solve_state(stack: &Path, dir: &Path, tag: &str) -> (String, Vec<f64>) {
    let st = dir.join(format!("{tag}.state"));
    let out = dir.join(format!("out_{tag}"));
    ok(&cuth(&[
        "solve",
        s(stack),
        "--device",
        "cpu",
        "--quiet",
        "--out",
        s(&out),
        "--save-state",
        s(&st),
    ]));
    state(&st)
}

/// `cuth import hotspot` of the shipped ev6 3D example (HotSpot's example 4)
/// into `out`.
pub fn import_ev6(out: &Path) -> Output {
    cuth(&[
        "import",
        "hotspot",
        "--config",
        "configs/hotspot/example.config",
        "--lcf",
        "configs/hotspot/ev6_3D.lcf",
        "--ptrace",
        "configs/hotspot/ev6_3D.ptrace",
        "--out",
        s(out),
    ])
}
