//! Batched sweeps (`thermal::sweep_batch`) on the CPU (the bodies, shared
//! with the GPU tests, are in `util::sweep`): every case of a batched
//! sweep equals its own one-at-a-time solve (`run_worker`, the path `cuth
//! solve` shares) to 1e-9 K on every cell, with the same PCG iteration
//! count, for batch sizes that divide the cases, leave a partial last batch
//! and exceed them; a case whose map is bad fails alone, with the same
//! reason.

use crate::util::{repo_path, sweep};
use cuth::backend::cpu::CpuBackend;
use cuth::stack::{PowerSpec, Stack};
use cuth::thermal::sweep::SweepCase;

fn stack() -> Stack {
    Stack::load(&repo_path("configs/mol_f2f.toml"))
        .unwrap()
        .with_grid(24, 20)
        .unwrap()
}

/// `n` cases: the logic raster scaled, a block walking over the memory die;
/// case `bad` names a raster that does not exist.
fn cases(stack: &Stack, n: usize, bad: usize) -> Vec<SweepCase> {
    let layer = |name: &str| stack.layers.iter().position(|l| l.name == name).unwrap();
    let raster = repo_path("powermaps/mol_logic.csv");
    (0..n)
        .map(|i| SweepCase {
            name: format!("case{i}"),
            maps: Vec::new(),
            power: vec![
                (
                    layer("logic_feol"),
                    PowerSpec::Raster {
                        file: match i == bad {
                            true => raster.with_file_name("missing.csv"),
                            false => raster.clone(),
                        },
                        // Case 0 has no logic power at all.
                        total: Some(if i == 0 { 0.0 } else { 2.0 + 0.7 * i as f64 }),
                    },
                ),
                (
                    layer("memory_feol"),
                    PowerSpec::Uniform {
                        total: 0.2 + (i % 4) as f64 * 0.5,
                    },
                ),
            ],
        })
        .collect()
}

#[test]
fn every_batched_case_equals_its_own_solve() {
    let stack = stack();
    let cases = cases(&stack, 7, 4);
    sweep::batched_cases_equal_their_own_solves(
        &CpuBackend::new(),
        &stack,
        &cases,
        4,
        &[2, 3, 7, 16],
    );
}

#[test]
fn a_batch_that_cannot_converge_fails_every_case_with_the_single_reason() {
    let stack = stack();
    let cases = cases(&stack, 3, usize::MAX);
    sweep::a_batch_that_cannot_converge_fails_every_case_with_the_single_reason(
        &CpuBackend::new(),
        &stack,
        &cases,
    );
}
