//! Readers for HotSpot's own text formats that cuth had no reader for: the
//! configuration file (`-name value` per line), the layer configuration file
//! (`.lcf`: seven or six fields per layer, one per line) and the materials
//! file (HotSpot 7: name, solid|fluid, conductivity, heat capacity[,
//! viscosity]). Each follows HotSpot's own reader (the first whitespace token
//! of each non-comment line is a field) and keeps line numbers for messages.
//! Floorplans and power traces are read by [`crate::formats`]; the materials
//! file has its own submodule, `materials`.

mod materials;

pub use materials::{parse_materials, HsMaterial};

use super::ImportError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn syntax(file: &Path, line: usize, message: impl Into<String>) -> ImportError {
    ImportError::Syntax {
        file: file.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// The non-comment, non-blank lines of `text`: (1-based line, tokens).
fn content_lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let toks: Vec<&str> = l.split_whitespace().collect();
        match toks.first() {
            None => None,
            Some(t) if t.starts_with('#') => None,
            Some(_) => Some((i + 1, toks)),
        }
    })
}

/// One `-name value` setting and where it was written.
#[derive(Clone, Debug)]
pub struct Setting {
    pub value: String,
    pub line: usize,
}

/// A HotSpot configuration file: settings by name (without the dash).
#[derive(Clone, Debug)]
pub struct HsConfig {
    pub file: PathBuf,
    pub settings: HashMap<String, Setting>,
}

pub fn parse_config(text: &str, file: &Path) -> Result<HsConfig, ImportError> {
    let mut settings: HashMap<String, Setting> = HashMap::new();
    for (line, toks) in content_lines(text) {
        let Some(name) = toks[0].strip_prefix('-').filter(|n| !n.is_empty()) else {
            return Err(syntax(
                file,
                line,
                format!("expected `-name value`, found `{}`", toks[0]),
            ));
        };
        let Some(value) = toks.get(1).filter(|v| !v.starts_with('#')) else {
            return Err(syntax(file, line, format!("`-{name}` has no value")));
        };
        if let Some(t) = toks.get(2).filter(|t| !t.starts_with('#')) {
            return Err(syntax(
                file,
                line,
                format!("`-{name} {value}` is followed by `{t}`: one value per setting"),
            ));
        }
        if let Some(prev) = settings.get(name) {
            return Err(syntax(
                file,
                line,
                format!("`-{name}` is already set on line {}", prev.line),
            ));
        }
        let value = value.to_string();
        settings.insert(name.to_string(), Setting { value, line });
    }
    Ok(HsConfig {
        file: file.to_path_buf(),
        settings,
    })
}

impl HsConfig {
    /// A number setting, or `default` (HotSpot's built-in value) when absent.
    pub fn num(&self, name: &str, default: f64) -> Result<f64, ImportError> {
        match self.settings.get(name) {
            None => Ok(default),
            Some(s) => s
                .value
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    syntax(
                        &self.file,
                        s.line,
                        format!("`-{name}`: `{}` is not a number", s.value),
                    )
                }),
        }
    }

    /// A positive integer setting (grid rows and columns), or `default`.
    pub fn count(&self, name: &str, default: usize) -> Result<usize, ImportError> {
        match self.settings.get(name) {
            None => Ok(default),
            Some(s) => s
                .value
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    syntax(
                        &self.file,
                        s.line,
                        format!("`-{name}`: `{}` is not a positive integer", s.value),
                    )
                }),
        }
    }

    /// A string setting; HotSpot writes `(null)` for "no file".
    pub fn text(&self, name: &str) -> Option<&Setting> {
        self.settings.get(name).filter(|s| s.value != "(null)")
    }

    pub fn line(&self, name: &str) -> usize {
        self.settings.get(name).map_or(0, |s| s.line)
    }
}

/// A layer's material in an `.lcf`: its two numbers, or a materials-file name.
#[derive(Clone, Debug, PartialEq)]
pub enum LcfMaterial {
    /// Volumetric specific heat J/(m³·K) and resistivity m·K/W.
    Values {
        heat_capacity: f64,
        resistivity: f64,
    },
    Named(String),
}

#[derive(Clone, Debug)]
pub struct LcfLayer {
    pub number: usize,
    /// Line of the layer number.
    pub line: usize,
    pub lateral: bool,
    pub lateral_line: usize,
    pub power: bool,
    pub material: LcfMaterial,
    pub thickness: f64,
    pub floorplan: String,
    pub floorplan_line: usize,
}

