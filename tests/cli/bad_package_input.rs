//! A user's bad input for the package keys (`[package]`, layer
//! `outline`/`fill`/`origin`, `[[layers.regions]]`, `[grid] cell`, cooling
//! maps) and the import paths, through the CLI: exit code 2, a message naming
//! the file, the field and the fault, no output folder, never a panic. One
//! base stack (a mold layer with two dies as regions under a copper lid, a
//! cold-plate rectangle on top), one key changed per case.

use crate::util::cli::{cuth, err, input_error, ok, s};
use std::path::PathBuf;

const BASE: &str = r#"title = "audit base"
[package]
width = "10 mm"
length = "8 mm"
[grid]
cell = "0.5 mm"
growth = 1.2
[boundary]
ambient = "45 C"
h_top = [{ x = "1 mm", y = "1 mm", width = "8 mm", length = "6 mm", h = 2e4 }]
h_bottom = 300.0
[materials.silicon]
k = 130.0
heat_capacity = 1.63e6
[materials.mold]
k = 0.9
heat_capacity = 1.6e6
[materials.copper]
k = 390.0
heat_capacity = 3.45e6
[[layers]]
name = "dies"
material = "mold"
thickness = "200 um"
outline = { x = "1 mm", y = "1 mm", width = "8 mm", length = "6 mm" }
fill = "none"
[[layers.regions]]
name = "die0"
x = "2 mm"
y = "2 mm"
width = "3 mm"
length = "3 mm"
material = "silicon"
power = { type = "blocks", blocks = [ { name = "hot", x = "0.5 mm", y = "0.5 mm", width = "1 mm", height = "1 mm", power = 2.0 } ] }
[[layers.regions]]
name = "die1"
x = "6 mm"
y = "2 mm"
width = "2 mm"
length = "2 mm"
material = { kx = 110.0, ky = 110.0, kz = 20.0, heat_capacity = 1.7e6 }
power = { type = "uniform", total = 1.0 }
[[layers]]
name = "lid"
material = "copper"
thickness = "1 mm"
"#;

