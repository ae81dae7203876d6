//! One layer's temperature map as a PNG: the map in the footprint's physical
//! aspect ratio with y up (image row 0 is the max-y edge, as on a floorplan
//! drawing), an inferno colour bar with labelled min, max and a few round
//! ticks, a title line and a min/max footer. Drawing is done in memory
//! ([`render`]); [`encode`] turns it into PNG bytes with the `image` crate, so
//! the caller decides when anything touches the disk.

use super::colormap::inferno;
use super::text::{self, CHAR_PX};
use super::TempUnit;
use image::{codecs::png::PngEncoder, ExtendedColorType, ImageEncoder, ImageError, Rgb, RgbImage};
use std::ops::Range;

/// What one heat map shows.
pub struct HeatMap<'a> {
    /// Values in the display unit, index `x + nx*y` (y = 0 is the min-y edge).
    pub values: &'a [f64],
    pub nx: usize,
    pub ny: usize,
    /// Cell size in x and y, m: sets the pixel aspect ratio.
    pub dx: f64,
    pub dy: f64,
    pub title: &'a str,
    /// Unit label, e.g. from [`unit_label`].
    pub unit: &'a str,
}

/// The colour bar needs room for its labels, so it is at least this tall even
/// when the map is a thin strip.
const MIN_BAR_PX: u32 = 192;
/// The longer side of the map is at least this many pixels...
const MIN_LONG_PX: usize = 512;
/// ...and at most this many (grids finer than this are downsampled).
const MAX_LONG_PX: usize = 1024;
pub(super) const MARGIN: u32 = 16;
const GAP: u32 = 24;
const BAR_W: u32 = 24;
const TICK_LEN: u32 = 5;
/// Space between a tick and its label, wide enough that the tick does not
/// read as a minus sign.
const LABEL_GAP: u32 = 10;
/// Top of the map and bar: below the title row and the unit row.
pub(super) const TOP: u32 = MARGIN + CHAR_PX + 8 + CHAR_PX + 16;
const BACKGROUND: Rgb<u8> = Rgb([255, 255, 255]);
const INK: Rgb<u8> = Rgb([20, 20, 20]);
/// Cells without a finite temperature (a failed solve), so they are not
/// mistaken for the coldest cells.
const NO_DATA: Rgb<u8> = Rgb([150, 150, 150]);

/// Unit label for titles and the colour bar: `°C` when the bitmap font has a
/// degree sign (font8x8's Latin-1 set does), `degC` otherwise.
pub fn unit_label(unit: TempUnit) -> &'static str {
    match unit {
        TempUnit::Celsius if text::has_glyph('°') => "°C",
        TempUnit::Celsius => "degC",
        TempUnit::Kelvin => "K",
    }
}

/// Map area in pixels. The long side is a whole multiple of its cell count
/// between 512 and 1024 px when the grid has at most 1024 cells on that side,
/// so every cell gets the same number of pixels (nearest-neighbour
/// upsampling); otherwise it is 1024 px and pixels cover several cells. The
/// short side follows the physical aspect ratio `ny*dy : nx*dx`.
pub(super) fn map_size(nx: usize, ny: usize, dx: f64, dy: f64) -> (u32, u32) {
    let (w_m, h_m) = (nx as f64 * dx, ny as f64 * dy);
    let x_is_long = w_m >= h_m || !h_m.is_finite();
    let n_long = if x_is_long { nx } else { ny }.max(1);
    let long_px = if n_long <= MAX_LONG_PX {
        n_long * MIN_LONG_PX.div_ceil(n_long)
    } else {
        MAX_LONG_PX
    };
    let ratio = if x_is_long { h_m / w_m } else { w_m / h_m };
    let ratio = if ratio.is_finite() { ratio } else { 1.0 };
    let short_px = ((long_px as f64 * ratio).round() as usize).max(1);
    let (w, h) = if x_is_long {
        (long_px, short_px)
    } else {
        (short_px, long_px)
    };
    (w as u32, h as u32)
}

/// For each of `px` pixels along an axis of `n` cells, the cells it shows:
/// the cell under the pixel centre when upsampling, or every cell the pixel
/// overlaps when downsampling (the caller then takes their maximum).
fn pixel_cells(n: usize, px: u32) -> Vec<Range<usize>> {
    let px = px as usize;
    (0..px)
        .map(|p| {
            if px >= n {
                let c = (((p as f64 + 0.5) * n as f64 / px as f64) as usize).min(n - 1);
                c..c + 1
            } else {
                let lo = p * n / px;
                let hi = ((p + 1) * n).div_ceil(px).clamp(lo + 1, n);
                lo..hi
            }
        })
        .collect()
}

/// Titles longer than this are cut, so a long layer name cannot widen the
/// image without bound.
const MAX_TITLE_CHARS: usize = 72;

/// `s` cut to `max` characters, ending in `...` when cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(3)).collect();
        t.push_str("...");
        t
    }
}

