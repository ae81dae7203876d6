//! Boundary conditions and absent cells through the CLI: either face may be
//! adiabatic while the other removes heat; `field.npy` has no temperature
//! where there is no material.

use crate::util::cli::*;

/// A stack cooled from below needs no dummy `h_top`; one cooled nowhere is
/// refused, naming `boundary`.
#[test]
fn an_adiabatic_top_is_allowed_when_the_bottom_cools() {
    let tmp = tempfile::tempdir().unwrap();
    let power = "power = { type = \"uniform\", total = 0.5 }\n";
    for (i, boundary) in ["h_bottom = 1e4", "h_top = 0\nh_bottom = 1e4"]
        .iter()
        .enumerate()
    {
        let body = die(power).replace("h_top = 1e4", boundary);
        let stack = write(tmp.path(), &format!("b{i}.toml"), &body);
        let out = tmp.path().join(format!("o{i}"));
        ok(&cuth(&[
            "solve",
            s(&stack),
            "--out",
            s(&out),
            "--device",
            "cpu",
            "-q",
        ]));
        assert!(out.join("summary.json").is_file());
    }
    for boundary in ["h_top = 0", "h_top = 0\nh_bottom = 0"] {
        let body = die(power).replace("h_top = 1e4", boundary);
        let stack = write(tmp.path(), "none.toml", &body);
        let out = tmp.path().join("none");
        input_error(
            &["solve", s(&stack), "--out", s(&out), "--device", "cpu"],
            &out,
            &["none.toml", "boundary", "no face removes heat"],
        );
    }
}

/// Cells outside a `fill = "none"` outline are NaN in `field.npy`, as in
/// `field.vtr` and the maps; the present cells hold temperatures.
#[test]
fn field_npy_writes_absent_cells_as_nan() {
    let tmp = tempfile::tempdir().unwrap();
    // A 2 mm die on an 8 x 8 grid, a 1 x 1 mm cap over its centre: 4 x 4
    // present cells in the cap's plane, 48 absent.
    let body = die("power = { type = \"uniform\", total = 0.5 }\n\
         [[layers]]\nname = \"cap\"\nmaterial = \"si\"\nthickness = 1e-4\n\
         outline = { x = \"0.5 mm\", y = \"0.5 mm\", width = \"1 mm\", length = \"1 mm\" }\n\
         fill = \"none\"\n");
    let stack = write(tmp.path(), "cap.toml", &body);
    let out = tmp.path().join("o");
    ok(&cuth(&[
        "solve",
        s(&stack),
        "--out",
        s(&out),
        "--npy",
        "f64",
        "--device",
        "cpu",
        "-q",
    ]));
    let bytes = std::fs::read(out.join("field.npy")).unwrap();
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let v: Vec<f64> = bytes[10 + len..]
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(v.len(), 2 * 64);
    let (die_plane, cap_plane) = v.split_at(64);
    assert!(die_plane.iter().all(|t| t.is_finite()));
    assert_eq!(cap_plane.iter().filter(|t| t.is_nan()).count(), 48);
    assert!(cap_plane
        .iter()
        .filter(|t| !t.is_nan())
        .all(|&t| t > 20.0 && t < 200.0));
}
