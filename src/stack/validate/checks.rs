//! Field-level checks shared by the stack's validation: each number's sign,
//! finiteness and plausible range, with errors that name file and field.

use super::super::StackError;
use std::path::Path;

/// Largest grid we accept from a file or flag; beyond this a typo is likelier than intent.
const MAX_CELLS_PER_AXIS: usize = 1 << 16;

pub(in crate::stack) fn invalid(
    file: &Path,
    field: impl Into<String>,
    message: impl Into<String>,
) -> StackError {
    StackError::Invalid {
        file: file.to_path_buf(),
        field: field.into(),
        message: message.into(),
    }
}

/// Accepted range of a field, from its name: beyond it a number is a typo or
/// a unit slip, and would make the system singular or overflow long before
/// the solver could say which field was at fault (docs/src/reliability.md: input limits).
pub(in crate::stack) fn range_of(field: &str) -> (f64, f64, &'static str) {
    let last = field.rsplit('.').next().unwrap_or(field);
    match last {
        "k" | "kx" | "ky" | "kz" => (1e-6, 1e6, "W/(m K)"),
        "heat_capacity" => (1.0, 1e9, "J/(m^3 K)"),
        "power" | "total" => (0.0, 1e9, "W"),
        "thickness" => (1e-12, 10.0, "m"),
        "width" | "length" | "height" | "x" | "y" => (1e-12, 10.0, "m"),
        "cell" | "max_cell" => (1e-12, 10.0, "m"),
        "ambient" => (1.0, 1e4, "K"),
        "h_top" | "h_bottom" => (1e-6, 1e12, "W/(m^2 K)"),
        _ => (0.0, f64::MAX, ""),
    }
}

pub(in crate::stack) fn in_range(
    file: &Path,
    field: &str,
    v: f64,
    lo: f64,
) -> Result<f64, StackError> {
    let (min, hi, unit) = range_of(field);
    let lo = if lo > 0.0 { lo.max(min) } else { lo };
    if v.is_finite() && v >= lo && v <= hi && (lo > 0.0 || v >= 0.0) {
        return Ok(v);
    }
    let what = if lo > 0.0 {
        "a positive number"
    } else {
        "zero or positive"
    };
    Err(invalid(
        file,
        field,
        format!("must be {what} between {lo:e} and {hi:e} {unit}, got {v:e}"),
    ))
}

pub(in crate::stack) fn positive(file: &Path, field: &str, v: f64) -> Result<f64, StackError> {
    in_range(file, field, v, f64::MIN_POSITIVE)
}

pub(super) fn non_negative(file: &Path, field: &str, v: f64) -> Result<f64, StackError> {
    in_range(file, field, v, 0.0)
}

pub(in crate::stack) fn check_grid(
    nx: usize,
    ny: usize,
    file: &Path,
    field: &str,
) -> Result<(), StackError> {
    for (n, axis) in [(nx, "nx"), (ny, "ny")] {
        if n == 0 || n > MAX_CELLS_PER_AXIS {
            return Err(invalid(
                file,
                format!("{field}.{axis}"),
                format!("must be between 1 and {MAX_CELLS_PER_AXIS}, got {n}"),
            ));
        }
    }
    Ok(())
}

/// A layer, block or region name free of control characters: names reach
/// the CSVs, `blocks.steady` and the terminal as written, where an ESC or a
/// NUL would corrupt them. `field` names where it is written (`layers[0]`);
/// the message shows the name escaped.
pub(in crate::stack) fn check_name(file: &Path, field: &str, name: &str) -> Result<(), StackError> {
    match name.chars().find(|c| c.is_control()) {
        None => Ok(()),
        Some(c) => Err(invalid(
            file,
            format!("{field}.name"),
            format!(
                "`{}` holds the control character {:?}; names must be printable",
                name.escape_debug(),
                c
            ),
        )),
    }
}
