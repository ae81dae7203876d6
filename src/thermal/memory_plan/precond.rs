//! The preconditioner's share of a memory plan: Chebyshev's recurrence and
//! low-precision copy, or the multigrid hierarchy sized level by level as
//! it will be built: halving on a uniform grid, size-graded merging of
//! columns and rows on a non-uniform one (whose levels shrink more slowly
//! where wide cells are left single: up to ~38 B a fine cell more than
//! halving predicted).

use super::RunShape;
use crate::linalg::mg::hierarchy::{plan_for, COARSEST_MAX_CELLS};
use crate::linalg::mg::MgPrecision;
use crate::linalg::{PrecisionMode, PrecondKind};

/// Cells of the multigrid levels below the fine one, as the hierarchy of
/// `s` will be built: (cells of the levels with a matrix, cells of the
/// coarsest, values of its dense inverse, cells of the two largest levels
/// with a matrix).
pub(super) fn mg_coarse(s: &RunShape) -> (u64, u64, u64, u64) {
    // The widths only where they describe this grid (a graded grid); the
    // largest-grid search scales nx and ny and plans those as halving.
    let graded = s.wx.len() == s.nx && s.wy.len() == s.ny;
    let (wx, wy) = if graded {
        (s.wx, s.wy)
    } else {
        (&[][..], &[][..])
    };
    let steps = plan_for(s.nx, s.ny, s.nz, wx, wy);
    let mut with_matrix = 0u64;
    let mut coarsest = 0u64;
    let mut first_two = 0u64;
    for (k, c) in steps.iter().enumerate() {
        let nc = (c.nxc * c.nyc * s.nz) as u64;
        if k + 1 == steps.len() {
            coarsest = nc;
        } else {
            with_matrix += nc;
            if k < 2 {
                first_two += nc;
            }
        }
    }
    if steps.is_empty() {
        coarsest = (s.nx * s.ny * s.nz).min(COARSEST_MAX_CELLS) as u64;
    }
    (with_matrix, coarsest, coarsest * coarsest, first_two)
}

/// Bytes of the preconditioner on its device, and of what set-up builds on
/// the host besides (transient: freed after set-up).
pub(super) fn precond_bytes(s: &RunShape) -> (u64, u64) {
    let n = (s.nx * s.ny * s.nz) as u64;
    match s.precond {
        PrecondKind::None | PrecondKind::Jacobi => (0, 0),
        PrecondKind::Chebyshev => match s.precision {
            PrecisionMode::F64 => (24 * n, 0),
            // Â: S (f32) and three off-diagonals (f32 at most), f32 work
            // res, d, d_next, ẑ; a mixed run may switch up to f64 (3 more).
            PrecisionMode::F32 | PrecisionMode::F16 => (32 * n, 16 * n),
            PrecisionMode::Mixed => (56 * n, 16 * n),
        },
        PrecondKind::Multigrid => {
            let (mid, coarsest, inverse, first_two) = mg_coarse(s);
            // Fine line pivots; per coarse level matrix (d, gx, gy, gz),
            // pivots, b, x; the coarsest b, x and its inverse. A level's amb
            // lives until the next level is built (at the peak of the
            // set-up: the two largest levels' at most).
            let f64_dev = 8 * n + 56 * mid + 8 * first_two + 16 * coarsest + 8 * inverse;
            // The f32 hierarchy: the fine level's matrix copy (s, gx, gy,
            // gz), pivots, b, x; per coarse level half the f64 bytes. It is
            // lowered from the f64 one level by level (at most the first
            // coarse level's f32 copy beside the whole f64 hierarchy), the
            // fine level last (beside the f64 fine pivots). An `auto`
            // fall-back frees the f32 one before it builds the f64 one.
            let f32_dev = 28 * n + 28 * mid + 8 * coarsest + 4 * inverse;
            let dev = match s.mg_precision {
                MgPrecision::F64 => f64_dev,
                MgPrecision::F32 | MgPrecision::Auto => (f64_dev + 7 * n).max(8 * n + f32_dev),
            };
            // Every level is built where the fine matrix lives;
            // only the coarsest comes to the host: its matrix, the banded
            // factor (one plane wide) and the inverse with its transpose.
            let plane_c = coarsest / s.nz.max(1) as u64;
            (
                dev,
                48 * coarsest + 8 * coarsest * (plane_c + 1) + 16 * inverse,
            )
        }
    }
}
