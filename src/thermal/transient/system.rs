//! The system of a transient run as the host holds it: whole (CPU, a
//! linear stack's steady start, `CUTH_HOST_ASSEMBLY`), or assembled on the
//! device from compact inputs, the host keeping only the films'
//! planes, the power in and the inputs for later trace rows, whose power a
//! kernel spreads (`NonlinearOps::tr_power`). Also the stepper on the first
//! system, with the nonlinear terms of a temperature-dependent stack
//! (`nonlinear::StepPhysics`, on every backend), and a linear stack's
//! steady start (host assembly).

use super::nonlinear::StepPhysics;
use super::options::{InitState, TransientOptions};
use super::stepper::Stepper;
use super::{probe, TransientError};
use crate::assemble::cavity::add_cavities;
use crate::assemble::{assemble, System};
use crate::backend::BackendError;
use crate::grid::Grid;
use crate::linalg::Offset;
use crate::linalg::{QuadDiagOperator, Solver, Stop};
use crate::power::schedule::{cell_power, PowerSchedule};
use crate::stack::Stack;
use crate::thermal::assembly_input::AssemblyInput;
use crate::thermal::device::nonlinear::NonlinearOps;
use crate::thermal::device::ThermalBackend;
use crate::thermal::field_stats::chunked_sum;
use crate::thermal::steady::{Coupling, SteadyOptions};

/// The stepper on the first step's system (uploaded from the host's, or
/// the device's), and the nonlinear terms of a temperature-dependent stack.
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub(super) fn stepper<'a, 's, B: ThermalBackend + 'static>(
    be: &'a B,
    stack: &'s Stack,
    grid: &'s Grid,
    schedule: &'s PowerSchedule,
    (sys, dev): (
        &HostSys<B::AsmKept, B::Vector>,
        Option<(B::Matrix, B::Vector)>,
    ),
    theta0: &[f64],
    (dt, c): (f64, f64),
    opts: &SteadyOptions,
) -> Result<(Stepper<'a, B>, Option<StepPhysics<'s, B>>), TransientError> {
    let base = &schedule.base;
    Ok(match (sys, dev) {
        (HostSys::Whole(sys), _) => {
            let mut s = Stepper::new(be, sys, dt, c, theta0, opts)?;
            s.set_power(&sys.rhs)?;
            let phys = match stack.is_nonlinear() {
                true => Some(StepPhysics::new(
                    be,
                    stack,
                    grid,
                    base,
                    &be.upload(&sys.rhs)?,
                )?),
                false => None,
            };
            (s, phys)
        }
        (HostSys::Device { p, .. }, Some((a, cap))) => {
            let n = grid.len();
            let mut s = Stepper::on_device(be, a, &cap, n, dt, c, theta0, opts)?;
            s.set_power_device(p)?;
            let phys = match stack.is_nonlinear() {
                true => Some(StepPhysics::new(be, stack, grid, base, p)?),
                false => None,
            };
            (s, phys)
        }
        (HostSys::Device { .. }, None) => {
            return Err(BackendError::Unsupported("a device system without its matrix").into())
        }
    })
}

/// The system of the first step: the host's view of it, the device's
/// matrix and heat capacities when assembled there (else the Stepper
/// uploads the host's), and the shift c (see `stepper`).
#[allow(clippy::type_complexity)]
pub(super) fn first<B: ThermalBackend>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    schedule: &PowerSchedule,
    first_row: Option<usize>,
    on_device: bool,
) -> Result<
    (
        HostSys<B::AsmKept, B::Vector>,
        Option<(B::Matrix, B::Vector)>,
        f64,
    ),
    TransientError,
> {
    let dev = match on_device {
        true => be.tr_assemble(&AssemblyInput::new(stack, grid, &schedule.base))?,
        false => None,
    };
    Ok(match dev {
        Some(d) => {
            let maps = schedule.layer_maps(first_row);
            let mut p = d.rhs;
            be.tr_power(&d.kept, &maps, &mut p)?;
            let power_w = maps_power(grid, &maps);
            // Σ amb = Σ films (+ 1 per absent cell, which the shift ignores).
            let amb = chunked_sum(&d.g_top, |g| g) + chunked_sum(&d.g_bottom, |g| g);
            let c = if amb > 0.0 { power_w / amb } else { 0.0 };
            let sys = HostSys::Device {
                g_top: d.g_top,
                g_bottom: d.g_bottom,
                power_w,
                kept: d.kept,
                p,
            };
            (sys, Some((d.a, d.capacity)), c)
        }
        None => {
            let mut sys = assemble(stack, grid, &schedule.base);
            sys.coolant = add_cavities(stack, grid, &mut sys)
                .map_err(|e| TransientError::Cavity(format!("{}: {e}", stack.source.display())))?;
            // From here on sys.rhs is the power of the current step (the
            // coolant's inlets are the stepper's own source).
            sys.rhs = cell_power(grid, &schedule.layer_maps(first_row));
            // A liquid-cooled step is not shifted (see `Stepper::new`).
            let c = match sys.coolant {
                Some(_) => 0.0,
                None => Offset::new(&sys.a, &sys.rhs).c,
            };
            (HostSys::Whole(Box::new(sys)), None, c)
        }
    })
}

