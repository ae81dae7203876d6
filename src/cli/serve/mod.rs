//! `cuth serve STACK`: a stepping session for co-simulation. The stack is
//! opened once ([`cuth::simulation::Simulation`]: system, hierarchy and
//! field stay on the device); requests and replies are JSON lines on
//! stdin/stdout, or on a local TCP socket (`--listen`), one client at a
//! time, the session's state carrying over from one client to the next.

mod protocol;

use super::common::{parse_device, parse_grid, DeviceChoice};
use cuth::linalg::PrecondKind;
use cuth::run::{Backends, DeviceProbe, OpenRequest};
use cuth::simulation::Simulation;
use cuth::stack::Stack;
use cuth::thermal::device::ThermalBackend;
use cuth::thermal::steady::SteadyOptions;
use protocol::{Session, PROTOCOL};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Stack file (TOML).
    pub stack: PathBuf,
    /// Serve a TCP socket at ADDR (e.g. 127.0.0.1:7070; port 0 picks one,
    /// printed on stderr) instead of stdin/stdout [default: none:
    /// stdin/stdout].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<String>,
    /// In-plane grid NXxNY, overriding the file's [grid] [default: the
    /// stack's [grid]].
    #[arg(long, value_parser = parse_grid, value_name = "NXxNY")]
    pub grid: Option<(usize, usize)>,
    /// Where to solve: auto, cpu, cuda or cuda:N.
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    pub device: DeviceChoice,
    /// Preconditioner [default: the stack's [solver] precond, else mg].
    #[arg(long, value_enum)]
    pub precond: Option<PrecondKind>,
    /// Relative residual each solve stops at [default: 1e-8].
    #[arg(long)]
    pub rtol: Option<f64>,
    /// Iteration cap per solve [default: 20000].
    #[arg(long)]
    pub max_iter: Option<usize>,
}

/// Longest request line read, bytes: a 2048² layer map as JSON fits.
const MAX_LINE: u64 = 256 << 20;

pub fn run(args: &ServeArgs) -> anyhow::Result<()> {
    // A client that goes away mid-reply is a write error to handle, not
    // the end of the server (the CLI's default is to die on SIGPIPE).
    #[cfg(unix)]
    // SAFETY: only the disposition of SIGPIPE changes; SIG_IGN is valid.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    if let Some(r) = args.rtol {
        anyhow::ensure!(
            r > 0.0 && r < 1.0,
            cuth::error::InputError(format!("--rtol must be in (0, 1), got {r}"))
        );
    }
    anyhow::ensure!(
        args.max_iter != Some(0),
        cuth::error::InputError("--max-iter must be at least 1".into())
    );
    let knobs = super::device::knobs()?;
    let probe = DeviceProbe::start(args.device);
    super::import::refuse_foreign(&args.stack)?;
    let stack = Stack::load(&args.stack)?;
    let stack = match args.grid {
        Some((nx, ny)) => stack.with_grid(nx, ny)?,
        None => stack,
    };
    let mut opts = SteadyOptions::from_stack(&stack, PrecondKind::Multigrid);
    opts.precond = args.precond.unwrap_or(opts.precond);
    opts.rtol = args.rtol.unwrap_or(opts.rtol);
    opts.max_iter = args.max_iter.unwrap_or(opts.max_iter);
    // The device opens as `cuth solve`'s: `auto` probes CUDA and falls back
    // to the CPU with a note.
    let req = OpenRequest::steady(args.device, opts.precond, 0, &knobs.cuda);
    let opened = cuth::run::open(&req, probe)?;
    if let Some(why) = &opened.fallback {
        eprintln!("cuth: note: {why}; solving on the CPU");
    }
    let device = opened.device.name();
    match &opened.backend {
        Backends::Cpu(be) => serve_on(be, &device, stack, opts, args, true),
        Backends::Cuda(be) => serve_on(&**be, &device, stack, opts, args, false),
    }
}

fn serve_on<B: ThermalBackend + 'static>(
    be: &B,
    device: &str,
    stack: Stack,
    opts: SteadyOptions,
    args: &ServeArgs,
    on_cpu: bool,
) -> anyhow::Result<()> {
    let sim = Simulation::open(be, stack, opts)?;
    let mut session = Session::new(sim);
    let hello = serde_json::json!({
        "cuth": "serve",
        "protocol": PROTOCOL,
        "version": env!("CARGO_PKG_VERSION"),
        "device": device,
    });
    // On the CPU, requests are answered with this thread in the pool that
    // runs their short parallel loops (`on_this_thread`).
    match on_cpu {
        true => cuth::backend::cpu::on_this_thread(|| serve_loop(&mut session, &hello, args)),
        false => serve_loop(&mut session, &hello, args),
    }
}

/// Answers on stdin/stdout, or on `--listen`'s socket one client at a time.
fn serve_loop<B: ThermalBackend + 'static>(
    session: &mut Session<B>,
    hello: &serde_json::Value,
    args: &ServeArgs,
) -> anyhow::Result<()> {
    let Some(addr) = &args.listen else {
        let stdin = std::io::stdin().lock();
        let stdout = std::io::stdout().lock();
        // A closed stdout ends the session as a closed stdin does.
        let _ = converse(session, hello, stdin, stdout);
        return Ok(());
    };
    let listener = std::net::TcpListener::bind(addr)
        .map_err(|e| cuth::error::InputError(format!("--listen {addr}: {e}")))?;
    eprintln!("cuth: listening on {}", listener.local_addr()?);
    for conn in listener.incoming() {
        let Ok(conn) = conn else { continue };
        let Ok(reader) = conn.try_clone() else {
            continue;
        };
        // A client's error (a reset, a disconnect mid-reply) ends only its
        // connection.
        if let Ok(Flow::Quit) = converse(session, hello, BufReader::new(reader), conn) {
            break;
        }
    }
    Ok(())
}

enum Flow {
    /// The input ended.
    Closed,
    /// A `quit` request.
    Quit,
}

/// Greets, then answers each request line until the input ends or `quit`.
fn converse<B: ThermalBackend + 'static>(
    session: &mut Session<B>,
    hello: &serde_json::Value,
    mut input: impl BufRead,
    mut output: impl Write,
) -> std::io::Result<Flow> {
    writeln!(output, "{hello}")?;
    output.flush()?;
    let mut line = Vec::new();
    loop {
        line.clear();
        let mut limited = <&mut _ as std::io::Read>::take(&mut input, MAX_LINE);
        let n = limited.read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(Flow::Closed);
        }
        let answer = if line.last() != Some(&b'\n') && n as u64 == MAX_LINE {
            // Skip the rest of the over-long line.
            let mut rest = Vec::new();
            while !matches!(input.read_until(b'\n', &mut rest), Ok(0)) {
                if rest.last() == Some(&b'\n') {
                    break;
                }
                rest.clear();
            }
            session.answer_error(format!("the request is longer than {MAX_LINE} bytes"))
        } else {
            match std::str::from_utf8(&line) {
                Ok(text) if text.trim().is_empty() => continue,
                Ok(text) => session.answer(text.trim_end()),
                Err(_) => session.answer_error("the request is not UTF-8 text".into()),
            }
        };
        writeln!(output, "{}", answer.reply)?;
        output.flush()?;
        if answer.quit {
            return Ok(Flow::Quit);
        }
    }
}
