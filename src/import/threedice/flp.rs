//! 3D-ICE floorplan files (not HotSpot's `.flp` format): one element per
//! `NAME : position X, Y ; dimension L, W ; power values P1, P2, ... ;`, or
//! with its outline as a list of `rectangle (X, Y, L, W) ;` (an element that
//! is not one rectangle), with µm lengths (L along x, W along y) and one
//! power (W) per time slot (optional: 3D-ICE's server takes them from its
//! client). `material` and `discretization` (3D-ICE 4.0's
//! non-uniform mode) are kept for the conversion to judge.

use super::lexer::{Cursor, Tok};
use crate::import::ImportError;
use std::path::Path;

/// A rectangle as written, µm: south-west corner and extent along x
/// ("length") and y ("width").
#[derive(Clone, Debug)]
pub struct Rect {
    pub x: String,
    pub y: String,
    pub length: String,
    pub width: String,
}

#[derive(Clone, Debug)]
pub struct Element {
    pub name: String,
    pub line: usize,
    /// The element's outline: one rectangle (`position` + `dimension`) or
    /// several (`rectangle` lines).
    pub rects: Vec<Rect>,
    /// W per slot; one 0 W slot when the element has no `power values`
    /// (3D-ICE's server takes the power from its client).
    pub powers: Vec<f64>,
    /// Whether the element gave `power values`.
    pub powered: bool,
    /// Cells along x and y in 3D-ICE's non-uniform mode, as written.
    pub discretization: Option<(String, String)>,
    /// The element's material (non-uniform mode), and its line.
    pub material: Option<(String, usize)>,
}

/// `A , B` (two numbers).
fn pair(c: &mut Cursor, a: &str, b: &str) -> Result<(String, String), ImportError> {
    let x = c.number(a)?;
    c.punct(',')?;
    Ok((x, c.number(b)?))
}

fn power_values(c: &mut Cursor) -> Result<Vec<f64>, ImportError> {
    c.keywords("power values")?;
    let mut v = Vec::new();
    loop {
        let s = c.number("a power value")?;
        let p: f64 = s.parse().unwrap_or(f64::NAN);
        if p.is_nan() || p < 0.0 {
            return Err(c.error(format!("power `{s}` must be zero or positive")));
        }
        v.push(p);
        if !c.eat_punct(',') {
            break;
        }
    }
    c.punct(';')?;
    Ok(v)
}

/// The statements of element `name`, up to the next `NAME :`.
fn element(c: &mut Cursor, name: String, line: usize) -> Result<Element, ImportError> {
    let file = c.file.clone();
    let (mut pos, mut dim, mut powers) = (None, None, None);
    let mut el = Element {
        name,
        line,
        rects: Vec::new(),
        powers: Vec::new(),
        powered: true,
        discretization: None,
        material: None,
    };
    while !c.at_end() && c.peek_at(1) != Some(&Tok::Punct(':')) {
        match c.peek_word(0) {
            Some("position") => {
                c.keywords("position")?;
                pos = Some(pair(c, "x", "y")?);
                c.punct(';')?;
            }
            Some("dimension") => {
                c.keywords("dimension")?;
                dim = Some(pair(c, "the length", "the width")?);
                c.punct(';')?;
            }
            Some("rectangle") => {
                c.keywords("rectangle")?;
                c.punct('(')?;
                let (x, y) = pair(c, "x", "y")?;
                c.punct(',')?;
                let (length, width) = pair(c, "the length", "the width")?;
                c.punct(')')?;
                c.punct(';')?;
                el.rects.push(Rect {
                    x,
                    y,
                    length,
                    width,
                });
            }
            Some("power") => powers = Some(power_values(c)?),
            Some("material") => {
                let at = c.line();
                c.keywords("material")?;
                el.material = Some((c.ident("a material name")?.0, at));
                c.punct(';')?;
            }
            Some("discretization") => {
                c.keywords("discretization")?;
                let (nx, ny) = pair(c, "the cells along x", "the cells along y")?;
                el.discretization = Some((nx, ny));
                c.punct(';')?;
            }
            _ => {
                return Err(c.error(format!(
                    "element `{}`: expected position, dimension, rectangle, material, \
                     discretization or power values, found {}",
                    el.name,
                    c.found()
                )))
            }
        }
    }
    let missing = |what: &str| ImportError::Syntax {
        file: file.clone(),
        line,
        message: format!("element `{}` has no {what}", el.name),
    };
    if el.rects.is_empty() {
        let (x, y) = pos.ok_or_else(|| missing("position"))?;
        let (length, width) = dim.ok_or_else(|| missing("dimension"))?;
        el.rects.push(Rect {
            x,
            y,
            length,
            width,
        });
    } else if pos.is_some() || dim.is_some() {
        return Err(ImportError::Syntax {
            file,
            line,
            message: format!(
                "element `{}` has both `position`/`dimension` and `rectangle` lines: \
                 give one or the other",
                el.name
            ),
        });
    }
    el.powered = powers.is_some();
    el.powers = powers.unwrap_or_else(|| vec![0.0]);
    Ok(el)
}

