//! What each preconditioner kind asks of the run that will build it, stated
//! once: the run's planning (which CUDA kernel families to load, how large
//! the staging buffers are), its memory plan and the solver's set-up (what
//! to read back from the device) all read [`PrecondKind::needs`].

use super::PrecondKind;
use crate::backend::cuda::{KernelFamily, CHEBYSHEV, MG_SETUP, MIXED, MULTIGRID};

/// Chebyshev's f64 recurrence and its scaled low-precision levels.
static CHEBYSHEV_FAMILIES: [&KernelFamily; 2] = [&CHEBYSHEV, &MIXED];
/// The cycle, and the hierarchy's set-up where the fine matrix lives.
static MULTIGRID_FAMILIES: [&KernelFamily; 2] = [&MULTIGRID, &MG_SETUP];

/// The needs of one preconditioner kind beyond PCG's own.
#[derive(Clone, Copy, Debug)]
pub struct PrecondNeeds {
    /// CUDA kernel families its set-up and application launch.
    pub kernel_families: &'static [&'static KernelFamily],
    /// Its set-up reads A on the host (Chebyshev's Gershgorin bound and
    /// scaled copy): a matrix assembled on the device is read back for it,
    /// through the staging buffers.
    pub host_matrix: bool,
    /// n-vectors it holds at its peak, for a caller's memory plan:
    /// Chebyshev's Lanczos estimate runs a Jacobi-PCG of its own
    /// (right-hand side, iterate and 4 work vectors) at set-up; afterwards
    /// it keeps res, d, d_next, and on a matrix-free operator q. Multigrid's
    /// count is for topopt's plan (the thermal plan sizes the hierarchy
    /// level by level): the fine level's two cycle vectors and Chebyshev's
    /// four, plus the coarse levels (≤ 1/2 of that).
    pub extra_vectors: usize,
}

impl PrecondNeeds {
    /// Values of the largest download its set-up makes on an n-row
    /// operator (one n-array of the matrix at a time), for sizing the
    /// staging buffers; 0 when it downloads nothing.
    pub fn staged_values(&self, n: usize) -> usize {
        if self.host_matrix {
            n
        } else {
            0
        }
    }
}

impl PrecondKind {
    pub fn needs(self) -> PrecondNeeds {
        match self {
            PrecondKind::None | PrecondKind::Jacobi => PrecondNeeds {
                kernel_families: &[],
                host_matrix: false,
                extra_vectors: 0,
            },
            PrecondKind::Chebyshev => PrecondNeeds {
                kernel_families: &CHEBYSHEV_FAMILIES,
                host_matrix: true,
                extra_vectors: 6,
            },
            PrecondKind::Multigrid => PrecondNeeds {
                kernel_families: &MULTIGRID_FAMILIES,
                host_matrix: false,
                extra_vectors: 9,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_chebyshev_reads_the_matrix_back() {
        let kinds = [
            PrecondKind::None,
            PrecondKind::Jacobi,
            PrecondKind::Chebyshev,
            PrecondKind::Multigrid,
        ];
        for k in kinds {
            let needs = k.needs();
            assert_eq!(needs.host_matrix, k == PrecondKind::Chebyshev, "{k:?}");
            assert_eq!(
                needs.staged_values(100),
                if needs.host_matrix { 100 } else { 0 }
            );
        }
        assert!(PrecondKind::Jacobi.needs().kernel_families.is_empty());
        assert_eq!(PrecondKind::Multigrid.needs().kernel_families.len(), 2);
    }
}
