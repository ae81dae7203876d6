//! 3D-ICE's cavities: the `microchannel 4rm`, `microchannel 2rm` and
//! `pinfin` sections (one per stack, shared by every `channel` element),
//! parsed statement by statement, and each `channel` element converted to
//! a cuth layer of the wall material with a `[layers.cavity]` table. The
//! coolant flows along 3D-ICE's rows (its "width", cuth's y), from y = 0.

use super::ast::Element;
use super::ast::{CavityKind, CavitySection, Stk};
use super::lexer::{Cursor, Tok};
use super::si;
use crate::import::emit::{num, string, LayerDoc, StackDoc};
use crate::import::ImportError;
use std::path::Path;

/// The section's statements, in any order, until a word that starts none.
pub fn parse_cavity(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    let line = c.line();
    let kind = if c.eat_word("pinfin") {
        CavityKind::PinFin
    } else {
        c.keywords("microchannel")?;
        // The lexer reads `4rm` as the number 4 and the word `rm`.
        let model = if matches!(c.peek(), Some(Tok::Num(_))) {
            c.number("4rm or 2rm")? + &c.ident("4rm or 2rm")?.0
        } else {
            c.ident("4rm or 2rm")?.0
        };
        match model.as_str() {
            "4rm" => CavityKind::FourRm,
            "2rm" => CavityKind::TwoRm,
            w => return Err(c.error(format!("expected 4rm or 2rm, found `{w}`"))),
        }
    };
    c.punct(':')?;
    if stk.cavity.is_some() {
        return Err(c.error("a second cavity section (3D-ICE takes one per stack)"));
    }
    let mut s = CavitySection {
        kind,
        line,
        height: None,
        channel_length: None,
        wall_length: None,
        first_wall_length: None,
        last_wall_length: None,
        pin_diameter: None,
        pin_pitch: None,
        pin_distribution: None,
        material: None,
        flow_rate: None,
        darcy_velocity: None,
        htc: Vec::new(),
        heat_capacity: None,
        inlet: None,
    };
    while let Some(w) = c.peek_word(0) {
        let w1 = c.peek_word(1).unwrap_or_default();
        match (w, w1) {
            ("height", _) => num_stmt(c, "height", &mut s.height)?,
            ("channel", _) => num_stmt(c, "channel length", &mut s.channel_length)?,
            ("wall", "length") => num_stmt(c, "wall length", &mut s.wall_length)?,
            ("first", _) => num_stmt(c, "first wall length", &mut s.first_wall_length)?,
            ("last", _) => num_stmt(c, "last wall length", &mut s.last_wall_length)?,
            ("wall" | "pin", "material") => {
                c.keywords(&format!("{w} material"))?;
                s.material = Some(c.ident("a material name")?.0);
                c.punct(';')?;
            }
            ("pin", "diameter") => num_stmt(c, "pin diameter", &mut s.pin_diameter)?,
            ("pin", "pitch") => num_stmt(c, "pin pitch", &mut s.pin_pitch)?,
            ("pin", "distribution") => {
                c.keywords("pin distribution")?;
                let (d, _) = c.ident("inline or staggered")?;
                if !matches!(d.as_str(), "inline" | "staggered") {
                    return Err(c.error(format!("expected inline or staggered, found `{d}`")));
                }
                s.pin_distribution = Some(d);
                c.punct(';')?;
            }
            ("darcy", _) => num_stmt(c, "darcy velocity", &mut s.darcy_velocity)?,
            ("coolant", "flow") => num_stmt(c, "coolant flow rate", &mut s.flow_rate)?,
            ("coolant", "heat") => htc_stmt(c, &mut s.htc)?,
            ("coolant", "volumetric") => {
                num_stmt(c, "coolant volumetric heat capacity", &mut s.heat_capacity)?
            }
            ("coolant", "incoming") => num_stmt(c, "coolant incoming temperature", &mut s.inlet)?,
            _ => break,
        }
    }
    stk.cavity = Some(s);
    Ok(())
}

/// `WORDS NUMBER ;`
fn num_stmt(c: &mut Cursor, words: &str, slot: &mut Option<String>) -> Result<(), ImportError> {
    c.keywords(words)?;
    *slot = Some(c.number(&format!("the {words}"))?);
    c.punct(';')
}

