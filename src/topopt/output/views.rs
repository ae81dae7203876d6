//! PNG views of the density field, one per axis (`view_x.png`, ...): the
//! mid-plane slice on the left, the maximum projection along the same axis
//! on the right, a grey colour bar from 0 to 1 beside them.
//!
//! Grey scale with ρ = 1 black and ρ = 0 white is how SIMP results are
//! usually printed (top88, top3d), so material reads as ink; non-finite
//! densities are drawn red so they cannot pass for void. Each panel keeps
//! the domain's aspect ratio with square pixels per element and the second
//! in-plane axis pointing up (x view: y right, z up; y view: x right, z up;
//! z view: x right, y up). Panels longer than 1024 elements are shrunk by a
//! whole factor, a pixel showing the **maximum** of the elements it covers,
//! so a one-element strut stays visible. Text is drawn with the heat maps'
//! font (DejaVu Sans through `plotters`, `output::fonts`), after the pixels.

use super::DensityField;
use crate::output::fonts::{sans, text_width, DrawError};
use crate::output::png;
use image::{Rgb, RgbImage};
use plotters::prelude::{BitMapBackend, IntoDrawingArea, RGBColor};
use plotters::style::{Color, FontDesc};

/// Font size and line height of every text, pixels.
const TEXT_PX: u32 = 15;
const LINE_PX: u32 = 20;
const MARGIN: u32 = 16;
const GAP: u32 = 24;
const BAR_W: u32 = 24;
const MIN_BAR_PX: u32 = 160;
const TICK_LEN: u32 = 5;
const LABEL_GAP: u32 = 8;
/// A panel's long side is at least this many pixels (whole pixels per element)...
const MIN_PANEL_PX: usize = 320;
/// ...and elements are merged beyond this many along a side.
const MAX_PANEL_PX: usize = 1024;
const BACKGROUND: Rgb<u8> = Rgb([255, 255, 255]);
const INK: Rgb<u8> = Rgb([20, 20, 20]);
const NO_DATA: Rgb<u8> = Rgb([220, 30, 30]);
/// Colour-bar labels.
const TICKS: [(f64, &str); 5] = [
    (1.0, "1"),
    (0.75, "0.75"),
    (0.5, "0.5"),
    (0.25, "0.25"),
    (0.0, "0"),
];
const AXES: [&str; 3] = ["x", "y", "z"];

/// Grey for a density: 0 → white, 1 → black, clamped; red if not finite.
pub(super) fn grey(rho: f64) -> Rgb<u8> {
    if !rho.is_finite() {
        return NO_DATA;
    }
    let g = (255.0 * (1.0 - rho.clamp(0.0, 1.0))).round() as u8;
    Rgb([g, g, g])
}

/// One view's two panels as `nu × nv` value arrays (index `u + nu*v`).
struct Planes {
    /// In-plane axes: `u` horizontal, `v` vertical (up).
    u: usize,
    v: usize,
    nu: usize,
    nv: usize,
    /// Element index of the slice along the view axis.
    mid: usize,
    slice: Vec<f64>,
    max: Vec<f64>,
}

fn planes(field: &DensityField, axis: usize) -> Planes {
    let n = [field.nelx, field.nely, field.nelz];
    let (u, v) = match axis {
        0 => (1, 2),
        1 => (0, 2),
        _ => (0, 1),
    };
    let (nu, nv) = (n[u], n[v]);
    let mid = n[axis] / 2;
    let mut slice = vec![f64::NAN; nu * nv];
    // NaN-aware max: a NaN stays only where no element has a finite value.
    let mut max = vec![f64::NAN; nu * nv];
    for ez in 0..field.nelz {
        for ey in 0..field.nely {
            for ex in 0..field.nelx {
                let p = [ex, ey, ez];
                let r = field.at(ex, ey, ez);
                let i = p[u] + nu * p[v];
                max[i] = max[i].max(r);
                if p[axis] == mid {
                    slice[i] = r;
                }
            }
        }
    }
    Planes {
        u,
        v,
        nu,
        nv,
        mid,
        slice,
        max,
    }
}

