//! The `[layers.cavity]` keys of the porous models and of the correlations:
//! each error names the file and the field, and a cavity without `h`
//! takes 3D-ICE's coefficient for its model.

use super::htc;
use crate::stack::{CavityModel, Stack};
use std::path::Path;

fn text(cavity: &str) -> String {
    format!(
        r#"
[chip]
width = "400 um"
length = "1 mm"
[grid]
nx = 2
ny = 4
[boundary]
ambient = 300
[materials]
si = {{ k = 150, heat_capacity = 1.6e6 }}
[[layers]]
name = "die"
material = "si"
thickness = "50 um"
[[layers]]
name = "cavity"
material = "si"
thickness = "100 um"
[layers.cavity]
inlet = "300 K"
direction = "+y"
{cavity}
[[layers]]
name = "lid"
material = "si"
thickness = "50 um"
"#
    )
}

const TWO_RM: &str = r#"model = "2rm"
channel_width = "50 um"
wall_width = "50 um"
flow = "1 ml/min"
coolant = { heat_capacity = 4.172638e6, conductivity = 0.6069 }"#;

const PIN_FIN: &str = r#"model = "pinfin"
pin_diameter = "50 um"
pin_pitch = "100 um"
pin_distribution = "staggered"
darcy_velocity = "1.1066 m/s"
coolant = { heat_capacity = 4.172638e6 }"#;

fn cavity(body: &str) -> super::Cavity {
    let stack = Stack::from_toml(&text(body), Path::new("c.toml")).unwrap();
    stack.layers[1].cavity.clone().unwrap()
}

fn err(body: &str) -> String {
    Stack::from_toml(&text(body), Path::new("c.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn without_h_the_models_take_3dice_correlations() {
    let c = cavity(TWO_RM);
    let want = htc::porous_channel_h(0.6069, 50e-6, 100e-6, 100e-6);
    assert_eq!((c.h_side, c.h_top, c.h_bottom), (0.0, want, want));
    assert_eq!(c.porosity(), Some(0.5));
    let c = cavity(PIN_FIN);
    let want = htc::pin_fin_h(1.1066, true);
    assert!((c.h_top - want).abs() < 1e-9 * want && c.h_bottom == c.h_top);
    let eps = 1.0 - std::f64::consts::PI * 0.25 / 4.0;
    assert!((c.porosity().unwrap() - eps).abs() < 1e-15);
    assert!(matches!(c.model, CavityModel::PinFin { .. }));
    // Darcy velocity × the cross-section across the flow (400 µm × 100 µm).
    assert!((c.flow_m3_s - 1.1066 * 400e-6 * 100e-6).abs() < 1e-18);
    let four = TWO_RM.replace("\"2rm\"", "\"4rm\"").replace(
        "flow =",
        "first_wall_width = \"25 um\"\nlast_wall_width = \"25 um\"\nflow =",
    );
    let stack = Stack::from_toml(
        &text(&four).replace("nx = 2", "nx = 9"),
        Path::new("c.toml"),
    )
    .unwrap();
    let c = stack.layers[1].cavity.clone().unwrap();
    let h = htc::channel_h(0.6069, 50e-6, 100e-6);
    assert_eq!((c.h_side, c.h_top, c.h_bottom), (h, h, h));
    // A given h wins over the correlation.
    let c = cavity(&format!("{PIN_FIN}\nh = 3e4"));
    assert_eq!((c.h_top, c.h_bottom), (3e4, 3e4));
}

#[test]
fn porous_keys_fail_naming_the_field() {
    let cases = [
        (
            TWO_RM.replace(", conductivity = 0.6069", ""),
            "cavity.coolant.conductivity",
            "is required when `h` is not given",
        ),
        (
            format!("{TWO_RM}\nh = {{ side = 1e4, top = 2e4, bottom = 2e4 }}"),
            "cavity.h.side",
            "porous",
        ),
        (
            format!("{TWO_RM}\nfirst_wall_width = \"25 um\""),
            "cavity.first_wall_width",
            "does not apply to model 2rm",
        ),
        (
            TWO_RM.replace("wall_width = \"50 um\"\n", ""),
            "cavity.wall_width",
            "is required by model 2rm",
        ),
        (
            PIN_FIN.replace("pin_diameter = \"50 um\"", "pin_diameter = \"100 um\""),
            "cavity.pin_diameter",
            "smaller than `pin_pitch`",
        ),
        (
            PIN_FIN.replace("pin_distribution = \"staggered\"\n", ""),
            "cavity.pin_distribution",
            "inline",
        ),
        (
            PIN_FIN.replace("darcy_velocity = \"1.1066 m/s\"", "flow = \"1 ml/min\""),
            "cavity.flow",
            "darcy_velocity",
        ),
        (
            PIN_FIN.replace("1.1066 m/s", "1.1 furlong/s"),
            "line 27",
            "is not a velocity",
        ),
        (
            format!("{PIN_FIN}\nchannel_width = \"50 um\""),
            "cavity.channel_width",
            "does not apply to model pinfin",
        ),
        (
            format!("{PIN_FIN}\nh = {{ top = -1, bottom = 2e4 }}"),
            "cavity.h.top",
            "positive",
        ),
    ];
    for (body, field, words) in cases {
        let e = err(&body);
        assert!(
            e.contains("c.toml") && e.contains(field) && e.contains(words),
            "{field}: {e}"
        );
    }
}
