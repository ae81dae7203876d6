//! Parts of the 3D-ICE conversion beyond the layer stack: where a floorplan
//! is opened from, the in-plane grid of 3D-ICE's non-uniform mode (a
//! graded grid of every layer's lines), the block of an element (one block
//! however many rectangles draw it), and the `output:` section (probes and
//! the `[output.threedice]` files a run writes).

use super::flp;
use super::si;
use super::stk::{self, Stk};
use crate::import::emit::{BlockDoc, PeerFileDoc, ProbeDoc};
use crate::import::ImportError;
use std::path::{Path, PathBuf};

/// Where 3D-ICE finds `name`, written in `stk_path` on `line`: from the
/// working directory, as 3D-ICE opens it; else beside the `.stk`; else in a
/// folder above the `.stk`'s (3D-ICE's own test harness runs from `test/`
/// with the stack files two folders down). The second value says which,
/// when not the working directory.
pub fn floorplan_path(
    stk_path: &Path,
    line: usize,
    name: &str,
) -> Result<(PathBuf, Option<String>), ImportError> {
    let p = Path::new(name);
    if p.is_absolute() || p.is_file() {
        return Ok((p.to_path_buf(), None));
    }
    let beside = crate::import::beside(stk_path, name);
    if beside.is_file() {
        return Ok((beside, None));
    }
    let abs = |q: &Path| std::path::absolute(q).unwrap_or_else(|_| q.to_path_buf());
    let dir = match stk_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    for up in abs(dir).ancestors().skip(1) {
        let q = up.join(p);
        if q.is_file() {
            let why = format!(
                "floorplan \"{name}\" (line {line}) opened as {}: not found from the working \
                 directory nor beside the .stk, found in a folder above it",
                q.display()
            );
            return Ok((q, Some(why)));
        }
    }
    let cwd = abs(p);
    let beside = abs(&beside);
    Err(ImportError::Syntax {
        file: stk_path.to_path_buf(),
        line,
        message: format!(
            "floorplan \"{name}\" not found: tried {} (from the working directory, as 3D-ICE \
             opens it), {} (beside the .stk) and the folders above the .stk's",
            cwd.display(),
            beside.display()
        ),
    })
}

/// A `discretization` count as a positive integer.
fn count(file: &Path, line: usize, lit: &str) -> Result<f64, ImportError> {
    match lit.parse::<f64>() {
        Ok(n) if n >= 1.0 && n.fract() == 0.0 && n <= 65536.0 => Ok(n),
        _ => Err(ImportError::Syntax {
            file: file.to_path_buf(),
            line,
            message: format!("discretization `{lit}` must be a whole number of cells, 1 or more"),
        }),
    }
}

/// 3D-ICE's non-uniform grid as cuth's graded one: the union of every
/// layer's grid lines (each stack element's `discretization` across the
/// chip, or the `dimensions` cell; on a die's source layer each floorplan
/// element's `discretization` across the element), one tensor-product grid
/// for all layers. Exact when every layer's own cells are the grid's cells
/// (same count), finer than 3D-ICE's elsewhere.
pub struct NonUniform {
    pub xe: Vec<f64>,
    pub ye: Vec<f64>,
    /// What set lines, for the comment.
    pub why: Vec<String>,
    /// The layers (stack elements) whose cells cuth's grid does not reproduce.
    pub inexact: Vec<String>,
}

/// `n` equal cells over `lo..hi`: their lines.
fn split(lines: &mut Vec<f64>, lo: f64, hi: f64, n: f64) {
    let n = n as usize;
    lines.extend((0..=n).map(|k| crate::import::round12(lo + (hi - lo) * k as f64 / n as f64)));
}

/// Sorted lines, those within 1e-9 of the extent merged.
fn tidy(mut v: Vec<f64>, extent: f64) -> Vec<f64> {
    v.retain(|x| (0.0..=extent * (1.0 + 1e-12)).contains(x));
    v.sort_by(f64::total_cmp);
    v.dedup_by(|a, b| (*a - *b).abs() <= 1e-9 * extent);
    v
}

