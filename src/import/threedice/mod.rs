//! 3D-ICE → cuth. The stack elements (top to bottom in the `.stk`) become
//! layers bottom to top, one z cell each as in 3D-ICE; a die's source layer
//! gets its floorplan's elements as inline `blocks` with the first power
//! value (3D-ICE's first time slot, what its steady solver uses); further
//! values go to a CSV trace for `cuth transient`. Units are converted from
//! 3D-ICE's (µm, W/(µm·K), J/(µm³·K), W/(µm²·K)) by shifting the decimal
//! exponent of each literal, so no extra rounding enters. 3D-ICE's "chip
//! length" is along x (cuth's `width`), its "width" along y (cuth's `length`).

mod ast;
mod extras;
mod flp;
mod lexer;
mod stk;

use super::emit::{Conductivity, LayerDoc, MaterialDoc, PowerDoc, StackDoc};
use super::{read_text, shift_decimal, ExtraFile, ImportError, Imported};
use std::path::Path;

/// A literal in 3D-ICE units times `10^shift` (SI), or a syntax error.
fn si(file: &Path, line: usize, lit: &str, shift: i32) -> Result<f64, ImportError> {
    shift_decimal(lit, shift).ok_or_else(|| ImportError::Syntax {
        file: file.to_path_buf(),
        line,
        message: format!("`{lit}` is not a finite number"),
    })
}

/// Every die's floorplan, read where 3D-ICE opens it (`extras::floorplan_path`):
/// (die name, elements, path), with a note for elements without power.
fn die_floorplans(
    s: &stk::Stk,
    f: &Path,
    notes: &mut Vec<String>,
) -> Result<Vec<(String, Vec<flp::Element>, std::path::PathBuf)>, ImportError> {
    let mut plans = Vec::new();
    for e in &s.stack {
        if let stk::Element::Die { floorplan, .. } = &e.element {
            let (p, found) = extras::floorplan_path(f, e.line, floorplan)?;
            notes.extend(found);
            let els = flp::parse_floorplan(&read_text(&p)?, &p)?;
            let unpowered: Vec<&str> = els
                .iter()
                .filter(|x| !x.powered)
                .map(|x| x.name.as_str())
                .collect();
            let seen = plans.iter().any(|(_, _, q)| *q == p);
            if !unpowered.is_empty() && !seen {
                notes.push(format!(
                    "{}: element(s) {} have no `power values` (3D-ICE's server takes them from \
                     its client): 0 W here; give them power in the stack or a --trace",
                    p.display(),
                    unpowered.join(", ")
                ));
            }
            plans.push((e.name.clone(), els, p));
        }
    }
    Ok(plans)
}

