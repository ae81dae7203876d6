//! The `power=` argument of `Stack.solve`, `Session.set_power` and the
//! cases of `sweep`: a dict whose keys are block names (a number of W) or
//! layer names (a map, `ndarray (ny, nx)` of W per cell), converted once
//! into what a [`Simulation`] sets.

use crate::errors::input_error;
use cuth::simulation::{Simulation, SimulationError};
use cuth::thermal::device::ThermalBackend;
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Block powers and whole layer maps, in the dict's order.
#[derive(Default)]
pub struct PowerArg {
    pub blocks: Vec<(String, f64)>,
    /// Layer name, map (W per plane cell, index `x + nx*y`).
    pub maps: Vec<(String, Vec<f64>)>,
}

/// An array-like as a 2-D float64 array (ints, float32, lists converted).
pub fn as_f64_2d<'py>(v: &Bound<'py, PyAny>) -> PyResult<PyReadonlyArray2<'py, f64>> {
    if let Ok(a) = v.extract::<PyReadonlyArray2<f64>>() {
        return Ok(a);
    }
    let np = v.py().import("numpy")?;
    np.call_method1("asarray", (v, "float64"))?.extract()
}

/// A row-major `(ny, nx)` array as a plane map, index `x + nx*y`.
pub fn plane_map(
    a: &PyReadonlyArray2<f64>,
    nx: usize,
    ny: usize,
    what: &str,
) -> PyResult<Vec<f64>> {
    let shape = a.shape();
    if shape != [ny, nx] {
        return Err(input_error(format!(
            "{what}: has shape {shape:?}, the grid's plane is (ny, nx) = ({ny}, {nx})"
        )));
    }
    Ok(a.as_array().iter().copied().collect())
}

impl PowerArg {
    /// `d`'s entries: a number is a block's power, anything else a layer's
    /// map on an `nx` × `ny` plane.
    pub fn from_dict(d: &Bound<'_, PyDict>, nx: usize, ny: usize) -> PyResult<PowerArg> {
        let mut out = PowerArg::default();
        for (k, v) in d.iter() {
            let name: String = k
                .extract()
                .map_err(|_| input_error(format!("power: key {k} is not a block or layer name")))?;
            if let Ok(w) = v.extract::<f64>() {
                out.blocks.push((name, w));
            } else {
                let a = as_f64_2d(&v).map_err(|_| {
                    input_error(format!(
                        "power: `{name}`: expected a block's power (W) or a layer's map \
                         (ndarray of shape (ny, nx), W per cell)"
                    ))
                })?;
                let map = plane_map(&a, nx, ny, &format!("layer `{name}` map"))?;
                out.maps.push((name, map));
            }
        }
        Ok(out)
    }

    /// Sets this power on `sim`: the blocks first, then the maps.
    pub fn apply<B: ThermalBackend + 'static>(
        self,
        sim: &mut Simulation<'_, B>,
    ) -> Result<(), SimulationError> {
        if !self.blocks.is_empty() {
            let powers: Vec<(&str, f64)> =
                self.blocks.iter().map(|(n, w)| (n.as_str(), *w)).collect();
            sim.set_block_powers(&powers)?;
        }
        for (layer, map) in self.maps {
            sim.set_layer_map(&layer, map)?;
        }
        Ok(())
    }
}