/// Min and max over the finite values, or `None` when there are none.
fn finite_range(values: &[f64]) -> Option<(f64, f64)> {
    values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// A round tick step (1, 2, 2.5 or 5 × 10^k) giving about four intervals.
fn nice_step(span: f64) -> f64 {
    let raw = span / 4.0;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f < 1.5 {
        1.0
    } else if f < 2.25 {
        2.0
    } else if f < 3.5 {
        2.5
    } else if f < 7.5 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// The fewest decimals (0 to 6) that show multiples of `step` exactly,
/// e.g. 0 for 10, 1 for 2.5, 2 for 0.25.
fn decimals_for(step: f64) -> usize {
    if !(step.is_finite() && step > 0.0) {
        return 2;
    }
    (0..6)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(6)
}

fn fill_rect(img: &mut RgbImage, x: u32, y: u32, w: u32, h: u32, c: Rgb<u8>) {
    for py in y..(y + h).min(img.height()) {
        for px in x..(x + w).min(img.width()) {
            img.put_pixel(px, py, c);
        }
    }
}

/// A 1-pixel frame just outside the `w × h` box at (`x`, `y`).
fn frame(img: &mut RgbImage, x: u32, y: u32, w: u32, h: u32) {
    fill_rect(img, x - 1, y - 1, w + 2, 1, INK);
    fill_rect(img, x - 1, y + h, w + 2, 1, INK);
    fill_rect(img, x - 1, y - 1, 1, h + 2, INK);
    fill_rect(img, x + w, y - 1, 1, h + 2, INK);
}

/// Draws the heat map. Where the image is coarser than the grid, a pixel
/// shows the **maximum** of the cells it covers, not their mean: a one-cell
/// hot spot must stay visible, and the colour bar's max must appear in the map.
pub fn render(map: &HeatMap) -> RgbImage {
    let (nx, ny) = (map.nx.max(1), map.ny.max(1));
    let value = |x: usize, y: usize| map.values.get(x + nx * y).copied().unwrap_or(f64::NAN);
    let range = finite_range(map.values);
    let (lo, hi) = range.unwrap_or((0.0, 0.0));
    let span = hi - lo;
    // A constant map is drawn in the middle colour rather than divided by zero.
    let norm = |v: f64| if span > 0.0 { (v - lo) / span } else { 0.5 };

    let title = shorten(map.title, MAX_TITLE_CHARS);
    let (map_w, map_h) = map_size(nx, ny, map.dx, map.dy);
    let bar_h = map_h.max(MIN_BAR_PX);

    // Labels: min and max at the bar's ends, round ticks in between. A
    // constant map gets a one-colour bar with a single label at its middle:
    // a gradient labelled "70" at both ends would suggest a range that is not there.
    let step = if span > 0.0 { nice_step(span) } else { 0.0 };
    let dec = decimals_for(step);
    let end_dec = if span > 0.0 { (dec + 1).min(6) } else { 2 };
    let bar_y = |v: f64| ((1.0 - norm(v)) * f64::from(bar_h - 1)).round() as u32;
    let mut labels: Vec<(u32, String)> = Vec::new();
    match range {
        Some(_) if span > 0.0 => {
            labels.push((0, format!("{hi:.end_dec$}")));
            labels.push((bar_h - 1, format!("{lo:.end_dec$}")));
        }
        Some(_) => labels.push((bar_h / 2, format!("{hi:.end_dec$}"))),
        None => {}
    }
    if step > 0.0 {
        // Bounded: about four intervals fit the span by construction of
        // `nice_step`, and a counter cannot stall where `k + 1.0 == k`.
        let clear = CHAR_PX + 4;
        let first = (lo / step).floor();
        for i in 1..=12 {
            let v = (first + f64::from(i)) * step;
            if v >= hi {
                break;
            }
            let y = bar_y(v);
            if y >= clear && y + clear < bar_h {
                labels.push((y, format!("{v:.dec$}")));
            }
        }
    }
    let footer = match range {
        Some(_) if span > 0.0 => format!(
            "min {lo:.end_dec$} {u}   max {hi:.end_dec$} {u}",
            u = map.unit
        ),
        Some(_) => format!("uniform {hi:.end_dec$} {}", map.unit),
        None => "no finite values".to_string(),
    };

    let top = TOP;
    let bar_x = MARGIN + map_w + GAP;
    let label_x = bar_x + BAR_W + TICK_LEN + LABEL_GAP;
    let label_w = labels
        .iter()
        .map(|(_, s)| text::width(s))
        .max()
        .unwrap_or(0);
    let unit_w = text::width(map.unit);
    let width = (label_x + label_w + MARGIN)
        .max(bar_x + unit_w + MARGIN)
        .max(2 * MARGIN + text::width(&title))
        .max(2 * MARGIN + text::width(&footer));
    let footer_y = top + bar_h + 12;
    let height = footer_y + CHAR_PX + MARGIN;
    let mut img = RgbImage::from_pixel(width, height, BACKGROUND);

    text::draw(&mut img, MARGIN, MARGIN, &title, INK);

    // The map: image row 0 is the max-y edge.
    let xs = pixel_cells(nx, map_w);
    let ys = pixel_cells(ny, map_h);
    for (row, yr) in ys.iter().rev().enumerate() {
        for (col, xr) in xs.iter().enumerate() {
            let v = yr
                .clone()
                .flat_map(|y| xr.clone().map(move |x| (x, y)))
                .map(|(x, y)| value(x, y))
                .filter(|v| v.is_finite())
                .fold(f64::NAN, f64::max);
            let c = if v.is_finite() {
                Rgb(inferno(norm(v)))
            } else {
                NO_DATA
            };
            img.put_pixel(MARGIN + col as u32, top + row as u32, c);
        }
    }
    frame(&mut img, MARGIN, top, map_w, map_h);

    // The colour bar, hot at the top.
    for r in 0..bar_h {
        let t = if span <= 0.0 {
            0.5
        } else if bar_h > 1 {
            1.0 - f64::from(r) / f64::from(bar_h - 1)
        } else {
            1.0
        };
        fill_rect(&mut img, bar_x, top + r, BAR_W, 1, Rgb(inferno(t)));
    }
    frame(&mut img, bar_x, top, BAR_W, bar_h);
    for (y, s) in &labels {
        fill_rect(&mut img, bar_x + BAR_W, top + y, TICK_LEN, 1, INK);
        let ty = (top + y).saturating_sub(CHAR_PX / 2);
        text::draw(&mut img, label_x, ty, s, INK);
    }
    // Unit in its own row above the bar.
    text::draw(&mut img, bar_x, MARGIN + CHAR_PX + 8, map.unit, INK);

    text::draw(&mut img, MARGIN, footer_y, &footer, INK);
    img
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
mod tests {
    use super::*;

    fn heat_map<'a>(values: &'a [f64], nx: usize, ny: usize, dx: f64, dy: f64) -> HeatMap<'a> {
        HeatMap {
            values,
            nx,
            ny,
            dx,
            dy,
            title: "t",
            unit: "K",
        }
    }

    #[test]
    fn size_keeps_aspect_and_whole_pixels_per_cell() {
        // 10 × 5 square cells: 52 px per cell → 520 × 260.
        assert_eq!(map_size(10, 5, 1e-3, 1e-3), (520, 260));
        // 4 × 4 cells, but cells twice as tall as wide: the chip is 1:2.
        assert_eq!(map_size(4, 4, 1e-3, 2e-3), (256, 512));
        // Finer than 1024: downsampled.
        assert_eq!(map_size(2048, 1024, 1e-6, 1e-6), (1024, 512));
        assert_eq!(map_size(700, 700, 1e-6, 1e-6), (700, 700));
    }

    #[test]
    fn downsampling_keeps_a_one_cell_hot_spot() {
        let (nx, ny) = (2000, 10);
        let mut v = vec![0.0; nx * ny];
        v[1234 + nx * 7] = 1.0;
        let img = render(&heat_map(&v, nx, ny, 1e-6, 1e-6));
        let hot = Rgb(inferno(1.0));
        let (w, _) = map_size(nx, ny, 1e-6, 1e-6);
        let map_hot = (MARGIN..MARGIN + w)
            .flat_map(|x| (0..img.height()).map(move |y| (x, y)))
            .filter(|&(x, y)| *img.get_pixel(x, y) == hot)
            .count();
        assert!(map_hot > 0);
    }

    #[test]
    fn constant_and_empty_maps_render() {
        let v = vec![300.0; 12];
        let img = render(&heat_map(&v, 4, 3, 1e-3, 1e-3));
        let mid = Rgb(inferno(0.5));
        assert_eq!(*img.get_pixel(MARGIN + 5, TOP + 5), mid);
        let nan = vec![f64::NAN; 4];
        let img = render(&heat_map(&nan, 2, 2, 1e-3, 1e-3));
        assert!(encode(&img).is_ok());
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(40.0), 10.0);
        assert_eq!(nice_step(1.0), 0.25);
        assert_eq!(decimals_for(10.0), 0);
        assert_eq!(decimals_for(0.25), 2);
        assert_eq!(decimals_for(2.5), 1);
        assert_eq!(decimals_for(0.5), 1);
        assert_eq!(decimals_for(0.01), 2);
    }

    #[test]
    fn huge_values_with_a_tiny_span_terminate() {
        let v = [1e17, 1e17 + 64.0];
        let img = render(&heat_map(&v, 2, 1, 1e-3, 1e-3));
        assert!(img.width() > 0);
    }

    #[test]
    fn long_titles_are_cut() {
        assert_eq!(shorten("abcdef", 5), "ab...");
        assert_eq!(shorten("abc", 5), "abc");
    }
}
