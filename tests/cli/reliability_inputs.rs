//! Robustness through the CLI, inputs: overflowing sizes and step counts,
//! long names, input files that are not regular, extreme values, silently
//! accepted input and messages.

use crate::util::cli::*;
use std::path::Path;
use std::time::{Duration, Instant};

/// Sizes that overflow or would exhaust memory are clear
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

/// Very long names do not panic the table.
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

/// Inputs that are not regular files are refused up front.
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

/// Extreme finite values are refused at input time, naming the field.
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

/// Input that used to be accepted silently.
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

/// An OS error is printed once; a CSV trace's column is counted
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

/// A small PNG that decodes to more than the free host memory is refused
/// from its header, naming the file, before a pixel is decoded.
#[test]
fn png_rasters_beyond_host_memory_are_refused_before_decoding() {
    let tmp = tempfile::tempdir().unwrap();
    // 6000 x 6000 gray: about 400 MB decoded (8-bit image, 16-bit luma,
    // f64 values), a few hundred KB as a PNG; the run itself fits in 300 MB.
    let mut img = image::GrayImage::new(6000, 6000);
    img.put_pixel(0, 0, image::Luma([255]));
    img.save(tmp.path().join("bomb.png")).unwrap();
    let body = die("power = { type = \"raster\", file = \"bomb.png\", total = 1.0 }\n");
    let stack = write(tmp.path(), "s.toml", &body);
    let out = tmp.path().join("o");
    let o = cuth_env(
        &["solve", s(&stack), "--out", s(&out), "--device", "cpu"],
        &[("CUTH_HOST_MEMORY_BYTES", "300000000")],
    );
    fails_with(&o, 2, &["bomb.png", "6000 x 6000", "host memory"]);
    assert!(!out.exists());
}
