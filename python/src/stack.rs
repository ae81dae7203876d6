//! `cuth.Stack`: a checked stack (from a TOML file or a dict in the same
//! schema, through the same parser and validator) with its grid, solver
//! options and the device it solves on; its one-shot solves (`solve`,
//! `transient`) and the stepping sessions it opens.

use crate::device::{self, with_backend, Opened};
use crate::errors::{input_error, OrPy};
use crate::power::PowerArg;
use crate::readings::{block_dict, field_array, map_array, BlockRow};
use cuth::grid::Grid;
use cuth::linalg::PrecondKind;
use cuth::run::DeviceChoice;
use cuth::simulation::Simulation;
use cuth::stack::Stack;
use cuth::thermal::block_stats::layer_block_stats;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::{solve_steady_for, KeepField, Prepared, SteadyOptions, SteadyOutcome};
use cuth::thermal::sweep::SweepBase;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::any::Any;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// A stack opened for solving: the stack file's content with the grid and
/// solver options given, and the device.
#[pyclass(name = "Stack", module = "cuth", frozen)]
pub struct PyStack {
    pub stack: Stack,
    /// The options of a stepping session (as `cuth serve`'s).
    pub opts: SteadyOptions,
    pub opened: Opened,
    /// What every `cuth.sweep` call on this stack shares (the grid, the
    /// assembled system, the stack's own power), built on the first call:
    /// a dataset script calls the sweep chunk by chunk.
    pub sweep_base: OnceLock<SweepBase>,
    /// The batched sweep's device state on that base (a
    /// `BatchSweeper` of the open backend), kept between `cuth.sweep`
    /// calls for the same reason.
    pub sweep_worker: Mutex<Option<Box<dyn Any + Send>>>,
}

/// The options every constructor takes, checked as the command line checks
/// its flags.
struct Options<'a> {
    grid: Option<(usize, usize)>,
    device: &'a str,
    rtol: Option<f64>,
    precond: Option<&'a str>,
    max_iter: Option<usize>,
}

impl PyStack {
    fn open(stack: Stack, o: Options) -> PyResult<PyStack> {
        let choice: DeviceChoice = o
            .device
            .parse()
            .map_err(|e: String| input_error(format!("device: {e}")))?;
        if let Some(r) = o.rtol {
            if !(r > 0.0 && r < 1.0) {
                return Err(input_error(format!("rtol must be in (0, 1), got {r}")));
            }
        }
        if o.max_iter == Some(0) {
            return Err(input_error("max_iter must be at least 1"));
        }
        let stack = match o.grid {
            Some((nx, ny)) => stack.with_grid(nx, ny).or_py()?,
            None => stack,
        };
        stack.cells().or_py()?;
        let mut opts = SteadyOptions::from_stack(&stack, PrecondKind::Multigrid);
        if let Some(p) = o.precond {
            opts.precond =
                serde_json::from_value(serde_json::Value::String(p.into())).map_err(|_| {
                    input_error(format!(
                        "precond: `{p}` is none of none, jacobi, chebyshev, mg"
                    ))
                })?;
        }
        opts.rtol = o.rtol.unwrap_or(opts.rtol);
        opts.max_iter = o.max_iter.unwrap_or(opts.max_iter);
        let opened = device::open(choice, opts.precond).or_py()?;
        Ok(PyStack {
            stack,
            opts,
            opened,
            sweep_base: OnceLock::new(),
            sweep_worker: Mutex::new(None),
        })
    }

    /// The options of a one-shot solve or sweep: the session's, at the
    /// precision `cuth solve` takes on this device.
    pub fn solve_opts(&self) -> SteadyOptions {
        let mut opts = self.opts.clone();
        opts.precond_opts.precision = cuth::run::precision_on(None, self.opened.device);
        opts
    }

    pub fn grid(&self) -> Grid {
        Grid::from_stack(&self.stack)
    }

    pub fn power_arg(&self, power: Option<&Bound<'_, PyDict>>) -> PyResult<Option<PowerArg>> {
        power
            .map(|d| PowerArg::from_dict(d, self.stack.nx, self.stack.ny))
            .transpose()
    }
}

#[pymethods]
impl PyStack {
    /// Reads and checks a stack file (TOML), as `cuth solve FILE` does.
    #[staticmethod]
    #[pyo3(signature = (path, *, grid=None, device="auto", rtol=None, precond=None, max_iter=None))]
    fn from_toml(
        py: Python<'_>,
        path: PathBuf,
        grid: Option<(usize, usize)>,
        device: &str,
        rtol: Option<f64>,
        precond: Option<&str>,
        max_iter: Option<usize>,
    ) -> PyResult<PyStack> {
        if let Some(msg) = cuth::import::suggest_import(&path) {
            return Err(input_error(msg));
        }
        let stack = py.allow_threads(|| Stack::load(&path)).or_py()?;
        let o = Options {
            grid,
            device,
            rtol,
            precond,
            max_iter,
        };
        py.allow_threads(|| PyStack::open(stack, o))
    }

