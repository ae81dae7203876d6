//! One layer's temperature map as a picture an engineer reads: the map in the
//! footprint's physical aspect ratio with y up (as on a floorplan drawing),
//! axes in mm, the floorplan's block outlines and names on top, an inferno
//! colour bar whose round ticks never collide, a title and a min/max line.
//! Cells may be non-uniform ([`HeatMap`] takes cell edges) and absent (NaN:
//! hatched, left out of the colour range). Axes, text and frames are drawn
//! with `plotters` in memory ([`render`]); [`encode`] turns the image into
//! PNG bytes, so the caller decides when anything touches the disk. Grids
//! finer than the picture are downsampled to its pixels (`raster`), so a
//! 4096² layer costs a 1024² picture.

use super::fonts::{self, draw_text, sans, DrawError};
use super::raster::{self, finite_range};
use super::ticks;
use super::TempUnit;
use crate::power::Block;
use image::{codecs::png::PngEncoder, ExtendedColorType, ImageEncoder, ImageError, RgbImage};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// What one heat map shows. Lengths in metres, values in the display unit.
pub struct HeatMap<'a> {
    /// `nx + 1` increasing cell edges in x, m.
    pub x_edges_m: &'a [f64],
    /// `ny + 1` increasing cell edges in y, m.
    pub y_edges_m: &'a [f64],
    /// `nx * ny` values, index `x + nx*y` (y = 0 at the min-y edge); NaN is
    /// an absent cell: hatched, and left out of the colour range.
    pub values: &'a [f64],
    pub title: &'a str,
    /// Unit label, e.g. from [`unit_label`].
    pub unit: &'a str,
    /// Outlined and named on the map (a layer's floorplan units); may be empty.
    pub blocks: &'a [Block],
}

const MARGIN: i32 = 14;
const TITLE_PX: u32 = 20;
const TEXT_PX: u32 = 15;
const NAME_PX: u32 = 12;
/// Least distance between two colour-bar labels, pixels (1.6 lines apart
/// they never touch; 2.4 keeps the bar calm).
const MIN_TICK_GAP: f64 = 2.4 * TEXT_PX as f64;
/// Top of the map and the bar: below the title, the min/max line and the unit.
const HEAD: i32 = MARGIN + 72;
const Y_AREA: u32 = 72;
const X_AREA: u32 = 48;
/// The colour bar needs room for its labels even beside a thin strip.
const MIN_BAR_PX: u32 = 192;
const GAP: i32 = 28;
const BAR_W: i32 = 22;
const TICK_LEN: i32 = 5;
const LABEL_GAP: i32 = 6;
const INK: RGBColor = RGBColor(20, 20, 20);

/// Unit label for titles and the colour bar.
pub fn unit_label(unit: TempUnit) -> &'static str {
    match unit {
        TempUnit::Celsius => "°C",
        TempUnit::Kelvin => "K",
    }
}

/// Where the map landed in a rendered picture (pixels), for tests and callers
/// that annotate it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MapRect {
    pub x: u32,
    pub y: u32,
    pub w: u32,
    pub h: u32,
}

/// Draws the heat map (see the module doc).
pub fn render(map: &HeatMap) -> Result<RgbImage, DrawError> {
    render_with_rect(map).map(|(img, _)| img)
}

