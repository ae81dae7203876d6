//! What the TOML and the CSV manifest share: the layer whose power a case
//! replaces, looked up by name.

use cuth::error::InputError;
use cuth::stack::Stack;
use std::path::Path;

/// The index of layer `name`; an unknown name is bad input at `at`.
pub(super) fn layer_index(stack: &Stack, name: &str, at: &Path) -> Result<usize, InputError> {
    stack
        .layers
        .iter()
        .position(|l| l.name == name)
        .ok_or_else(|| {
            let names: Vec<&str> = stack.layers.iter().map(|l| l.name.as_str()).collect();
            InputError(format!(
                "{}: no layer `{name}` in the stack (layers: {})",
                at.display(),
                names.join(", ")
            ))
        })
}
