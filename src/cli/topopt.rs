//! `cuth topopt PROBLEM|FILE.toml`: resolve the problem (preset or TOML, mesh
//! and parameter overrides), pick the device, run the SIMP loop with a
//! progress bar on stderr, write the outputs and the summary.

use super::common::{parse_device, DeviceChoice};
use super::plan::Outputs;
use anyhow::Context;
use cuth::error::InputError as UsageError;
use cuth::linalg::{CgParams, PrecondKind, PrecondOptions, RefineMode, Stop};
use cuth::run::{Backends, DeviceProbe, OpenRequest};
use cuth::topopt::continuation::Schedule;
use cuth::topopt::mg::CoarseSolver;
use cuth::topopt::optimize::{self, Iterate, OptimizeOptions, Outcome, SolveOptions};
use cuth::topopt::output::{self, DensityField, HistoryRow};
use cuth::topopt::presets::{self, LoadKind, MeshRequest};
use cuth::topopt::problem::{Problem, E0, E_MIN};
use cuth::topopt::{custom, DesignBackend, OperatorKind};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct TopoptArgs {
    /// A preset (cantilever, torsion, mbb, bridge) or a problem file (.toml).
    pub problem: String,
    /// Elements along x (alone: y and z keep the problem's aspect ratio)
    /// [default: the problem's].
    #[arg(long)]
    pub nelx: Option<usize>,
    /// Elements along y [default: the problem's, or x's with its aspect
    /// ratio].
    #[arg(long)]
    pub nely: Option<usize>,
    /// Elements along z [default: the problem's, or x's with its aspect
    /// ratio].
    #[arg(long)]
    pub nelz: Option<usize>,
    /// Volume fraction in (0, 1) [default: the problem's].
    #[arg(long)]
    pub volfrac: Option<f64>,
    /// Filter radius in elements [default: the problem's, 1.5 for presets].
    #[arg(long)]
    pub rmin: Option<f64>,
    /// Final SIMP penalty (continuation starts at 1) [default: 3].
    #[arg(long)]
    pub penal: Option<f64>,
    /// Cap on design iterations (the run stops earlier on convergence).
    #[arg(long, default_value_t = 300)]
    pub iterations: usize,
    /// Cantilever load: on the free-end centre node, or a 0.1 × 0.1 patch
    /// there [default: patch].
    #[arg(long, value_enum)]
    pub load: Option<LoadKind>,
    /// Where to solve: auto, cpu, cuda or cuda:N (GPU ordinal N; cuda = cuda:0).
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    pub device: DeviceChoice,
    /// GPU operator schedule (the CPU runs its one node-centred operator).
    #[arg(long, value_enum, default_value_t = OperatorKind::Fused)]
    pub operator: OperatorKind,
    /// CG arithmetic: f64 throughout, or the f32 operator inside f64
    /// residual correction (`mixed`, alias `f32`).
    #[arg(long, value_enum, default_value_t = RefineMode::Mixed)]
    pub precision: RefineMode,
    /// Preconditioner of the elastic PCG: mg (a geometric multigrid cycle,
    /// `topopt::mg`; the default, 2-8x faster than Jacobi on an H200 and on
    /// the CPU, BENCHMARKS.md), Jacobi, or Jacobi-scaled Chebyshev (degree 6,
    /// λmax by Lanczos on each design's operator).
    #[arg(long, value_enum, default_value_t = PrecondKind::Multigrid)]
    pub precond: PrecondKind,
    /// Relative true residual ‖f − Ku‖/‖f‖ each solve must reach.
    #[arg(long, default_value_t = 1e-5)]
    pub rtol: f64,
    /// mg: relative residual of the coarsest level's inner Jacobi-PCG.
    #[arg(long, default_value_t = cuth::topopt::mg::COARSE_RTOL)]
    pub mg_coarse_rtol: f64,
    /// mg: the coarsest level solved by its dense inverse on a hierarchy
    /// coarsened to ≤ 300 DOFs (`dense`, the default: measured faster), by
    /// Jacobi-PCG (`cg`), or by the dense inverse of Galerkin PᵀKP
    /// (`galerkin`).
    #[arg(long, value_enum, default_value_t = CoarseSolver::Dense)]
    pub mg_coarse: CoarseSolver,
    /// mg: how many of the largest coarse levels are solved by two passes
    /// (a W-cycle there, a V-cycle below; 2, the default, measured fastest
    /// on an H200 at 0.5–50 M elements); 0 = V-cycle everywhere.
    #[arg(long, default_value_t = cuth::topopt::mg::W_LEVELS)]
    pub mg_w_levels: usize,
    /// CG iteration cap per solve; hitting it is reported, not fatal.
    #[arg(long, default_value_t = 1000)]
    pub cg_max_iter: usize,
    /// Output directory [default: out/topopt_<problem>].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// No progress bar, no table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print summary.json to stdout.
    #[arg(long)]
    pub json: bool,
}

