//! Structured hex mesh of the design box: numbering of nodes, DOFs and
//! elements shared by every operator (CPU, GPU fused,
//! node-centred) and by the outputs, so they agree by construction.
//!
//! - Element (ex, ey, ez): `e = ex + nelx·(ey + nely·ez)`.
//! - Node (i, j, k), 0 ≤ i ≤ nelx: `n = i + (nelx+1)·(j + (nely+1)·k)`.
//! - DOF c ∈ {0, 1, 2} (x, y, z displacement) of node n: `3n + c`.
//! - Local node a of an element, offsets (di, dj, dk) = [`LOCAL_NODES`]`[a]`;
//!   local DOF `3a + c`, the row/column order of the element matrix.
//!
//! Elements are unit cubes in mesh units (see `element`); a physical domain
//! of length L along x meshed with nelx elements has edge h = L / nelx.

/// Corner offsets of the 8 local nodes: bottom face counter-clockwise, then
/// top face counter-clockwise (the usual Q1 hex order).
pub const LOCAL_NODES: [[usize; 3]; 8] = [
    [0, 0, 0],
    [1, 0, 0],
    [1, 1, 0],
    [0, 1, 0],
    [0, 0, 1],
    [1, 0, 1],
    [1, 1, 1],
    [0, 1, 1],
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mesh {
    pub nelx: usize,
    pub nely: usize,
    pub nelz: usize,
}

impl Mesh {
    pub fn new(nelx: usize, nely: usize, nelz: usize) -> Mesh {
        Mesh { nelx, nely, nelz }
    }

    pub fn elements(&self) -> usize {
        self.nelx * self.nely * self.nelz
    }

    /// Nodes per direction.
    pub fn node_dims(&self) -> [usize; 3] {
        [self.nelx + 1, self.nely + 1, self.nelz + 1]
    }

    pub fn nodes(&self) -> usize {
        let [a, b, c] = self.node_dims();
        a * b * c
    }

    pub fn dofs(&self) -> usize {
        3 * self.nodes()
    }

    pub fn element(&self, ex: usize, ey: usize, ez: usize) -> usize {
        ex + self.nelx * (ey + self.nely * ez)
    }

    /// (ex, ey, ez) of element `e`.
    pub fn element_coords(&self, e: usize) -> [usize; 3] {
        [
            e % self.nelx,
            (e / self.nelx) % self.nely,
            e / (self.nelx * self.nely),
        ]
    }

    pub fn node(&self, i: usize, j: usize, k: usize) -> usize {
        i + (self.nelx + 1) * (j + (self.nely + 1) * k)
    }

    /// (i, j, k) of node `n`.
    pub fn node_coords(&self, n: usize) -> [usize; 3] {
        let [a, b, _] = self.node_dims();
        [n % a, (n / a) % b, n / (a * b)]
    }

    /// Global node of each local node of element `e`.
    pub fn element_nodes(&self, e: usize) -> [usize; 8] {
        let [ex, ey, ez] = self.element_coords(e);
        LOCAL_NODES.map(|[di, dj, dk]| self.node(ex + di, ey + dj, ez + dk))
    }

    /// Global DOF of each local DOF (3a + c) of element `e`.
    pub fn element_dofs(&self, e: usize) -> [usize; 24] {
        let nodes = self.element_nodes(e);
        std::array::from_fn(|l| 3 * nodes[l / 3] + l % 3)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_round_trips_and_neighbours_share_nodes() {
        let m = Mesh::new(4, 3, 2);
        assert_eq!(m.elements(), 24);
        assert_eq!(m.nodes(), 5 * 4 * 3);
        for e in 0..m.elements() {
            let [x, y, z] = m.element_coords(e);
            assert_eq!(m.element(x, y, z), e);
        }
        for n in 0..m.nodes() {
            let [i, j, k] = m.node_coords(n);
            assert_eq!(m.node(i, j, k), n);
        }
        // Elements adjacent in x share their x-facing face: local nodes 1,2,5,6
        // of the left one are 0,3,4,7 of the right one.
        let (l, r) = (
            m.element_nodes(m.element(1, 1, 0)),
            m.element_nodes(m.element(2, 1, 0)),
        );
        assert_eq!([l[1], l[2], l[5], l[6]], [r[0], r[3], r[4], r[7]]);
        // Every DOF appears; corner node 0 in exactly one element.
        let mut count = vec![0; m.dofs()];
        for e in 0..m.elements() {
            for d in m.element_dofs(e) {
                count[d] += 1;
            }
        }
        assert!(count.iter().all(|&c| c >= 1));
        assert_eq!(count[0], 1);
        assert_eq!(count[3 * m.node(1, 1, 1)], 8);
    }
}
