//! HotSpot → cuth. Layers come from the `.lcf` (layer 0 is the farthest from
//! the heat sink, so it is cuth's bottom layer) or, without one, from
//! HotSpot's default chip + interface layers on a single `.flp`; HotSpot's
//! package (spreader, sink, convection resistance) goes on top. Floorplans
//! and the power trace are referenced by relative paths, not copied, so the
//! stack and HotSpot read the same files.
//!
//! The package is HotSpot's own (`hotspot_package`): the sink is the domain,
//! the chip's layers and the spreader have their own centred outlines, and
//! `r_convec` is an `h_top` over the sink. A microchannel layer
//! (`-use_microchannels 1`, a `.csv` in the `.lcf`) becomes a 4RM cavity
//! (`hotspot_coolant`), and the domain is then the chip. The secondary
//! path, leakage loop, detailed package model, `-use_microfluidic_cooling`
//! and layers without lateral flow are errors.

use super::emit::{Conductivity, LayerDoc, MaterialDoc, PowerDoc, StackDoc};
use super::hotspot_coolant::{self as coolant, liquid_domain};
use super::hotspot_files::{parse_config, HsConfig, Setting};
use super::hotspot_keys::{self as keys, default as d};
use super::hotspot_layers::{chip_layers, footprint, unsupported, Materials, Pending};
use super::hotspot_package::package;
use super::{beside, read_text, relative_to, ImportError, Imported};
use crate::formats::ptrace::{read_ptrace, PowerTrace};
use std::path::{Path, PathBuf};

/// What `cuth import hotspot` was given.
#[derive(Clone, Debug)]
pub struct HotspotInput {
    pub config: PathBuf,
    /// Layer configuration file (else the config's `-grid_layer_file`).
    pub lcf: Option<PathBuf>,
    /// Single floorplan for HotSpot's default layers (else the config's `-f`).
    pub flp: Option<PathBuf>,
    /// Power trace (else the config's `-p`).
    pub ptrace: Option<PathBuf>,
    /// HotSpot 7 materials file (else the config's `-materials_file`).
    pub materials: Option<PathBuf>,
    /// Where the TOML will be written (relative paths are taken from its directory).
    pub out: PathBuf,
    /// A uniform `nx` × `ny` grid over the whole package instead of the
    /// non-uniform grid of HotSpot's cell size over the chip.
    pub uniform_grid: bool,
    /// HotSpot settings given on its command line (`-name value`, without
    /// the dash): they override the configuration file's, as in HotSpot.
    pub flags: Vec<(String, String)>,
}

/// Whether `-name` is a HotSpot setting this import knows (used or
/// deliberately without effect), so a command-line typo is caught up front.
pub fn is_setting(name: &str) -> bool {
    keys::is_used(name) || keys::no_effect(name).is_some()
}