/// [`render`], also telling where the map is.
pub fn render_with_rect(map: &HeatMap) -> Result<(RgbImage, MapRect), DrawError> {
    let (nx, ny) = cells(map)?;
    let (x0, x1) = (map.x_edges_m[0], map.x_edges_m[nx]);
    let (y0, y1) = (map.y_edges_m[0], map.y_edges_m[ny]);
    let (map_w, map_h) = raster::map_size(nx, ny, x1 - x0, y1 - y0);
    let range = finite_range(map.values);
    let (lo, hi) = range.unwrap_or((0.0, 0.0));
    let span = hi - lo;
    // A constant map is drawn in the middle colour rather than divided by zero.
    let norm = move |v: f64| if span > 0.0 { (v - lo) / span } else { 0.5 };

    let text = sans(TEXT_PX)?;
    let bar_h = map_h.max(MIN_BAR_PX);
    let (bar_ticks, subtitle) = bar_labels(map, range, bar_h);

    // Width: the map with its axes, then the bar with its widest label.
    let label_w = bar_ticks
        .iter()
        .map(|(_, s)| text_width(s, &text))
        .chain([text_width(map.unit, &text)])
        .max()
        .unwrap_or(0);
    let bar_x = MARGIN + Y_AREA as i32 + map_w as i32 + GAP;
    let width = (bar_x + BAR_W + TICK_LEN + LABEL_GAP + label_w + MARGIN)
        .max(2 * MARGIN + text_width(&subtitle, &text)) as u32;
    let height = HEAD as u32 + (map_h + X_AREA).max(bar_h + 8) + MARGIN as u32;
    let mut buf = vec![255u8; 3 * width as usize * height as usize];
    let rect;
    {
        let root = BitMapBackend::with_buffer(&mut buf, (width, height)).into_drawing_area();
        let e = DrawError::from_any;
        let title_font = sans(TITLE_PX)?;
        let title = fit(map.title, width as i32 - 2 * MARGIN, &title_font);
        draw_text(&root, &title, &title_font.color(&INK), (MARGIN, MARGIN))?;
        draw_text(&root, &subtitle, &text.color(&INK), (MARGIN, MARGIN + 30))?;

        // Axes in mm around a plotting area of exactly map_w × map_h.
        let chart_area = root
            .clone()
            .shrink((MARGIN, HEAD), (Y_AREA + map_w, map_h + X_AREA));
        let mut chart = ChartBuilder::on(&chart_area)
            .x_label_area_size(X_AREA)
            .y_label_area_size(Y_AREA)
            .build_cartesian_2d(x0 * 1e3..x1 * 1e3, y0 * 1e3..y1 * 1e3)
            .map_err(e)?;
        let (xspan, yspan) = ((x1 - x0) * 1e3, (y1 - y0) * 1e3);
        let xfmt = move |v: &f64| ticks::clean(*v, xspan);
        let yfmt = move |v: &f64| ticks::clean(*v, yspan);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels((map_w / 60).max(2) as usize)
            .y_labels((map_h / 40).max(2) as usize)
            .x_label_formatter(&xfmt)
            .y_label_formatter(&yfmt)
            .x_desc("x (mm)")
            .y_desc("y (mm)")
            .label_style(text.clone())
            .axis_desc_style(text.clone())
            .axis_style(INK)
            .draw()
            .map_err(e)?;
        let (xr, yr) = chart.plotting_area().get_pixel_range();
        rect = MapRect {
            x: xr.start as u32,
            y: yr.start as u32,
            w: (xr.end - xr.start).max(1) as u32,
            h: (yr.end - yr.start).max(1) as u32,
        };
        let pixels = raster::pixels(
            map.values,
            map.x_edges_m,
            map.y_edges_m,
            (rect.w, rect.h),
            norm,
        );
        let luma = |px: i32, py: i32| {
            let (cx, cy) = (px - rect.x as i32, py - rect.y as i32);
            let i = 3
                * (cy.clamp(0, rect.h as i32 - 1) as usize * rect.w as usize
                    + cx.clamp(0, rect.w as i32 - 1) as usize);
            0.2126 * f64::from(pixels[i])
                + 0.7152 * f64::from(pixels[i + 1])
                + 0.0722 * f64::from(pixels[i + 2])
        };
        let names = outlines(map, rect, &luma)?;
        let pos = (rect.x as i32, rect.y as i32);
        let img = BitMapElement::<_>::with_owned_buffer(pos, (rect.w, rect.h), pixels.clone())
            .ok_or_else(|| DrawError("map buffer too small".into()))?;
        root.draw(&img).map_err(e)?;
        draw_outlines(&root, &names)?;
        let frame = [
            (rect.x as i32 - 1, rect.y as i32 - 1),
            ((rect.x + rect.w) as i32, (rect.y + rect.h) as i32),
        ];
        root.draw(&Rectangle::new(frame, INK)).map_err(e)?;

        // The colour bar, hot at the top, its ticks where their values are.
        let top = rect.y as i32;
        let grad = bar_gradient(bar_h, span);
        let bar = BitMapElement::<_>::with_owned_buffer((bar_x, top), (BAR_W as u32, bar_h), grad)
            .ok_or_else(|| DrawError("bar buffer too small".into()))?;
        root.draw(&bar).map_err(e)?;
        let frame = [(bar_x - 1, top - 1), (bar_x + BAR_W, top + bar_h as i32)];
        root.draw(&Rectangle::new(frame, INK)).map_err(e)?;
        let label_style = text.color(&INK).pos(Pos::new(HPos::Left, VPos::Center));
        for (v, s) in &bar_ticks {
            let y = top + ((1.0 - norm(*v)) * f64::from(bar_h - 1)).round() as i32;
            let tick = [(bar_x + BAR_W, y), (bar_x + BAR_W + TICK_LEN, y)];
            root.draw(&PathElement::new(tick, INK)).map_err(e)?;
            let at = (bar_x + BAR_W + TICK_LEN + LABEL_GAP, y);
            draw_text(&root, s, &label_style, at)?;
        }
        draw_text(&root, map.unit, &text.color(&INK), (bar_x, top - 24))?;
        root.present().map_err(e)?;
    }
    let img = RgbImage::from_raw(width, height, buf)
        .ok_or_else(|| DrawError("picture buffer has the wrong size".into()))?;
    Ok((img, rect))
}

