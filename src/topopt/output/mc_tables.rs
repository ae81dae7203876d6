//! Marching-cubes lookup tables: cube corners, edges and, for each of the
//! 256 corner configurations, the triangles (as triples of edge indices).
//!
//! The triangle table is generated here rather than transcribed from
//! Lorensen & Cline / Bourke: a 4096-number literal cannot be reviewed, and
//! the classic 15-case tables resolve ambiguous faces differently in
//! complementary cases, which leaves holes. The construction below is the
//! one those tables encode, with one fixed rule:
//!
//! 1. On each cube face, walk the corners counter-clockwise as seen from
//!    outside. Each run of solid corners is entered through one crossed edge
//!    and left through another; it contributes the segment entry → exit.
//!    An ambiguous face (two solid corners on a diagonal) therefore gives two
//!    segments that cut off the solid corners: **solid corners touching only
//!    diagonally are never joined across a face.** The rule depends on the
//!    face's four values alone, so the two cubes sharing a face draw the same
//!    segments, in opposite directions: the surface is closed.
//! 2. Every crossed edge ends one face segment and starts another, so the
//!    segments chain into closed loops; each loop is fanned into triangles.
//!
//! Orientation: with segments entry → exit, the loop runs counter-clockwise
//! seen from the void side, so triangle normals (right-hand rule) point
//! from solid to void, out of the material.

use std::sync::OnceLock;

/// Corner `c` of the unit cube sits at `(c & 1, (c >> 1) & 1, (c >> 2) & 1)`.
pub const fn corner(c: usize) -> [usize; 3] {
    [c & 1, (c >> 1) & 1, (c >> 2) & 1]
}

/// The 12 edges as (lower corner, upper corner): x edges 0–3, y edges 4–7,
/// z edges 8–11. The lower corner comes first so that an edge shared by
/// several cubes is interpolated from the same end in each, giving bitwise
/// identical vertices.
pub const EDGES: [[usize; 2]; 12] = [
    [0, 1],
    [2, 3],
    [4, 5],
    [6, 7],
    [0, 2],
    [1, 3],
    [4, 6],
    [5, 7],
    [0, 4],
    [1, 5],
    [2, 6],
    [3, 7],
];

/// Axis along which edge `e` runs (0 = x, 1 = y, 2 = z).
pub const fn edge_axis(e: usize) -> usize {
    e / 4
}

/// The edge joining corners `a` and `b`, if they are adjacent.
fn edge_between(a: usize, b: usize) -> Option<usize> {
    let (lo, hi) = (a.min(b), a.max(b));
    EDGES.iter().position(|&[p, q]| p == lo && q == hi)
}

/// The 6 faces, each as its 4 corners in counter-clockwise order seen from
/// outside the cube: starting corner `r`, the next is `n × r` with `r` in
/// centred coordinates (±1) and `n` the outward normal.
fn faces() -> [[usize; 4]; 6] {
    let mut out = [[0; 4]; 6];
    for (f, face) in out.iter_mut().enumerate() {
        let (axis, side) = (f / 2, (f % 2) as i32);
        let mut n = [0i32; 3];
        n[axis] = 2 * side - 1;
        // Start at the face corner with the other coordinates at 0.
        let mut r = [-1i32; 3];
        r[axis] = n[axis];
        for slot in face.iter_mut() {
            *slot = (0..3)
                .map(|d| usize::from(r[d] > 0) << d)
                .fold(0, |a, b| a | b);
            // r ← n × r, then back onto the face plane (the cross product
            // drops the normal component).
            let c = [
                n[1] * r[2] - n[2] * r[1],
                n[2] * r[0] - n[0] * r[2],
                n[0] * r[1] - n[1] * r[0],
            ];
            r = c;
            r[axis] = n[axis];
        }
    }
    out
}

/// Triangles (edge triples) of configuration `config`: bit `c` set means
/// corner `c` is solid (value ≥ level).
pub fn triangles(config: u8) -> &'static [[u8; 3]] {
    static TABLE: OnceLock<Vec<Vec<[u8; 3]>>> = OnceLock::new();
    &TABLE.get_or_init(|| (0..=255u8).map(build_case).collect())[usize::from(config)]
}

/// Bit `e` set when edge `e` is crossed (its ends differ): the classic edge
/// table, which the triangle table must agree with.
#[cfg(test)]
fn crossed_edges(config: u8) -> u16 {
    let solid = |c: usize| config >> c & 1 == 1;
    EDGES
        .iter()
        .enumerate()
        .filter(|(_, &[a, b])| solid(a) != solid(b))
        .fold(0, |m, (e, _)| m | 1 << e)
}

fn build_case(config: u8) -> Vec<[u8; 3]> {
    let solid = |c: usize| config >> c & 1 == 1;
    // succ[e] = the crossed edge that the face segment starting at `e` ends at.
    let mut succ = [None; 12];
    for face in faces() {
        for k in 0..4 {
            let (a, b) = (face[k], face[(k + 1) % 4]);
            if solid(a) || !solid(b) {
                continue; // not an entry into a solid run
            }
            // Walk the run to its exit.
            let mut j = (k + 1) % 4;
            while solid(face[(j + 1) % 4]) {
                j = (j + 1) % 4;
            }
            let entry = edge_between(a, b);
            let exit = edge_between(face[j], face[(j + 1) % 4]);
            if let (Some(entry), Some(exit)) = (entry, exit) {
                succ[entry] = Some(exit);
            }
        }
    }
    let mut tris = Vec::new();
    let mut seen = [false; 12];
    for start in 0..12 {
        if seen[start] || succ[start].is_none() {
            continue;
        }
        let mut lp = Vec::new();
        let mut e = start;
        while !seen[e] {
            seen[e] = true;
            lp.push(e as u8);
            match succ[e] {
                Some(next) => e = next,
                None => break,
            }
        }
        match triangulate(&lp) {
            Some(t) => tris.extend(t),
            // Unreachable for the 256 cases (a test checks); a fan keeps
            // the mesh usable if the rule above is ever changed.
            None => {
                for i in 1..lp.len().saturating_sub(1) {
                    tris.push([lp[0], lp[i], lp[i + 1]]);
                }
            }
        }
    }
    tris
}