/// The base stack with `old` replaced by `new` (once; `old` must occur),
/// written with the `extra` files into a fresh folder: (folder, stack, out).
fn variant(old: &str, new: &str, extra: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    assert!(BASE.contains(old), "`{old}` not in the base stack");
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("s.toml");
    std::fs::write(&stack, BASE.replacen(old, new, 1)).unwrap();
    for (name, bytes) in extra {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let out = dir.path().join("out");
    (dir, stack, out)
}

/// `cuth solve` of the variant exits 2 naming the stack file and every
/// needle, writing nothing.
fn bad(old: &str, new: &str, extra: &[(&str, &[u8])], needles: &[&str]) {
    let (_dir, stack, out) = variant(old, new, extra);
    let mut all = vec![s(&stack)];
    all.extend_from_slice(needles);
    input_error(
        &["solve", s(&stack), "--device", "cpu", "--out", s(&out)],
        &out,
        &all,
    );
}

fn solves(old: &str, new: &str, extra: &[(&str, &[u8])]) -> (tempfile::TempDir, PathBuf) {
    let (dir, stack, out) = variant(old, new, extra);
    ok(&cuth(&[
        "solve",
        s(&stack),
        "--device",
        "cpu",
        "--out",
        s(&out),
        "--quiet",
    ]));
    (dir, out)
}

/// Extra files of a case: (name, contents).
type Files<'a> = Vec<(&'a str, &'a [u8])>;

const DIE1_MAT: &str = "material = { kx = 110.0, ky = 110.0, kz = 20.0, heat_capacity = 1.7e6 }";

#[test]
fn the_base_stack_solves() {
    let (_d, out) = solves("title", "title", &[]);
    assert!(out.join("summary.json").exists());
}

#[test]
fn an_inline_material_fault_names_the_field_where_it_is_written() {
    // Was `materials.layers[0] (dies).regions[1] (die1).material.kz`: no
    // such table exists under [materials].
    let neg = DIE1_MAT.replace("kz = 20.0", "kz = -20.0");
    bad(
        DIE1_MAT,
        &neg,
        &[],
        &["layers[0] (dies).regions[1] (die1).material.kz: must be positive"],
    );
    let (_d, stack, out) = variant(DIE1_MAT, &neg, &[]);
    let o = cuth(&["solve", s(&stack), "--device", "cpu", "--out", s(&out)]);
    assert!(!err(&o).contains("materials.layers"), "{}", err(&o));
    bad(
        "fill = \"none\"",
        "fill = { k = -0.5, heat_capacity = 1e6 }",
        &[],
        &["layers[0] (dies).fill.k: must be positive"],
    );
    bad(
        DIE1_MAT,
        "material = { kx = 110.0, ky = 110.0, heat_capacity = 1.7e6 }",
        &[],
        &["layers[0] (dies).regions[1] (die1).material: give either `k` or all three"],
    );
    // A named material keeps its [materials] path.
    bad(
        "[materials.mold]\nk = 0.9",
        "[materials.mold]\nk = -0.9",
        &[],
        &["materials.mold.k: must be positive"],
    );
}

#[test]
fn an_inline_table_fault_is_reported_as_itself_not_as_no_variant_matched() {
    // Each was "data did not match any variant of untagged enum ...".
    let cases: [(&str, &str, &str); 5] = [
        (
            DIE1_MAT,
            "material = { kx = 110.0, ky = 110.0, kz = 20.0 }",
            "missing field `heat_capacity`",
        ),
        (
            DIE1_MAT,
            "material = { k = 3.0, heat_capacity = 1.7e6, rho = 3 }",
            "unknown field `rho`",
        ),
        (
            "fill = \"none\"",
            "fill = 3",
            "a material name, \"none\", or an inline table",
        ),
        (", h = 2e4 }]", " }]", "missing field `h`"),
        ("h = 2e4 }]", "h = 2e4, t = 3 }]", "unknown field `t`"),
    ];
    for (old, new, needle) in cases {
        let (_d, stack, out) = variant(old, new, &[]);
        let o = cuth(&["solve", s(&stack), "--device", "cpu", "--out", s(&out)]);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{new}: {e}");
        assert!(e.contains(needle), "{new}: `{needle}` missing from {e}");
        assert!(
            !e.contains("untagged") && !e.contains("variant"),
            "{new}: {e}"
        );
        assert!(!out.exists());
    }
    bad(
        "h_bottom = 300.0",
        "h_bottom = { file = \"h.csv\", hmax = 3 }",
        &[],
        &["unknown field `hmax`"],
    );
}

#[test]
fn a_rectangle_of_the_wrong_type_says_what_is_expected() {
    // Was "expected struct RectSpec".
    bad(
        "outline = { x = \"1 mm\", y = \"1 mm\", width = \"8 mm\", length = \"6 mm\" }",
        "outline = \"all\"",
        &[],
        &["a rectangle { x, y, width, length }"],
    );
}

#[test]
fn a_property_of_the_wrong_form_lists_the_forms_allowed() {
    // Was "data did not match any variant of untagged enum PropertySpec".
    bad(
        DIE1_MAT,
        "material = { k = [110.0, 20.0], heat_capacity = 1.7e6 }",
        &[],
        &["a number, or a temperature law"],
    );
    bad(
        "[materials.mold]\nk = 0.9",
        "[materials.mold]\nk = \"0.9 W/mK\"",
        &[],
        &["a number, or a temperature law"],
    );
}

#[test]
fn grid_cell_out_of_range_reads_as_a_length() {
    // Was "between 2.2250738585072014e-308 and 1.7976931348623157e308 , got 0e0".
    for v in ["0", "\"-0.5 mm\"", "nan"] {
        let (_d, stack, out) = variant("cell = \"0.5 mm\"", &format!("cell = {v}"), &[]);
        let args = ["solve", s(&stack), "--device", "cpu", "--out", s(&out)];
        input_error(
            &args,
            &out,
            &["grid.cell: must be a positive number between 1e-12 and 1e1 m"],
        );
        assert!(!err(&cuth(&args)).contains("e-308"));
    }
}

#[test]
fn a_cell_larger_than_the_domain_is_refused_not_a_one_cell_grid() {
    // Was accepted: a 1 x 1 in-plane grid, every outline and region merged away.
    bad(
        "cell = \"0.5 mm\"",
        "cell = \"50 mm\"",
        &[],
        &["grid.cell", "larger than the domain"],
    );
    // A cell as large as the dies still meshes them (lines 1, 2, 5, 6, 8, 9 mm).
    let (_d, out) = solves("cell = \"0.5 mm\"", "cell = \"3 mm\"", &[]);
    let csv = std::fs::read_to_string(out.join("00_dies.csv")).unwrap();
    let x: Vec<f64> = csv
        .lines()
        .find(|l| l.starts_with("# x_mm"))
        .unwrap()
        .split(',')
        .skip(1)
        .map(|v| v.parse().unwrap())
        .collect();
    assert!(x.len() >= 7, "{x:?}");
}

#[test]
fn growth_with_a_uniform_grid_says_so() {
    // Was "must be in [1, 4] and goes with `cell`, got 1.2" for a growth in [1, 4].
    bad(
        "cell = \"0.5 mm\"",
        "nx = 10\nny = 8",
        &[],
        &["grid.growth: goes with `cell`"],
    );
    bad(
        "growth = 1.2",
        "growth = 0.9",
        &[],
        &["grid.growth: must be in [1, 4], got 0.9"],
    );
}

#[test]
fn an_origin_must_be_finite() {
    // Was accepted, then reported as a floorplan unit spanning x [NaN, NaN].
    let r0 = "material = \"silicon\"\npower";
    bad(
        r0,
        "material = \"silicon\"\norigin = { x = nan, y = \"2 mm\" }\npower",
        &[],
        &["layers[0] (dies).regions[0] (die0).origin.x: must be a finite length"],
    );
    bad(
        "fill = \"none\"",
        "fill = \"none\"\norigin = { x = \"1 mm\", y = inf }",
        &[],
        &["layers[0] (dies).origin.y: must be a finite length"],
    );
}

#[test]
fn a_csv_cooling_map_holds_film_coefficients_not_power() {
    let ht =
        "h_top = [{ x = \"1 mm\", y = \"1 mm\", width = \"8 mm\", length = \"6 mm\", h = 2e4 }]";
    // Was "`-2e4` is not a power (a number from 0 to 1e9 W)".
    bad(
        ht,
        "h_top = { file = \"h.csv\" }",
        &[("h.csv", b"1e4,-2e4\n3e4,4e4\n")],
        &[
            "h.csv",
            "row 1 (line 1), column 2: `-2e4` is not a film coefficient",
        ],
    );
    bad(
        "h_bottom = 300.0",
        "h_bottom = { file = \"h.csv\" }",
        &[("h.csv", b"1e4,nan\n")],
        &["boundary.h_bottom.file", "`nan` is not a film coefficient"],
    );
    // Was refused as a power above 1e9 W: 2e10 W/(m^2 K) is in the documented range.
    let (_d, out) = solves(
        ht,
        "h_top = { file = \"h.csv\" }",
        &[("h.csv", b"1e4,2e10\n3e4,4e4\n")],
    );
    assert!(out.join("summary.json").exists());
    bad(
        ht,
        "h_top = { file = \"h.csv\" }",
        &[("h.csv", b"1e4,2e13\n")],
        &["`2e13` is not a film coefficient"],
    );
}

/// Cases that were right before this audit, kept as a sample: each exits 2
/// naming the field, writes nothing.
#[test]
fn package_faults_already_reported_well() {
    let outline = "outline = { x = \"1 mm\", y = \"1 mm\", width = \"8 mm\", length = \"6 mm\" }";
    let ht =
        "h_top = [{ x = \"1 mm\", y = \"1 mm\", width = \"8 mm\", length = \"6 mm\", h = 2e4 }]";
    let cases: Vec<(&str, String, Files, &str)> = vec![
        ("width = \"10 mm\"", "width = 0".into(), vec![], "package.width: must be a positive number"),
        ("width = \"10 mm\"", "width = \"10 furlong\"".into(), vec![], "is not a length"),
        (outline, outline.replace("x = \"1 mm\"", "x = \"5 mm\""), vec![], "layers[0] (dies).outline: spans x"),
        (outline, outline.replace("width = \"8 mm\"", "width = 0"), vec![], "layers[0] (dies).outline.width: must be positive"),
        ("fill = \"none\"", "fill = \"unobtainium\"".into(), vec![], "layers[0] (dies).fill: unknown material `unobtainium`"),
        ("x = \"2 mm\"", "x = \"9 mm\"".into(), vec![], "layers[0] (dies).regions[0] (die0): spans x"),
        ("width = \"3 mm\"", "width = 0".into(), vec![], "regions[0] (die0).width: must be positive"),
        ("name = \"die1\"", "name = \"die0\"".into(), vec![], "region names must be unique"),
        ("material = \"silicon\"\npower", "material = \"none\"\npower".into(), vec![], "cannot hold power"),
        ("total = 1.0", "total = -1.0".into(), vec![], "regions[1] (die1).power.total: must be zero or positive"),
        ("height = \"1 mm\", power = 2.0", "height = \"1 mm\", power = 2.0 }, { name = \"far\", x = \"2.5 mm\", y = 0, width = \"1 mm\", height = \"1 mm\", power = 1.0".into(), vec![], "power.blocks[1] (far): the block spans"),
        ("type = \"uniform\", total = 1.0", "type = \"ptrace\", file = \"x.ptrace\"".into(), vec![("x.ptrace", b"a\n1\n")], "needs the region's `floorplan`"),
        ("growth = 1.2", "ratio = 1.2".into(), vec![], "unknown field `ratio`"),
        ("cell = \"0.5 mm\"\ngrowth = 1.2", "nx = 0\nny = 8".into(), vec![], "grid.nx: must be between 1 and 65536"),
        ("growth = 1.2", "growth = 1.2\nmax_cell = \"0.1 mm\"".into(), vec![], "grid.max_cell: goes with `cell` and must be at least `cell`"),
        (ht, ht.replace("x = \"1 mm\"", "x = \"5 mm\""), vec![], "boundary.h_top[0]: spans x"),
        (ht, ht.replace("h = 2e4", "h = -2e4"), vec![], "boundary.h_top[0].h: must be between"),
        (ht, ht.replace("h = 2e4", "h = 0"), vec![], "no rectangle has h > 0"),
        ("h_bottom = 300.0", "h_bottom = -3.0".into(), vec![], "boundary.h_bottom: must be between"),
        (ht, "h_top = { file = \"n.csv\" }".into(), vec![], "n.csv: cannot read"),
        (ht, "h_top = { file = \"h.png\" }".into(), vec![("h.png", b"\x89PNG")], "a PNG cooling map needs `h_max`"),
        (ht, "h_top = { file = \"h.png\", h_max = 1e4 }".into(), vec![("h.png", b"\x89PNG\r\n\x1a\nxx")], "png: cannot decode"),
        (ht, "h_top = { file = \"h.png\", h_min = 2e4, h_max = 1e4 }".into(), vec![("h.png", b"\x89PNG")], "h_min 2e4 is above h_max"),
        (ht, "h_top = { file = \"h.csv\" }".into(), vec![("h.csv", b"0,0\n0,0\n")], "every pixel is 0"),
        ("h_bottom = 300.0", "h_bottom = 300.0 300".into(), vec![], "TOML parse error at line 11"),
    ];
    for (old, new, extra, needle) in &cases {
        bad(old, new, extra, &[needle]);
    }
    // A fault inside a power raster names that file and its line.
    let (_d, stack, out) = variant(
        "type = \"uniform\", total = 1.0",
        "type = \"raster\", file = \"p.csv\"",
        &[("p.csv", b"1,2\n3\n")],
    );
    input_error(
        &["solve", s(&stack), "--device", "cpu", "--out", s(&out)],
        &out,
        &["p.csv: row 2 (line 2): 1 values, but the first row has 2"],
    );
}

#[test]
fn a_transient_with_a_bad_cooling_map_writes_nothing() {
    let (_d, stack, out) = variant(
        "h_bottom = 300.0",
        "h_bottom = { file = \"h.csv\" }",
        &[("h.csv", b"1e4,-1\n")],
    );
    input_error(
        &[
            "transient",
            s(&stack),
            "--device",
            "cpu",
            "--dt",
            "1e-3",
            "--steps",
            "2",
            "--out",
            s(&out),
        ],
        &out,
        &["boundary.h_bottom.file"],
    );
}

#[test]
fn a_missing_import_input_names_its_cause_once() {
    // Was "nope.stk: cannot read: No such file or directory (os error 2): No
    // such file or directory (os error 2)".
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.toml");
    let flp = "configs/hotspot/ev6_3D_core_layer.flp";
    for args in [
        vec!["import", "3dice", "/nonexistent/nope.stk", "--out", s(&out)],
        vec![
            "import",
            "hotspot",
            "--config",
            "/nonexistent/nope.config",
            "--flp",
            flp,
            "--out",
            s(&out),
        ],
        vec![
            "import",
            "hotspot",
            "--config",
            "configs/hotspot/example.config",
            "--flp",
            flp,
            "--materials",
            "/nonexistent/nope.mat",
            "--out",
            s(&out),
        ],
    ] {
        let o = cuth(&args);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("nope") && e.contains("cannot read"), "{e}");
        assert_eq!(e.matches("No such file or directory").count(), 1, "{e}");
        assert!(!out.exists());
    }
}

