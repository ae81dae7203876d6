//! Robustness through the CLI, outputs: concurrent runs into one folder,
//! special files as output paths, signals, stale files, the consistency rule
//! (a run that exits non-zero leaves the output folder as it was) and many
//! layers.

use crate::util::cli::*;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Special files are refused, not replaced.
#[test]
fn save_state_and_out_refuse_special_files() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let out = tmp.path().join("o");
    let mut args = vec!["solve", "configs/mol_f2f.toml", "--out", s(&out)];
    args.extend(SMALL);
    for target in [s(&fifo), "/dev/null", s(tmp.path())] {
        let mut a = args.clone();
        a.extend(["--save-state", target]);
        input_error(&a, &out, &["--save-state", "refusing to replace it"]);
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    // --out at a FIFO or a device.
    let mut a = vec!["solve", "configs/mol_f2f.toml", "--out", s(&fifo)];
    a.extend(SMALL);
    let o = cuth(&a);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("it is a FIFO"), "{}", err(&o));
    // Transient's --save-state too.
    let o = cuth(&[
        "transient",
        "configs/mol_f2f.toml",
        "--dt",
        "1e-3",
        "--steps",
        "2",
        "--out",
        s(&out),
        "--save-state",
        s(&fifo),
        "--grid",
        "8x8",
        "--device",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(!out.exists());
}

/// SIGTERM during a transient run leaves no staging behind.
#[test]
fn a_signal_removes_the_staging() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    std::fs::create_dir(&out).unwrap();
    let mut child = Command::new(crate::util::cli::cuth_path())
        .args([
            "transient",
            "configs/mol_f2f.toml",
            "--dt",
            "1e-4",
            "--steps",
            "100000",
            "--snapshot-every",
            "1",
            "--out",
            s(&out),
            "--grid",
            "8x8",
            "--device",
            "cpu",
            "-q",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until snapshots are being staged.
    let t0 = Instant::now();
    loop {
        let staged = names(&out).into_iter().find(|n| n.starts_with(".cuth-"));
        if let Some(d) = staged {
            if names(&out.join(&d).join("snapshots")).len() > 2 {
                break;
            }
        }
        assert!(t0.elapsed() < Duration::from_secs(60), "no staging seen");
        std::thread::sleep(Duration::from_millis(20));
    }
    let pid = child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + 15));
    assert_eq!(names(&out), Vec::<String>::new(), "nothing left behind");
}

/// Stale layers are removed; a failing run changes nothing.
#[test]
fn stale_maps_removed_and_failed_runs_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let mut a = vec!["solve", "configs/mol_f2f.toml", "--out", s(&out)];
    a.extend(SMALL);
    assert!(cuth(&a).status.success());
    assert_eq!(names(&out).len(), 21);
    let two = die("").replace(
        "[[layers]]",
        "[[layers]]\nname=\"base\"\nmaterial=\"si\"\nthickness=1e-4\n[[layers]]",
    );
    let stack = write(tmp.path(), "two.toml", &two);
    let o = cuth(&["solve", s(&stack), "--out", s(&out), "--device", "cpu"]);
    assert!(o.status.success(), "{}", err(&o));
    let want = [
        "00_base.csv",
        "00_base.png",
        "01_die.csv",
        "01_die.png",
        "summary.json",
    ];
    assert_eq!(names(&out), want);
    let summary = std::fs::read(out.join("summary.json")).unwrap();

    // A run that fails while writing (file size limit: SIGXFSZ is caught,
    // the write fails with EFBIG) exits 1 and leaves the folder as it was,
    // its --save-state included.
    let state = tmp.path().join("state.bin");
    let cmd = format!(
        "ulimit -f 2; exec '{}' solve configs/mol_f2f.toml --out '{}' --grid 8x8 --device cpu \
         --save-state '{}'",
        env!("CARGO_BIN_EXE_cuth"),
        s(&out),
        s(&state)
    );
    let o = Command::new("sh")
        .args(["-c", &cmd])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", err(&o));
    assert_eq!(names(&out), want);
    assert_eq!(std::fs::read(out.join("summary.json")).unwrap(), summary);
    assert!(!state.exists());
    assert_eq!(names(tmp.path()), ["o", "two.toml"]);
}

/// Concurrent runs into one folder (solve in °C and K, transient)
/// all succeed, and the folder ends with exactly one complete run's
/// outputs: one kind, one unit, no staging left.
#[test]
fn concurrent_runs_leave_one_complete_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let children: Vec<_> = (0..6)
        .map(|i| {
            let mut a: Vec<&str> = match i % 3 {
                0 => vec!["solve", "configs/mol_f2f.toml", "--kelvin"],
                1 => vec!["solve", "configs/mol_f2f.toml"],
                _ => vec![
                    "transient",
                    "configs/mol_f2f.toml",
                    "--dt",
                    "1e-3",
                    "--steps",
                    "3",
                    "--snapshot-every",
                    "1",
                ],
            };
            a.extend(["--out", s(&out), "-q"]);
            a.extend(SMALL);
            Command::new(crate::util::cli::cuth_path())
                .args(&a)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", err(&o));
    }
    let names = names(&out);
    assert!(!names.iter().any(|n| n.starts_with('.')), "{names:?}");
    if names.contains(&"timeseries.csv".to_string()) {
        assert_eq!(
            names,
            [
                "final",
                "snapshots",
                "summary.json",
                "temperature.png",
                "timeseries.csv"
            ]
        );
        assert_eq!(self::names(&out.join("snapshots")).len(), 3);
    } else {
        assert_eq!(names.len(), 23, "{names:?}");
        let units: std::collections::BTreeSet<bool> = names
            .iter()
            .filter(|n| n.ends_with(".csv") && n.as_bytes()[0].is_ascii_digit())
            .map(|n| {
                let t = std::fs::read_to_string(out.join(n)).unwrap();
                t.split([',', '\n']).next().unwrap().parse::<f64>().unwrap() > 200.0
            })
            .collect();
        assert_eq!(units.len(), 1, "K and °C maps mixed");
    }
}

/// A stack of many thin layers on a tiny grid is not slowed down
/// by anything quadratic in the layer count (the commit's bookkeeping was;
/// the maps are rendered in parallel). 400 layers, 802 files: a few
/// seconds; the bound is loose for a loaded machine.
#[test]
fn many_layers_write_in_linear_time() {
    let tmp = tempfile::tempdir().unwrap();
    let mut body =
        die("power={ type=\"uniform\", total=0.5 }\n").replace("nx = 8\nny = 8", "nx = 2\nny = 2");
    for i in 0..399 {
        body.push_str(&format!(
            "[[layers]]\nname=\"l{i}\"\nmaterial=\"si\"\nthickness=1e-6\n"
        ));
    }
    let stack = write(tmp.path(), "many.toml", &body);
    let out = tmp.path().join("o");
    let t0 = Instant::now();
    let o = cuth(&[
        "solve",
        s(&stack),
        "--out",
        s(&out),
        "--device",
        "cpu",
        "-q",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    assert_eq!(names(&out).len(), 801);
    assert!(
        t0.elapsed() < Duration::from_secs(120),
        "{:?}",
        t0.elapsed()
    );
}
