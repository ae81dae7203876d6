//! Helpers shared by the three test binaries (`cli`, `solver`, `gpu`):
//! stacks from TOML text, a tiny deterministic RNG, dense linear algebra
//! written independently of the code under test, and (in submodules) the
//! CLI runner, multigrid, k(T) and topopt multigrid helpers. Each binary
//! uses a part, so unused items are expected.
#![allow(dead_code)]

pub mod cli;
pub mod kt;
pub mod liquid;
pub mod mg;
pub mod mixed;
pub mod sim;
pub mod sim_reads;
pub mod steady;
pub mod sweep;
pub mod topopt_mg;
pub mod transient;
pub mod transient_reduce;

use cuth::stack::{PowerSpec, Stack};
use cuth::thermal::sweep::SweepCase;
use std::path::{Path, PathBuf};

/// A file of the repository: from the working directory when it is there
/// (the GPU machine runs staged binaries from a copy of the tree), else
/// from the crate's root.
pub fn repo_path(rel: &str) -> PathBuf {
    let here = PathBuf::from(rel);
    match here.exists() {
        true => here,
        false => Path::new(env!("CARGO_MANIFEST_DIR")).join(rel),
    }
}

pub fn stack(toml: &str) -> Stack {
    Stack::from_toml(toml, Path::new("test.toml")).expect("test stack is valid")
}

/// xorshift64*: deterministic, dependency-free.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// n values uniform in [lo, hi).
    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

/// A CUDA backend on GPU 0 with the environment's knobs, as the command
/// line opens it (the kernel images' disk cache included), for the
/// `#[ignore]`d GPU tests.
pub fn open_gpu() -> cuth::backend::cuda::CudaBackend {
    let knobs = cuth::knobs::Knobs::from_env().unwrap_or_else(|e| panic!("{e}"));
    cuth::backend::cuda::CudaBackend::new_with(0, &knobs.cuda)
        .unwrap_or_else(|e| panic!("no usable CUDA device: {e}"))
}

/// One CUDA backend per test binary (kernels compile once), for the
/// `#[ignore]`d GPU tests. Every launch is synchronized so an asynchronous
/// fault is reported against the kernel that caused it.
pub fn gpu() -> &'static cuth::backend::cuda::CudaBackend {
    use cuth::backend::Backend;
    static GPU: std::sync::OnceLock<cuth::backend::cuda::CudaBackend> = std::sync::OnceLock::new();
    GPU.get_or_init(|| {
        let be = open_gpu();
        be.set_sync_each_launch(true);
        println!("[gpu] {} ({})", be.report().name, be.report().detail);
        be
    })
}

/// Solves the dense SPD system `a x = b` by Gaussian elimination with partial pivoting.
pub fn dense_solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    for k in 0..n {
        let p = (k..n)
            .max_by(|&i, &j| a[i][k].abs().total_cmp(&a[j][k].abs()))
            .unwrap();
        a.swap(k, p);
        b.swap(k, p);
        for i in k + 1..n {
            let f = a[i][k] / a[k][k];
            if f != 0.0 {
                let (upper, lower) = a.split_at_mut(i);
                for (aij, akj) in lower[0][k..].iter_mut().zip(&upper[k][k..]) {
                    *aij -= f * akj;
                }
                b[i] -= f * b[k];
            }
        }
    }
    let mut x = vec![0.0; n];
    for k in (0..n).rev() {
        let s: f64 = (k + 1..n).map(|j| a[k][j] * x[j]).sum();
        x[k] = (b[k] - s) / a[k][k];
    }
    x
}

/// Whether the dense symmetric matrix `a` is (numerically) positive
/// definite: its Cholesky factorisation meets no pivot ≤ 0.
pub fn is_positive_definite(a: &[Vec<f64>]) -> bool {
    let n = a.len();
    let mut l = vec![vec![0.0; n]; n];
    for i in 0..n {
        for j in 0..=i {
            let s = a[i][j] - (0..j).map(|k| l[i][k] * l[j][k]).sum::<f64>();
            if i == j {
                if s <= 0.0 {
                    return false;
                }
                l[i][i] = s.sqrt();
            } else {
                l[i][j] = s / l[j][j];
            }
        }
    }
    true
}