#[test]
fn an_import_input_that_is_not_a_regular_file_is_refused_at_once() {
    // Was read forever: /dev/zero grew memory, a FIFO blocked.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.toml");
    let t = std::time::Instant::now();
    for args in [
        vec!["import", "3dice", "/dev/zero", "--out", s(&out)],
        vec![
            "import",
            "hotspot",
            "--config",
            "/dev/zero",
            "--flp",
            "configs/hotspot/ev6_3D_core_layer.flp",
            "--out",
            s(&out),
        ],
        vec!["import", "3dice", s(dir.path()), "--out", s(&out)],
    ] {
        let o = cuth(&args);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("cannot read"), "{e}");
        assert!(!out.exists());
    }
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}

#[test]
fn a_malformed_import_input_names_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.toml");
    let stk = dir.path().join("bad.stk");
    std::fs::write(
        &stk,
        "material SILICON :\n thermal conductivity 1.30e-4 ;\n",
    )
    .unwrap();
    let cfg = dir.path().join("bad.config");
    std::fs::write(&cfg, "-t_chip abc\n").unwrap();
    let lcf = dir.path().join("bad.lcf");
    std::fs::write(&lcf, "0\nY\nY\n1.75e6\n").unwrap();
    let flp = "configs/hotspot/ev6_3D_core_layer.flp";
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec!["import", "3dice", s(&stk)],
            "bad.stk:2: expected `volumetric heat capacity`",
        ),
        (
            vec!["import", "hotspot", "--config", s(&cfg), "--flp", flp],
            "bad.config:1: `-t_chip`: `abc` is not a number",
        ),
        (
            vec![
                "import",
                "hotspot",
                "--config",
                "configs/hotspot/example.config",
                "--lcf",
                s(&lcf),
            ],
            "bad.lcf:1: layer 0 ends early",
        ),
    ];
    for (mut args, needle) in cases {
        args.extend(["--out", s(&out)]);
        let o = cuth(&args);
        let e = err(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(needle), "`{needle}` missing from {e}");
        assert!(!out.exists());
    }
}

