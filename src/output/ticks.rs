//! Round tick values and their labels for the pictures: the heat map's colour
//! bar and axes and the line plot's axes. Ticks are multiples of a round step
//! (1, 2, 2.5 or 5 × 10^k) chosen so that neighbouring labels are at least a
//! given distance apart: labels can never collide, and, printed with the
//! decimals the step needs, never read the same.

/// The smallest round step (1, 2, 2.5 or 5 × 10^k) that is at least `min_step`.
pub fn round_step_at_least(min_step: f64) -> f64 {
    if !(min_step.is_finite() && min_step > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(min_step.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= min_step * (1.0 - 1e-12))
        .unwrap_or(10.0 * mag)
}

/// The fewest decimals (0 to 15) that show multiples of `step` exactly,
/// e.g. 0 for 10, 1 for 2.5, 2 for 0.25.
pub fn decimals_for(step: f64) -> usize {
    if !(step.is_finite() && step > 0.0) {
        return 2;
    }
    (0..15)
        .find(|&d| {
            let scaled = step * 10f64.powi(d as i32);
            scaled.round() >= 1.0 && (scaled - scaled.round()).abs() < 1e-6 * scaled
        })
        .unwrap_or(15)
}

/// Multiples of `step` inside [lo, hi] (at most 1000; none for a bad step).
pub fn multiples_in(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    if !(step > 0.0 && lo.is_finite() && hi.is_finite() && hi >= lo) {
        return Vec::new();
    }
    let (first, last) = ((lo / step).ceil(), (hi / step).floor());
    if last - first > 1000.0 {
        return Vec::new();
    }
    // Integer multiples: no accumulated float noise (`0.6`, not `0.6000000000000001`).
    let (first, last) = (first as i64, last as i64);
    (first..=last).map(|k| k as f64 * step).collect()
}

/// Ticks for a scale of `length_px` pixels showing [lo, hi], each label at
/// least `min_gap_px` from the next: (value, label) pairs, labels distinct.
pub fn spaced(lo: f64, hi: f64, length_px: f64, min_gap_px: f64) -> Vec<(f64, String)> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0 && length_px > 0.0) {
        return Vec::new();
    }
    // Not finer than the floats can hold (values near 1e17 are 16 apart).
    let ulp = hi.abs().max(lo.abs()) * f64::EPSILON;
    let step = round_step_at_least((span * min_gap_px / length_px).max(4.0 * ulp));
    let dec = decimals_for(step);
    let t: Vec<(f64, String)> = multiples_in(lo, hi, step)
        .into_iter()
        .map(|v| (v, fixed(v, dec)))
        .collect();
    if t.len() >= 2 || length_px < min_gap_px {
        return t;
    }
    // No two round values fit: label the ends, with the decimals that tell
    // them apart.
    let dec = (0..15)
        .find(|&d| fixed(lo, d) != fixed(hi, d))
        .unwrap_or(15);
    vec![(lo, fixed(lo, dec)), (hi, fixed(hi, dec))]
}

/// `v` with `dec` decimals, never `-0`.
pub fn fixed(v: f64, dec: usize) -> String {
    let s = format!("{v:.dec$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// A tick value without float noise when its step is unknown (plotters
/// picks the line plot's ticks): the fewest decimals (up to 9) that show
/// `v` to within a billionth of the axis span.
pub fn clean(v: f64, span: f64) -> String {
    let tol = 1e-9 * span.abs().max(v.abs()).max(f64::MIN_POSITIVE);
    let dec = (0..9)
        .find(|&d| {
            let p = 10f64.powi(d as i32);
            ((v * p).round() / p - v).abs() <= tol
        })
        .unwrap_or(9);
    fixed(v, dec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_round() {
        assert_eq!(round_step_at_least(7.0), 10.0);
        assert_eq!(round_step_at_least(0.21), 0.25);
        assert_eq!(round_step_at_least(2.0), 2.0);
        assert_eq!(round_step_at_least(0.0031), 0.005);
        assert_eq!(decimals_for(10.0), 0);
        assert_eq!(decimals_for(0.25), 2);
        assert_eq!(decimals_for(2.5), 1);
        assert_eq!(decimals_for(0.01), 2);
        assert_eq!(decimals_for(5e-9), 9);
    }

    #[test]
    fn spaced_ticks_keep_their_distance_and_read_differently() {
        for (lo, hi, len) in [
            (45.3, 83.9, 512.0),
            (300.0, 300.004, 192.0),
            (1e17, 1e17 + 64.0, 300.0),
            (-0.7, 0.2, 100.0),
            (0.0, 1e-7, 700.0),
        ] {
            let t = spaced(lo, hi, len, 24.0);
            assert!(!t.is_empty(), "{lo}..{hi}");
            for w in t.windows(2) {
                let gap = (w[1].0 - w[0].0) / (hi - lo) * len;
                assert!(gap >= 24.0 * (1.0 - 1e-9), "{lo}..{hi}: {t:?}");
                assert_ne!(w[0].1, w[1].1, "{lo}..{hi}");
            }
            assert!(t.iter().all(|(v, _)| (lo..=hi).contains(v)));
        }
    }

    #[test]
    fn labels_have_no_float_noise() {
        assert_eq!(multiples_in(0.0, 1.0, 0.2)[3], 0.6000000000000001);
        assert_eq!(clean(0.6000000000000001, 1.0), "0.6");
        assert_eq!(clean(0.015, 0.1), "0.015");
        assert_eq!(clean(2.0, 10.0), "2");
        assert_eq!(fixed(-0.0001, 2), "0.00");
        assert_eq!(fixed(-1.5, 1), "-1.5");
    }
}