pub fn max_rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    a.iter()
        .zip(b)
        .fold(0.0f64, |m, (x, y)| m.max((x - y).abs()))
        / scale
}

/// A random thermal-like Quad-Diag matrix: in-plane couplings uniform in
/// [0.5, 2), z couplings drawn by `gz`, then per row the ambient coupling
/// `amb(rng, i)` and a diagonal equal to the row's conductances plus it —
/// diagonally dominant, hence SPD. Couplings across the box's faces are 0.
pub fn random_matrix(
    rng: &mut Rng,
    (nx, ny, nz): (usize, usize, usize),
    mut gz: impl FnMut(&mut Rng) -> f64,
    mut amb: impl FnMut(&mut Rng, usize) -> f64,
) -> cuth::linalg::QuadDiag {
    let mut a = cuth::linalg::QuadDiag::zeros(nx, ny, nz);
    let n = a.len();
    let (sy, sz) = (nx, nx * ny);
    for i in 0..n {
        let (x, y, z) = (i % nx, (i / nx) % ny, i / sz);
        a.gx[i] = if x + 1 < nx {
            rng.uniform(0.5, 2.0)
        } else {
            0.0
        };
        a.gy[i] = if y + 1 < ny {
            rng.uniform(0.5, 2.0)
        } else {
            0.0
        };
        a.gz[i] = if z + 1 < nz { gz(rng) } else { 0.0 };
    }
    for i in 0..n {
        a.amb[i] = amb(rng, i);
        let mut s = a.gx[i] + a.gy[i] + a.gz[i] + a.amb[i];
        s += if i >= 1 { a.gx[i - 1] } else { 0.0 };
        s += if i >= sy { a.gy[i - sy] } else { 0.0 };
        s += if i >= sz { a.gz[i - sz] } else { 0.0 };
        a.d[i] = s;
    }
    a
}

/// `configs/mol_f2f.toml` from the working directory (the GPU machine runs
/// the test binaries from the repository root), else from the source tree.
pub fn mol_f2f() -> PathBuf {
    repo_path("configs/mol_f2f.toml")
}

/// Topopt: a cantilever 2 × 1 × 0.5 clamped at x = 0 with a unit downward
/// shear spread over the whole end face (no point-load singularity).
pub fn shear_cantilever(nelx: usize) -> cuth::topopt::problem::Problem {
    use cuth::topopt::problem::{Problem, Region};
    let mesh = cuth::topopt::Mesh::new(nelx, nelx / 2, nelx / 4);
    let mut p = Problem::new("beam", mesh, 2.0 / nelx as f64);
    let [lx, ly, lz] = p.extent();
    p.fix(
        &Region {
            lo: [0.0; 3],
            hi: [0.0, ly, lz],
        },
        [true; 3],
    );
    p.add_force(
        &Region {
            lo: [lx, 0.0, 0.0],
            hi: [lx, ly, lz],
        },
        [0.0, -1.0, 0.0],
    );
    p.penal = 3.0;
    p
}

/// `n` sweep cases on mol_f2f (the GPU sweep tests): the logic raster
/// scaled, the memory die uniform; case `bad` names a raster that does not
/// exist.
pub fn sweep_cases(stack: &Stack, n: usize, bad: Option<usize>) -> Vec<SweepCase> {
    let layer = |name: &str| stack.layers.iter().position(|l| l.name == name).unwrap();
    let raster = stack
        .source
        .parent()
        .unwrap()
        .join("../powermaps/mol_logic.csv");
    (0..n)
        .map(|i| SweepCase {
            name: format!("case{i}"),
            maps: Vec::new(),
            power: vec![
                (
                    layer("logic_feol"),
                    PowerSpec::Raster {
                        file: match Some(i) == bad {
                            true => raster.with_file_name("missing.csv"),
                            false => raster.clone(),
                        },
                        total: Some(3.0 + 5.0 * i as f64 / n as f64),
                    },
                ),
                (
                    layer("memory_feol"),
                    PowerSpec::Uniform {
                        total: 0.5 + (i % 5) as f64 * 0.3,
                    },
                ),
            ],
        })
        .collect()
}
