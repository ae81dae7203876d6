//! The layers of a HotSpot import below the package: from the `.lcf`, or
//! HotSpot's default chip + interface layers on one `.flp`; the materials
//! they name (HotSpot 7 materials file); and the footprint, which HotSpot
//! requires all floorplans to share.

use super::hotspot_files::{
    parse_lcf, parse_materials, HsConfig, HsMaterial, LcfLayer, LcfMaterial,
};
use super::hotspot_keys::default as d;
use super::{beside, read_text, round12, ImportError};
use crate::formats::flp::{read_flp, FlpUnit};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A layer before materials are named: its properties and floorplan.
pub(super) struct Pending {
    pub name: String,
    pub k: f64,
    pub c: f64,
    /// Name from a materials file, if any.
    pub material_name: Option<String>,
    pub thickness: f64,
    pub cells: usize,
    pub floorplan: Option<(PathBuf, Vec<FlpUnit>)>,
    pub power: bool,
    /// x, y, width, length in the domain (`None`: the whole domain).
    pub outline: Option<[f64; 4]>,
    pub comment: Vec<String>,
    /// A microchannel layer's geometry file (`-use_microchannels 1`).
    pub network: Option<PathBuf>,
    /// Its `[layers.cavity]` lines, once resolved.
    pub cavity: Vec<String>,
}

pub(super) fn unsupported(file: &Path, line: usize, what: &str, why: &str) -> ImportError {
    ImportError::Unsupported {
        file: file.to_path_buf(),
        line,
        what: what.into(),
        why: why.into(),
    }
}

/// The materials file, if any, and the configuration's material settings.
pub(super) struct Materials<'a> {
    cfg: &'a HsConfig,
    list: Option<(HashMap<String, HsMaterial>, PathBuf)>,
    /// A materials file named but absent: HotSpot's example 1 and 3
    /// `run.sh` name one their folders lack, and neither names a material,
    /// so only a lookup makes its absence an error.
    missing: Option<PathBuf>,
}

impl<'a> Materials<'a> {
    pub(super) fn new(cfg: &'a HsConfig, file: Option<PathBuf>) -> Result<Self, ImportError> {
        let cf = &cfg.file;
        // `--materials` must exist; HotSpot's `-materials_file` may not.
        let named = cfg.text("materials_file").map(|s| beside(cf, &s.value));
        let (list, missing) = match (file, named) {
            (Some(p), _) => (Some((parse_materials(&read_text(&p)?, &p)?, p)), None),
            (None, Some(p)) if !p.exists() => (None, Some(p)),
            (None, Some(p)) => (Some((parse_materials(&read_text(&p)?, &p)?, p)), None),
            (None, None) => (None, None),
        };
        Ok(Materials { cfg, list, missing })
    }

    /// The materials file named but absent, if so.
    pub(super) fn missing(&self) -> Option<&Path> {
        self.missing.as_deref()
    }

    /// k, c, µ of a named fluid (a coolant), for setting `what` at `line`
    /// of `file`.
    pub(super) fn fluid(
        &self,
        name: &str,
        file: &Path,
        line: usize,
        what: &str,
    ) -> Result<(f64, f64, f64), ImportError> {
        let e = self.entry(name, file, line, what)?;
        match e.viscosity {
            Some(mu) if !e.solid => Ok((e.k, e.heat_capacity, mu)),
            _ => Err(ImportError::Invalid {
                file: file.to_path_buf(),
                message: format!(
                    "line {line}: {what}: material `{name}` is a solid, not a coolant"
                ),
            }),
        }
    }

    /// k, c of a named material, for setting `what` at `line` of `file`.
    pub(super) fn lookup(
        &self,
        name: &str,
        file: &Path,
        line: usize,
        what: &str,
    ) -> Result<(f64, f64), ImportError> {
        let e = self.entry(name, file, line, what)?;
        if !e.solid {
            return Err(unsupported(
                file,
                line,
                &format!("fluid material `{name}`"),
                "a fluid fills the channels of a microchannel layer only (-coolant_material)",
            ));
        }
        Ok((e.k, e.heat_capacity))
    }