pub fn import(inp: &HotspotInput) -> Result<Imported, ImportError> {
    let mut cfg = parse_config(&read_text(&inp.config)?, &inp.config)?;
    for (name, value) in &inp.flags {
        let value = value.clone();
        cfg.settings
            .insert(name.clone(), Setting { value, line: 0 });
    }
    let cf = &inp.config;
    let (mut footer, names) = check_settings(&cfg, cf)?;

    let mats = Materials::new(&cfg, inp.materials.clone())?;
    let mut notes = Vec::new();
    if let Some(p) = mats.missing() {
        notes.push(format!(
            "materials file {} not found: nothing in this model names a material, so it is not needed",
            p.display()
        ));
    }
    let (mut layers, source) = chip_layers(
        inp.lcf.as_deref(),
        inp.flp.as_deref(),
        &cfg,
        &mats,
        &names,
        &mut footer,
    )?;
    let (width, length) = footprint(&layers, cf)?;
    let liquid = layers.iter().any(|l| l.network.is_some());
    if !liquid && cfg.num("use_microchannels", 0.0)? != 0.0 {
        footer
            .push("  -use_microchannels 1 (no layer of the .lcf names a microchannel .csv)".into());
    }
    let pkg = if liquid {
        liquid_domain(&cfg, &mats, &mut layers, (width, length), &mut notes)?
    } else {
        package(&cfg, &mats, (width, length), inp.uniform_grid)?
    };
    if !liquid {
        for l in &mut layers {
            l.outline = Some(pkg.die);
        }
    }
    layers.extend(pkg.layers);

    // Power: the trace must cover every unit of every powered layer.
    let ptrace = inp
        .ptrace
        .clone()
        .or_else(|| cfg.text("p").map(|s| beside(cf, &s.value)));
    let trace = match &ptrace {
        Some(p) => Some(read_ptrace(p)?),
        None => None,
    };
    check_trace(&layers, trace.as_ref(), cf)?;

    let out_dir = inp.out.parent().unwrap_or(Path::new("")).to_path_buf();
    let rel = |p: &Path| {
        relative_to(p, &out_dir)
            .to_string_lossy()
            .replace('\\', "/")
    };
    let mut doc = StackDoc {
        header: vec![
            format!("Imported by `cuth import hotspot` from {} and {}.", source, cf.display()),
            "Floorplans and the power trace are referenced (paths relative to this file), not copied.".into(),
            "Units: HotSpot's are SI already (m, W/(m K) = 1/resistivity, J/(m^3 K)).".into(),
        ],
        title: format!("HotSpot import: {}", Path::new(&source).file_name().map_or(source.clone(), |f| f.to_string_lossy().into_owned())),
        package: !liquid,
        width: if liquid { width } else { pkg.side },
        length: if liquid { length } else { pkg.side },
        chip_comment: pkg.chip_comment,
        nx: pkg.nx,
        ny: pkg.ny,
        cell: pkg.cell,
        grid_comment: pkg.grid_comment,
        ambient: cfg.num("ambient", d::AMBIENT)?,
        h_top: pkg.h_top,
        h_bottom: None,
        boundary_comment: vec![
            pkg.h_comment,
            format!("-c_convec {} J/K (lumped sink capacitance) has no counterpart: transients differ from HotSpot's.",
                cfg.num("c_convec", d::C_CONVEC)?),
            "Adiabatic bottom: HotSpot's primary path only (-model_secondary 0).".into(),
        ],
        ..Default::default()
    };
    let trace_file = ptrace.as_ref().map(|p| rel(p));
    add_layers(&mut doc, &layers, pkg.die, &rel, trace_file.as_deref());

    let intvl = cfg.num("sampling_intvl", d::SAMPLING_INTVL)?;
    let map_mode = grid_map_mode(&cfg)?;
    doc.block_map = Some(map_mode.clone());
    let lcf = inp.lcf.is_some() || cfg.text("grid_layer_file").is_some();
    doc.hotspot = Some((
        cfg.count("grid_rows", d::GRID)?,
        cfg.count("grid_cols", d::GRID)?,
        if lcf { "lcf" } else { "default" },
    ));
    model_notes(&cfg, &map_mode, doc.ambient, &mut footer, &mut notes)?;
    if liquid {
        // The note is about HotSpot's spreader-sink link, which a liquid
        // import replaces by a film.
        notes.retain(|n| n != DETAILED_3D_NOTE);
    }
    if let (Some(p), Some(t)) = (&ptrace, &trace) {
        let hint = transient_hint(&inp.out, p, intvl, t.rows.len(), &mut footer);
        notes.push(format!(
            "transient: pass the sampling interval yourself: {hint}"
        ));
    }
    doc.footer = footer;
    let toml = coolant::with_cavities(doc.render(), &layers);
    super::check_loads(&toml, &inp.out)?;
    Ok(Imported {
        toml,
        extra: Vec::new(),
        notes,
        next: Some(format!(
            "cuth solve {}    # blocks.steady: each block's {map_mode} (-grid_map_mode {map_mode}); \
             HotSpot's files too ([output] hotspot)",
            inp.out.display()
        )),
    })
}

/// What becomes of the model type, map mode, detailed-3D mode, `-c_convec`
/// and HotSpot's initial temperatures: the footer's lines and stderr notes.
fn model_notes(
    cfg: &HsConfig,
    map_mode: &str,
    ambient: f64,
    footer: &mut Vec<String>,
    notes: &mut Vec<String>,
) -> Result<(), ImportError> {
    let model = cfg
        .text("model_type")
        .map_or("block".to_string(), |s| s.value.clone());
    let init = cfg.num("init_temp", d::INIT_TEMP)?;
    footer.push(String::new());
    footer.push(format!("-model_type {model}: cuth is a grid model (as -model_type grid); the block model lumps each unit."));
    footer.push(format!("-grid_map_mode {map_mode}: [output] block_map above (blocks.steady as HotSpot's); blocks.csv has min/avg/max."));
    notes.push(format!("blocks.steady reports each block's {map_mode} temperature, as -grid_map_mode {map_mode} ([output] block_map; --block-map overrides it)"));
    if let Some(s) = cfg.text("detailed_3D") {
        footer.push(format!("-detailed_3D {}: cuth always applies floorplan units' own materials (by area fraction).", s.value));
        if s.value == "on" {
            notes.push(DETAILED_3D_NOTE.into());
        }
    }
    notes.push(format!(
        "-c_convec {} J/K dropped: cuth has no lumped sink capacitance, so transients differ from HotSpot's",
        cfg.num("c_convec", d::C_CONVEC)?
    ));
    if let Some(s) = cfg.text("init_file") {
        footer.push(format!("-init_file {}: HotSpot's temperature file is not a cuth state; use --init steady or a --save-state file.", s.value));
    } else if init != ambient {
        footer.push(format!("-init_temp {init} K: cuth transients start at ambient or --init steady/FILE, not a uniform {init} K."));
    }
    Ok(())
}

