//! Optimality Criteria update (Bendsøe 1995; top88/top3d form):
//! xᵢ ← clamp(xᵢ · √(−∂c/∂xᵢ / (λ ∂V/∂xᵢ)), xᵢ ± move, [0, 1]),
//! with the Lagrange multiplier λ found so that the volume of the PHYSICAL
//! field (filtered and projected, passive elements included) equals Vf. With
//! a projection the physical volume is not linear in x, so each trial λ
//! re-filters and re-projects; V(λ) is monotone decreasing, so λ is found by
//! bisection on log λ. Plain halving needs ~60 trials to 1e-9; we bisect with
//! the Illinois variant of regula falsi (still bracketing, so it cannot
//! diverge), which needs ~10, because each trial costs a filter pass.
//!
//! [`search`] is the multiplier search alone, over a closure that forms a
//! trial and returns its volume error: the optimizer runs it with trials on
//! the device ([`super::design::DesignBackend::oc_trial`]); [`prepare`] and
//! [`trial`] are the host versions of the per-element work.

use rayon::prelude::*;

/// Volume error at which the multiplier search stops.
const VOL_TOL: f64 = 1e-7;
/// Most volume evaluations per update.
const MAX_EVALS: usize = 200;

#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct OcInfo {
    pub lambda: f64,
    /// Physical volume fraction of the new design.
    pub volume: f64,
    pub evaluations: usize,
}

/// The inputs of one OC step.
pub struct OcStep<'a> {
    /// Current design.
    pub x: &'a [f64],
    /// ∂c/∂x (≤ 0).
    pub dc: &'a [f64],
    /// ∂V/∂x (≥ 0).
    pub dv: &'a [f64],
    /// `design[i]` false keeps `x[i]` (passive).
    pub design: &'a [bool],
    pub move_limit: f64,
    /// Volume fraction to meet.
    pub target: f64,
    /// The multiplier of the previous step, where the search starts.
    pub lambda_hint: Option<f64>,
}

/// ratioᵢ = −dcᵢ/dvᵢ (−1 where dv is numerically 0), its root where the
/// element is a design variable (−1 keeps xᵢ), and Σ ln ratio over design
/// elements with ratio > 0 with their count (chunked, added in order), whose
/// mean centres the multiplier bracket.
pub fn prepare(dc: &[f64], dv: &[f64], design: &[bool]) -> (Vec<f64>, f64, usize) {
    let ratio: Vec<f64> = dc
        .par_iter()
        .zip(dv.par_iter())
        .map(|(&c, &v)| if v > 1e-300 { (-c).max(0.0) / v } else { -1.0 })
        .collect();
    let parts: Vec<(f64, usize)> = ratio
        .par_chunks(8192)
        .zip(design.par_chunks(8192))
        .map(|(r, d)| {
            r.iter()
                .zip(d)
                .filter(|(&r, &d)| d && r > 0.0)
                .fold((0.0, 0usize), |(s, n), (&r, _)| (s + r.ln(), n + 1))
        })
        .collect();
    let (sum_log, count) = parts
        .iter()
        .fold((0.0, 0), |(s, n), &(a, b)| (s + a, n + b));
    // √ratio once; a trial then costs a multiply and a clamp per element.
    let root: Vec<f64> = ratio
        .par_iter()
        .zip(design.par_iter())
        .map(|(&r, &d)| if d && r >= 0.0 { r.sqrt() } else { -1.0 })
        .collect();
    (root, sum_log, count)
}

/// The trial design of multiplier λ, given `scale` = 1/√λ:
/// outᵢ = clamp(xᵢ rootᵢ scale, [xᵢ − move, xᵢ + move] ∩ [0, 1]), or xᵢ
/// where rootᵢ < 0.
pub fn trial(x: &[f64], root: &[f64], scale: f64, move_limit: f64, out: &mut [f64]) {
    out.par_iter_mut()
        .zip(x.par_iter().zip(root.par_iter()))
        .for_each(|(o, (&xi, &s))| {
            *o = if s < 0.0 {
                xi
            } else {
                (xi * s * scale).clamp((xi - move_limit).max(0.0), (xi + move_limit).min(1.0))
            };
        });
}

/// The centre of the bracket: mean of ln ratio, 0 without any.
pub fn centre(sum_log: f64, count: usize) -> f64 {
    if count > 0 {
        sum_log / count as f64
    } else {
        0.0
    }
}

/// One OC step into `out`; `volume(x_new)` returns the physical volume
/// fraction of a trial design. Where dv is (numerically) zero the update
/// ratio is undefined and `x` is kept.
pub fn update(step: &OcStep, mut volume: impl FnMut(&[f64]) -> f64, out: &mut [f64]) -> OcInfo {
    let (root, sum_log, count) = prepare(step.dc, step.dv, step.design);
    let found = search(
        centre(sum_log, count),
        step.lambda_hint,
        step.target,
        |t: f64| -> Result<f64, std::convert::Infallible> {
            trial(step.x, &root, (-0.5 * t).exp(), step.move_limit, out);
            Ok(volume(out) - step.target)
        },
    );
    match found {
        Ok(info) => info,
        Err(never) => match never {},
    }
}

