//! A line plot of several series against a shared x axis (per-layer
//! temperature against time for `cuth transient`), drawn with `plotters`:
//! axes with round, noise-free tick labels, both axes titled with their
//! units, one colour per series and a legend beside the plot (never over
//! the lines).

use super::fonts::{draw_text, sans, DrawError};
use super::ticks;
use image::RgbImage;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

const W: u32 = 1200;
const H: u32 = 600;
const MARGIN: i32 = 16;
const LEGEND_W: i32 = 230;
const TEXT_PX: u32 = 15;
const INK: RGBColor = RGBColor(20, 20, 20);
const GRID: RGBColor = RGBColor(225, 225, 225);

/// Tableau-10: distinct, and readable on white.
pub const PALETTE: [[u8; 3]; 10] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
    [188, 189, 34],
    [23, 190, 207],
];

pub struct Series<'a> {
    pub name: &'a str,
    pub y: Vec<f64>,
}

pub struct LinePlot<'a> {
    pub title: &'a str,
    /// Axis titles with their units, e.g. `time (s)`, `temperature (°C)`.
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// Shared by every series.
    pub x: &'a [f64],
    pub series: Vec<Series<'a>>,
}

/// Padded range of all finite values (a flat series gets ±0.5).
fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
            (a.min(v), b.max(v))
        });
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi - lo < 1e-12 * lo.abs().max(1.0) {
        return (lo - 0.5, hi + 0.5);
    }
    let pad = 0.05 * (hi - lo);
    (lo - pad, hi + pad)
}

fn colour(k: usize) -> RGBColor {
    let [r, g, b] = PALETTE[k % PALETTE.len()];
    RGBColor(r, g, b)
}

pub fn render(p: &LinePlot) -> Result<RgbImage, DrawError> {
    let e = DrawError::from_any;
    let text = sans(TEXT_PX)?;
    let title_font = sans(20)?;
    let (x_lo, x_hi) = match (p.x.first(), p.x.last()) {
        (Some(&a), Some(&b)) if b > a && a.is_finite() && b.is_finite() => (a, b),
        (Some(&a), _) if a.is_finite() => (a - 0.5, a + 0.5),
        _ => (0.0, 1.0),
    };
    let (y_lo, y_hi) = range(p.series.iter().flat_map(|s| s.y.iter().copied()));
    let mut buf = vec![255u8; 3 * (W * H) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (W, H)).into_drawing_area();
        draw_text(&root, p.title, &title_font.color(&INK), (MARGIN, MARGIN))?;
        let (plot_area, legend_area) = root.split_horizontally(W as i32 - LEGEND_W);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(MARGIN as u32)
            .margin_top(MARGIN as u32 + 36)
            .x_label_area_size(50)
            .y_label_area_size(80)
            .build_cartesian_2d(x_lo..x_hi, y_lo..y_hi)
            .map_err(e)?;
        let (xspan, yspan) = (x_hi - x_lo, y_hi - y_lo);
        let xfmt = move |v: &f64| ticks::clean(*v, xspan);
        let yfmt = move |v: &f64| ticks::clean(*v, yspan);
        chart
            .configure_mesh()
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .x_labels(10)
            .y_labels(8)
            .x_label_formatter(&xfmt)
            .y_label_formatter(&yfmt)
            .x_desc(p.x_label)
            .y_desc(p.y_label)
            .label_style(text.clone())
            .axis_desc_style(text.clone())
            .axis_style(INK)
            .draw()
            .map_err(e)?;
        for (k, s) in p.series.iter().enumerate() {
            let style = colour(k).stroke_width(2);
            let pts: Vec<(f64, f64)> =
                p.x.iter()
                    .zip(&s.y)
                    .filter(|(x, y)| x.is_finite() && y.is_finite())
                    .map(|(&x, &y)| (x, y))
                    .collect();
            if pts.len() == 1 {
                chart
                    .draw_series([Circle::new(pts[0], 3, colour(k).filled())])
                    .map_err(e)?;
            } else {
                chart.draw_series(LineSeries::new(pts, style)).map_err(e)?;
            }
        }
        legend(&legend_area, p)?;
        root.present().map_err(e)?;
    }
    RgbImage::from_raw(W, H, buf).ok_or_else(|| DrawError("plot buffer has the wrong size".into()))
}