pub fn parse_floorplan(text: &str, file: &Path) -> Result<Vec<Element>, ImportError> {
    let mut c = Cursor::new(text, file)?;
    let mut out: Vec<Element> = Vec::new();
    while !c.at_end() {
        let (name, line) = c.ident("a floorplan element name")?;
        if out.iter().any(|e| e.name == name) {
            return Err(c.error(format!("floorplan element `{name}` is already declared")));
        }
        c.punct(':')?;
        out.push(element(&mut c, name, line)?);
    }
    if out.is_empty() {
        return Err(ImportError::Invalid {
            file: file.to_path_buf(),
            message: "the floorplan has no elements".into(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements() {
        let text =
            "Core0:\n position 3000 , 10000 ;\n dimension 2000, 5000;\n power values 1.5, 2.0 ;\n\
                    CB : position 0,0; dimension 10,10; discretization 2, 2; material SI ; power values 0 ;";
        let e = parse_floorplan(text, Path::new("f.flp")).unwrap();
        assert_eq!(e.len(), 2);
        let r = &e[0].rects[0];
        assert_eq!((r.x.as_str(), r.width.as_str()), ("3000", "5000"));
        assert_eq!(e[0].powers, vec![1.5, 2.0]);
        assert_eq!(e[1].discretization, Some(("2".into(), "2".into())));
        assert_eq!(e[1].material, Some(("SI".into(), 5)));
        assert_eq!(e[1].line, 5);
    }

    #[test]
    fn rectangle_lists() {
        let text = "A :\n rectangle ( 0, 0, 2000, 3000 ) ;\n rectangle (2000, 0, 10, 20) ;\n \
                    power values 1, 2 ;\nB : rectangle (5, 6, 7, 8) ; power values 0 ;";
        let e = parse_floorplan(text, Path::new("f.flp")).unwrap();
        assert_eq!(e[0].rects.len(), 2);
        assert_eq!(e[0].rects[1].x, "2000");
        assert_eq!(e[0].rects[1].width, "20");
        assert_eq!(e[1].rects[0].length, "7");
        let e = parse_floorplan(
            "A : position 0, 0 ; dimension 1, 1 ; rectangle (0, 0, 1, 1) ; power values 1 ;",
            Path::new("f.flp"),
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("f.flp:1: element `A` has both"),
            "{e}"
        );
        let e = parse_floorplan(
            "A : rectangle (0, 0, 1) ; power values 1 ;",
            Path::new("f.flp"),
        )
        .unwrap_err();
        assert!(e.to_string().contains("expected `,`"), "{e}");
    }

    #[test]
    fn faults() {
        let e =
            parse_floorplan("A : position 0, 0 ; dimension 1, 1 ;", Path::new("f.flp")).unwrap();
        assert_eq!((e[0].powers.as_slice(), e[0].powered), (&[0.0][..], false));
        let e = parse_floorplan("A : position 0, 0 ; power values 1 ;", Path::new("f.flp"))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("f.flp:1: element `A` has no dimension"),
            "{e}"
        );
        let e = parse_floorplan("A :\n material 5 ;", Path::new("f.flp")).unwrap_err();
        assert!(e.to_string().contains("f.flp:2:"), "{e}");
        let e = parse_floorplan("A : position 0 0 ;", Path::new("f.flp")).unwrap_err();
        assert!(e.to_string().contains("expected `,`"), "{e}");
    }
}
