//! The steady state of a stack with liquid-cooled cavities: the solid
//! stack assembled as any other, the coolant added (`assemble::cavity`),
//! and the non-symmetric system solved by the thermal solver object, whose
//! operator then carries the coolant's couplings (BiCGStab over upwind
//! multigrid, `linalg::upwind`). The energy balance splits the power into the
//! heat through the sinks and the coolant's enthalpy rise ṁ·c (T_out − T_in).
//! [`solve_liquid`] is the library's one-shot form; the run's pipeline
//! (`thermal::liquid_steady`) shares the assembly and the solve.

use crate::assemble::cavity::{add_cavities, CavityError, Coolant};
use crate::assemble::{assemble, System};
use crate::backend::mg::MultigridOps;
use crate::grid::Grid;
use crate::linalg::pcg::true_relative_residual;
use crate::linalg::precond::chebyshev::ChebyshevLevels;
use crate::linalg::{CgInfo, CgParams, Offset, PrecondOptions, SolveError, Stop};
use crate::linalg::{PrecondKind, QuadDiagOperator, Solver};
use crate::power::{LayerPower, PowerError};
use crate::stack::Stack;

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

/// The system of a liquid-cooled stack: the solid stack's, with its
/// cavities' coolant added ([`System::coolant`]).
pub fn assemble_liquid(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
) -> Result<System, LiquidError> {
    let mut system = assemble(stack, grid, power);
    add_coolant_to(stack, grid, &mut system)?;
    Ok(system)
}

/// Adds the cavities' coolant to `system` (assembled for the solid stack)
/// and keeps it in [`System::coolant`].
pub fn add_coolant_to(stack: &Stack, grid: &Grid, system: &mut System) -> Result<(), LiquidError> {
    let coolant = add_cavities(stack, grid, system)
        .map_err(|source| LiquidError::Cavity {
            file: stack.source.clone(),
            source,
        })?
        .ok_or_else(|| LiquidError::NoCavity(stack.source.clone()))?;
    system.coolant = Some(coolant);
    Ok(())
}

/// The power dissipated in the stack, W: the right-hand side less the
/// enthalpy the coolant brings in at its inlets.
pub fn power_in_w(system: &System) -> f64 {
    let inlet_w: f64 = (system.coolant.iter().flat_map(|c| &c.lines))
        .map(|l| l.w * l.inlet_theta)
        .sum();
    system.rhs.iter().sum::<f64>() - inlet_w
}

/// Heat through the top and bottom faces to ambient, W.
pub fn sinks_w(grid: &Grid, system: &System, theta: &[f64]) -> f64 {
    let (n, plane) = (grid.len(), grid.plane());
    let top: f64 = (system.g_top.iter().zip(&theta[n - plane..]))
        .map(|(g, t)| g * t)
        .sum();
    let bottom: f64 = (system.g_bottom.iter().zip(&theta[..plane]))
        .map(|(g, t)| g * t)
        .sum();
    top + bottom
}

/// A solved liquid system on a device: x (θ = x + c), the solve's report.
pub struct LiquidSolve<V> {
    pub x: V,
    /// x on the host.
    pub x_host: Vec<f64>,
    /// c holds the balance correction too (see [`balance_correction`]).
    pub offset: Offset,
    pub info: CgInfo,
    pub method: &'static str,
    pub precond: crate::linalg::PrecondReport,
    /// ‖b − A θ‖ / ‖b‖ of the corrected θ, f64.
    pub true_relative_residual: f64,
}

/// The constant δ that makes the residual of x + δ·1 sum to zero.
///
/// Why: summed over all rows, A θ = b says power = heat to the sinks + the
/// coolant's enthalpy rise, exactly, for any θ whose residual sums to zero
/// (the assembly conserves heat). A Krylov stop at ‖r‖ ≤ rtol ‖b‖ leaves
/// Σ r of the order of rtol·P (7e-10 at rtol 1e-8 on a 4RM stack), so the
/// balance would only hold to rtol; one correction along the constant
/// vector (a one-dimensional deflation: δ = Σ r / Σ A·1) removes that sum
/// and changes ‖r‖ by far less than rtol. The solid stack gets the same
/// from its offset (`linalg::offset`), whose constant is this δ at x = 0.
pub fn balance_correction(system: &System, b: &[f64], x: &[f64]) -> f64 {
    // Σ r = Σ b − (Aᵀ1)·x.
    let col = system.column_sums();
    let sum_r = b.iter().sum::<f64>() - col.iter().zip(x).map(|(c, x)| c * x).sum::<f64>();
    let row_sums: f64 = col.iter().sum();
    if row_sums > 0.0 {
        sum_r / row_sums
    } else {
        0.0
    }
}