/// Imports `stk`; `out` is where the TOML will be written (the trace goes beside it).
pub fn import(stk_path: &Path, out: &Path) -> Result<Imported, ImportError> {
    let f = stk_path;
    let s = stk::parse_stk(&read_text(f)?, f)?;
    let err = |line: usize, message: String| ImportError::Syntax {
        file: f.to_path_buf(),
        line,
        message,
    };
    let dims = s
        .dimensions
        .as_ref()
        .ok_or_else(|| err(1, "no `dimensions` section".into()))?;
    let width = si(f, dims.line, &dims.chip_length, -6)?;
    let length = si(f, dims.line, &dims.chip_width, -6)?;
    let cells = |chip: f64, cell: &str| -> Result<(usize, bool), ImportError> {
        let r = chip / si(f, dims.line, cell, -6)?;
        if !(0.5..65536.5).contains(&r) {
            return Err(err(
                dims.line,
                format!("cell size {cell} gives {r} cells across the chip"),
            ));
        }
        Ok((r.round() as usize, (r - r.round()).abs() > 1e-9 * r))
    };
    let (nx, fx) = cells(width, &dims.cell_length)?;
    let (ny, fy) = cells(length, &dims.cell_width)?;
    let mut notes = Vec::new();
    let mut doc = StackDoc {
        header: vec![
            format!("Imported by `cuth import 3dice` from {}.", f.display()),
            "Units converted from 3D-ICE's: um -> m, W/(um K) -> W/(m K), J/(um^3 K) -> J/(m^3 K), W/(um^2 K) -> W/(m^2 K).".into(),
            "One z cell per 3D-ICE layer, as 3D-ICE discretizes.".into(),
        ],
        title: format!("3D-ICE import: {}", f.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned())),
        width,
        length,
        chip_comment: vec![format!("dimensions (line {}): chip length {} um (x), width {} um (y)", dims.line, dims.chip_length, dims.chip_width)],
        nx,
        ny,
        grid_comment: vec![format!("cell length {} um (x), width {} um (y)", dims.cell_length, dims.cell_width)],
        ..Default::default()
    };
    if fx || fy {
        doc.grid_comment.push("approximation: the cells do not divide the chip; cuth's cells are chip/n (3D-ICE truncates n)".into());
    }

    let flip = boundary(&s, f, &mut doc)?;

    materials(&s, f, &mut doc)?;
    let plans = die_floorplans(&s, f, &mut notes)?;
    grid(&s, f, &mut doc, &plans, &mut notes)?;
    let mut all: Vec<&str> = plans
        .iter()
        .flat_map(|(_, els, _)| els.iter().map(|e| e.name.as_str()))
        .collect();
    all.sort_unstable();
    let clash = all.windows(2).any(|w| w[0] == w[1]);
    let mut trace: Vec<(String, Vec<f64>)> = Vec::new();
    let mut layers_top_down = stack_layers(&s, f, &plans, clash, &mut trace, &mut notes)?;
    if !flip {
        layers_top_down.reverse();
    }
    doc.layers = layers_top_down;
    let block_name = |die: &str, el: &str| {
        if clash {
            format!("{die}.{el}")
        } else {
            el.to_string()
        }
    };
    let outs = extras::outputs(&s, f, &plans, &block_name)?;
    doc.probes = outs.probes;
    doc.peer_files = outs.files;
    notes.extend(outs.notes);
    if let Some((_, slot)) = &s.transient {
        doc.peer_slot = Some(si(f, 0, slot, 0)?);
    }
    if clash {
        doc.header.push(
            "Floorplan element names repeat across dies: blocks are named DIE_ELEMENT.NAME.".into(),
        );
    }

    let OverTime {
        extra,
        mut footer,
        next,
    } = power_over_time(&s, f, out, &trace, doc.ambient, &mut notes)?;
    let next = match (next, snapshot_every(&s, f, &doc)?) {
        (Some(n), Some(k)) => Some(format!("{n} --snapshot-every {k}")),
        (n, _) => n,
    };
    for i in &s.ignored {
        footer.push(format!("not carried over: {i}"));
    }
    doc.footer = footer;
    let toml = doc.render();
    super::check_loads(&toml, out)?;
    Ok(Imported {
        toml,
        extra,
        notes,
        next,
    })
}

/// The heat sinks as cuth's boundary: one ambient, h on top and, with a
/// second sink, at the bottom; a bottom-only sink flips the stack (the
/// return value), its bottom becoming cuth's top.
fn boundary(s: &stk::Stk, f: &Path, doc: &mut StackDoc) -> Result<bool, ImportError> {
    // Boundary: one ambient; a bottom-only sink is handled by flipping the stack.
    let flip = s.top_sink.is_none() && s.bottom_sink.is_some();
    let (top, bottom) = if flip {
        (s.bottom_sink.as_ref(), None)
    } else {
        (s.top_sink.as_ref(), s.bottom_sink.as_ref())
    };
    let top = top.ok_or_else(|| ImportError::Invalid { file: f.to_path_buf(),
        message: "no heat sink: declare a `top heat sink` (cuth needs a heat transfer coefficient on top)".into() })?;
    doc.ambient = si(f, top.line, &top.temperature, 0)?;
    doc.h_top = si(f, top.line, &top.htc, 12)?;
    doc.boundary_comment.push(format!(
        "heat sink (line {}): heat transfer coefficient {} W/(um^2 K), {} K",
        top.line, top.htc, top.temperature
    ));
    if let Some(b) = bottom {
        if si(f, b.line, &b.temperature, 0)? != doc.ambient {
            return Err(ImportError::Unsupported {
                file: f.to_path_buf(),
                line: b.line,
                what: "top and bottom heat sinks at different temperatures".into(),
                why: "cuth has one ambient temperature".into(),
            });
        }
        doc.h_bottom = Some(si(f, b.line, &b.htc, 12)?);
        doc.boundary_comment.push(format!(
            "bottom heat sink (line {}): {} W/(um^2 K)",
            b.line, b.htc
        ));
    }
    if flip {
        doc.boundary_comment.push("only a bottom heat sink: the stack is flipped (its bottom is cuth's top), which changes nothing physically".into());
    }
    Ok(flip)
}

