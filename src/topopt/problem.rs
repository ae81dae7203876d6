//! A topology-optimization problem as the optimizer sees it: the design box
//! meshed with cubic elements, fixed DOFs, nodal forces, passive elements and
//! the optimization parameters. Presets ([`super::presets`]) and TOML files
//! ([`super::custom`]) both build one through [`Region`] selections, so the
//! two share one meaning of "a face", "an edge" and "a patch".
//!
//! Distributed loads are consistent for a uniform traction on bilinear faces:
//! each selected node receives the force in proportion to its tributary
//! measure (area on a face patch, length on an edge, 1 at a point), i.e. the
//! overlap of the node's cell `[tᵢ − h/2, tᵢ + h/2]` (clipped to the domain)
//! with the region, and the nodal forces sum exactly to the requested total.

use super::mesh::Mesh;

/// Void modulus relative to solid: keeps K positive definite where ρ = 0.
pub const E_MIN: f64 = 1e-9;
/// Solid modulus; compliances are in units of the unit-modulus element.
pub const E0: f64 = 1.0;

/// Bad problem definition (exit code 2): where it came from (file or preset),
/// which field, and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum ProblemError {
    #[error("{origin}: `{field}`: {message}")]
    Field {
        origin: String,
        field: String,
        message: String,
    },
    /// The file could not be read or is not valid TOML for the schema; the
    /// message names the key and line.
    #[error("{origin}: {message}")]
    File { origin: String, message: String },
}

