//! `cuth sweep` end to end (CPU): every case equals its own `cuth solve` of a
//! stack file carrying that case's power, to 1e-9 K; sharded and merged
//! tables equal the unsharded one; a bad map fails its case only (exit 1).

use crate::util::cli::cuth;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const GRID: &str = "32x24";

fn ok(o: &Output) {
    assert!(
        o.status.success(),
        "{}",
        String::from_utf8_lossy(&o.stderr).into_owned()
    );
}

/// Rows of a CSV as column → cell maps.
fn read_csv(path: &Path) -> Vec<HashMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
    r.records()
        .map(|rec| {
            header
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(String::from))
                .collect()
        })
        .collect()
}

fn num(row: &HashMap<String, String>, col: &str) -> f64 {
    row[col]
        .parse()
        .unwrap_or_else(|_| panic!("{col} = `{}`", row[col]))
}

/// The power of logic_feol and memory_feol for case `i` (TOML inline tables).
fn case_power(i: usize) -> (String, String) {
    let logic = format!(
        r#"{{ type = "raster", file = "{ROOT}/powermaps/mol_logic.csv", total = {} }}"#,
        3.0 + 1.5 * i as f64
    );
    let memory = format!(
        r#"{{ type = "blocks", blocks = [ {{ name = "hot", x = "{} mm", y = "2 mm", width = "1.5 mm", height = "1 mm", power = {} }}, {{ name = "warm", x = "6 mm", y = "6 mm", width = "3 mm", height = "2 mm", power = 0.4 }} ] }}"#,
        1 + 2 * (i % 4),
        0.3 + 0.4 * i as f64
    );
    (logic, memory)
}

