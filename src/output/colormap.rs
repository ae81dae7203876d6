//! The heat-map palette: matplotlib's *inferno* (Smith & van der Walt,
//! released CC0), kept as 18 evenly spaced 8-bit control points and linearly
//! interpolated in sRGB. Inferno is perceptually uniform and monotone in
//! lightness (black → purple → orange → pale yellow), so "brighter is hotter"
//! holds in greyscale prints and for colour-blind readers, which rainbow maps
//! do not give.

/// Inferno sampled at t = i/17, i = 0..=17 (sRGB, 8 bits per channel).
const INFERNO: [[u8; 3]; 18] = [
    [0, 0, 4],
    [10, 7, 34],
    [30, 12, 69],
    [56, 9, 98],
    [81, 14, 108],
    [105, 22, 110],
    [128, 31, 108],
    [152, 39, 102],
    [176, 49, 91],
    [198, 61, 77],
    [217, 77, 61],
    [233, 97, 43],
    [244, 121, 24],
    [250, 148, 7],
    [252, 176, 20],
    [248, 205, 55],
    [242, 234, 105],
    [252, 255, 164],
];

/// Colour for a normalized value `t` in [0, 1]; values outside are clamped,
/// and NaN (a cell the solver left undefined) maps to the cold end so that a
/// caller that wants it visible must check for it itself.
pub fn inferno(t: f64) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let last = INFERNO.len() - 1;
    let pos = t * last as f64;
    // `pos` is in [0, last], so the cast cannot wrap; `min` keeps t = 1 in range.
    let i = (pos.floor() as usize).min(last - 1);
    let f = pos - i as f64;
    let (a, b) = (INFERNO[i], INFERNO[i + 1]);
    std::array::from_fn(|c| {
        let v = f64::from(a[c]) + f * (f64::from(b[c]) - f64::from(a[c]));
        v.round().clamp(0.0, 255.0) as u8
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ends_and_clamping() {
        assert_eq!(inferno(0.0), INFERNO[0]);
        assert_eq!(inferno(1.0), INFERNO[17]);
        assert_eq!(inferno(-3.0), INFERNO[0]);
        assert_eq!(inferno(7.0), INFERNO[17]);
        assert_eq!(inferno(f64::NAN), INFERNO[0]);
    }

    #[test]
    fn interpolates_between_control_points() {
        // Halfway between points 8 and 9.
        assert_eq!(inferno(8.5 / 17.0), [187, 55, 84]);
    }

    #[test]
    fn lightness_increases() {
        // Rec. 709 luma as a proxy for lightness: must rise monotonically.
        let luma = |c: [u8; 3]| 0.2126 * c[0] as f64 + 0.7152 * c[1] as f64 + 0.0722 * c[2] as f64;
        let mut prev = -1.0;
        for i in 0..=100 {
            let l = luma(inferno(i as f64 / 100.0));
            assert!(l >= prev, "luma falls at t = {}", i as f64 / 100.0);
            prev = l;
        }
    }
}
