//! `[[probes]]`: named points whose temperature every run reports. Checked
//! here like any other field: a unique name, `x` and `y` on the footprint,
//! exactly one of `layer` (a known layer name) or `z` (within the stack's
//! height).

use super::schema::ProbeSpec;
use super::{Layer, Probe, ProbeAt, StackError};
use std::path::Path;

fn invalid(file: &Path, field: String, message: String) -> StackError {
    StackError::Invalid {
        file: file.to_path_buf(),
        field,
        message,
    }
}

/// `v` within `0..=hi` (m), else an error naming `field`.
fn within(file: &Path, field: String, v: f64, hi: f64, what: &str) -> Result<f64, StackError> {
    if v.is_finite() && (0.0..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(invalid(
            file,
            field,
            format!("must lie within the {what}, 0 to {hi:e} m, got {v:e} m"),
        ))
    }
}

pub(super) fn resolve(
    specs: &[ProbeSpec],
    file: &Path,
    width_m: f64,
    length_m: f64,
    layers: &[Layer],
) -> Result<Vec<Probe>, StackError> {
    let height_m: f64 = layers.iter().map(|l| l.thickness_m).sum();
    let mut out: Vec<Probe> = Vec::with_capacity(specs.len());
    for (i, p) in specs.iter().enumerate() {
        let field = |k: &str| format!("probes[{i}] ({}).{k}", p.name);
        if p.name.trim().is_empty() {
            return Err(invalid(file, field("name"), "must not be empty".into()));
        }
        if let Some(j) = out.iter().position(|o| o.name == p.name) {
            return Err(invalid(
                file,
                field("name"),
                format!("probe `{}` is already defined as probes[{j}]", p.name),
            ));
        }
        let x_m = within(file, field("x"), p.x.0, width_m, "domain's width")?;
        let y_m = within(file, field("y"), p.y.0, length_m, "domain's length")?;
        let at = match (&p.layer, p.z) {
            (Some(name), None) => match layers.iter().position(|l| &l.name == name) {
                Some(l) => ProbeAt::Layer(l),
                None => {
                    let known: Vec<&str> = layers.iter().map(|l| l.name.as_str()).collect();
                    return Err(invalid(
                        file,
                        field("layer"),
                        format!("unknown layer `{name}` (known: {})", known.join(", ")),
                    ));
                }
            },
            (None, Some(z)) => ProbeAt::Z(within(file, field("z"), z.0, height_m, "stack height")?),
            _ => {
                return Err(invalid(
                    file,
                    format!("probes[{i}] ({})", p.name),
                    "give exactly one of `layer` (a layer name) or `z` (a height)".into(),
                ))
            }
        };
        out.push(Probe {
            name: p.name.clone(),
            x_m,
            y_m,
            at,
        });
    }
    Ok(out)
}
