//! Inter-tier liquid-cooling cavities (`[layers.cavity]`): the compact models
//! of 3D-ICE (4RM microchannels, 2RM porous microchannels, 2RM pin fins), as
//! written in the stack file and checked into SI units. The layer's own
//! `material` is the walls' (or the pins'), and its `thickness` the cavity
//! height, as 3D-ICE's `height`.

use super::units::{Length, Temperature};
use super::validate::checks::{invalid, positive};
use super::StackError;
use serde::de::{self, Deserializer};
use serde::Deserialize;
use std::path::Path;

#[path = "cavity_htc.rs"]
pub mod htc;

/// `[layers.cavity]` as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CavitySpec {
    /// `4rm`, `2rm` (microchannels) or `pinfin`.
    pub model: CavityModelName,
    pub channel_width: Option<Length>,
    pub wall_width: Option<Length>,
    /// Width of the first and last walls across the flow (4RM), default
    /// `wall_width`: 3D-ICE's `first wall length`, `last wall length`.
    pub first_wall_width: Option<Length>,
    pub last_wall_width: Option<Length>,
    pub pin_diameter: Option<Length>,
    pub pin_pitch: Option<Length>,
    /// `inline` or `staggered`.
    pub pin_distribution: Option<PinDistribution>,
    /// Volume of coolant per unit time through the whole cavity (3D-ICE's
    /// `coolant flow rate`, per cavity): `"48 ml/min"`, or m³/s as a number.
    pub flow: Option<FlowRate>,
    /// Superficial (Darcy) velocity for pin fins: `"1.1066 m/s"`.
    pub darcy_velocity: Option<Velocity>,
    pub inlet: Temperature,
    /// `+x`, `-x`, `+y` or `-y`.
    pub direction: FlowDirection,
    pub coolant: CoolantSpec,
    /// Wall-to-coolant heat-transfer coefficients, W/(m²·K); without it,
    /// 3D-ICE's correlation for the model (`htc`).
    pub h: Option<HtcSpec>,
    /// How the coolant's temperature is differenced along the flow:
    /// `upwind` (the default) or `central` (3D-ICE's own scheme, which its
    /// import sets).
    pub advection: Option<AdvectionScheme>,
}

/// The difference of the coolant's enthalpy flow along a channel.
///
/// Upwind: a cell receives ṁ·c θ of the cell upstream and gives away its
/// own (every cell's temperature is its outflow's). Central, as 3D-ICE
/// (its `C = ṁ·c/2` couplings): a cell's advection is C (θ_down − θ_up),
/// the first cell's C (θ_1 + θ_2) − 2C θ_in and the last's C (θ_N −
/// θ_{N−1}); second order, but its downstream couplings make the chain
/// tridiagonal. Both carry Σ ṁ·c (θ_N − θ_in) out of the line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AdvectionScheme {
    #[default]
    Upwind,
    Central,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum CavityModelName {
    #[serde(rename = "4rm")]
    FourResistor,
    #[serde(rename = "2rm")]
    TwoResistor,
    #[serde(rename = "pinfin")]
    PinFin,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PinDistribution {
    Inline,
    Staggered,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoolantSpec {
    /// Volumetric heat capacity, J/(m³·K).
    pub heat_capacity: f64,
    /// W/(m·K); required by the microchannel correlation, that is only
    /// by a `4rm` or `2rm` cavity without `h`.
    pub conductivity: Option<f64>,
}

/// One coefficient on every wetted face, or each face its own.
#[derive(Clone, Debug, Deserialize)]
#[serde(
    untagged,
    expecting = "a number (W/(m^2 K)) or a table { side, top, bottom }"
)]
pub enum HtcSpec {
    All(f64),
    Faces(HtcFaces),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HtcFaces {
    pub side: Option<f64>,
    pub top: f64,
    pub bottom: f64,
}

/// The flow direction: the axis the coolant moves along and its sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowDirection {
    /// 0 = x, 1 = y.
    pub axis: usize,
    pub positive: bool,
}

impl<'de> Deserialize<'de> for FlowDirection {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        let (axis, positive) = match s.trim() {
            "+x" | "x" => (0, true),
            "-x" => (0, false),
            "+y" | "y" => (1, true),
            "-y" => (1, false),
            _ => {
                return Err(de::Error::custom(format!(
                    "`{s}` is not a flow direction: write \"+x\", \"-x\", \"+y\" or \"-y\""
                )))
            }
        };
        Ok(FlowDirection { axis, positive })
    }
}

