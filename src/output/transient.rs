//! Outputs of a transient run, staged: snapshots are written during the run
//! (they cannot all wait in memory) into `<out>/.transient.tmp/`; at the end
//! the final maps go there too, and only then is everything moved into
//! place: `final/` and `snapshots/` replace any earlier ones, and
//! `summary.json`, `timeseries.csv` and `temperature.png` are staged and
//! renamed like the steady outputs. A failed run removes the staging
//! directory (also when dropped without [`TransientWriter::commit`]), so
//! `<out>` holds either the previous results or the complete new ones.

use super::plot::{self, LinePlot, Series};
use super::timeseries::timeseries_csv;
use super::write::{commit, write_steady, Rendered};
use super::{OutputError, OutputOptions, SteadyView};
use crate::thermal::transient::{StepRecord, TransientSummary};
use std::fs;
use std::path::{Path, PathBuf};

pub struct TransientWriter {
    out: PathBuf,
    staging: PathBuf,
    created_out: bool,
    done: bool,
}

fn io(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl TransientWriter {
    /// Prepares `<out>/.transient.tmp/` (emptied if a crashed run left one).
    pub fn new(out: &Path) -> Result<TransientWriter, OutputError> {
        let created_out = !out.is_dir();
        let staging = out.join(".transient.tmp");
        if staging.exists() {
            fs::remove_dir_all(&staging).map_err(|e| io(&staging, e))?;
        }
        fs::create_dir_all(&staging).map_err(|e| io(&staging, e))?;
        Ok(TransientWriter {
            out: out.to_path_buf(),
            staging,
            created_out,
            done: false,
        })
    }

    /// The maps of step `step` under `snapshots/step_NNNNN/` (staged).
    pub fn snapshot(
        &self,
        step: usize,
        view: &SteadyView,
        opts: &OutputOptions,
    ) -> Result<(), OutputError> {
        let dir = self
            .staging
            .join("snapshots")
            .join(format!("step_{step:05}"));
        write_steady(&dir, view, opts).map(|_| ())
    }

    /// Writes the final maps (unless `final_maps` is false), the time series,
    /// the plot and the summary and moves everything into place.
    pub fn commit(
        mut self,
        final_view: &SteadyView,
        records: &[StepRecord],
        block_names: &[String],
        summary: &TransientSummary,
        opts: &OutputOptions,
        final_maps: bool,
    ) -> Result<Vec<PathBuf>, OutputError> {
        let layers: Vec<String> = final_view
            .stack
            .layers
            .iter()
            .map(|l| l.name.clone())
            .collect();
        let unit = opts.unit;
        let x: Vec<f64> = records.iter().map(|r| r.time_s).collect();
        let series = layers
            .iter()
            .enumerate()
            .map(|(l, name)| Series {
                name,
                y: records
                    .iter()
                    .map(|r| unit.convert_k(r.layer_max_k[l]))
                    .collect(),
            })
            .collect();
        let title = format!(
            "max temperature per layer ({})",
            super::png::unit_label(unit)
        );
        let img = plot::render(&LinePlot {
            title: &title,
            x_label: "time (s)",
            x: &x,
            series,
        });
        let png = super::png::encode(&img).map_err(|e| OutputError::Image {
            path: self.out.join("temperature.png"),
            message: e.to_string(),
        })?;
        let json = serde_json::to_string_pretty(summary)
            .map_err(|e| io(&self.out.join("summary.json"), e.into()))?;
        let files = vec![
            Rendered {
                name: "timeseries.csv".into(),
                bytes: timeseries_csv(records, &layers, block_names, unit).into_bytes(),
            },
            Rendered {
                name: "temperature.png".into(),
                bytes: png,
            },
            Rendered {
                name: "summary.json".into(),
                bytes: (json + "\n").into_bytes(),
            },
        ];
        if final_maps {
            write_steady(&self.staging.join("final"), final_view, opts)?;
        }

        // Move the staged directories into place, replacing old ones.
        let mut written = Vec::new();
        for name in ["final", "snapshots"] {
            let (src, dst) = (self.staging.join(name), self.out.join(name));
            if dst.exists() {
                fs::remove_dir_all(&dst).map_err(|e| io(&dst, e))?;
            }
            if src.exists() {
                fs::rename(&src, &dst).map_err(|e| io(&dst, e))?;
                written.push(dst);
            }
        }
        written.extend(commit(&self.out, &files)?);
        fs::remove_dir_all(&self.staging).map_err(|e| io(&self.staging, e))?;
        self.done = true;
        Ok(written)
    }
}

impl Drop for TransientWriter {
    fn drop(&mut self) {
        if !self.done {
            let _ = fs::remove_dir_all(&self.staging);
            if self.created_out {
                // Only succeeds when empty: removes nothing but our own dir.
                let _ = fs::remove_dir(&self.out);
            }
        }
    }
}
