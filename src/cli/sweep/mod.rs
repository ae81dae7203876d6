//! `cuth sweep STACK CASES`: many power maps on one stack. The
//! stack is read and assembled once; each worker uploads the matrix and
//! builds the preconditioner once and solves its cases back to back
//! (`thermal::sweep`). On the CPU `--jobs` workers run cases in parallel,
//! each solve on `threads / jobs` threads. `--shard I/N` keeps every N-th
//! case from I; `cuth sweep --merge A.csv B.csv --out DIR` joins shard tables.
//! `--batch K` makes each worker solve K cases together
//! (`thermal::sweep_batch`).

mod cases;
mod csv_manifest;
mod layer_name;
mod report;
mod table;

use super::common::RunArgs;
use super::plan::{Run, Typed};
use anyhow::Context;
use cuth::backend::batch::BatchOps;
use cuth::backend::cpu::CpuBackend;
use cuth::error::InputError;
use cuth::output::{Owned, TempUnit, Transaction};
use cuth::run::{Backends, Device, DeviceProbe, OpenRequest, Opened};
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::SteadyOptions;
use cuth::thermal::sweep::{CaseResult, SweepBase, SweepCase, SweepJob};
use cuth::thermal::sweep_batch::{
    batches, check_workers, run_worker_batched, WorkerTimes, GPU_BATCH,
};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

#[derive(Debug, clap::Args)]
pub struct SweepArgs {
    /// Stack file (TOML).
    #[arg(required_unless_present = "merge")]
    pub stack: Option<PathBuf>,
    /// A directory of power rasters (one case per .csv/.png), or a TOML or CSV manifest.
    #[arg(required_unless_present = "merge")]
    pub cases: Option<PathBuf>,
    /// Join these shard tables (sweep.csv of `--shard` runs) into --out
    /// [default: none: solve the cases].
    #[arg(long, num_args = 1.., value_name = "CSV", conflicts_with_all = ["stack", "cases"])]
    pub merge: Vec<PathBuf>,
    /// Output directory [default: out/<stack name>-sweep, out/sweep-merged].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Relative residual to stop each case at [default: 1e-8, as `solve`].
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Solve only cases I, I+N, I+2N, ... (0-based) [default: 0/1, every
    /// case].
    #[arg(long, value_parser = cases::parse_shard, value_name = "I/N")]
    pub shard: Option<(usize, usize)>,
    /// Also write each case's per-layer temperature maps (CSV, K) under cases/.
    #[arg(long)]
    pub maps: bool,
    /// The layer a directory's rasters power [default: the first powered layer].
    #[arg(long, value_name = "NAME")]
    pub layer: Option<String>,
    /// Cases solved at once on the CPU, each solve on threads/jobs threads
    /// [default: 1; on 2 cores 1 and 2 measured equal within noise, BENCHMARKS.md].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Cases solved together by one worker: k right-hand sides through the
    /// batched mg-PCG kernels (`--precond mg` only; 1 = one at a time)
    /// [default: 32 on a GPU, 1 on the CPU, as measured in BENCHMARKS.md].
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u64).range(1..=65535))]
    pub batch: Option<u64>,
    #[command(flatten)]
    pub run: RunArgs,
}

