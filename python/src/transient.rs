//! `Stack.transient`: a trace's rows stepped through a [`Simulation`] (the
//! same block drive and stepper as `cuth transient`'s), recording every
//! block's and probe's temperature after each step.

use crate::errors::input_error;
use crate::readings::{block_keys, BlockRow};
use cuth::formats::trace::{read_time_trace, RowTimes, TimeTrace};
use cuth::simulation::Simulation;
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::SteadyOptions;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::PathBuf;

/// `trace` as a [`TimeTrace`]: a file's, or a dict's columns with rows
/// `sample_interval` (default `dt`) seconds apart.
pub fn trace_arg(
    py: Python<'_>,
    trace: &Bound<'_, PyAny>,
    dt: f64,
    sample_interval: Option<f64>,
) -> PyResult<TimeTrace> {
    if !(dt.is_finite() && dt > 0.0) {
        return Err(input_error(format!(
            "dt must be a positive number of s, got {dt}"
        )));
    }
    if let Some(s) = sample_interval {
        if !(s.is_finite() && s > 0.0) {
            return Err(input_error(format!(
                "sample_interval must be a positive number of s, got {s}"
            )));
        }
    }
    let Ok(d) = trace.downcast::<PyDict>() else {
        let path: PathBuf = trace.extract().map_err(|_| {
            input_error("trace: expected a trace file's path or a dict of block → powers")
        })?;
        return py
            .allow_threads(|| read_time_trace(&path, sample_interval, dt))
            .map_err(|e| crate::errors::to_py(e.into()));
    };
    let mut names = Vec::new();
    let mut columns: Vec<Vec<f64>> = Vec::new();
    for (k, v) in d.iter() {
        let name: String = k
            .extract()
            .map_err(|_| input_error(format!("trace: key {k} is not a block name")))?;
        let col: PyReadonlyArray1<f64> = match v.extract() {
            Ok(a) => a,
            Err(_) => py
                .import("numpy")?
                .call_method1("asarray", (&v, "float64"))?
                .extract()
                .map_err(|_| {
                    input_error(format!(
                        "trace: `{name}`: expected a 1-D array of powers (W), one per row"
                    ))
                })?,
        };
        columns.push(col.as_array().iter().copied().collect());
        names.push(name);
    }
    let rows = columns.first().map_or(0, Vec::len);
    if rows == 0 {
        return Err(input_error("trace: has no rows"));
    }
    if let Some((n, c)) = names.iter().zip(&columns).find(|(_, c)| c.len() != rows) {
        return Err(input_error(format!(
            "trace: `{n}` has {} rows, `{}` has {rows}",
            c.len(),
            names[0]
        )));
    }
    Ok(TimeTrace {
        file: PathBuf::from("<trace dict>"),
        names,
        rows: (0..rows)
            .map(|r| columns.iter().map(|c| c[r]).collect())
            .collect(),
        times: RowTimes::Interval(sample_interval.unwrap_or(dt)),
    })
}

/// The steps asked for, or as many as cover the trace's rows.
pub fn steps_of(trace: &TimeTrace, dt: f64, steps: Option<usize>) -> PyResult<usize> {
    let n = match (steps, &trace.times) {
        (Some(n), _) => n,
        (None, RowTimes::Interval(s)) => (trace.rows.len() as f64 * s / dt).round() as usize,
        (None, RowTimes::Listed(_)) => {
            return Err(input_error(
                "steps: a trace with a time column needs `steps`",
            ));
        }
    };
    match n {
        0 => Err(input_error("steps must be at least 1")),
        n => Ok(n),
    }
}

/// What a run records, per step.
pub struct Record {
    time_s: Vec<f64>,
    /// Per block (in the session's order), per step: min, avg, max.
    blocks: Vec<BlockRow>,
    block_t: Vec<Vec<[f64; 3]>>,
    probes: Vec<String>,
    probe_t: Vec<Vec<f64>>,
    hottest_k: Vec<f64>,
}

/// The run: the field starts at ambient (or at the steady state of the
/// first step's power), then `steps` steps of `dt`, step k under the row in
/// force at `(k + ½) dt`, as `cuth transient` picks it.
pub fn run<B: ThermalBackend + 'static>(
    be: &B,
    stack: &Stack,
    opts: &SteadyOptions,
    trace: &TimeTrace,
    dt: f64,
    steps: usize,
    steady_start: bool,
) -> anyhow::Result<Record> {
    let mut sim = Simulation::open(be, stack.clone(), opts.clone())?;
    let set_row = |sim: &mut Simulation<'_, B>, r: usize| {
        let powers: Vec<(&str, f64)> = (trace.names.iter())
            .zip(&trace.rows[r])
            .map(|(n, w)| (n.as_str(), *w))
            .collect();
        sim.set_block_powers(&powers)
    };
    let mut row = trace.row_at(0.5 * dt);
    set_row(&mut sim, row)?;
    if steady_start {
        sim.solve_steady()?;
    }
    let probes: Vec<String> = sim.info().probes;
    let mut rec = Record {
        time_s: Vec::with_capacity(steps),
        blocks: Vec::new(),
        block_t: Vec::new(),
        probes,
        probe_t: Vec::new(),
        hottest_k: Vec::with_capacity(steps),
    };
    for k in 0..steps {
        let r = trace.row_at((k as f64 + 0.5) * dt);
        if r != row {
            set_row(&mut sim, r)?;
            row = r;
        }
        sim.step(dt)?;
        rec.time_s.push(sim.time_s());
        let blocks = sim.blocks()?;
        if k == 0 {
            rec.blocks = (blocks.iter())
                .map(|b| BlockRow {
                    layer: b.layer.clone(),
                    block: b.block.clone(),
                    power_w: None,
                    min_avg_max: None,
                })
                .collect();
            rec.block_t = vec![Vec::with_capacity(steps); blocks.len()];
            rec.probe_t = vec![Vec::with_capacity(steps); rec.probes.len()];
        }
        for (series, b) in rec.block_t.iter_mut().zip(&blocks) {
            let nan = f64::NAN;
            series.push([
                b.min_k.unwrap_or(nan),
                b.avg_k.unwrap_or(nan),
                b.max_k.unwrap_or(nan),
            ]);
        }
        for (series, p) in rec.probe_t.iter_mut().zip(sim.probes()?) {
            series.push(p.t_k);
        }
        rec.hottest_k.push(sim.hottest()?.t_k);
    }
    Ok(rec)
}

impl Record {
    /// `{"time": s, "blocks": {key: {"min", "avg", "max"}}, "probes":
    /// {name: K}, "hottest": K}`, each an array over the steps.
    pub fn into_dict(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        let out = PyDict::new(py);
        out.set_item("time", self.time_s.into_pyarray(py))?;
        let blocks = PyDict::new(py);
        for (key, series) in block_keys(&self.blocks).into_iter().zip(self.block_t) {
            let d = PyDict::new(py);
            for (i, name) in ["min", "avg", "max"].into_iter().enumerate() {
                let v: Vec<f64> = series.iter().map(|t| t[i]).collect();
                d.set_item(name, v.into_pyarray(py))?;
            }
            blocks.set_item(key, d)?;
        }
        out.set_item("blocks", blocks)?;
        let probes = PyDict::new(py);
        for (name, series) in self.probes.into_iter().zip(self.probe_t) {
            probes.set_item(name, series.into_pyarray(py))?;
        }
        out.set_item("probes", probes)?;
        out.set_item("hottest", self.hottest_k.into_pyarray(py))?;
        Ok(out)
    }
}
