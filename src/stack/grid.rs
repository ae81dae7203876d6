//! The finite-volume grid of a resolved stack: its in-plane edges (the
//! `[grid] cell` mesh, or `nx × ny` uniform cells) and each layer's z cells.
//! Here rather than in `grid`, so that the grid knows nothing of stack files.

use super::Stack;
use crate::geometry::{uniform_axis, widths_of};
use crate::grid::Grid;

impl Grid {
    pub fn from_stack(stack: &Stack) -> Grid {
        let (x, y) = match &stack.plane_edges {
            Some((ex, ey)) => ((widths_of(ex), ex.clone()), (widths_of(ey), ey.clone())),
            None => (
                uniform_axis(stack.width_m, stack.nx),
                uniform_axis(stack.length_m, stack.ny),
            ),
        };
        Grid::layered(x, y, stack.layers.iter().map(|l| (l.thickness_m, l.cells)))
    }
}
