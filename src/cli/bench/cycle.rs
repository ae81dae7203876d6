//! `cuth bench --cycle-sizes N,...`: where a multigrid-preconditioned PCG
//! iteration spends its device time, on the stack's own grid (every z
//! cell, as `cuth solve` and `cuth transient` run it). Each kernel of the
//! f64 cycle, level by level, and each of PCG's own, is timed as a CUDA
//! graph of `reps` back-to-back launches ([`graph_time_us`]: the device's
//! time per launch, without the host's); then one whole cycle replayed from its graph and
//! launched from the host, and the read-back PCG makes every iteration.
//! The sum of the parts against the cycle's graph says what the launches
//! between them cost the device; the graph against the launched cycle what
//! the host adds.

use super::measure::graph_time_us;
use anyhow::{Context, Result};
use cuth::backend::cuda::timing::median;
use cuth::backend::cuda::CudaBackend;
use cuth::backend::mg::{Guess, MultigridOps, Relax};
use cuth::backend::{Backend, BackendError, CgStep, QuadDiagOps, Ratio};
use cuth::grid::Grid;
use cuth::linalg::mg::{MgOptions, Multigrid};
use cuth::linalg::{Preconditioner, QuadDiagOperator};
use cuth::stack::Stack;
use std::time::Instant;

/// Host wall µs per call of `f` followed by a synchronization, median of
/// `reps`.
fn wall_us(
    be: &CudaBackend,
    reps: usize,
    mut f: impl FnMut() -> Result<(), BackendError>,
) -> Result<f64, BackendError> {
    f()?;
    be.synchronize()?;
    let mut t = Vec::with_capacity(reps);
    for _ in 0..reps {
        let s = Instant::now();
        f()?;
        be.synchronize()?;
        t.push(s.elapsed().as_secs_f64() * 1e6);
    }
    Ok(median(t))
}

/// The table of one grid, markdown.
pub fn profile(be: &CudaBackend, base: &Stack, n: usize, reps: usize) -> Result<String> {
    let s = base
        .clone()
        .with_grid(n, n)
        .context("the cycle profile's grid")?;
    let grid = Grid::from_stack(&s);
    let power = (0..s.layers.len())
        .map(|l| cuth::power::layer_power(&s, &grid, l))
        .collect::<Result<Vec<_>, _>>()?;
    let a = cuth::assemble::assemble(&s, &grid, &power).a;
    let ad = be.upload_matrix(&a)?;
    let len = a.len();
    let mut mg = Multigrid::new(be, &ad, &MgOptions::default())?;
    let h = mg.levels().context("an f64 hierarchy")?;
    let ones = |k: usize| be.upload(&vec![1.0; k]);
    let mut out = format!(
        "{}×{}×{} ({} cells), {} levels\n\n| level | grid | smooth ½ sweep µs | restrict µs | prolong µs | level µs |\n|---|---|---:|---:|---:|---:|\n",
        a.nx,
        a.ny,
        a.nz,
        len,
        h.steps.len() + 1
    );
    let mut parts = 0.0;
    for (l, step) in h.steps.iter().enumerate() {
        let c = step.as_ref();
        let (op, pivots) = match l {
            0 => (&ad, h.fine_pivots.as_ref()),
            _ => {
                let k = &h.coarse[l - 1];
                (
                    k.a.as_ref().context("a coarse operator")?,
                    k.pivots.as_ref(),
                )
            }
        };
        let pivots = pivots.context("line pivots")?;
        let nl = c.nx * c.ny * c.nz;
        let (b, mut x, mut bc) = (ones(nl)?, ones(nl)?, ones(c.nxc * c.nyc * c.nz)?);
        let relax = Relax {
            inv_pivots: pivots,
            colour: 0,
            guess: Guess::Full,
            made_by: None,
        };
        let smooth = graph_time_us(be, reps, || be.mg_smooth(op, relax, &b, &mut x))?;
        let restrict = graph_time_us(be, reps, || {
            be.mg_restrict_residual(op, step, &b, &x, &mut bc)
        })?;
        let prolong = graph_time_us(be, reps, || be.mg_prolong_add(step, &bc, &mut x))?;
        let level = 4.0 * smooth + restrict + prolong;
        parts += level;
        out += &format!(
            "| {l} | {}×{}×{} | {smooth:.1} | {restrict:.1} | {prolong:.1} | {level:.1} |\n",
            c.nx, c.ny, c.nz
        );
    }
    let m = h.inverse_n;
    let (b, mut x) = (ones(m)?, ones(m)?);
    let dense = graph_time_us(be, reps, || be.mg_dense_apply(&h.inverse, m, &b, &mut x))?;
    parts += dense;
    out += &format!("| coarsest | {m} cells, dense | | | | {dense:.1} |\n\n");
    // The whole cycle, and PCG's own kernels on the fine level.
    let (r, mut z) = (ones(len)?, ones(len)?);
    let mut op = QuadDiagOperator::new(be, &ad, len);
    be.set_graphs(false);
    let launched = wall_us(be, reps, || mg.apply(be, &mut op, &r, &mut z))?;
    let graph = graph_time_us(be, reps, || mg.apply(be, &mut op, &r, &mut z))?;
    be.set_graphs(true);
    let (p, mut q, mut xv, mut rv) = (ones(len)?, ones(len)?, ones(len)?, ones(len)?);
    let mut sc = be.scalars(4)?;
    let spmv_dot = graph_time_us(be, reps, || be.spmv_dot(&ad, &p, &mut q, &mut sc, 0))?;
    let alpha = Ratio { num: 1, den: 0 };
    let update = graph_time_us(be, reps, || {
        let step = CgStep {
            p: &p,
            q: &q,
            x: &mut xv,
            r: &mut rv,
        };
        be.cg_update(alpha, step, &mut sc, 2)
    })?;
    let dot = graph_time_us(be, reps, || be.dot(&r, &z, &mut sc, 1))?;
    let xpay = graph_time_us(be, reps, || be.xpay(alpha, &z, &mut xv, &sc))?;
    let read = wall_us(be, reps, || be.read_scalars(&sc).map(|_| ()))?;
    let pcg = spmv_dot + update + dot + xpay;
    out += &format!(
        "cycle: parts {parts:.1} µs, one graph {graph:.1} µs (device), launched from the host {launched:.1} µs (wall, synchronized)\n\
         PCG kernels: SpMV+dot {spmv_dot:.1}, update {update:.1}, dot {dot:.1}, xpay {xpay:.1} µs; read-back {read:.1} µs (wall)\n\
         an iteration's device time: {:.1} µs (graph cycle + PCG kernels)\n",
        graph + pcg
    );
    Ok(out)
}
