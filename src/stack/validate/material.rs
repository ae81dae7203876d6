//! Materials (constant or temperature laws, anisotropic) and leakage specs,
//! checked and converted to SI.

use super::super::law::{Law, MaterialLaw, PropertySpec};
use super::super::schema::{self, LeakageSpec};
use super::super::{Material, StackError};
use super::checks::{invalid, positive};
use std::path::Path;

/// The material `[materials.NAME]`, checked (errors name `materials.NAME`).
pub(in crate::stack) fn material(
    file: &Path,
    name: &str,
    m: &schema::MaterialSpec,
) -> Result<(Material, Option<MaterialLaw>), StackError> {
    material_at(file, &format!("materials.{name}"), m)
}

/// A material spec written at `at` (a `[materials]` entry, or an inline
/// table such as `layers[0] (dies).fill`), checked; errors name `at`.
pub(in crate::stack) fn material_at(
    file: &Path,
    at: &str,
    m: &schema::MaterialSpec,
) -> Result<(Material, Option<MaterialLaw>), StackError> {
    let field = |k: &str| format!("{at}.{k}");
    // The law's shape, then its values against the key's physical range
    // (as a plain number is checked).
    let law = |key: &str, spec: &PropertySpec| -> Result<Law, StackError> {
        let l = Law::from_spec(spec).map_err(|msg| invalid(file, field(key), msg))?;
        match &l {
            Law::Constant(v) | Law::PowerLaw { v300: v, .. } => {
                positive(file, &field(key), *v)?;
            }
            Law::Polynomial(_) => {
                positive(file, &field(key), l.eval(300.0))?;
            }
            Law::Table(points) => {
                for p in points {
                    positive(file, &field(key), p[1])?;
                }
            }
        }
        Ok(l)
    };
    let k = match (&m.k, &m.kx, &m.ky, &m.kz) {
        (Some(k), None, None, None) => {
            let k = law("k", k)?;
            [k.clone(), k.clone(), k]
        }
        (None, Some(kx), Some(ky), Some(kz)) => [law("kx", kx)?, law("ky", ky)?, law("kz", kz)?],
        _ => {
            return Err(invalid(
                file,
                at,
                "give either `k` or all three of `kx`, `ky`, `kz`",
            ))
        }
    };
    let heat_capacity = law("heat_capacity", &m.heat_capacity)?;
    let laws = MaterialLaw { k, heat_capacity };
    let at300 = laws
        .at(300.0)
        .ok_or_else(|| invalid(file, at, "a property law is not positive at 300 K"))?;
    let constant = laws.k.iter().all(Law::is_constant) && laws.heat_capacity.is_constant();
    Ok((at300, (!constant).then_some(laws)))
}

pub(in crate::stack) fn leakage(
    file: &Path,
    field: &str,
    l: Option<LeakageSpec>,
) -> Result<Option<LeakageSpec>, StackError> {
    let Some(l) = l else { return Ok(None) };
    if !(l.p_ref.is_finite() && l.p_ref >= 0.0 && l.p_ref <= crate::formats::MAX_POWER_W) {
        return Err(invalid(
            file,
            format!("{field}.p_ref"),
            format!("must be in [0, 1e9] W, got {}", l.p_ref),
        ));
    }
    if !(l.t_ref.is_finite() && l.t_ref > 0.0) {
        return Err(invalid(
            file,
            format!("{field}.t_ref"),
            format!("must be a positive temperature in K, got {}", l.t_ref),
        ));
    }
    if !(l.beta.is_finite() && l.beta.abs() <= 1.0) {
        return Err(invalid(
            file,
            format!("{field}.beta"),
            format!("must be in [-1, 1] 1/K, got {}", l.beta),
        ));
    }
    Ok(Some(l))
}