/// The step system as the host holds it.
pub(super) enum HostSys<K, V> {
    /// Whole on the host (CPU, temperature-dependent stacks, a steady
    /// start, `CUTH_HOST_ASSEMBLY`); its rhs is the current step's power.
    Whole(Box<System>),
    /// Assembled on the device: the host keeps the films, the power in and
    /// the compact inputs for later trace rows; `p` is the current power.
    Device {
        g_top: Vec<f64>,
        g_bottom: Vec<f64>,
        power_w: f64,
        kept: K,
        p: V,
    },
}

impl<K, V> HostSys<K, V> {
    pub(super) fn power_w(&self) -> f64 {
        match self {
            HostSys::Whole(sys) => probe::ordered_sum(&sys.rhs),
            HostSys::Device { power_w, .. } => *power_w,
        }
    }

    /// The coolant of a liquid-cooled stack (always on the host).
    pub(super) fn coolant(&self) -> Option<&crate::assemble::cavity::Coolant> {
        match self {
            HostSys::Whole(sys) => sys.coolant.as_ref(),
            HostSys::Device { .. } => None,
        }
    }

    pub(super) fn capacity(&self) -> Option<&[f64]> {
        match self {
            HostSys::Whole(sys) => Some(&sys.capacity),
            HostSys::Device { .. } => None,
        }
    }

    /// The films, for a temperature-dependent step to update.
    pub(super) fn films_mut(&mut self) -> (&mut Vec<f64>, &mut Vec<f64>) {
        match self {
            HostSys::Whole(sys) => (&mut sys.g_top, &mut sys.g_bottom),
            HostSys::Device {
                g_top, g_bottom, ..
            } => (g_top, g_bottom),
        }
    }

    pub(super) fn films(&self) -> (&[f64], &[f64]) {
        match self {
            HostSys::Whole(sys) => (&sys.g_top, &sys.g_bottom),
            HostSys::Device {
                g_top, g_bottom, ..
            } => (g_top, g_bottom),
        }
    }

    /// What the summaries' energy balance reads: `power_w` as the power
    /// in, except where the host's rhs is the whole power (`rhs_is_power`:
    /// a linear stack), summed from it as before.
    pub(super) fn coupling(&self, power_w: f64, rhs_is_power: bool) -> Coupling<'_> {
        match self {
            HostSys::Whole(sys) if rhs_is_power => Coupling::from(&**sys),
            _ => {
                let (g_top, g_bottom) = self.films();
                Coupling {
                    power_in_w: power_w,
                    g_top,
                    g_bottom,
                }
            }
        }
    }
}

/// Σ of the per-cell power of per-layer plane `maps` (each layer's map
/// once per z cell, split evenly over them), as `cell_power` spreads it.
pub(super) fn maps_power(grid: &Grid, maps: &[Vec<f64>]) -> f64 {
    grid.layer_z
        .iter()
        .zip(maps)
        .map(|(zr, m)| {
            let share = 1.0 / zr.len() as f64;
            zr.len() as f64 * chunked_sum(m, |w| w * share)
        })
        .sum()
}

