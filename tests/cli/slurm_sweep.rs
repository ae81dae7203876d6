//! `examples/slurm_sweep.sh`, the Slurm recipe of a sharded sweep: its array
//! tasks run here as parallel processes with the `SLURM_ARRAY_*` variables a
//! scheduler would set, and their merge equals the single-process sweep; its
//! submit mode, against a stand-in `sbatch`, asks for one array task per
//! shard and a merge that depends on them; a task's device follows
//! `CUDA_VISIBLE_DEVICES`.

use crate::util::cli::{cuth, cuth_path, ok, s};
use std::path::Path;
use std::process::{Command, Output};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const STACK: &str = "configs/mol_f2f.toml";
const GRID: &str = "32x24";

/// `bash examples/slurm_sweep.sh ARGS` from the repository root with `env`,
/// and no Slurm or CUDA variables from the caller's environment.
fn script(args: &[&str], env: &[(&str, &str)], path: Option<&Path>) -> Command {
    let mut c = Command::new("bash");
    c.arg(Path::new(ROOT).join("examples/slurm_sweep.sh"))
        .args(args)
        .current_dir(ROOT)
        .env("CUTH", cuth_path())
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env_remove("CUTH_DEVICE");
    for (k, _) in std::env::vars() {
        if k.starts_with("SLURM_") {
            c.env_remove(k);
        }
    }
    if let Some(dir) = path {
        let old = std::env::var("PATH").unwrap_or_default();
        c.env("PATH", format!("{}:{old}", dir.display()));
    }
    c.envs(env.iter().copied());
    c
}

fn run(mut c: Command) -> Output {
    c.output().expect("bash runs")
}

/// Cells of a CSV as (header, rows); numbers to 1e-9, the rest exactly.
fn assert_same_table(a: &Path, b: &Path) {
    let read = |p: &Path| {
        let mut r = csv::Reader::from_path(p).unwrap();
        let h: Vec<String> = r.headers().unwrap().iter().map(String::from).collect();
        let rows: Vec<Vec<String>> = r
            .records()
            .map(|x| x.unwrap().iter().map(String::from).collect())
            .collect();
        (h, rows)
    };
    let ((ha, ra), (hb, rb)) = (read(a), read(b));
    assert_eq!(ha, hb);
    assert_eq!(ra.len(), rb.len());
    for (x, y) in ra.iter().zip(&rb) {
        for ((k, p), q) in ha.iter().zip(x).zip(y) {
            match (p.parse::<f64>(), q.parse::<f64>()) {
                (Ok(p), Ok(q)) => assert!((p - q).abs() <= 1e-9, "{k}: {p} vs {q}"),
                _ if k.ends_with("_s") => {}
                _ => assert_eq!(p, q, "{k}"),
            }
        }
    }
}

#[test]
fn array_tasks_and_their_merge_equal_one_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let cases = dir.path().join("cases.toml");
    let o = Command::new("bash")
        .args(["bench/sweep_cases.sh", "5", s(&cases)])
        .current_dir(ROOT)
        .output()
        .unwrap();
    ok(&o);
    let whole = dir.path().join("whole");
    ok(&cuth(&[
        "sweep",
        STACK,
        s(&cases),
        "--out",
        s(&whole),
        "--device",
        "cpu",
        "--grid",
        GRID,
        "--quiet",
    ]));
    // Three array tasks at once, numbered from 1 as `--array=1-3` would.
    let out = dir.path().join("cluster");
    let tasks: Vec<_> = (1..=3)
        .map(|id| {
            let id = id.to_string();
            let env = [
                ("SLURM_ARRAY_TASK_ID", id.as_str()),
                ("SLURM_ARRAY_TASK_MIN", "1"),
                ("SLURM_ARRAY_TASK_COUNT", "3"),
                ("RAYON_NUM_THREADS", "1"),
            ];
            let args = ["shard", STACK, s(&cases), s(&out), "--grid", GRID];
            script(&args, &env, None).spawn().unwrap()
        })
        .collect();
    for t in tasks {
        ok(&t.wait_with_output().unwrap());
    }
    for i in 0..3 {
        let rows = csv::Reader::from_path(out.join(format!("shard{i}/sweep.csv")))
            .unwrap()
            .records()
            .count();
        assert_eq!(rows, if i < 2 { 2 } else { 1 }, "shard {i}");
        let sum: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.join(format!("shard{i}/summary.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(sum["shard"], serde_json::json!([i, 3]));
    }
    ok(&run(script(&["merge", s(&out)], &[], None)));
    assert_same_table(&out.join("merged/sweep.csv"), &whole.join("sweep.csv"));
}

/// Submit mode against a stand-in `sbatch` that logs its arguments; the
/// device each task would use, by a stand-in `cuth` that prints its own.
#[test]
fn submit_asks_for_an_array_and_a_dependent_merge() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let log = dir.path().join("sbatch.log");
    let fake = |name: &str, body: String| {
        let p = bin.join(name);
        std::fs::write(&p, body).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
        p
    };
    fake(
        "sbatch",
        format!("#!/bin/sh\necho \"$*\" >> {}\necho 4242\n", log.display()),
    );
    let out = dir.path().join("out");
    let args = ["submit", STACK, "cases.toml", s(&out), "8", "--batch", "4"];
    let o = run(script(&args, &[], Some(&bin)));
    ok(&o);
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].contains("--array=0-7"), "{}", lines[0]);
    assert!(lines[0].contains("--gres=gpu:1"), "{}", lines[0]);
    assert!(
        lines[0].ends_with(&format!("shard {STACK} cases.toml {} --batch 4", s(&out))),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains("--dependency=afterany:4242"),
        "{}",
        lines[1]
    );
    assert!(
        lines[1].ends_with(&format!("merge {}", s(&out))),
        "{}",
        lines[1]
    );

    let echo = fake("cuth", "#!/bin/sh\necho \"$*\"\n".into());
    for (env, device) in [
        (vec![], "cpu"),
        (vec![("CUDA_VISIBLE_DEVICES", "3")], "cuda:0"),
        (vec![("CUDA_VISIBLE_DEVICES", "")], "cpu"),
        (
            vec![("CUDA_VISIBLE_DEVICES", "3"), ("CUTH_DEVICE", "cpu")],
            "cpu",
        ),
    ] {
        let mut env = env;
        env.extend([
            ("SLURM_ARRAY_TASK_ID", "5"),
            ("SLURM_ARRAY_TASK_COUNT", "8"),
            ("CUTH", s(&echo)),
        ]);
        let o = run(script(&["shard", STACK, "c.toml", "o"], &env, None));
        ok(&o);
        let said = String::from_utf8_lossy(&o.stdout);
        assert_eq!(
            said.trim(),
            format!("sweep {STACK} c.toml --shard 5/8 --out o/shard5 --device {device} --quiet"),
            "{env:?}"
        );
    }
}