    /// Checks a dict in the stack file's schema (as `tomllib.load` gives
    /// it) through the stack file's own parser, so that the errors are a
    /// file's. Relative paths in it are taken from `base_dir` (default: the
    /// working directory).
    #[staticmethod]
    #[pyo3(signature = (d, *, base_dir=None, grid=None, device="auto", rtol=None, precond=None, max_iter=None))]
    #[allow(clippy::too_many_arguments)]
    fn from_dict(
        py: Python<'_>,
        d: &Bound<'_, PyDict>,
        base_dir: Option<PathBuf>,
        grid: Option<(usize, usize)>,
        device: &str,
        rtol: Option<f64>,
        precond: Option<&str>,
        max_iter: Option<usize>,
    ) -> PyResult<PyStack> {
        let table = crate::toml_value::table(d)?;
        let text = toml::to_string(&table).map_err(|e| input_error(format!("stack dict: {e}")))?;
        let base = match base_dir {
            Some(b) => b,
            None => std::env::current_dir().map_err(|e| input_error(e.to_string()))?,
        };
        let path = base.join("<dict>");
        let stack = Stack::from_toml(&text, &path).or_py()?;
        let o = Options {
            grid,
            device,
            rtol,
            precond,
            max_iter,
        };
        py.allow_threads(|| PyStack::open(stack, o))
    }

    /// `(nx, ny)`: the in-plane grid.
    #[getter]
    fn grid_shape(&self) -> (usize, usize) {
        (self.stack.nx, self.stack.ny)
    }

    /// The device solves run on: `cpu` or `cuda:N`.
    #[getter]
    fn device(&self) -> String {
        self.opened.device.name()
    }

    /// Layer names, bottom to top.
    #[getter]
    fn layers(&self) -> Vec<String> {
        self.stack.layers.iter().map(|l| l.name.clone()).collect()
    }

    /// Ambient temperature, K.
    #[getter]
    fn ambient_k(&self) -> f64 {
        self.stack.ambient_k
    }

    /// The steady field, as `cuth solve` solves it. `power`: `None` for
    /// the stack's own, or a dict of block powers (`{"name": W}`) and
    /// layer maps (`{"layer": ndarray (ny, nx), W per cell}`).
    #[pyo3(signature = (power=None))]
    fn solve(&self, py: Python<'_>, power: Option<&Bound<'_, PyDict>>) -> PyResult<SolveResult> {
        let arg = self.power_arg(power)?;
        let (stack, grid, opts) = (&self.stack, self.grid(), self.solve_opts());
        let o = py
            .allow_threads(|| {
                with_backend!(self.opened.dev, |be| solve_on(be, stack, &grid, &opts, arg))
            })
            .or_py()?;
        SolveResult::new(py, stack, o)
    }

    /// A transient run of `dt`-second backward-Euler steps from ambient (or
    /// from the steady state of the first step's power, `init="steady"`)
    /// under a power trace, as `cuth transient --trace` runs it: step k
    /// takes the row in force at its mid-time. `trace` is a trace file
    /// (`.ptrace` or CSV) or a dict of block name → powers per row, rows
    /// `sample_interval` s apart (default `dt`). `steps` defaults to the
    /// trace's length. Returns `time` (s, after each step) and, per step,
    /// every block's `max`/`avg`/`min` (K) and every probe (K), as arrays.
    #[pyo3(signature = (trace, dt, *, steps=None, sample_interval=None, init="ambient"))]
    fn transient<'py>(
        &self,
        py: Python<'py>,
        trace: &Bound<'py, PyAny>,
        dt: f64,
        steps: Option<usize>,
        sample_interval: Option<f64>,
        init: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let trace = crate::transient::trace_arg(py, trace, dt, sample_interval)?;
        let steady_start = match init {
            "ambient" => false,
            "steady" => true,
            _ => {
                return Err(input_error(format!(
                    "init: `{init}` is neither ambient nor steady"
                )))
            }
        };
        let steps = crate::transient::steps_of(&trace, dt, steps)?;
        let (stack, opts) = (&self.stack, &self.opts);
        let rec = py
            .allow_threads(|| {
                with_backend!(self.opened.dev, |be| crate::transient::run(
                    be,
                    stack,
                    opts,
                    &trace,
                    dt,
                    steps,
                    steady_start
                ))
            })
            .or_py()?;
        rec.into_dict(py)
    }

    /// A stepping session on this stack (`cuth serve`'s): set powers, take
    /// steps, read temperatures, call by call. Starts at ambient, t = 0,
    /// under the stack's own power.
    fn session(&self, py: Python<'_>) -> PyResult<crate::session::PySession> {
        crate::session::PySession::open(py, &self.stack, &self.opts, self.opened.dev)
    }

    fn __repr__(&self) -> String {
        format!(
            "cuth.Stack({:?}, grid=({}, {}), {} layers, device={})",
            self.stack.source.display().to_string(),
            self.stack.nx,
            self.stack.ny,
            self.stack.layers.len(),
            self.opened.device.name()
        )
    }
}

