//! Options that `solve` and `transient` share (flattened into both), so the
//! two commands spell, document and resolve them the same way.

use cuth::linalg::PrecondKind;

pub use cuth::run::DeviceChoice;

/// clap value parser for `--device`.
pub fn parse_device(s: &str) -> Result<DeviceChoice, String> {
    s.parse()
}

/// `NXxNY` for `--grid`.
pub fn parse_grid(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`{s}` is not NXxNY (e.g. 256x256)");
    let (a, b) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let p = |v: &str| v.trim().parse::<usize>().map_err(|_| bad());
    Ok((p(a)?, p(b)?))
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// In-plane grid NXxNY, overriding the file's [grid] (e.g. 256x256)
    /// [default: the stack's [grid]].
    #[arg(long, value_parser = parse_grid, value_name = "NXxNY")]
    pub grid: Option<(usize, usize)>,
    /// Where to solve: auto, cpu, cuda or cuda:N (GPU ordinal N; cuda = cuda:0).
    #[arg(long, value_parser = parse_device, default_value = "auto")]
    pub device: DeviceChoice,
    /// Preconditioner [default: the stack's [solver] precond, else mg].
    #[arg(long, value_enum)]
    pub precond: Option<PrecondKind>,
    /// Precision of the multigrid preconditioner's hierarchy (levels,
    /// smoother, transfers): f64, f32, or auto (f32, rebuilt in f64 if PCG
    /// stagnates on it); the outer PCG, its residual and the answer stay f64
    /// [default: auto for `solve` on a GPU (linear stacks without cavities,
    /// when the memory plan fits), else f64].
    #[arg(long, value_enum, value_name = "PRECISION")]
    pub mg_precision: Option<cuth::linalg::mg::MgPrecision>,
    /// Iteration cap (per step for `transient`); reaching it is an error
    /// [default: 20000].
    #[arg(long)]
    pub max_iter: Option<usize>,
    /// Chebyshev polynomial degree [default: the stack's [solver]
    /// chebyshev_degree, else 6].
    #[arg(long)]
    pub degree: Option<usize>,
    /// Temperature-dependent stacks: converged when max |ΔT| between two
    /// outer iterates is at most this, in K [default: 1e-4].
    #[arg(long, value_name = "K")]
    pub nonlinear_tol: Option<f64>,
    /// Temperature-dependent stacks: depth M of the Anderson acceleration of
    /// the steady outer iteration (0: plain Picard; at most 10)
    /// [default: 3].
    #[arg(long, value_name = "M")]
    pub anderson: Option<usize>,
    /// Temperature-dependent stacks: any temperature above this, in K, is
    /// thermal runaway (error, nothing written) [default: 500].
    #[arg(long, value_name = "K")]
    pub t_max: Option<f64>,
    /// Temperatures in kelvin in maps, CSV, tables and plots (default °C).
    #[arg(long)]
    pub kelvin: bool,
    /// What blocks.steady reports per block, as HotSpot's -grid_map_mode:
    /// the block's max, area-weighted avg, min, or the cell at its center
    /// [default: the stack's `[output] block_map`, else max].
    #[arg(long, value_enum)]
    pub block_map: Option<cuth::output::blocks::BlockMap>,
    /// Also write HotSpot's own files, in its layouts and in kelvin:
    /// blocks.steady with HotSpot's names and package nodes,
    /// hotspot.grid.steady, and for a transient hotspot.ttrace and
    /// hotspot.grid.ttrace [default: on when the stack has `[output] hotspot`,
    /// as `cuth import hotspot` writes it].
    #[arg(long)]
    pub hotspot_outputs: bool,
    /// Also write the 3D field (temperature, power density, conductivity) as
    /// a VTK rectilinear grid, field.vtr (transient: per snapshot + field.pvd).
    #[arg(long)]
    pub vtk: bool,
    /// Treat plausibility warnings (a bare-number thickness of 1 cm or more
    /// in a die layer, ambient outside 200..500 K, ...) as errors (exit 2).
    #[arg(long)]
    pub strict: bool,
    /// Print nothing on success (and no progress bar).
    #[arg(long, short)]
    pub quiet: bool,
    /// Print summary.json to stdout instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Also print the solver's details: method, precision, preconditioner
    /// parameters (Chebyshev λ bounds, multigrid levels), stop reason, timings.
    #[arg(long, short)]
    pub verbose: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_and_grid_values() {
        assert_eq!(parse_device("cuda"), Ok(DeviceChoice::Cuda(0)));
        assert_eq!(parse_device("cuda:3"), Ok(DeviceChoice::Cuda(3)));
        assert_eq!(parse_device("cpu"), Ok(DeviceChoice::Cpu));
        assert!(parse_device("cuda:x").is_err());
        assert!(parse_device("gpu").is_err());
        assert_eq!(parse_grid("32x16"), Ok((32, 16)));
        assert!(parse_grid("32").is_err());
    }
}
