//! The benchmark problems of the paper. Coordinates are in
//! domain units; x is the long axis, y is "up" (loads act in −y), z is the
//! depth. All loads total 1 (force) or 1 (torque). ν = 0.3, E0 = 1.
//!
//! | preset       | domain      | default mesh | Vf   | supports                                   | load |
//! |--------------|-------------|--------------|------|--------------------------------------------|------|
//! | `cantilever` | 2 × 1 × 0.5 | 96 × 48 × 24 | 0.30 | face x = 0 clamped (u = 0)                 | F = (0, −1, 0) at the free-end centre (2, 0.5, 0.25): `patch` (default) spreads it over 0.1 × 0.1 (y × z) by tributary area, `point` puts it on the nearest node |
//! | `torsion`    | 3 × 1 × 1   | 165 × 55 × 55| 0.25 | face x = 0 clamped                          | unit torque about the bar axis (y, z) = (0.5, 0.5) at x = 3: tangential forces on the end face's perimeter nodes, f ∝ w·(0, −(z − zc), y − yc), w the tributary length; zero net force |
//! | `mbb`        | 3 × 1 × 0.5 | 150 × 50 × 25| 0.30 | half beam: symmetry u_x = 0 on x = 0; roller u_y = u_z = 0 along the edge (x = 3, y = 0) | F = (0, −1, 0) as a line load along z at (x = 0, y = 1) |
//! | `bridge`     | 3 × 1 × 0.5 | 150 × 50 × 25| 0.30 | edge (x = 0, y = 0) pinned (u = 0); edge (x = 3, y = 0) roller (u_y = u_z = 0) | F = (0, −1, 0) spread over the top face y = 1 (the deck) |
//!
//! Filter radius 1.5 elements for all. The roller edges also hold u_z so the
//! z translation is not free (the problems have no z support otherwise).
//!
//! Mesh options: all three given → used as given (the domain becomes
//! nel · h with h = lx / nelx, positions stay at the same fractions). Some
//! given → h from the first given (x, y, z order), the others keep the
//! preset's aspect ratio (rounded, at least 1).

use super::mesh::Mesh;
use super::problem::{check_mesh_size, Problem, ProblemError, Region};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LoadKind {
    /// On the node nearest the load point.
    Point,
    /// Spread over a 0.1 × 0.1 patch around it (the revised code's choice).
    Patch,
}

pub const PRESETS: [&str; 4] = ["cantilever", "torsion", "mbb", "bridge"];

/// Optional overrides of the default mesh.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeshRequest {
    pub nelx: Option<usize>,
    pub nely: Option<usize>,
    pub nelz: Option<usize>,
}

impl MeshRequest {
    /// The mesh and element size for a domain `l` meshed by default as `dflt`.
    pub fn resolve(&self, l: [f64; 3], dflt: [usize; 3]) -> (Mesh, f64) {
        let given = [self.nelx, self.nely, self.nelz];
        let (h, nel) = match given.iter().position(Option::is_some) {
            None => (l[0] / dflt[0] as f64, dflt),
            Some(a) => {
                let h = l[a] / given[a].unwrap_or(1) as f64;
                let nel = std::array::from_fn(|b| {
                    given[b].unwrap_or_else(|| ((l[b] / h).round() as usize).max(1))
                });
                (h, nel)
            }
        };
        (Mesh::new(nel[0], nel[1], nel[2]), h)
    }
}

