//! Recursive-descent parser for 3D-ICE stack descriptions (`.stk`), after
//! the grammar of 3D-ICE's `stack_description_parser.y` (2.x–4.0): materials,
//! `top`/`bottom`/`conventional heat sink`, `dimensions`, top-level `layer`
//! definitions, `die` definitions (layers listed top to bottom around one
//! `source`), `stack` (elements top to bottom), `solver` and `output`.
//! Sections may come in any order (a `channel` element after its cavity
//! section, as 3D-ICE's grammar has it). Microchannels and pin fins are
//! read by `cavity`; pluggable heat sinks and `layout` files are
//! [`ImportError::Unsupported`].
//! Numbers stay as written (3D-ICE units: µm, W/(µm·K), J/(µm³·K), W/(µm²·K)).

use super::lexer::{Cursor, Tok};
use crate::import::ImportError;
use std::path::Path;

pub use super::ast::*;

fn unsupported(c: &Cursor, what: &str, why: &str) -> ImportError {
    ImportError::Unsupported {
        file: c.file.clone(),
        line: c.line(),
        what: what.into(),
        why: why.into(),
    }
}

pub fn parse_stk(text: &str, file: &Path) -> Result<Stk, ImportError> {
    let mut c = Cursor::new(text, file)?;
    let mut stk = Stk::default();
    while !c.at_end() {
        let word = c.peek_word(0).map(str::to_string);
        match word.as_deref() {
            Some("material") => material(&mut c, &mut stk)?,
            Some("top" | "bottom" | "conventional") => sink(&mut c, &mut stk)?,
            Some("microchannel" | "pinfin") => super::cavity::parse_cavity(&mut c, &mut stk)?,
            Some("dimensions") => dimensions(&mut c, &mut stk)?,
            Some("layer") => layer_def(&mut c, &mut stk)?,
            Some("die") => die(&mut c, &mut stk)?,
            Some("stack") => stack(&mut c, &mut stk)?,
            Some("solver") => solver(&mut c, &mut stk)?,
            Some("output") => output(&mut c, &mut stk)?,
            _ => {
                return Err(c.error(format!(
                    "expected a section (material, top heat sink, microchannel, pinfin, \
                     dimensions, layer, die, stack, solver, output), found {}",
                    c.found()
                )))
            }
        }
    }
    Ok(stk)
}

fn material(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    c.keywords("material")?;
    let (name, line) = c.ident("a material name")?;
    if stk.materials.iter().any(|m| m.name == name) {
        return Err(c.error(format!("material `{name}` is already declared")));
    }
    c.punct(':')?;
    c.keywords("thermal conductivity")?;
    let mut k = vec![c.number("the thermal conductivity")?];
    while c.eat_punct(',') {
        k.push(c.number("a thermal conductivity")?);
    }
    if k.len() != 1 && k.len() != 3 {
        return Err(c.error(format!(
            "expected 1 or 3 thermal conductivities, found {}",
            k.len()
        )));
    }
    c.punct(';')?;
    c.keywords("volumetric heat capacity")?;
    let cap = c.number("the volumetric heat capacity")?;
    c.punct(';')?;
    stk.materials.push(StkMaterial {
        name,
        line,
        k,
        c: cap,
    });
    Ok(())
}

fn sink(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    let line = c.line();
    let (pos, _) = c.ident("top, bottom or conventional")?;
    if c.peek_word(0) == Some("pluggable") {
        return Err(unsupported(
            c,
            "a pluggable heat sink",
            "cuth has no heat sink plugins; use a heat sink with a heat transfer coefficient",
        ));
    }
    c.keywords("heat sink")?;
    c.punct(':')?;
    c.keywords("heat transfer coefficient")?;
    let htc = c.number("the heat transfer coefficient")?;
    c.punct(';')?;
    c.eat_word("ambient");
    c.keywords("temperature")?;
    let temperature = c.number("the temperature")?;
    c.punct(';')?;
    let s = Some(Sink {
        htc,
        temperature,
        line,
    });
    let slot = if pos == "bottom" {
        &mut stk.bottom_sink
    } else {
        &mut stk.top_sink
    };
    if slot.is_some() {
        return Err(ImportError::Syntax {
            file: c.file.clone(),
            line,
            message: format!("a second {pos} heat sink"),
        });
    }
    *slot = s;
    Ok(())
}

fn dimensions(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    let line = c.line();
    c.keywords("dimensions")?;
    c.punct(':')?;
    c.keywords("chip length")?;
    let chip_length = c.number("the chip length")?;
    c.punct(',')?;
    c.keywords("width")?;
    let chip_width = c.number("the chip width")?;
    c.punct(';')?;
    c.keywords("cell length")?;
    let cell_length = c.number("the cell length")?;
    c.punct(',')?;
    c.keywords("width")?;
    let cell_width = c.number("the cell width")?;
    c.punct(';')?;
    let mut non_uniform = false;
    if c.eat_word("non-uniform") {
        non_uniform = match c.ident("true or false")?.0.as_str() {
            "true" => true,
            "false" => false,
            w => return Err(c.error(format!("non-uniform: expected true or false, found `{w}`"))),
        };
        c.punct(';')?;
    }
    stk.dimensions = Some(Dimensions {
        chip_length,
        chip_width,
        cell_length,
        cell_width,
        line,
        non_uniform,
    });
    Ok(())
}