/// `coolant heat transfer coefficient (H | side H , top H , bottom H |
/// top H , bottom H) ;`
fn htc_stmt(c: &mut Cursor, htc: &mut Vec<(String, String)>) -> Result<(), ImportError> {
    c.keywords("coolant heat transfer coefficient")?;
    htc.clear();
    loop {
        let face = match c.peek_word(0) {
            Some(f @ ("side" | "top" | "bottom")) => f.to_string(),
            _ => String::new(),
        };
        if !face.is_empty() {
            c.ident("side, top or bottom")?;
        }
        htc.push((face, c.number("the heat transfer coefficient")?));
        if !c.eat_punct(',') {
            break;
        }
    }
    c.punct(';')
}

/// A converted cavity: the layer's material and thickness, the
/// `[layers.cavity]` table, and for 4RM the columns across the flow.
pub struct CavityToml {
    pub material: String,
    pub height_m: f64,
    pub table: String,
    pub columns: Option<usize>,
    pub comment: Vec<String>,
}

/// The cavity of the `.stk`, converted: widths µm → m, coefficients
/// W/(µm²·K) → W/(m²·K), heat capacity J/(µm³·K) → J/(m³·K), the Darcy
/// velocity µm/s → m/s, the flow rate kept in ml/min; each conversion is
/// said in the table's comments. `chip_length_m` is the extent across the
/// flow (3D-ICE's chip length, x).
pub fn convert(s: &CavitySection, f: &Path, chip_length_m: f64) -> Result<CavityToml, ImportError> {
    let need = |v: &Option<String>, what: &str| {
        v.clone().ok_or_else(|| ImportError::Syntax {
            file: f.to_path_buf(),
            line: s.line,
            message: format!("the cavity section has no `{what}`"),
        })
    };
    let um = |v: &str| si(f, s.line, v, -6);
    let height = need(&s.height, "height")?;
    let vhc = need(&s.heat_capacity, "coolant volumetric heat capacity")?;
    let inlet = need(&s.inlet, "coolant incoming temperature")?;
    let mut t = Vec::new();
    let mut comment = vec![format!(
        "cavity section (line {}): height {height} um, coolant heat capacity {vhc} J/(um^3 K), inlet {inlet} K",
        s.line
    )];
    let mut columns = None;
    match s.kind {
        CavityKind::FourRm | CavityKind::TwoRm => {
            let ch = need(&s.channel_length, "channel length")?;
            let wall = need(&s.wall_length, "wall length")?;
            let flow = need(&s.flow_rate, "coolant flow rate")?;
            let model = if s.kind == CavityKind::FourRm {
                "4rm"
            } else {
                "2rm"
            };
            t.push(format!("model = {}", string(model)));
            t.push(format!(
                "channel_width = {}    # m ({ch} um)",
                num(um(&ch)?)
            ));
            t.push(format!(
                "wall_width = {}    # m ({wall} um)",
                num(um(&wall)?)
            ));
            if s.kind == CavityKind::FourRm {
                let (w, c) = (um(&wall)?, um(&ch)?);
                let first = s.first_wall_length.clone().unwrap_or(wall.clone());
                let last = s.last_wall_length.clone().unwrap_or(wall.clone());
                let (fw, lw) = (um(&first)?, um(&last)?);
                t.push(format!(
                    "first_wall_width = {}    # m ({first} um)",
                    num(fw)
                ));
                t.push(format!("last_wall_width = {}    # m ({last} um)", num(lw)));
                let ratio = (chip_length_m - fw - lw - c) / (c + w);
                if (ratio - ratio.round()).abs() > 1e-6 || ratio < 0.0 {
                    return Err(ImportError::Syntax {
                        file: f.to_path_buf(),
                        line: s.line,
                        message: format!(
                            "the channels and walls do not fill the chip length: first wall + \
                             last wall + channel + n × (channel + wall) gives n = {ratio}"
                        ),
                    });
                }
                columns = Some(2 * ratio.round() as usize + 3);
            }
            t.push(format!(
                "flow = {}    # through the whole cavity, as 3D-ICE's coolant flow rate",
                string(&format!("{flow} ml/min"))
            ));
        }
        CavityKind::PinFin => {
            let d = need(&s.pin_diameter, "pin diameter")?;
            let p = need(&s.pin_pitch, "pin pitch")?;
            let v = need(&s.darcy_velocity, "darcy velocity")?;
            t.push("model = \"pinfin\"".into());
            t.push(format!("pin_diameter = {}    # m ({d} um)", num(um(&d)?)));
            t.push(format!("pin_pitch = {}    # m ({p} um)", num(um(&p)?)));
            let dist = need(&s.pin_distribution, "pin distribution")?;
            t.push(format!("pin_distribution = {}", string(&dist)));
            t.push(format!(
                "darcy_velocity = {}    # m/s ({v} um/s)",
                num(si(f, s.line, &v, -6)?)
            ));
        }
    }
    t.push(format!("inlet = {}    # K", num(si(f, s.line, &inlet, 0)?)));
    t.push("direction = \"+y\"    # 3D-ICE's coolant runs along its rows".into());
    t.push(
        "advection = \"central\"    # 3D-ICE differences the coolant centrally (C = m c / 2)"
            .into(),
    );
    t.push(format!(
        "coolant = {{ heat_capacity = {} }}    # J/(m^3 K) ({vhc} J/(um^3 K))",
        num(si(f, s.line, &vhc, 18)?)
    ));
    t.push(htc_line(s, f)?);
    let material = need(&s.material, "wall material")?;
    if s.kind == CavityKind::PinFin {
        comment.push("pin fins: 3D-ICE's effective coefficient (THERMINIC 2010 eq. 8) from the Darcy velocity, as cuth computes without `h`".into());
    }
    Ok(CavityToml {
        material,
        height_m: um(&height)?,
        table: format!("[layers.cavity]\n{}\n", t.join("\n")),
        columns,
        comment,
    })
}

