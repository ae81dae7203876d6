//! Solver choices that a stack file and the command line can name. Below the
//! stack, so that the stack's schema can hold them without importing the
//! solvers; `linalg` builds what they name.

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, serde::Deserialize, serde::Serialize,
)]
#[serde(rename_all = "snake_case")]
pub enum PrecondKind {
    None,
    Jacobi,
    Chebyshev,
    /// Geometric multigrid: `linalg::mg` for thermal Quad-Diag matrices,
    /// `topopt::mg` for the elastic operator.
    #[value(name = "mg")]
    #[serde(rename = "mg")]
    Multigrid,
}

impl PrecondKind {
    pub fn name(self) -> &'static str {
        match self {
            PrecondKind::None => "none",
            PrecondKind::Jacobi => "jacobi",
            PrecondKind::Chebyshev => "chebyshev",
            PrecondKind::Multigrid => "mg",
        }
    }
}