    /// The materials file's entry `name`.
    fn entry(
        &self,
        name: &str,
        file: &Path,
        line: usize,
        what: &str,
    ) -> Result<&HsMaterial, ImportError> {
        let Some((m, mfile)) = &self.list else {
            if let Some(p) = &self.missing {
                return Err(ImportError::Invalid {
                    file: file.to_path_buf(),
                    message: format!(
                        "line {line}: {what} names material `{name}`, but the materials file {} does not exist",
                        p.display()
                    ),
                });
            }
            return Err(ImportError::Invalid { file: file.to_path_buf(), message: format!(
                "line {line}: {what} names material `{name}`: pass the materials file with --materials") });
        };
        let e = m.get(name).ok_or_else(|| ImportError::Invalid {
            file: file.to_path_buf(),
            message: format!(
                "line {line}: {what}: material `{name}` is not in {}",
                mfile.display()
            ),
        })?;
        Ok(e)
    }

    /// A package/chip property: `-material_X` overrides `-k_X` and `-p_X`, as in HotSpot.
    pub(super) fn prop(
        &self,
        x: &str,
        k0: f64,
        p0: f64,
    ) -> Result<(f64, f64, Option<String>), ImportError> {
        let cfg = self.cfg;
        match cfg.text(&format!("material_{x}")) {
            Some(s) => {
                let (k, c) = self.lookup(&s.value, &cfg.file, s.line, &format!("-material_{x}"))?;
                Ok((k, c, Some(s.value.clone())))
            }
            None => Ok((
                cfg.num(&format!("k_{x}"), k0)?,
                cfg.num(&format!("p_{x}"), p0)?,
                None,
            )),
        }
    }
}

/// The layers under the package, bottom to top, and the file they came from;
/// `lcf` and `flp` as given on the command line (else the config's).
pub(super) fn chip_layers(
    lcf: Option<&Path>,
    flp: Option<&Path>,
    cfg: &HsConfig,
    mats: &Materials,
    names: &[String],
    footer: &mut Vec<String>,
) -> Result<(Vec<Pending>, String), ImportError> {
    let cf = &cfg.file;
    let mut layers: Vec<Pending> = Vec::new();
    let lcf = lcf
        .map(Path::to_path_buf)
        .or_else(|| cfg.text("grid_layer_file").map(|s| beside(cf, &s.value)));
    let source;
    if let Some(lcf) = &lcf {
        source = lcf.display().to_string();
        for n in names {
            let chip_or_if = ["chip", "interface"]
                .iter()
                .any(|x| n.ends_with(&format!("_{x}")));
            if chip_or_if || n == "f" {
                let v = &cfg.settings[n].value;
                footer.push(format!("  -{n} {v} (not used with an .lcf: its layers replace HotSpot's default chip layers)"));
            }
        }
        for l in parse_lcf(&read_text(lcf)?, lcf)? {
            if !l.lateral {
                return Err(unsupported(
                    lcf,
                    l.lateral_line,
                    &format!("layer {} without lateral heat flow (N)", l.number),
                    "cuth conducts in x and y in every layer",
                ));
            }
            let network = is_network(lcf, &l, cfg)?;
            let (k, c, material_name) = match &l.material {
                LcfMaterial::Values {
                    heat_capacity,
                    resistivity,
                } => (1.0 / resistivity, *heat_capacity, None),
                LcfMaterial::Named(n) => {
                    let (k, c) = mats.lookup(n, lcf, l.line + 3, &format!("layer {}", l.number))?;
                    (k, c, Some(n.clone()))
                }
            };
            let fp = beside(lcf, &l.floorplan);
            let floorplan = if network {
                None
            } else {
                let units = read_flp(&fp)?;
                Some((fp.clone(), units))
            };
            layers.push(Pending {
                name: format!("layer_{}", l.number),
                k,
                c,
                material_name,
                thickness: l.thickness,
                cells: 1,
                floorplan,
                power: l.power,
                outline: None,
                network: network.then_some(fp),
                cavity: Vec::new(),
                comment: vec![format!(
                    "lcf layer {} (line {}), power {}{}",
                    l.number,
                    l.line,
                    if l.power { "Y" } else { "N" },
                    if matches!(l.material, LcfMaterial::Values { .. }) {
                        "; k = 1/resistivity"
                    } else {
                        ""
                    }
                )],
            });
        }
    } else {
        let flp = flp
            .map(Path::to_path_buf)
            .or_else(|| cfg.text("f").map(|s| beside(cf, &s.value)))
            .ok_or_else(|| ImportError::Invalid {
                file: cf.clone(),
                message: "no layers: pass --lcf LAYERS.lcf or --flp FLOORPLAN.flp".into(),
            })?;
        source = flp.display().to_string();
        let units = read_flp(&flp)?;
        let (k, c, material_name) = mats.prop("chip", d::K_CHIP, d::P_CHIP)?;
        let mut comment =
            vec!["HotSpot's default chip layer (-t_chip, -k_chip, -p_chip), powered".to_string()];
        if units.iter().any(|u| u.material.is_some()) {
            comment.push(
                "note: units with specific-heat/resistivity columns override the material here; \
                HotSpot ignores them without an .lcf and -detailed_3D on"
                    .into(),
            );
        }
        layers.push(Pending {
            name: "chip".into(),
            k,
            c,
            material_name,
            thickness: cfg.num("t_chip", d::T_CHIP)?,
            cells: 1,
            floorplan: Some((flp, units)),
            power: true,
            outline: None,
            comment,
            network: None,
            cavity: Vec::new(),
        });
        let (k, c, material_name) = mats.prop("interface", d::K_INTERFACE, d::P_INTERFACE)?;
        layers.push(Pending { name: "interface".into(), k, c, material_name, thickness: cfg.num("t_interface", d::T_INTERFACE)?,
            cells: 1, floorplan: None, power: false, outline: None, network: None, cavity: Vec::new(),
            comment: vec!["HotSpot's default thermal interface layer (-t_interface, -k_interface, -p_interface)".into()] });
    }

    Ok((layers, source))
}

