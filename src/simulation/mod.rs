//! The library's stepping API: a stack opened once on a backend, then
//! driven call by call. The system, the preconditioners (the multigrid
//! hierarchy) and the field stay on the device between calls; a call sets
//! block powers or a layer's map, takes a backward-Euler step or solves the
//! steady state, and reads blocks, probes, the hottest point or the whole
//! field back as plain data. It prints nothing and reads no global state;
//! every failure is a typed [`SimulationError`] after which the session is
//! as it was before the call.
//!
//! A co-simulation loop (an architecture simulator setting the cores'
//! powers every few microseconds) calls [`Simulation::set_block_powers`],
//! [`Simulation::step`] and [`Simulation::blocks`] thousands of times: a
//! power change re-rasterizes only the driven layers (footprints are
//! rasterized once) and uploads one vector; a step is one warm-started PCG
//! solve; a read of the blocks, the probes or the hottest cell after a step
//! reduces the field where it lives (`reads`), so a GPU hands back a few
//! numbers, not the field. The same powers and Δt give the same field as `cuth transient`'s
//! steps (the same [`BlockDrive`](crate::power::drive::BlockDrive) maps and [`Stepper`]), and a steady solve
//! the same as `cuth solve`'s.
//!
//! Linear stacks only: a stack with temperature-dependent properties or
//! leakage is refused at [`Simulation::open`]. Liquid-cooled cavities are
//! solved as `cuth solve` and `cuth transient` solve them (BiCGStab over
//! the upwind multigrid); the coolant's own readings (outlets, its heat)
//! are not among a session's replies.

mod error;
mod power;
mod readings;
mod reads;

pub use error::SimulationError;
pub use readings::{
    BlockInfo, BlockReading, Hottest, Info, LayerInfo, ProbeValue, SolveReport, State,
};

use crate::assemble::{assemble, System};
use crate::grid::Grid;
use crate::linalg::{CgInfo, Offset, QuadDiagOperator, Solver, Stop};
use crate::stack::{PowerSpec, Stack};
use crate::thermal::block_stats::{BlockFootprint, TempStats};
use crate::thermal::device::ThermalBackend;
use crate::thermal::liquid::{add_coolant_to, solve_system, LiquidError};
use crate::thermal::probes;
use crate::thermal::steady::{heat_reaches_ambient, rasterize_layers, SteadyOptions};
use crate::thermal::transient::state::STATE_RANGE_K;
use crate::thermal::transient::Stepper;
use power::SetPower;
use reads::{DeviceReads, FieldReads};

/// The time steps a session takes, s: beyond them C/Δt under- or
/// overflows against the conductances of any chip-scale cell.
pub const DT_RANGE_S: std::ops::RangeInclusive<f64> = 1e-15..=1e15;

/// A stack opened on backend `be` (which it borrows: several sessions may
/// share one device).
pub struct Simulation<'b, B: ThermalBackend + 'static> {
    be: &'b B,
    stack: Stack,
    grid: Grid,
    opts: SteadyOptions,
    /// A, C and the films; `rhs` is the power per cell now set.
    sys: System,
    power: SetPower,
    /// θ = T − ambient of every cell, K, when `host_current` (else the
    /// stepper holds the newer field on the device).
    theta: Vec<f64>,
    host_current: bool,
    /// T = θ + ambient, K, when `t_current`: one pass for every read of a
    /// level.
    t_k: Vec<f64>,
    t_current: bool,
    /// Power in of the power now set, W.
    power_in_w: f64,
    /// Per layer, its blocks' footprints, rasterized once.
    footprints: Vec<Vec<BlockFootprint>>,
    stepping: Option<Stepping<'b, B>>,
    /// PCG on A, built on the first steady solve and kept.
    steady: Option<Solver<'b, B>>,
    /// The tables of reads reduced on the device, built on the first.
    device_reads: Option<DeviceReads<B::Vector>>,
    /// The last device reduction's reads, until the field changes.
    reads: Option<FieldReads>,
    time_s: f64,
}

/// The stepper for the Δt in use, and what it has not yet been told.
struct Stepping<'b, B: ThermalBackend + 'static> {
    dt: f64,
    stepper: Stepper<'b, B>,
    /// The power changed since the stepper's source was set.
    power_stale: bool,
    /// The host's θ (a steady solve, a restore) is newer than the
    /// stepper's.
    theta_stale: bool,
}

