//! Issue 12 through the CLI: concurrent runs into one folder, special files,
//! overflowing sizes, input limits, signals, stale files, extreme values,
//! silently accepted input and the consistency rule (a run that exits
//! non-zero leaves the output folder as it was). Each test names its item.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn cuth(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cuth"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cuth runs")
}

fn err(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Names in `dir`, sorted (empty when it does not exist).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| {
            r.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A 2 x 2 mm stack with one silicon layer `die` and the extra lines `rest`.
fn die(rest: &str) -> String {
    format!(
        "[chip]\nwidth = \"2 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 8\nny = 8\n\
         [boundary]\nambient = 300\nh_top = 1e4\n[materials.si]\nk = 130\nheat_capacity = 1.6e6\n\
         [[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n{rest}"
    )
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

/// Exit 2, stderr contains every needle, `out` not created.
fn input_error(args: &[&str], out: &Path, needles: &[&str]) {
    let o = cuth(args);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
    for n in needles {
        assert!(e.contains(n), "{args:?}: `{n}` missing from: {e}");
    }
    assert!(!e.contains("panicked"), "{e}");
    assert!(!out.exists(), "{args:?} wrote {:?}", names(out));
}

const SMALL: [&str; 4] = ["--grid", "8x8", "--device", "cpu"];

/// Item 2: special files are refused, not replaced.
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

/// Items 3 and 4: sizes that overflow or would exhaust memory are clear
/// errors before any allocation, never an abort or a hang.
#[test]
fn huge_sizes_and_step_counts_fail_cleanly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let t = |extra: &[&str]| {
        let mut a = vec!["transient", "configs/mol_f2f.toml", "--out", s(&out)];
        a.extend_from_slice(extra);
        a.extend(["--device", "cpu"]);
        cuth(&a)
    };
    for extra in [
        &["--dt", "1e-3", "--steps", "100000000000"][..],
        &["--dt", "1e-3", "--steps", "18446744073709551614"],
        &["--dt", "1e-3", "--steps", "18446744073709551615"],
        &["--dt", "1e-3", "--t-end", "1e30"],
        &["--dt", "1e-300", "--steps", "3"],
    ] {
        let o = t(extra);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {}", err(&o));
        assert!(!out.exists());
    }
    // 65536² x 18 z cells is beyond the cell limit (exit 2).
    let o = t(&["--dt", "1e-3", "--steps", "2", "--grid", "65536x65536"]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("limit"), "{}", err(&o));
    // 30000² x 18 z cells: the memory check refuses it before the power
    // maps are allocated (exit 1 within a second, not an abort).
    let t0 = Instant::now();
    let o = t(&["--dt", "1e-3", "--steps", "2", "--grid", "30000x30000"]);
    assert!(t0.elapsed() < Duration::from_secs(20));
    let e = err(&o);
    assert!(
        o.status.code() == Some(1) && e.contains("memory"),
        "{:?}: {e}",
        o.status
    );
    // 2^27 z cells on a 65536² grid: the cell count overflows usize
    // arithmetic unless checked; it is a stack error naming the grid.
    let mut layers = String::new();
    for i in 0..32768 {
        layers.push_str(&format!(
            "[[layers]]\nname=\"l{i}\"\nmaterial=\"si\"\nthickness=1e-6\ncells=4096\n"
        ));
    }
    let big = die("").replace("nx = 8\nny = 8", "nx = 65536\nny = 65536") + &layers;
    let stack = write(tmp.path(), "big.toml", &big);
    input_error(
        &["solve", s(&stack), "--out", s(&out), "--device", "cpu"],
        &out,
        &["grid", "limit"],
    );
}

/// Item 5: very long names do not panic the table.
#[test]
fn long_layer_and_material_names_print() {
    let tmp = tempfile::tempdir().unwrap();
    let long = "n".repeat(70_000);
    let body = die("").replace("name=\"die\"", &format!("name=\"{long}\""));
    let stack = write(tmp.path(), "long.toml", &body);
    let out = tmp.path().join("o");
    let o = cuth(&["solve", s(&stack), "--out", s(&out), "--device", "cpu"]);
    assert!(o.status.success(), "{}", err(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains(&long));
}

/// Item 6: inputs that are not regular files are refused up front.
#[test]
fn inputs_must_be_regular_files() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    input_error(
        &["solve", "/dev/urandom", "--out", s(&out), "--device", "cpu"],
        &out,
        &["/dev/urandom", "not a regular file"],
    );
    let stack = write(
        tmp.path(),
        "r.toml",
        &die("power={ type=\"raster\", file=\"/dev/zero\" }\n"),
    );
    input_error(
        &["solve", s(&stack), "--out", s(&out), "--device", "cpu"],
        &out,
        &["/dev/zero", "not a regular file"],
    );
    let o = cuth(&[
        "transient",
        "configs/hotspot_ev6_3d.toml",
        "--dt",
        "1e-3",
        "--steps",
        "2",
        "--trace",
        "/dev/urandom",
        "--out",
        s(&out),
        "--device",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(!out.exists());
}

/// Item 7: SIGTERM during a transient run leaves no staging behind.
#[test]
fn a_signal_removes_the_staging() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    std::fs::create_dir(&out).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_cuth"))
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

/// Items 8 and 11: stale layers are removed; a failing run changes nothing.
#[test]
fn stale_maps_removed_and_failed_runs_change_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let mut a = vec!["solve", "configs/mol_f2f.toml", "--out", s(&out)];
    a.extend(SMALL);
    assert!(cuth(&a).status.success());
    assert_eq!(names(&out).len(), 23);
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
        "blocks.csv",
        "blocks.steady",
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

/// Item 9: extreme finite values are refused at input time, naming the field.
#[test]
fn extreme_values_name_their_field() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let cases = [
        (
            die("").replace("width = \"2 mm\"", "width = 1e308"),
            "chip.width",
        ),
        (
            die("").replace("thickness=1e-4", "thickness=\"1e30 m\""),
            "layers[0] (die).thickness",
        ),
        (
            die("power={ type=\"uniform\", total=1e308 }\n"),
            "power.total",
        ),
        (die("").replace("k = 130", "k = 1e-300"), "materials.si.k"),
    ];
    for (i, (body, field)) in cases.iter().enumerate() {
        let stack = write(tmp.path(), &format!("x{i}.toml"), body);
        input_error(
            &["solve", s(&stack), "--out", s(&out), "--device", "cpu"],
            &out,
            &[field, "between"],
        );
    }
    write(tmp.path(), "r.flp", "core 0.001 0.001 0 0 1.75e6 1e-320\n");
    let stack = write(tmp.path(), "f.toml", &die("floorplan=\"r.flp\"\n"));
    input_error(
        &["solve", s(&stack), "--out", s(&out), "--device", "cpu"],
        &out,
        &["r.flp", "line 1", "resistivity"],
    );
}

/// Item 10: input that used to be accepted silently.
#[test]
fn overlaps_nan_points_and_duplicate_blocks_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    write(
        tmp.path(),
        "o.flp",
        "a 0.001 0.001 0 0 1.75e6 0.01\nb 0.001 0.001 0 0 1.75e6 0.01\n",
    );
    let stack = write(tmp.path(), "o.toml", &die("floorplan=\"o.flp\"\n"));
    input_error(
        &["solve", s(&stack), "--out", s(&out), "--device", "cpu"],
        &out,
        &["o.flp", "line 2", "overlaps unit `a`"],
    );
    // Touching units with their own material are fine.
    write(
        tmp.path(),
        "t.flp",
        "a 0.001 0.002 0 0 1.75e6 0.01\nb 0.001 0.002 0.001 0 1.75e6 0.01\n",
    );
    let stack = write(tmp.path(), "t.toml", &die("floorplan=\"t.flp\"\n"));
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
    std::fs::remove_dir_all(&out).unwrap();

    let blk =
        "{ name = \"hot\", x = \"0\", y = \"0\", width = \"1mm\", height = \"1mm\", power = 1.0 }";
    let stack = write(
        tmp.path(),
        "d.toml",
        &die(&format!(
            "power = {{ type = \"blocks\", blocks = [ {blk}, {} ] }}\n",
            blk.replace("x = \"0\"", "x = \"1mm\"")
        )),
    );
    input_error(
        &["solve", s(&stack), "--out", s(&out), "--device", "cpu"],
        &out,
        &["blocks[1] (hot).name", "already defined"],
    );

    let body = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/topopt/bracket.toml"),
    )
    .unwrap()
    .replace(
        "box = { min = [2.0, 0.3, 0.15], max = [2.0, 0.5, 0.35] }",
        "point = [nan, 0.4, 0.25]",
    );
    assert!(body.contains("nan"));
    let problem = write(tmp.path(), "p.toml", &body);
    let o = cuth(&[
        "topopt",
        s(&problem),
        "--out",
        s(&out),
        "--device",
        "cpu",
        "--iterations",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", err(&o));
    assert!(err(&o).contains("not a finite coordinate"), "{}", err(&o));
    assert!(!out.exists());
}

/// Item 13: an OS error is printed once; a CSV trace's column is counted
/// from 1 with `time` first.
#[test]
fn messages_count_right_and_say_things_once() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let o = cuth(&["solve", "nowhere.toml", "--out", s(&out)]);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(e.matches("No such file").count(), 1, "{e}");
    let trace = write(tmp.path(), "t.csv", "time,IntExec_0,nosuch\n0,1,1\n");
    let o = cuth(&[
        "transient",
        "configs/hotspot_ev6_3d.toml",
        "--dt",
        "1e-3",
        "--steps",
        "2",
        "--trace",
        s(&trace),
        "--out",
        s(&out),
        "--device",
        "cpu",
    ]);
    let e = err(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("column 3 names no block"), "{e}");
}

/// Item 1: concurrent runs into one folder (solve in °C and K, transient)
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
            Command::new(env!("CARGO_BIN_EXE_cuth"))
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

/// Item 12: a stack of many thin layers on a tiny grid is not slowed down
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
    assert_eq!(names(&out).len(), 803);
    assert!(
        t0.elapsed() < Duration::from_secs(120),
        "{:?}",
        t0.elapsed()
    );
}
