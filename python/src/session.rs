//! `cuth.Session`: a [`Simulation`] held by Python, as `cuth serve` holds
//! one: the system, the preconditioners and the field stay on the device
//! between calls. Every call releases the GIL while it computes.

use crate::device::Dev;
use crate::errors::{input_error, OrPy};
use crate::power::PowerArg;
use crate::readings::{block_dict, field_array, map_array, BlockRow};
use cuth::backend::cpu::{on_this_thread, CpuBackend};
use cuth::backend::cuda::CudaBackend;
use cuth::simulation::{Simulation, SolveReport};
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The simulation on whichever backend the stack opened.
enum Sim {
    Cpu(Box<Simulation<'static, CpuBackend>>),
    Cuda(Box<Simulation<'static, CudaBackend>>),
}

macro_rules! with_sim {
    ($sim:expr, |$s:ident| $body:expr) => {
        match $sim {
            Sim::Cpu($s) => $body,
            Sim::Cuda($s) => $body,
        }
    };
}

/// As `with_sim!`, for the calls that compute: a CPU session runs them
/// with this thread in its own pool (`backend::cpu::on_this_thread`: a
/// session's loops are short, and handing each to the global pool costs
/// more than it saves); a GPU session's host work stays as it is.
macro_rules! run_sim {
    ($sim:expr, |$s:ident| $body:expr) => {
        match $sim {
            Sim::Cpu($s) => on_this_thread(|| $body),
            Sim::Cuda($s) => $body,
        }
    };
}

/// `&mut Sim` taken into `allow_threads`, which runs its closure on this
/// same thread and only releases the GIL meanwhile. The preconditioners a
/// simulation holds are not `Send`, so the session is `unsendable` (Python
/// may use it only from the thread that made it) and this wrapper states
/// that the closure never leaves that thread.
struct OnThisThread<T>(T);

// SAFETY: `Python::allow_threads` calls its closure on the calling thread
// (the bound is PyO3's stand-in for "holds no GIL-bound reference"), and
// an `unsendable` pyclass is only borrowed on the thread that created it,
// so the simulation is never touched from another thread.
unsafe impl<T> Send for OnThisThread<T> {}

impl<T> OnThisThread<T> {
    /// The value (a method, so that a closure captures the whole wrapper
    /// rather than its field).
    fn get(self) -> T {
        self.0
    }
}

/// A stepping session: `set_power`, `step`, `steady`, then `blocks`,
/// `probes`, `hottest`, `layer`, `temperature`.
#[pyclass(name = "Session", module = "cuth", unsendable)]
pub struct PySession {
    sim: Sim,
    nx: usize,
    ny: usize,
}

impl PySession {
    /// Opens a session on `stack` with `opts` on `dev`, the GIL released
    /// meanwhile.
    pub fn open(
        py: Python<'_>,
        stack: &cuth::stack::Stack,
        opts: &cuth::thermal::steady::SteadyOptions,
        dev: Dev,
    ) -> PyResult<PySession> {
        let (nx, ny) = (stack.nx, stack.ny);
        let (s, opts) = (stack.clone(), opts.clone());
        let sim = py
            .allow_threads(|| {
                OnThisThread(match dev {
                    Dev::Cpu(be) => Simulation::open(be, s, opts).map(|s| Sim::Cpu(Box::new(s))),
                    Dev::Cuda(be) => Simulation::open(be, s, opts).map(|s| Sim::Cuda(Box::new(s))),
                })
            })
            .get()
            .or_py()?;
        Ok(PySession { sim, nx, ny })
    }
}

/// A solve's report as a dict.
fn report(py: Python<'_>, r: SolveReport) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("time", r.time_s)?;
    d.set_item("dt", r.dt_s)?;
    d.set_item("iterations", r.iterations)?;
    d.set_item("relative_residual", r.relative_residual)?;
    d.set_item("power", r.power_w)?;
    Ok(d)
}

#[pymethods]
impl PySession {
    /// Sets block powers (`{"name": W}`; other blocks keep theirs) and
    /// layer maps (`{"layer": ndarray (ny, nx), W per cell}`) from the next
    /// solve on. All are checked before any is set.
    fn set_power(&mut self, py: Python<'_>, power: &Bound<'_, PyDict>) -> PyResult<()> {
        let arg = PowerArg::from_dict(power, self.nx, self.ny)?;
        let sim = OnThisThread(&mut self.sim);
        py.allow_threads(|| run_sim!(sim.get(), |s| arg.apply(s)))
            .or_py()
    }

    /// `steps` backward-Euler steps of `dt` s under the power now set;
    /// returns the last step's report (time, iterations, residual, power).
    #[pyo3(signature = (dt, steps=1))]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        dt: f64,
        steps: usize,
    ) -> PyResult<Bound<'py, PyDict>> {
        if steps == 0 {
            return Err(input_error("steps must be at least 1"));
        }
        let sim = OnThisThread(&mut self.sim);
        let r = py
            .allow_threads(|| {
                run_sim!(sim.get(), |s| {
                    let mut last = s.step(dt)?;
                    for _ in 1..steps {
                        last = s.step(dt)?;
                    }
                    Ok::<_, cuth::simulation::SimulationError>(last)
                })
            })
            .or_py()?;
        report(py, r)
    }