/// Where things go in one view's image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Layout {
    /// Pixels per element side (≥ 1) and elements per pixel side (≥ 1).
    pub px: u32,
    pub merge: usize,
    /// Panel size in pixels, and the top-left corners of the two panels.
    pub panel_w: u32,
    pub panel_h: u32,
    pub slice_at: (u32, u32),
    pub max_at: (u32, u32),
    /// Left edge of the colour bar.
    pub bar_x: u32,
    pub width: u32,
    pub height: u32,
}

fn layout(
    nu: usize,
    nv: usize,
    captions: [&str; 2],
    title: &str,
    footer: &str,
    font: &FontDesc,
) -> Layout {
    let width_of = |s: &str| text_width(s, font);
    let long = nu.max(nv).max(1);
    let merge = long.div_ceil(MAX_PANEL_PX).max(1);
    let px = MIN_PANEL_PX.div_ceil(long).max(1) as u32;
    let panel_w = nu.div_ceil(merge) as u32 * px;
    let panel_h = nv.div_ceil(merge) as u32 * px;
    let col_w = panel_w
        .max(width_of(captions[0]))
        .max(width_of(captions[1]));
    let top = MARGIN + 2 * (LINE_PX + 8) + 4;
    let slice_at = (MARGIN, top);
    let max_at = (MARGIN + col_w + GAP, top);
    let bar_x = max_at.0 + col_w + GAP;
    let label_w = TICKS.iter().map(|(_, s)| width_of(s)).max().unwrap_or(0);
    let width = (bar_x + BAR_W + TICK_LEN + LABEL_GAP + label_w + MARGIN)
        .max(2 * MARGIN + width_of(title))
        .max(2 * MARGIN + width_of(footer));
    let footer_y = top + panel_h.max(MIN_BAR_PX) + 12;
    Layout {
        px,
        merge,
        panel_w,
        panel_h,
        slice_at,
        max_at,
        bar_x,
        width,
        height: footer_y + LINE_PX + MARGIN,
    }
}

/// Texts of the view along `axis`.
fn labels(field: &DensityField, p: &Planes, axis: usize) -> (String, [String; 2], String) {
    let a = AXES[axis];
    let title = format!(
        "density, view along {a} ({} x {} x {} elements)",
        field.nelx, field.nely, field.nelz
    );
    let captions = [
        format!("{a} mid-plane (e{a} = {})", p.mid),
        format!("max over {a}"),
    ];
    let footer = format!("right: {}   up: {}", AXES[p.u], AXES[p.v]);
    (title, captions, footer)
}

/// `view_x`, `view_y`, `view_z` as images, in that order.
pub fn view_images(field: &DensityField) -> Result<Vec<(String, RgbImage)>, DrawError> {
    (0..3)
        .map(|axis| Ok((format!("view_{}", AXES[axis]), render(field, axis)?)))
        .collect()
}

/// `view_x.png`, `view_y.png`, `view_z.png` as (file name, PNG bytes).
pub fn view_pngs(field: &DensityField) -> Result<Vec<(String, Vec<u8>)>, DrawError> {
    view_images(field)?
        .into_iter()
        .map(|(stem, img)| {
            let bytes = png::encode(&img).map_err(DrawError::from_any)?;
            Ok((format!("{stem}.png"), bytes))
        })
        .collect()
}

/// The layout of the view along `axis` (for tests that look at pixels).
#[cfg(test)]
pub(super) fn view_layout(field: &DensityField, axis: usize) -> Layout {
    let p = planes(field, axis);
    let (title, captions, footer) = labels(field, &p, axis);
    let font = sans(TEXT_PX).expect("the embedded font loads");
    layout(
        p.nu,
        p.nv,
        [&captions[0], &captions[1]],
        &title,
        &footer,
        &font,
    )
}

