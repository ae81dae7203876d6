//! The one font the pictures are drawn with: DejaVu Sans (Bitstream Vera
//! licence, free to embed) from the `dejavu` crate, compiled into the binary
//! and registered with plotters' `ab_glyph` backend on first use, so a
//! machine without system fonts (CI) draws the same labels.

use plotters::style::{FontDesc, FontStyle, IntoFont};
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
