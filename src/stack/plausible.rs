//! Plausibility warnings ("no surprises"): values that are valid
//! but almost certainly a unit slip. They do not stop a run; the CLI prints
//! them on stderr, `summary.json` lists them under `warnings`, and
//! `--strict` turns them into input errors (exit 2).
//!
//! The rules:
//! - a layer `thickness` written as a bare number (metres) of 1 cm or more
//!   in a die layer: every layer except those whose name or material name
//!   contains `sink`, `spreader`, `lid`, `ihs`, `package`, `pcb` or `board`
//!   (case-insensitive), where centimetres are normal;
//! - a layer thinner than 1 nm;
//! - an ambient below 200 K or above 500 K (`ambient = 45` meant °C);
//! - a power density above 1 kW/cm² (1e7 W/m²) in a `uniform` layer or an
//!   inline block (here, from the stack file alone), or in a floorplan block
//!   powered by a `.ptrace` or a raster's hottest cell
//!   ([`power_density_warning`], called by `power::density` once the files
//!   are read).

use super::{PowerSpec, Stack};

const PACKAGE_WORDS: &[&str] = &["sink", "spreader", "lid", "ihs", "package", "pcb", "board"];

/// Whether a layer is package (centimetre thicknesses are normal there).
fn is_package(name: &str, material: &str) -> bool {
    let (n, m) = (name.to_lowercase(), material.to_lowercase());
    PACKAGE_WORDS.iter().any(|w| n.contains(w) || m.contains(w))
}

/// 1 kW/cm² in W/m².
pub const MAX_POWER_DENSITY: f64 = 1e7;

/// The warning for `density_w_m2` (W/m²) at `what` of layer `l`, when it is
/// above 1 kW/cm²; the same words as the stack file's own sources get.
pub fn power_density_warning(
    stack: &Stack,
    l: usize,
    what: &str,
    density_w_m2: f64,
) -> Option<String> {
    let name = stack.layers.get(l).map_or("?", |layer| layer.name.as_str());
    (density_w_m2 > MAX_POWER_DENSITY).then(|| {
        format!(
            "{}: layers[{l}] ({name}).{what}: {:.3} kW/cm² is above 1 kW/cm²",
            stack.source.display(),
            density_w_m2 * 1e-7
        )
    })
}

/// The warnings of `stack`; `bare_thickness[l]` says whether layer `l`'s
/// thickness was a bare number.
pub(super) fn warnings(stack: &Stack, bare_thickness: &[bool]) -> Vec<String> {
    let mut w = Vec::new();
    let file = stack.source.display();
    let amb = stack.ambient_k;
    if !(200.0..=500.0).contains(&amb) {
        w.push(format!(
            "{file}: boundary.ambient: {amb} K ({:.2} °C) is outside 200..500 K; \
             a bare number is kelvin, write \"{amb} C\" for degrees Celsius",
            amb - 273.15
        ));
    }
    let area = stack.width_m * stack.length_m;
    for (l, layer) in stack.layers.iter().enumerate() {
        let field = format!("layers[{l}] ({})", layer.name);
        let t = layer.thickness_m;
        if bare_thickness.get(l) == Some(&true)
            && t >= 1e-2
            && !is_package(&layer.name, &layer.material_name)
        {
            w.push(format!(
                "{file}: {field}.thickness: {t} is read as {t} m; a bare number is metres, \
                 write a unit (\"{t} um\")"
            ));
        }
        if t < 1e-9 {
            w.push(format!(
                "{file}: {field}.thickness: {t:e} m is thinner than 1 nm"
            ));
        }
        let dense = |what: String, p: f64, a: f64| {
            (a > 0.0 && p / a > MAX_POWER_DENSITY).then(|| {
                format!(
                    "{file}: {field}.{what}: {:.3} kW/cm² is above 1 kW/cm²",
                    p / a * 1e-7
                )
            })
        };
        match &layer.power {
            Some(PowerSpec::Uniform { total }) => {
                w.extend(dense("power.total".into(), *total, area));
            }
            Some(PowerSpec::Blocks { blocks }) => {
                for (i, b) in blocks.iter().enumerate() {
                    let what = format!("power.blocks[{i}] ({})", b.name);
                    let area: f64 = b.rects().iter().map(|r| r.area()).sum();
                    w.extend(dense(what, b.power, area));
                }
            }
            _ => {}
        }
    }
    w
}
