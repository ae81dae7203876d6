//! `cuth` command line: parse, dispatch, report. Exit codes (stable, for
//! scripts and CI): 0 success, 1 the solve failed (no convergence, device
//! error, output could not be written), 2 bad input (command line, stack
//! file, power files).

mod cli;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    restore_sigpipe();
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("cuth: error: {err:#}");
            ExitCode::from(cli::exit_code(&err))
        }
    }
}

/// Rust ignores SIGPIPE, so `cuth solve ... | head` would panic in `print!`
/// once `head` exits. Like other Unix filters, cuth is instead ended by the
/// signal when its reader goes away; outputs under `--out` are committed
/// before anything is printed, so they are complete either way.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any other thread exists;
    // SIG_DFL is a valid disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
