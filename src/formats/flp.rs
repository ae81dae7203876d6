//! HotSpot floorplan (`.flp`) reader. Each non-comment line is a unit:
//! `<name> <width> <height> <left-x> <bottom-y> [<specific-heat> <resistivity>]`,
//! metres, separated by tabs or spaces. The two optional columns override the
//! layer's material inside the unit (HotSpot uses them for TSVs and TIM
//! patches). Hands the units, with their line numbers for later messages, to
//! `power::layer_power`, which checks them against the footprint.

use super::{invalid, ReadError};
use crate::geometry::Rect;
use crate::material::Material;
use std::collections::HashMap;
use std::path::Path;

/// One floorplan unit.
#[derive(Clone, Debug, PartialEq)]
pub struct FlpUnit {
    pub name: String,
    /// Where the unit lies, metres, as written (not yet checked against the footprint).
    pub rect: Rect,
    /// Material override from the optional columns: k = 1/resistivity in x, y
    /// and z (HotSpot's blocks are isotropic), heat capacity = specific heat,
    /// which HotSpot gives per volume (J/(m³·K)).
    pub material: Option<Material>,
    /// 1-based line in the file, so that later checks can point at it.
    pub line: usize,
}

/// Reads and parses a floorplan file.
pub fn read_flp(path: &Path) -> Result<Vec<FlpUnit>, ReadError> {
    let text = crate::input::read_text(path, crate::input::MAX_TEXT_BYTES).map_err(|source| {
        ReadError::Io {
            file: path.to_path_buf(),
            source,
        }
    })?;
    parse_flp(&text, path)
}

/// Parses floorplan text; `file` is used in messages only.
pub fn parse_flp(text: &str, file: &Path) -> Result<Vec<FlpUnit>, ReadError> {
    let mut units: Vec<FlpUnit> = Vec::new();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        // HotSpot only knows whole-line comments; a trailing `# ...` is
        // accepted too, since no unit name can usefully contain `#`.
        let content = raw.split('#').next().unwrap_or("");
        let cols: Vec<&str> = content.split_whitespace().collect();
        if cols.is_empty() {
            continue;
        }
        let at = format!("line {line}");
        if cols.len() != 5 && cols.len() != 7 {
            return Err(invalid(
                file,
                at,
                format!(
                    "expected 5 columns (name width height left-x bottom-y) or 7 \
                     (… specific-heat resistivity), found {}",
                    cols.len()
                ),
            ));
        }
        let name = cols[0];
        const WHAT: [&str; 7] = [
            "name",
            "width",
            "height",
            "left-x",
            "bottom-y",
            "specific-heat",
            "resistivity",
        ];
        let mut v = [0.0; 7];
        for (j, s) in cols.iter().enumerate().skip(1) {
            v[j] = match s.parse::<f64>() {
                Ok(x) if x.is_finite() => x,
                _ => {
                    return Err(invalid(
                        file,
                        at,
                        format!("unit `{name}`: {} `{s}` is not a finite number", WHAT[j]),
                    ))
                }
            };
        }
        // Sizes, specific heat and resistivity must be positive; corners may be
        // anything finite here and are checked against the footprint later.
        let must_be_positive: &[usize] = if cols.len() == 7 {
            &[1, 2, 5, 6]
        } else {
            &[1, 2]
        };
        for &j in must_be_positive {
            if v[j] <= 0.0 {
                return Err(invalid(
                    file,
                    at,
                    format!("unit `{name}`: {} must be positive, got {}", WHAT[j], v[j]),
                ));
            }
        }
        // Ranges (docs/src/reliability.md: input limits): beyond them the unit's material or size
        // would overflow or make the system singular.
        for j in 1..cols.len() {
            let (lo, hi, unit) = match j {
                1 | 2 => (1e-12, 10.0, "m"),
                5 => (1.0, 1e9, "J/(m^3 K)"),
                6 => (1e-6, 1e6, "m K/W"),
                _ => (-10.0, 10.0, "m"),
            };
            if !(v[j] >= lo && v[j] <= hi) {
                return Err(invalid(
                    file,
                    at,
                    format!(
                        "unit `{name}`: {} must be between {lo:e} and {hi:e} {unit}, got {:e}",
                        WHAT[j], v[j]
                    ),
                ));
            }
        }
        if let Some(first) = seen.insert(name.to_string(), line) {
            return Err(invalid(
                file,
                at,
                format!("unit `{name}` is already defined on line {first}; names must be unique"),
            ));
        }
        let material = (cols.len() == 7).then(|| Material {
            k: [1.0 / v[6]; 3],
            heat_capacity: v[5],
        });
        units.push(FlpUnit {
            name: name.to_string(),
            rect: Rect {
                x0: v[3],
                y0: v[4],
                x1: v[3] + v[1],
                y1: v[4] + v[2],
            },
            material,
            line,
        });
    }
    if units.is_empty() {
        return Err(invalid(file, "units", "the floorplan lists no units"));
    }
    Ok(units)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<FlpUnit>, ReadError> {
        parse_flp(text, Path::new("test.flp"))
    }

    fn message(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn parses_units_comments_and_material_columns() {
        let text = "# header\n\n\
                    core\t0.002\t0.001\t0.0\t0.0005\n  \
                    tsv 0.001 0.0005 0.002 0.0   4e6 0.0058  # TSV bundle\n";
        let units = parse(text).unwrap();
        assert_eq!(units.len(), 2);
        assert_eq!(units[0].name, "core");
        assert_eq!(units[0].line, 3);
        assert_eq!(
            units[0].rect,
            Rect {
                x0: 0.0,
                y0: 0.0005,
                x1: 0.002,
                y1: 0.0015
            }
        );
        assert_eq!(units[0].material, None);
        let m = units[1].material.unwrap();
        assert_eq!(m.k, [1.0 / 0.0058; 3]);
        assert_eq!(m.heat_capacity, 4e6);
        assert_eq!(units[1].line, 4);
    }

    #[test]
    fn bad_lines_name_the_file_line_and_fault() {
        let m = message("a 1 1 0 0\nb 1 1 0\n");
        assert!(
            m.contains("test.flp") && m.contains("line 2") && m.contains("found 4"),
            "{m}"
        );
        let m = message("a 1 1 0 0 4e6\n");
        assert!(m.contains("line 1") && m.contains("found 6"), "{m}");
        let m = message("a 1 x 0 0\n");
        assert!(m.contains("line 1") && m.contains("height `x`"), "{m}");
        let m = message("a 1 NaN 0 0\n");
        assert!(m.contains("not a finite number"), "{m}");
        let m = message("# c\na 0 1 0 0\n");
        assert!(
            m.contains("line 2") && m.contains("width must be positive"),
            "{m}"
        );
        let m = message("a 1 1 0 0 4e6 -1\n");
        assert!(m.contains("resistivity must be positive"), "{m}");
        let m = message("a 1 1 0 0\nb 1 1 1 0\na 1 1 2 0\n");
        assert!(
            m.contains("line 3") && m.contains("line 1") && m.contains("`a`"),
            "{m}"
        );
        let m = message("# only a comment\n\n");
        assert!(m.contains("no units"), "{m}");
    }

    #[test]
    fn missing_file_is_io_error_naming_the_path() {
        let e = read_flp(Path::new("/nonexistent/dir/x.flp")).unwrap_err();
        assert!(matches!(e, ReadError::Io { .. }));
        assert!(e.to_string().contains("/nonexistent/dir/x.flp"));
    }
}
