//! `cuth solve STACK`: steady state from a stack file to maps and a summary.

use super::common::RunArgs;
use super::plan::{Run, Typed};
use super::progress::SolveProgress;
use super::solve_run::{run_on, staged_download};
use anyhow::Context;
use cuth::error::InputError;
use cuth::linalg::PrecisionMode;
use cuth::output::npy::NpyDtype;
use cuth::output::{self, MapLayers, OutputOptions, Owned, Staged, SteadyView, Transaction};
use cuth::run::DeviceProbe;
use cuth::stack::Stack;
use cuth::thermal::steady::KeepField;
use cuth::thermal::steady::SteadyOutcome;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct SolveArgs {
    /// Stack file (TOML).
    pub stack: PathBuf,
    /// Output directory [default: out/<stack name>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Relative residual ‖b − Ax‖/‖b‖ to stop at [default: 1e-8].
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Precision of the Chebyshev preconditioner; the outer PCG, its residual
    /// and the stopping test stay f64 [default: mixed on a GPU, f64 on the CPU].
    #[arg(long, value_enum)]
    pub precision: Option<PrecisionMode>,
    /// Also write the 3D temperature field to FILE (K), for `cuth transient
    /// --init FILE` [default: not written].
    #[arg(long, value_name = "FILE")]
    pub save_state: Option<std::path::PathBuf>,
    /// Maps (PNG and CSV) only for these layers (names, comma-separated)
    /// [default: every layer].
    #[arg(
        long,
        value_name = "NAME,...",
        value_delimiter = ',',
        conflicts_with = "no_maps"
    )]
    pub layers: Option<Vec<String>>,
    /// Write no per-layer maps (blocks, probes, summary and --vtk/--npy still).
    #[arg(long)]
    pub no_maps: bool,
    /// Also write the 3D temperature field as field.npy (NumPy, shape
    /// (nz, ny, nx), display unit), f32 or f64 [default: f32].
    #[arg(long, value_enum, value_name = "DTYPE", num_args = 0..=1, default_missing_value = "f32")]
    pub npy: Option<NpyDtype>,
    /// Grid, device, solver and printing, shared with `solve`/`transient`.
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: &SolveArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    // auto's probe (driver, NVRTC, cuInit) runs while the stack loads.
    let probe = DeviceProbe::start(args.run.device);
    let plan = Run::resolve(
        &args.run,
        Typed {
            stack: &args.stack,
            rtol: args.rtol,
            precision: args.precision,
            out: args.out.clone(),
            default_out: default_out(&args.stack),
            save_state: args.save_state.clone(),
            memory_planned: true,
        },
    )?;
    let maps = map_layers(&plan.stack, args)?;
    let read_s = t0.elapsed().as_secs_f64();
    let out_opts = OutputOptions {
        unit: plan.unit,
        block_map: plan.block_map,
        vtk: plan.vtk,
        maps,
        npy: args.npy,
        hotspot: hotspot_outputs(&plan.stack, args.run.hotspot_outputs),
    };
    // Started by `mpirun`: one solve over the ranks, rank 0 writing.
    #[cfg(feature = "mpi")]
    let universe = super::ranks::launched()?;
    #[cfg(feature = "mpi")]
    let root = universe.as_ref().is_none_or(super::ranks::is_root);
    #[cfg(not(feature = "mpi"))]
    let root = true;
    // On a terminal, a solve longer than a second shows PCG's progress.
    let progress = SolveProgress::start(root && !plan.quiet && !plan.json);
    // The whole field stays on the host only for the outputs that write
    // it; otherwise the solve keeps the statistics and the maps.
    let peer = plan.stack.threedice.as_ref();
    let keep = if args.npy.is_some()
        || plan.vtk
        || plan.out.save_state.is_some()
        || peer.is_some_and(|p| p.needs_field())
    {
        KeepField::Whole
    } else {
        // HotSpot's files sample every layer.
        KeepField::Maps(
            (0..plan.stack.layers.len())
                .filter(|&l| {
                    out_opts.maps.includes(l)
                        || out_opts.hotspot.is_some()
                        || peer.is_some_and(|p| p.reads_layer(l))
                })
                .collect(),
        )
    };
    let req = plan.open_request(staged_download(&plan, &keep));
    #[cfg(feature = "mpi")]
    let solved = match &universe {
        Some(u) => match super::ranks::solve(u, &plan, &keep)? {
            Some(got) => got,
            None => return Ok(()),
        },
        None => run_on(&req, probe, &plan, &out_opts, &keep)?,
    };
    #[cfg(not(feature = "mpi"))]
    let solved = run_on(&req, probe, &plan, &out_opts, &keep)?;
    let (mut outcome, layer_maps) = solved;
    drop(progress);
    if plan.verbose {
        for n in cuth::backend::cuda::kernel_cache::take_notes() {
            eprintln!("cuth: note: {n}");
        }
    }
    let stack = &plan.stack;
    outcome.summary.timings_s.insert(0, ("read".into(), read_s));
    outcome.summary.started = Some(t0);

    let out_dir = &plan.out.dir;
    let unit = plan.unit;
    let view = SteadyView {
        stack,
        grid: &outcome.grid,
        temperature_k: &outcome.temperature_k,
        layer_maps: &layer_maps.maps,
        block_stats: &layer_maps.blocks,
        power: &outcome.power,
        summary: &outcome.summary,
        coolant_cells: outcome.coolant.as_ref().map_or(&[][..], |c| &c.cells),
    };
    // One transaction: the maps and the state file land together or not at
    // all; files are streamed into its staging layer by layer.
    let mut txn = Transaction::begin(out_dir, Owned::Thermal)
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    if let Some(path) = &plan.out.save_state {
        let bytes =
            cuth::thermal::transient::state::encode_state(&outcome.grid, &outcome.temperature_k);
        txn.stage_external(path, &bytes)
            .with_context(|| format!("writing the state file {}", path.display()))?;
    }
    let summary = output::stream_steady(&mut Staged::new(&txn, Path::new("")), &view, &out_opts)
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    if let Some(field) = &outcome.coolant {
        for f in output::coolant::coolant_files(stack, &outcome.grid, field, unit)? {
            txn.write(Path::new(&f.name), &f.bytes)
                .with_context(|| format!("writing results under {}", out_dir.display()))?;
        }
        for f in output::threedice::tcoolant_files(stack, &[(0.0, field.outlets.clone())]) {
            txn.write(Path::new(&f.name), &f.bytes)
                .with_context(|| format!("writing results under {}", out_dir.display()))?;
        }
    }
    for f in output::threedice::steady_files(&view) {
        txn.write(Path::new(&f.name), &f.bytes)
            .with_context(|| format!("writing results under {}", out_dir.display()))?;
    }
    txn.commit()
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    let outcome = SteadyOutcome { summary, ..outcome };
    if plan.json {
        println!("{}", serde_json::to_string_pretty(&outcome.summary)?);
    } else if !plan.quiet {
        output::print_table(&outcome.summary, unit, plan.verbose);
        println!("results: {}", out_dir.display());
    }
    Ok(())
}

