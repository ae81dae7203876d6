//! End-to-end runs of the `cuth` binary: shipped configs write every output;
//! malformed inputs exit with code 2, name the file and field, and write nothing.

use crate::util::cli::cuth;
use std::path::Path;
use std::process::Output;

/// `cuth solve STACK --out OUT [extra...]`.
fn solve(stack: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["solve", stack, "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    cuth(&args)
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn files_in(dir: &Path) -> Vec<String> {
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

#[test]
fn solve_mol_f2f_writes_every_output() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mol");
    let o = solve(
        "configs/mol_f2f.toml",
        &out,
        &["--grid", "32x32", "--device", "cpu"],
    );
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stderr: {stderr}");
    assert!(
        stdout.contains("logic_feol"),
        "table lists layers: {stdout}"
    );
    let files = files_in(&out);
    assert!(files.contains(&"summary.json".to_string()), "{files:?}");
    // Raster power names no blocks: no empty block tables.
    for f in ["blocks.csv", "blocks.steady"] {
        assert!(!files.contains(&f.to_string()), "{f} in {files:?}");
    }
    assert_eq!(
        files.iter().filter(|f| f.ends_with(".png")).count(),
        10,
        "{files:?}"
    );
    assert_eq!(
        files.iter().filter(|f| f.ends_with(".csv")).count(),
        10,
        "{files:?}"
    );
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["grid"]["nx"], 32);
    assert_eq!(s["solver"]["converged"], true);
    assert!(s["solver"]["final_true_residual"].as_f64().unwrap() <= 1e-8);
    assert!(s["energy"]["relative_error"].as_f64().unwrap() < 1e-6);
    assert!((s["energy"]["power_in_w"].as_f64().unwrap() - 7.2).abs() < 1e-9);
    // Each layer CSV is three `#` lines, its unit (°C by default) and the
    // cell centres (mm), then ny rows of nx values.
    let csv = std::fs::read_to_string(out.join("01_logic_feol.csv")).unwrap();
    let (head, rows): (Vec<&str>, Vec<&str>) = csv.lines().partition(|l| l.starts_with('#'));
    assert_eq!((head.len(), rows.len()), (3, 32));
    assert_eq!(head[0], "# unit: °C");
    assert!(head[1].starts_with("# x_mm,") && head[2].starts_with("# y_mm,"));
    assert!(rows.iter().all(|l| l.split(',').count() == 32));
    assert!(head[1..].iter().all(|l| l.split(',').count() == 33));
    // The PNG decodes.
    image::open(out.join("01_logic_feol.png")).expect("PNG decodes");
}

#[test]
fn solve_hotspot_example_and_json_and_quiet() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("hs");
    let cfg = "configs/hotspot_ev6_3d.toml";
    let o = solve(cfg, &out, &["--grid", "24x24", "--device", "cpu", "--json"]);
    let (stdout, stderr) = text(&o);
    assert!(o.status.success(), "stderr: {stderr}");
    let s: serde_json::Value = serde_json::from_str(&stdout).expect("--json prints the summary");
    assert_eq!(s["layers"].as_array().unwrap().len(), 8);
    let blocks = std::fs::read_to_string(out.join("blocks.csv")).unwrap();
    assert!(
        blocks.contains("IntReg_0_0"),
        "per-block results name HotSpot units"
    );

    let o = solve(
        cfg,
        &out,
        &["--grid", "16x16", "--device", "cpu", "--quiet"],
    );
    assert!(o.status.success());
    assert!(o.stdout.is_empty(), "--quiet prints nothing");
}

/// Writes `stack` (and `extra` files) into a temp dir, runs `cuth solve`, and
/// checks: exit code 2, stderr names the stack file (or `names_file`) and
/// contains `needle`, and the output directory was not created.
fn rejects(stack: &str, extra: &[(&str, &str)], names_file: Option<&str>, needle: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("bad.toml");
    std::fs::write(&path, stack).unwrap();
    for (name, body) in extra {
        std::fs::write(tmp.path().join(name), body).unwrap();
    }
    let out = tmp.path().join("out");
    let o = solve(path.to_str().unwrap(), &out, &["--device", "cpu"]);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(2), "stderr: {stderr}");
    let file = names_file.map(|f| tmp.path().join(f)).unwrap_or(path);
    assert!(
        stderr.contains(file.to_str().unwrap()),
        "names the file: {stderr}"
    );
    assert!(stderr.contains(needle), "mentions `{needle}`: {stderr}");
    assert!(!out.exists(), "nothing written");
}

