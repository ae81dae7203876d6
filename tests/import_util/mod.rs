//! Helpers shared by the `cuth import` tests: run the binary, check exit
//! codes and messages, read `--save-state` files.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn cuth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuth"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cuth runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn ok(o: &Output) {
    assert!(o.status.success(), "stderr: {}", stderr(o));
}

pub fn fails_with(o: &Output, code: i32, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(code), "stderr: {e}");
    for n in needles {
        assert!(e.contains(n), "`{n}` missing from: {e}");
    }
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

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

/// Writes `text` as a file in `dir` and returns its path.
pub fn put(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}