/// `h`, W/(m²·K), from the section's coefficients, or a comment when it
/// has none (pin fins: cuth then applies 3D-ICE's correlation).
fn htc_line(s: &CavitySection, f: &Path) -> Result<String, ImportError> {
    let conv = |v: &str| si(f, s.line, v, 12).map(num);
    let written: Vec<String> = s.htc.iter().map(|(k, v)| format!("{k} {v}")).collect();
    let note = format!("    # W/(m^2 K) ({} W/(um^2 K))", written.join(", ").trim());
    Ok(match s.htc.as_slice() {
        [] => "# h: none given; cuth applies 3D-ICE's correlation".into(),
        [(face, v)] if face.is_empty() => format!("h = {}{note}", conv(v)?),
        faces => {
            let parts: Result<Vec<String>, ImportError> = faces
                .iter()
                .map(|(k, v)| Ok(format!("{k} = {}", conv(v)?)))
                .collect();
            format!("h = {{ {} }}{note}", parts?.join(", "))
        }
    })
}

/// Puts each cavity table under its layer in the rendered stack file: after
/// the keys of the `[[layers]]` entry named `name`, before the blank line
/// that ends them.
pub fn splice(toml: &str, tables: &[(String, String)]) -> String {
    let mut out = toml.to_string();
    for (name, table) in tables {
        let anchor = format!("[[layers]]\nname = {}\n", string(name));
        let Some(start) = out.find(&anchor) else {
            continue;
        };
        let rest = start + anchor.len();
        let end = out[rest..].find("\n\n").map_or(out.len(), |k| rest + k + 1);
        out.insert_str(end, table);
    }
    out
}

/// A 4RM cavity sets the columns across the flow: one per channel and
/// wall, 3D-ICE's 2·n + 3.
pub fn four_rm_columns(doc: &mut StackDoc, cols: usize) {
    doc.grid_comment.push(format!(
        "4rm: {cols} columns across the flow, one per channel and wall (3D-ICE's cell length \
         gives way to the channel geometry, as in 3D-ICE)"
    ));
    doc.nx = cols;
}

/// Each `channel` element's layer (top down, one per element, in
/// `layers`) made the cavity's: its wall material and height; returns the
/// `[layers.cavity]` table of each, by layer name, for [`splice`].
pub fn channel_layers(s: &Stk, c: &CavityToml, layers: &mut [LayerDoc]) -> Vec<(String, String)> {
    let mut tables = Vec::new();
    for e in s
        .stack
        .iter()
        .filter(|e| matches!(e.element, Element::Channel))
    {
        let Some(layer) = layers.iter_mut().find(|l| l.name == e.name) else {
            continue;
        };
        *layer = LayerDoc {
            name: e.name.clone(),
            material: c.material.clone(),
            thickness: c.height_m,
            cells: 1,
            floorplan: None,
            power: None,
            outline: None,
            fill: None,
            comment: [format!("channel `{}` (line {})", e.name, e.line)]
                .into_iter()
                .chain(c.comment.iter().cloned())
                .collect(),
        };
        tables.push((e.name.clone(), c.table.clone()));
    }
    tables
}