/// Builds preset `name`; an unknown name is an error listing the presets.
pub fn build(name: &str, mesh: &MeshRequest, load: LoadKind) -> Result<Problem, ProblemError> {
    let origin = format!("preset {name}");
    if [mesh.nelx, mesh.nely, mesh.nelz].contains(&Some(0)) {
        return Err(ProblemError::new(
            &origin,
            "nel",
            "element counts must be ≥ 1",
        ));
    }
    if PRESETS.contains(&name) {
        let (l, dflt) = geometry(name);
        let (m, _) = mesh.resolve(l, dflt);
        check_mesh_size([m.nelx, m.nely, m.nelz])
            .map_err(|e| ProblemError::new(&origin, "nel", e))?;
    }
    let p = match name {
        "cantilever" => cantilever(mesh, load),
        "torsion" => torsion(mesh),
        "mbb" => mbb(mesh),
        "bridge" => bridge(mesh),
        _ => {
            return Err(ProblemError::new(
                "command line",
                "PROBLEM",
                format!(
                    "`{name}` is neither a preset ({}) nor a .toml file",
                    PRESETS.join(", ")
                ),
            ))
        }
    };
    p.validate(&origin)?;
    Ok(p)
}

/// Domain and default mesh of each preset.
fn geometry(name: &str) -> ([f64; 3], [usize; 3]) {
    match name {
        "cantilever" => ([2.0, 1.0, 0.5], [96, 48, 24]),
        "torsion" => ([3.0, 1.0, 1.0], [165, 55, 55]),
        _ => ([3.0, 1.0, 0.5], [150, 50, 25]), // mbb, bridge
    }
}

fn face_x(p: &Problem, x: f64) -> Region {
    let [_, ly, lz] = p.extent();
    Region {
        lo: [x, 0.0, 0.0],
        hi: [x, ly, lz],
    }
}

/// The line along z at (x, y).
fn edge_z(p: &Problem, x: f64, y: f64) -> Region {
    let [_, _, lz] = p.extent();
    Region {
        lo: [x, y, 0.0],
        hi: [x, y, lz],
    }
}

fn cantilever(req: &MeshRequest, load: LoadKind) -> Problem {
    let (l, dflt) = geometry("cantilever");
    let (mesh, h) = req.resolve(l, dflt);
    let mut p = Problem::new("cantilever", mesh, h);
    let [lx, ly, lz] = p.extent();
    p.fix(&face_x(&p, 0.0), [true; 3]);
    let c = [lx, 0.5 * ly, 0.5 * lz];
    let r = match load {
        LoadKind::Point => Region::point(c),
        LoadKind::Patch => Region {
            lo: [lx, c[1] - 0.05, c[2] - 0.05],
            hi: [lx, c[1] + 0.05, c[2] + 0.05],
        },
    };
    p.add_force(&r, [0.0, -1.0, 0.0]);
    p.volfrac = 0.3;
    p.description = format!(
        "x=0 clamped; F=(0,-1,0) at ({lx}, {}, {}) as a {} load",
        c[1],
        c[2],
        match load {
            LoadKind::Point => "point",
            LoadKind::Patch => "0.1x0.1 patch",
        }
    );
    p
}

fn torsion(req: &MeshRequest) -> Problem {
    let (l, dflt) = geometry("torsion");
    let (mesh, h) = req.resolve(l, dflt);
    let mut p = Problem::new("torsion", mesh, h);
    let [lx, ly, lz] = p.extent();
    p.fix(&face_x(&p, 0.0), [true; 3]);
    let (yc, zc) = (0.5 * ly, 0.5 * lz);
    // Perimeter of the end face with tributary lengths (corners: h/2 from
    // each of their two edges).
    let mut rim: Vec<(usize, f64)> = Vec::new();
    for r in [
        Region {
            lo: [lx, 0.0, 0.0],
            hi: [lx, ly, 0.0],
        },
        Region {
            lo: [lx, 0.0, lz],
            hi: [lx, ly, lz],
        },
        Region {
            lo: [lx, 0.0, 0.0],
            hi: [lx, 0.0, lz],
        },
        Region {
            lo: [lx, ly, 0.0],
            hi: [lx, ly, lz],
        },
    ] {
        rim.extend(p.region_nodes(&r));
    }
    let arm = |n: usize| {
        let [_, j, k] = p.mesh.node_coords(n);
        (j as f64 * h - yc, k as f64 * h - zc)
    };
    // Torque of f = w·(0, −dz, dy) about x is w·(dy² + dz²); scale to 1.
    let torque: f64 = rim
        .iter()
        .map(|&(n, w)| {
            let (dy, dz) = arm(n);
            w * (dy * dy + dz * dz)
        })
        .sum();
    for &(n, w) in &rim {
        let (dy, dz) = arm(n);
        p.force[3 * n + 1] -= w * dz / torque;
        p.force[3 * n + 2] += w * dy / torque;
    }
    p.volfrac = 0.25;
    p.description = format!(
        "x=0 clamped; unit torque about x through (y,z)=({yc},{zc}) on the perimeter of x={lx}"
    );
    p
}