/// The grid's cells, x and y, checked against the map's values (edges
/// increasing and finite, one value a cell) before anything is drawn.
fn cells(map: &HeatMap) -> Result<(usize, usize), DrawError> {
    for (axis, e) in [("x", map.x_edges_m), ("y", map.y_edges_m)] {
        if let Some(fault) = raster::edges_fault(e) {
            return Err(DrawError(format!("heat map {axis} edges: {fault}")));
        }
    }
    let (nx, ny) = (map.x_edges_m.len() - 1, map.y_edges_m.len() - 1);
    if map.values.len() != nx * ny {
        return Err(DrawError(format!(
            "heat map has {} values for {nx} × {ny} cells",
            map.values.len()
        )));
    }
    Ok((nx, ny))
}

/// The colour bar's ticks (`bar_h` pixels tall) over the values' finite
/// `range`, and the subtitle that states the range, to the decimals the
/// ticks' spacing shows.
fn bar_labels(
    map: &HeatMap,
    range: Option<(f64, f64)>,
    bar_h: u32,
) -> (Vec<(f64, String)>, String) {
    let (lo, hi) = range.unwrap_or((0.0, 0.0));
    let span = hi - lo;
    let bar_ticks: Vec<(f64, String)> = match range {
        Some(_) if span > 0.0 => ticks::spaced(lo, hi, f64::from(bar_h - 1), MIN_TICK_GAP),
        Some(_) => vec![(hi, ticks::clean(hi, hi.abs()))],
        None => Vec::new(),
    };
    let dec = bar_ticks
        .windows(2)
        .map(|w| ticks::decimals_for(w[1].0 - w[0].0) + 1)
        .next()
        .unwrap_or(2);
    let subtitle = match range {
        Some(_) if span > 0.0 => format!(
            "min {} {u}   max {} {u}",
            ticks::fixed(lo, dec),
            ticks::fixed(hi, dec),
            u = map.unit
        ),
        Some(_) => format!("uniform {} {}", ticks::clean(hi, hi.abs()), map.unit),
        None => "no cell has a value".to_string(),
    };
    let subtitle = if map.values.iter().any(|v| v.is_nan()) && range.is_some() {
        subtitle + "   (hatched: no cell)"
    } else {
        subtitle
    };
    (bar_ticks, subtitle)
}

/// The colour bar's pixels, `bar_h` rows of `BAR_W`, hot at the top (the
/// middle colour throughout for a constant map, as the map draws it).
fn bar_gradient(bar_h: u32, span: f64) -> Vec<u8> {
    (0..bar_h)
        .flat_map(|r| {
            let t = if span > 0.0 {
                1.0 - f64::from(r) / f64::from(bar_h - 1)
            } else {
                0.5
            };
            let c = super::colormap::inferno(t);
            (0..BAR_W).flat_map(move |_| c)
        })
        .collect()
}

/// A block's outline in pixels and its name where the name fits inside,
/// in black or white, whichever reads on the map under it.
struct Outline {
    corners: [(i32, i32); 2],
    name: Option<(String, (i32, i32), RGBColor)>,
}

