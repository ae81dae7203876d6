//! The `cuth` Python package's native module: a stack opened on a device
//! ([`stack::PyStack`]), its steady and transient solves, stepping
//! sessions ([`session::PySession`]) and sweeps ([`sweep::sweep`]), over
//! the `cuth` library's own drivers. Temperatures are K, powers W, arrays
//! numpy float64 indexed `[y, x]` (y = 0 the bottom edge) or `[z, y, x]`.

mod device;
mod errors;
mod power;
mod readings;
mod session;
mod stack;
mod sweep;
mod toml_value;
mod transient;

use pyo3::prelude::*;

#[pymodule]
fn _cuth(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<stack::PyStack>()?;
    m.add_class::<stack::SolveResult>()?;
    m.add_class::<session::PySession>()?;
    m.add_function(wrap_pyfunction!(sweep::sweep, m)?)?;
    m.add("CuthError", py.get_type::<errors::CuthError>())?;
    m.add("InputError", py.get_type::<errors::InputError>())?;
    m.add("SolverError", py.get_type::<errors::SolverError>())?;
    Ok(())
}
