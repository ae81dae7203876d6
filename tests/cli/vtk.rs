//! `--vtk` on `solve` (`field.vtr`) and `transient` (one
//! `.vtr` per snapshot plus `field.pvd`). The XML is parsed back with
//! quick-xml, the appended arrays are decoded at their offsets, and their
//! contents are checked against independent sources: the layer map CSVs of
//! the same run, the stack's powers and conductivities, the layer
//! thicknesses for the z coordinates.

use crate::util::cli::{cuth, err, s, write};
use quick_xml::events::Event;
use std::collections::BTreeMap;
use std::path::Path;

/// An element's name and attributes.
type Elements = Vec<(String, BTreeMap<String, String>)>;

/// Two layers of different thickness (one split in 3 z cells), 6 x 4 cells
/// on 3 x 2 mm, 1.5 W uniform in the die.
const STACK: &str = "[chip]\nwidth = \"3 mm\"\nlength = \"2 mm\"\n[grid]\nnx = 6\nny = 4\n\
    [boundary]\nambient = 300\nh_top = 1e4\n[materials.si]\nk = 130\nheat_capacity = 1.6e6\n\
    [materials.tim]\nkx = 2\nky = 3\nkz = 4\nheat_capacity = 2e6\n\
    [[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = \"150 um\"\ncells = 3\n\
    [layers.power]\ntype = \"uniform\"\ntotal = 1.5\n\
    [[layers]]\nname = \"tim\"\nmaterial = \"tim\"\nthickness = \"20 um\"\n";

/// Every element of the XML header (before `_`), with its attributes.
fn elements(header: &str) -> Elements {
    parse(&format!("{header}</AppendedData></VTKFile>"))
}

/// Every element of a whole XML document, with its attributes.
fn parse(xml: &str) -> Elements {
    let mut r = quick_xml::Reader::from_str(xml);
    let mut out = Vec::new();
    loop {
        match r.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => {
                let name = e.name().as_ref().to_string();
                let attrs = e
                    .attributes()
                    .map(|a| {
                        let a = a.unwrap();
                        (a.key.as_ref().to_string(), a.value.to_string())
                    })
                    .collect();
                out.push((name, attrs));
            }
            Event::Eof => break,
            _ => {}
        }
    }
    out
}

/// Header elements and the named arrays decoded from the appended block.
fn read_vtr(p: &Path) -> (Elements, BTreeMap<String, Vec<f64>>) {
    let bytes = std::fs::read(p).unwrap();
    let marker = b"<AppendedData encoding=\"raw\">";
    let at = bytes
        .windows(marker.len())
        .position(|w| w == marker)
        .unwrap();
    let us = at + bytes[at..].iter().position(|&b| b == b'_').unwrap();
    let header = std::str::from_utf8(&bytes[..us]).unwrap();
    let els = elements(header);
    let mut arrays = BTreeMap::new();
    let mut end = 0;
    for (name, a) in &els {
        if name != "DataArray" {
            continue;
        }
        assert_eq!(a["type"], "Float64");
        assert_eq!(a["format"], "appended");
        let off: usize = a["offset"].parse().unwrap();
        let body = &bytes[us + 1 + off..];
        let count = u64::from_le_bytes(body[..8].try_into().unwrap()) as usize;
        let v: Vec<f64> = body[8..8 + count]
            .chunks_exact(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        end = end.max(us + 1 + off + 8 + count);
        arrays.insert(a["Name"].clone(), v);
    }
    assert_eq!(&bytes[end..], b"\n  </AppendedData>\n</VTKFile>\n");
    (els, arrays)
}

fn attr<'a>(els: &'a [(String, BTreeMap<String, String>)], el: &str, key: &str) -> &'a str {
    &els.iter().find(|(n, _)| n == el).unwrap().1[key]
}