/// The multiplier search: `eval(t)` forms the trial design of λ = eᵗ (the
/// last call's design is the step's result) and returns its volume minus
/// the target, g(t), decreasing in t. Written once for every backend: only
/// the scalar g crosses to the host.
pub fn search<E>(
    centre: f64,
    lambda_hint: Option<f64>,
    target: f64,
    mut eval: impl FnMut(f64) -> Result<f64, E>,
) -> Result<OcInfo, E> {
    // Bracket g(lo) ≥ 0 ≥ g(hi), g decreasing in log λ: from the previous
    // step's λ (it changes little between iterations) or the centre, step
    // outwards with growing strides. Beyond centre ± 60 (e^60) every design
    // element sits at its move limit and g is flat: Vf is out of reach, and
    // the extreme step is taken.
    let t0 = lambda_hint
        .map(f64::ln)
        .filter(|t| t.is_finite() && (t - centre).abs() < 60.0)
        .unwrap_or(centre);
    let g0 = eval(t0)?;
    let mut evaluations = 1;
    let dir = if g0 > 0.0 { 1.0 } else { -1.0 };
    let (mut ta, mut ga, mut stride) = (t0, g0, 0.25);
    let (mut lo, mut g_lo, mut hi, mut g_hi) = loop {
        if ga == 0.0 {
            return Ok(OcInfo {
                lambda: ta.exp(),
                volume: target,
                evaluations,
            });
        }
        let tb = ta + dir * stride;
        let gb = eval(tb)?;
        evaluations += 1;
        if gb * g0 <= 0.0 {
            break if dir > 0.0 {
                (ta, ga, tb, gb)
            } else {
                (tb, gb, ta, ga)
            };
        }
        if (tb - centre).abs() > 60.0 {
            return Ok(OcInfo {
                lambda: tb.exp(),
                volume: gb + target,
                evaluations,
            });
        }
        (ta, ga, stride) = (tb, gb, stride * 4.0);
    };
    let (mut t, mut g) = (hi, g_hi);
    let mut side = 0i8;
    while evaluations < MAX_EVALS && g.abs() > VOL_TOL && hi - lo > 1e-13 {
        // Regula falsi point, kept inside the bracket; fall back to halving
        // when it lands on an end (flat pieces of g).
        let mut next = hi - g_hi * (hi - lo) / (g_hi - g_lo);
        if !(next > lo + 1e-3 * (hi - lo) && next < hi - 1e-3 * (hi - lo)) {
            next = 0.5 * (lo + hi);
        }
        t = next;
        g = eval(t)?;
        evaluations += 1;
        if g > 0.0 {
            lo = t;
            g_lo = g;
            if side == -1 {
                g_hi *= 0.5; // Illinois: the stale end loses weight.
            }
            side = -1;
        } else {
            hi = t;
            g_hi = g;
            if side == 1 {
                g_lo *= 0.5;
            }
            side = 1;
        }
    }
    // The design of the last trial, `t`, is the step's.
    Ok(OcInfo {
        lambda: t.exp(),
        volume: g + target,
        evaluations,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meets_a_linear_volume_and_respects_the_move_limit() {
        let n = 1000;
        let x = vec![0.3; n];
        let dc: Vec<f64> = (0..n)
            .map(|i| -1.0 - (i as f64 / 50.0).sin().abs())
            .collect();
        let dv = vec![1.0 / n as f64; n];
        let design: Vec<bool> = (0..n).map(|i| i % 10 != 0).collect();
        let mut out = vec![0.0; n];
        let vol = |y: &[f64]| y.iter().sum::<f64>() / n as f64;
        let step = OcStep {
            x: &x,
            dc: &dc,
            dv: &dv,
            design: &design,
            move_limit: 0.2,
            target: 0.3,
            lambda_hint: None,
        };
        let info = update(&step, vol, &mut out);
        assert!((info.volume - 0.3).abs() <= VOL_TOL, "{info:?}");
        assert!((vol(&out) - info.volume).abs() < 1e-15);
        assert!(out.iter().all(|&v| (v - 0.3).abs() <= 0.2 + 1e-15));
        assert!((0..n).filter(|i| i % 10 == 0).all(|i| out[i] == 0.3));
        assert!(info.evaluations < 30, "{info:?}");
        // Warm start from the multiplier found: a handful of trials.
        let warm = OcStep {
            lambda_hint: Some(info.lambda * 1.1),
            ..step
        };
        let again = update(&warm, vol, &mut out);
        assert!((again.volume - 0.3).abs() <= VOL_TOL, "{again:?}");
        assert!(again.evaluations <= 6, "{again:?}");
    }
}