impl ProblemError {
    pub fn new(origin: &str, field: &str, message: impl Into<String>) -> ProblemError {
        ProblemError::Field {
            origin: origin.into(),
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Whether the optimizer may change an element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Passive {
    /// Design variable.
    Design,
    /// Always ρ = 1.
    Solid,
    /// Always ρ = 0.
    Void,
}

/// An axis-aligned box in domain coordinates. An axis with `lo == hi` is a
/// plane: the node plane nearest to it is selected. Other axes select every
/// node whose cell overlaps `[lo, hi]`, weighted by the overlap length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Region {
    pub lo: [f64; 3],
    pub hi: [f64; 3],
}

impl Region {
    pub fn point(p: [f64; 3]) -> Region {
        Region { lo: p, hi: p }
    }
}

#[derive(Clone, Debug)]
pub struct Problem {
    /// Preset name or file stem, for the summary.
    pub name: String,
    pub mesh: Mesh,
    /// Element edge in domain units (elements are cubes).
    pub h: f64,
    pub nu: f64,
    pub volfrac: f64,
    /// Filter radius in elements.
    pub rmin: f64,
    /// Final SIMP penalty.
    pub penal: f64,
    /// `fixed[d]`: DOF d is held at zero displacement.
    pub fixed: Vec<bool>,
    /// Nodal forces, `3n + c`.
    pub force: Vec<f64>,
    pub passive: Vec<Passive>,
    /// One line on supports and loads, for the summary.
    pub description: String,
}

impl Problem {
    /// An unloaded, unsupported, all-design problem.
    pub fn new(name: &str, mesh: Mesh, h: f64) -> Problem {
        Problem {
            name: name.into(),
            mesh,
            h,
            nu: 0.3,
            volfrac: 0.3,
            rmin: 1.5,
            penal: 3.0,
            fixed: vec![false; mesh.dofs()],
            force: vec![0.0; mesh.dofs()],
            passive: vec![Passive::Design; mesh.elements()],
            description: String::new(),
        }
    }

    /// Domain extents (nel · h per axis).
    pub fn extent(&self) -> [f64; 3] {
        let m = self.mesh;
        [m.nelx, m.nely, m.nelz].map(|n| n as f64 * self.h)
    }

    /// Nodes of `r` with their tributary weights (see the module doc).
    pub fn region_nodes(&self, r: &Region) -> Vec<(usize, f64)> {
        let dims = self.mesh.node_dims();
        let per_axis: Vec<Vec<(usize, f64)>> = (0..3)
            .map(|a| axis_nodes(dims[a] - 1, self.h, r.lo[a], r.hi[a]))
            .collect();
        let mut out = Vec::new();
        for &(k, wz) in &per_axis[2] {
            for &(j, wy) in &per_axis[1] {
                for &(i, wx) in &per_axis[0] {
                    out.push((self.mesh.node(i, j, k), wx * wy * wz));
                }
            }
        }
        out
    }

    /// Holds the `dirs` components of every node of `r` at zero; returns how
    /// many nodes were selected.
    pub fn fix(&mut self, r: &Region, dirs: [bool; 3]) -> usize {
        let nodes = self.region_nodes(r);
        for &(n, _) in &nodes {
            for (c, &on) in dirs.iter().enumerate() {
                if on {
                    self.fixed[3 * n + c] = true;
                }
            }
        }
        nodes.len()
    }

    /// Spreads the force `total` over the nodes of `r` by tributary weight;
    /// returns how many nodes were selected (0: nothing applied).
    pub fn add_force(&mut self, r: &Region, total: [f64; 3]) -> usize {
        let nodes = self.region_nodes(r);
        let sum: f64 = nodes.iter().map(|&(_, w)| w).sum();
        if sum <= 0.0 {
            return 0;
        }
        for &(n, w) in &nodes {
            for (c, f) in total.iter().enumerate() {
                self.force[3 * n + c] += f * w / sum;
            }
        }
        nodes.len()
    }

    /// Marks the elements whose centres lie in `[lo, hi]` (domain units);
    /// returns how many.
    pub fn set_passive(&mut self, lo: [f64; 3], hi: [f64; 3], kind: Passive) -> usize {
        let mut count = 0;
        for e in 0..self.mesh.elements() {
            let c = self
                .mesh
                .element_coords(e)
                .map(|i| (i as f64 + 0.5) * self.h);
            if (0..3).all(|a| c[a] >= lo[a] && c[a] <= hi[a]) {
                self.passive[e] = kind;
                count += 1;
            }
        }
        count
    }

    /// Checks what would make the optimization meaningless or K singular:
    /// parameters out of range, no load, forces out of range, supports that
    /// leave a rigid motion free (a translation, or a rotation about a line
    /// of fixed nodes), more passive solid than the volume allows.
    pub fn validate(&self, origin: &str) -> Result<(), ProblemError> {
        let err = |f: &str, m: String| Err(ProblemError::new(origin, f, m));
        if !(self.volfrac > 0.0 && self.volfrac < 1.0) {
            return err(
                "volfrac",
                format!("must be in (0, 1), got {}", self.volfrac),
            );
        }
        if !(self.rmin > 0.0 && self.rmin <= 16.0) {
            return err(
                "rmin",
                format!("must be in (0, 16] elements, got {}", self.rmin),
            );
        }
        if !(self.penal >= 1.0 && self.penal <= 8.0) {
            return err("penal", format!("must be in [1, 8], got {}", self.penal));
        }
        if !(self.nu > -1.0 && self.nu < 0.5) {
            return err("nu", format!("must be in (−1, 0.5), got {}", self.nu));
        }
        for (c, axis) in ["x", "y", "z"].iter().enumerate() {
            if !(0..self.mesh.nodes()).any(|n| self.fixed[3 * n + c]) {
                return err(
                    "support",
                    format!(
                        "no node is fixed in {axis}: the structure can translate freely \
                         and the stiffness matrix is singular"
                    ),
                );
            }
        }
        if !rigid_motions_fixed(&self.mesh, &self.fixed) {
            return err(
                "support",
                "the supports leave a rigid-body motion free: the structure can rotate \
                 without straining (its fixed nodes lie on one line, or fix too few \
                 directions) and the stiffness matrix is singular; fix nodes off that \
                 line or more directions"
                    .into(),
            );
        }
        if let Some(f) = self
            .force
            .iter()
            .find(|f| !f.is_finite() || f.abs() > MAX_NODAL_FORCE)
        {
            return err(
                "load",
                format!(
                    "a nodal force of {f:e} is out of range (at most {MAX_NODAL_FORCE:e} \
                     per component in unit-modulus units): the compliance would overflow"
                ),
            );
        }
        let loaded = (0..self.force.len()).any(|d| self.force[d] != 0.0 && !self.fixed[d]);
        if !loaded {
            return err("load", "no force acts on a free DOF".into());
        }
        let n = self.mesh.elements() as f64;
        let solid = self
            .passive
            .iter()
            .filter(|&&p| p == Passive::Solid)
            .count() as f64;
        let void = self.passive.iter().filter(|&&p| p == Passive::Void).count() as f64;
        if solid / n > self.volfrac || (n - void) / n < self.volfrac {
            return err(
                "passive",
                format!(
                    "passive solid ({:.3}) and void ({:.3}) fractions leave volfrac {} \
                     unreachable",
                    solid / n,
                    void / n,
                    self.volfrac
                ),
            );
        }
        Ok(())
    }
}

/// Largest force component a node may carry. Compliance is f·u with
/// u ∝ f / E_MIN in void, so f = 1e9 gives about 1e27: far from overflow in
/// the f32 operator (3.4e38), where 1e308 overflowed on the first solve.
pub const MAX_NODAL_FORCE: f64 = 1e9;

/// Whether the fixed DOFs remove all six rigid-body motions r(x) = a + ω × x.
/// Each fixed DOF (node x, component c) is one linear condition r_c(x) = 0
/// on (a, ω); they hold K's null space down to zero exactly when those rows
/// span ℝ⁶. The rank is built row by row against an orthonormal basis of at
/// most six 6-vectors (no storage per DOF, no squared condition number as a
/// Gram matrix would give). Node coordinates are centred and scaled to the
/// unit box, so a row off the span by one element in a 1000-element mesh
/// still stands out by about 1e-3 against rounding near 1e-16.
fn rigid_motions_fixed(mesh: &Mesh, fixed: &[bool]) -> bool {
    const TOL: f64 = 1e-9;
    let scale = [mesh.nelx, mesh.nely, mesh.nelz]
        .into_iter()
        .max()
        .unwrap_or(1)
        .max(1) as f64;
    let centre = [mesh.nelx, mesh.nely, mesh.nelz].map(|n| n as f64 / 2.0);
    let mut basis: Vec<[f64; 6]> = Vec::with_capacity(6);
    let dot = |a: &[f64; 6], b: &[f64; 6]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    for (d, _) in fixed.iter().enumerate().filter(|(_, f)| **f) {
        let ijk = mesh.node_coords(d / 3);
        let [x, y, z] = std::array::from_fn(|a| (ijk[a] as f64 - centre[a]) / scale);
        // The row of r_c = a_c + (ω × x)_c over (a_x, a_y, a_z, ω_x, ω_y, ω_z).
        let mut row = match d % 3 {
            0 => [1.0, 0.0, 0.0, 0.0, z, -y],
            1 => [0.0, 1.0, 0.0, -z, 0.0, x],
            _ => [0.0, 0.0, 1.0, y, -x, 0.0],
        };
        let norm0 = dot(&row, &row).sqrt();
        // Twice is enough for Gram-Schmidt's orthogonality.
        for _ in 0..2 {
            for q in &basis {
                let c = dot(&row, q);
                row.iter_mut().zip(q).for_each(|(r, q)| *r -= c * q);
            }
        }
        let norm = dot(&row, &row).sqrt();
        if norm > TOL * norm0 {
            basis.push(row.map(|r| r / norm));
            if basis.len() == 6 {
                return true;
            }
        }
    }
    false
}

/// Largest mesh accepted: DOF numbers must fit the GPU kernels' 32-bit
/// indices (about 715 M elements; far beyond any memory anyway).
pub const MAX_DOFS: usize = i32::MAX as usize - 1;

/// Rejects meshes too large to index (before anything is allocated).
pub fn check_mesh_size(nel: [usize; 3]) -> Result<(), String> {
    let dofs = nel
        .iter()
        .try_fold(3usize, |acc, &n| acc.checked_mul(n.checked_add(1)?));
    match dofs {
        Some(d) if d <= MAX_DOFS => {}
        _ => {
            return Err(format!(
                "{} × {} × {} elements is too large (at most {MAX_DOFS} DOFs)",
                nel[0], nel[1], nel[2]
            ))
        }
    }
    // The optimizer's host arrays, checked before the problem allocates its
    // own, so a mesh this machine cannot hold is an error, not an abort. The
    // solver's share is checked by the backend once the device is known.
    let mesh = Mesh::new(nel[0], nel[1], nel[2]);
    let (host, _) = super::backend::memory_estimate(&mesh, 0);
    match crate::backend::cpu::available_memory() {
        Some(free) if host > free => Err(format!(
            "{} × {} × {} elements need {host} bytes of host memory for the design \
             arrays alone but only {free} are free; use a coarser mesh (--nelx)",
            nel[0], nel[1], nel[2]
        )),
        _ => Ok(()),
    }
}

/// Nodes `0..=nel` along one axis selected by `[lo, hi]`, with weights.
fn axis_nodes(nel: usize, h: f64, lo: f64, hi: f64) -> Vec<(usize, f64)> {
    let len = nel as f64 * h;
    if hi - lo <= 1e-9 * h {
        if lo < -0.5 * h || lo > len + 0.5 * h {
            return Vec::new();
        }
        let i = (lo / h).round().clamp(0.0, nel as f64) as usize;
        return vec![(i, 1.0)];
    }
    (0..=nel)
        .filter_map(|i| {
            let t = i as f64 * h;
            let (a, b) = ((t - 0.5 * h).max(0.0), (t + 0.5 * h).min(len));
            let w = b.min(hi) - a.max(lo);
            (w > 1e-12 * h).then_some((i, w))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn face_weights_are_tributary_areas_and_sum_to_the_face() {
        let p = Problem::new("t", Mesh::new(4, 2, 3), 0.5);
        let [_, ly, lz] = p.extent();
        let face = p.region_nodes(&Region {
            lo: [0.0, 0.0, 0.0],
            hi: [0.0, ly, lz],
        });
        assert_eq!(face.len(), 3 * 4);
        let total: f64 = face.iter().map(|w| w.1).sum();
        assert!((total - ly * lz).abs() < 1e-12);
        // Corner node: a quarter cell; interior node: a whole cell.
        let w = |j, k| face.iter().find(|x| x.0 == p.mesh.node(0, j, k)).unwrap().1;
        assert!((w(0, 0) - 0.0625).abs() < 1e-12);
        assert!((w(1, 1) - 0.25).abs() < 1e-12);
    }

    /// Supports on a line of nodes, even fixing every direction, let the
    /// body turn about that line; one node off the line stops it.
    #[test]
    fn supports_on_one_line_leave_a_rotation_free() {
        let mut p = Problem::new("t", Mesh::new(6, 4, 3), 1.0);
        p.fix(
            &Region {
                lo: [0.0, 0.0, 0.0],
                hi: [0.0, 0.0, 3.0],
            },
            [true; 3],
        );
        assert!(p.add_force(&Region::point([6.0, 4.0, 3.0]), [0.0, -1.0, 0.0]) > 0);
        let m = p.validate("t.toml").unwrap_err().to_string();
        assert!(
            m.contains("`support`") && m.contains("the supports leave a rigid-body motion free"),
            "{m}"
        );
        p.fix(&Region::point([6.0, 0.0, 0.0]), [false, true, false]);
        p.validate("t.toml").unwrap();
        // A clamped face removes all six.
        let mut c = Problem::new("t", Mesh::new(40, 20, 10), 1.0);
        c.fix(
            &Region {
                lo: [0.0, 0.0, 0.0],
                hi: [0.0, 20.0, 10.0],
            },
            [true; 3],
        );
        assert!(rigid_motions_fixed(&c.mesh, &c.fixed));
    }

    #[test]
    fn forces_beyond_the_range_are_refused() {
        let mut p = Problem::new("t", Mesh::new(4, 2, 2), 1.0);
        p.fix(
            &Region {
                lo: [0.0, 0.0, 0.0],
                hi: [0.0, 2.0, 2.0],
            },
            [true; 3],
        );
        p.add_force(&Region::point([4.0, 1.0, 1.0]), [0.0, -1.0, -1e308]);
        let m = p.validate("t.toml").unwrap_err().to_string();
        assert!(m.contains("`load`") && m.contains("out of range"), "{m}");
    }

    #[test]
    fn forces_sum_to_the_total() {
        let mut p = Problem::new("t", Mesh::new(10, 6, 4), 0.1);
        let r = Region {
            lo: [1.0, 0.23, 0.11],
            hi: [1.0, 0.37, 0.29],
        };
        assert!(p.add_force(&r, [0.0, -1.0, 0.5]) > 0);
        let sum = |c: usize| (0..p.mesh.nodes()).map(|n| p.force[3 * n + c]).sum::<f64>();
        assert!((sum(1) + 1.0).abs() < 1e-12 && (sum(2) - 0.5).abs() < 1e-12);
    }
}