pub fn run(args: &SweepArgs) -> anyhow::Result<()> {
    if !args.merge.is_empty() {
        return merge(args);
    }
    let t0 = Instant::now();
    let (stack_path, cases_path) = match (&args.stack, &args.cases) {
        (Some(s), Some(c)) => (s, c),
        _ => return Err(InputError("sweep needs STACK and CASES, or --merge".into()).into()),
    };
    let probe = DeviceProbe::start(args.run.device);
    let plan = Run::resolve(
        &args.run,
        Typed {
            stack: stack_path,
            rtol: args.rtol,
            precision: None,
            out: args.out.clone(),
            default_out: default_out(stack_path),
            save_state: None,
            memory_planned: false,
        },
    )?;
    let stack = &plan.stack;
    let all = cases::load_cases(cases_path, stack, args.layer.as_deref())?;
    let (shard_i, shard_n) = args.shard.unwrap_or((0, 1));
    let mine: Vec<usize> = (shard_i..all.len()).step_by(shard_n).collect();
    let base = SweepBase::on_grid(stack, plan.grid.clone())?;
    let setup_s = t0.elapsed().as_secs_f64();

    let txn = Mutex::new(
        Transaction::begin(&plan.out.dir, Owned::Sweep)
            .with_context(|| format!("writing results under {}", plan.out.dir.display()))?,
    );
    let bar = progress(mine.len(), plan.quiet || plan.json);
    let results = Mutex::new(Vec::with_capacity(mine.len()));
    let map_err = Mutex::new(None::<anyhow::Error>);
    let cursor = AtomicUsize::new(0);
    let next = || mine.get(cursor.fetch_add(1, Ordering::Relaxed)).copied();
    let done = |mut r: CaseResult| {
        if args.maps {
            if let Err(e) = stage_maps(&txn.lock().unwrap(), stack, &base, &mut r) {
                map_err.lock().unwrap().get_or_insert(e);
            }
        }
        bar.inc(1);
        results.lock().unwrap().push(r);
    };
    let t_solve = Instant::now();
    let opened = cuth::run::open(&OpenRequest::core(plan.device, &plan.knobs.cuda), probe)?;
    if let (Some(why), false) = (&opened.fallback, plan.quiet) {
        eprintln!("cuth: note: {why}; solving on the CPU");
    }
    let opts = plan.solver_on(opened.device);
    let jobs = args.jobs.unwrap_or(1).clamp(1, mine.len().max(1));
    let batch = match (args.batch, opened.device) {
        (Some(k), _) => k as usize,
        (None, Device::Cuda(_)) => GPU_BATCH,
        (None, Device::Cpu) => 1,
    }
    .min(mine.len().max(1));
    let batch = if batches(batch, &opts) { batch } else { 1 };
    let workers = Workers {
        plan: &plan,
        opened: &opened,
        opts: &opts,
        base: &base,
        cases: &all,
        maps: args.maps,
        batch,
        next: &next,
        done: &done,
    };
    let (device, times) = workers.run(jobs)?;
    bar.finish_and_clear();
    let solve_s = t_solve.elapsed().as_secs_f64();
    if let Some(e) = map_err.into_inner().unwrap() {
        return Err(e);
    }
    let results = results.into_inner().unwrap();
    let table = table::from_results(stack, &results);
    let mut summary = table::summary_counts(&table);
    let extra = serde_json::json!({
        "cuth_version": env!("CARGO_PKG_VERSION"),
        "stack": stack.source.display().to_string(),
        "cases_source": cases_path.display().to_string(),
        "cases_total": all.len(),
        "shard": [shard_i, shard_n],
        "grid": {"nx": base.grid.nx, "ny": base.grid.ny, "nz": base.grid.nz},
        "device": device,
        "batch": batch,
        "batch_times": times,
        "precond": plan.solver.precond.name(),
        "rtol": plan.solver.rtol,
        "setup_s": setup_s,
        "solve_s": solve_s,
        "cases_per_s": mine.len() as f64 / solve_s.max(1e-9),
        "rasters_decoded": base.rasters.decodes(),
    });
    if let (Some(s), Some(e)) = (summary.as_object_mut(), extra.as_object()) {
        s.extend(e.clone());
    }
    let txn = txn.into_inner().unwrap();
    table::stage(&txn, &table, &summary)?;
    txn.commit()
        .with_context(|| format!("writing results under {}", plan.out.dir.display()))?;
    let out = Out {
        dir: &plan.out.dir,
        quiet: plan.quiet,
        json: plan.json,
        unit: plan.unit,
        verbose: plan.verbose,
    };
    print(&table, &summary, &out)?;
    finish(&table)
}

/// What every worker of a sweep shares: the cases, how to take the next
/// one and where to hand its result.
struct Workers<'a> {
    plan: &'a Run,
    opened: &'a Opened,
    /// The solver options on the device that opened.
    opts: &'a SteadyOptions,
    base: &'a SweepBase,
    cases: &'a [SweepCase],
    maps: bool,
    batch: usize,
    next: &'a (dyn Fn() -> Option<usize> + Sync),
    done: &'a (dyn Fn(CaseResult) + Sync),
}

impl Workers<'_> {
    /// Runs the workers on the plan's device, `jobs` of them on the CPU
    /// (each on its share of the threads) or one on a GPU; returns the
    /// device's description for the summary and the summed batch times.
    fn run(&self, jobs: usize) -> anyhow::Result<(String, WorkerTimes)> {
        let times = Mutex::new(WorkerTimes::default());
        let device = match &self.opened.backend {
            Backends::Cpu(_) => {
                check_workers(&CpuBackend::new(), self.base.grid.len(), jobs, self.batch)?;
                let threads = rayon::current_num_threads();
                let inner = (threads / jobs).max(1);
                std::thread::scope(|s| -> anyhow::Result<()> {
                    let handles: Vec<_> = (0..jobs)
                        .map(|_| {
                            s.spawn(|| -> anyhow::Result<()> {
                                let pool =
                                    rayon::ThreadPoolBuilder::new().num_threads(inner).build()?;
                                pool.install(|| {
                                    let t = self.worker(&CpuBackend::new())?;
                                    *times.lock().unwrap() += t;
                                    anyhow::Ok(())
                                })
                            })
                        })
                        .collect();
                    for h in handles {
                        h.join()
                            .map_err(|_| anyhow::anyhow!("a sweep worker panicked"))??;
                    }
                    Ok(())
                })?;
                format!("cpu ({jobs} job(s) x {inner} thread(s))")
            }
            Backends::Cuda(be) => {
                *times.lock().unwrap() += self.worker(&**be)?;
                self.opened.device.name()
            }
        };
        Ok((device, times.into_inner().unwrap()))
    }

    fn worker<B: ThermalBackend + BatchOps + 'static>(
        &self,
        be: &B,
    ) -> anyhow::Result<WorkerTimes> {
        let job = SweepJob {
            stack: &self.plan.stack,
            base: self.base,
            opts: self.opts,
            cases: self.cases,
            keep_fields: self.maps,
        };
        Ok(run_worker_batched(
            be, job, self.batch, self.next, self.done,
        )?)
    }
}