/// Reads the problem and applies the command-line overrides.
pub fn resolve_problem(args: &TopoptArgs) -> anyhow::Result<Problem> {
    let mesh = MeshRequest {
        nelx: args.nelx,
        nely: args.nely,
        nelz: args.nelz,
    };
    let is_file = args.problem.ends_with(".toml");
    if args.load.is_some() && (is_file || args.problem != "cantilever") {
        return Err(UsageError("--load applies to the cantilever preset only".into()).into());
    }
    let (mut p, origin) = if is_file {
        let path = Path::new(&args.problem);
        (custom::load(path, &mesh)?, args.problem.clone())
    } else {
        let load = args.load.unwrap_or(LoadKind::Patch);
        let p = presets::build(&args.problem, &mesh, load)?;
        (p, format!("preset {}", args.problem))
    };
    let mut overridden = false;
    for (value, slot) in [
        (args.volfrac, &mut p.volfrac),
        (args.rmin, &mut p.rmin),
        (args.penal, &mut p.penal),
    ] {
        if let Some(v) = value {
            *slot = v;
            overridden = true;
        }
    }
    if overridden {
        p.validate(&format!("{origin} with command-line overrides"))?;
    }
    Ok(p)
}

fn check_args(args: &TopoptArgs) -> Result<(), UsageError> {
    if !(args.mg_coarse_rtol > 0.0 && args.mg_coarse_rtol < 1.0) {
        return Err(UsageError(format!(
            "--mg-coarse-rtol must be in (0, 1), got {}",
            args.mg_coarse_rtol
        )));
    }
    if args.iterations == 0 {
        return Err(UsageError("--iterations must be at least 1".into()));
    }
    if !(args.rtol > 0.0 && args.rtol < 1.0) {
        return Err(UsageError(format!(
            "--rtol must be in (0, 1), got {}",
            args.rtol
        )));
    }
    if args.cg_max_iter == 0 {
        return Err(UsageError("--cg-max-iter must be at least 1".into()));
    }
    Ok(())
}

