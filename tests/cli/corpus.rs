//! The malformed-input corpus (`tests/corpus/`) through the CLI:
//! every file must end with exit code 2 (or the code an `# expect N` line
//! names, for command lines), within a time limit (no hang), without a
//! panic or an abort, and with nothing written: neither `--out` nor any
//! other file appears.
//!
//! Folders: `stack/` (stack files, `cuth solve`), `flp/` (floorplans, used
//! by a one-layer stack), `trace/` (`cuth transient --trace` on the ev6
//! example), `raster/` (power rasters, used by a one-layer stack),
//! `topopt/` (problem files), `args/` (whole command lines).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(60);
const HEAD: &str = "[chip]\nwidth = \"2 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 8\nny = 8\n\
    [boundary]\nambient = 300\nh_top = 1e4\n[materials.si]\nk = 130\nheat_capacity = 1.6e6\n\
    [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

fn files(kind: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("tests/corpus").join(kind))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    assert!(!v.is_empty(), "corpus {kind} is empty");
    v
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        // The run manifest is cuth's bookkeeping, not an output.
        .filter(|n| n != ".cuth-run.json")
        .collect();
    v.sort();
    v
}

/// Runs cuth with `args` plus `--out <tmp>/out --device cpu` in `work`;
/// checks the exit code, the time, the absence of a panic and of output.
fn check(case: &Path, args: &[String], work: &Path, want: i32) -> Result<(), String> {
    let before = listing(work);
    let out = work.join("out");
    let mut child = Command::new(crate::util::cli::cuth_path())
        .args(args)
        .args(["--out", out.to_str().unwrap(), "--device", "cpu", "-q"])
        .current_dir(root())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t0.elapsed() > LIMIT {
            let _ = child.kill();
            return Err(format!("{}: no answer within {LIMIT:?}", case.display()));
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
    let what = format!("{} ({args:?})", case.display());
    if stderr.contains("panicked") || stderr.contains("memory allocation") {
        return Err(format!("{what}: {stderr}"));
    }
    if status.code() != Some(want) {
        return Err(format!("{what}: exit {status:?}, want {want}: {stderr}"));
    }
    if !stderr.starts_with("cuth: error: ") && !stderr.starts_with("error: ") {
        return Err(format!("{what}: no error message: {stderr}"));
    }
    if out.exists() || listing(work) != before {
        return Err(format!("{what}: wrote {:?}", listing(work)));
    }
    Ok(())
}

fn run_all(kind: &str, args: impl Fn(&Path, &Path) -> (Vec<String>, i32)) {
    let mut failures = Vec::new();
    for case in files(kind) {
        let tmp = tempfile::tempdir().unwrap();
        let (a, want) = args(&case, tmp.path());
        if let Err(e) = check(&case, &a, tmp.path(), want) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A one-layer stack in `work` with the extra lines `rest`; its path.
fn stack_with(work: &Path, rest: &str) -> String {
    let p = work.join("stack.toml");
    std::fs::write(&p, format!("{HEAD}{rest}")).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn corpus_stacks() {
    run_all("stack", |case, _| {
        (strings(&["solve", case.to_str().unwrap()]), 2)
    });
}

#[test]
fn corpus_floorplans() {
    run_all("flp", |case, work| {
        let s = stack_with(work, &format!("floorplan = {:?}\n", case.to_str().unwrap()));
        (vec!["solve".into(), s], 2)
    });
}

#[test]
fn corpus_rasters() {
    run_all("raster", |case, work| {
        let s = stack_with(
            work,
            &format!(
                "power = {{ type = \"raster\", file = {:?}, total = 1.0 }}\n",
                case.to_str().unwrap()
            ),
        );
        (vec!["solve".into(), s], 2)
    });
}

#[test]
fn corpus_traces() {
    run_all("trace", |case, _| {
        let mut a = strings(&[
            "transient",
            "configs/hotspot_ev6_3d.toml",
            "--dt",
            "1e-3",
            "--steps",
            "2",
            "--grid",
            "8x8",
            "--trace",
        ]);
        a.push(case.to_string_lossy().into_owned());
        (a, 2)
    });
}

#[test]
fn corpus_topopt_problems() {
    run_all("topopt", |case, _| {
        let mut a = strings(&["topopt"]);
        a.push(case.to_string_lossy().into_owned());
        a.extend(strings(&["--iterations", "1"]));
        (a, 2)
    });
}

#[test]
fn corpus_command_lines() {
    run_all("args", |case, _| {
        let text = std::fs::read_to_string(case).unwrap();
        let mut want = 2;
        let mut args = Vec::new();
        for line in text.lines() {
            if let Some(n) = line.strip_prefix("# expect ") {
                want = n.trim().parse().unwrap();
            } else if !line.trim().is_empty() {
                args = line.split_whitespace().map(String::from).collect();
            }
        }
        (args, want)
    });
}
