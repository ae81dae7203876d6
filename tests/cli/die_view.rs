//! Packages whose dies are smaller than the domain (HotSpot's ev6 on its
//! 60 mm sink, the 2.5D example): the hottest cell is given in the frame of
//! the die that holds it as well as in the domain's, and every layer with
//! dies gets a die view beside its full map.

use crate::util::cli::{cuth, ok, s};
use std::path::Path;

fn solve(cfg: &str, out: &Path) -> String {
    let o = cuth(&[
        "solve",
        cfg,
        "--grid",
        "64x64",
        "--device",
        "cpu",
        "--out",
        s(out),
    ]);
    ok(&o);
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn ev6_reports_the_die_frame_and_draws_each_die() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("ev6");
    let table = solve("configs/hotspot_ev6_3d_imported.toml", &out);
    // The dies sit at (23.8 mm, 23.62 mm) of the sink, as the stack says.
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let h = &j["hottest"];
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    assert!(
        (f(&h["x_m"]) - f(&h["die"]["x_m"]) - 0.0238).abs() < 1e-12,
        "{h}"
    );
    assert!(
        (f(&h["y_m"]) - f(&h["die"]["y_m"]) - 0.02362).abs() < 1e-12,
        "{h}"
    );
    assert_eq!(h["die"]["name"], h["layer"]);
    let (dx, dy) = (f(&h["die"]["x_m"]) * 1e3, f(&h["die"]["y_m"]) * 1e3);
    assert!(
        (0.0..=12.4).contains(&dx) && (0.0..=12.76).contains(&dy),
        "{h}"
    );
    // The table gives both frames.
    let line = table.lines().find(|l| l.starts_with("hottest")).unwrap();
    assert!(
        line.contains(&format!("on die {}", h["layer"].as_str().unwrap())),
        "{line}"
    );
    assert!(line.contains("in the domain"), "{line}");
    // Die views for the six chip layers, none for the spreader and sink
    // (no dies); each a picture of its own.
    let mut views: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("_die.png"))
        .collect();
    views.sort();
    let want: Vec<String> = (0..6)
        .map(|l| format!("{l:02}_layer_{l}_die.png"))
        .collect();
    assert_eq!(views, want);
    for v in &views {
        let die = image::open(out.join(v)).expect("die view decodes");
        let full = image::open(out.join(v.replace("_die", ""))).unwrap();
        assert_ne!(die.to_rgb8().into_raw(), full.to_rgb8().into_raw(), "{v}");
    }
}

#[test]
fn a_stack_without_dies_apart_from_its_domain_has_no_die_view_or_frame() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("mol");
    let table = solve("configs/mol_f2f.toml", &out);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(j["hottest"].get("die").is_none(), "{}", j["hottest"]);
    assert!(!table.contains("on die"), "{table}");
    let views = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with("_die.png")
        })
        .count();
    assert_eq!(views, 0);
}

/// `cuth serve`'s hottest point carries its die's frame too: the region
/// that holds it, at that region's origin.
#[test]
fn serve_gives_the_hottest_point_on_its_die() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let cfg = "configs/hbm_2p5d.toml";
    let mut child = Command::new(crate::util::cli::cuth_path())
        .args(["serve", cfg, "--grid", "48x48", "--device", "cpu"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"{\"op\":\"steady\"}\n{\"op\":\"hottest\"}\n")
        .unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let last: serde_json::Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let h = &last["hottest"];
    let name = h["die"]["name"].as_str().unwrap_or_else(|| panic!("{h}"));
    let st = cuth::stack::Stack::load(Path::new(cfg)).unwrap();
    let layer = st.layers.iter().find(|l| l.name == h["layer"]).unwrap();
    let region = layer.regions.iter().find(|r| r.name == name).unwrap();
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    assert!((f(&h["x_m"]) - f(&h["die"]["x_m"]) - region.origin.0).abs() < 1e-12);
    assert!((f(&h["y_m"]) - f(&h["die"]["y_m"]) - region.origin.1).abs() < 1e-12);
    let r = region.rect;
    assert!(r.x0 <= f(&h["x_m"]) && f(&h["x_m"]) <= r.x1, "{h}");
}

/// Several dies in one layer (the 2.5D example's logic die and HBM stacks):
/// one die view over all of them, and each probe in its die's frame.
#[test]
fn chiplets_share_one_die_view_and_probes_name_their_die() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("hbm");
    let cfg = "configs/hbm_2p5d.toml";
    let table = solve(cfg, &out);
    let views: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("_die.png"))
        .collect();
    assert_eq!(views, ["04_dies_die.png"]);
    let st = cuth::stack::Stack::load(Path::new(cfg)).unwrap();
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let probes = j["probes"].as_array().unwrap();
    assert!(!probes.is_empty());
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    for p in probes {
        let name = p["die"]["name"].as_str().unwrap_or_else(|| panic!("{p}"));
        let layer = st.layers.iter().find(|l| l.name == p["layer"]).unwrap();
        let region = layer.regions.iter().find(|r| r.name == name).unwrap();
        assert!((f(&p["x_m"]) - f(&p["die"]["x_m"]) - region.origin.0).abs() < 1e-12);
        assert!((f(&p["y_m"]) - f(&p["die"]["y_m"]) - region.origin.1).abs() < 1e-12);
        assert!(table.contains(&format!("(die {name}: x ")), "{table}");
    }
}
