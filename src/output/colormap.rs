//! The heat-map palette: matplotlib's *inferno* (Smith & van der Walt,
//! released CC0), exactly, as the `colorous` crate ships it (d3's 256-entry
//! table). Inferno is perceptually uniform and monotone in lightness
//! (black → purple → orange → pale yellow), so "brighter is hotter" holds in
//! greyscale prints and for colour-blind readers, which rainbow maps do not give.

/// Colour for a normalized value `t` in [0, 1]; values outside are clamped,
/// and NaN maps to the cold end, so a caller that wants absent cells visible
/// (the heat map hatches them) must check for them itself.
pub fn inferno(t: f64) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let c = colorous::INFERNO.eval_continuous(t);
    [c.r, c.g, c.b]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_matplotlib_inferno() {
        // matplotlib's _inferno_data rows 0, 64, 128, 192 and 255, × 255.
        let rows: [(usize, [f64; 3]); 5] = [
            (0, [0.001462, 0.000466, 0.013866]),
            (64, [0.341500, 0.062325, 0.429425]),
            (128, [0.735683, 0.215906, 0.330245]),
            (192, [0.978422, 0.557937, 0.034931]),
            (255, [0.988362, 0.998364, 0.644924]),
        ];
        for (i, rgb) in rows {
            let c = inferno(i as f64 / 255.0);
            for k in 0..3 {
                let want = rgb[k] * 255.0;
                assert!(
                    (f64::from(c[k]) - want).abs() <= 1.5,
                    "row {i}: {c:?} vs {rgb:?}"
                );
            }
        }
    }

    #[test]
    fn clamps_and_nan_is_cold() {
        assert_eq!(inferno(-3.0), inferno(0.0));
        assert_eq!(inferno(7.0), inferno(1.0));
        assert_eq!(inferno(f64::NAN), inferno(0.0));
    }

    #[test]
    fn lightness_increases() {
        // Relative luminance (linear sRGB, Rec. 709 weights): must rise.
        let lin = |u: u8| {
            let c = f64::from(u) / 255.0;
            if c <= 0.04045 {
                c / 12.92
            } else {
                ((c + 0.055) / 1.055).powf(2.4)
            }
        };
        let luma = |c: [u8; 3]| 0.2126 * lin(c[0]) + 0.7152 * lin(c[1]) + 0.0722 * lin(c[2]);
        let mut prev = -1.0;
        for i in 0..=255 {
            let l = luma(inferno(i as f64 / 255.0));
            assert!(l >= prev, "luma falls at t = {}", i as f64 / 255.0);
            prev = l;
        }
    }
}