/// `cases/<index>_<name>/NN_<layer>.csv` (K), then drops the field.
fn stage_maps(
    txn: &Transaction,
    stack: &cuth::stack::Stack,
    base: &SweepBase,
    r: &mut CaseResult,
) -> anyhow::Result<()> {
    let Ok(stats) = &mut r.outcome else {
        return Ok(());
    };
    let Some((t, _)) = stats.field.take() else {
        return Ok(());
    };
    let g = &base.grid;
    let dir = format!("cases/{:05}_{}", r.index, sanitize(&r.name));
    for (l, layer) in stack.layers.iter().enumerate() {
        let map = g.layer_map(&t, l);
        let name = format!("{dir}/{l:02}_{}.csv", sanitize(&layer.name));
        // Kelvin, as sweep.csv: these are for scripts (docs/src/outputs.md, "Units").
        let text = cuth::output::csv::unit_line(TempUnit::Kelvin)
            + &cuth::output::csv::layer_csv(&map, g.nx, g.ny);
        txn.write(Path::new(&name), text.as_bytes())?;
    }
    Ok(())
}

/// A name safe as a file name: letters, digits, `-`, `_`, `.`; others `_`.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn merge(args: &SweepArgs) -> anyhow::Result<()> {
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join("sweep-merged"));
    cuth::output::transaction::check_dir_target(&dir)
        .map_err(|e| InputError(format!("--out: {e}")))?;
    let table = table::merge(&args.merge)?;
    let mut summary = table::summary_counts(&table);
    if let Some(s) = summary.as_object_mut() {
        let files: Vec<String> = args.merge.iter().map(|p| p.display().to_string()).collect();
        s.insert("merged_from".into(), files.into());
    }
    let txn = Transaction::begin(&dir, Owned::Sweep)?;
    table::stage(&txn, &table, &summary)?;
    txn.commit()
        .with_context(|| format!("writing results under {}", dir.display()))?;
    let unit = if args.run.kelvin {
        TempUnit::Kelvin
    } else {
        TempUnit::Celsius
    };
    let out = Out {
        dir: &dir,
        quiet: args.run.quiet,
        json: args.run.json,
        unit,
        verbose: args.run.verbose,
    };
    print(&table, &summary, &out)?;
    finish(&table)
}

/// Where and how a sweep reports.
struct Out<'a> {
    dir: &'a Path,
    quiet: bool,
    json: bool,
    unit: TempUnit,
    verbose: bool,
}

/// summary.json with --json, else the report (thermal; solver with --verbose).
fn print(table: &table::Table, summary: &serde_json::Value, o: &Out) -> anyhow::Result<()> {
    if o.json {
        println!("{}", serde_json::to_string_pretty(summary)?);
    } else if !o.quiet {
        print!(
            "{}",
            report::format_report(table, summary, o.unit, o.verbose)
        );
        println!("results: {}", o.dir.display());
    }
    Ok(())
}

/// Exit 1 when any case failed (the table is written first).
fn finish(t: &table::Table) -> anyhow::Result<()> {
    match t.failed() {
        0 => Ok(()),
        n => anyhow::bail!("{n} of {} cases failed (see sweep.csv)", t.rows.len()),
    }
}

/// Cases done, cases/s and ETA on stderr; hidden with --quiet or off a terminal.
fn progress(cases: usize, quiet: bool) -> ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(cases as u64), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} cases  {per_sec}  {elapsed} (eta {eta})")
    {
        bar.set_style(style);
    }
    bar
}

fn default_out(stack: &Path) -> PathBuf {
    let stem = stack.file_stem().map(|s| s.to_string_lossy().into_owned());
    Path::new("out").join(format!("{}-sweep", stem.unwrap_or_else(|| "cuth".into())))
}
