//! Stacks whose outlines leave slivers or cut the heat path: HotSpot's ev6
//! import with a spreader outline 30 nm wide (the dies then rest on no
//! spreader at all) is refused before the solve, naming the outline, instead
//! of a PCG breakdown; probes on cell faces read the cell above.

use crate::util::cli::*;

#[test]
fn a_spreader_outline_that_misses_the_dies_is_refused_before_the_solve() {
    let tmp = tempfile::tempdir().unwrap();
    let toml = tmp.path().join("ev6.toml");
    ok(&import_ev6(&toml));
    let text = std::fs::read_to_string(&toml).unwrap();
    let spreader = "outline = { x = 0.015, y = 0.015, width = 0.03, length = 0.03 }";
    assert!(text.contains(spreader), "{text}");
    let sliver = text.replace(
        spreader,
        "outline = { x = 0.015, y = 0.015, width = 3e-8, length = 0.03 }",
    );
    std::fs::write(&toml, sliver).unwrap();
    let out = tmp.path().join("out");
    let o = cuth(&["solve", s(&toml), "--device", "cpu", "--out", s(&out)]);
    fails_with(
        &o,
        2,
        &["no path to ambient", "layers[6] (spreader).outline"],
    );
    assert!(!out.exists(), "nothing written");
}