    /// The steady field of the power now set (the time stays).
    fn steady<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = OnThisThread(&mut self.sim);
        let r = py
            .allow_threads(|| run_sim!(sim.get(), |s| s.solve_steady()))
            .or_py()?;
        report(py, r)
    }

    /// Simulated time, s.
    #[getter]
    fn time(&self) -> f64 {
        with_sim!(&self.sim, |s| s.time_s())
    }

    /// Power in, W, of the power now set.
    #[getter]
    fn power(&self) -> f64 {
        with_sim!(&self.sim, |s| s.power_w())
    }

    /// Block key → {"layer", "power", "min", "avg", "max"}, K and W.
    fn blocks<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = OnThisThread(&mut self.sim);
        let b = py
            .allow_threads(|| run_sim!(sim.get(), |s| s.blocks()))
            .or_py()?;
        let rows: Vec<BlockRow> = b
            .into_iter()
            .map(|b| BlockRow {
                layer: b.layer,
                block: b.block,
                power_w: b.power_w,
                min_avg_max: b
                    .min_k
                    .zip(b.avg_k)
                    .zip(b.max_k)
                    .map(|((a, b), c)| (a, b, c)),
            })
            .collect();
        block_dict(py, &rows)
    }

    /// Probe name → K.
    fn probes<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = OnThisThread(&mut self.sim);
        let p = py
            .allow_threads(|| run_sim!(sim.get(), |s| s.probes()))
            .or_py()?;
        let d = PyDict::new(py);
        for p in p {
            d.set_item(p.name, p.t_k)?;
        }
        Ok(d)
    }

    /// The hottest cell: {"layer", "x", "y" (m), "t" (K)}.
    fn hottest<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let sim = OnThisThread(&mut self.sim);
        let h = py
            .allow_threads(|| run_sim!(sim.get(), |s| s.hottest()))
            .or_py()?;
        let d = PyDict::new(py);
        d.set_item("layer", h.layer)?;
        d.set_item("x", h.x_m)?;
        d.set_item("y", h.y_m)?;
        d.set_item("t", h.t_k)?;
        Ok(d)
    }

    /// Layer `name`'s map, ndarray (ny, nx), K.
    fn layer<'py>(&mut self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
        let sim = OnThisThread(&mut self.sim);
        let m = py
            .allow_threads(|| with_sim!(sim.get(), |s| s.layer_map_k(name)))
            .or_py()?;
        Ok(map_array(py, m, self.nx, self.ny)?.into_any())
    }

    /// Every cell, ndarray (nz, ny, nx), K.
    fn temperature<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let sim = OnThisThread(&mut self.sim);
        let (t, grid) = py
            .allow_threads(|| {
                with_sim!(sim.get(), |s| s
                    .temperature_k()
                    .map(|t| (t, s.grid().clone())))
            })
            .or_py()?;
        Ok(field_array(py, t, &grid)?.into_any())
    }
}
