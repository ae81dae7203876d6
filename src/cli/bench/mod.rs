//! `cuth bench`: how close the solver runs to the memory-bandwidth floor.
//! For a stack (mol_f2f by default, every layer one z cell, so nz = 10) at
//! several N × N grids it measures, in one run and on the same device, the
//! device-to-device copy bandwidth, the Quad-Diag SpMV (time, effective
//! bandwidth at 48 B/row, fraction of copy), and PCG to rtol with Jacobi and
//! Chebyshev (iterations, time per iteration next to its traffic floor), on
//! the GPU and, up to `--cpu-max`, on the CPU; then a Chebyshev degree sweep
//! at one size to pick the default degree by measurement. `--export` writes
//! the systems for `bench/cupy.py`. Prints markdown; `--out` adds
//! JSON and CSV. Speed targets belong here, never in timed unit tests.

mod cycle;
mod measure;
mod precision;
mod report;
mod sizes;
mod system;
mod topopt;

use anyhow::{Context, Result};
use cuth::backend::cpu::CpuBackend;
use cuth::backend::cuda::CudaBackend;
use cuth::backend::Backend;
use cuth::linalg::PrecisionMode;
use cuth::stack::Stack;
use report::BenchReport;
use sizes::{cpu_size, gpu_size};
use std::collections::BTreeSet;
use std::path::PathBuf;

#[derive(Clone, Debug, clap::Args)]
pub struct BenchArgs {
    /// Stack file; every layer is forced to one z cell [default:
    /// configs/mol_f2f.toml, found in the current directory, above the cuth
    /// binary or in the source tree it was built from].
    #[arg(long, value_name = "FILE")]
    pub stack: Option<PathBuf>,
    /// In-plane sizes N (grids N×N), comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [128, 256, 512, 1024, 2048, 4096])]
    pub sizes: Vec<usize>,
    /// Largest N also solved on the CPU backend.
    #[arg(long, default_value_t = 512)]
    pub cpu_max: usize,
    /// Chebyshev degree of the size table (cuth's default, chosen by this sweep).
    #[arg(long, default_value_t = 6)]
    pub degree: usize,
    /// Chebyshev degrees of the sweep, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [2, 3, 4, 6, 8])]
    pub degrees: Vec<usize>,
    /// N of the degree sweep (GPU; 0 skips it).
    #[arg(long, default_value_t = 1024)]
    pub degree_size: usize,
    /// Relative residual each PCG solve stops at.
    #[arg(long, default_value_t = 1e-8)]
    pub rtol: f64,
    /// Iteration cap of each PCG solve.
    #[arg(long, default_value_t = 20_000)]
    pub max_iter: usize,
    /// GPU: read the residual back every this many iterations.
    #[arg(long, default_value_t = 10)]
    pub check_every: usize,
    /// Wall-clock budget per GPU PCG solve, s: the iteration cap is lowered
    /// to fit it, and a solve that hits it is reported as capped.
    #[arg(long, default_value_t = 15.0)]
    pub solve_budget_s: f64,
    /// The same for CPU solves.
    #[arg(long, default_value_t = 10.0)]
    pub cpu_budget_s: f64,
    /// SpMV launches per timed batch (GPU) or timed calls (CPU).
    #[arg(long, default_value_t = 50)]
    pub reps: usize,
    /// Run only the CPU backend.
    #[arg(long)]
    pub cpu_only: bool,
    /// CUDA device ordinal.
    #[arg(long, default_value_t = 0)]
    pub gpu: usize,
    /// Write bench.json, bench.md, spmv.csv and pcg.csv into this directory
    /// [default: not written].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Export the Quad-Diag systems (raw f64 + meta.json) into DIR/<N>x<N>/
    /// for bench/cupy.py [default: not exported].
    #[arg(long, value_name = "DIR")]
    pub export: Option<PathBuf>,
    /// Sizes N to export, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [1024, 2048])]
    pub export_sizes: Vec<usize>,
    /// Benchmark the matrix-free elasticity operator of `cuth topopt`
    /// instead (GPU only): every schedule and precision on n×n×n meshes.
    #[arg(long)]
    pub topopt: bool,
    /// Edges n of the n×n×n meshes of `--topopt`, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = [40, 60, 80, 100, 170])]
    pub topopt_sizes: Vec<usize>,
    /// Mixed-precision ablation: preconditioner precisions to compare
    /// (f64 always runs first, as the reference), comma-separated [default:
    /// none: no ablation].
    #[arg(long, value_enum, value_delimiter = ',')]
    pub precisions: Vec<PrecisionMode>,
    /// In-plane sizes N of the ablation (GPU; CPU too up to --cpu-max).
    #[arg(long, value_delimiter = ',', default_values_t = [512, 2048])]
    pub precision_sizes: Vec<usize>,
    /// Run only the ablation (no SpMV, PCG or degree tables).
    #[arg(long)]
    pub precision_only: bool,
    /// Only the multigrid iteration's device time, kernel by kernel and
    /// level by level, on the stack's own N×N grid (every z cell), for each
    /// N given (GPU) [default: none].
    #[arg(long, value_delimiter = ',')]
    pub cycle_sizes: Vec<usize>,
}