/// Whether `.lcf` layer `l` is a microchannel layer (its "floorplan" a
/// geometry `.csv`), which needs `-use_microchannels 1`, as in HotSpot, and
/// carries no power.
fn is_network(lcf: &Path, l: &LcfLayer, cfg: &HsConfig) -> Result<bool, ImportError> {
    if !l.floorplan.ends_with(".csv") {
        return Ok(false);
    }
    if cfg.num("use_microchannels", 0.0)? == 0.0 {
        return Err(unsupported(
            lcf,
            l.floorplan_line,
            &format!("microchannel layer {} ({})", l.number, l.floorplan),
            "its geometry is read under -use_microchannels 1 only (HotSpot refuses it too)",
        ));
    }
    if l.power {
        return Err(unsupported(
            lcf,
            l.floorplan_line,
            &format!("power in microchannel layer {}", l.number),
            "a cavity layer holds coolant and walls, no sources",
        ));
    }
    Ok(true)
}

/// The floorplans' extent (12 significant digits); all layers must agree.
pub(super) fn footprint(layers: &[Pending], cf: &Path) -> Result<(f64, f64), ImportError> {
    // Footprint: the floorplans' extent; HotSpot requires all layers to agree.
    let mut extent: Option<(f64, f64, PathBuf)> = None;
    for l in layers {
        let Some((fp, units)) = &l.floorplan else {
            continue;
        };
        let w = units.iter().map(|u| u.rect.x1).fold(0.0, f64::max);
        let h = units.iter().map(|u| u.rect.y1).fold(0.0, f64::max);
        match &extent {
            None => extent = Some((round12(w), round12(h), fp.clone())),
            Some((w0, h0, f0)) if (w - w0).abs() > 1e-6 * w0 || (h - h0).abs() > 1e-6 * h0 => {
                return Err(ImportError::Invalid { file: fp.clone(), message: format!(
                    "extent {w} x {h} m differs from {} ({w0} x {h0} m): HotSpot and cuth need one footprint", f0.display()) });
            }
            Some(_) => {}
        }
    }
    let (width, length, _) = extent.ok_or_else(|| ImportError::Invalid {
        file: cf.to_path_buf(),
        message: "no floorplan".into(),
    })?;
    Ok((width, length))
}
