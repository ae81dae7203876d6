//! Custom problems from a TOML file (example: `configs/topopt/bracket.toml`).
//!
//! ```toml
//! name = "bracket"            # optional, default: the file stem
//! domain = [2.0, 1.0, 0.5]    # box lx × ly × lz (domain units)
//! mesh = [48, 24, 12]         # elements per axis; must give cubic elements
//! volfrac = 0.3               # in (0, 1)
//! rmin = 1.5                  # filter radius in elements (default 1.5)
//! penal = 3.0                 # final SIMP penalty (default 3)
//! nu = 0.3                    # Poisson's ratio (default 0.3)
//!
//! [[support]]                 # at least one
//! where = "x0"                # face x0 x1 y0 y1 z0 z1, edge "x1,y0", corner "x0,y0,z0"
//! fix = ["x", "y", "z"]       # the displacement components held at zero
//!
//! [[load]]                    # at least one; `force` is the TOTAL force,
//! point = [2.0, 0.5, 0.25]    # spread over the selection by tributary measure
//! force = [0.0, -1.0, 0.0]
//!
//! [[passive]]                 # optional
//! min = [0.0, 0.0, 0.0]
//! max = [0.2, 1.0, 0.5]
//! kind = "solid"              # or "void"
//! ```
//!
//! A support or load selects nodes with exactly one of `where` (a face, an
//! edge or a corner, as comma-separated faces), `point` (the nearest node) or
//! `box = { min = [..], max = [..] }` (an axis with min = max is a plane; see
//! [`super::problem::Region`]). Unknown keys, empty selections, supports
//! that leave a rigid-body motion free and out-of-range numbers are errors
//! naming the file and the field.

use super::mesh::Mesh;
use super::presets::MeshRequest;
use super::problem::{check_mesh_size, Passive, Problem, ProblemError, Region};
use serde::Deserialize;
use std::path::Path;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    name: Option<String>,
    domain: [f64; 3],
    mesh: [usize; 3],
    volfrac: f64,
    rmin: Option<f64>,
    penal: Option<f64>,
    nu: Option<f64>,
    #[serde(default)]
    support: Vec<Support>,
    #[serde(default)]
    load: Vec<Load>,
    #[serde(default)]
    passive: Vec<PassiveBox>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Support {
    #[serde(rename = "where")]
    on: Option<String>,
    point: Option<[f64; 3]>,
    #[serde(rename = "box")]
    region: Option<BoxSel>,
    fix: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Load {
    #[serde(rename = "where")]
    on: Option<String>,
    point: Option<[f64; 3]>,
    #[serde(rename = "box")]
    region: Option<BoxSel>,
    force: [f64; 3],
}

/// The three ways to select nodes, borrowed from a support or a load.
struct Selector<'a> {
    on: &'a Option<String>,
    point: &'a Option<[f64; 3]>,
    region: &'a Option<BoxSel>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BoxSel {
    min: [f64; 3],
    max: [f64; 3],
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PassiveBox {
    min: [f64; 3],
    max: [f64; 3],
    kind: Passive,
}

/// Reads and checks `path`; `mesh` overrides the file's mesh (the aspect
/// ratio kept as for presets).
pub fn load(path: &Path, mesh: &MeshRequest) -> Result<Problem, ProblemError> {
    let origin = path.display().to_string();
    let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|e| {
        ProblemError::File {
            origin: origin.clone(),
            message: format!("cannot read: {e}"),
        }
    })?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
    from_toml(&text, &origin, stem.as_deref().unwrap_or("custom"), mesh)
}

