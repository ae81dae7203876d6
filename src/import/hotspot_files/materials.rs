//! The HotSpot 7 materials file (`-materials_file`): per material its name,
//! solid or fluid, conductivity and volumetric heat capacity, and a fluid's
//! viscosity, one field per line. Split from `hotspot_files.rs`, whose line
//! reader it shares; `hotspot_layers` resolves `.lcf` material names here.

use super::{content_lines, syntax};
use crate::import::ImportError;
use std::collections::HashMap;
use std::path::Path;

/// One entry of a HotSpot materials file.
#[derive(Clone, Debug)]
pub struct HsMaterial {
    pub solid: bool,
    /// W/(m·K).
    pub k: f64,
    /// J/(m³·K).
    pub heat_capacity: f64,
    /// Dynamic viscosity, Pa·s (fluids only).
    pub viscosity: Option<f64>,
    pub line: usize,
}

/// Parses a materials file into its entries by name; a name defined twice
/// is an error naming both lines.
pub fn parse_materials(
    text: &str,
    file: &Path,
) -> Result<HashMap<String, HsMaterial>, ImportError> {
    let mut out: HashMap<String, HsMaterial> = HashMap::new();
    let mut fields = content_lines(text).map(|(line, toks)| (line, toks[0].to_string()));
    while let Some((line, name)) = fields.next() {
        let mut next = |what: &str| {
            fields.next().ok_or_else(|| {
                syntax(
                    file,
                    line,
                    format!("material `{name}` ends early: its {what} is missing"),
                )
            })
        };
        let (l, kind) = next("type (solid or fluid)")?;
        let solid = match kind.as_str() {
            "solid" => true,
            "fluid" => false,
            _ => {
                return Err(syntax(
                    file,
                    l,
                    format!("type must be solid or fluid, found `{kind}`"),
                ))
            }
        };
        let mut value = |what: &str| -> Result<f64, ImportError> {
            let (l, s) = next(what)?;
            s.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| syntax(file, l, format!("{what}: `{s}` is not a positive number")))
        };
        let k = value("thermal conductivity")?;
        let heat_capacity = value("volumetric heat capacity")?;
        let viscosity = if solid {
            None
        } else {
            Some(value("dynamic viscosity")?)
        };
        if let Some(prev) = out.get(&name) {
            return Err(syntax(
                file,
                line,
                format!("material `{name}` is already defined on line {}", prev.line),
            ));
        }
        out.insert(
            name,
            HsMaterial {
                solid,
                k,
                heat_capacity,
                viscosity,
                line,
            },
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn materials_file() {
        let text =
            "# f\nsilicon\nsolid\n130.0\n1630300\n\nwater\nfluid\n0.6069\n4172638\n8.89e-4\n";
        let m = parse_materials(text, Path::new("m")).unwrap();
        assert_eq!(m["silicon"].k, 130.0);
        assert!(!m["water"].solid);
        let e = parse_materials("a\nrock\n1\n1\n", Path::new("m")).unwrap_err();
        assert!(
            e.to_string().contains("m:2: type must be solid or fluid"),
            "{e}"
        );
    }
}
