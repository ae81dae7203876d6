//! `cuth` command line: parse, dispatch, report. Exit codes (stable, for
//! scripts and CI): 0 success, 1 the solve failed (no convergence, device
//! error, output could not be written), 2 bad input (command line, stack
//! file, power files).

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cuth: error: {err:#}");
            ExitCode::from(cli::exit_code(&err))
        }
    }
}