/// `--layers` / `--no-maps` as layer indices; an unknown name is bad input.
fn map_layers(stack: &Stack, args: &SolveArgs) -> Result<MapLayers, InputError> {
    if args.no_maps {
        return Ok(MapLayers::None);
    }
    let Some(names) = &args.layers else {
        return Ok(MapLayers::All);
    };
    let mut idx = Vec::new();
    for name in names {
        let name = name.trim();
        match stack.layers.iter().position(|l| l.name == name) {
            Some(i) => idx.push(i),
            None => {
                let known: Vec<&str> = stack.layers.iter().map(|l| l.name.as_str()).collect();
                return Err(InputError(format!(
                    "--layers: the stack has no layer `{name}` (layers: {})",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(MapLayers::Only(idx))
}

fn default_out(stack: &Path) -> PathBuf {
    let stem = stack.file_stem().map(|s| s.to_string_lossy().into_owned());
    Path::new("out").join(stem.unwrap_or_else(|| "cuth".into()))
}

/// HotSpot's outputs when asked for (`--hotspot-outputs`) or set by the
/// stack (`[output] hotspot`), on the stack's HotSpot grid or HotSpot's
/// default 64 × 64.
pub fn hotspot_outputs(
    stack: &cuth::stack::Stack,
    flag: bool,
) -> Option<cuth::stack::HotspotOutputs> {
    (flag || stack.hotspot.is_some()).then(|| stack.hotspot.unwrap_or_default())
}
