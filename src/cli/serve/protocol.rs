//! The serve protocol, version [`PROTOCOL`]: one JSON object per line each
//! way (its reference is the book's serve protocol chapter,
//! `docs/src/serve.md`). A request names its `op`; every
//! reply carries `ok`, the `op`, the simulated time and the last solve's
//! report, and an error reply the message and the field at fault. A
//! request is checked whole before it changes anything, so a refused one
//! leaves the session as it was.

use cuth::output::TempUnit;
use cuth::simulation::{Simulation, SimulationError, SolveReport, State};
use cuth::stack::PowerSpec;
use cuth::thermal::device::ThermalBackend;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Bumped when a request or a reply changes incompatibly.
pub const PROTOCOL: u32 = 1;

/// A request line.
#[derive(Debug, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum Request {
    Info,
    /// Block powers by name, or one layer's power: a map (W per cell) or a
    /// raster file.
    SetPower {
        #[serde(default)]
        blocks: Option<BTreeMap<String, f64>>,
        #[serde(default)]
        layer: Option<String>,
        #[serde(default)]
        map: Option<Vec<f64>>,
        #[serde(default)]
        raster: Option<PathBuf>,
        #[serde(default)]
        total: Option<f64>,
    },
    /// `steps` backward-Euler steps of `dt` s (default one).
    Step {
        dt: f64,
        #[serde(default)]
        steps: Option<usize>,
    },
    Steady,
    Blocks,
    Probes,
    Hottest,
    /// A layer's temperature map (K) to a CSV file.
    Map {
        layer: String,
        path: PathBuf,
    },
    /// The field and time, in memory under `name` or to a state file.
    Save {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        path: Option<PathBuf>,
    },
    Restore {
        #[serde(default)]
        name: Option<String>,
        #[serde(default)]
        path: Option<PathBuf>,
        #[serde(default)]
        time_s: Option<f64>,
    },
    Quit,
}

/// A request refused or failed: the message and the field at fault.
pub struct Refusal {
    pub message: String,
    pub field: Option<String>,
}

impl From<SimulationError> for Refusal {
    fn from(e: SimulationError) -> Self {
        let field = match &e {
            SimulationError::Invalid { field, .. } => Some(field.clone()),
            _ => None,
        };
        Refusal {
            message: format!("{:#}", anyhow::Error::from(e)),
            field,
        }
    }
}

fn refuse(field: &str, message: impl Into<String>) -> Refusal {
    Refusal {
        message: format!("{field}: {}", message.into()),
        field: Some(field.into()),
    }
}

/// Most steps one request may take (a request is answered before the next
/// is read, so a huge count would stall the session).
const MAX_STEPS: usize = 1_000_000;

/// A session: the simulation, its snapshots and its last solve.
pub struct Session<'b, B: ThermalBackend + 'static> {
    pub sim: Simulation<'b, B>,
    saved: BTreeMap<String, State>,
    last: Option<SolveReport>,
}

/// What one request line did: the reply, and whether the session ends.
pub struct Answer {
    pub reply: Value,
    pub quit: bool,
}

