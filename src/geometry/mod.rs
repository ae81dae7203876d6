//! Input geometry in the plane of the stack: rectangles on the footprint and
//! the cell edges of one axis. Plain numbers with no notion of a stack file,
//! a power source or a grid, so that every stage above (readers, stack,
//! grid, power, import, output) can share them without importing each other.

mod axis;

pub use axis::{axis_edges, edges_of, uniform_axis, widths_of, MAX_AXIS_CELLS};

/// An axis-aligned rectangle on the footprint, metres, x0 < x1, y0 < y1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    pub x0: f64,
    pub y0: f64,
    pub x1: f64,
    pub y1: f64,
}

impl Rect {
    pub fn area(&self) -> f64 {
        (self.x1 - self.x0) * (self.y1 - self.y0)
    }
}
