//! The one font the pictures are drawn with: DejaVu Sans (Bitstream Vera
//! licence, free to embed) from the `dejavu` crate, compiled into the binary
//! and registered with plotters' `ab_glyph` backend on first use, so a
//! machine without system fonts (CI) draws the same labels. Text is drawn
//! through [`draw_text`], which places every glyph at its own bearing.

use ab_glyph::{Font, FontRef, ScaleFont};
use plotters::coord::Shift;
use plotters::prelude::{DrawingArea, DrawingBackend};
use plotters::style::text_anchor::{HPos, Pos};
use plotters::style::{FontDesc, FontStyle, IntoFont, TextStyle};
use std::sync::OnceLock;

/// Family name the font is registered under.
const FAMILY: &str = "cuth-sans";

/// Why a picture could not be drawn (a font or drawing-backend fault, or a
/// caller's inconsistent input): the caller adds the file name.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DrawError(pub String);

impl DrawError {
    pub fn from_any(e: impl std::fmt::Display) -> DrawError {
        DrawError(e.to_string())
    }
}

/// The sans-serif font at `px` pixels; registers it once per process.
pub fn sans(px: u32) -> Result<FontDesc<'static>, DrawError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular()).is_ok()
    });
    if ok {
        Ok((FAMILY, f64::from(px)).into_font())
    } else {
        Err(DrawError(
            "the embedded DejaVu Sans font does not load".into(),
        ))
    }
}

/// Width of `s` in `font`, pixels (a generous guess if the font cannot tell).
pub fn text_width(s: &str, font: &FontDesc) -> u32 {
    font.box_size(s)
        .map(|(w, _)| w)
        .unwrap_or(s.chars().count() as u32 * 10)
}

/// The embedded font as `ab_glyph` reads it, for glyph metrics.
fn face() -> Result<&'static FontRef<'static>, DrawError> {
    static FACE: OnceLock<Option<FontRef<'static>>> = OnceLock::new();
    FACE.get_or_init(|| FontRef::try_from_slice(dejavu::sans::regular()).ok())
        .as_ref()
        .ok_or_else(|| DrawError("the embedded DejaVu Sans font does not load".into()))
}

/// Draws `s` in `style` with its anchor at `at`, one glyph at a time.
///
/// plotters' `ab_glyph` text drawing puts each glyph's bitmap at the pen
/// position and drops the glyph's left side bearing, so every glyph moves
/// left by its own bearing: a glyph with almost none (`_`, `°`) then stands
/// apart from the letter before it (`CORE _DIE`). Here the pen advances by
/// the font's advances and kerning, and each glyph is drawn alone at the pen
/// plus its bearing; the string's width and vertical placement are
/// plotters' own, so anchors behave as they did.
pub fn draw_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    s: &str,
    style: &TextStyle,
    at: (i32, i32),
) -> Result<(), DrawError> {
    let width = text_width(s, &style.font) as i32;
    let left = match style.pos.h_pos {
        HPos::Left => at.0,
        HPos::Center => at.0 - width / 2,
        HPos::Right => at.0 - width,
    };
    let glyph_style = style.pos(Pos::new(HPos::Left, style.pos.v_pos));
    let font = face()?.as_scaled(style.font.get_size() as f32);
    let (mut pen, mut prev) = (0f32, None);
    let mut buf = [0u8; 4];
    for c in s.chars() {
        let id = font.glyph_id(c);
        if let Some(p) = prev {
            pen += font.kern(p, id);
        }
        prev = Some(id);
        if let Some(g) = font.outline_glyph(id.with_scale(font.scale())) {
            let x = left + (pen + g.px_bounds().min.x).round() as i32;
            area.draw_text(c.encode_utf8(&mut buf), &glyph_style, (x, at.1))
                .map_err(DrawError::from_any)?;
        }
        pen += font.h_advance(id);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use plotters::prelude::{BitMapBackend, IntoDrawingArea, BLACK};

    /// Ink columns (a pixel darker than mid-grey) of the rows `rows` of a
    /// `w`-wide RGB buffer: (first, last).
    fn ink(buf: &[u8], w: usize, rows: std::ops::Range<usize>) -> (usize, usize) {
        let cols: Vec<usize> = (0..w)
            .filter(|&x| rows.clone().any(|y| buf[3 * (x + w * y)] < 128))
            .collect();
        (cols[0], *cols.last().unwrap())
    }

    /// The blank between `E` and `_` is the one the font's metrics give
    /// (E's right bearing plus `_`'s left bearing), not widened by E's left
    /// bearing as plotters' own text drawing does.
    #[test]
    fn underscore_follows_the_letter_before_it() {
        let (w, h) = (200usize, 80usize);
        let px = 48;
        let mut buf = vec![255u8; 3 * w * h];
        {
            let root =
                BitMapBackend::with_buffer(&mut buf, (w as u32, h as u32)).into_drawing_area();
            let font = sans(px).unwrap();
            draw_text(&root, "E_", &font.color(&BLACK), (10, 10)).unwrap();
            root.present().unwrap();
        }
        // Rows holding E (above the baseline) and `_` (below it).
        let rows: Vec<usize> = (0..h)
            .filter(|&y| (0..w).any(|x| buf[3 * (x + w * y)] < 128))
            .collect();
        let (top, bottom) = (rows[0], *rows.last().unwrap());
        let (_, e_right) = ink(&buf, w, top..top + 10);
        let (u_left, _) = ink(&buf, w, bottom - 1..bottom + 1);
        let measured = u_left as f64 - (e_right + 1) as f64;

        // The outlines' exact extents, in font units scaled to pixels.
        let font = face().unwrap().as_scaled(px as f32);
        let (e, u) = (font.glyph_id('E'), font.glyph_id('_'));
        let extent = |id| face().unwrap().outline(id).unwrap().bounds;
        let inked = (extent(u).min.x - extent(e).max.x) * font.h_scale_factor();
        let expected = f64::from(font.h_advance(e) + font.kern(e, u) + inked);
        assert!(
            (measured - expected).abs() <= 1.5,
            "gap {measured} px, the font's {expected} px"
        );
    }
}
