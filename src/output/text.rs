//! Bitmap text for topopt's PNG views (the heat maps and plots use the
//! embedded TrueType font, `fonts`), from the public-domain 8×8 `font8x8`
//! glyphs drawn at an integer scale. A fixed-width font keeps label widths
//! computable before drawing (layout needs them) and avoids shipping a
//! TrueType font and rasterizer for a dozen numbers per image.

use font8x8::{UnicodeFonts, BASIC_FONTS, LATIN_FONTS};
use image::{Rgb, RgbImage};

/// Glyph scale: 8×8 cells drawn as 16×16 pixels, readable at 100 % zoom.
pub const SCALE: u32 = 2;
/// Advance and line height of one character, pixels.
pub const CHAR_PX: u32 = 8 * SCALE;

/// The 8 row bitmaps of `ch` (bit 0 = leftmost pixel), from ASCII or
/// Latin-1 (which holds `°` and `µ`); `?` for anything else.
fn glyph(ch: char) -> [u8; 8] {
    BASIC_FONTS
        .get(ch)
        .or_else(|| LATIN_FONTS.get(ch))
        .or_else(|| BASIC_FONTS.get('?'))
        .unwrap_or([0; 8])
}

/// Whether the font can draw `ch` (topopt's views label in ASCII and Latin-1).
#[cfg(test)]
pub fn has_glyph(ch: char) -> bool {
    BASIC_FONTS
        .get(ch)
        .or_else(|| LATIN_FONTS.get(ch))
        .is_some()
}

/// Width of `s` in pixels when drawn by [`draw`].
pub fn width(s: &str) -> u32 {
    u32::try_from(s.chars().count())
        .unwrap_or(u32::MAX)
        .saturating_mul(CHAR_PX)
}

/// Draws `s` with its top-left corner at (`x`, `y`); pixels falling outside
/// the image are skipped, so a label can never make drawing fail.
pub fn draw(img: &mut RgbImage, x: u32, y: u32, s: &str, color: Rgb<u8>) {
    for (k, ch) in s.chars().enumerate() {
        let x0 = x.saturating_add((k as u32).saturating_mul(CHAR_PX));
        for (row, bits) in glyph(ch).iter().enumerate() {
            for col in 0..8u32 {
                if bits & (1 << col) == 0 {
                    continue;
                }
                for sy in 0..SCALE {
                    for sx in 0..SCALE {
                        let px = x0.saturating_add(col * SCALE + sx);
                        let py = y.saturating_add(row as u32 * SCALE + sy);
                        if px < img.width() && py < img.height() {
                            img.put_pixel(px, py, color);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn degree_sign_and_micro_are_in_the_font() {
        assert!(has_glyph('°'));
        assert!(has_glyph('µ'));
        assert!(glyph('°').iter().any(|&r| r != 0));
        assert!(!has_glyph('€'));
    }

    #[test]
    fn draws_inside_and_clips_outside() {
        let mut img = RgbImage::from_pixel(20, 20, Rgb([255, 255, 255]));
        draw(&mut img, 10, 10, "88", Rgb([0, 0, 0]));
        let dark = img.pixels().filter(|p| p.0 == [0, 0, 0]).count();
        assert!(dark > 0);
        assert_eq!(width("88"), 2 * CHAR_PX);
    }
}
