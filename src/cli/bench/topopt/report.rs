//! The records of `cuth bench --topopt` and the report they make: one
//! [`TopoRecord`] per mesh and variant with the byte counts and bandwidths of
//! the parent module's doc, the kernels' attributes, and the same report as
//! `topopt.json` and `topopt.md`. Split from `topopt.rs` so that the
//! measurement there (variants, CUDA-graph timing) reads apart from this
//! bookkeeping.

use super::Variant;
use anyhow::Result;
use cuth::topopt::cuda::FUSED_BLOCK;
use cuth::topopt::{Mesh, OpPrecision, OperatorKind};
use serde::Serialize;
use std::fmt::Write as _;

#[derive(Clone, Debug, Serialize)]
pub struct TopoRecord {
    pub n: usize,
    pub elements: usize,
    pub dofs: usize,
    pub variant: String,
    pub kind: OperatorKind,
    pub precision: OpPrecision,
    pub block: Option<u32>,
    /// One apply_dot, µs.
    pub apply_us: f64,
    /// The element pass alone, µs.
    pub kernel_us: Option<f64>,
    pub paper_bytes: u64,
    pub unique_bytes: u64,
    pub paper_gb_per_s: f64,
    pub paper_fraction_of_copy: f64,
    pub unique_gb_per_s: f64,
    pub unique_fraction_of_copy: f64,
    /// ‖y − y_fused_f64‖₂ / ‖y_fused_f64‖₂.
    pub rel_diff_vs_fused_f64: f64,
}

/// What the driver reports of a compiled kernel (spills show as local bytes).
#[derive(Clone, Debug, Serialize)]
pub struct KernelAttrs {
    pub name: String,
    pub registers: i32,
    pub local_bytes: i32,
    pub shared_bytes: i32,
    pub max_threads_per_block: i32,
}

#[derive(Debug, Default, Serialize)]
pub struct TopoReport {
    pub command: String,
    pub gpu: String,
    pub kernels: Vec<KernelAttrs>,
    pub copy_gb_per_s: f64,
    pub reps: usize,
    pub records: Vec<TopoRecord>,
}

/// What one variant measured at one size.
pub(super) struct Measured {
    /// One apply_dot, µs.
    pub apply_us: f64,
    /// The element pass alone, µs (the atomic schedule only).
    pub kernel_us: Option<f64>,
    /// The same run's device copy bandwidth, the yardstick of the fractions.
    pub copy_gb_per_s: f64,
    /// ‖y − y_fused_f64‖₂ / ‖y_fused_f64‖₂.
    pub rel_diff: f64,
}

/// The record of variant `v` on the n×n×n `mesh`.
pub(super) fn record(mesh: &Mesh, v: Variant, m: &Measured) -> TopoRecord {
    let (nel, dofs) = (mesh.elements() as u64, mesh.dofs() as u64);
    let w = match v.prec {
        OpPrecision::F64 => 8,
        OpPrecision::F32 => 4,
    };
    let paper_bytes = nel * 49 * w;
    let unique_bytes = dofs * 17 + nel * w;
    let gbs = |b: u64| b as f64 / (m.apply_us * 1e-6) / 1e9;
    TopoRecord {
        n: mesh.nelx,
        elements: mesh.elements(),
        dofs: mesh.dofs(),
        variant: v.name(),
        kind: v.kind,
        precision: v.prec,
        block: (v.kind == OperatorKind::Fused).then_some(FUSED_BLOCK),
        apply_us: m.apply_us,
        kernel_us: m.kernel_us,
        paper_bytes,
        unique_bytes,
        paper_gb_per_s: gbs(paper_bytes),
        paper_fraction_of_copy: gbs(paper_bytes) / m.copy_gb_per_s,
        unique_gb_per_s: gbs(unique_bytes),
        unique_fraction_of_copy: gbs(unique_bytes) / m.copy_gb_per_s,
        rel_diff_vs_fused_f64: m.rel_diff,
    }
}

impl TopoReport {
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "GPU: {}  ", self.gpu);
        let _ = writeln!(
            s,
            "Device copy bandwidth (same run): {:.0} GB/s; {} applies per CUDA graph, median of 3 replays.\n",
            self.copy_gb_per_s, self.reps
        );
        let _ = writeln!(
            s,
            "| kernel | registers | local B (spills) | shared B | max threads/block |"
        );
        let _ = writeln!(s, "|---|---:|---:|---:|---:|");
        for k in &self.kernels {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} |",
                k.name, k.registers, k.local_bytes, k.shared_bytes, k.max_threads_per_block
            );
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "| mesh | elements | variant | apply µs | kernel µs | paper GB/s | % copy | unique GB/s | % copy | rel diff vs fused f64 |"
        );
        let _ = writeln!(s, "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|");
        for r in &self.records {
            let _ = writeln!(
                s,
                "| {n}³ | {} | {} | {:.1} | {} | {:.0} | {:.1} | {:.0} | {:.1} | {:.1e} |",
                r.elements,
                r.variant,
                r.apply_us,
                r.kernel_us.map_or("—".into(), |k| format!("{k:.1}")),
                r.paper_gb_per_s,
                100.0 * r.paper_fraction_of_copy,
                r.unique_gb_per_s,
                100.0 * r.unique_fraction_of_copy,
                r.rel_diff_vs_fused_f64,
                n = r.n,
            );
        }
        s
    }

    pub fn write(&self, dir: &std::path::Path) -> Result<()> {
        // One output transaction (staged, locked, renamed into place).
        let txn = cuth::output::Transaction::begin(dir, cuth::output::Owned::Nothing)?;
        txn.write(
            std::path::Path::new("topopt.json"),
            (serde_json::to_string_pretty(self)? + "\n").as_bytes(),
        )?;
        txn.write(
            std::path::Path::new("topopt.md"),
            self.markdown().as_bytes(),
        )?;
        txn.commit()?;
        Ok(())
    }
}
