//! `cuth.sweep`: many power cases on one stack, solved as `cuth sweep`
//! solves them (the matrix assembled and the preconditioner built once,
//! cases batched through the batched mg-PCG on a GPU), returning one
//! layer's temperature map per case.

use crate::device::with_backend;
use crate::errors::{input_error, OrPy, SolverError};
use crate::power::PowerArg;
use crate::stack::PyStack;
use cuth::backend::batch::BatchOps;
use cuth::grid::Grid;
use cuth::power::drive::{drivable, BlockDrive};
use cuth::run::Device;
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::sweep::{run_worker, CaseResult, SweepBase, SweepCase, SweepJob};
use cuth::thermal::sweep_batch::{batches, BatchSweeper, GPU_BATCH};
use numpy::ndarray::Array3;
use numpy::{IntoPyArray, PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// `name`'s index among the stack's layers.
fn layer_index(stack: &Stack, name: &str, what: &str) -> PyResult<usize> {
    (stack.layers.iter().position(|l| l.name == name)).ok_or_else(|| {
        let known: Vec<&str> = stack.layers.iter().map(|l| l.name.as_str()).collect();
        input_error(format!(
            "{what}: the stack has no layer `{name}` (layers: {})",
            known.join(", ")
        ))
    })
}

/// The first layer with a power source: the layer a sweep's maps power
/// unless told (`cuth sweep`'s `--layer` default).
fn first_powered(stack: &Stack) -> PyResult<usize> {
    (stack
        .layers
        .iter()
        .position(|l| l.power.is_some() || l.regions.iter().any(|r| r.power.is_some())))
    .ok_or_else(|| input_error("layer: the stack has no powered layer; name one"))
}

/// A case given as block powers and layer maps: the blocks become the maps
/// of the layers they drive, through the same [`BlockDrive`] as a session.
fn dict_case(stack: &Stack, base: &SweepBase, arg: PowerArg, i: usize) -> PyResult<SweepCase> {
    let mut case = SweepCase {
        name: format!("case{i}"),
        ..SweepCase::default()
    };
    if !arg.blocks.is_empty() {
        for (name, w) in &arg.blocks {
            if !(w.is_finite() && *w >= 0.0) {
                return Err(input_error(format!(
                    "powers[{i}]: block `{name}`: power must be a finite number of W, at least 0, got {w}"
                )));
            }
            let known = (0..stack.layers.len()).any(|l| {
                drivable(stack, l) && base.power[l].blocks.iter().any(|b| &b.name == name)
            });
            if !known {
                return Err(input_error(format!(
                    "powers[{i}]: block `{name}`: no layer whose power is its blocks has a block of that name"
                )));
            }
        }
        let names: Vec<String> = arg.blocks.iter().map(|(n, _)| n.clone()).collect();
        let values: Vec<f64> = arg.blocks.iter().map(|(_, w)| *w).collect();
        let drive = BlockDrive::new(stack, &base.grid, &base.power, &names);
        let mut maps: Vec<Vec<f64>> = base.power.iter().map(|p| p.map_w.clone()).collect();
        drive.apply(&mut maps, &values);
        for (l, map) in maps.into_iter().enumerate() {
            if map != base.power[l].map_w {
                case.maps.push((l, map));
            }
        }
    }
    for (layer, map) in arg.maps {
        let l = layer_index(stack, &layer, &format!("powers[{i}]"))?;
        case.maps.retain(|(k, _)| *k != l);
        case.maps.push((l, map));
    }
    Ok(case)
}

/// A case's maps hold finite powers, at least 0 W, on cells with material
/// (what the sweep would otherwise report as the case's failure).
fn check_maps(stack: &Stack, base: &SweepBase, case: &SweepCase) -> Result<(), String> {
    for (l, map) in &case.maps {
        let layer = &stack.layers[*l];
        if let Some((j, w)) = (map.iter().enumerate()).find(|(_, w)| !(w.is_finite() && **w >= 0.0))
        {
            return Err(format!(
                "layer `{}` map, cell {j}: power must be a finite number of W, at least 0, got {w}",
                layer.name
            ));
        }
        let absent =
            cuth::assemble::powered_absent(&base.grid, &base.power[*l], layer.material, map);
        if let Some(j) = absent {
            return Err(format!(
                "layer `{}` map: cell {j} (x {}, y {}) has {} W but no material (outside the \
                 layer's outline or in a `none` region): its power would be lost",
                layer.name,
                j % base.grid.nx,
                j / base.grid.nx,
                map[j]
            ));
        }
    }
    Ok(())
}

/// Solves `cases` on `be` as `cuth sweep` does, `k` at a time, keeping
/// layer `out`'s map of each. A batched run reuses the worker left in
/// `kept` by an earlier call when its batches are large enough, and leaves
/// its own there.
#[allow(clippy::too_many_arguments)]
fn solve_all<B: ThermalBackend + BatchOps + 'static>(
    be: &B,
    stack: &Stack,
    base: &SweepBase,
    opts: &SteadyOptions,
    cases: &[SweepCase],
    k: usize,
    out: usize,
    kept: &Mutex<Option<Box<dyn Any + Send>>>,
) -> anyhow::Result<Vec<Result<Vec<f64>, String>>>
where
    BatchSweeper<B>: Send,
{
    let job = SweepJob {
        stack,
        base,
        opts,
        cases,
        keep_fields: true,
    };
    let results = Mutex::new(vec![Err(String::from("not solved")); cases.len()]);
    let cursor = AtomicUsize::new(0);
    let next = || Some(cursor.fetch_add(1, Ordering::Relaxed)).filter(|&i| i < cases.len());
    let grid: &Grid = &base.grid;
    let done = |r: CaseResult| {
        let map = r.outcome.map(|s| match s.field {
            Some((t, _)) => grid.layer_map(&t, out),
            None => Vec::new(),
        });
        results.lock().unwrap_or_else(|p| p.into_inner())[r.index] = map;
    };
    if !batches(k, opts) {
        run_worker(be, job, &next, &done)?;
    } else {
        let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
        let reuse = (kept.take())
            .and_then(|w| w.downcast::<BatchSweeper<B>>().ok())
            .filter(|w| w.batch_size() >= k);
        let mut worker = match reuse {
            Some(w) => w,
            None => Box::new(BatchSweeper::new(be, base, opts, k)?),
        };
        worker.run(be, job, &next, &done)?;
        *kept = Some(worker);
    }
    Ok(results.into_inner().unwrap_or_else(|p| p.into_inner()))
}