/// The steady solve of `stack` under `arg` (set through a [`Simulation`],
/// which checks it as `cuth serve` does), by the steady driver of `cuth
/// solve`, which writes the summary.
fn solve_on<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    grid: &Grid,
    opts: &SteadyOptions,
    arg: Option<PowerArg>,
) -> anyhow::Result<SteadyOutcome> {
    let prepared = match arg {
        None => Prepared::default(),
        Some(arg) => {
            let mut sim = Simulation::open(be, stack.clone(), opts.clone())?;
            arg.apply(&mut sim)?;
            Prepared {
                power: Some(sim.layer_power()),
                ..Prepared::default()
            }
        }
    };
    let (o, _) = solve_steady_for(be, stack, grid, opts, &KeepField::Whole, prepared)?;
    Ok(o)
}

/// A steady solve's outcome: maps, blocks, probes, the summary.
#[pyclass(module = "cuth", frozen)]
pub struct SolveResult {
    /// Layer name → ndarray (ny, nx), K (mean over the layer's z cells;
    /// row y = 0 is the bottom edge, min y; NaN where the layer has no
    /// material, as `cuth solve`'s maps).
    #[pyo3(get)]
    layers: Py<PyDict>,
    /// Block name → {"min", "avg", "max": K, "power": W} (`layer.block`
    /// where a name is in several layers).
    #[pyo3(get)]
    blocks: Py<PyDict>,
    /// Probe name → K.
    #[pyo3(get)]
    probes: Py<PyDict>,
    /// `summary.json`'s content.
    #[pyo3(get)]
    summary: Py<PyAny>,
    /// Every cell, ndarray (nz, ny, nx), K (NaN where no material).
    #[pyo3(get)]
    temperature: Py<PyAny>,
}

impl SolveResult {
    fn new(py: Python<'_>, stack: &Stack, o: SteadyOutcome) -> PyResult<SolveResult> {
        let grid = &o.grid;
        let layers = PyDict::new(py);
        let mut rows = Vec::new();
        let mut field = o.temperature_k;
        for (l, layer) in stack.layers.iter().enumerate() {
            let mut map = grid.layer_map(&field, l);
            // Cells with no material are NaN, as in `cuth solve`'s maps
            // (and its block statistics, which skip them).
            let absent = cuth::assemble::absent_plane(grid, &o.power[l], layer.material);
            let plane = grid.plane();
            for (j, _) in absent.iter().enumerate().filter(|(_, a)| **a) {
                map[j] = f64::NAN;
                for z in grid.layer_z[l].clone() {
                    field[j + plane * z] = f64::NAN;
                }
            }
            for s in layer_block_stats(&layer.name, &map, &o.power[l].blocks, grid) {
                rows.push(BlockRow {
                    layer: s.layer,
                    block: s.block,
                    power_w: Some(s.power_w),
                    min_avg_max: s.temp.map(|t| (t.min_k, t.avg_k, t.max_k)),
                });
            }
            layers.set_item(&layer.name, map_array(py, map, grid.nx, grid.ny)?)?;
        }
        let probes = PyDict::new(py);
        for p in &o.summary.probes {
            probes.set_item(&p.name, p.t_k)?;
        }
        let json = serde_json::to_string(&o.summary).map_err(|e| input_error(e.to_string()))?;
        let summary = py.import("json")?.call_method1("loads", (json,))?;
        Ok(SolveResult {
            layers: layers.unbind(),
            blocks: block_dict(py, &rows)?.unbind(),
            probes: probes.unbind(),
            summary: summary.unbind(),
            temperature: field_array(py, field, grid)?.into_any().unbind(),
        })
    }
}

#[pymethods]
impl SolveResult {
    /// The hottest temperature, K.
    #[getter]
    fn max_k(&self, py: Python<'_>) -> PyResult<f64> {
        self.summary
            .bind(py)
            .get_item("hottest")?
            .get_item("t_k")?
            .extract()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let n = self.layers.bind(py).len();
        format!("cuth.SolveResult({n} layers)")
    }
}