/// Solves `system` (with its coolant) on `be`, stopping as `params` says
/// (its stop is taken relative to the user's ‖b‖).
pub fn solve_system<B>(
    be: &B,
    system: &System,
    (kind, precond): (PrecondKind, &PrecondOptions),
    params: impl FnOnce(&B, &dyn crate::linalg::PrecondInfo, f64) -> CgParams,
) -> Result<LiquidSolve<B::Vector>, LiquidError>
where
    B: ChebyshevLevels + MultigridOps + 'static,
{
    let n = system.rhs.len();
    let coolant = system.coolant.as_ref().ok_or(LiquidError::Backend(
        crate::backend::BackendError::Unsupported("a liquid solve of a system without coolant"),
    ))?;
    use crate::profile::part;
    let mut offset = Offset::with_row_sums(&system.row_sums(), &system.rhs);
    let (a, adv) = part("solve/upload", || -> Result<_, LiquidError> {
        let a = be.upload_matrix(&system.a)?;
        let adv = be.upload_advection(&coolant.advection)?;
        be.synchronize()?;
        Ok((a, adv))
    })?;
    let op = QuadDiagOperator::new(be, &a, n).with_advection(&adv);
    let mut solver = part("solve/precond_setup", || {
        let s = Solver::new(be, op, kind, precond, Some(&system.a));
        be.synchronize()?;
        s
    })?;
    solver.set_params(params(be, solver.precond(), offset.b_norm));
    let b = be.upload(&offset.rhs)?;
    let mut x = be.zeros(n)?;
    let mut info = part("solve/krylov", || {
        let i = solver.solve(&b, &mut x);
        be.synchronize()?;
        i
    })?;
    let t_check = std::time::Instant::now();
    // The constant correction, then its true residual on the host's copy
    // of A; where the correction lifts ‖r‖ past the stop, the solve goes on
    // from the corrected x (a few iterations), and corrects again.
    let cpu = crate::backend::cpu::CpuBackend::new();
    let mut op = QuadDiagOperator::new(&cpu, &system.a, n).with_advection(&coolant.advection);
    let rtol = solver.params().stop.rtol;
    let mut x_host = be.download(&x)?;
    let mut round = 0;
    let (true_rel, delta) = loop {
        let delta = balance_correction(system, &offset.rhs, &x_host);
        x_host.iter_mut().for_each(|v| *v += delta);
        let true_rel =
            true_relative_residual(&cpu, &mut op, &offset.rhs, &x_host, offset.rtol_scale)?;
        if round == 2 || true_rel <= rtol {
            break (true_rel, delta);
        }
        round += 1;
        x = be.upload(&x_host)?;
        let more = solver.solve(&b, &mut x)?;
        info.iterations += more.iterations;
        info.replacements += more.replacements;
        x_host = be.download(&x)?;
    };
    crate::profile::add("solve/true_residual", t_check.elapsed().as_secs_f64());
    // x on the device is the last solve's, without its correction: θ = x + c.
    offset.c += delta;
    x_host.iter_mut().for_each(|v| *v -= delta);
    let true_relative_residual = true_rel;
    Ok(LiquidSolve {
        x,
        x_host,
        method: solver.method().name(),
        precond: solver.precond().report(),
        offset,
        info,
        true_relative_residual,
    })
}

/// Solves the steady state of `stack` on `be` to `rtol` (true residual).
pub fn solve_liquid<B>(be: &B, stack: &Stack, rtol: f64) -> Result<LiquidSolution, LiquidError>
where
    B: ChebyshevLevels + MultigridOps<Vector = Vec<f64>> + 'static,
{
    let grid = Grid::from_stack(stack);
    let power = (0..stack.layers.len())
        .map(|l| crate::power::layer_power(stack, &grid, l))
        .collect::<Result<Vec<_>, _>>()?;
    let system = assemble_liquid(stack, &grid, &power)?;
    let solved = solve_system(
        be,
        &system,
        (PrecondKind::Multigrid, &PrecondOptions::default()),
        |_, _, b| CgParams {
            stop: Stop::against(rtol, b),
            max_iter: 500,
            ..CgParams::default()
        },
    )?;
    let mut theta = solved.x_host;
    solved.offset.restore(&mut theta);
    let sinks_w = sinks_w(&grid, &system, &theta);
    let power_w = power_in_w(&system);
    let coolant = system.coolant.clone().unwrap_or_default();
    let coolant_w = coolant.heat_w(&theta);
    Ok(LiquidSolution {
        grid,
        system,
        coolant,
        theta,
        info: solved.info,
        method: solved.method,
        power_w,
        sinks_w,
        coolant_w,
    })
}

#[cfg(test)]
#[path = "liquid_tests.rs"]
mod tests;
