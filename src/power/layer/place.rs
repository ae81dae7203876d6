//! Where a source's rectangles land on the layer's power map: the
//! footprint they must lie in (clamped when they overshoot it by rounding
//! only), the shift by the source's origin, and the spreading of a
//! rectangle's or a raster's power onto the grid. Split from `layer.rs`,
//! which walks the sources and keeps the blocks and material patches.

use crate::formats::csv_raster::{Raster, RasterUnit};
use crate::grid::Grid;
use crate::power::rasterize::{add_pixels, add_rect};
use crate::power::{invalid, PowerError, Rect};
use crate::stack::units::show_m;
use std::path::Path;

/// How far, relative to the footprint size, a rectangle may overshoot it and
/// still be accepted (then clamped): HotSpot coordinates are decimal, so
/// `left-x + width` in binary floating point can land a few ulps past the edge.
const EDGE_TOL: f64 = 1e-9;

/// The rectangle a source's rectangles must lie in: the domain, a layer's
/// outline or a region, metres.
pub(super) struct Footprint {
    pub(super) at: Rect,
    /// How messages name it.
    pub(super) what: String,
    /// Whether it is the whole domain (uniform power then fills every cell).
    pub(super) whole: bool,
}

impl Footprint {
    /// `r` clamped to the footprint, or `None` when it sticks out by more than
    /// [`EDGE_TOL`]: power outside the chip is an input mistake, never clipped.
    pub(super) fn fit(&self, r: Rect) -> Option<Rect> {
        let a = self.at;
        let (tx, ty) = (EDGE_TOL * (a.x1 - a.x0), EDGE_TOL * (a.y1 - a.y0));
        let inside =
            r.x0 >= a.x0 - tx && r.y0 >= a.y0 - ty && r.x1 <= a.x1 + tx && r.y1 <= a.y1 + ty;
        inside.then(|| Rect {
            x0: r.x0.max(a.x0),
            y0: r.y0.max(a.y0),
            x1: r.x1.min(a.x1),
            y1: r.y1.min(a.y1),
        })
    }

    pub(super) fn outside(&self, what: &str, r: &Rect) -> String {
        let a = self.at;
        format!(
            "{what} spans x [{}, {}] m, y [{}, {}] m, outside the footprint \
             [{}, {}] × [{}, {}] m ({})",
            show_m(r.x0),
            show_m(r.x1),
            show_m(r.y0),
            show_m(r.y1),
            show_m(a.x0),
            show_m(a.x1),
            show_m(a.y0),
            show_m(a.y1),
            self.what
        )
    }
}

/// `r` moved by `origin`.
pub(super) fn shift(r: Rect, (ox, oy): (f64, f64)) -> Rect {
    if (ox, oy) == (0.0, 0.0) {
        return r;
    }
    Rect {
        x0: r.x0 + ox,
        y0: r.y0 + oy,
        x1: r.x1 + ox,
        y1: r.y1 + oy,
    }
}

/// Adds a rectangle's power to the map, or reports it if the power would be
/// lost (a sliver that covers no cell after clamping).
pub(super) fn spread(
    map: &mut [f64],
    rect: &Rect,
    power_w: f64,
    grid: &Grid,
    file: &Path,
    field: &str,
) -> Result<(), PowerError> {
    if add_rect(map, rect, power_w, grid) || power_w == 0.0 {
        Ok(())
    } else {
        Err(invalid(
            file,
            field,
            format!("{power_w} W on a rectangle that covers no grid cell"),
        ))
    }
}

/// The factor that brings raster `r` (read from `file`) to `total` W, and
/// the layer's input total, W. Checked before anything is placed: a map of
/// relative intensities needs a total, and an all-zero one can be scaled to
/// 0 W only. `src` and `field` locate the spec in the stack file.
pub(super) fn raster_scale(
    r: &Raster,
    file: &Path,
    total: Option<f64>,
    src: &Path,
    field: &str,
) -> Result<(f64, f64), PowerError> {
    let sum = r.sum();
    let at = format!("{field}.total");
    let scale = match (total, r.unit) {
        (None, RasterUnit::Watts) => 1.0,
        (None, RasterUnit::Relative) => {
            return Err(invalid(
                src,
                at,
                format!(
                    "{} holds relative intensities only: set `total` (W)",
                    file.display()
                ),
            ))
        }
        // All zeros scaled to 0 W is fine; to anything else it is impossible.
        (Some(t), _) if sum > 0.0 || t == 0.0 => t / sum.max(f64::MIN_POSITIVE),
        (Some(t), _) => {
            return Err(invalid(
                src,
                at,
                format!("cannot scale {} to {t} W: every pixel is 0", file.display()),
            ))
        }
    };
    Ok((scale, total.unwrap_or(sum)))
}

/// Spreads raster `r`, times `scale` ([`raster_scale`]), onto the map over
/// `extent`.
pub(super) fn raster(map: &mut [f64], r: &Raster, scale: f64, extent: &Rect, grid: &Grid) {
    let scaled: Vec<f64>;
    let values = if scale != 1.0 {
        scaled = r.values.iter().map(|v| v * scale).collect();
        &scaled
    } else {
        &r.values
    };
    add_pixels(map, values, r.rows, r.cols, extent, grid);
}