/// The `.stk`'s materials, converted to SI.
fn materials(s: &stk::Stk, f: &Path, doc: &mut StackDoc) -> Result<(), ImportError> {
    for m in &s.materials {
        let k = match m.k.as_slice() {
            [k] => Conductivity::Iso(si(f, m.line, k, 6)?),
            [x, y, z] => Conductivity::Aniso([
                si(f, m.line, x, 6)?,
                si(f, m.line, y, 6)?,
                si(f, m.line, z, 6)?,
            ]),
            _ => unreachable!("the parser accepts 1 or 3 values"),
        };
        doc.materials.push(MaterialDoc {
            name: m.name.clone(),
            k,
            heat_capacity: si(f, m.line, &m.c, 18)?,
            comment: vec![format!(
                "line {}: conductivity {} W/(um K), heat capacity {} J/(um^3 K)",
                m.line,
                m.k.join(", "),
                m.c
            )],
        });
    }
    Ok(())
}

/// The stack's elements, top down, as cuth layers: a plain layer each, and
/// a die's layers with its source layer's floorplan elements as blocks
/// (named `DIE.NAME` when names `clash` across dies), each block's power
/// values appended to `trace`.
fn stack_layers(
    s: &stk::Stk,
    f: &Path,
    plans: &[(String, Vec<flp::Element>, std::path::PathBuf)],
    clash: bool,
    trace: &mut Vec<(String, Vec<f64>)>,
    notes: &mut Vec<String>,
) -> Result<Vec<LayerDoc>, ImportError> {
    let known = |name: &str, line: usize| -> Result<(), ImportError> {
        if s.materials.iter().any(|m| m.name == name) {
            Ok(())
        } else {
            Err(ImportError::Syntax {
                file: f.to_path_buf(),
                line,
                message: format!("unknown material `{name}`"),
            })
        }
    };

    let block_name = |el: &str, name: &str| {
        if clash {
            format!("{el}.{name}")
        } else {
            name.to_string()
        }
    };

    let mut layers_top_down: Vec<LayerDoc> = Vec::new();
    for e in &s.stack {
        match &e.element {
            stk::Element::Layer(l) => {
                known(&l.material, l.line)?;
                layers_top_down.push(LayerDoc {
                    name: e.name.clone(),
                    material: l.material.clone(),
                    thickness: si(f, l.line, &l.height, -6)?,
                    cells: 1,
                    floorplan: None,
                    power: None,
                    outline: None,
                    fill: None,
                    comment: vec![format!(
                        "stack layer `{}` (line {}), {} um",
                        e.name, e.line, l.height
                    )],
                });
            }
            stk::Element::Die { die, floorplan } => {
                let d = s
                    .dies
                    .iter()
                    .find(|d| d.name == *die)
                    .expect("checked by the parser");
                let (_, els, fpath) = plans
                    .iter()
                    .find(|(n, _, _)| *n == e.name)
                    .expect("read above");
                let n = d.layers.len();
                for (i, (l, source)) in d.layers.iter().enumerate() {
                    known(&l.material, l.line)?;
                    let from_bottom = n - 1 - i;
                    let mut comment = vec![format!("die `{die}` (line {}) as `{}` (line {}), layer {from_bottom} from its bottom, {} um", d.line, e.name, e.line, l.height)];
                    let power = if *source {
                        comment.push(format!("source layer: floorplan {floorplan}, first power value of each element (3D-ICE's first slot)"));
                        let mut blocks = Vec::new();
                        for x in els {
                            element_material(fpath, x, &l.material)?;
                            let name = block_name(&e.name, &x.name);
                            let parts = extras::element_blocks(fpath, x, &name)?;
                            if parts.len() > 1 {
                                comment.push(format!("element `{}`: {} rectangles, blocks {name}.1 to {name}.{}, power shared by area", x.name, parts.len(), parts.len()));
                                notes.push(format!("floorplan element `{}` has {} rectangles: one block per rectangle ({name}.1 ...), its power shared by area; block statistics are per rectangle", x.name, parts.len()));
                            }
                            for (b, p) in parts {
                                trace.push((b.name.clone(), p));
                                blocks.push(b);
                            }
                        }
                        Some(PowerDoc::Blocks(blocks))
                    } else {
                        None
                    };
                    let name = if *source {
                        format!("{}_source", e.name)
                    } else {
                        format!("{}_{from_bottom}", e.name)
                    };
                    layers_top_down.push(LayerDoc {
                        name,
                        material: l.material.clone(),
                        thickness: si(f, l.line, &l.height, -6)?,
                        cells: 1,
                        floorplan: None,
                        power,
                        outline: None,
                        fill: None,
                        comment,
                    });
                }
            }
        }
    }
    Ok(layers_top_down)
}