/// Parses an `.lcf`; layers are returned sorted by layer number, which must
/// be 0..n-1, each once (as HotSpot requires).
pub fn parse_lcf(text: &str, file: &Path) -> Result<Vec<LcfLayer>, ImportError> {
    let mut fields = content_lines(text).map(|(line, toks)| (line, toks[0].to_string()));
    let mut layers: Vec<LcfLayer> = Vec::new();
    let number = |line: usize, s: &str, what: &str| -> Result<f64, ImportError> {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| {
                syntax(
                    file,
                    line,
                    format!("{what}: `{s}` is not a positive number"),
                )
            })
    };
    let yes_no = |line: usize, s: &str, what: &str| -> Result<bool, ImportError> {
        match s.chars().next() {
            Some('Y' | 'y') => Ok(true),
            Some('N' | 'n') => Ok(false),
            _ => Err(syntax(
                file,
                line,
                format!("{what}: expected Y or N, found `{s}`"),
            )),
        }
    };
    while let Some((line, tok)) = fields.next() {
        let n: usize = tok.parse().map_err(|_| {
            syntax(
                file,
                line,
                format!("expected a layer number, found `{tok}`"),
            )
        })?;
        if let Some(prev) = layers.iter().find(|l| l.number == n) {
            return Err(syntax(
                file,
                line,
                format!("layer number {n} is already used on line {}", prev.line),
            ));
        }
        let mut next = |what: &str| {
            fields.next().ok_or_else(|| {
                syntax(
                    file,
                    line,
                    format!("layer {n} ends early: its {what} is missing"),
                )
            })
        };
        let (lateral_line, s) = next("lateral heat flow flag")?;
        let lateral = yes_no(lateral_line, &s, "lateral heat flow")?;
        let (l, s) = next("power dissipation flag")?;
        let power = yes_no(l, &s, "power dissipation")?;
        let (l, s) = next("specific heat (or material name)")?;
        let material = match s.parse::<f64>() {
            Ok(_) => {
                let heat_capacity = number(l, &s, "specific heat")?;
                let (l, s) = next("resistivity")?;
                let resistivity = number(l, &s, "resistivity")?;
                LcfMaterial::Values {
                    heat_capacity,
                    resistivity,
                }
            }
            Err(_) => LcfMaterial::Named(s),
        };
        let (l, s) = next("thickness")?;
        let thickness = number(l, &s, "thickness")?;
        let (floorplan_line, floorplan) = next("floorplan file")?;
        layers.push(LcfLayer {
            number: n,
            line,
            lateral,
            lateral_line,
            power,
            material,
            thickness,
            floorplan,
            floorplan_line,
        });
    }
    if layers.is_empty() {
        return Err(ImportError::Invalid {
            file: file.to_path_buf(),
            message: "no layers: the file has no layer records".into(),
        });
    }
    layers.sort_by_key(|l| l.number);
    for (i, l) in layers.iter().enumerate() {
        if l.number != i {
            return Err(syntax(
                file,
                l.line,
                format!(
                    "layer numbers must be 0..{} without gaps; layer {i} is missing",
                    layers.len() - 1
                ),
            ));
        }
    }
    Ok(layers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lcf_with_numbers_and_names() {
        let text = "# c\n1\nY\nN\nsilicon\n1e-4\nb.flp\n\n0\ny\ny\n1.75e6\n0.01\n0.00015\na.flp\n";
        let l = parse_lcf(text, Path::new("x.lcf")).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(l[0].number, 0);
        assert_eq!(
            l[0].material,
            LcfMaterial::Values {
                heat_capacity: 1.75e6,
                resistivity: 0.01
            }
        );
        assert_eq!(l[0].floorplan, "a.flp");
        assert!(l[0].power && l[0].lateral);
        assert_eq!(l[1].material, LcfMaterial::Named("silicon".into()));
        assert!(!l[1].power);
        assert_eq!(l[1].thickness, 1e-4);
    }

    #[test]
    fn lcf_errors_name_the_line() {
        let e = parse_lcf("0\nY\nmaybe\n", Path::new("x.lcf")).unwrap_err();
        assert!(e.to_string().contains("x.lcf:3: power dissipation"), "{e}");
        let e = parse_lcf("0\nY\nY\n1.75e6\n0.01\n", Path::new("x.lcf")).unwrap_err();
        assert!(e.to_string().contains("thickness is missing"), "{e}");
        let e = parse_lcf("1\nY\nY\n1\n1\n1\na.flp\n", Path::new("x.lcf")).unwrap_err();
        assert!(e.to_string().contains("layer 0 is missing"), "{e}");
    }

    #[test]
    fn config_pairs_and_faults() {
        let c = parse_config(
            "# x\n\t-ambient 318.15\n-init_file (null)\n",
            Path::new("h.config"),
        )
        .unwrap();
        assert_eq!(c.num("ambient", 0.0).unwrap(), 318.15);
        assert_eq!(c.num("r_convec", 0.1).unwrap(), 0.1);
        assert!(c.text("init_file").is_none());
        let e = parse_config("ambient 3\n", Path::new("h.config")).unwrap_err();
        assert!(
            e.to_string().contains("h.config:1: expected `-name value`"),
            "{e}"
        );
        let e = parse_config("-a 1\n-a 2\n", Path::new("h.config")).unwrap_err();
        assert!(e.to_string().contains("already set on line 1"), "{e}");
        let e = parse_config(
            "-a x\n-grid_rows 39.5\n-grid_cols 32\n",
            Path::new("h.config"),
        )
        .unwrap();
        assert!(e.num("a", 0.0).is_err());
        assert!(e.count("grid_rows", 64).is_err());
        assert_eq!(e.count("grid_cols", 64).unwrap(), 32);
        assert_eq!(e.count("nothing", 64).unwrap(), 64);
    }
}