#[test]
fn bench_prints_the_preconditioner_not_rust_debug_output() {
    // Was "bench: cpu pcg 16x16x10 jacobi    None: ..." and "chebyshev Some(6):".
    let dir = tempfile::tempdir().unwrap();
    let o = cuth(&[
        "bench",
        "--sizes",
        "16",
        "--cpu-max",
        "16",
        "--out",
        s(&dir.path().join("b")),
    ]);
    let e = err(&o);
    assert!(o.status.success(), "{e}");
    let lines: Vec<&str> = e.lines().filter(|l| l.contains(" pcg ")).collect();
    assert!(lines.iter().any(|l| l.contains("chebyshev 6")), "{e}");
    for l in lines {
        assert!(!l.contains("None") && !l.contains("Some("), "{l}");
    }
}

#[test]
fn a_missing_power_file_names_the_field_that_names_it() {
    // Was "p.csv: cannot read: ..." alone: which layer or region?
    bad(
        "type = \"uniform\", total = 1.0",
        "type = \"raster\", file = \"p.csv\"",
        &[],
        &[
            "layers[0] (dies).regions[1] (die1).power.file: ",
            "p.csv: cannot read",
        ],
    );
    let block = "power = { type = \"blocks\", blocks = [ { name = \"hot\", x = \"0.5 mm\", y = \"0.5 mm\", width = \"1 mm\", height = \"1 mm\", power = 2.0 } ] }";
    bad(
        block,
        "floorplan = \"die.flp\"\npower = { type = \"ptrace\", file = \"x.ptrace\" }",
        &[("die.flp", b"a\t0.0015\t0.003\t0\t0\n")],
        &[
            "layers[0] (dies).regions[0] (die0).power.file: ",
            "x.ptrace: cannot read",
        ],
    );
}