fn layer_def(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    c.keywords("layer")?;
    let (name, line) = c.ident("a layer name")?;
    c.punct(':')?;
    c.keywords("height")?;
    let height = c.number("the layer height")?;
    c.punct(';')?;
    c.keywords("material")?;
    let (material, _) = c.ident("a material name")?;
    c.punct(';')?;
    if c.peek_word(0) == Some("layout") {
        return Err(unsupported(
            c,
            &format!("the layout file of layer `{name}`"),
            "cuth's layers are homogeneous apart from HotSpot floorplan patches",
        ));
    }
    stk.layer_defs.push((
        name,
        LayerSpec {
            height,
            material,
            line,
        },
    ));
    Ok(())
}

/// `discretization NX [,] NY` if it comes next (the comma is optional).
fn discretization(c: &mut Cursor) -> Result<Option<(String, String)>, ImportError> {
    if !c.eat_word("discretization") {
        return Ok(None);
    }
    let nx = c.number("the cells along x")?;
    c.eat_punct(',');
    Ok(Some((nx, c.number("the cells along y")?)))
}

/// `H MATERIAL` or `LAYERNAME` (a top-level layer definition), without the `;`.
fn layer_content(c: &mut Cursor, stk: &Stk) -> Result<LayerSpec, ImportError> {
    let line = c.line();
    let spec = if matches!(c.peek(), Some(Tok::Num(_))) {
        let height = c.number("the layer height")?;
        let (material, _) = c.ident("a material name")?;
        LayerSpec {
            height,
            material,
            line,
        }
    } else {
        let (name, _) = c.ident("a height and material, or a layer name")?;
        let def = stk.layer_defs.iter().find(|(n, _)| *n == name);
        let Some((_, spec)) = def else {
            return Err(c.error(format!("unknown layer `{name}`")));
        };
        LayerSpec {
            line,
            ..spec.clone()
        }
    };
    Ok(spec)
}

fn die(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    c.keywords("die")?;
    let (name, line) = c.ident("a die name")?;
    c.punct(':')?;
    let mut layers = Vec::new();
    loop {
        let source = match c.peek_word(0) {
            Some("source") => true,
            // `layer NAME :` starts a top-level definition, not a die layer.
            Some("layer")
                if c.peek_word(1).is_none() || !matches!(c.peek_at(2), Some(Tok::Punct(':'))) =>
            {
                false
            }
            _ => break,
        };
        c.ident("layer or source")?;
        layers.push((layer_content(c, stk)?, source));
        c.punct(';')?;
    }
    match layers.iter().filter(|(_, s)| *s).count() {
        1 => {}
        n => {
            return Err(ImportError::Syntax {
                file: c.file.clone(),
                line,
                message: format!("die `{name}` needs exactly one source layer, found {n}"),
            })
        }
    }
    if stk.dies.iter().any(|d| d.name == name) {
        return Err(ImportError::Syntax {
            file: c.file.clone(),
            line,
            message: format!("die `{name}` is already declared"),
        });
    }
    stk.dies.push(Die { name, line, layers });
    Ok(())
}

fn stack(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    c.keywords("stack")?;
    c.punct(':')?;
    loop {
        let line = c.line();
        let element = match c.peek_word(0) {
            Some("layer") => {
                c.keywords("layer")?;
                let (name, _) = c.ident("a stack element name")?;
                (name, Element::Layer(layer_content(c, stk)?))
            }
            Some("die") => {
                c.keywords("die")?;
                let (name, _) = c.ident("a stack element name")?;
                let (die, _) = c.ident("a die name")?;
                if !stk.dies.iter().any(|d| d.name == die) {
                    return Err(c.error(format!("unknown die `{die}`")));
                }
                c.keywords("floorplan")?;
                let floorplan = c.string("the floorplan file")?;
                (name, Element::Die { die, floorplan })
            }
            Some("channel") => {
                c.keywords("channel")?;
                let (name, _) = c.ident("a stack element name")?;
                if stk.cavity.is_none() {
                    return Err(c.error(format!(
                        "channel `{name}`: the stack declares no `microchannel` or `pinfin` section"
                    )));
                }
                (name, Element::Channel)
            }
            _ => break,
        };
        let discretization = discretization(c)?;
        c.punct(';')?;
        if stk.stack.iter().any(|e| e.name == element.0) {
            return Err(ImportError::Syntax {
                file: c.file.clone(),
                line,
                message: format!("stack element `{}` is already declared", element.0),
            });
        }
        stk.stack.push(StackElement {
            name: element.0,
            line,
            element: element.1,
            discretization,
        });
    }
    if stk.stack.is_empty() {
        return Err(c.error("the stack has no elements"));
    }
    Ok(())
}

