//! 3D-ICE floorplan files (not HotSpot's `.flp` format): one element per
//! `NAME : position X, Y ; dimension L, W ; power values P1, P2, ... ;`, with
//! µm lengths (L along x, W along y) and one power (W) per time slot. A
//! per-element `material` (3D-ICE 4.0 heterogeneous floorplans) is
//! [`ImportError::Unsupported`]; `discretization` only refines 3D-ICE's
//! non-uniform grid and is reported as ignored.

use super::lexer::{Cursor, Tok};
use crate::import::ImportError;
use std::path::Path;

#[derive(Clone, Debug)]
pub struct Element {
    pub name: String,
    pub line: usize,
    /// South-west corner, µm.
    pub x: String,
    pub y: String,
    /// Extent along x ("length") and y ("width"), µm.
    pub length: String,
    pub width: String,
    /// W per slot.
    pub powers: Vec<f64>,
    pub discretization: bool,
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
        let (mut pos, mut dim, mut powers, mut discretization) = (None, None, None, false);
        // Statements until the next `NAME :`.
        while !c.at_end() && c.peek_at(1) != Some(&Tok::Punct(':')) {
            match c.peek_word(0) {
                Some("position") => {
                    c.keywords("position")?;
                    let x = c.number("x")?;
                    c.punct(',')?;
                    pos = Some((x, c.number("y")?));
                    c.punct(';')?;
                }
                Some("dimension") => {
                    c.keywords("dimension")?;
                    let l = c.number("the length")?;
                    c.punct(',')?;
                    dim = Some((l, c.number("the width")?));
                    c.punct(';')?;
                }
                Some("power") => {
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
                    powers = Some(v);
                }
                Some("material") => {
                    return Err(ImportError::Unsupported {
                        file: file.to_path_buf(),
                        line: c.line(),
                        what: format!(
                            "the material of floorplan element `{name}` (heterogeneous floorplan)"
                        ),
                        why: "cuth's per-block materials come from HotSpot floorplan columns only"
                            .into(),
                    })
                }
                Some("discretization") => {
                    c.skip_statement()?;
                    discretization = true;
                }
                _ => {
                    return Err(c.error(format!(
                        "element `{name}`: expected position, dimension or power values"
                    )))
                }
            }
        }
        let missing = |what: &str| ImportError::Syntax {
            file: file.to_path_buf(),
            line,
            message: format!("element `{name}` has no {what}"),
        };
        let (x, y) = pos.ok_or_else(|| missing("position"))?;
        let (length, width) = dim.ok_or_else(|| missing("dimension"))?;
        let powers = powers.ok_or_else(|| missing("power values"))?;
        out.push(Element {
            name,
            line,
            x,
            y,
            length,
            width,
            powers,
            discretization,
        });
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
                    CB : position 0,0; dimension 10,10; discretization 2, 2; power values 0 ;";
        let e = parse_floorplan(text, Path::new("f.flp")).unwrap();
        assert_eq!(e.len(), 2);
        assert_eq!((e[0].x.as_str(), e[0].width.as_str()), ("3000", "5000"));
        assert_eq!(e[0].powers, vec![1.5, 2.0]);
        assert!(e[1].discretization);
        assert_eq!(e[1].line, 5);
    }

    #[test]
    fn faults() {
        let e = parse_floorplan("A : position 0, 0 ; power values 1 ;", Path::new("f.flp"))
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("f.flp:1: element `A` has no dimension"),
            "{e}"
        );
        let e = parse_floorplan("A :\n material SI ;", Path::new("f.flp")).unwrap_err();
        assert!(
            e.to_string()
                .contains("f.flp:2: the material of floorplan element `A`"),
            "{e}"
        );
        let e = parse_floorplan("A : position 0 0 ;", Path::new("f.flp")).unwrap_err();
        assert!(e.to_string().contains("expected `,`"), "{e}");
    }
}
