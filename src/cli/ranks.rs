//! `mpirun -n N cuth solve STACK` (feature `mpi`): one steady solve over
//! N processes (`thermal::steady_ranks`). Started by an MPI launcher, every
//! rank plans the run from the same arguments and solves its slab; rank 0
//! writes the outputs and prints, the others stay silent. Started without a
//! launcher, `cuth` never initializes MPI and runs as it always does.

use super::plan::Run;
use cuth::backend::mpi::RankBackend;
use cuth::run::{Device, DeviceChoice};
use cuth::thermal::steady::{KeepField, LayerMaps, SteadyOutcome};
use cuth::thermal::steady_ranks::solve_steady_ranks;

/// The variables an MPI launcher sets for its processes (Open MPI, MPICH's
/// Hydra, PMIx, Slurm's PMI-2): their presence means `mpirun` started us.
const LAUNCHER_VARS: [&str; 4] = [
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMIX_RANK",
    "MPI_LOCALNRANKS",
];

/// MPI, initialized when an MPI launcher started this process; `None`
/// otherwise (a plain run).
pub fn launched() -> anyhow::Result<Option<::mpi::environment::Universe>> {
    if !LAUNCHER_VARS.iter().any(|v| std::env::var_os(v).is_some()) {
        return Ok(None);
    }
    match ::mpi::initialize() {
        Some(u) => Ok(Some(u)),
        None => anyhow::bail!("MPI was already initialized"),
    }
}

/// Whether this process prints and writes: rank 0 of the world.
pub fn is_root(u: &::mpi::environment::Universe) -> bool {
    use ::mpi::traits::Communicator;
    u.world().rank() == 0
}

/// The ranks' solve; `Some` on rank 0 with what it writes.
pub fn solve(
    u: &::mpi::environment::Universe,
    plan: &Run,
    keep: &KeepField,
) -> anyhow::Result<Option<(SteadyOutcome, LayerMaps)>> {
    let be = RankBackend::new(u.world());
    if !matches!(plan.device, DeviceChoice::Cpu | DeviceChoice::Auto) {
        anyhow::bail!("over MPI ranks the solve runs on the CPU (use --device cpu)");
    }
    let opts = plan.solver_on(Device::Cpu);
    let got = solve_steady_ranks(&be, &plan.stack, &plan.grid, &opts, keep)?;
    Ok(got.map(|(o, maps, r)| {
        if plan.verbose {
            eprintln!(
                "cuth: {} ranks: {} iterations, solve {:.3} s, {:.0} halo bytes and {:.1} reductions per iteration",
                r.ranks, r.iterations, r.solve_s, r.halo_bytes_per_iteration, r.reductions_per_iteration
            );
        }
        (o, maps)
    }))
}