pub fn non_uniform_edges(
    s: &Stk,
    f: &Path,
    (width, length): (f64, f64),
    (cx, cy): (f64, f64),
    plans: &Plans,
) -> Result<NonUniform, ImportError> {
    let (mut xs, mut ys, mut why) = (Vec::new(), Vec::new(), Vec::new());
    // Per stack element, its lines and its 3D-ICE cell count per layer.
    let mut layers: Vec<(String, usize)> = Vec::new();
    let default = (
        (width / cx).round().max(1.0),
        (length / cy).round().max(1.0),
    );
    for e in &s.stack {
        let (nx, ny) = match &e.discretization {
            Some((nx, ny)) => {
                why.push(format!("`{}` {nx} x {ny}", e.name));
                (count(f, e.line, nx)?, count(f, e.line, ny)?)
            }
            None => default,
        };
        // A die made of its source layer alone has no layer on these cells.
        let plain = match &e.element {
            stk::Element::Die { die, .. } => {
                s.dies.iter().any(|d| d.name == *die && d.layers.len() > 1)
            }
            stk::Element::Layer(_) | stk::Element::Channel => true,
        };
        if plain {
            split(&mut xs, 0.0, width, nx);
            split(&mut ys, 0.0, length, ny);
            layers.push((e.name.clone(), (nx * ny) as usize));
        }
        let Some((_, els, path)) = plans.iter().find(|(n, _, _)| *n == e.name) else {
            continue;
        };
        let mut cells = 0;
        for el in els {
            let (ex, ey) = match &el.discretization {
                Some((a, b)) => {
                    why.push(format!("`{}` {a} x {b}", el.name));
                    (count(path, el.line, a)?, count(path, el.line, b)?)
                }
                None => (1.0, 1.0),
            };
            for r in &el.rects {
                let len = |v: &str| si(path, el.line, v, -6);
                let (x0, y0) = (len(&r.x)?, len(&r.y)?);
                split(&mut xs, x0, x0 + len(&r.length)?, ex);
                split(&mut ys, y0, y0 + len(&r.width)?, ey);
                cells += (ex * ey) as usize;
            }
        }
        layers.push((format!("{} (source layer)", e.name), cells));
    }
    let (xe, ye) = (tidy(xs, width), tidy(ys, length));
    let n = (xe.len() - 1) * (ye.len() - 1);
    let inexact = layers
        .into_iter()
        .filter(|(_, c)| *c != n)
        .map(|(name, _)| name)
        .collect();
    Ok(NonUniform {
        xe,
        ye,
        why,
        inexact,
    })
}

/// The block of floorplan element `x`, named `name`, with its power per
/// slot: one block however many rectangles draw it (3D-ICE spreads an
/// element's power uniformly over its surface and reports it over the
/// union, as cuth does with a block of several `rects`).
pub fn element_block(
    fpath: &Path,
    x: &flp::Element,
    name: &str,
) -> Result<(BlockDoc, Vec<f64>), ImportError> {
    let mut rects = Vec::new();
    for r in &x.rects {
        let len = |v: &str| si(fpath, x.line, v, -6);
        rects.push([len(&r.x)?, len(&r.y)?, len(&r.length)?, len(&r.width)?]);
    }
    let [x0, y0, w, h] = rects[0];
    let block = BlockDoc {
        name: name.to_string(),
        x: x0,
        y: y0,
        width: w,
        height: h,
        power: x.powers[0],
        more: rects[1..].to_vec(),
    };
    Ok((block, x.powers.clone()))
}

/// What the `output:` section becomes: probes, 3D-ICE output files for a
/// run to write, and notes for the user.
#[derive(Default)]
pub struct Outputs {
    pub probes: Vec<ProbeDoc>,
    pub files: Vec<PeerFileDoc>,
    pub notes: Vec<String>,
}

/// The floorplans of the dies: (stack element, its elements, path).
pub type Plans = [(String, Vec<flp::Element>, PathBuf)];

