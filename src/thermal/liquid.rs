//! The steady state of a stack with liquid-cooled cavities: the solid
//! stack assembled as any other, the coolant added (`assemble::cavity`),
//! and the non-symmetric system solved by the operator's own Krylov method
//! (`linalg::cavity_solver`). The energy balance splits the power into the
//! heat through the sinks and the coolant's enthalpy rise ṁ·c (T_out − T_in).

use crate::assemble::cavity::{add_cavities, CavityError, Coolant};
use crate::assemble::{assemble, System};
use crate::backend::advection::AdvectionOps;
use crate::backend::mg::MultigridOps;
use crate::grid::Grid;
use crate::linalg::cavity_solver::CavitySolver;
use crate::linalg::precond::chebyshev::ChebyshevLevels;
use crate::linalg::{CgInfo, CgParams, PrecondOptions, SolveError, Stop};
use crate::power::PowerError;
use crate::stack::Stack;
use crate::thermal::steady::rasterize_layers;

#[derive(Debug, thiserror::Error)]
pub enum LiquidError {
    #[error(transparent)]
    Power(#[from] PowerError),
    #[error("{file}: {source}")]
    Cavity {
        file: std::path::PathBuf,
        #[source]
        source: CavityError,
    },
    #[error(transparent)]
    Solve(#[from] SolveError),
    #[error(transparent)]
    Backend(#[from] crate::backend::BackendError),
    #[error("{0}: no layer is a cavity")]
    NoCavity(std::path::PathBuf),
}

/// A solved liquid-cooled stack.
pub struct LiquidSolution {
    pub grid: Grid,
    pub system: System,
    pub coolant: Coolant,
    /// Temperature rise over ambient, K, per cell.
    pub theta: Vec<f64>,
    pub info: CgInfo,
    pub method: &'static str,
    pub power_w: f64,
    /// Heat through the top and bottom faces to ambient, W.
    pub sinks_w: f64,
    /// Σ ṁ·c (T_out − T_in), W.
    pub coolant_w: f64,
}

impl LiquidSolution {
    /// |power − sinks − coolant| / power.
    pub fn balance_error(&self) -> f64 {
        (self.power_w - self.sinks_w - self.coolant_w).abs() / self.power_w.max(f64::MIN_POSITIVE)
    }
}

/// Solves the steady state of `stack` on `be` to `rtol` (true residual).
pub fn solve_liquid<B>(be: &B, stack: &Stack, rtol: f64) -> Result<LiquidSolution, LiquidError>
where
    B: AdvectionOps<Vector = Vec<f64>> + ChebyshevLevels + MultigridOps + 'static,
{
    let grid = Grid::from_stack(stack);
    let power = rasterize_layers(stack, &grid)?;
    let mut system = assemble(stack, &grid, &power);
    let coolant = add_cavities(stack, &grid, &mut system)
        .map_err(|source| LiquidError::Cavity {
            file: stack.source.clone(),
            source,
        })?
        .ok_or_else(|| LiquidError::NoCavity(stack.source.clone()))?;
    let n = grid.len();
    let a = be.upload_matrix(&system.a)?;
    let adv = be.upload_advection(&coolant.advection)?;
    let mut solver = CavitySolver::new(
        be,
        &a,
        &adv,
        &coolant.advection,
        n,
        &PrecondOptions::default(),
    )?;
    solver.set_params(CgParams {
        stop: Stop::relative(rtol),
        max_iter: 500,
        ..CgParams::default()
    });
    let b = be.upload(&system.rhs)?;
    let mut theta = be.zeros(n)?;
    let info = solver.solve(&b, &mut theta)?;
    let method = solver.method().name();
    let theta = be.download(&theta)?;
    let plane = grid.plane();
    let top = (n - plane)..n;
    let sinks_w = system
        .g_top
        .iter()
        .zip(&theta[top])
        .map(|(g, t)| g * t)
        .sum::<f64>()
        + system
            .g_bottom
            .iter()
            .zip(&theta[..plane])
            .map(|(g, t)| g * t)
            .sum::<f64>();
    let inlet_w: f64 = coolant.lines.iter().map(|l| l.w * l.inlet_theta).sum();
    let power_w = system.rhs.iter().sum::<f64>() - inlet_w;
    let coolant_w = coolant.heat_w(&theta);
    Ok(LiquidSolution {
        grid,
        system,
        coolant,
        theta,
        info,
        method,
        power_w,
        sinks_w,
        coolant_w,
    })
}

#[cfg(test)]
#[path = "liquid_tests.rs"]
mod tests;