#[test]
fn rectangle_coordinates_in_messages_carry_no_float_noise() {
    // Was "spans x [0.005, 0.013000000000000001] m" for x = 5 mm, width = 8 mm.
    let outline = "outline = { x = \"1 mm\", y = \"1 mm\", width = \"8 mm\", length = \"6 mm\" }";
    bad(
        outline,
        &outline.replace("x = \"1 mm\"", "x = \"5 mm\""),
        &[],
        &["spans x [0.005, 0.013] m, y [0.001, 0.007] m, outside the domain [0, 0.01] × [0, 0.008] m"],
    );
    // A block outside its die: "... x [0.0025, 0.0055] m ... footprint [0.002, 0.005]".
    bad(
        "width = \"1 mm\", height = \"1 mm\", power = 2.0",
        "width = \"3 mm\", height = \"1 mm\", power = 2.0",
        &[],
        &[
            "spans x [0.0025, 0.0055] m",
            "[0.002, 0.005] × [0.002, 0.005] m",
        ],
    );
}

#[test]
fn a_sweep_over_a_package_whose_power_is_in_regions_says_so() {
    // Was "the stack has no powered layer" for a stack of 3 W (in regions).
    let (dir, stack, out) = variant("title", "title", &[]);
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    std::fs::write(maps.join("a.csv"), "1,2\n3,4\n").unwrap();
    input_error(
        &[
            "sweep",
            s(&stack),
            s(&maps),
            "--device",
            "cpu",
            "--out",
            s(&out),
        ],
        &out,
        &["the power of dies is in its [[layers.regions]]", "--layer"],
    );
}

