//! Checks of the history CSV against its rows, of the staged writer
//! (`write_outputs`: every file or nothing) and of the field's own input
//! check. A topic of `tests.rs`, whose fields it uses.

use super::*;

fn rows() -> Vec<HistoryRow> {
    (1..=3)
        .map(|i| HistoryRow {
            iteration: i,
            compliance: 100.0 / i as f64,
            volume: 0.3,
            grayness: 0.1 / i as f64,
            cg_iterations: 10 * i,
            seconds: 0.25,
            beta: 1.0,
            penal: 3.0,
        })
        .collect()
}

#[test]
fn history_csv_has_the_header_and_one_row_per_iteration() {
    let rows = rows();
    let csv = history_csv(&rows);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "iteration,compliance,volume,grayness,cg_iterations,seconds,beta,penal"
    );
    assert_eq!(lines.len(), 4);
    for (line, r) in lines[1..].iter().zip(&rows) {
        let v: Vec<f64> = line.split(',').map(|s| s.parse().unwrap()).collect();
        let want = [
            r.iteration as f64,
            r.compliance,
            r.volume,
            r.grayness,
            r.cg_iterations as f64,
            r.seconds,
            r.beta,
            r.penal,
        ];
        assert_eq!(v, want);
    }
    assert_eq!(history_csv(&[]).lines().count(), 1);
    assert!(progress_message(&rows[0]).contains("vol 0.300"));
}

fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn write_outputs_writes_every_file_or_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let rho = ball(10, 0.3);
    let f = field([10; 3], 0.1, &rho);
    let summary = serde_json::json!({"problem": "ball", "compliance": 1.5});
    let dir = tmp.path().join("out");
    let paths = write_outputs(&dir, &f, &rows(), &summary).unwrap();
    let names: Vec<String> = paths
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    let want = [
        "density.vti",
        "view_x.png",
        "view_y.png",
        "view_z.png",
        "design.stl",
        "history.csv",
        "summary.json",
    ];
    assert_eq!(names, want);
    // The outputs and the run's manifest, which lists them: no temporaries.
    let mut sorted = want.map(String::from).to_vec();
    sorted.push(".cuth-run.json".into());
    sorted.sort();
    assert_eq!(listing(&dir), sorted, "no temporaries left");
    assert_eq!(std::fs::read(&paths[0]).unwrap(), vtk_image(&f));
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&paths[6]).unwrap()).unwrap();
    assert_eq!(back, summary);
    let stl = std::fs::read(&paths[4]).unwrap();
    assert_eq!(stl.len(), 84 + 50 * isosurface(&f, 0.5).triangles.len());

    // A commit that cannot complete (a directory squats on the STL's
    // name) removes what was staged and leaves no real file.
    let blocked = tmp.path().join("blocked");
    std::fs::create_dir_all(blocked.join("design.stl")).unwrap();
    assert!(write_outputs(&blocked, &f, &rows(), &summary).is_err());
    assert_eq!(listing(&blocked), ["design.stl"]);

    // A directory that cannot be created: under a regular file.
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert!(write_outputs(&file.join("out"), &f, &rows(), &summary).is_err());

    // A malformed field is refused before anything is created.
    let short = field([10; 3], 0.1, &rho[..999]);
    let fresh = tmp.path().join("fresh");
    let err = write_outputs(&fresh, &short, &rows(), &summary).unwrap_err();
    assert!(
        format!("{err:#}").contains("999 values for 10 × 10 × 10 = 1000"),
        "{err:#}"
    );
    assert!(!fresh.exists());
}

#[test]
fn field_check_names_the_fault() {
    let rho = [0.5; 6];
    assert_eq!(field([1, 2, 3], 1.0, &rho).check(), Ok(()));
    assert!(matches!(
        field([0, 2, 3], 1.0, &rho).check(),
        Err(FieldError::Empty { .. })
    ));
    assert!(matches!(
        field([2, 2, 2], 1.0, &rho).check(),
        Err(FieldError::Length {
            want: 8,
            got: 6,
            ..
        })
    ));
    assert!(matches!(
        field([usize::MAX, 2, 3], 1.0, &rho).check(),
        Err(FieldError::TooLarge { .. })
    ));
    for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            field([1, 2, 3], h, &rho).check(),
            Err(FieldError::ElementSize(_))
        ));
    }
}