/// A volume flow rate, m³/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlowRate(pub f64);

/// A velocity, m/s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Velocity(pub f64);

/// Volume flow units, m³/s each.
const FLOW_UNITS: &[(&str, f64)] = &[
    ("ul/min", 1e-9 / 60.0),
    ("µl/min", 1e-9 / 60.0),
    ("ml/min", 1e-6 / 60.0),
    ("ml/s", 1e-6),
    ("l/min", 1e-3 / 60.0),
    ("l/s", 1e-3),
    ("m3/s", 1.0),
    ("m^3/s", 1.0),
];

const VELOCITY_UNITS: &[(&str, f64)] = &[
    ("um/s", 1e-6),
    ("µm/s", 1e-6),
    ("mm/s", 1e-3),
    ("cm/s", 1e-2),
    ("m/s", 1.0),
];

/// `"<number>[ ]<unit>"` with the unit from `units` (longest first wins,
/// as the table lists prefixed units before bare ones).
fn with_unit(s: &str, units: &[(&str, f64)], what: &str) -> Result<f64, String> {
    let t = s.trim();
    let names: Vec<&str> = units.iter().map(|u| u.0).collect();
    let bad = || {
        format!(
            "`{s}` is not a {what}: write a number followed by a unit ({})",
            names.join(", ")
        )
    };
    for (suffix, scale) in units {
        if let Some(num) = t.strip_suffix(suffix) {
            let v: f64 = num.trim_end().parse().map_err(|_| bad())?;
            return Ok(v * scale);
        }
    }
    Err(bad())
}

macro_rules! number_or_unit {
    ($ty:ident, $units:expr, $what:expr) => {
        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                #[derive(Deserialize)]
                #[serde(untagged)]
                enum Raw {
                    Number(f64),
                    Text(String),
                }
                match Raw::deserialize(d)
                    .map_err(|_| de::Error::custom(concat!("expected a ", $what)))?
                {
                    Raw::Number(v) => Ok($ty(v)),
                    Raw::Text(s) => with_unit(&s, $units, $what)
                        .map($ty)
                        .map_err(de::Error::custom),
                }
            }
        }
    };
}

number_or_unit!(FlowRate, FLOW_UNITS, "flow rate");
number_or_unit!(Velocity, VELOCITY_UNITS, "velocity");

/// A checked cavity, SI units.
#[derive(Clone, Debug, PartialEq)]
pub struct Cavity {
    pub model: CavityModel,
    /// Coolant volumetric heat capacity, J/(m³·K).
    pub coolant_heat_capacity: f64,
    pub coolant_conductivity: Option<f64>,
    /// Volume flow through the whole cavity, m³/s (pin fins: the Darcy
    /// velocity times the cavity's cross-section).
    pub flow_m3_s: f64,
    pub inlet_k: f64,
    pub direction: FlowDirection,
    pub advection: AdvectionScheme,
    /// W/(m²·K) on the channel's side walls, its top and its bottom.
    pub h_side: f64,
    pub h_top: f64,
    pub h_bottom: f64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum CavityModel {
    /// Discrete channels and walls across the flow, starting and ending
    /// with a wall: first, (channel, wall) × (channels − 1), channel, last.
    FourResistor {
        channel_m: f64,
        wall_m: f64,
        first_wall_m: f64,
        last_wall_m: f64,
        channels: usize,
    },
    /// The channels homogenized into one porous medium.
    TwoResistor { channel_m: f64, wall_m: f64 },
    PinFin {
        diameter_m: f64,
        pitch_m: f64,
        distribution: PinDistribution,
    },
}

impl Cavity {
    /// ṁ·c of the whole cavity, W/K: the coolant's enthalpy flow per kelvin.
    pub fn heat_flow_w_k(&self) -> f64 {
        self.flow_m3_s * self.coolant_heat_capacity
    }