/// [`load`] from text; `origin` names the file in errors.
pub fn from_toml(
    text: &str,
    origin: &str,
    stem: &str,
    req: &MeshRequest,
) -> Result<Problem, ProblemError> {
    let f: File = toml::from_str(text).map_err(|e| ProblemError::File {
        origin: origin.into(),
        message: e.to_string().trim_end().to_string(),
    })?;
    let err = |field: &str, m: String| ProblemError::new(origin, field, m);
    if f.domain.iter().any(|&l| !(l > 0.0 && l.is_finite())) {
        return Err(err(
            "domain",
            format!("lengths must be > 0, got {:?}", f.domain),
        ));
    }
    if f.mesh.contains(&0) {
        return Err(err(
            "mesh",
            format!("element counts must be ≥ 1, got {:?}", f.mesh),
        ));
    }
    let h = f.domain[0] / f.mesh[0] as f64;
    for a in 1..3 {
        let ha = f.domain[a] / f.mesh[a] as f64;
        if (ha - h).abs() > 1e-6 * h {
            return Err(err(
                "mesh",
                format!(
                    "elements must be cubes: domain / mesh is {h} along x but {ha} along {}",
                    ["x", "y", "z"][a]
                ),
            ));
        }
    }
    let (mesh, h) = if [req.nelx, req.nely, req.nelz].iter().any(Option::is_some) {
        req.resolve(f.domain, f.mesh)
    } else {
        (Mesh::new(f.mesh[0], f.mesh[1], f.mesh[2]), h)
    };
    check_mesh_size([mesh.nelx, mesh.nely, mesh.nelz]).map_err(|e| err("mesh", e))?;
    let mut p = Problem::new(f.name.as_deref().unwrap_or(stem), mesh, h);
    p.volfrac = f.volfrac;
    p.rmin = f.rmin.unwrap_or(p.rmin);
    p.penal = f.penal.unwrap_or(p.penal);
    p.nu = f.nu.unwrap_or(p.nu);
    if f.support.is_empty() {
        return Err(err(
            "support",
            "no [[support]]: the structure is free and the stiffness matrix singular".into(),
        ));
    }
    if f.load.is_empty() {
        return Err(err("load", "no [[load]]".into()));
    }
    for (i, s) in f.support.iter().enumerate() {
        let field = format!("support[{i}]");
        let at = Selector {
            on: &s.on,
            point: &s.point,
            region: &s.region,
        };
        let region = selection(&p, &at, origin, &field)?;
        let mut dirs = [false; 3];
        for d in &s.fix {
            let c = ["x", "y", "z"]
                .iter()
                .position(|a| a == d)
                .ok_or_else(|| err(&format!("{field}.fix"), format!("`{d}` is not x, y or z")))?;
            dirs[c] = true;
        }
        if dirs == [false; 3] {
            return Err(err(&format!("{field}.fix"), "fixes nothing".into()));
        }
        if p.fix(&region, dirs) == 0 {
            return Err(err(&field, "selects no node (outside the domain?)".into()));
        }
    }
    for (i, l) in f.load.iter().enumerate() {
        let field = format!("load[{i}]");
        if l.force.iter().any(|v| !v.is_finite()) || l.force == [0.0; 3] {
            return Err(err(
                &format!("{field}.force"),
                format!("must be finite and non-zero, got {:?}", l.force),
            ));
        }
        let at = Selector {
            on: &l.on,
            point: &l.point,
            region: &l.region,
        };
        let region = selection(&p, &at, origin, &field)?;
        if p.add_force(&region, l.force) == 0 {
            return Err(err(&field, "selects no node (outside the domain?)".into()));
        }
    }
    for (i, b) in f.passive.iter().enumerate() {
        let field = format!("passive[{i}]");
        if (0..3).any(|a| b.min[a] > b.max[a]) {
            return Err(err(&field, "min exceeds max".into()));
        }
        if b.kind == Passive::Design {
            return Err(err(
                &format!("{field}.kind"),
                "must be solid or void".into(),
            ));
        }
        if p.set_passive(b.min, b.max, b.kind) == 0 {
            return Err(err(&field, "contains no element centre".into()));
        }
    }
    p.description = format!(
        "custom: {} support(s), {} load(s), {} passive box(es)",
        f.support.len(),
        f.load.len(),
        f.passive.len()
    );
    p.validate(origin)?;
    Ok(p)
}

/// The region a selector names, in the domain of `p`.
fn selection(p: &Problem, s: &Selector, origin: &str, field: &str) -> Result<Region, ProblemError> {
    let err = |m: String| ProblemError::new(origin, field, m);
    let l = p.extent();
    match (s.on, s.point, s.region) {
        (Some(w), None, None) => {
            let mut r = Region {
                lo: [0.0; 3],
                hi: l,
            };
            let mut seen = [false; 3];
            for face in w.split(',').map(str::trim) {
                let bad = || {
                    err(format!(
                        "`{face}` in where = \"{w}\" is not x0 x1 y0 y1 z0 z1"
                    ))
                };
                let mut ch = face.chars();
                let a = match ch.next() {
                    Some('x') => 0,
                    Some('y') => 1,
                    Some('z') => 2,
                    _ => return Err(bad()),
                };
                let at = match ch.as_str() {
                    "0" => 0.0,
                    "1" => l[a],
                    _ => return Err(bad()),
                };
                if seen[a] {
                    return Err(err(format!("where = \"{w}\" names axis {face} twice")));
                }
                seen[a] = true;
                r.lo[a] = at;
                r.hi[a] = at;
            }
            Ok(r)
        }
        (None, Some(pt), None) => {
            if let Some(v) = pt.iter().find(|v| !v.is_finite()) {
                return Err(err(format!("point: {v} is not a finite coordinate")));
            }
            Ok(Region::point(*pt))
        }
        (None, None, Some(b)) => {
            if let Some(v) = b.min.iter().chain(&b.max).find(|v| !v.is_finite()) {
                return Err(err(format!("box: {v} is not a finite coordinate")));
            }
            if (0..3).any(|a| b.min[a] > b.max[a]) {
                return Err(err("box: min exceeds max".into()));
            }
            Ok(Region {
                lo: b.min,
                hi: b.max,
            })
        }
        _ => Err(err("needs exactly one of `where`, `point` or `box`".into())),
    }
}