fn outlines(
    map: &HeatMap,
    r: MapRect,
    luma: &dyn Fn(i32, i32) -> f64,
) -> Result<Vec<Outline>, DrawError> {
    let n = map.x_edges_m.len() - 1;
    let m = map.y_edges_m.len() - 1;
    let (x0, x1) = (map.x_edges_m[0], map.x_edges_m[n]);
    let (y0, y1) = (map.y_edges_m[0], map.y_edges_m[m]);
    let px = |x: f64| r.x as f64 + (x - x0) / (x1 - x0) * f64::from(r.w);
    let py = |y: f64| r.y as f64 + (y1 - y) / (y1 - y0) * f64::from(r.h);
    let font = sans(NAME_PX)?;
    let clamp_x = |v: f64| (v.round() as i32).clamp(r.x as i32, (r.x + r.w) as i32 - 1);
    let clamp_y = |v: f64| (v.round() as i32).clamp(r.y as i32, (r.y + r.h) as i32 - 1);
    let mut out = Vec::new();
    for b in map.blocks {
        // Every rectangle is outlined; the name goes in the largest.
        let main = b.main_rect();
        for r in &b.rects {
            let (a, c) = ((px(r.x0), py(r.y1)), (px(r.x1), py(r.y0)));
            if !(a.0.is_finite() && a.1.is_finite() && c.0.is_finite() && c.1.is_finite()) {
                continue;
            }
            let corners = [(clamp_x(a.0), clamp_y(a.1)), (clamp_x(c.0), clamp_y(c.1))];
            let (w, h) = (corners[1].0 - corners[0].0, corners[1].1 - corners[0].1);
            if w < 2 || h < 2 {
                continue; // off the map or too small to show
            }
            let centre = (
                (corners[0].0 + corners[1].0) / 2,
                (corners[0].1 + corners[1].1) / 2,
            );
            let (tw, th) = font.box_size(&b.name).unwrap_or((u32::MAX, u32::MAX));
            let fits =
                *r == main && (tw as i64) + 6 < i64::from(w) && (th as i64) + 4 < i64::from(h);
            let colour = if luma(centre.0, centre.1) > 110.0 {
                BLACK
            } else {
                WHITE
            };
            out.push(Outline {
                corners,
                name: fits.then(|| (b.name.clone(), centre, colour)),
            });
        }
    }
    Ok(out)
}

fn draw_outlines(
    root: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    outlines: &[Outline],
) -> Result<(), DrawError> {
    let e = DrawError::from_any;
    let font = sans(NAME_PX)?;
    // A black line with a white one inside reads on every palette colour.
    for o in outlines {
        root.draw(&Rectangle::new(o.corners, BLACK)).map_err(e)?;
        let [(ax, ay), (bx, by)] = o.corners;
        if bx - ax > 2 && by - ay > 2 {
            let inner = [(ax + 1, ay + 1), (bx - 1, by - 1)];
            root.draw(&Rectangle::new(inner, WHITE)).map_err(e)?;
        }
    }
    for o in outlines {
        if let Some((name, at, colour)) = &o.name {
            let style = font.color(colour).pos(Pos::new(HPos::Center, VPos::Center));
            draw_text(root, name, &style, *at)?;
        }
    }
    Ok(())
}

/// Width of `s` in `font`, pixels.
fn text_width(s: &str, font: &FontDesc) -> i32 {
    fonts::text_width(s, font) as i32
}

/// `s` cut (ending in `...`) to fit `max_px`. Bisects on the prefix length:
/// a layer name can be tens of thousands of characters, and measuring every
/// prefix in turn took minutes.
fn fit(s: &str, max_px: i32, font: &FontDesc) -> String {
    if text_width(s, font) <= max_px {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    let cut = |n: usize| chars[..n].iter().collect::<String>() + "...";
    // Invariant: a prefix of `lo` chars fits (0 always does, as "..."),
    // one of `hi` does not.
    let (mut lo, mut hi) = (0, chars.len());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if text_width(&cut(mid), font) <= max_px {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    cut(lo)
}

/// PNG bytes of an image (RGB, 8 bits per channel).
pub fn encode(img: &RgbImage) -> Result<Vec<u8>, ImageError> {
    let mut bytes = Vec::new();
    PngEncoder::new(&mut bytes).write_image(
        img.as_raw(),
        img.width(),
        img.height(),
        ExtendedColorType::Rgb8,
    )?;
    Ok(bytes)
}

#[cfg(test)]
#[path = "png_tests.rs"]
mod tests;