impl<'b, B: ThermalBackend + 'static> Session<'b, B> {
    pub fn new(sim: Simulation<'b, B>) -> Self {
        Session {
            sim,
            saved: BTreeMap::new(),
            last: None,
        }
    }

    /// Answers one request line.
    pub fn answer(&mut self, line: &str) -> Answer {
        let raw: Result<Value, _> = serde_json::from_str(line);
        let id = raw.as_ref().ok().and_then(|v| v.get("id")).cloned();
        let (op, result) = match raw {
            Err(e) => (None, Err(refuse("request", format!("not JSON: {e}")))),
            Ok(mut v) => {
                let op = v.get("op").and_then(Value::as_str).map(str::to_string);
                if let Some(o) = v.as_object_mut() {
                    o.remove("id");
                }
                match serde_json::from_value::<Request>(v) {
                    Err(e) => (op, Err(refuse("request", e.to_string()))),
                    Ok(req) => (op, self.dispatch(req)),
                }
            }
        };
        self.reply(op, id, result)
    }

    /// The reply to a line that is no request at all (too long, not text).
    pub fn answer_error(&mut self, message: String) -> Answer {
        self.reply(None, None, Err(refuse("request", message)))
    }

    fn reply(
        &self,
        op: Option<String>,
        id: Option<Value>,
        result: Result<Value, Refusal>,
    ) -> Answer {
        let quit = op.as_deref() == Some("quit") && result.is_ok();
        let mut reply = Map::new();
        reply.insert("ok".into(), json!(result.is_ok()));
        reply.insert("op".into(), json!(op));
        if let Some(id) = id {
            reply.insert("id".into(), id);
        }
        reply.insert("time_s".into(), json!(self.sim.time_s()));
        reply.insert("solver".into(), json!(self.last));
        match result {
            Ok(Value::Object(extra)) => reply.extend(extra),
            Ok(_) => {}
            Err(r) => {
                reply.insert("error".into(), json!(r.message));
                reply.insert("field".into(), json!(r.field));
            }
        }
        Answer {
            reply: Value::Object(reply),
            quit,
        }
    }

    fn dispatch(&mut self, req: Request) -> Result<Value, Refusal> {
        let sim = &mut self.sim;
        Ok(match req {
            Request::Info => json!({ "protocol": PROTOCOL, "info": sim.info() }),
            Request::SetPower {
                blocks,
                layer,
                map,
                raster,
                total,
            } => {
                self.set_power(blocks, layer, map, raster, total)?;
                json!({ "power_w": self.sim.power_w() })
            }
            Request::Step { dt, steps } => {
                let steps = steps.unwrap_or(1);
                if !(1..=MAX_STEPS).contains(&steps) {
                    return Err(refuse(
                        "steps",
                        format!("must be 1 to {MAX_STEPS}, got {steps}"),
                    ));
                }
                let mut iterations = 0;
                for _ in 0..steps {
                    let r = sim.step(dt)?;
                    iterations += r.iterations;
                    self.last = Some(r);
                }
                json!({ "steps": steps, "iterations": iterations })
            }
            Request::Steady => {
                self.last = Some(sim.solve_steady()?);
                json!({})
            }
            Request::Blocks => json!({ "blocks": sim.blocks()? }),
            Request::Probes => json!({ "probes": sim.probes()? }),
            Request::Hottest => json!({ "hottest": sim.hottest()? }),
            Request::Map { layer, path } => {
                let map = sim.layer_map_k(&layer)?;
                write_map(&path, &map, sim.grid())?;
                json!({ "path": path })
            }
            Request::Save { name, path } => self.save(name, path)?,
            Request::Restore { name, path, time_s } => self.restore(name, path, time_s)?,
            Request::Quit => json!({}),
        })
    }

    fn set_power(
        &mut self,
        blocks: Option<BTreeMap<String, f64>>,
        layer: Option<String>,
        map: Option<Vec<f64>>,
        raster: Option<PathBuf>,
        total: Option<f64>,
    ) -> Result<(), Refusal> {
        let sim = &mut self.sim;
        match (blocks, layer, map, raster) {
            (Some(b), None, None, None) => {
                let powers: Vec<(&str, f64)> = b.iter().map(|(k, v)| (k.as_str(), *v)).collect();
                Ok(sim.set_block_powers(&powers)?)
            }
            (None, Some(l), Some(m), None) if total.is_none() => Ok(sim.set_layer_map(&l, m)?),
            (None, Some(l), None, Some(file)) => {
                if total.is_some_and(|t| !(t.is_finite() && t >= 0.0)) {
                    return Err(refuse("total", "must be a finite number of W, at least 0"));
                }
                // Relative to where the server runs, not to the stack file.
                let file = std::path::absolute(&file).unwrap_or(file);
                Ok(sim.set_layer_power(&l, PowerSpec::Raster { file, total })?)
            }
            _ => Err(refuse(
                "set_power",
                "give `blocks` (name: W), or `layer` with `map` (W per cell) or `raster` \
                 (a file, optional `total`)",
            )),
        }
    }

    fn save(&mut self, name: Option<String>, path: Option<PathBuf>) -> Result<Value, Refusal> {
        let state = self.sim.state()?;
        match (name, path) {
            (Some(n), None) => {
                self.saved.insert(n.clone(), state);
                Ok(json!({ "name": n }))
            }
            (None, Some(p)) => {
                let bytes = cuth::thermal::transient::state::encode_state(
                    self.sim.grid(),
                    &state.temperature_k,
                );
                write_file(&p, &bytes)?;
                Ok(json!({ "path": p }))
            }
            _ => Err(refuse(
                "save",
                "give `name` (kept in memory) or `path` (a state file)",
            )),
        }
    }

    fn restore(
        &mut self,
        name: Option<String>,
        path: Option<PathBuf>,
        time_s: Option<f64>,
    ) -> Result<Value, Refusal> {
        let mut state = match (name, path) {
            (Some(n), None) => (self.saved.get(&n).cloned())
                .ok_or_else(|| refuse("name", format!("no state saved as `{n}`")))?,
            (None, Some(p)) => State {
                time_s: 0.0,
                temperature_k: cuth::thermal::transient::state::read_state(&p, self.sim.grid())
                    .map_err(|e| refuse("path", format!("{:#}", anyhow::Error::from(e))))?,
            },
            _ => {
                return Err(refuse(
                    "restore",
                    "give `name` (saved in memory) or `path` (a state file)",
                ))
            }
        };
        if let Some(t) = time_s {
            state.time_s = t;
        }
        self.sim.restore(&state)?;
        Ok(json!({}))
    }
}

/// A layer map as `cuth solve` writes its CSVs (the unit and the cell
/// centres in mm as comment lines, first row the top edge), in K.
fn write_map(path: &std::path::Path, map: &[f64], grid: &cuth::grid::Grid) -> Result<(), Refusal> {
    let mut bytes = Vec::new();
    cuth::output::csv::write_layer_csv_with_coords(&mut bytes, map, grid, TempUnit::Kelvin)
        .map_err(|e| refuse("path", e.to_string()))?;
    write_file(path, &bytes)
}

/// Writes `bytes` to `path` whole or not at all: through a temporary in
/// its directory, renamed over it.
fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), Refusal> {
    let bad = |e: &dyn std::fmt::Display| refuse("path", format!("{}: {e}", path.display()));
    cuth::output::transaction::check_file_target(path).map_err(|e| bad(&e))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| bad(&e))?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(|e| bad(&e))?;
    tmp.persist(path).map_err(|e| bad(&e.error))?;
    Ok(())
}