/// mol_f2f with its raster paths absolute and, when given, the power of
/// logic_feol and memory_feol replaced.
fn stack_text(power: Option<&(String, String)>) -> String {
    let text = std::fs::read_to_string(Path::new(ROOT).join("configs/mol_f2f.toml")).unwrap();
    let abs = format!("{ROOT}/powermaps/");
    text.lines()
        .map(|line| match power {
            Some((logic, _)) if line.contains("mol_logic.csv") => format!("power = {logic}"),
            Some((_, memory)) if line.contains("mol_memory.csv") => format!("power = {memory}"),
            _ => line.replace("../powermaps/", &abs),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn manifest(dir: &Path, cases: usize) -> PathBuf {
    let mut m = String::new();
    for i in 0..cases {
        let (logic, memory) = case_power(i);
        m += &format!(
            "[[case]]\nname = \"case{i}\"\npower.logic_feol = {logic}\npower.memory_feol = {memory}\n\n"
        );
    }
    let path = dir.join("cases.toml");
    std::fs::write(&path, m).unwrap();
    path
}

fn sweep(stack: &Path, cases: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "sweep",
        stack.to_str().unwrap(),
        cases.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--device",
        "cpu",
        "--grid",
        GRID,
        "--quiet",
    ];
    args.extend_from_slice(extra);
    cuth(&args)
}

/// `cuth solve` of `stack` (kelvin): layer (max, avg) by name and block max
/// by `layer.block`.
fn solve(stack: &Path, out: &Path) -> (HashMap<String, (f64, f64)>, HashMap<String, f64>) {
    let o = cuth(&[
        "solve",
        stack.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--device",
        "cpu",
        "--grid",
        GRID,
        "--kelvin",
        "--quiet",
    ]);
    ok(&o);
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let layers = s["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let name = l["name"].as_str().unwrap().to_string();
            (
                name,
                (
                    l["t_max_k"].as_f64().unwrap(),
                    l["t_avg_k"].as_f64().unwrap(),
                ),
            )
        })
        .collect();
    // A stack without named blocks writes no blocks.csv (nothing to list).
    let blocks_csv = out.join("blocks.csv");
    let rows = if blocks_csv.exists() {
        read_csv(&blocks_csv)
    } else {
        Vec::new()
    };
    let blocks = rows
        .iter()
        .map(|r| (format!("{}.{}", r["layer"], r["block"]), num(r, "t_max_k")))
        .collect();
    (layers, blocks)
}

/// Each row of `row` against the solve of its own stack, to 1e-9 K.
fn assert_equals_solve(row: &HashMap<String, String>, stack: &Path, out: &Path) {
    let (layers, blocks) = solve(stack, out);
    assert_eq!(row["status"], "ok");
    for (name, (max, avg)) in &layers {
        let (m, a) = (
            num(row, &format!("{name}.max_k")),
            num(row, &format!("{name}.avg_k")),
        );
        assert!(
            (m - max).abs() <= 1e-9,
            "{name} max: sweep {m}, solve {max}"
        );
        assert!(
            (a - avg).abs() <= 1e-9,
            "{name} avg: sweep {a}, solve {avg}"
        );
    }
    // blocks.csv prints 6 decimals: to its precision here, to 1e-9 below.
    for (name, max) in &blocks {
        let m = num(row, &format!("{name}.max_k"));
        assert!((m - max).abs() <= 1e-6, "{name}: sweep {m}, solve {max}");
    }
    let lib = library_block_max(stack);
    assert_eq!(lib.len(), blocks.len());
    // Block columns are `layer.block.max_k` (layer names hold no dot).
    let block_columns = row.keys().filter(|k| k.matches('.').count() == 2).count();
    assert_eq!(lib.len(), block_columns);
    for (name, max) in lib {
        let m = num(row, &format!("{name}.max_k"));
        assert!(
            (m - max).abs() <= 1e-9,
            "{name}: sweep {m}, solve_steady {max}"
        );
    }
}

/// Block max of `solve_steady` (what `cuth solve` runs) at full precision.
fn library_block_max(stack: &Path) -> Vec<(String, f64)> {
    use cuth::thermal::steady::{solve_steady, SteadyOptions};
    let (nx, ny) = GRID.split_once('x').unwrap();
    let stack = cuth::stack::Stack::load(stack)
        .unwrap()
        .with_grid(nx.parse().unwrap(), ny.parse().unwrap())
        .unwrap();
    let opts = SteadyOptions::from_stack(&stack, cuth::linalg::PrecondKind::Multigrid);
    let o = solve_steady(&cuth::backend::cpu::CpuBackend::new(), &stack, &opts).unwrap();
    let mut v = Vec::new();
    for (l, layer) in stack.layers.iter().enumerate() {
        let map = o.grid.layer_map(&o.temperature_k, l);
        for s in
            cuth::output::blocks::layer_block_stats(&layer.name, &map, &o.power[l].blocks, &o.grid)
        {
            v.push((format!("{}.{}", s.layer, s.block), s.temp.unwrap().max_k));
        }
    }
    v
}

#[test]
fn every_case_equals_its_own_solve() {
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("stack.toml");
    std::fs::write(&stack, stack_text(None)).unwrap();
    let cases = manifest(dir.path(), 3);
    // One case at a time, and batched (a full batch of 2, then 1 and a pad).
    for (run, extra) in [("sweep", &[][..]), ("batched", &["--batch", "2"][..])] {
        let out = dir.path().join(run);
        let mut args = vec!["--maps"];
        args.extend_from_slice(extra);
        ok(&sweep(&stack, &cases, &out, &args));
        let rows = read_csv(&out.join("sweep.csv"));
        assert_eq!(rows.len(), 3);
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row["case"], format!("case{i}"));
            assert!(!row["memory_feol.hot.max_k"].is_empty());
            let own = dir.path().join(format!("case{i}.toml"));
            std::fs::write(&own, stack_text(Some(&case_power(i)))).unwrap();
            assert_equals_solve(row, &own, &dir.path().join(format!("solve{i}")));
            // The power in is the case's own: raster total + blocks.
            let p = 3.0 + 1.5 * i as f64 + 0.3 + 0.4 * i as f64 + 0.4;
            assert!((num(row, "power_w") - p).abs() < 1e-9 * p);
            // --maps: one CSV per layer per case.
            let maps = out.join(format!("cases/{i:05}_case{i}"));
            assert_eq!(std::fs::read_dir(&maps).unwrap().count(), 10);
            // In kelvin, as the first line says.
            let map = std::fs::read_to_string(maps.join("01_logic_feol.csv")).unwrap();
            assert_eq!(map.lines().next(), Some("# unit: K"));
        }
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
                .unwrap();
        assert_eq!(s["solved"], 3);
        assert_eq!(s["failed"], 0);
        assert_eq!(s["batch"], if extra.is_empty() { 1 } else { 2 });
        // Every case scales the same raster file: decoded once for all
        // (and each case still equals its own solve, above).
        assert_eq!(s["rasters_decoded"], 1);
    }
}