    /// Fraction of the cavity's volume that holds coolant, for the porous
    /// models (3D-ICE's porosity): channel over pitch for 2RM channels,
    /// 1 − π d²/(4 p²) for pin fins (one pin per pitch², inline or
    /// staggered alike); `None` for 4RM.
    pub fn porosity(&self) -> Option<f64> {
        match self.model {
            CavityModel::FourResistor { .. } => None,
            CavityModel::TwoResistor { channel_m, wall_m } => {
                Some(channel_m / (channel_m + wall_m))
            }
            CavityModel::PinFin {
                diameter_m,
                pitch_m,
                ..
            } => Some(
                1.0 - std::f64::consts::PI * diameter_m * diameter_m / (4.0 * pitch_m * pitch_m),
            ),
        }
    }

    /// Edges across the flow that put every 4RM channel and wall in whole
    /// cells (from 0 to the extent); `None` for the porous models.
    pub fn across_edges(&self) -> Option<Vec<f64>> {
        let CavityModel::FourResistor {
            channel_m,
            wall_m,
            first_wall_m,
            last_wall_m,
            channels,
        } = self.model
        else {
            return None;
        };
        let mut e = vec![0.0, first_wall_m];
        for c in 0..channels {
            let x = first_wall_m + c as f64 * (channel_m + wall_m);
            e.push(x + channel_m);
            if c + 1 < channels {
                e.push(x + channel_m + wall_m);
            }
        }
        e.push(e[e.len() - 1] + last_wall_m);
        Some(e)
    }
}

/// 4RM: the walls and channels must tile the width across the flow, the
/// first and last walls defaulting to the others' width.
fn four_resistor(
    file: &Path,
    f: &dyn Fn(&str) -> String,
    spec: &CavitySpec,
    across: f64,
    (channel_m, wall_m): (f64, f64),
) -> Result<CavityModel, StackError> {
    let first = spec
        .first_wall_width
        .map_or(Ok(wall_m), |l| positive(file, &f("first_wall_width"), l.0))?;
    let last = spec
        .last_wall_width
        .map_or(Ok(wall_m), |l| positive(file, &f("last_wall_width"), l.0))?;
    let pitch = channel_m + wall_m;
    let n = (across - first - last + wall_m) / pitch;
    let channels = n.round();
    if channels < 1.0 || (n - channels).abs() > 1e-6 {
        return Err(invalid(
            file,
            f("channel_width"),
            format!(
                "first wall + channels × (channel + wall) − wall + last wall must fill the \
                 {across} m across the flow; these widths give {n:.4} channels"
            ),
        ));
    }
    let model = CavityModel::FourResistor {
        channel_m,
        wall_m,
        first_wall_m: first,
        last_wall_m: last,
        channels: channels as usize,
    };
    Ok(model)
}

/// Checks `spec` for the layer `field` of height `height_m`, in a domain
/// `extent` (x, y) m.
pub(super) fn resolve(
    file: &Path,
    field: &str,
    spec: CavitySpec,
    extent: (f64, f64),
    height_m: f64,
) -> Result<Cavity, StackError> {
    let f = |k: &str| format!("{field}.cavity.{k}");
    let need = |v: Option<Length>, k: &str| -> Result<f64, StackError> {
        let v = v.ok_or_else(|| {
            invalid(
                file,
                f(k),
                format!("is required by model {}", model_name(spec.model)),
            )
        })?;
        positive(file, &f(k), v.0)
    };
    let refuse = |present: bool, k: &str| -> Result<(), StackError> {
        if present {
            return Err(invalid(
                file,
                f(k),
                format!("does not apply to model {}", model_name(spec.model)),
            ));
        }
        Ok(())
    };
    let across = if spec.direction.axis == 0 {
        extent.1
    } else {
        extent.0
    };
    let model = match spec.model {
        CavityModelName::FourResistor => {
            let (channel_m, wall_m) = (
                need(spec.channel_width, "channel_width")?,
                need(spec.wall_width, "wall_width")?,
            );
            four_resistor(file, &f, &spec, across, (channel_m, wall_m))?
        }
        CavityModelName::TwoResistor => {
            refuse(spec.first_wall_width.is_some(), "first_wall_width")?;
            refuse(spec.last_wall_width.is_some(), "last_wall_width")?;
            CavityModel::TwoResistor {
                channel_m: need(spec.channel_width, "channel_width")?,
                wall_m: need(spec.wall_width, "wall_width")?,
            }
        }
        CavityModelName::PinFin => {
            let (diameter_m, pitch_m) = (
                need(spec.pin_diameter, "pin_diameter")?,
                need(spec.pin_pitch, "pin_pitch")?,
            );
            if diameter_m >= pitch_m {
                return Err(invalid(
                    file,
                    f("pin_diameter"),
                    "must be smaller than `pin_pitch`",
                ));
            }
            let distribution = spec.pin_distribution.ok_or_else(|| {
                invalid(
                    file,
                    f("pin_distribution"),
                    "is required by model pinfin (\"inline\" or \"staggered\")",
                )
            })?;
            CavityModel::PinFin {
                diameter_m,
                pitch_m,
                distribution,
            }
        }
    };
    if spec.model != CavityModelName::PinFin {
        for (present, k) in [
            (spec.pin_diameter.is_some(), "pin_diameter"),
            (spec.pin_pitch.is_some(), "pin_pitch"),
            (spec.pin_distribution.is_some(), "pin_distribution"),
            (spec.darcy_velocity.is_some(), "darcy_velocity"),
        ] {
            refuse(present, k)?;
        }
    } else {
        refuse(spec.channel_width.is_some(), "channel_width")?;
        refuse(spec.wall_width.is_some(), "wall_width")?;
    }
    let coolant_heat_capacity = positive(
        file,
        &f("coolant.heat_capacity"),
        spec.coolant.heat_capacity,
    )?;
    let coolant_conductivity = match spec.coolant.conductivity {
        Some(k) => Some(positive(file, &f("coolant.conductivity"), k)?),
        None => None,
    };
    let flow_m3_s = flow(file, &f, &spec, across * height_m)?;
    let darcy = flow_m3_s / (across * height_m);
    let (h_side, h_top, h_bottom) = match &spec.h {
        Some(h) => htc(file, &f, &spec, h)?,
        None => correlated_htc(file, &f, &model, coolant_conductivity, (height_m, darcy))?,
    };
    Ok(Cavity {
        model,
        coolant_heat_capacity,
        coolant_conductivity,
        flow_m3_s,
        inlet_k: positive(file, &f("inlet"), spec.inlet.0)?,
        direction: spec.direction,
        advection: spec.advection.unwrap_or_default(),
        h_side,
        h_top,
        h_bottom,
    })
}

fn model_name(m: CavityModelName) -> &'static str {
    match m {
        CavityModelName::FourResistor => "4rm",
        CavityModelName::TwoResistor => "2rm",
        CavityModelName::PinFin => "pinfin",
    }
}