fn mbb(req: &MeshRequest) -> Problem {
    let (l, dflt) = geometry("mbb");
    let (mesh, h) = req.resolve(l, dflt);
    let mut p = Problem::new("mbb", mesh, h);
    let [lx, ly, _] = p.extent();
    p.fix(&face_x(&p, 0.0), [true, false, false]);
    p.fix(&edge_z(&p, lx, 0.0), [false, true, true]);
    p.add_force(&edge_z(&p, 0.0, ly), [0.0, -1.0, 0.0]);
    p.volfrac = 0.3;
    p.description = format!(
        "half MBB: u_x=0 on x=0; roller u_y=u_z=0 along (x={lx}, y=0); line load (0,-1,0) along (x=0, y={ly})"
    );
    p
}

fn bridge(req: &MeshRequest) -> Problem {
    let (l, dflt) = geometry("bridge");
    let (mesh, h) = req.resolve(l, dflt);
    let mut p = Problem::new("bridge", mesh, h);
    let [lx, ly, lz] = p.extent();
    p.fix(&edge_z(&p, 0.0, 0.0), [true; 3]);
    p.fix(&edge_z(&p, lx, 0.0), [false, true, true]);
    let deck = Region {
        lo: [0.0, ly, 0.0],
        hi: [lx, ly, lz],
    };
    p.add_force(&deck, [0.0, -1.0, 0.0]);
    p.volfrac = 0.3;
    p.description = format!(
        "pinned along (x=0, y=0), roller u_y=u_z=0 along (x={lx}, y=0); (0,-1,0) spread over the deck y={ly}"
    );
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_build_and_loads_total_one() {
        let req = MeshRequest {
            nelx: Some(12),
            ..Default::default()
        };
        for name in PRESETS {
            let p = build(name, &req, LoadKind::Patch).unwrap();
            assert_eq!(p.mesh.nelx, 12);
            let f: [f64; 3] =
                std::array::from_fn(|c| (0..p.mesh.nodes()).map(|n| p.force[3 * n + c]).sum());
            let want = if name == "torsion" { 0.0 } else { -1.0 };
            assert!((f[1] - want).abs() < 1e-12 && f[0].abs() < 1e-12 && f[2].abs() < 1e-12);
        }
        let c = build("cantilever", &req, LoadKind::Point).unwrap();
        assert_eq!((c.mesh.nely, c.mesh.nelz), (6, 3));
        assert!(build("nope", &req, LoadKind::Point).is_err());
        let huge = MeshRequest {
            nelx: Some(1 << 40),
            ..Default::default()
        };
        let e = build("torsion", &huge, LoadKind::Patch).unwrap_err();
        assert!(e.to_string().contains("too large"), "{e}");
    }

    #[test]
    fn torsion_load_is_a_unit_couple() {
        let req = MeshRequest {
            nelx: Some(9),
            ..Default::default()
        };
        let p = build("torsion", &req, LoadKind::Patch).unwrap();
        let [_, ly, lz] = p.extent();
        let mx: f64 = (0..p.mesh.nodes())
            .map(|n| {
                let [_, j, k] = p.mesh.node_coords(n);
                let (dy, dz) = (j as f64 * p.h - ly / 2.0, k as f64 * p.h - lz / 2.0);
                dy * p.force[3 * n + 2] - dz * p.force[3 * n + 1]
            })
            .sum();
        assert!((mx - 1.0).abs() < 1e-12, "{mx}");
    }
}