/// A CSV manifest (one row per case and layer) runs the same cases as the
/// TOML manifest that says the same; a bad row is bad input with its line.
#[test]
fn a_csv_manifest_equals_its_toml() {
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("stack.toml");
    std::fs::write(&stack, stack_text(None)).unwrap();
    let raster = format!("{ROOT}/powermaps/mol_logic.csv");
    let (mut toml, mut csv) = (String::new(), String::from("case,layer,file,power\n"));
    for i in 0..3 {
        let (logic, memory) = (3.0 + i as f64, 0.5 + 0.25 * i as f64);
        toml += &format!(
            "[[case]]\nname = \"c{i}\"\n\
             power.logic_feol = {{ type = \"raster\", file = \"{raster}\", total = {logic} }}\n\
             power.memory_feol = {{ type = \"uniform\", total = {memory} }}\n\n"
        );
        csv += &format!("c{i},logic_feol,{raster},{logic}\n");
        csv += &format!("# a comment\nc{i},memory_feol,,{memory}\n");
    }
    let (t, c) = (dir.path().join("cases.toml"), dir.path().join("cases.csv"));
    std::fs::write(&t, toml).unwrap();
    std::fs::write(&c, csv).unwrap();
    let (ot, oc) = (dir.path().join("t"), dir.path().join("c"));
    ok(&sweep(&stack, &t, &ot, &[]));
    ok(&sweep(&stack, &c, &oc, &["--batch", "3"]));
    assert_eq!(read_csv(&oc.join("sweep.csv")).len(), 3);
    assert_tables_match(&ot.join("sweep.csv"), &oc.join("sweep.csv"));
    for (text, what) in [
        ("case,layer,power\nc0,nope,1\n", "no layer `nope`"),
        (
            "case,layer,power\nc0,logic_feol,-1\n",
            "not a number of watts",
        ),
        (
            "case,layer,watts\nc0,logic_feol,1\n",
            "unknown column `watts`",
        ),
        (
            "case,layer,power\nc0,logic_feol,1\nc0,logic_feol,2\n",
            "twice",
        ),
    ] {
        std::fs::write(&c, text).unwrap();
        let o = sweep(&stack, &c, &oc, &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{text}: {err}");
        assert!(
            err.contains(what) && err.contains("cases.csv:"),
            "{text}: {err}"
        );
    }
}

/// Every cell equal, numbers to 1e-9 (each run may split its sums differently).
fn assert_tables_match(a: &Path, b: &Path) {
    let (ra, rb) = (read_csv(a), read_csv(b));
    assert_eq!(ra.len(), rb.len());
    for (x, y) in ra.iter().zip(&rb) {
        let mut kx: Vec<_> = x.keys().collect();
        let mut ky: Vec<_> = y.keys().collect();
        kx.sort();
        ky.sort();
        assert_eq!(kx, ky);
        for (k, v) in x {
            match (v.parse::<f64>(), y[k].parse::<f64>()) {
                (Ok(p), Ok(q)) => assert!((p - q).abs() <= 1e-9, "{k}: {p} vs {q}"),
                _ => assert_eq!(v, &y[k], "{k}"),
            }
        }
    }
}

#[test]
fn sharded_and_merged_equals_unsharded() {
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("stack.toml");
    std::fs::write(&stack, stack_text(None)).unwrap();
    let cases = manifest(dir.path(), 5);
    let whole = dir.path().join("whole");
    ok(&sweep(&stack, &cases, &whole, &[]));
    let mut tables = Vec::new();
    for i in 0..3 {
        let out = dir.path().join(format!("shard{i}"));
        // Shards batched (2 at a time) against the unbatched whole.
        ok(&sweep(
            &stack,
            &cases,
            &out,
            &["--shard", &format!("{i}/3"), "--batch", "2"],
        ));
        assert_eq!(
            read_csv(&out.join("sweep.csv")).len(),
            if i < 2 { 2 } else { 1 }
        );
        tables.push(out.join("sweep.csv").to_str().unwrap().to_string());
    }
    let merged = dir.path().join("merged");
    let mut args = vec![
        "sweep",
        "--quiet",
        "--out",
        merged.to_str().unwrap(),
        "--merge",
    ];
    // Out of order on purpose: rows are joined by case_index.
    args.extend([&tables[2], &tables[0], &tables[1]].map(String::as_str));
    ok(&cuth(&args));
    assert_tables_match(&merged.join("sweep.csv"), &whole.join("sweep.csv"));
    // The same shard twice overlaps: bad input.
    let again = cuth(&[
        "sweep",
        "--quiet",
        "--out",
        merged.to_str().unwrap(),
        "--merge",
        &tables[0],
        &tables[0],
    ]);
    assert_eq!(again.status.code(), Some(2));
}

#[test]
fn a_bad_map_fails_its_case_only() {
    let dir = tempfile::tempdir().unwrap();
    let stack = dir.path().join("stack.toml");
    std::fs::write(&stack, stack_text(None)).unwrap();
    let maps = dir.path().join("maps");
    std::fs::create_dir(&maps).unwrap();
    std::fs::copy(
        Path::new(ROOT).join("powermaps/mol_memory.csv"),
        maps.join("a_good.csv"),
    )
    .unwrap();
    std::fs::write(maps.join("b_bad.csv"), "1,2,x\n3,4,5\n").unwrap();
    std::fs::copy(
        Path::new(ROOT).join("powermaps/mol_memory.csv"),
        maps.join("c_good.csv"),
    )
    .unwrap();
    let out = dir.path().join("sweep");
    let o = sweep(&stack, &maps, &out, &["--layer", "memory_feol"]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let rows = read_csv(&out.join("sweep.csv"));
    let status: Vec<&str> = rows.iter().map(|r| r["status"].as_str()).collect();
    assert_eq!(status, ["ok", "failed", "ok"]);
    assert!(
        rows[1]["reason"].contains("b_bad.csv"),
        "{}",
        rows[1]["reason"]
    );
    // The good cases are the stack's own power: equal to the plain solve.
    assert_equals_solve(&rows[0], &stack, &dir.path().join("solve"));
    assert_tables_match_row(&rows[0], &rows[2]);
    // The report on stdout speaks thermal, the solver only with --verbose.
    let r = dir.path().join("r");
    let report = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            stack.to_str().unwrap(),
            maps.to_str().unwrap(),
            "--out",
            r.to_str().unwrap(),
            "--device",
            "cpu",
            "--grid",
            GRID,
            "--layer",
            "memory_feol",
        ];
        args.extend_from_slice(extra);
        let o = cuth(&args);
        assert_eq!(o.status.code(), Some(1), "{o:?}");
        String::from_utf8(o.stdout).unwrap()
    };
    let (plain, verbose) = (report(&[]), report(&["--verbose"]));
    for text in [&plain, &verbose] {
        assert!(text.contains("3 cases: 2 solved, 1 failed"), "{text}");
        assert!(
            text.contains("hottest") && text.contains("case a_good"),
            "{text}"
        );
        assert!(
            text.contains("failed     b_bad: ") && text.contains("b_bad.csv"),
            "{text}"
        );
    }
    assert!(plain.contains("(--verbose for details)"), "{plain}");
    for detail in ["preconditioner mg", "true residual", "set-up", "device"] {
        assert!(!plain.contains(detail), "{detail} in\n{plain}");
        assert!(verbose.contains(detail), "{detail} missing in\n{verbose}");
    }
    // A layer the stack lacks is bad input, before any work.
    let o = sweep(&stack, &maps, &dir.path().join("x"), &["--layer", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!dir.path().join("x").exists());
}

fn assert_tables_match_row(a: &HashMap<String, String>, b: &HashMap<String, String>) {
    for (k, v) in a {
        if k != "case" && k != "case_index" {
            assert_eq!(v, &b[k], "{k}");
        }
    }
}