/// The output instructions: `T` as probes on the source layer of the die
/// (or on the layer) they name, µm -> m, named by their file's stem (with
/// the element when two share one), and every instruction cuth can write
/// as a file for the run (`Tcoolant` on the channel's cavity layer);
/// `gradient` is noted and skipped.
/// `block_name` names a die's element as the import's blocks do.
pub fn outputs(
    s: &Stk,
    f: &Path,
    plans: &Plans,
    block_name: &dyn Fn(&str, &str) -> String,
) -> Result<Outputs, ImportError> {
    let mut out = Outputs::default();
    let unknown = |line: usize, what: &str, e: &str| ImportError::Syntax {
        file: f.to_path_buf(),
        line,
        message: format!("output {what}: unknown stack element `{e}`"),
    };
    for p in &s.probes {
        let layer = output_layer(s, &p.element).ok_or_else(|| unknown(p.line, "T", &p.element))?;
        let stem = Path::new(&p.file)
            .file_stem()
            .map_or_else(|| p.file.clone(), |x| x.to_string_lossy().into_owned());
        let mut name = stem.clone();
        if out.probes.iter().any(|o| o.name == name) {
            name = format!("{stem}.{}", p.element);
        }
        let comment = format!(
            "line {}: T ({}, {}, {}, \"{}\", {})",
            p.line, p.element, p.x, p.y, p.file, p.when
        );
        out.files.push(PeerFileDoc {
            kind: "T".into(),
            file: p.file.clone(),
            element: p.element.clone(),
            probe: Some(name.clone()),
            when: p.when.clone(),
            comment: comment.clone(),
            ..Default::default()
        });
        out.probes.push(ProbeDoc {
            name,
            x: si(f, p.line, &p.x, -6)?,
            y: si(f, p.line, &p.y, -6)?,
            layer,
            comment,
        });
    }
    for o in &s.outputs {
        let comment = format!("line {}: {}", o.line, describe(o));
        let channel = |e: &str| {
            s.stack
                .iter()
                .any(|x| x.name == e && matches!(x.element, stk::Element::Channel))
        };
        if o.kind == "Tcoolant" && !o.element.as_deref().is_some_and(channel) {
            out.notes.push(format!(
                "output skipped: {comment}: not a channel of the stack (3D-ICE reports the outlets of channels)"
            ));
            continue;
        }
        if o.quantity.as_deref() == Some("gradient") {
            out.notes.push(format!(
                "output skipped: {comment}: cuth has no `gradient` statistic (maximum, minimum and average are written)"
            ));
            continue;
        }
        let mut doc = PeerFileDoc {
            kind: o.kind.clone(),
            file: o.file.clone(),
            element: o.element.clone().unwrap_or_default(),
            quantity: o.quantity.clone(),
            when: o.when.clone(),
            comment,
            ..Default::default()
        };
        if let Some(e) = &o.element {
            doc.layer = Some(output_layer(s, e).ok_or_else(|| unknown(o.line, &o.kind, e))?);
        }
        if matches!(o.kind.as_str(), "Tflp" | "Tflpel" | "Pmap") {
            let die = o.element.as_deref().unwrap_or_default();
            let Some((_, els, _)) = plans.iter().find(|(n, _, _)| n == die) else {
                return Err(ImportError::Syntax {
                    file: f.to_path_buf(),
                    line: o.line,
                    message: format!("output {}: `{die}` is not a die of the stack", o.kind),
                });
            };
            let wanted = o.floorplan_element.as_deref();
            for el in els.iter().filter(|el| wanted.is_none_or(|w| w == el.name)) {
                let name = block_name(die, &el.name);
                doc.elements.push((el.name.clone(), vec![name]));
            }
            if let (Some(w), true) = (wanted, doc.elements.is_empty()) {
                return Err(ImportError::Syntax {
                    file: f.to_path_buf(),
                    line: o.line,
                    message: format!("output Tflpel: die `{die}` has no floorplan element `{w}`"),
                });
            }
            if o.kind == "Pmap" {
                doc.elements.clear();
            }
        }
        if o.kind == "T3d" && o.when != "final" {
            out.notes.push(format!(
                "output {}: cuth writes the final field only, not one per {}",
                doc.comment, o.when
            ));
        }
        out.files.push(doc);
    }
    if !out.files.is_empty() {
        let names: Vec<&str> = out.files.iter().map(|d| d.file.as_str()).collect();
        out.notes.push(format!(
            "output: {} instruction(s) carried over ({}); `cuth solve` and `cuth transient` write \
             them in 3D-ICE's formats under their --out folder ({} probe(s) also in probes.csv)",
            out.files.len(),
            names.join(", "),
            out.probes.len()
        ));
    }
    Ok(out)
}

/// An instruction as a person reads it.
fn describe(o: &stk::OutputInstr) -> String {
    let mut args = Vec::new();
    match (&o.element, &o.floorplan_element) {
        (Some(e), Some(x)) => args.push(format!("{e}.{x}")),
        (Some(e), None) => args.push(e.clone()),
        _ => {}
    }
    args.push(format!("\"{}\"", o.file));
    args.extend(o.quantity.clone());
    args.push(o.when.clone());
    format!("{} ({})", o.kind, args.join(", "))
}

/// The cuth layer that a 3D-ICE output element names: a die's source layer
/// or a layer.
pub fn output_layer(s: &Stk, element: &str) -> Option<String> {
    let e = s.stack.iter().find(|e| e.name == element)?;
    Some(match e.element {
        stk::Element::Die { .. } => format!("{}_source", e.name),
        stk::Element::Layer(_) | stk::Element::Channel => e.name.clone(),
    })
}