/// Runs the benchmark; see the module documentation.
pub fn run(args: &BenchArgs) -> Result<()> {
    let knobs = super::device::knobs()?;
    if args.topopt {
        return topopt::run(args, &knobs.cuda);
    }
    let stack_path = system::bench_stack(args.stack.as_deref())?;
    let base = Stack::load(&stack_path)
        .with_context(|| format!("loading the benchmark stack {}", stack_path.display()))?;
    if !args.cycle_sizes.is_empty() {
        let be = CudaBackend::new_with(args.gpu, &knobs.cuda)?;
        println!("{} ({})\n", be.report().name, be.report().detail);
        for &n in &args.cycle_sizes {
            println!("{}", cycle::profile(&be, &base, n, args.reps)?);
        }
        return Ok(());
    }
    let cpu = CpuBackend::new();
    let mut rep = BenchReport {
        command: std::env::args().collect::<Vec<_>>().join(" "),
        cuth_version: env!("CARGO_PKG_VERSION").into(),
        stack: stack_path.display().to_string(),
        cpu: format!("{} ({})", cpu.report().name, cpu.report().detail),
        rtol: args.rtol,
        ..Default::default()
    };
    let gpu = if args.cpu_only {
        None
    } else {
        match CudaBackend::new_with(args.gpu, &knobs.cuda) {
            Ok(be) => Some(be),
            Err(e) => {
                let note = format!("CUDA unavailable ({e}); CPU only");
                eprintln!("bench: {note}");
                rep.notes.push(note);
                None
            }
        }
    };
    if let Some(g) = &gpu {
        let r = g.report();
        rep.gpu = Some(format!("{} ({})", r.name, r.detail));
        // Two 1 GiB buffers: far beyond L2, so this is DRAM bandwidth.
        let bw = g.copy_bandwidth(1 << 30, 20)?;
        eprintln!("bench: GPU copy {:.0} GB/s", bw.gb_per_s);
        rep.bandwidth.gpu_copy_gb_per_s = Some(bw.gb_per_s);
    }
    let cpu_sizes: Vec<usize> = args
        .sizes
        .iter()
        .copied()
        .filter(|&n| n <= args.cpu_max)
        .collect();
    if !cpu_sizes.is_empty() {
        let bw = measure::cpu_copy_gb_per_s();
        eprintln!("bench: CPU copy {bw:.1} GB/s");
        rep.bandwidth.cpu_copy_gb_per_s = Some(bw);
    }

    // Every size any part needs, each assembled once, smallest first.
    let mut all: BTreeSet<usize> = args.sizes.iter().copied().collect();
    if gpu.is_some() && args.degree_size > 0 {
        all.insert(args.degree_size);
    }
    if args.export.is_some() {
        all.extend(&args.export_sizes);
    }
    if args.precision_only {
        all.clear();
    }
    if !args.precisions.is_empty() {
        ablation(gpu.as_ref(), &cpu, &base, args, &mut rep)?;
    }
    for &n in &all {
        let in_table = args.sizes.contains(&n);
        let on_gpu = gpu.is_some() && (in_table || n == args.degree_size);
        let on_cpu = in_table && n <= args.cpu_max;
        let export = args.export.is_some() && args.export_sizes.contains(&n);
        if !(on_gpu || on_cpu || export) {
            continue;
        }
        let s = system::build(&base, n)?;
        eprintln!("bench: {} assembled in {:.2} s", s.label(), s.assemble_s);
        if s.synthetic_rhs {
            rep.notes.push(format!(
                "{}: no power in the stack, rhs = 1 W per cell",
                s.label()
            ));
        }
        if let (Some(g), true) = (&gpu, on_gpu) {
            gpu_size(g, &s, args, in_table, &mut rep)?;
        }
        if on_cpu {
            cpu_size(&cpu, &s, args, &mut rep)?;
        }
        if let (Some(dir), true) = (&args.export, export) {
            let path = system::export(dir, &s, &stack_path)?;
            eprintln!("bench: exported {}", path.display());
        }
        // Keep what is measured so far, should a later size be cut short.
        if let Some(dir) = &args.out {
            rep.write(dir)?;
        }
    }
    rep.best_degree = rep
        .degree_sweep
        .iter()
        .filter(|r| r.converged)
        .min_by(|a, b| a.solve_s.total_cmp(&b.solve_s))
        .and_then(|r| r.degree);
    println!("{}", rep.markdown());
    if let Some(dir) = &args.out {
        rep.write(dir)?;
        eprintln!("bench: wrote {}", dir.display());
    }
    Ok(())
}

/// The mixed-precision ablation at every `--precision-sizes`.
fn ablation(
    gpu: Option<&CudaBackend>,
    cpu: &CpuBackend,
    base: &Stack,
    args: &BenchArgs,
    rep: &mut BenchReport,
) -> Result<()> {
    for &n in &args.precision_sizes {
        let s = system::build(base, n)?;
        eprintln!("bench: {} assembled in {:.2} s", s.label(), s.assemble_s);
        if let Some(g) = gpu {
            let copy = rep.bandwidth.gpu_copy_gb_per_s.unwrap_or(f64::NAN);
            let plan = precision::AblationPlan {
                device: "cuda",
                modes: &args.precisions,
                degree: args.degree,
                rtol: args.rtol,
                max_iter: args.max_iter,
                check_every: args.check_every,
                copy_gbs: copy,
            };
            let rows = precision::ablation(g, &s, &plan)
                .with_context(|| format!("GPU precision ablation at {}", s.label()))?;
            rep.precision.extend(rows);
        }
        if n <= args.cpu_max {
            let copy = rep.bandwidth.cpu_copy_gb_per_s.unwrap_or(f64::NAN);
            let plan = precision::AblationPlan {
                device: "cpu",
                modes: &args.precisions,
                degree: args.degree,
                rtol: args.rtol,
                max_iter: args.max_iter,
                check_every: 1,
                copy_gbs: copy,
            };
            let rows = precision::ablation(cpu, &s, &plan)
                .with_context(|| format!("CPU precision ablation at {}", s.label()))?;
            rep.precision.extend(rows);
        }
        if let Some(dir) = &args.out {
            rep.write(dir)?;
        }
    }
    Ok(())
}
