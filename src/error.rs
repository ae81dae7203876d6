//! What kind of failure an error is, for the command line's exit code: each
//! library error type says whether it is the user's input that is wrong
//! (exit code 2) or the run that failed (exit code 1). The classification
//! lives beside the error types, so a new variant is classified where it is
//! written, not in a list kept by the binary.

use std::error::Error;

/// Bad input (exit 2) or a failed run (exit 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Command line, stack file, floorplan, trace, raster, state file, problem file.
    Input,
    /// No convergence, not enough memory, a device error, outputs not writable.
    Failure,
}

impl ErrorKind {
    /// The process exit code documented in docs/src/reliability.md.
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Input => 2,
            ErrorKind::Failure => 1,
        }
    }
}

/// An error that knows its [`ErrorKind`].
pub trait Classify {
    fn kind(&self) -> ErrorKind;
}

/// A command-line value or an input file that is wrong, with its message
/// (the one error type for input faults found outside a parser's own error).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct InputError(pub String);

impl Classify for InputError {
    fn kind(&self) -> ErrorKind {
        ErrorKind::Input
    }
}

/// The kind of `err` when it is one of the library's error types.
pub fn kind_of(err: &(dyn Error + 'static)) -> Option<ErrorKind> {
    use crate::formats::ReadError;
    use crate::import::ImportError;
    use crate::knobs::KnobError;
    use crate::power::PowerError;
    use crate::run::{OpenError, PlanError};
    use crate::simulation::SimulationError;
    use crate::stack::StackError;
    use crate::thermal::steady::SteadyError;
    use crate::thermal::transient::state::StateError;
    use crate::thermal::transient::TransientError;
    use crate::topopt::problem::ProblemError;
    macro_rules! try_kind {
        ($($t:ty),*) => {
            $(if let Some(e) = err.downcast_ref::<$t>() {
                return Some(e.kind());
            })*
        };
    }
    try_kind!(
        InputError,
        StackError,
        ReadError,
        PowerError,
        StateError,
        ProblemError,
        ImportError,
        KnobError,
        SteadyError,
        TransientError,
        SimulationError,
        OpenError,
        PlanError
    );
    None
}

/// The kind of the first classified error in `err`'s source chain; an error
/// that no library type classifies is a failure of the run.
pub fn chain_kind(err: &(dyn Error + 'static)) -> ErrorKind {
    let mut cur = Some(err);
    while let Some(e) = cur {
        if let Some(k) = kind_of(e) {
            return k;
        }
        cur = e.source();
    }
    ErrorKind::Failure
}

macro_rules! always {
    ($kind:ident: $($t:ty),*) => {
        $(impl Classify for $t {
            fn kind(&self) -> ErrorKind {
                ErrorKind::$kind
            }
        })*
    };
}
always!(Input: crate::stack::StackError, crate::formats::ReadError, crate::power::PowerError,
    crate::thermal::transient::state::StateError, crate::topopt::problem::ProblemError,
    crate::import::ImportError, crate::knobs::KnobError);

impl Classify for crate::thermal::steady::SteadyError {
    fn kind(&self) -> ErrorKind {
        match self {
            crate::thermal::steady::SteadyError::Power(e) => e.kind(),
            // A cavity the solve cannot take: the stack's to change.
            crate::thermal::steady::SteadyError::Cavity(_) => ErrorKind::Input,
            _ => ErrorKind::Failure,
        }
    }
}

impl Classify for crate::thermal::transient::TransientError {
    fn kind(&self) -> ErrorKind {
        match self {
            crate::thermal::transient::TransientError::Observer(e) => chain_kind(e.as_ref()),
            // A combination of options the run cannot do: the user's to change.
            crate::thermal::transient::TransientError::Nonlinear(
                crate::thermal::nonlinear::NonlinearError::Unsupported { .. },
            ) => ErrorKind::Input,
            crate::thermal::transient::TransientError::Cavity(_) => ErrorKind::Input,
            _ => ErrorKind::Failure,
        }
    }
}

impl Classify for crate::simulation::SimulationError {
    fn kind(&self) -> ErrorKind {
        use crate::simulation::SimulationError as E;
        match self {
            E::Invalid { .. } | E::Unsupported(_) => ErrorKind::Input,
            E::Power(e) => e.kind(),
            E::Solve(_) | E::Backend(_) | E::Internal(_) => ErrorKind::Failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_errors_are_found_through_a_chain() {
        let e = crate::thermal::steady::SteadyError::Power(crate::power::PowerError::Invalid {
            file: "f.flp".into(),
            field: "line 1".into(),
            message: "bad".into(),
        });
        assert_eq!(chain_kind(&e), ErrorKind::Input);
        let io = std::io::Error::other("disk full");
        assert_eq!(chain_kind(&io), ErrorKind::Failure);
        assert_eq!(ErrorKind::Input.exit_code(), 2);
        assert_eq!(ErrorKind::Failure.exit_code(), 1);
    }
}
