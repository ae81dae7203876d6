//! Command-line arguments (what the user typed, clap derive) and dispatch to
//! the subcommands. Each subcommand resolves its arguments into a plan
//! (`plan.rs`: stack loaded, device chosen, outputs checked) before any work
//! starts.

mod bench;
mod common;
mod device;
mod import;
mod plan;
mod progress;
#[cfg(feature = "mpi")]
mod ranks;
mod serve;
mod solve;
mod solve_run;
mod sweep;
mod topopt;
mod transient;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "cuth",
    version,
    about = "Thermal simulation of 3D IC stacks on CPU or NVIDIA GPU"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Steady-state temperatures of a layer stack: PNG and CSV maps, per-block
    /// results and summary.json under --out.
    Solve(solve::SolveArgs),
    /// Many power maps on one stack: the stack assembled and preconditioned
    /// once, each case solved steady; sweep.csv and summary.json under --out.
    Sweep(sweep::SweepArgs),
    /// Temperatures over time (backward Euler, or TR-BDF2 with adaptive
    /// steps) under constant power or a power trace: time series, plot,
    /// final maps and summary.json under --out.
    Transient(transient::TransientArgs),
    /// List compute devices: CPU threads, CUDA devices, driver and NVRTC versions, memory.
    Info,
    /// Benchmark SpMV and PCG against the memory-bandwidth floor (GPU and CPU)
    /// on mol_f2f at several grid sizes.
    Bench(bench::BenchArgs),
    /// Minimum-compliance 3D topology optimization (SIMP, matrix-free):
    /// densities (VTK, PNG views, STL), history.csv and summary.json under --out.
    Topopt(topopt::TopoptArgs),
    /// A stepping session for co-simulation: the stack opened once, then
    /// JSON-line requests (set power, step, steady, read blocks/probes/maps,
    /// save/restore) on stdin/stdout or a TCP socket (the serve protocol chapter of the book).
    Serve(serve::ServeArgs),
    /// Convert a HotSpot (.config + .lcf/.flp + .ptrace) or 3D-ICE (.stk)
    /// model into a cuth stack TOML; approximations are commented in it.
    Import(import::ImportArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Solve(args) => solve::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Transient(args) => transient::run(&args),
        Command::Info => {
            print!("{}", device::info_text(&device::knobs()?));
            Ok(())
        }
        Command::Bench(args) => bench::run(&args),
        Command::Topopt(args) => topopt::run(&args),
        Command::Import(args) => import::run(&args),
        Command::Serve(args) => serve::run(&args),
    }
}

/// 2 for bad input, 1 for everything else (see `main.rs`): the kind of the
/// first error in the chain that the library classifies.
pub fn exit_code(err: &anyhow::Error) -> u8 {
    err.chain()
        .find_map(cuth::error::kind_of)
        .unwrap_or(cuth::error::ErrorKind::Failure)
        .exit_code()
}
