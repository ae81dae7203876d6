//! A Python dict in the stack file's schema as a TOML table, so that
//! `Stack.from_dict` goes through the stack file's own parser and
//! validator (and its messages).

use crate::errors::input_error;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// `d` as a TOML table; keys must be strings.
pub fn table(d: &Bound<'_, PyDict>) -> PyResult<toml::Table> {
    let mut t = toml::Table::new();
    for (k, v) in d.iter() {
        let key: String = k
            .extract()
            .map_err(|_| input_error(format!("stack dict: key {k} is not a string")))?;
        let value = value(&v).map_err(|e| input_error(format!("stack dict: `{key}`: {e}")))?;
        t.insert(key, value);
    }
    Ok(t)
}

fn value(v: &Bound<'_, PyAny>) -> Result<toml::Value, String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(
            v.extract().map_err(|e: PyErr| e.to_string())?,
        ));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(toml::Value::Integer(
            v.extract().map_err(|e: PyErr| e.to_string())?,
        ));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(
            v.extract().map_err(|e: PyErr| e.to_string())?,
        ));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(
            v.extract().map_err(|e: PyErr| e.to_string())?,
        ));
    }
    if let Ok(d) = v.downcast::<PyDict>() {
        return table(d).map(toml::Value::Table).map_err(|e| e.to_string());
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items = v.try_iter().map_err(|e| e.to_string())?;
        let mut out = Vec::new();
        for item in items {
            out.push(value(&item.map_err(|e| e.to_string())?)?);
        }
        return Ok(toml::Value::Array(out));
    }
    // numpy scalars and other numbers.
    if let Ok(i) = v.extract::<i64>() {
        return Ok(toml::Value::Integer(i));
    }
    if let Ok(f) = v.extract::<f64>() {
        return Ok(toml::Value::Float(f));
    }
    Err(format!(
        "{} has no TOML form",
        v.get_type().name().map_err(|e| e.to_string())?
    ))
}