/// The suggested transient command for a trace of `rows` rows `intvl`
/// apart, and why, added to `footer`.
fn transient_hint(
    out: &Path,
    ptrace: &Path,
    intvl: f64,
    rows: usize,
    footer: &mut Vec<String>,
) -> String {
    let t_end = super::round12(rows as f64 * intvl);
    let hint = format!(
        "cuth transient {} --trace {} --sample-interval {intvl:?} --scheme trbdf2 --dt {intvl:?} \
         --time-tol 0.01 --t-end {t_end:?} --init steady-mean",
        out.display(),
        ptrace.display(),
    );
    footer.push(String::new());
    footer.push(format!("Transient: the trace's sampling interval is -sampling_intvl {intvl:?} s; the stack has no key for it."));
    footer.push("Backward Euler at the interval itself under-resolves the swing (HotSpot's example 2: 8.8 K of".into());
    footer.push("10.15 K; a tenth of it: 10.06 K); TR-BDF2 with adaptive steps of at most the interval and a".into());
    footer.push("0.01 K local error resolves it (10.16 K), with a record at every row. The start is the steady".into());
    footer
        .push("state of the trace's mean power, as HotSpot's run.sh starts its transient:".into());
    footer.push(format!("  {hint}"));
    hint
}

/// The configuration's settings checked before anything is built: the
/// footer's list of those without effect on this model and the names in
/// file order; an unknown setting, or a model cuth does not have (secondary
/// path, leakage loop, detailed package, microfluidics), is an error.
fn check_settings(cfg: &HsConfig, cf: &Path) -> Result<(Vec<String>, Vec<String>), ImportError> {
    let mut footer = vec![String::from(
        "HotSpot settings with no effect on this model:",
    )];
    let mut names: Vec<_> = cfg.settings.keys().cloned().collect();
    names.sort_by_key(|n| cfg.line(n));
    // Under -use_microchannels 1 the coolant's settings are the cavity's
    // (its comments state each); otherwise they have no effect.
    let channels = cfg.num("use_microchannels", 0.0)? != 0.0;
    for n in &names {
        if channels && coolant::SETTINGS.contains(&n.as_str()) {
            continue;
        }
        if let Some(why) = keys::no_effect(n) {
            footer.push(format!("  -{n} {} ({why})", cfg.settings[n].value));
        } else if !keys::is_used(n) {
            return Err(ImportError::Syntax {
                file: cf.to_path_buf(),
                line: cfg.line(n),
                message: format!("unknown HotSpot setting `-{n}`"),
            });
        }
    }
    let flag = |n: &str| -> Result<bool, ImportError> { Ok(cfg.num(n, 0.0)? != 0.0) };
    if flag("model_secondary")? {
        return Err(unsupported(cf, cfg.line("model_secondary"),
            "HotSpot's secondary heat path (-model_secondary 1: C4/underfill, substrate, solder, PCB)",
            "its package layers are wider than the die and it needs a second convection path; \
             set -model_secondary 0, or model the path as layers under the die with h_bottom"));
    }
    if flag("leakage_used")? {
        return Err(unsupported(
            cf,
            cfg.line("leakage_used"),
            "the temperature-leakage loop (-leakage_used 1)",
            "cuth's power does not depend on temperature",
        ));
    }
    if flag("package_model_used")? {
        return Err(unsupported(
            cf,
            cfg.line("package_model_used"),
            "HotSpot's detailed package model (-package_model_used 1)",
            "cuth has no fin/fan convection model; give the r_convec it computes instead",
        ));
    }
    if flag("use_microfluidic_cooling")? {
        return Err(unsupported(
            cf,
            cfg.line("use_microfluidic_cooling"),
            "microfluidic cooling (-use_microfluidic_cooling 1)",
            "cuth has no fluid cells",
        ));
    }
    Ok((footer, names))
}

