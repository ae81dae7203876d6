//! Topology-optimization problem files through the CLI: problems whose
//! stiffness matrix would be singular or whose numbers would overflow are
//! input errors (exit 2), refused before the first solve.

use crate::util::cli::*;

fn problem(support: &str, force: &str) -> String {
    format!(
        "domain = [2.0, 1.0, 1.0]\nmesh = [8, 4, 4]\nvolfrac = 0.3\n\
         [[support]]\nwhere = \"{support}\"\nfix = [\"x\", \"y\", \"z\"]\n\
         [[load]]\npoint = [2.0, 0.5, 0.5]\nforce = {force}\n"
    )
}

/// Supports on one edge leave a rotation about it; a force of 1e308 would
/// overflow the compliance. Neither reaches the solver.
#[test]
fn rotating_supports_and_huge_forces_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for (name, body, needle) in [
        (
            "edge.toml",
            problem("x0,y0", "[0.0, -1.0, 0.0]"),
            "the supports leave a rigid-body motion free",
        ),
        (
            "huge.toml",
            problem("x0", "[0.0, -1.0, -1e308]"),
            "out of range",
        ),
    ] {
        let file = write(tmp.path(), name, &body);
        let out = tmp.path().join("o");
        let o = cuth(&[
            "topopt",
            s(&file),
            "--iterations",
            "2",
            "--device",
            "cpu",
            "--out",
            s(&out),
        ]);
        fails_with(&o, 2, &[name, needle]);
        assert!(!err(&o).contains("CUDA"), "{}", err(&o));
        assert!(!out.exists());
    }
}