pub fn run(args: &TopoptArgs) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let knobs = super::device::knobs()?;
    check_args(args)?;
    let problem = resolve_problem(args)?;
    let quiet = args.quiet;
    let out = Outputs::resolve(
        args.out
            .clone()
            .unwrap_or_else(|| Path::new("out").join(format!("topopt_{}", problem.name))),
        None,
    )?;
    let req = OpenRequest::core(args.device, &knobs.cuda);
    let opened = cuth::run::open(&req, DeviceProbe::start(args.device))?;
    if let (Some(why), false) = (&opened.fallback, quiet) {
        eprintln!("cuth: note: {why}; solving on the CPU");
    }
    let result = match &opened.backend {
        Backends::Cpu(be) => run_on(be, &problem, args),
        Backends::Cuda(be) => run_on(&**be, &problem, args),
    }?;
    let (outcome, report, solve_s) = result;
    let out_dir = out.dir;
    let summary = summary(&problem, args, &outcome, &report, solve_s, t0);
    let t_out = Instant::now();
    write_results(&out_dir, &problem, &outcome, &summary)
        .with_context(|| format!("writing results under {}", out_dir.display()))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else if !quiet {
        let b = &outcome.best;
        println!(
            "{}: {} elements, {} iterations ({:?}), {} CG iterations, {:.2} s",
            problem.name,
            problem.mesh.elements(),
            outcome.history.len(),
            outcome.stop,
            outcome.cg_iterations,
            solve_s
        );
        println!(
            "best iterate {}: compliance {:.6e}, volume {:.4}, grayness {:.4}{}",
            b.iteration,
            b.compliance,
            b.volume,
            b.grayness,
            if b.valid {
                ""
            } else {
                " (NOT volume-feasible)"
            }
        );
        println!(
            "results: {} (written in {:.2} s)",
            out_dir.display(),
            t_out.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

type RunResult = (Outcome, cuth::backend::DeviceReport, f64);

/// The optimization on one backend, with the progress bar.
fn run_on<B: DesignBackend>(
    be: &B,
    problem: &Problem,
    args: &TopoptArgs,
) -> anyhow::Result<RunResult> {
    be.check_elastic_capacity(&problem.mesh, args.precond.needs().extra_vectors)?;
    let opts = OptimizeOptions {
        max_iterations: args.iterations,
        operator: args.operator,
        cg: SolveOptions {
            cg: CgParams {
                stop: Stop::relative(args.rtol),
                max_iter: args.cg_max_iter,
                check_every: be.check_interval(),
                ..CgParams::default()
            },
            mode: args.precision,
            precond: args.precond,
            precond_opts: PrecondOptions::default(),
            mg_coarse_rtol: args.mg_coarse_rtol,
            mg_coarse: args.mg_coarse,
            mg_w_levels: args.mg_w_levels,
        },
        schedule: Schedule::standard(problem.penal, problem.rmin),
    };
    let bar = if args.quiet {
        indicatif::ProgressBar::hidden()
    } else {
        output::progress_bar(args.iterations)
    };
    let t = Instant::now();
    let mut warned = false;
    let outcome = optimize::optimize(be, problem, &opts, &mut |it: &Iterate| {
        bar.inc(1);
        bar.set_message(output::progress_message(&history_row(it)));
        if it.cg_failed && !warned && !args.quiet {
            bar.suspend(|| {
                eprintln!(
                    "cuth: warning: iteration {}: CG stopped at true residual {:.2e} \
                     (cap {} or stagnation); continuing (see summary.json cg.failed_solves)",
                    it.iteration, it.cg_rel_residual, args.cg_max_iter
                )
            });
            warned = true;
        }
    })?;
    bar.finish_and_clear();
    Ok((outcome, be.report(), t.elapsed().as_secs_f64()))
}

fn summary(
    p: &Problem,
    args: &TopoptArgs,
    o: &Outcome,
    device: &cuth::backend::DeviceReport,
    solve_s: f64,
    t0: Instant,
) -> serde_json::Value {
    let m = p.mesh;
    let last = o.history.last();
    json!({
        "problem": {
            "name": p.name,
            "description": p.description,
            "mesh": [m.nelx, m.nely, m.nelz],
            "elements": m.elements(),
            "dofs": m.dofs(),
            "element_size": p.h,
            "volfrac": p.volfrac,
            "rmin": p.rmin,
            "penal": p.penal,
            "nu": p.nu,
            "e0": E0,
            "emin": E_MIN,
            "load": args.load.map(|l| format!("{l:?}").to_lowercase())
                .or_else(|| (p.name == "cantilever").then(|| "patch".into())),
            "element_convention": "unit-cube elements, E0 = 1: compliance in mesh units \
                (top3d's KE is 2x this matrix, its compliances half of ours)",
        },
        "device": device,
        // The CPU has one (node-centred) operator; --operator picks the GPU's.
        "operator": if device.backend == "cpu" {
            json!("node-centred (cpu)")
        } else {
            json!(args.operator)
        },
        "cg": {
            "precision": args.precision,
            "precond": args.precond,
            "mg_coarse": (args.precond == PrecondKind::Multigrid).then_some(args.mg_coarse),
            "mg_w_levels": (args.precond == PrecondKind::Multigrid).then_some(args.mg_w_levels),
            // The levels mg builds (finest first), from the mesh alone.
            "mg_levels": (args.precond == PrecondKind::Multigrid).then(|| {
                cuth::topopt::mg::plan_for(p.mesh, args.mg_coarse)
                    .iter()
                    .map(|(m, size)| json!({"nelx": m.nelx, "nely": m.nely, "nelz": m.nelz,
                        "element_size": size}))
                    .collect::<Vec<_>>()
            }),
            "rtol": args.rtol,
            "max_iter_per_solve": args.cg_max_iter,
            "total_iterations": o.cg_iterations,
            "failed_solves": o.cg_failures,
            "outer_corrections": o.history.iter().map(|i| i.cg_outer).sum::<usize>(),
            "solves_switched_to_f64": o.history.iter().filter(|i| i.cg_switched).count(),
            "failed_at": o.history.iter().filter(|i| i.cg_failed)
                .map(|i| i.iteration).collect::<Vec<_>>(),
        },
        "schedule": Schedule::standard(p.penal, p.rmin),
        "oc_volume_evaluations": o.history.iter().map(|i| i.oc_evaluations).sum::<usize>(),
        "iterations": o.history.len(),
        "cg_iterations": o.cg_iterations,
        "wall_s": t0.elapsed().as_secs_f64(),
        "stop": o.stop,
        "final_change": last.map(|i| i.change),
        "best": {
            "iteration": o.best.iteration,
            "compliance": o.best.compliance,
            "volume": o.best.volume,
            "grayness": o.best.grayness,
            "valid": o.best.valid,
        },
        "timings_s": {
            "optimize": solve_s,
            "elastic_solves": o.history.iter().map(|i| i.solve_seconds).sum::<f64>(),
            "host_filter_oc": o.history.iter().map(|i| i.seconds - i.solve_seconds).sum::<f64>(),
            "total_before_output": t0.elapsed().as_secs_f64(),
        },
    })
}

/// Density VTK image, PNG views, STL, history.csv and summary.json of the
/// best iterate (staged: an error leaves nothing half-written).
fn write_results(
    dir: &Path,
    p: &Problem,
    o: &Outcome,
    summary: &serde_json::Value,
) -> anyhow::Result<Vec<PathBuf>> {
    let field = DensityField {
        nelx: p.mesh.nelx,
        nely: p.mesh.nely,
        nelz: p.mesh.nelz,
        h: p.h,
        rho: &o.best.rho,
    };
    let rows: Vec<HistoryRow> = o.history.iter().map(history_row).collect();
    output::write_outputs(dir, &field, &rows, summary)
}

fn history_row(i: &Iterate) -> HistoryRow {
    HistoryRow {
        iteration: i.iteration,
        compliance: i.compliance,
        volume: i.volume,
        grayness: i.grayness,
        cg_iterations: i.cg_iterations,
        seconds: i.seconds,
        beta: i.beta,
        penal: i.penal,
    }
}