/// Every powered layer's units must have a column in the trace, and a
/// powered layer needs a trace at all.
fn check_trace(
    layers: &[Pending],
    trace: Option<&PowerTrace>,
    cf: &Path,
) -> Result<(), ImportError> {
    for l in layers.iter().filter(|l| l.power) {
        let Some(t) = trace else {
            return Err(ImportError::Invalid {
                file: cf.to_path_buf(),
                message: format!(
                    "{} dissipates power but no power trace was given: pass --ptrace POWER.ptrace",
                    l.name
                ),
            });
        };
        let (fp, units) = l
            .floorplan
            .as_ref()
            .expect("powered layers have floorplans");
        let missing: Vec<&str> = units
            .iter()
            .filter(|u| t.column(&u.name).is_none())
            .map(|u| u.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ImportError::Invalid {
                file: t.file.clone(),
                message: format!(
                    "no column for unit(s) {} of {} ({})",
                    missing.join(", "),
                    fp.display(),
                    l.name
                ),
            });
        }
    }
    Ok(())
}

/// The layers and their materials into `doc` (one material per distinct
/// k and heat capacity), `die` the chip's outline, `rel` a path as the
/// stack file names it, `trace_file` the trace so named.
fn add_layers(
    doc: &mut StackDoc,
    layers: &[Pending],
    die: [f64; 4],
    rel: &dyn Fn(&Path) -> String,
    trace_file: Option<&str>,
) {
    for l in layers {
        let name = l
            .material_name
            .clone()
            .unwrap_or_else(|| format!("k{}_c{:e}", l.k, l.c));
        if !doc.materials.iter().any(|m| m.name == name) {
            doc.materials.push(MaterialDoc {
                name: name.clone(),
                k: Conductivity::Iso(l.k),
                heat_capacity: l.c,
                comment: vec![match &l.material_name {
                    Some(n) => format!("material `{n}` of the materials file"),
                    None => format!(
                        "k {} W/(m K), heat capacity {:e} J/(m^3 K); used by {}",
                        l.k,
                        l.c,
                        layers
                            .iter()
                            .filter(|o| o.material_name.is_none() && o.k == l.k && o.c == l.c)
                            .map(|o| o.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                }],
            });
        }
        let mut comment = l.comment.clone();
        if l.outline == Some(die) {
            comment.push("The chip's outline, centred on the sink, nothing around it (fill \"none\"); the floorplan".into());
            comment.push("is placed at the outline's lower-left corner, unchanged.".into());
        }
        if let Some((_, units)) = &l.floorplan {
            let n = units.iter().filter(|u| u.material.is_some()).count();
            if n > 0 {
                comment.push(format!("{n} of {} units carry specific-heat/resistivity columns: cuth mixes them into each cell", units.len()));
                comment.push("by area fraction; HotSpot applies them with -detailed_3D on (per cell, above an occupancy threshold).".into());
            }
        }
        doc.layers.push(LayerDoc {
            name: l.name.clone(),
            material: name,
            thickness: l.thickness,
            cells: l.cells,
            floorplan: l.floorplan.as_ref().map(|(p, _)| rel(p)),
            power: (l.power).then(|| PowerDoc::Ptrace {
                file: trace_file.expect("checked above").to_string(),
            }),
            outline: l.outline,
            fill: l.outline.map(|_| "none".to_string()),
            comment,
        });
    }
}

/// HotSpot 7.0's `-detailed_3D on` joins spreader and sink through half of
/// the sink's `rz`, and that `rz` includes the convection resistance's share
/// (`find_res_3D` in its `temperature_grid.c`): a package result hotter than
/// the physics, which users comparing the two should expect.
const DETAILED_3D_NOTE: &str = "-detailed_3D on: expect HotSpot 7.0's own temperatures to be hotter than cuth's: \
     its detailed-3D spreader-sink link takes half of the sink's rz including the convection share, \
     so convection under the die is counted 1.5 times (HotSpot's example 4: 390.36 K as shipped, \
     362.74 K with that link's conduction rz only, cuth 361.42 K)";

/// `-grid_map_mode`, HotSpot's `center` when absent; checked here so that
/// a typo names the config line rather than the generated TOML.
fn grid_map_mode(cfg: &super::hotspot_files::HsConfig) -> Result<String, ImportError> {
    let Some(s) = cfg.text("grid_map_mode") else {
        return Ok("center".into());
    };
    match s.value.as_str() {
        "max" | "avg" | "min" | "center" => Ok(s.value.clone()),
        other => Err(ImportError::Syntax {
            file: cfg.file.clone(),
            line: s.line,
            message: format!("-grid_map_mode must be max, avg, min or center, got `{other}`"),
        }),
    }
}
