//! What the benchmark found: one record per SpMV and per PCG solve, printed
//! as markdown tables (for BENCHMARKS.md, with the command that produced
//! them) and written as JSON and CSV when `--out` is given.

use anyhow::{Context, Result};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

#[derive(Clone, Debug, Serialize)]
pub struct SpmvRecord {
    pub device: String,
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub cells: usize,
    /// `rows` or `columns` (the GPU thread schedule; CPU: rows).
    pub schedule: String,
    /// Per SpMV, from a batch of launches between two events (GPU) or the
    /// wall clock (CPU), µs.
    pub batch_us: f64,
    /// Per SpMV replayed from a CUDA graph, µs (GPU only).
    pub graph_us: Option<f64>,
    /// 48 B/row over the graph time when there is one, else the batch time.
    pub gb_per_s: f64,
    pub copy_gb_per_s: f64,
    pub fraction_of_copy: f64,
    pub reps: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct PcgRecord {
    pub device: String,
    pub nx: usize,
    pub ny: usize,
    pub nz: usize,
    pub cells: usize,
    pub precond: String,
    pub degree: Option<usize>,
    pub iterations: usize,
    pub converged: bool,
    pub stop: String,
    /// ‖b − A x‖/‖b‖ recomputed from the final x.
    pub true_rel_residual: f64,
    pub setup_s: f64,
    pub solve_s: f64,
    pub us_per_iter: f64,
    /// Memory traffic per row of one iteration at the DRAM floor.
    pub bytes_per_row_iter: f64,
    /// That traffic at the measured copy bandwidth, µs per iteration.
    pub floor_us_per_iter: f64,
    /// floor / measured time per iteration (1 = at the bandwidth floor).
    pub floor_fraction: f64,
}

/// Copy bandwidths every figure is compared with, GB/s (read + write).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Bandwidths {
    pub gpu_copy_gb_per_s: Option<f64>,
    pub cpu_copy_gb_per_s: Option<f64>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct BenchReport {
    pub command: String,
    pub cuth_version: String,
    pub stack: String,
    pub gpu: Option<String>,
    pub cpu: String,
    pub rtol: f64,
    pub bandwidth: Bandwidths,
    pub spmv: Vec<SpmvRecord>,
    pub pcg: Vec<PcgRecord>,
    /// Chebyshev degree sweep at one size (GPU).
    pub degree_sweep: Vec<PcgRecord>,
    /// Degree of the fastest converged solve of the sweep.
    pub best_degree: Option<usize>,
    /// Mixed-precision ablation (`--precisions`).
    pub precision: Vec<super::precision::PrecisionRecord>,
    pub notes: Vec<String>,
}

fn grid(r_nx: usize, r_ny: usize, r_nz: usize) -> String {
    format!("{r_nx}x{r_ny}x{r_nz}")
}

fn opt_us(v: Option<f64>) -> String {
    v.map_or_else(|| "–".into(), |v| format!("{v:.1}"))
}

fn precond_label(r: &PcgRecord) -> String {
    match r.degree {
        Some(d) => format!("{} {d}", r.precond),
        None => r.precond.clone(),
    }
}

fn iters_label(r: &PcgRecord) -> String {
    if r.converged {
        r.iterations.to_string()
    } else {
        format!("{} (capped)", r.iterations)
    }
}

fn pcg_table(out: &mut String, rows: &[PcgRecord]) {
    out.push_str(
        "| device | grid | cells | precond | iterations | setup s | solve s | µs/iter | \
         B/row/iter | floor µs/iter | floor/measured | true rel. res. |\n",
    );
    out.push_str("|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for r in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {:.3} | {:.3} | {:.1} | {:.0} | {:.1} | {:.2} | {:.1e} |",
            r.device,
            grid(r.nx, r.ny, r.nz),
            r.cells,
            precond_label(r),
            iters_label(r),
            r.setup_s,
            r.solve_s,
            r.us_per_iter,
            r.bytes_per_row_iter,
            r.floor_us_per_iter,
            r.floor_fraction,
            r.true_rel_residual
        );
    }
}

impl BenchReport {
    /// The report as markdown: bandwidths, SpMV, PCG, degree sweep.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "## cuth bench\n\n`{}`\n", self.command);
        let _ = writeln!(out, "- stack: {} (every layer 1 z cell)", self.stack);
        if let Some(g) = &self.gpu {
            let _ = writeln!(out, "- GPU: {g}");
        }
        let _ = writeln!(out, "- CPU: {}", self.cpu);
        if let Some(b) = self.bandwidth.gpu_copy_gb_per_s {
            let _ = writeln!(
                out,
                "- GPU device-to-device copy: {b:.0} GB/s (read + write)"
            );
        }
        if let Some(b) = self.bandwidth.cpu_copy_gb_per_s {
            let _ = writeln!(out, "- CPU parallel copy: {b:.1} GB/s (read + write)");
        }
        for n in &self.notes {
            let _ = writeln!(out, "- note: {n}");
        }
        out.push_str("\n### Quad-Diag SpMV, f64, 48 B/row\n\n");
        out.push_str(
            "| device | grid | cells | schedule | batch µs | graph µs | GB/s | of copy |\n\
             |---|---|---:|---|---:|---:|---:|---:|\n",
        );
        for r in &self.spmv {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.1} | {} | {:.0} | {:.0} % |",
                r.device,
                grid(r.nx, r.ny, r.nz),
                r.cells,
                r.schedule,
                r.batch_us,
                opt_us(r.graph_us),
                r.gb_per_s,
                100.0 * r.fraction_of_copy
            );
        }
        let _ = writeln!(out, "\n### PCG to rtol {:.0e}\n", self.rtol);
        pcg_table(&mut out, &self.pcg);
        if !self.degree_sweep.is_empty() {
            let r0 = &self.degree_sweep[0];
            let _ = writeln!(
                out,
                "\n### Chebyshev degree sweep, {} on {}\n",
                grid(r0.nx, r0.ny, r0.nz),
                r0.device
            );
            pcg_table(&mut out, &self.degree_sweep);
            if let Some(d) = self.best_degree {
                let _ = writeln!(out, "\nfastest converged solve: degree {d}");
            }
        }
        if !self.precision.is_empty() {
            super::precision::markdown(&mut out, &self.precision, self.rtol);
        }
        out
    }

    /// `bench.json`, `spmv.csv`, `pcg.csv` (sweep rows included) in `dir`.
    pub fn write(&self, dir: &Path) -> Result<()> {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        let json = dir.join("bench.json");
        std::fs::write(&json, serde_json::to_string_pretty(self)? + "\n")
            .with_context(|| format!("writing {}", json.display()))?;
        write_csv(&dir.join("spmv.csv"), &self.spmv)?;
        let all: Vec<&PcgRecord> = self.pcg.iter().chain(&self.degree_sweep).collect();
        write_csv(&dir.join("pcg.csv"), &all)?;
        std::fs::write(dir.join("bench.md"), self.markdown())
            .with_context(|| format!("writing {}", dir.join("bench.md").display()))?;
        Ok(())
    }
}

fn write_csv<T: Serialize>(path: &Path, rows: &[T]) -> Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("creating {}", path.display()))?;
    for r in rows {
        w.serialize(r)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}
