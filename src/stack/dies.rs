//! The dies of a package as the outputs see them: a layer's own outline
//! or a region that carries a floorplan or power is a die, with its frame
//! at its `origin` (where its floorplan has (0, 0)). Reports give a point
//! in the frame of the die that holds it ([`Stack::die_at`]) as well as in
//! the domain's, and die views crop a layer's map to its dies
//! ([`Stack::dies_extent`]).

use super::{Layer, Stack};
use crate::geometry::Rect;

/// A die of a layer: its name (the layer's or the region's), where it lies
/// and its frame's (0, 0), in domain coordinates, m.
#[derive(Clone, Debug, PartialEq)]
pub struct Die<'a> {
    pub name: &'a str,
    pub rect: Rect,
    pub origin: (f64, f64),
}

fn holds(r: &Rect, x: f64, y: f64) -> bool {
    r.x0 <= x && x <= r.x1 && r.y0 <= y && y <= r.y1
}

/// Whether a source names blocks or dissipates power: what makes a
/// rectangle a die rather than a patch of material (a TSV array, a spreader).
fn powered(floorplan: bool, power: bool) -> bool {
    floorplan || power
}

/// The dies of `layer`, in paint order (its own outline, then its regions):
/// only those with a frame of their own, apart from the domain's.
fn dies(layer: &Layer) -> Vec<Die<'_>> {
    let mut out = Vec::new();
    let own = powered(layer.floorplan.is_some(), layer.power.is_some());
    if let (true, Some(rect)) = (own, layer.outline) {
        out.push(Die {
            name: &layer.name,
            rect,
            origin: layer.origin,
        });
    }
    for r in &layer.regions {
        if powered(r.floorplan.is_some(), r.power.is_some()) {
            out.push(Die {
                name: &r.name,
                rect: r.rect,
                origin: r.origin,
            });
        }
    }
    out
}

impl Stack {
    /// The die of layer `l` that holds the point (`x`, `y`) (the last painted
    /// where they overlap, as the paint), if any.
    pub fn die_at(&self, l: usize, x: f64, y: f64) -> Option<Die<'_>> {
        let layer = self.layers.get(l)?;
        dies(layer).into_iter().rev().find(|d| holds(&d.rect, x, y))
    }

    /// Layer `l`'s die when it has exactly one (its die view is then drawn
    /// in the die's frame).
    pub fn only_die(&self, l: usize) -> Option<Die<'_>> {
        let mut d = dies(self.layers.get(l)?);
        (d.len() == 1).then(|| d.remove(0))
    }

    /// The box around layer `l`'s dies, when it is smaller than the domain
    /// (a die view would then show more than the full map); `None` for a
    /// layer without dies.
    pub fn dies_extent(&self, l: usize) -> Option<Rect> {
        let d = dies(self.layers.get(l)?);
        let first = d.first()?.rect;
        let r = d.iter().skip(1).fold(first, |a, d| Rect {
            x0: a.x0.min(d.rect.x0),
            y0: a.y0.min(d.rect.y0),
            x1: a.x1.max(d.rect.x1),
            y1: a.y1.max(d.rect.y1),
        });
        let domain = self.width_m * self.length_m;
        (r.area() < (1.0 - 1e-9) * domain).then_some(r)
    }
}

#[cfg(test)]
mod tests {
    use crate::stack::Stack;
    use std::path::Path;

    /// A 10 × 10 mm domain: layer 0 a die at (2, 3) mm with blocks, layer 1
    /// two regions with power (the second over the first's corner) and a
    /// TSV patch without, layer 2 the whole domain.
    fn stack() -> Stack {
        let text = "[chip]\nwidth = \"10 mm\"\nlength = \"10 mm\"\n[grid]\nnx = 10\nny = 10\n\
             [boundary]\nambient = 300.0\nh_top = 1e4\n\
             [materials.si]\nk = 130.0\nheat_capacity = 1.6e6\n\
             [[layers]]\nname = \"die\"\nmaterial = \"si\"\nthickness = \"50 um\"\n\
             outline = { x = \"2 mm\", y = \"3 mm\", width = \"4 mm\", length = \"2 mm\" }\n\
             power = { type = \"blocks\", blocks = [{ name = \"a\", x = 0.0, y = 0.0, \
             width = \"1 mm\", height = \"1 mm\", power = 1.0 }] }\n\
             [[layers]]\nname = \"chiplets\"\nmaterial = \"si\"\nthickness = \"50 um\"\n\
             [[layers.regions]]\nname = \"c0\"\nx = \"1 mm\"\ny = \"1 mm\"\nwidth = \"2 mm\"\n\
             length = \"2 mm\"\nmaterial = \"si\"\npower = { type = \"uniform\", total = 1.0 }\n\
             [[layers.regions]]\nname = \"c1\"\nx = \"2 mm\"\ny = \"2 mm\"\nwidth = \"3 mm\"\n\
             length = \"1 mm\"\nmaterial = \"si\"\npower = { type = \"uniform\", total = 1.0 }\n\
             [[layers.regions]]\nname = \"tsv\"\nx = \"8 mm\"\ny = \"8 mm\"\nwidth = \"1 mm\"\n\
             length = \"1 mm\"\nmaterial = \"si\"\n\
             [[layers]]\nname = \"lid\"\nmaterial = \"si\"\nthickness = \"1 mm\"\n";
        Stack::from_toml(text, Path::new("s.toml")).unwrap()
    }

    #[test]
    fn a_point_is_on_the_last_painted_die_that_holds_it() {
        let st = stack();
        let d = st.die_at(0, 3e-3, 4e-3).unwrap();
        assert_eq!((d.name, d.origin), ("die", (2e-3, 3e-3)));
        assert!(st.die_at(0, 1e-3, 1e-3).is_none(), "outside the outline");
        assert_eq!(st.die_at(1, 1.5e-3, 1.5e-3).unwrap().name, "c0");
        assert_eq!(
            st.die_at(1, 2.5e-3, 2.5e-3).unwrap().name,
            "c1",
            "c1 over c0"
        );
        assert!(st.die_at(1, 8.5e-3, 8.5e-3).is_none(), "a patch is no die");
        assert!(st.die_at(2, 5e-3, 5e-3).is_none(), "the domain is no die");
    }

    #[test]
    fn the_extent_spans_every_die_and_only_one_die_has_a_frame() {
        let st = stack();
        let r = st.dies_extent(1).unwrap();
        assert_eq!((r.x0, r.y0, r.x1, r.y1), (1e-3, 1e-3, 5e-3, 3e-3));
        assert_eq!(st.dies_extent(2), None);
        assert_eq!(st.only_die(0).unwrap().name, "die");
        assert_eq!(st.only_die(1), None);
    }
}