impl<'b, B: ThermalBackend + 'static> Simulation<'b, B> {
    /// Rasterizes the stack's power, assembles the system and sets the
    /// field to ambient at t = 0. Nothing is solved yet.
    pub fn open(be: &'b B, stack: Stack, opts: SteadyOptions) -> Result<Self, SimulationError> {
        if stack.is_nonlinear() {
            return Err(SimulationError::Unsupported(format!(
                "{}: a stepping session supports stacks with constant properties and no \
                 leakage; this stack has temperature-dependent properties or leakage \
                 (use `cuth transient`)",
                stack.source.display()
            )));
        }
        let grid = Grid::from_stack(&stack);
        be.check_capacity_with(grid.len(), crate::thermal::transient::EXTRA_VECTORS + 1)?;
        be.prepare_quad_diag()?;
        let base = rasterize_layers(&stack, &grid)?;
        let mut sys = assemble(&stack, &grid, &base);
        if stack.has_cavities() {
            // The coolant carries heat out as the films do; `rhs` stays the
            // power alone (the inlets' enthalpy is the stepper's own source,
            // and added for a steady solve).
            let power = sys.rhs.clone();
            add_coolant_to(&stack, &grid, &mut sys).map_err(|e| match e {
                LiquidError::Power(e) => SimulationError::Power(e),
                e => SimulationError::Unsupported(e.to_string()),
            })?;
            sys.rhs = power;
        } else {
            heat_reaches_ambient(&stack, &grid, &base)?;
        }
        crate::assemble::check_system(&sys, &grid).map_err(SimulationError::Internal)?;
        let footprints = (base.iter())
            .map(|lp| {
                (lp.blocks.iter())
                    .map(|b| BlockFootprint::of(b, &grid))
                    .collect()
            })
            .collect();
        let power = SetPower::new(&stack, base);
        let theta = vec![0.0; grid.len()];
        let power_in_w = crate::thermal::transient::ordered_sum(&sys.rhs);
        Ok(Simulation {
            be,
            stack,
            grid,
            opts,
            sys,
            power,
            t_k: vec![0.0; theta.len()],
            theta,
            host_current: true,
            t_current: false,
            power_in_w,
            footprints,
            stepping: None,
            steady: None,
            device_reads: None,
            reads: None,
            time_s: 0.0,
        })
    }

    pub fn stack(&self) -> &Stack {
        &self.stack
    }

    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// Simulated time, s.
    pub fn time_s(&self) -> f64 {
        self.time_s
    }

    /// Power in, W, of the power now set.
    pub fn power_w(&self) -> f64 {
        self.power_in_w
    }

    /// Sets the power (W) of the named blocks from the next solve on; the
    /// other blocks keep theirs. All are checked before any is set.
    pub fn set_block_powers(&mut self, powers: &[(&str, f64)]) -> Result<(), SimulationError> {
        let changed = self.power.with_blocks(&self.stack, &self.grid, powers)?;
        self.power_changed(&changed);
        Ok(())
    }

    /// Sets layer `layer`'s whole map (W per plane cell, index `x + nx*y`)
    /// from the next solve on; setting one of its blocks later re-rasterizes
    /// it from its blocks.
    pub fn set_layer_map(&mut self, layer: &str, map_w: Vec<f64>) -> Result<(), SimulationError> {
        let l = (self.power).with_layer_map(&self.stack, &self.grid, layer, map_w)?;
        self.power_changed(&[l]);
        Ok(())
    }

    /// Sets layer `layer`'s power from a source as a stack file gives it
    /// (a raster file, uniform, blocks), rasterized on the grid as the
    /// stack's own; relative paths are the stack file's.
    pub fn set_layer_power(&mut self, layer: &str, spec: PowerSpec) -> Result<(), SimulationError> {
        let l = self.layer_index(layer)?;
        let mut own = self.stack.clone();
        own.layers[l].power = Some(spec);
        let p = crate::power::layer_power(&own, &self.grid, l)?;
        self.set_layer_map(layer, p.map_w)
    }

    /// The power now set, per layer (its map, W per plane cell, and its
    /// blocks with their powers): what `cuth solve` would solve with it
    /// ([`crate::thermal::steady::Prepared`]).
    pub fn layer_power(&self) -> Vec<crate::power::LayerPower> {
        self.power.layer_power_with_maps()
    }

    /// Layers `changed` have new maps: their cells of the right-hand side
    /// are re-formed (the others' stay).
    fn power_changed(&mut self, changed: &[usize]) {
        for &l in changed {
            let map = self.power.layer_map(l);
            crate::power::schedule::set_layer_cells(&self.grid, l, map, &mut self.sys.rhs);
        }
        self.power_in_w = crate::thermal::transient::ordered_sum(&self.sys.rhs);
        if let Some(s) = &mut self.stepping {
            s.power_stale = true;
        }
    }

    /// One backward-Euler step of `dt_s` seconds under the power now set,
    /// warm-started from the line through the last two fields (the
    /// current one after a new Δt or a set state). A new Δt rebuilds the step's
    /// operator and preconditioner; the same Δt reuses them.
    pub fn step(&mut self, dt_s: f64) -> Result<SolveReport, SimulationError> {
        if !DT_RANGE_S.contains(&dt_s) {
            return Err(SimulationError::invalid(
                "dt",
                format!(
                    "must be {:e} to {:e} s, got {dt_s}",
                    DT_RANGE_S.start(),
                    DT_RANGE_S.end()
                ),
            ));
        }
        let s = self.stepping_for(dt_s)?;
        s.stepper.save_level()?;
        let info = match s.stepper.step() {
            Ok(info) => info,
            Err(e) => {
                s.stepper.restore_level()?;
                return Err(e.into());
            }
        };
        self.host_current = false;
        self.field_changed();
        self.time_s += dt_s;
        Ok(self.report(&info, Some(dt_s)))
    }

    /// The stepper for `dt`, told of the current power and field.
    fn stepping_for(&mut self, dt: f64) -> Result<&mut Stepping<'b, B>, SimulationError> {
        if self.stepping.as_ref().is_some_and(|s| s.dt != dt) {
            self.sync_host()?;
            self.stepping = None;
        }
        if self.stepping.is_none() {
            // The shift c is the current power's (as a transient run's is
            // its first row's), see `Stepper`; a liquid-cooled step takes
            // none.
            let c = match self.sys.coolant {
                Some(_) => 0.0,
                None => Offset::new(&self.sys.a, &self.sys.rhs).c,
            };
            let (be, sys) = (self.be, &self.sys);
            let mut stepper = Stepper::new(be, sys, dt, c, &self.theta, &self.opts)?;
            stepper.set_power(&sys.rhs)?;
            // As a transient run's steps: from the last two levels' line.
            stepper.extrapolate()?;
            self.stepping = Some(Stepping {
                dt,
                stepper,
                power_stale: false,
                theta_stale: false,
            });
        }
        let s = (self.stepping.as_mut()).expect("a stepper was just set");
        if s.theta_stale {
            s.stepper.set_theta(&self.theta)?;
            s.theta_stale = false;
        }
        if s.power_stale {
            s.stepper.set_power(&self.sys.rhs)?;
            s.power_stale = false;
        }
        Ok(s)
    }

    /// The steady field of the power now set (solved from zero, as `cuth
    /// solve` does); the time stays.
    pub fn solve_steady(&mut self) -> Result<SolveReport, SimulationError> {
        if self.sys.coolant.is_some() {
            return self.solve_steady_liquid();
        }
        let be = self.be;
        let ksp = match &mut self.steady {
            Some(k) => k,
            None => {
                let n = self.grid.len();
                let op = QuadDiagOperator::owning(be, be.upload_matrix(&self.sys.a)?, n);
                let (kind, opts) = (self.opts.precond, &self.opts.precond_opts);
                self.steady
                    .insert(Solver::new(be, op, kind, opts, Some(&self.sys.a))?)
            }
        };
        let offset = Offset::new(&self.sys.a, &self.sys.rhs);
        let b = be.upload(&offset.rhs)?;
        let mut x = be.zeros(self.grid.len())?;
        let stop = Stop::against(self.opts.rtol, offset.b_norm);
        ksp.set_params(self.opts.cg_params(be, ksp.precond(), stop));
        let info = ksp.solve(&b, &mut x)?;
        be.download_into(&x, &mut self.theta)?;
        offset.restore(&mut self.theta);
        self.host_current = true;
        self.field_changed();
        if let Some(s) = &mut self.stepping {
            s.theta_stale = true;
        }
        Ok(self.report(&info, None))
    }

    /// The steady field of a liquid-cooled stack, solved as `cuth solve`
    /// solves it (`thermal::liquid`): the system with the inlets' enthalpy
    /// on its right-hand side, assembled again on the device each call.
    fn solve_steady_liquid(&mut self) -> Result<SolveReport, SimulationError> {
        let mut sys = self.sys.clone();
        (sys.rhs.iter_mut().zip(self.sys.inlet_source())).for_each(|(b, s)| *b += s);
        let precond = (self.opts.precond, &self.opts.precond_opts);
        let opts = &self.opts;
        let solved = solve_system(self.be, &sys, precond, |be, m, b| {
            opts.cg_params(be, m, Stop::against(opts.rtol, b))
        })
        .map_err(|e| match e {
            LiquidError::Solve(e) => SimulationError::Solve(e),
            LiquidError::Backend(e) => SimulationError::Backend(e),
            e => SimulationError::Unsupported(e.to_string()),
        })?;
        let mut theta = solved.x_host;
        solved.offset.restore(&mut theta);
        self.theta = theta;
        self.host_current = true;
        self.field_changed();
        if let Some(s) = &mut self.stepping {
            s.theta_stale = true;
        }
        Ok(self.report(&solved.info, None))
    }

    fn report(&self, info: &CgInfo, dt_s: Option<f64>) -> SolveReport {
        SolveReport {
            time_s: self.time_s,
            dt_s,
            iterations: info.iterations,
            relative_residual: info.rel_residual,
            power_w: self.power_w(),
        }
    }

    /// Brings the host's θ up to the stepper's.
    fn sync_host(&mut self) -> Result<(), SimulationError> {
        if self.host_current {
            return Ok(());
        }
        let s = (self.stepping.as_ref()).expect("the field is newer only on a stepper");
        s.stepper.download_shifted(&mut self.theta)?;
        let c = s.stepper.c;
        self.theta.iter_mut().for_each(|t| *t += c);
        self.host_current = true;
        Ok(())
    }

    /// The host's T and the device's reads no longer hold the field.
    fn field_changed(&mut self) {
        self.t_current = false;
        self.reads = None;
    }

    /// The reads of the stepper's level reduced where it lives, when it is
    /// newer than the host's and the backend reduces (see `reads`).
    fn device_reads(&mut self) -> Result<Option<&FieldReads>, SimulationError> {
        if self.host_current {
            return Ok(None);
        }
        if self.reads.is_none() {
            let s = (self.stepping.as_ref()).expect("the field is newer only on a stepper");
            let power = self.power.layer_power();
            let cells = probes::probe_cells(&self.stack, &self.grid);
            let tables = match &self.device_reads {
                Some(t) => t,
                None => (self.device_reads)
                    .insert(DeviceReads::new(self.be, &self.grid, &power, &cells)?),
            };
            let problem = (&self.stack, &self.grid, &power[..]);
            let x = s.stepper.shifted();
            match tables.read(self.be, problem, &cells, x, s.stepper.c)? {
                Some(r) => self.reads = Some(r),
                None => return Ok(None),
            }
        }
        Ok(self.reads.as_ref())
    }

    /// Brings `t_k` up to the current level.
    fn sync_t(&mut self) -> Result<(), SimulationError> {
        self.sync_host()?;
        if !self.t_current {
            let ambient = self.stack.ambient_k;
            (self.t_k.iter_mut().zip(&self.theta)).for_each(|(t, th)| *t = th + ambient);
            self.t_current = true;
        }
        Ok(())
    }

    /// T of every cell, K (index `x + nx*(y + ny*z)`).
    pub fn temperature_k(&mut self) -> Result<Vec<f64>, SimulationError> {
        self.sync_t()?;
        Ok(self.t_k.clone())
    }

    /// Layer `layer`'s temperature map, K (mean over its z cells, index
    /// `x + nx*y`).
    pub fn layer_map_k(&mut self, layer: &str) -> Result<Vec<f64>, SimulationError> {
        let l = self.layer_index(layer)?;
        self.sync_t()?;
        Ok(self.grid.layer_map(&self.t_k, l))
    }

    fn layer_index(&self, layer: &str) -> Result<usize, SimulationError> {
        power::layer_index(&self.stack, layer)
    }

    /// Every named block's temperatures and power, layer by layer.
    pub fn blocks(&mut self) -> Result<Vec<BlockReading>, SimulationError> {
        let layers = self.power.layer_power();
        let temps: Vec<Vec<Option<TempStats>>> = match self.device_reads()? {
            Some(r) => r.blocks.clone(),
            None => {
                self.sync_t()?;
                (layers.iter().enumerate())
                    .map(|(l, lp)| match lp.blocks.is_empty() {
                        true => Vec::new(),
                        false => {
                            let map = self.grid.layer_map(&self.t_k, l);
                            (self.footprints[l].iter())
                                .map(|f| f.stats(&map, &self.grid))
                                .collect()
                        }
                    })
                    .collect()
            }
        };
        let mut out = Vec::new();
        for (l, (layer, lp)) in self.stack.layers.iter().zip(&layers).enumerate() {
            let whole_map = self.power.has_map(l);
            let temps = temps.get(l).map_or(&[][..], |t| &t[..]);
            if temps.len() != lp.blocks.len() {
                return Err(SimulationError::Internal(format!(
                    "layer `{}`: {} block readings for {} blocks",
                    layer.name,
                    temps.len(),
                    lp.blocks.len()
                )));
            }
            out.extend(lp.blocks.iter().zip(temps).map(|(b, temp)| BlockReading {
                layer: layer.name.clone(),
                block: b.name.clone(),
                power_w: (!whole_map).then_some(b.power_w),
                max_k: temp.map(|t| t.max_k),
                avg_k: temp.map(|t| t.avg_k),
                min_k: temp.map(|t| t.min_k),
            }));
        }
        Ok(out)
    }

    /// Every `[[probes]]` point's temperature, in the stack's order.
    pub fn probes(&mut self) -> Result<Vec<ProbeValue>, SimulationError> {
        let cells = probes::probe_cells(&self.stack, &self.grid);
        let values = match self.device_reads()? {
            Some(r) => r.probes.clone(),
            None => {
                self.sync_t()?;
                probes::read(&self.grid, &cells, &self.t_k)
            }
        };
        Ok(cells
            .into_iter()
            .zip(values)
            .map(|(c, t_k)| ProbeValue {
                name: c.name,
                layer: self.stack.layers[c.layer].name.clone(),
                t_k,
            })
            .collect())
    }

    /// The hottest cell (the first of equals, in index order).
    pub fn hottest(&mut self) -> Result<Hottest, SimulationError> {
        let (i, t_k) = match self.device_reads()? {
            Some(r) => r.hottest,
            None => {
                self.sync_t()?;
                (self.t_k.iter().copied().enumerate()).fold((0, f64::NEG_INFINITY), |m, (i, v)| {
                    if v > m.1 {
                        (i, v)
                    } else {
                        m
                    }
                })
            }
        };
        let (x, y, z) = self.grid.coords(i);
        let l = self.grid.layer_of_z[z];
        let (x_m, y_m) = (self.grid.x_center(x), self.grid.y_center(y));
        Ok(Hottest {
            layer: self.stack.layers[l].name.clone(),
            x_m,
            y_m,
            t_k,
            die: crate::thermal::summary::DiePoint::of(&self.stack, l, x_m, y_m),
        })
    }

    /// The grid, the layers, the blocks and the probes.
    pub fn info(&self) -> Info {
        let layers = self.power.layer_power();
        Info {
            nx: self.grid.nx,
            ny: self.grid.ny,
            nz: self.grid.nz,
            width_m: self.grid.width(),
            length_m: self.grid.length(),
            ambient_k: self.stack.ambient_k,
            layers: (self.stack.layers.iter().enumerate())
                .map(|(l, layer)| LayerInfo {
                    name: layer.name.clone(),
                    z_cells: layer.cells,
                    thickness_m: layer.thickness_m,
                    drivable: crate::power::drive::drivable(&self.stack, l),
                })
                .collect(),
            blocks: (self.stack.layers.iter().zip(&layers))
                .flat_map(|(layer, lp)| {
                    lp.blocks.iter().map(|b| BlockInfo {
                        layer: layer.name.clone(),
                        name: b.name.clone(),
                        power_w: b.power_w,
                    })
                })
                .collect(),
            probes: self.stack.probes.iter().map(|p| p.name.clone()).collect(),
        }
    }

    /// The field and the time, to [`Self::restore`] later.
    pub fn state(&mut self) -> Result<State, SimulationError> {
        Ok(State {
            time_s: self.time_s,
            temperature_k: self.temperature_k()?,
        })
    }

    /// Sets the field and the time back to `state` (the power stays).
    pub fn restore(&mut self, state: &State) -> Result<(), SimulationError> {
        let n = self.grid.len();
        if state.temperature_k.len() != n {
            return Err(SimulationError::invalid(
                "state",
                format!(
                    "holds {} cells, the grid has {n}",
                    state.temperature_k.len()
                ),
            ));
        }
        if let Some((i, t)) =
            (state.temperature_k.iter().enumerate()).find(|(_, t)| !STATE_RANGE_K.contains(*t))
        {
            return Err(SimulationError::invalid(
                "state",
                format!("cell {i} holds {t} K, not a temperature"),
            ));
        }
        if !(state.time_s.is_finite() && state.time_s >= 0.0) {
            return Err(SimulationError::invalid(
                "state",
                format!("time {} s is not a time", state.time_s),
            ));
        }
        let ambient = self.stack.ambient_k;
        (self.theta.iter_mut().zip(&state.temperature_k)).for_each(|(th, t)| *th = t - ambient);
        self.host_current = true;
        self.field_changed();
        if let Some(s) = &mut self.stepping {
            s.theta_stale = true;
        }
        self.time_s = state.time_s;
        Ok(())
    }
}
