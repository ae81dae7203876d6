//! `cuth bench --topopt`: the matrix-free elasticity operator of `cuth
//! topopt` on the GPU, every schedule, precision and place of Kₑ (shared memory or kernel
//! parameter), on n×n×n meshes, next to
//! the same run's device copy bandwidth. Each figure is the time of one
//! `elastic_apply_dot` (y = K x and x·y, as CG calls it: accumulator zeroing,
//! element kernel(s), fix-up of fixed DOFs with the dot), replayed from a
//! CUDA graph of `--reps` applies; "kernel" is the element pass alone
//! (zeroing + element kernels, no fix-up/dot; the atomic schedule only).
//!
//! Byte counts, per apply, w = 8 (F64) or 4 (F32) bytes:
//! - paper: every element gathers 24 values, scatters 24 and reads Eₑ,
//!   nel · 49 · w (the count of arXiv 2604.18020; no reuse between elements);
//! - unique: the interface vectors once, x read and y written in f64, the
//!   fixed mask (1 B/DOF) and Eₑ: dofs · 17 + nel · w.
//!
//! The problem: a cube clamped on the face x = 0, moduli random in
//! [1e-3, 1] with 10 % at Emin = 1e-9, x random in [−1, 1]. Every variant's
//! y is compared with the fused F64 one (relative 2-norm difference).
//! The records, their byte counts and the written report are `report`'s.

mod report;

use super::measure::graph_time_us;
use super::BenchArgs;
use anyhow::{Context, Result};
use cuth::backend::cuda::CudaBackend;
use cuth::backend::Backend;
use cuth::topopt::{hex8_stiffness, ElasticBackend, Mesh, OpPrecision, OperatorKind};
use report::{record, KernelAttrs, Measured, TopoReport};

/// One operator variant to time.
#[derive(Clone, Copy)]
struct Variant {
    kind: OperatorKind,
    prec: OpPrecision,
}

impl Variant {
    fn name(&self) -> String {
        let k = match self.kind {
            OperatorKind::Fused => "fused",
            OperatorKind::NodeCentred => "node-centred",
        };
        let p = match self.prec {
            OpPrecision::F64 => "f64",
            OpPrecision::F32 => "f32",
        };
        format!("{k} {p}")
    }
}

fn variants() -> Vec<Variant> {
    let mut all = Vec::new();
    for kind in [OperatorKind::Fused, OperatorKind::NodeCentred] {
        for prec in [OpPrecision::F64, OpPrecision::F32] {
            all.push(Variant { kind, prec });
        }
    }
    all
}

/// Runs the operator benchmark; see the module documentation.
pub fn run(args: &BenchArgs, knobs: &cuth::knobs::CudaKnobs) -> Result<()> {
    let g =
        CudaBackend::new_with(args.gpu, knobs).context("the topopt benchmark needs a CUDA GPU")?;
    let r = g.report();
    let copy = g.copy_bandwidth(1 << 30, 20)?.gb_per_s;
    eprintln!("bench: {} ({}); copy {copy:.0} GB/s", r.name, r.detail);
    let mut rep = TopoReport {
        command: std::env::args().collect::<Vec<_>>().join(" "),
        gpu: format!("{} ({})", r.name, r.detail),
        copy_gb_per_s: copy,
        reps: args.reps,
        records: vec![],
        kernels: kernel_attrs(&g)?,
    };
    for &n in &args.topopt_sizes {
        size(&g, n, args, copy, &mut rep).with_context(|| format!("topopt bench at {n}^3"))?;
        if let Some(dir) = &args.out {
            rep.write(dir)?;
        }
    }
    println!("{}", rep.markdown());
    if let Some(dir) = &args.out {
        rep.write(dir)?;
        eprintln!("bench: wrote {}", dir.display());
    }
    Ok(())
}

fn size(
    g: &CudaBackend,
    n: usize,
    args: &BenchArgs,
    copy: f64,
    rep: &mut TopoReport,
) -> Result<()> {
    let mesh = Mesh::new(n, n, n);
    let (nel, dofs) = (mesh.elements(), mesh.dofs());
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut uniform = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng >> 11) as f64 / (1u64 << 53) as f64
    };
    let e: Vec<f64> = (0..nel)
        .map(|_| match uniform() {
            u if u < 0.1 => 1e-9,
            u => 1e-3 + u,
        })
        .map(|v| v.min(1.0))
        .collect();
    let x_host: Vec<f64> = (0..dofs).map(|_| 2.0 * uniform() - 1.0).collect();
    let fixed: Vec<bool> = (0..dofs).map(|d| mesh.node_coords(d / 3)[0] == 0).collect();
    let mut op = g.elastic_new(&mesh, &hex8_stiffness(0.3), &fixed, OperatorKind::Fused)?;
    g.elastic_set_moduli(&mut op, &e)?;
    let x = g.upload(&x_host)?;
    let mut y = g.zeros(dofs)?;
    let mut s = g.scalars(1)?;
    // Reference for the agreement column.
    g.elastic_apply_dot(&mut op, OpPrecision::F64, &x, &mut y, &mut s, 0)?;
    let y_ref = g.download(&y)?;
    for v in variants() {
        op.set_kind(v.kind);
        let apply_us = graph_time_us(g, args.reps, || {
            g.elastic_apply_dot(&mut op, v.prec, &x, &mut y, &mut s, 0)
        })?;
        let kernel_us = match v.kind {
            OperatorKind::NodeCentred => None,
            _ => Some(graph_time_us(g, args.reps, || {
                g.topo_element_pass(&mut op, v.prec, &x, &mut y).map(|_| ())
            })?),
        };
        g.elastic_apply_dot(&mut op, v.prec, &x, &mut y, &mut s, 0)?;
        let diff = rel_diff(&g.download(&y)?, &y_ref);
        let measured = Measured {
            apply_us,
            kernel_us,
            copy_gb_per_s: copy,
            rel_diff: diff,
        };
        rep.records.push(record(&mesh, v, &measured));
        let r = rep.records.last().expect("pushed");
        eprintln!(
            "bench: topopt {n}^3 {:<16} {:>9.1} µs ({:>5.1} % of copy by paper bytes, {:>5.1} % unique), diff {:.1e}",
            r.variant,
            r.apply_us,
            100.0 * r.paper_fraction_of_copy,
            100.0 * r.unique_fraction_of_copy,
            diff
        );
    }
    Ok(())
}

fn kernel_attrs(g: &CudaBackend) -> Result<Vec<KernelAttrs>> {
    use cudarc::driver::sys::CUfunction_attribute as A;
    use cuth::topopt::cuda::TOPOPT;
    TOPOPT
        .entry_points
        .iter()
        .map(|&name| {
            let f = g.kernel(&TOPOPT, name)?;
            let get = |a| {
                f.get_attribute(a)
                    .map_err(|e| anyhow::anyhow!("{name}: {e}"))
            };
            Ok(KernelAttrs {
                name: name.into(),
                registers: get(A::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
                local_bytes: get(A::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
                shared_bytes: get(A::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
                max_threads_per_block: get(A::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            })
        })
        .collect()
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    let (mut d, mut r) = (0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        d += (x - y) * (x - y);
        r += y * y;
    }
    (d / r).sqrt()
}
