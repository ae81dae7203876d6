//! What a transient run is asked to do (time step, steps, initial state,
//! snapshots, the solver's settings) and how it can fail.

use crate::backend::BackendError;
use crate::linalg::SolveError;
use crate::thermal::nonlinear::NonlinearError;
use crate::thermal::steady::SteadyOptions;

pub use super::scheme::Scheme;

/// Where the run starts.
#[derive(Clone, Debug)]
pub enum InitState {
    /// Every cell at ambient.
    Ambient,
    /// The steady solution for the first step's power.
    Steady,
    /// The steady solution for the trace's mean power: HotSpot's flow, whose
    /// steady run (the transient's `-init_file`) averages the trace.
    SteadyMean,
    /// A saved field, K (see [`state`](super::state)).
    Field(Vec<f64>),
}

impl InitState {
    pub fn name(&self) -> &'static str {
        match self {
            InitState::Ambient => "ambient",
            InitState::Steady => "steady",
            InitState::SteadyMean => "steady-mean",
            InitState::Field(_) => "file",
        }
    }
}

#[derive(Clone, Debug)]
pub struct TransientOptions {
    /// Preconditioner, rtol (see `Stepper` for its meaning here), max_iter per step.
    pub solver: SteadyOptions,
    /// Time step, s.
    pub dt: f64,
    pub steps: usize,
    pub init: InitState,
    /// Hand the observer a full snapshot (summary and power) every this many
    /// steps, and after the last.
    pub snapshot_every: Option<usize>,
    /// The scheme, and whether its steps adapt.
    pub stepping: Stepping,
    /// Whether the observer needs the field after every step.
    pub step_field: StepField,
}

/// When the whole field comes down from the device during a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepField {
    /// After every step: the observer reads every field (a per-step
    /// trace of the whole field), and the records are folded from it.
    #[default]
    Every,
    /// Only where an output reads it: snapshot steps and the last step.
    /// The records of a linear, film-cooled stack are reduced where the
    /// solve runs (`reduce`), so a GPU step moves kilobytes, not the field;
    /// other steps hand the observer no field.
    Needed,
}

/// How the steps advance (`--scheme`, `--time-tol`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stepping {
    pub scheme: Scheme,
    /// Adaptive steps (TR-BDF2): the largest local error estimate a step
    /// may have, K. The records stay at the multiples of `dt`, which is
    /// also the largest and the first step. `None`: every step is `dt`.
    pub time_tol_k: Option<f64>,
}

#[derive(Debug, thiserror::Error)]
pub enum TransientError {
    #[error("step {step} (t = {time_s:e} s)")]
    Step {
        step: usize,
        time_s: f64,
        #[source]
        source: SolveError,
    },
    /// A step's outer (nonlinear) iteration failed: no convergence in
    /// `--nonlinear-iterations` solves.
    #[error("step {step} (t = {time_s:e} s)")]
    NonlinearStep {
        step: usize,
        time_s: f64,
        #[source]
        source: NonlinearError,
    },
    /// An adaptive step would need to be smaller than the finest halving
    /// of `--dt` to meet `--time-tol`.
    #[error(
        "at t = {time_s:e} s the step fell below {min_dt_s:e} s (--dt / 2^30) with an error \
         estimate of {err_k:e} K > --time-tol {tol_k:e} K; raise --time-tol"
    )]
    StepTooSmall {
        time_s: f64,
        min_dt_s: f64,
        err_k: f64,
        tol_k: f64,
    },
    #[error("initial steady state")]
    Initial(#[source] SolveError),
    /// A liquid-cooled cavity the transient cannot take.
    #[error("{0}")]
    Cavity(String),
    #[error(transparent)]
    Solve(#[from] SolveError),
    #[error(transparent)]
    Backend(#[from] BackendError),
    #[error(transparent)]
    Nonlinear(#[from] NonlinearError),
    #[error(transparent)]
    Steady(#[from] Box<crate::thermal::steady::SteadyError>),
    /// The observer (outputs written during the run) failed.
    #[error("writing outputs during the run")]
    Observer(#[source] Box<dyn std::error::Error + Send + Sync>),
}