/// Whether cube edges `a` and `b` lie on a common face.
pub fn share_face(a: u8, b: u8) -> bool {
    let ends = [EDGES[usize::from(a)], EDGES[usize::from(b)]];
    (0..3).any(|d| {
        let c = corner(ends[0][0])[d];
        ends.iter().flatten().all(|&k| corner(k)[d] == c)
    })
}

/// A triangulation of the loop `poly` (in loop order, so orientation is
/// kept) none of whose diagonals joins two crossings on one face. Such a
/// diagonal would lie in the face, where the neighbouring cube may draw the
/// same one: the two triangles would overlap instead of closing the
/// surface. Tries the triangles on the edge (last, first) apex by apex;
/// loops have at most a dozen vertices, so the search is tiny.
fn triangulate(poly: &[u8]) -> Option<Vec<[u8; 3]>> {
    let n = poly.len();
    if n < 3 {
        return Some(Vec::new());
    }
    if n == 3 {
        return Some(vec![[poly[0], poly[1], poly[2]]]);
    }
    for k in 1..n - 1 {
        let left_ok = k == 1 || !share_face(poly[0], poly[k]);
        let right_ok = k == n - 2 || !share_face(poly[k], poly[n - 1]);
        if !(left_ok && right_ok) {
            continue;
        }
        if let (Some(l), Some(r)) = (triangulate(&poly[..=k]), triangulate(&poly[k..])) {
            let mut t = vec![[poly[0], poly[k], poly[n - 1]]];
            t.extend(l);
            t.extend(r);
            return Some(t);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faces_are_counter_clockwise_from_outside() {
        for (f, face) in faces().iter().enumerate() {
            let (axis, side) = (f / 2, f % 2);
            let p: Vec<[f64; 3]> = face.iter().map(|&c| corner(c).map(|v| v as f64)).collect();
            assert!(face.iter().all(|&c| corner(c)[axis] == side));
            // Newell normal of the polygon, compared with the outward normal.
            let mut n = [0.0; 3];
            for k in 0..4 {
                let (a, b) = (p[k], p[(k + 1) % 4]);
                n[0] += (a[1] - b[1]) * (a[2] + b[2]);
                n[1] += (a[2] - b[2]) * (a[0] + b[0]);
                n[2] += (a[0] - b[0]) * (a[1] + b[1]);
            }
            let want = if side == 1 { 2.0 } else { -2.0 };
            assert_eq!(n[axis], want, "face {f}: {face:?}");
        }
    }

    #[test]
    fn every_case_uses_exactly_its_crossed_edges() {
        for config in 0..=255u8 {
            let mut used = 0u16;
            for t in triangles(config) {
                for &e in t {
                    used |= 1 << e;
                }
            }
            assert_eq!(used, crossed_edges(config), "config {config:#010b}");
        }
        // The classic counts: one corner → one triangle, a face's worth of
        // four corners → two, the empty and full cube → none.
        assert_eq!(triangles(0).len(), 0);
        assert_eq!(triangles(255).len(), 0);
        assert_eq!(triangles(1).len(), 1);
        assert_eq!(triangles(0b0000_1111).len(), 2);
        assert_eq!(crossed_edges(1), 0b1_0001_0001);
    }

    #[test]
    fn no_triangle_edge_lies_in_a_face_unless_it_is_a_face_segment() {
        for config in 0..=255u8 {
            let tris = triangles(config);
            let edges: Vec<(u8, u8)> = tris
                .iter()
                .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
                .collect();
            for &(a, b) in &edges {
                let interior = edges.contains(&(b, a));
                assert!(
                    !(interior && share_face(a, b)),
                    "config {config:#010b}: diagonal {a}-{b} lies in a face"
                );
            }
        }
    }

    #[test]
    fn complementary_cases_with_no_ambiguous_face_are_mirror_images() {
        // Without an ambiguous face, solid and void swap roles exactly: the
        // complement crosses the same edges with the opposite orientation.
        let ambiguous = |config: u8| {
            faces().iter().any(|f| {
                let s: Vec<bool> = f.iter().map(|&c| config >> c & 1 == 1).collect();
                s[0] == s[2] && s[1] == s[3] && s[0] != s[1]
            })
        };
        for config in 0..=255u8 {
            if ambiguous(config) {
                continue;
            }
            let directed = |cfg: u8| {
                let mut v: Vec<(u8, u8)> = triangles(cfg)
                    .iter()
                    .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
                    .collect();
                v.sort_unstable();
                v
            };
            assert_eq!(triangles(config).len(), triangles(!config).len());
            // Loop (boundary) edges between crossings on a common face are
            // reversed; compare the boundary only, as fans may differ.
            let boundary = |cfg: u8| {
                let d = directed(cfg);
                let mut b: Vec<(u8, u8)> = d
                    .iter()
                    .copied()
                    .filter(|&(a, b)| !d.contains(&(b, a)))
                    .collect();
                b.sort_unstable();
                b
            };
            let mut flipped: Vec<(u8, u8)> =
                boundary(!config).iter().map(|&(a, b)| (b, a)).collect();
            flipped.sort_unstable();
            assert_eq!(boundary(config), flipped, "config {config:#010b}");
        }
    }
}
