//! The coolant of each liquid-cooled cavity as a map beside the layer maps:
//! `coolant_NN_<layer>.png` and `.csv`, the coolant cells' temperatures in
//! the display unit, the cavity's walls (or pins' solid share in a 4RM
//! layout) left blank (NaN, hatched in the picture).

use super::write::sanitize;
use super::{csv, png, OutputError, TempUnit};
use crate::grid::Grid;
use crate::stack::Stack;
use crate::thermal::liquid_steady::CoolantField;

/// A file to stage: its name under the run's folder and its bytes.
pub struct CoolantFile {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The PNG and CSV of each cavity's coolant.
pub fn coolant_files(
    stack: &Stack,
    grid: &Grid,
    field: &CoolantField,
    unit: TempUnit,
) -> Result<Vec<CoolantFile>, OutputError> {
    let mut files = Vec::new();
    for (l, map_k) in &field.maps {
        let layer = &stack.layers[*l];
        let stem = format!("coolant_{l:02}_{}", sanitize(&layer.name));
        let shown: Vec<f64> = map_k.iter().map(|&t| unit.convert_k(t)).collect();
        let unit_label = png::unit_label(unit);
        let title = format!("coolant in layer {l}: {} ({unit_label})", layer.name);
        let image_error = |message: String| OutputError::Image {
            path: format!("{stem}.png").into(),
            message,
        };
        let image = png::render(&png::HeatMap {
            x_edges_m: &grid.xe,
            y_edges_m: &grid.ye,
            values: &shown,
            title: &title,
            unit: unit_label,
            blocks: &[],
        })
        .map_err(|e| image_error(e.to_string()))?;
        let png = png::encode(&image).map_err(|e| image_error(e.to_string()))?;
        let mut text = Vec::new();
        csv::write_layer_csv_with_coords(&mut text, &shown, grid, unit).map_err(|source| {
            OutputError::Io {
                path: format!("{stem}.csv").into(),
                source,
            }
        })?;
        files.push(CoolantFile {
            name: format!("{stem}.png"),
            bytes: png,
        });
        files.push(CoolantFile {
            name: format!("{stem}.csv"),
            bytes: text,
        });
    }
    Ok(files)
}
