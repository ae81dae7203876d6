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
    /// n-vectors this preconditioner holds at its peak beyond PCG's own, for
    /// a caller's memory plan: Chebyshev's Lanczos estimate runs a Jacobi-PCG
    /// of its own (right-hand side, iterate and 4 work vectors) at set-up;
    /// afterwards it keeps res, d, d_next, and on a matrix-free operator q.
    pub fn extra_vectors(self) -> usize {
        match self {
            PrecondKind::None | PrecondKind::Jacobi => 0,
            PrecondKind::Chebyshev => 6,
            // Only topopt's plan asks: the fine level's two cycle vectors
            // and Chebyshev's four, plus the coarse levels (≤ 1/2 of that).
            PrecondKind::Multigrid => 9,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PrecondKind::None => "none",
            PrecondKind::Jacobi => "jacobi",
            PrecondKind::Chebyshev => "chebyshev",
            PrecondKind::Multigrid => "mg",
        }
    }
}