impl<K, V> HostSys<K, V> {
    /// Trace row `row` from now on: the step's power (its host rhs, or the
    /// kernel's from the row's maps), the stepper's source and the dynamic
    /// power of `phys` (a temperature-dependent stack). Returns the power
    /// in, W.
    pub(super) fn set_row<B>(
        &mut self,
        be: &B,
        grid: &Grid,
        schedule: &PowerSchedule,
        row: Option<usize>,
        stepper: &mut Stepper<B>,
        phys: Option<&mut StepPhysics<B>>,
    ) -> Result<f64, TransientError>
    where
        B: ThermalBackend<Vector = V> + NonlinearOps<AsmKept = K> + 'static,
    {
        match self {
            HostSys::Whole(sys) => {
                sys.rhs = cell_power(grid, &schedule.layer_maps(row));
                let p = be.upload(&sys.rhs)?;
                stepper.set_power_device(&p)?;
                if let Some(ph) = phys {
                    ph.set_dynamic(be, &p)?;
                }
                Ok(probe::ordered_sum(&sys.rhs))
            }
            HostSys::Device {
                power_w, kept, p, ..
            } => {
                // The new row's maps (one plane per layer) and a kernel.
                let maps = schedule.layer_maps(row);
                be.tr_power(kept, &maps, p)?;
                *power_w = maps_power(grid, &maps);
                stepper.set_power_device(p)?;
                if let Some(ph) = phys {
                    ph.set_dynamic(be, p)?;
                }
                Ok(*power_w)
            }
        }
    }
}

/// θ of the steady state of `sys` for `p_cell`, solved as `solve_steady`
/// does (a liquid-cooled one as `thermal::liquid_steady` does).
pub(super) fn steady_theta<B: ThermalBackend + 'static>(
    be: &B,
    sys: &System,
    p_cell: &[f64],
    opts: &SteadyOptions,
) -> Result<Vec<f64>, TransientError> {
    let a_host = &sys.a;
    if sys.coolant.is_some() {
        let inlet = sys.inlet_source();
        let with_power = System {
            rhs: p_cell.iter().zip(&inlet).map(|(p, i)| p + i).collect(),
            ..sys.clone()
        };
        let precond = (opts.precond, &opts.precond_opts);
        let solved = crate::thermal::liquid::solve_system(be, &with_power, precond, |be, m, b| {
            opts.cg_params(be, m, Stop::against(opts.rtol, b))
        })
        .map_err(|e| TransientError::Cavity(e.to_string()))?;
        let mut theta = solved.x_host;
        solved.offset.restore(&mut theta);
        return Ok(theta);
    }
    let offset = Offset::new(a_host, p_cell);
    let a = be.upload_matrix(a_host)?;
    let b = be.upload(&offset.rhs)?;
    let mut x = be.zeros(a_host.len())?;
    let op = QuadDiagOperator::new(be, &a, a_host.len());
    let mut ksp = Solver::new(be, op, opts.precond, &opts.precond_opts, Some(a_host))
        .map_err(TransientError::Initial)?;
    let stop = Stop::against(opts.rtol, offset.b_norm);
    ksp.set_params(opts.cg_params(be, ksp.precond(), stop));
    ksp.solve(&b, &mut x).map_err(TransientError::Initial)?;
    let mut theta = be.download(&x)?;
    offset.restore(&mut theta);
    Ok(theta)
}

/// θ of the first level (K above ambient): ambient, a saved field, or the
/// steady state of the first row's (or the trace's mean) power.
pub(super) fn initial_theta<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    schedule: &PowerSchedule,
    opts: &TransientOptions,
    sys: &HostSys<B::AsmKept, B::Vector>,
    first_row: Option<usize>,
) -> Result<Vec<f64>, TransientError> {
    let nonlinear = stack.is_nonlinear();
    Ok(match (&opts.init, sys) {
        (InitState::Ambient, _) => vec![0.0; grid.len()],
        (InitState::Field(t), _) => t.iter().map(|v| v - stack.ambient_k).collect(),
        // With laws or leakage: the nonlinear steady solve for this power.
        (InitState::Steady | InitState::SteadyMean, _) if nonlinear => {
            let p = match (&opts.init, &sys) {
                (InitState::SteadyMean, _) => cell_power(grid, &schedule.mean_layer_maps()),
                (_, HostSys::Whole(sys)) => sys.rhs.clone(),
                (_, HostSys::Device { .. }) => cell_power(grid, &schedule.layer_maps(first_row)),
            };
            let base = &schedule.base;
            crate::thermal::nonlinear::picard::picard(be, stack, grid, base, Some(&p), &opts.solver)
                .map_err(Box::new)?
                .theta
        }
        (InitState::Steady, HostSys::Whole(sys)) => steady_theta(be, sys, &sys.rhs, &opts.solver)?,
        (InitState::SteadyMean, HostSys::Whole(sys)) => {
            let mean = cell_power(grid, &schedule.mean_layer_maps());
            steady_theta(be, sys, &mean, &opts.solver)?
        }
        (InitState::Steady | InitState::SteadyMean, HostSys::Device { .. }) => {
            return Err(BackendError::Unsupported("a steady start with device assembly").into())
        }
    })
}