const HEAD: &str = "[chip]\nwidth = \"2 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 8\nny = 8\n\
                    [boundary]\nambient = 300\nh_top = 1e4\n[materials.si]\nk = 130\nheat_capacity = 1.6e6\n";

/// HEAD plus one layer `die` of silicon with the extra TOML lines `rest`.
fn die(rest: &str) -> String {
    format!("{HEAD}[[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=1e-4\n{rest}")
}

#[test]
fn malformed_inputs_exit_2_name_file_and_field_and_write_nothing() {
    // Bad TOML.
    rejects(&format!("{HEAD}[[layers]\nname = \"a\""), &[], None, "line");
    // Unknown key.
    rejects(&die("thicknes=2\n"), &[], None, "thicknes");
    // Unknown material.
    rejects(
        &format!("{HEAD}[[layers]]\nname=\"die\"\nmaterial=\"copper\"\nthickness=1e-4\n"),
        &[],
        None,
        "layers[0] (die).material",
    );
    // Negative thickness.
    rejects(
        &format!("{HEAD}[[layers]]\nname=\"die\"\nmaterial=\"si\"\nthickness=\"-10um\"\n"),
        &[],
        None,
        "layers[0] (die).thickness",
    );
    // Missing power file: the message names that file.
    rejects(
        &die("power={ type=\"raster\", file=\"nowhere.csv\" }\n"),
        &[],
        Some("nowhere.csv"),
        "cannot read",
    );
    // Block outside the footprint.
    rejects(
        &die(
            "power = { type = \"blocks\", blocks = [ { name = \"hot\", x = \"1.5mm\", y = \"0\", \
             width = \"1mm\", height = \"1mm\", power = 1.0 } ] }\n",
        ),
        &[],
        None,
        "layers[0] (die).power.blocks[0] (hot)",
    );
    // A floorplan with a bad line names the floorplan file and the line.
    rejects(
        &die("floorplan=\"f.flp\"\n"),
        &[("f.flp", "core 0.001 0.001 0 0\ncache 0.001 zero 0 0.001\n")],
        Some("f.flp"),
        "line 2",
    );
}

#[test]
fn bad_flags_exit_2_and_iteration_cap_exits_1() {
    let o = cuth(&["solve", "configs/mol_f2f.toml", "--grid", "64by64"]);
    assert_eq!(o.status.code(), Some(2));
    let o = cuth(&["solve", "configs/mol_f2f.toml", "--rtol", "2"]);
    assert_eq!(o.status.code(), Some(2));
    // topopt's mg: a coarse rtol outside (0, 1) is bad input.
    let o = cuth(&[
        "topopt",
        "cantilever",
        "--precond",
        "mg",
        "--mg-coarse-rtol",
        "0",
        "--device",
        "cpu",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o).1);
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let flags = [
        "--grid",
        "16x16",
        "--device",
        "cpu",
        "--max-iter",
        "3",
        "--rtol",
        "3e-7",
    ];
    let o = solve("configs/mol_f2f.toml", &out, &flags);
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("max_iter"), "{stderr}");
    // The user's --rtol, not PCG's internal one (scaled by the offset).
    assert!(stderr.contains("rtol 3.0e-7"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn device_cuda_is_a_clear_error_or_works() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    let o = solve(
        "configs/mol_f2f.toml",
        &out,
        &["--grid", "16x16", "--device", "cuda"],
    );
    let (_, stderr) = text(&o);
    if cuth::backend::cuda::available().is_ok() {
        assert!(o.status.success(), "{stderr}");
    } else {
        assert_eq!(o.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains("CUDA"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert!(!out.exists());
    }
    // auto falls back to the CPU with one notice line when CUDA is missing.
    let o = solve("configs/mol_f2f.toml", &out, &["--grid", "16x16"]);
    assert!(o.status.success());
}

#[test]
fn a_grid_too_large_for_memory_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("o");
    // 60000² × 18 cells need ~10 TB: refused before anything is assembled.
    let o = solve(
        "configs/mol_f2f.toml",
        &out,
        &["--grid", "60000x60000", "--device", "cpu"],
    );
    let (_, stderr) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("host memory") && stderr.contains("bytes"),
        "{stderr}"
    );
    assert!(!out.exists());
}