#[test]
fn a_trace_drives_the_dies_of_a_package_placed_as_regions() {
    // Was exit 2 "the trace drives no layer": a package's dies are regions of
    // a layer without a power source of its own.
    let (dir, stack, out) = variant("title", "title", &[]);
    let trace = dir.path().join("t.csv");
    std::fs::write(&trace, "time,hot,die1\n0,4.0,0.5\n0.001,1.0,3.0\n").unwrap();
    ok(&cuth(&[
        "transient",
        s(&stack),
        "--device",
        "cpu",
        "--dt",
        "1e-3",
        "--steps",
        "3",
        "--trace",
        s(&trace),
        "--out",
        s(&out),
        "--quiet",
    ]));
    let ts = std::fs::read_to_string(out.join("timeseries.csv")).unwrap();
    let mut lines = ts.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "power_w").unwrap();
    let power: Vec<f64> = lines
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    // Row 0 at the initial state; steps sampled at their midpoints: 0.5 ms
    // (row 0: 4 + 0.5 W), 1.5 and 2.5 ms (row 1: 1 + 3 W).
    let want = [0.0, 4.5, 4.0, 4.0];
    assert_eq!(power.len(), want.len(), "{ts}");
    for (p, w) in power.iter().zip(want) {
        assert!((p - w).abs() < 1e-12, "{p} vs {w}: {ts}");
    }
}