#[test]
fn solve_vtk_writes_a_rectilinear_grid_with_true_z() {
    let tmp = tempfile::tempdir().unwrap();
    let st = write(tmp.path(), "v.toml", STACK);
    let out = tmp.path().join("out");
    let o = cuth(&[
        "solve",
        s(&st),
        "--out",
        s(&out),
        "--device",
        "cpu",
        "--quiet",
        "--vtk",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let (els, a) = read_vtr(&out.join("field.vtr"));
    assert_eq!(attr(&els, "VTKFile", "type"), "RectilinearGrid");
    assert_eq!(attr(&els, "RectilinearGrid", "WholeExtent"), "0 6 0 4 0 4");
    assert_eq!(attr(&els, "Piece", "Extent"), "0 6 0 4 0 4");
    assert_eq!(attr(&els, "CellData", "Scalars"), "temperature_C");
    let n = 6 * 4 * 4;
    assert_eq!(a["temperature_C"].len(), n);
    assert_eq!(a["power_density"].len(), n);
    assert_eq!(a["conductivity"].len(), 3 * n);
    // Coordinates: uniform x, y; z at the true cell faces (50 µm die cells, 20 µm tim).
    let close = |u: &[f64], v: &[f64]| {
        u.len() == v.len() && u.iter().zip(v).all(|(a, b)| (a - b).abs() < 1e-15)
    };
    assert!(
        close(&a["x"], &[0.0, 0.5e-3, 1e-3, 1.5e-3, 2e-3, 2.5e-3, 3e-3]),
        "{:?}",
        a["x"]
    );
    assert!(close(&a["y"], &[0.0, 0.5e-3, 1e-3, 1.5e-3, 2e-3]));
    assert!(
        close(&a["z"], &[0.0, 50e-6, 100e-6, 150e-6, 170e-6]),
        "{:?}",
        a["z"]
    );
    // Temperature of the tim layer (one z cell) equals its map CSV (first row = max y).
    let map = std::fs::read_to_string(out.join("01_tim.csv")).unwrap();
    for (r, line) in map.lines().filter(|l| !l.starts_with('#')).enumerate() {
        for (x, v) in line.split(',').enumerate() {
            let y = 3 - r;
            let t = a["temperature_C"][x + 6 * (y + 4 * 3)];
            assert!((t - v.parse::<f64>().unwrap()).abs() < 1e-6, "({x},{y})");
        }
    }
    // Power density integrates to the stack's 1.5 W, all in the die.
    let cell_v = |z: usize| 0.5e-3 * 0.5e-3 * if z < 3 { 50e-6 } else { 20e-6 };
    let total: f64 = a["power_density"]
        .iter()
        .enumerate()
        .map(|(i, q)| q * cell_v(i / 24))
        .sum();
    assert!((total - 1.5).abs() < 1e-12, "{total}");
    assert!(a["power_density"][3 * 24..].iter().all(|&q| q == 0.0));
    // Conductivity: (130, 130, 130) in the die, (2, 3, 4) in the tim.
    assert_eq!(&a["conductivity"][..3], &[130.0, 130.0, 130.0]);
    assert_eq!(
        &a["conductivity"][3 * (3 * 24)..3 * (3 * 24) + 3],
        &[2.0, 3.0, 4.0]
    );
}

#[test]
fn transient_vtk_writes_snapshots_and_a_pvd_collection() {
    let tmp = tempfile::tempdir().unwrap();
    let st = write(tmp.path(), "v.toml", STACK);
    let out = tmp.path().join("out");
    let o = cuth(&[
        "transient",
        s(&st),
        "--out",
        s(&out),
        "--device",
        "cpu",
        "--quiet",
        "--vtk",
        "--dt",
        "0.01",
        "--steps",
        "4",
        "--snapshot-every",
        "2",
        "--kelvin",
    ]);
    assert!(o.status.success(), "{}", err(&o));
    let pvd = std::fs::read_to_string(out.join("field.pvd")).unwrap();
    let els = parse(&pvd);
    assert_eq!(attr(&els, "VTKFile", "type"), "Collection");
    let sets: Vec<_> = els
        .iter()
        .filter(|(n, _)| n == "DataSet")
        .map(|(_, a)| a)
        .collect();
    assert_eq!(sets.len(), 2);
    assert_eq!(sets[0]["timestep"], "0.02");
    assert_eq!(sets[1]["timestep"], "0.04");
    let mut last = Vec::new();
    for s in &sets {
        let (els, a) = read_vtr(&out.join(&s["file"]));
        assert_eq!(attr(&els, "RectilinearGrid", "WholeExtent"), "0 6 0 4 0 4");
        last = a["temperature_K"].clone();
    }
    // The last snapshot is the final field.
    let (_, fin) = read_vtr(&out.join("final").join("field.vtr"));
    assert_eq!(fin["temperature_K"], last);
    assert!(last.iter().all(|&t| t > 300.0));
}

#[test]
fn topopt_vti_goes_through_the_same_writer() {
    use cuth::output::vtk::{vtk_xml, CellArray, Geometry};
    let rho = [0.25, 0.5, 1.0, 1e-300];
    let bytes = vtk_xml(
        &Geometry::Image {
            cells: [2, 2, 1],
            spacing: [1e-3; 3],
        },
        &[CellArray {
            name: "density",
            components: 1,
            values: &rho,
        }],
    );
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("d.vti");
    std::fs::write(&p, &bytes).unwrap();
    let (els, a) = read_vtr(&p);
    assert_eq!(attr(&els, "VTKFile", "type"), "ImageData");
    assert_eq!(attr(&els, "ImageData", "WholeExtent"), "0 2 0 2 0 1");
    assert_eq!(attr(&els, "ImageData", "Spacing"), "0.001 0.001 0.001");
    assert_eq!(a["density"], rho);
}
