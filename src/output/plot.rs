//! A line plot (several series against a shared x axis) drawn into an RGB
//! image: frame, "nice" tick labels on both axes, one colour per series and a
//! legend. Used for per-layer maximum temperature against time. Drawn with
//! the same bitmap font as the heat maps, so no font or plotting dependency.

use super::text::{self, CHAR_PX};
use image::{Rgb, RgbImage};

const W: u32 = 1200;
const H: u32 = 600;
const LEFT: u32 = 16 + 9 * CHAR_PX;
const TOP: u32 = 16 + 2 * CHAR_PX;
const BOTTOM: u32 = 16 + 3 * CHAR_PX;
const LEGEND_W: u32 = 16 + 18 * CHAR_PX;
const INK: Rgb<u8> = Rgb([20, 20, 20]);
const GRID: Rgb<u8> = Rgb([225, 225, 225]);

/// Tableau-10: distinct, and readable on white.
const PALETTE: [[u8; 3]; 10] = [
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
    pub x_label: &'a str,
    /// Shared by every series.
    pub x: &'a [f64],
    pub series: Vec<Series<'a>>,
}

/// Tick positions covering [lo, hi]: steps of 1, 2 or 5 × 10^k, about `n` of them.
pub fn ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return vec![lo];
    }
    let raw = span / n.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last).map(|k| k as f64 * step).collect()
}

fn label(v: f64, step: f64) -> String {
    if v != 0.0 && (v.abs() >= 1e5 || v.abs() < 1e-3) {
        format!("{v:.2e}")
    } else {
        let decimals = (-step.log10().floor()).max(0.0) as usize;
        format!("{v:.decimals$}")
    }
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

fn line(img: &mut RgbImage, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: Rgb<u8>) {
    let n = ((x1 - x0).abs().max((y1 - y0).abs()).ceil() as usize).max(1);
    for k in 0..=n {
        let t = k as f64 / n as f64;
        let (x, y) = (x0 + t * (x1 - x0), y0 + t * (y1 - y0));
        for (dx, dy) in [(0, 0), (1, 0), (0, 1)] {
            let (px, py) = (x.round() as i64 + dx, y.round() as i64 + dy);
            if px >= 0 && py >= 0 && (px as u32) < img.width() && (py as u32) < img.height() {
                img.put_pixel(px as u32, py as u32, c);
            }
        }
    }
}

fn rect(img: &mut RgbImage, x: u32, y: u32, w: u32, h: u32, c: Rgb<u8>) {
    for py in y..(y + h).min(img.height()) {
        for px in x..(x + w).min(img.width()) {
            img.put_pixel(px, py, c);
        }
    }
}

pub fn render(p: &LinePlot) -> RgbImage {
    let mut img = RgbImage::from_pixel(W, H, Rgb([255, 255, 255]));
    let (pw, ph) = (W - LEFT - LEGEND_W, H - TOP - BOTTOM);
    let (x_lo, x_hi) = match (p.x.first(), p.x.last()) {
        (Some(&a), Some(&b)) if b > a => (a, b),
        (Some(&a), _) => (a - 0.5, a + 0.5),
        _ => (0.0, 1.0),
    };
    let (y_lo, y_hi) = range(p.series.iter().flat_map(|s| s.y.iter().copied()));
    let px = |x: f64| LEFT as f64 + (x - x_lo) / (x_hi - x_lo) * pw as f64;
    let py = |y: f64| (TOP + ph) as f64 - (y - y_lo) / (y_hi - y_lo) * ph as f64;

    let yt = ticks(y_lo, y_hi, 6);
    let ystep = if yt.len() > 1 { yt[1] - yt[0] } else { 1.0 };
    for &t in &yt {
        let y = py(t).round() as u32;
        rect(&mut img, LEFT, y, pw, 1, GRID);
        let s = label(t, ystep);
        let x = LEFT.saturating_sub(8 + text::width(&s));
        text::draw(&mut img, x, y.saturating_sub(CHAR_PX / 2), &s, INK);
    }
    let xt = ticks(x_lo, x_hi, 6);
    let xstep = if xt.len() > 1 { xt[1] - xt[0] } else { 1.0 };
    for &t in &xt {
        let x = px(t).round() as u32;
        rect(&mut img, x, TOP, 1, ph, GRID);
        rect(&mut img, x, TOP + ph, 1, 6, INK);
        let s = label(t, xstep);
        let lx = x.saturating_sub(text::width(&s) / 2);
        text::draw(&mut img, lx, TOP + ph + 10, &s, INK);
    }
    // Frame.
    rect(&mut img, LEFT, TOP, pw, 1, INK);
    rect(&mut img, LEFT, TOP + ph, pw + 1, 1, INK);
    rect(&mut img, LEFT, TOP, 1, ph, INK);
    rect(&mut img, LEFT + pw, TOP, 1, ph, INK);

    for (k, s) in p.series.iter().enumerate() {
        let c = Rgb(PALETTE[k % PALETTE.len()]);
        let pts: Vec<(f64, f64)> =
            p.x.iter()
                .zip(&s.y)
                .filter(|(_, y)| y.is_finite())
                .map(|(&x, &y)| (px(x), py(y)))
                .collect();
        if pts.len() == 1 {
            rect(&mut img, pts[0].0 as u32, pts[0].1 as u32, 3, 3, c);
        }
        for w in pts.windows(2) {
            line(&mut img, w[0], w[1], c);
        }
        // Legend entry: swatch and name (cut to fit).
        let ly = TOP + k as u32 * (CHAR_PX + 6);
        let lx = LEFT + pw + 16;
        rect(&mut img, lx, ly + CHAR_PX / 2 - 2, 20, 4, c);
        let name: String = s.name.chars().take(16).collect();
        text::draw(&mut img, lx + 26, ly, &name, INK);
    }
    text::draw(&mut img, LEFT, 16, p.title, INK);
    let xl = LEFT + pw / 2 - text::width(p.x_label) / 2;
    text::draw(&mut img, xl, H - 16 - CHAR_PX, p.x_label, INK);
    img
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_inside() {
        assert_eq!(
            ticks(0.0, 1.0, 5),
            [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        let t = ticks(301.3, 347.9, 6);
        assert_eq!(t.first(), Some(&310.0));
        assert!(t.iter().all(|v| (301.3..=347.9).contains(v)), "{t:?}");
        assert_eq!(ticks(5.0, 5.0, 4), [5.0]);
    }

    #[test]
    fn series_are_drawn_in_their_colours() {
        let x: Vec<f64> = (0..50).map(|k| k as f64 * 1e-3).collect();
        let img = render(&LinePlot {
            title: "t",
            x_label: "time (s)",
            x: &x,
            series: vec![
                Series {
                    name: "a",
                    y: x.iter().map(|t| 300.0 + 1e3 * t).collect(),
                },
                Series {
                    name: "b",
                    y: vec![310.0; 50],
                },
            ],
        });
        let count = |c: [u8; 3]| img.pixels().filter(|p| p.0 == c).count();
        // Each line spans most of the plot width (plus its legend swatch).
        assert!(count(PALETTE[0]) > 400, "{}", count(PALETTE[0]));
        assert!(count(PALETTE[1]) > 400, "{}", count(PALETTE[1]));
        assert_eq!(count(PALETTE[2]), 0);
    }
}