/// The volume flow of the cavity: `flow` for microchannels; for pin fins
/// `darcy_velocity` × the cavity's cross-section (`section_m2`), the Darcy
/// velocity being a superficial one.
fn flow(
    file: &Path,
    f: &dyn Fn(&str) -> String,
    spec: &CavitySpec,
    section_m2: f64,
) -> Result<f64, StackError> {
    match (spec.model, spec.flow, spec.darcy_velocity) {
        (CavityModelName::PinFin, Some(_), _) => Err(invalid(
            file,
            f("flow"),
            "pin fins take `darcy_velocity`, as 3D-ICE",
        )),
        (CavityModelName::PinFin, None, Some(v)) => {
            Ok(positive(file, &f("darcy_velocity"), v.0)? * section_m2)
        }
        (CavityModelName::PinFin, None, None) => Err(invalid(
            file,
            f("darcy_velocity"),
            "is required by model pinfin",
        )),
        (_, Some(q), _) => positive(file, &f("flow"), q.0),
        (_, None, _) => Err(invalid(
            file,
            f("flow"),
            "is required (e.g. \"48 ml/min\", through the whole cavity)",
        )),
    }
}

/// Side, top and bottom coefficients as given. The 2RM and pin-fin cells
/// have no side faces: their top and bottom coefficients are the projected
/// ones (3D-ICE's `top`, `bottom`).
fn htc(
    file: &Path,
    f: &dyn Fn(&str) -> String,
    spec: &CavitySpec,
    h: &HtcSpec,
) -> Result<(f64, f64, f64), StackError> {
    let check = |k: &str, v: f64| positive(file, &f(&format!("h.{k}")), v);
    match h {
        HtcSpec::All(v) => {
            let v = positive(file, &f("h"), *v)?;
            Ok((v, v, v))
        }
        HtcSpec::Faces(faces) => {
            let side = match (spec.model, faces.side) {
                (CavityModelName::FourResistor, Some(s)) => check("side", s)?,
                (CavityModelName::FourResistor, None) => {
                    return Err(invalid(file, f("h.side"), "is required by model 4rm"))
                }
                (_, Some(_)) => {
                    return Err(invalid(
                        file,
                        f("h.side"),
                        "does not apply to porous models: give the projected top and bottom coefficients",
                    ))
                }
                (_, None) => 0.0,
            };
            Ok((
                side,
                check("top", faces.top)?,
                check("bottom", faces.bottom)?,
            ))
        }
    }
}

