//! Errors as Python exceptions: `CuthError`, and below it `InputError`
//! (what the command line exits with code 2 for: a stack file, a power, a
//! trace, an option) and `SolverError` (code 1: no convergence, a device
//! failure). The message is the one the command line prints after
//! `cuth: error: `.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::PyErr;

create_exception!(cuth, CuthError, PyException, "Any error of cuth.");
create_exception!(
    cuth,
    InputError,
    CuthError,
    "Bad input: a stack, a power, a trace or an option (the CLI's exit code 2)."
);
create_exception!(
    cuth,
    SolverError,
    CuthError,
    "A solve that failed: no convergence, a device error (the CLI's exit code 1)."
);

/// `e` as the exception of its kind, with the CLI's message.
pub fn to_py(e: anyhow::Error) -> PyErr {
    let msg = format!("{e:#}");
    match cuth::error::chain_kind(e.as_ref()) {
        cuth::error::ErrorKind::Input => InputError::new_err(msg),
        cuth::error::ErrorKind::Failure => SolverError::new_err(msg),
    }
}

/// An input fault found by the binding itself.
pub fn input_error(msg: impl Into<String>) -> PyErr {
    InputError::new_err(msg.into())
}

/// Converts a library error into its exception.
pub trait OrPy<T> {
    fn or_py(self) -> pyo3::PyResult<T>;
}

impl<T, E: Into<anyhow::Error>> OrPy<T> for Result<T, E> {
    fn or_py(self) -> pyo3::PyResult<T> {
        self.map_err(|e| to_py(e.into()))
    }
}