/// Texts drawn over `img` at their top-left corners, in one plotters pass.
fn draw_texts(
    img: &mut RgbImage,
    font: &FontDesc,
    texts: &[(u32, u32, &str)],
) -> Result<(), DrawError> {
    let e = DrawError::from_any;
    let (w, h) = img.dimensions();
    let root = BitMapBackend::with_buffer(img.as_mut(), (w, h)).into_drawing_area();
    let ink = RGBColor(INK.0[0], INK.0[1], INK.0[2]);
    let style = font.color(&ink.to_rgba());
    for (x, y, s) in texts {
        root.draw_text(s, &style, (*x as i32, *y as i32))
            .map_err(e)?;
    }
    root.present().map_err(e)
}

fn render(field: &DensityField, axis: usize) -> Result<RgbImage, DrawError> {
    let p = planes(field, axis);
    let (title, captions, footer) = labels(field, &p, axis);
    let font = sans(TEXT_PX)?;
    let l = layout(
        p.nu,
        p.nv,
        [&captions[0], &captions[1]],
        &title,
        &footer,
        &font,
    );
    let mut img = RgbImage::from_pixel(l.width, l.height, BACKGROUND);
    let mut texts: Vec<(u32, u32, &str)> = vec![(MARGIN, MARGIN, &title)];
    let caption_y = MARGIN + LINE_PX + 8;
    for ((x, y), (values, caption)) in [l.slice_at, l.max_at]
        .into_iter()
        .zip([(&p.slice, &captions[0]), (&p.max, &captions[1])])
    {
        texts.push((x, caption_y, caption));
        draw_panel(&mut img, (x, y), values, p.nu, p.nv, &l);
        frame(&mut img, x, y, l.panel_w, l.panel_h);
    }

    // Colour bar, ρ = 1 at the top.
    let bar_x = l.bar_x;
    let bar_h = l.panel_h.max(MIN_BAR_PX);
    let top = l.slice_at.1;
    for r in 0..bar_h {
        let rho = 1.0 - f64::from(r) / f64::from(bar_h - 1);
        fill(&mut img, bar_x, top + r, BAR_W, 1, grey(rho));
    }
    frame(&mut img, bar_x, top, BAR_W, bar_h);
    for (rho, s) in TICKS {
        let y = top + ((1.0 - rho) * f64::from(bar_h - 1)).round() as u32;
        fill(&mut img, bar_x + BAR_W, y, TICK_LEN, 1, INK);
        let ty = y.saturating_sub(TEXT_PX / 2);
        texts.push((bar_x + BAR_W + TICK_LEN + LABEL_GAP, ty, s));
    }
    texts.push((MARGIN, top + bar_h + 12, &footer));
    draw_texts(&mut img, &font, &texts)?;
    Ok(img)
}

/// Fills one panel: pixel block (cu, cv) shows the max over the `merge²`
/// elements it covers; image rows run downwards, `v` upwards.
fn draw_panel(
    img: &mut RgbImage,
    at: (u32, u32),
    values: &[f64],
    nu: usize,
    nv: usize,
    l: &Layout,
) {
    let (cols, rows) = (nu.div_ceil(l.merge), nv.div_ceil(l.merge));
    for cv in 0..rows {
        for cu in 0..cols {
            let mut v = f64::NAN;
            for ev in cv * l.merge..((cv + 1) * l.merge).min(nv) {
                for eu in cu * l.merge..((cu + 1) * l.merge).min(nu) {
                    v = v.max(values[eu + nu * ev]);
                }
            }
            let x = at.0 + cu as u32 * l.px;
            let y = at.1 + (rows - 1 - cv) as u32 * l.px;
            fill(img, x, y, l.px, l.px, grey(v));
        }
    }
}

fn fill(img: &mut RgbImage, x: u32, y: u32, w: u32, h: u32, c: Rgb<u8>) {
    for py in y..(y + h).min(img.height()) {
        for px in x..(x + w).min(img.width()) {
            img.put_pixel(px, py, c);
        }
    }
}

/// A 1-pixel frame just outside the `w × h` box at (`x`, `y`).
fn frame(img: &mut RgbImage, x: u32, y: u32, w: u32, h: u32) {
    fill(img, x - 1, y - 1, w + 2, 1, INK);
    fill(img, x - 1, y + h, w + 2, 1, INK);
    fill(img, x - 1, y - 1, 1, h + 2, INK);
    fill(img, x + w, y - 1, 1, h + 2, INK);
}