/// Solves many power cases on `stack`, as `cuth sweep` does, and returns
/// layer `out_layer`'s map of each, ndarray (cases, ny, nx), K.
///
/// `powers` is an ndarray (cases, ny, nx) of W per cell for layer `layer`
/// (default: the first powered layer), or a list of dicts as `solve`
/// takes them. `out_layer` defaults to `layer`. `batch`: cases solved
/// together (default 32 on a GPU, 1 on the CPU, as `cuth sweep`).
#[pyfunction]
#[pyo3(signature = (stack, powers, *, layer=None, out_layer=None, batch=None))]
pub fn sweep<'py>(
    py: Python<'py>,
    stack: &PyStack,
    powers: &Bound<'py, PyAny>,
    layer: Option<&str>,
    out_layer: Option<&str>,
    batch: Option<usize>,
) -> PyResult<Bound<'py, PyAny>> {
    let s = &stack.stack;
    let (nx, ny) = (s.nx, s.ny);
    let l = match layer {
        Some(name) => layer_index(s, name, "layer")?,
        None => first_powered(s)?,
    };
    let out = match out_layer {
        Some(name) => layer_index(s, name, "out_layer")?,
        None => l,
    };
    let base = match stack.sweep_base.get() {
        Some(b) => b,
        None => {
            let b = py
                .allow_threads(|| SweepBase::on_grid(s, stack.grid()))
                .or_py()?;
            stack.sweep_base.get_or_init(|| b)
        }
    };
    let cases: Vec<SweepCase> = if let Ok(list) = powers.downcast::<pyo3::types::PyList>() {
        (list.iter().enumerate())
            .map(|(i, item)| {
                let d = item.downcast::<PyDict>().map_err(|_| {
                    input_error(format!(
                        "powers[{i}]: expected a dict of block powers and layer maps"
                    ))
                })?;
                dict_case(s, base, PowerArg::from_dict(d, nx, ny)?, i)
            })
            .collect::<PyResult<_>>()?
    } else {
        let a: PyReadonlyArray3<f64> = match powers.extract() {
            Ok(a) => a,
            Err(_) => py
                .import("numpy")?
                .call_method1("asarray", (powers, "float64"))?
                .extract()
                .map_err(|_| {
                    input_error("powers: expected an ndarray (cases, ny, nx) or a list of dicts")
                })?,
        };
        let shape = a.shape();
        if shape[1..] != [ny, nx] {
            return Err(input_error(format!(
                "powers: has shape {shape:?}, expected (cases, ny, nx) = (cases, {ny}, {nx})"
            )));
        }
        (a.as_array().outer_iter().enumerate())
            .map(|(i, m)| SweepCase {
                name: format!("case{i}"),
                maps: vec![(l, m.iter().copied().collect())],
                ..SweepCase::default()
            })
            .collect()
    };
    for (i, case) in cases.iter().enumerate() {
        check_maps(s, base, case).map_err(|e| input_error(format!("powers[{i}]: {e}")))?;
    }
    let opts = stack.solve_opts();
    let k = match (batch, stack.opened.device) {
        (Some(0), _) => return Err(input_error("batch must be at least 1")),
        (Some(k), _) => k,
        (None, Device::Cuda(_)) => GPU_BATCH,
        (None, Device::Cpu) => 1,
    }
    .min(cases.len().max(1));
    let k = if batches(k, &opts) { k } else { 1 };
    let results = py
        .allow_threads(|| {
            with_backend!(stack.opened.dev, |be| solve_all(
                be,
                s,
                base,
                &opts,
                &cases,
                k,
                out,
                &stack.sweep_worker
            ))
        })
        .or_py()?;
    let mut flat = Vec::with_capacity(cases.len() * nx * ny);
    for (i, r) in results.into_iter().enumerate() {
        match r {
            Ok(map) => flat.extend(map),
            Err(why) => return Err(SolverError::new_err(format!("powers[{i}]: {why}"))),
        }
    }
    let a = Array3::from_shape_vec((cases.len(), ny, nx), flat)
        .map_err(|e| input_error(e.to_string()))?;
    Ok(a.into_pyarray(py).into_any())
}