fn solver(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    c.keywords("solver")?;
    c.punct(':')?;
    loop {
        match c.peek_word(0) {
            Some("steady") => {
                c.keywords("steady")?;
                c.punct(';')?;
            }
            Some("transient") => {
                c.keywords("transient step")?;
                let step = c.number("the time step")?;
                c.punct(',')?;
                c.keywords("slot")?;
                let slot = c.number("the slot time")?;
                c.punct(';')?;
                stk.transient = Some((step, slot));
            }
            Some("initial") => {
                let line = c.line();
                c.keywords("initial temperature")?;
                stk.initial_temperature = Some((c.number("the initial temperature")?, line));
                c.punct(';')?;
            }
            Some(w)
                if !matches!(
                    w,
                    "output" | "material" | "die" | "stack" | "dimensions" | "layer"
                ) =>
            {
                let line = c.line();
                let words = c.skip_statement()?;
                stk.ignored
                    .push(format!("line {line}: solver {}", words.join(" ")));
            }
            _ => break,
        }
    }
    Ok(())
}

/// `output:` and its instructions, each `NAME ( ... ) ;`: `T` is kept as a
/// probe, the others as [`OutputInstr`]s.
fn output(c: &mut Cursor, stk: &mut Stk) -> Result<(), ImportError> {
    c.keywords("output")?;
    c.punct(':')?;
    while c.peek_word(0).is_some() && c.peek_at(1) == Some(&Tok::Punct('(')) {
        let line = c.line();
        let (kind, _) = c.ident("an output instruction")?;
        c.punct('(')?;
        match kind.as_str() {
            "T" => probe_output(c, stk, line)?,
            "Tflp" | "Tflpel" | "Tmap" | "Pmap" | "Tcoolant" | "T3d" => {
                let instr = map_output(c, kind, line)?;
                stk.outputs.push(instr);
            }
            _ => {
                return Err(ImportError::Syntax {
                    file: c.file.clone(),
                    line,
                    message: format!(
                        "unknown output instruction `{kind}` (expected T, Tflp, Tflpel, Tmap, \
                         Pmap, Tcoolant or T3d)"
                    ),
                })
            }
        }
        c.punct(')')?;
        c.punct(';')?;
    }
    Ok(())
}

/// `, final|slot|step` if it comes next (`final` when not written).
fn when(c: &mut Cursor) -> Result<String, ImportError> {
    if !c.eat_punct(',') {
        return Ok("final".into());
    }
    let (w, _) = c.ident("final, slot or step")?;
    if !matches!(w.as_str(), "final" | "slot" | "step") {
        return Err(c.error(format!("expected final, slot or step, found `{w}`")));
    }
    Ok(w)
}

/// The inside of `T ( ELEMENT, X, Y, "FILE" [, WHEN] )`.
fn probe_output(c: &mut Cursor, stk: &mut Stk, line: usize) -> Result<(), ImportError> {
    let (element, _) = c.ident("a stack element name")?;
    c.punct(',')?;
    let x = c.number("the probe's x")?;
    c.punct(',')?;
    let y = c.number("the probe's y")?;
    c.punct(',')?;
    let file = output_file(c)?;
    let when = when(c)?;
    stk.probes.push(ProbeOut {
        element,
        x,
        y,
        file,
        when,
        line,
    });
    Ok(())
}

/// An output file: a quoted path, or unquoted words joined by `.` (the
/// user guide writes `T3d( output3.vtk, final )`).
fn output_file(c: &mut Cursor) -> Result<String, ImportError> {
    if matches!(c.peek(), Some(Tok::Str(_))) {
        return c.string("the output file");
    }
    let mut name = c.ident("the output file (a \"quoted\" path)")?.0;
    while c.peek_at(0) == Some(&Tok::Punct('.')) && c.peek_word(1).is_some() {
        c.punct('.')?;
        name.push('.');
        name.push_str(&c.ident("the file name")?.0);
    }
    Ok(name)
}

/// The inside of `Tflp`, `Tflpel`, `Tmap`, `Pmap`, `Tcoolant` and `T3d`.
fn map_output(c: &mut Cursor, kind: String, line: usize) -> Result<OutputInstr, ImportError> {
    let (mut element, mut floorplan_element) = (None, None);
    if kind != "T3d" {
        element = Some(c.ident("a stack element name")?.0);
        if kind == "Tflpel" {
            c.punct('.')?;
            floorplan_element = Some(c.ident("a floorplan element name")?.0);
        }
        c.punct(',')?;
    }
    let file = output_file(c)?;
    let mut quantity = None;
    if matches!(kind.as_str(), "Tflp" | "Tflpel" | "Tcoolant") {
        c.punct(',')?;
        let (q, _) = c.ident("maximum, minimum, average or gradient")?;
        if !matches!(q.as_str(), "maximum" | "minimum" | "average" | "gradient") {
            return Err(c.error(format!(
                "expected maximum, minimum, average or gradient, found `{q}`"
            )));
        }
        quantity = Some(q);
    }
    Ok(OutputInstr {
        kind,
        element,
        floorplan_element,
        file,
        quantity,
        when: when(c)?,
        line,
    })
}