/// Power over time: a CSV trace beside `out` when the elements have more
/// than one value (or the `.stk` asks for a transient), with the footer's
/// lines and the hint of the transient run (`next` when the `.stk` has a
/// transient section).
fn power_over_time(
    s: &stk::Stk,
    f: &Path,
    out: &Path,
    trace: &[(String, Vec<f64>)],
    ambient: f64,
    notes: &mut Vec<String>,
) -> Result<OverTime, ImportError> {
    // Power over time: a CSV trace when the elements have more than one value.
    let slots = trace.iter().map(|(_, p)| p.len()).min().unwrap_or(0);
    let mut extra = Vec::new();
    let mut footer = Vec::new();
    let mut next = None;
    if let Some((t0, line)) = &s.initial_temperature {
        if si(f, *line, t0, 0)? != ambient {
            footer.push(format!("initial temperature {t0} K: cuth transients start at ambient or --init steady/FILE."));
        }
    }
    if !trace.is_empty() && (slots > 1 || s.transient.is_some()) {
        let stem = out
            .file_stem()
            .map_or("stack".into(), |x| x.to_string_lossy().into_owned());
        let name = format!("{stem}.trace.csv");
        let (step, slot) = match &s.transient {
            Some((a, b)) => (a.clone(), si(f, 0, b, 0)?),
            None => ("SECONDS".into(), 1.0),
        };
        let mut csv = format!(
            "# from {} : one row per 3D-ICE slot of {slot} s\ntime",
            f.display()
        );
        for (n, _) in trace {
            csv.push(',');
            csv.push_str(n);
        }
        for k in 0..slots.max(1) {
            csv.push_str(&format!("\n{:?}", super::round12(k as f64 * slot)));
            for (_, p) in trace {
                csv.push_str(&format!(",{:?}", p[k]));
            }
        }
        csv.push('\n');
        extra.push(ExtraFile {
            name: name.clone(),
            contents: csv,
        });
        let trace_path = out.parent().unwrap_or(Path::new("")).join(&name);
        let hint = format!(
            "cuth transient {} --trace {} --dt {step} --t-end {:?}",
            out.display(),
            trace_path.display(),
            super::round12(slots.max(1) as f64 * slot)
        );
        if s.transient.is_none() {
            footer.push(format!("The steady solver uses the first of {slots} power values; the others are in {name} (1 s per row: scale the times)."));
        }
        footer.push(format!("Transient: {hint}"));
        if s.transient.is_some() {
            next = Some(hint);
        } else {
            notes.push(format!("transient: {hint}"));
        }
        if trace.iter().any(|(_, p)| p.len() != slots) {
            notes.push(format!("elements have different numbers of power values: {slots} used, as 3D-ICE discards extras"));
        }
    }
    Ok(OverTime {
        extra,
        footer,
        next,
    })
}

