//! Command-line arguments (what the user typed, clap derive) and dispatch to
//! the subcommands. Each subcommand resolves its arguments into a plan
//! (stack loaded, device chosen) before any work starts.

mod bench;
mod common;
mod device;
mod import;
mod solve;
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
    /// Temperatures over time (backward Euler) under constant power or a
    /// power trace: time series, plot, final maps and summary.json under --out.
    Transient(transient::TransientArgs),
    /// List compute devices: CPU threads, CUDA devices, driver and NVRTC versions, memory.
    Info,
    /// Benchmark SpMV and PCG against the memory-bandwidth floor (GPU and CPU)
    /// on mol_f2f at several grid sizes.
    Bench(bench::BenchArgs),
    /// Minimum-compliance 3D topology optimization (SIMP, matrix-free):
    /// densities (VTK, PNG views, STL), history.csv and summary.json under --out.
    Topopt(topopt::TopoptArgs),
    /// Convert a HotSpot (.config + .lcf/.flp + .ptrace) or 3D-ICE (.stk)
    /// model into a cuth stack TOML; approximations are commented in it.
    Import(import::ImportArgs),
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Solve(args) => solve::run(&args),
        Command::Transient(args) => transient::run(&args),
        Command::Info => {
            print!("{}", device::info_text());
            Ok(())
        }
        Command::Bench(args) => bench::run(&args),
        Command::Topopt(args) => topopt::run(&args),
        Command::Import(args) => import::run(&args),
    }
}

/// 2 for bad input, 1 for everything else (see `main.rs`).
pub fn exit_code(err: &anyhow::Error) -> u8 {
    use cuth::power::PowerError;
    use cuth::stack::StackError;
    use cuth::thermal::steady::SteadyError;
    use cuth::thermal::transient::state::StateError;
    for cause in err.chain() {
        if cause.is::<StackError>()
            || cause.is::<PowerError>()
            || cause.is::<solve::UsageError>()
            || cause.is::<StateError>()
            || cause.is::<cuth::topopt::problem::ProblemError>()
            || cause.is::<cuth::import::ImportError>()
        {
            return 2;
        }
        if let Some(SteadyError::Power(_)) = cause.downcast_ref::<SteadyError>() {
            return 2;
        }
    }
    1
}
