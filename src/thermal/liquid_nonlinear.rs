//! The steady state of a liquid-cooled stack whose solid materials depend
//! on temperature or whose sources leak: Picard iteration over the liquid
//! solve,
//!
//!   A(Tₖ) θₖ₊₁ = P + P_leak(Tₖ),   Tₖ = T_amb + θₖ,
//!
//! from T₀ = T_amb, with A(T) the solid stack assembled at Tₖ on the host
//! (`assemble::cell_materials`) plus the cavities' coolant. What the cavity
//! model adds keeps the constant properties of the stack file: the
//! advection, the films, a 4RM coolant cell's conduction into its walls,
//! the porous models' column networks (a 4RM wall cell itself is a solid
//! cell and follows its law). Each outer step is a
//! full liquid solve (`thermal::liquid::solve_system`: BiCGStab over the
//! upwind multigrid, its balance correction included), so the last one's
//! energy balance holds to rounding, as in the linear case. Converged when
//! max |Tₖ₊₁ − Tₖ| ≤ `--nl-tol`; a temperature above `--t-max` is runaway.
//! Plain Picard: the solid path's Anderson acceleration and inexact inner
//! solves work on its device-resident system, which a liquid stack does not
//! use.

use super::liquid::{add_coolant_to, solve_system, LiquidSolve};
use super::nonlinear::leakage::LeakageModel;
use super::nonlinear::{place_name, NonlinearError, NonlinearReport};
use super::steady_options::{SteadyError, SteadyOptions};
use crate::assemble::{assemble_cells, cell_materials, System};
use crate::grid::Grid;
use crate::linalg::Stop;
use crate::power::LayerPower;
use crate::stack::Stack;
use crate::thermal::device::ThermalBackend;

/// The converged outer iteration: the last system and its solve.
pub(crate) struct LiquidPicard<V> {
    pub system: System,
    pub solved: LiquidSolve<V>,
    pub report: NonlinearReport,
}

/// The system at absolute temperatures `t_k`: the solid stack's k(T), the
/// leakage at `t_k` added to the right-hand side, the cavities' coolant.
/// Returns the leakage per source too.
fn system_at(
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    leak: &LeakageModel,
    t_k: &[f64],
) -> Result<(System, Vec<f64>), SteadyError> {
    let cells = cell_materials(stack, grid, power, t_k).map_err(|i| {
        let layer = &stack.layers[grid.layer_of_z[i / grid.plane()]];
        NonlinearError::BadProperty {
            layer: layer.name.clone(),
            t_k: t_k[i],
        }
    })?;
    let mut system = assemble_cells(stack, grid, power, &cells);
    let leakage = leak.eval(grid, t_k);
    system
        .rhs
        .iter_mut()
        .zip(&leakage.cell_w)
        .for_each(|(b, q)| *b += q);
    add_coolant_to(stack, grid, &mut system)?;
    Ok((system, leakage.per_source_w))
}

/// Picard over the liquid solve of `stack` on `be` (`power` rasterized).
pub(crate) fn picard_liquid<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    power: &[LayerPower],
    opts: &SteadyOptions,
) -> Result<LiquidPicard<B::Vector>, SteadyError> {
    let nl = &opts.nonlinear;
    let amb = stack.ambient_k;
    let leak = LeakageModel::new(stack, grid, power);
    let mut t_k = vec![amb; grid.len()];
    let mut report = NonlinearReport {
        method: "picard".into(),
        tol_k: nl.tol_k,
        ..NonlinearReport::default()
    };
    let precond = (opts.precond, &opts.precond_opts);
    for outer in 1..=nl.max_outer {
        let (system, leakage_w) = system_at(stack, grid, power, &leak, &t_k)?;
        let solved = solve_system(be, &system, precond, |be, m, b| {
            opts.cg_params(be, m, Stop::against(opts.rtol, b))
        })?;
        let mut theta = solved.x_host.clone();
        solved.offset.restore(&mut theta);
        let (mut change, mut hottest) = (0.0f64, 0usize);
        for (i, (t, th)) in t_k.iter_mut().zip(&theta).enumerate() {
            let next = amb + th;
            change = change.max((next - *t).abs());
            if !next.is_finite() || next > amb + theta[hottest] {
                hottest = i;
            }
            *t = next;
        }
        report.outer_iterations = outer;
        report.final_change_k = change;
        report.inner_iterations.push(solved.info.iterations);
        report.leakage_total_w = leakage_w.iter().sum();
        let t_hot = t_k[hottest];
        if !t_hot.is_finite() || t_hot > nl.t_max_k {
            return Err(NonlinearError::Runaway {
                iteration: outer,
                reason: format!("a temperature passed --t-max {:.2} K", nl.t_max_k),
                hottest: place_name(stack, grid, power, hottest),
                t_k: t_hot,
                leakage_w: report.leakage_total_w,
            }
            .into());
        }
        if change <= nl.tol_k {
            report.leakage_w = (leak.sources.iter().map(|s| s.name.clone()))
                .zip(leakage_w)
                .collect();
            return Ok(LiquidPicard {
                system,
                solved,
                report,
            });
        }
    }
    let hottest = (0..t_k.len())
        .max_by(|&a, &b| t_k[a].total_cmp(&t_k[b]))
        .unwrap_or(0);
    Err(NonlinearError::NoConvergence {
        iterations: nl.max_outer,
        change_k: report.final_change_k,
        tol_k: nl.tol_k,
        hottest: place_name(stack, grid, power, hottest),
        t_k: t_k[hottest],
    }
    .into())
}