/// `--snapshot-every` for a transient whose `Tmap` or `Pmap` is written
/// per `step` (1) or per `slot` (the steps in a slot): cuth writes those
/// map frames at its snapshots.
fn snapshot_every(s: &stk::Stk, f: &Path, doc: &StackDoc) -> Result<Option<usize>, ImportError> {
    let Some((step, slot)) = &s.transient else {
        return Ok(None);
    };
    let maps = |when: &str| {
        doc.peer_files
            .iter()
            .any(|d| matches!(d.kind.as_str(), "Tmap" | "Pmap") && d.when == when)
    };
    if maps("step") {
        return Ok(Some(1));
    }
    if !maps("slot") {
        return Ok(None);
    }
    let k = si(f, 0, slot, 0)? / si(f, 0, step, 0)?;
    Ok(Some((k.round() as usize).max(1)))
}

/// What [`power_over_time`] adds to the import.
struct OverTime {
    /// The trace file, if any.
    extra: Vec<ExtraFile>,
    footer: Vec<String>,
    /// The transient run to suggest next.
    next: Option<String>,
}

/// A floorplan element's `material` (3D-ICE's non-uniform mode): the die's
/// source material is what cuth puts there anyway; another one would make
/// the layer heterogeneous, which an import does not write.
fn element_material(fpath: &Path, x: &flp::Element, source: &str) -> Result<(), ImportError> {
    match &x.material {
        Some((m, line)) if m != source => Err(ImportError::Unsupported {
            file: fpath.to_path_buf(),
            line: *line,
            what: format!(
                "material `{m}` of floorplan element `{}`, not the source layer's `{source}` \
                 (heterogeneous floorplan)",
                x.name
            ),
            why: "the import writes one material per source layer".into(),
        }),
        _ => Ok(()),
    }
}

/// The in-plane grid: 3D-ICE's uniform cells, or in non-uniform mode the
/// finest of its cells (a note names `--grid`); `discretization` outside
/// non-uniform mode is ignored by 3D-ICE too.
fn grid(
    s: &stk::Stk,
    f: &Path,
    doc: &mut StackDoc,
    plans: &[(String, Vec<flp::Element>, std::path::PathBuf)],
    notes: &mut Vec<String>,
) -> Result<(), ImportError> {
    let dims = s.dimensions.as_ref().expect("checked by the caller");
    let any_disc = s.stack.iter().any(|e| e.discretization.is_some())
        || plans
            .iter()
            .any(|(_, els, _)| els.iter().any(|x| x.discretization.is_some()));
    if !dims.non_uniform {
        if any_disc {
            let what = "discretization: ignored, as 3D-ICE ignores it without `non-uniform true`";
            doc.grid_comment.push(what.into());
            notes.push(what.into());
        }
        return Ok(());
    }
    let cell = (
        si(f, dims.line, &dims.cell_length, -6)?,
        si(f, dims.line, &dims.cell_width, -6)?,
    );
    let g = extras::non_uniform_edges(s, f, (doc.width, doc.length), cell, plans)?;
    let (nx, ny) = (g.xe.len() - 1, g.ye.len() - 1);
    let set_by = if g.why.is_empty() {
        String::new()
    } else {
        format!(" (discretization of {})", g.why.join(", "))
    };
    doc.grid_comment.push(format!(
        "non-uniform true: a graded grid of {nx} x {ny} cells, the union of every layer's \
         and floorplan element's grid lines{set_by}"
    ));
    if !g.inexact.is_empty() {
        let what = format!(
            "non-uniform true: 3D-ICE's cells differ from layer to layer; cuth's one graded \
             grid ({nx} x {ny}, the union of their lines) is finer than 3D-ICE's on {}",
            g.inexact.join(", ")
        );
        doc.grid_comment.push(what.clone());
        notes.push(format!("{what}; choose another grid with --grid NXxNY"));
    }
    doc.nx = nx;
    doc.ny = ny;
    doc.edges = Some((g.xe, g.ye));
    Ok(())
}
