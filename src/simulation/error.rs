use crate::backend::BackendError;
use crate::linalg::SolveError;
use crate::power::PowerError;

/// Why a [`super::Simulation`] call failed. A call that fails changes no
/// state: the power, the field and the time are those before it.
#[derive(Debug, thiserror::Error)]
pub enum SimulationError {
    /// A request's value is wrong: `field` names it (a block, `dt`, a
    /// layer's map), `message` says how.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// What this session cannot do for this stack.
    #[error("{0}")]
    Unsupported(String),
    #[error(transparent)]
    Power(#[from] PowerError),
    #[error(transparent)]
    Solve(#[from] SolveError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    /// Assembly produced an invalid matrix: a bug, never a user's input.
    #[error("internal error: the assembled matrix is invalid: {0}")]
    Internal(String),
}

impl SimulationError {
    pub(crate) fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        SimulationError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}