/// The legend beside the plot: a swatch and the name of each series, as
/// many as fit, then how many more there are.
fn legend(
    area: &DrawingArea<BitMapBackend, plotters::coord::Shift>,
    p: &LinePlot,
) -> Result<(), DrawError> {
    let e = DrawError::from_any;
    let font = sans(TEXT_PX)?;
    let style = font.color(&INK).pos(Pos::new(HPos::Left, VPos::Center));
    let row = TEXT_PX as i32 + 8;
    let top = MARGIN + 52;
    let fits = ((H as i32 - top - MARGIN) / row).max(1) as usize;
    let shown = if p.series.len() > fits {
        fits - 1
    } else {
        fits
    };
    for (k, s) in p.series.iter().take(shown).enumerate() {
        let y = top + k as i32 * row;
        let swatch = [(4, y - 2), (28, y + 2)];
        area.draw(&Rectangle::new(swatch, colour(k).filled()))
            .map_err(e)?;
        let name = fit(s.name, LEGEND_W - 40 - MARGIN, &font);
        draw_text(area, &name, &style, (34, y))?;
    }
    if p.series.len() > shown {
        let more = format!("and {} more", p.series.len() - shown);
        draw_text(area, &more, &style, (34, top + shown as i32 * row))?;
    }
    Ok(())
}

/// `s` cut (ending in `...`) to fit `max_px` in `font`.
fn fit(s: &str, max_px: i32, font: &plotters::style::FontDesc) -> String {
    let width = |t: &str| font.box_size(t).map_or(i32::MAX, |(w, _)| w as i32);
    if width(s) <= max_px {
        return s.to_string();
    }
    let chars: Vec<char> = s.chars().collect();
    (0..chars.len())
        .rev()
        .map(|n| chars[..n].iter().collect::<String>() + "...")
        .find(|t| width(t) <= max_px)
        .unwrap_or_else(|| "...".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plot(names: &[&'static str], x: &[f64]) -> RgbImage {
        render(&LinePlot {
            title: "t",
            x_label: "time (s)",
            y_label: "temperature (°C)",
            x,
            series: names
                .iter()
                .enumerate()
                .map(|(k, name)| Series {
                    name,
                    y: x.iter().map(|t| 300.0 + 1e3 * t * k as f64).collect(),
                })
                .collect(),
        })
        .unwrap()
    }

    #[test]
    fn series_are_drawn_in_their_colours() {
        let x: Vec<f64> = (0..50).map(|k| k as f64 * 1e-3).collect();
        let img = plot(&["a", "b"], &x);
        let count = |c: [u8; 3]| img.pixels().filter(|p| p.0 == c).count();
        // Each line spans most of the plot width (plus its legend swatch).
        assert!(count(PALETTE[0]) > 400, "{}", count(PALETTE[0]));
        assert!(count(PALETTE[1]) > 400, "{}", count(PALETTE[1]));
        assert_eq!(count(PALETTE[2]), 0);
    }

    #[test]
    fn legend_sits_beside_the_plot_and_says_how_many_are_left_out() {
        let x = [0.0, 1.0];
        let names: Vec<&'static str> = (0..40).map(|k| &*format!("layer {k}").leak()).collect();
        let img = plot(&names, &x);
        // Swatches of the first colour in the legend column.
        let legend_x = (W as i32 - LEGEND_W + 4) as u32;
        let swatch = (MARGIN as u32..H)
            .filter(|&y| img.get_pixel(legend_x + 2, y).0 == PALETTE[0])
            .count();
        assert!(swatch >= 5, "{swatch}");
        // A label with no series has no legend, but a title and axes.
        let empty = plot(&[], &x);
        assert!(empty.pixels().any(|p| p.0 == [20, 20, 20]));
    }

    #[test]
    fn one_point_and_flat_series_draw() {
        let img = plot(&["a"], &[0.5]);
        assert!(img.pixels().any(|p| p.0 == PALETTE[0]));
        assert_eq!(range([2.0, 2.0].into_iter()), (1.5, 2.5));
    }
}