/// Side, top and bottom coefficients from 3D-ICE's correlation for the
/// model (`htc`): microchannels need the coolant's conductivity, pin fins
/// the Darcy velocity (`darcy_m_s`, the flow over the cross-section);
/// `height_m` is the cavity's.
fn correlated_htc(
    file: &Path,
    f: &dyn Fn(&str) -> String,
    model: &CavityModel,
    conductivity: Option<f64>,
    (height_m, darcy_m_s): (f64, f64),
) -> Result<(f64, f64, f64), StackError> {
    let k = || {
        conductivity.ok_or_else(|| {
            invalid(
                file,
                f("coolant.conductivity"),
                "is required when `h` is not given: the microchannel correlation \
                 (h = k Nu / d_h) needs the coolant's conductivity in W/(m K)",
            )
        })
    };
    Ok(match *model {
        CavityModel::FourResistor { channel_m, .. } => {
            let h = htc::channel_h(k()?, channel_m, height_m);
            (h, h, h)
        }
        CavityModel::TwoResistor { channel_m, wall_m } => {
            let h = htc::porous_channel_h(k()?, channel_m, height_m, channel_m + wall_m);
            (0.0, h, h)
        }
        CavityModel::PinFin { distribution, .. } => {
            let h = htc::pin_fin_h(darcy_m_s, distribution == PinDistribution::Staggered);
            (0.0, h, h)
        }
    })
}

/// Puts the grid lines across the flow on the channel and wall edges of the
/// 4RM cavities, as 3D-ICE does: each channel is then one column of coolant
/// cells. The stack's grid must be uniform and count those columns across
/// the flow (so that a stack says how many cells it has); every 4RM cavity
/// must share the one set of edges.
pub(super) fn channel_grid(stack: &mut super::Stack, non_uniform: bool) -> Result<(), StackError> {
    let file = stack.source.clone();
    let mut chosen: Option<(usize, Vec<f64>)> = None;
    for (i, l) in stack.layers.iter().enumerate() {
        let Some(c) = &l.cavity else { continue };
        let Some(edges) = c.across_edges() else {
            continue;
        };
        let field = format!("layers[{i}] ({}).cavity", l.name);
        if non_uniform {
            return Err(invalid(
                &file,
                field,
                "a 4rm cavity sets the grid lines across its channels: give `[grid] nx` and `ny`, not `cell`",
            ));
        }
        let axis = 1 - c.direction.axis;
        let count = if axis == 0 { stack.nx } else { stack.ny };
        let cols = edges.len() - 1;
        if count != cols {
            let key = if axis == 0 { "nx" } else { "ny" };
            return Err(invalid(
                &file,
                format!("grid.{key}"),
                format!(
                    "must be {cols}: the 4rm cavity of layer `{}` has one column per channel and wall across the flow",
                    l.name
                ),
            ));
        }
        match &chosen {
            Some((a, e))
                if *a != axis || e.iter().zip(&edges).any(|(p, q)| (p - q).abs() > 1e-12) =>
            {
                return Err(invalid(
                    &file,
                    field,
                    "every 4rm cavity of a stack must have the same channels and flow axis",
                ));
            }
            _ => chosen = Some((axis, edges)),
        }
    }
    if let Some((axis, mut edges)) = chosen {
        let extent = if axis == 0 {
            stack.width_m
        } else {
            stack.length_m
        };
        *edges.last_mut().expect("two edges at least") = extent;
        let along = if axis == 0 {
            crate::geometry::uniform_axis(stack.length_m, stack.ny).1
        } else {
            crate::geometry::uniform_axis(stack.width_m, stack.nx).1
        };
        stack.plane_edges = Some(if axis == 0 {
            (edges, along)
        } else {
            (along, edges)
        });
    }
    Ok(())
}

#[cfg(test)]
#[path = "cavity_tests.rs"]
mod tests;
