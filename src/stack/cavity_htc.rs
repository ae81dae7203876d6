//! Wall-to-coolant heat-transfer coefficients for a cavity whose stack file
//! gives no `h`: the correlations 3D-ICE's papers build in. Microchannels
//! use the fully developed laminar Nusselt number of a rectangular duct
//! (Shah and London, as in the ICCAD 2010 4RM paper, eqs. 12–13), which
//! needs the coolant's conductivity; porous microchannels project the side
//! walls' share onto the top and bottom (THERMINIC 2010, eq. 5); pin fins
//! use the dimensional fit of THERMINIC 2010 eq. 8 (water), which is what
//! 3D-ICE 4.0 applies to every `pinfin` cavity. SI units throughout.

/// Nusselt number of fully developed laminar flow in a rectangular duct,
/// axially uniform heat flux and peripherally uniform wall temperature
/// (Shah and London's H1 fit); `aspect` is short side over long side, in
/// (0, 1]. The fit gives 8.235 for parallel plates and 3.608 for a square.
pub fn duct_nusselt(aspect: f64) -> f64 {
    let a = aspect;
    8.235
        * (1.0 - 2.0421 * a + 3.0853 * a.powi(2) - 2.4765 * a.powi(3) + 1.0578 * a.powi(4)
            - 0.1861 * a.powi(5))
}

/// h = k·Nu/d_h, W/(m²·K), on every wall of a channel `width` wide and
/// `height` tall; d_h = 2·w·t/(w + t), the aspect the smaller over the
/// larger side (the fit is written for aspects up to 1).
pub fn channel_h(conductivity: f64, width: f64, height: f64) -> f64 {
    let aspect = width.min(height) / width.max(height);
    let hydraulic = 2.0 * width * height / (width + height);
    conductivity * duct_nusselt(aspect) / hydraulic
}

/// The 2RM's projected coefficient on the top and bottom walls: the
/// channel's wetted perimeter 2·(w + t) per pitch, projected onto the
/// 2·pitch of top and bottom, h_eff = h·(w + t)/pitch.
pub fn porous_channel_h(conductivity: f64, width: f64, height: f64, pitch: f64) -> f64 {
    channel_h(conductivity, width, height) * (width + height) / pitch
}

/// The pin fins' effective coefficient on the top and bottom walls for a
/// Darcy (superficial) velocity `v` m/s: 1/(2.527e-5/(v + 1.35)^n +
/// 1.533e-6), n = 0.64 inline, 1.52 staggered.
pub fn pin_fin_h(darcy_velocity: f64, staggered: bool) -> f64 {
    let n = if staggered { 1.52 } else { 0.64 };
    1.0 / (2.527e-5 / (darcy_velocity + 1.35).powf(n) + 1.533e-6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duct_nusselt_matches_the_tabulated_limits() {
        // Shah and London's table: parallel plates 8.235, square 3.608,
        // aspect 1/2 4.123, 1/4 5.331.
        for (a, nu) in [(1e-12, 8.235), (1.0, 3.608), (0.5, 4.123), (0.25, 5.331)] {
            let got = duct_nusselt(a);
            assert!((got - nu).abs() < 0.005 * nu, "aspect {a}: {got} vs {nu}");
        }
    }

    #[test]
    fn channel_h_is_k_nu_over_the_hydraulic_diameter() {
        // 50 µm × 100 µm water channel: d_h = 66.67 µm, Nu(1/2) = 4.1258.
        let h = channel_h(0.6069, 50e-6, 100e-6);
        let want = 0.6069 * duct_nusselt(0.5) / (2.0 * 50e-6 * 100e-6 / 150e-6);
        assert!((h - want).abs() < 1e-9 * want);
        assert!((h - 37_560.0).abs() < 50.0, "{h}");
        // Same channel lying flat: the same duct.
        assert_eq!(h, channel_h(0.6069, 100e-6, 50e-6));
        let p = porous_channel_h(0.6069, 50e-6, 100e-6, 100e-6);
        assert!((p - 1.5 * h).abs() < 1e-9 * p);
    }

    #[test]
    fn pin_fin_h_follows_the_fit() {
        // By hand at 1.1066 m/s: (2.4566)^0.64 = 1.777518, ^1.52 = 3.920201.
        let inline = 1.0 / (2.527e-5 / 1.777518 + 1.533e-6);
        let staggered = 1.0 / (2.527e-5 / 3.920201 + 1.533e-6);
        assert!((pin_fin_h(1.1066, false) - inline).abs() < 1e-6 * inline);
        assert!((pin_fin_h(1.1066, true) - staggered).abs() < 1e-6 * staggered);
        assert!(pin_fin_h(2.0, false) > pin_fin_h(1.0, false));
    }
}
