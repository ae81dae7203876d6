//! Outputs of a transient run, through one output [`Transaction`]: snapshots
//! are written during the run (they cannot all wait in memory) into the
//! run's private staging directory; at the end the final maps, the time
//! series, the plot and the summary go there too, and only then is
//! everything committed: `final/` and `snapshots/` replace any earlier ones,
//! stale files are removed. A failed run (or one ended by a signal) removes
//! the staging directory, so `<out>` holds either the previous results or
//! the complete new ones.

use super::plot::{self, LinePlot, Series};
use super::timeseries::timeseries_csv;
use super::transaction::{Owned, Transaction};
use super::write::{render_steady, stage, Rendered};
use super::{OutputError, OutputOptions, SteadyView};
use crate::thermal::transient::{StepRecord, TransientSummary};
use std::path::{Path, PathBuf};

pub struct TransientWriter {
    txn: Transaction,
    /// (time, `snapshots/step_NNNNN/field.vtr`) of each VTK snapshot.
    vtk_snapshots: Vec<(f64, String)>,
    /// An imported 3D-ICE stack's map frames, gathered at the snapshots.
    peer: super::threedice::TransientMaps,
}

fn io(path: &Path, source: std::io::Error) -> OutputError {
    OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl TransientWriter {
    /// Begins the run's output transaction in `out`.
    pub fn new(out: &Path) -> Result<TransientWriter, OutputError> {
        Ok(TransientWriter {
            txn: Transaction::begin(out, Owned::Thermal)?,
            vtk_snapshots: Vec::new(),
            peer: Default::default(),
        })
    }

    /// Stages `bytes` for a file outside `out` (`--save-state`), moved into
    /// place by the commit.
    pub fn stage_external(&mut self, dest: &Path, bytes: &[u8]) -> Result<(), OutputError> {
        self.txn.stage_external(dest, bytes)
    }

    /// A file of the run's own (`name` under `out`), staged now and written
    /// as the run goes.
    pub fn create(&self, name: &str) -> Result<std::fs::File, OutputError> {
        self.txn.create(Path::new(name))
    }

    /// The maps of step `step` (at `time_s`) under `snapshots/step_NNNNN/`
    /// (staged).
    pub fn snapshot(
        &mut self,
        step: usize,
        time_s: f64,
        view: &SteadyView,
        opts: &OutputOptions,
    ) -> Result<(), OutputError> {
        self.peer.snapshot(view, time_s);
        let dir = Path::new("snapshots").join(format!("step_{step:05}"));
        if opts.vtk {
            let file = format!("snapshots/step_{step:05}/field.vtr");
            self.vtk_snapshots.push((time_s, file));
        }
        let files = render_steady(&self.txn.out().join(&dir), view, opts)?;
        stage(&self.txn, &dir, &files)
    }

    /// Writes the final maps (unless `final_maps` is false), the time series,
    /// the plot, the summary and an imported 3D-ICE stack's own files, and
    /// moves everything into place.
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
        let y_label = format!("max temperature ({})", super::png::unit_label(unit));
        let image_error = |message: String| OutputError::Image {
            path: self.txn.out().join("temperature.png"),
            message,
        };
        let img = plot::render(&LinePlot {
            title: "hottest cell of each layer",
            x_label: "time (s)",
            y_label: &y_label,
            x: &x,
            series,
        })
        .map_err(|e| image_error(e.to_string()))?;
        let png = super::png::encode(&img).map_err(|e| image_error(e.to_string()))?;
        let json = serde_json::to_string_pretty(summary)
            .map_err(|e| io(&self.txn.out().join("summary.json"), e.into()))?;
        let probes: Vec<String> = final_view
            .stack
            .probes
            .iter()
            .map(|p| p.name.clone())
            .collect();
        let timeseries = timeseries_csv(records, &layers, block_names, &probes, unit)
            .map_err(|e| io(&self.txn.out().join("timeseries.csv"), e))?;
        let peer = std::mem::take(&mut self.peer);
        let mut files = peer.files(final_view, records, block_names);
        if records.iter().any(|r| !r.coolant_outlets.is_empty()) {
            let instants: Vec<_> = (records.iter())
                .map(|r| (r.time_s, r.coolant_outlets.clone()))
                .collect();
            files.extend(super::threedice::tcoolant_files(
                final_view.stack,
                &instants,
            ));
        }
        files.extend([
            Rendered {
                name: "timeseries.csv".into(),
                bytes: timeseries.into_bytes(),
            },
            Rendered {
                name: "temperature.png".into(),
                bytes: png,
            },
            Rendered {
                name: "summary.json".into(),
                bytes: (json + "\n").into_bytes(),
            },
        ]);
        // ParaView's time collection: the snapshots, else the final field.
        let mut series = self.vtk_snapshots.clone();
        if series.is_empty() && final_maps {
            let t_end = records.last().map_or(0.0, |r| r.time_s);
            series.push((t_end, "final/field.vtr".into()));
        }
        if opts.vtk && !series.is_empty() {
            files.push(Rendered {
                name: "field.pvd".into(),
                bytes: super::vtk::pvd(&series).into_bytes(),
            });
        }
        if final_maps {
            let dir = Path::new("final");
            let maps = render_steady(&self.txn.out().join(dir), final_view, opts)?;
            stage(&self.txn, dir, &maps)?;
        }
        stage(&self.txn, Path::new(""), &files)?;
        self.txn.commit()
    }
}
