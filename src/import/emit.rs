//! The cuth stack TOML written by an import: a small document model
//! ([`StackDoc`]) rendered as text with comments where the importers put
//! them (serde's TOML writer drops comments, and the comments are the point:
//! each approximation is stated where it applies).
//!
//! Numbers are written in Rust's shortest round-trip form (`{:?}`), so the
//! stack loads the very doubles the importer computed.

use std::fmt::Write;

/// Thermal conductivity of a material, W/(m·K).
#[derive(Clone, Debug, PartialEq)]
pub enum Conductivity {
    Iso(f64),
    /// x, y, z.
    Aniso([f64; 3]),
}

#[derive(Clone, Debug)]
pub struct MaterialDoc {
    pub name: String,
    pub k: Conductivity,
    /// J/(m³·K).
    pub heat_capacity: f64,
    pub comment: Vec<String>,
}

/// An inline power rectangle, metres and watts.
#[derive(Clone, Debug)]
pub struct BlockDoc {
    pub name: String,
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
    pub power: f64,
}

/// A `[[probes]]` entry on a layer, metres.
#[derive(Clone, Debug)]
pub struct ProbeDoc {
    pub name: String,
    pub x: f64,
    pub y: f64,
    pub layer: String,
    pub comment: String,
}

/// An `[[output.threedice.files]]` entry: a 3D-ICE output instruction.
#[derive(Clone, Debug, Default)]
pub struct PeerFileDoc {
    pub kind: String,
    pub file: String,
    pub element: String,
    pub layer: Option<String>,
    pub probe: Option<String>,
    pub quantity: Option<String>,
    pub when: String,
    /// Floorplan elements and their blocks (`Tflp`, `Tflpel`).
    pub elements: Vec<(String, Vec<String>)>,
    pub comment: String,
}

#[derive(Clone, Debug)]
pub enum PowerDoc {
    /// HotSpot trace for the layer's floorplan; `file` as written in the TOML.
    Ptrace {
        file: String,
    },
    Blocks(Vec<BlockDoc>),
}

#[derive(Clone, Debug)]
pub struct LayerDoc {
    pub name: String,
    pub material: String,
    /// Metres.
    pub thickness: f64,
    pub cells: usize,
    /// HotSpot `.flp`, as written in the TOML (relative to it).
    pub floorplan: Option<String>,
    pub power: Option<PowerDoc>,
    /// The rectangle the layer's material covers (x, y, width, length,
    /// metres; `None`: the whole domain).
    pub outline: Option<[f64; 4]>,
    /// What fills the layer outside its outline (`"none"`: no material).
    pub fill: Option<String>,
    pub comment: Vec<String>,
}

/// A whole stack file. Layers bottom to top, as cuth reads them.
#[derive(Clone, Debug, Default)]
pub struct StackDoc {
    pub header: Vec<String>,
    pub title: String,
    /// Write the domain as `[package]` (a package wider than its dies)
    /// rather than `[chip]`.
    pub package: bool,
    /// x and y extent, metres.
    pub width: f64,
    pub length: f64,
    pub chip_comment: Vec<String>,
    pub nx: usize,
    pub ny: usize,
    /// Non-uniform grid: the largest cell over powered dies, metres, and the
    /// growth ratio; replaces `nx`, `ny` when given.
    pub cell: Option<(f64, f64)>,
    /// Graded grid given line by line (x and y edges, m); replaces the others.
    pub edges: Option<(Vec<f64>, Vec<f64>)>,
    pub grid_comment: Vec<String>,
    pub ambient: f64,
    pub h_top: f64,
    pub h_bottom: Option<f64>,
    pub boundary_comment: Vec<String>,
    /// `[output] block_map`: what `blocks.steady` reports (HotSpot's
    /// `-grid_map_mode`).
    pub block_map: Option<String>,
    /// `[output] hotspot`: HotSpot's grid (rows, cols) and layer naming
    /// (`"lcf"` or `"default"`), so runs write HotSpot's files.
    pub hotspot: Option<(usize, usize, &'static str)>,
    pub materials: Vec<MaterialDoc>,
    pub layers: Vec<LayerDoc>,
    pub probes: Vec<ProbeDoc>,
    /// `[output.threedice]`: 3D-ICE's time slot (s) and output instructions.
    pub peer_slot: Option<f64>,
    pub peer_files: Vec<PeerFileDoc>,
    /// Comment lines at the end (settings with no counterpart, hints).
    pub footer: Vec<String>,
}

/// A float as TOML: shortest round-trip text (`0.00015`, `1e-7`, `100.0`).
pub fn num(x: f64) -> String {
    format!("{x:?}")
}

/// A TOML basic string.
pub fn string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A TOML key: bare when it can be, else quoted.
pub fn key(s: &str) -> String {
    let bare = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        s.to_string()
    } else {
        string(s)
    }
}

fn comments(out: &mut String, lines: &[String]) {
    for l in lines {
        if l.is_empty() {
            out.push_str("#\n");
        } else {
            let _ = writeln!(out, "# {l}");
        }
    }
}

impl StackDoc {
    pub fn render(&self) -> String {
        let mut o = String::new();
        comments(&mut o, &self.header);
        let _ = writeln!(o, "title = {}\n", string(&self.title));

        self.render_domain(&mut o);
        for m in &self.materials {
            render_material(&mut o, m);
        }
        o.push_str("# Layers, bottom to top.\n");
        for l in &self.layers {
            render_layer(&mut o, l);
        }
        for p in &self.probes {
            let _ = writeln!(
                o,
                "\n# {}\n[[probes]]\nname = {}\nx = {}    # m\ny = {}    # m\nlayer = {}",
                p.comment,
                string(&p.name),
                num(p.x),
                num(p.y),
                string(&p.layer)
            );
        }
        self.render_peer_files(&mut o);
        if !self.footer.is_empty() {
            o.push('\n');
            comments(&mut o, &self.footer);
        }
        o
    }

    /// `[output.threedice]` and its files, when any.
    fn render_peer_files(&self, o: &mut String) {
        if self.peer_files.is_empty() {
            return;
        }
        o.push_str("\n# 3D-ICE's output instructions: a run writes these files under its output folder.\n[output.threedice]\n");
        if let Some(slot) = self.peer_slot {
            let _ = writeln!(
                o,
                "slot = {}    # s: `slot` files are written at its multiples",
                num(slot)
            );
        }
        for f in &self.peer_files {
            let _ = writeln!(
                o,
                "\n# {}\n[[output.threedice.files]]\nkind = {}\nfile = {}\nelement = {}\nwhen = {}",
                f.comment,
                string(&f.kind),
                string(&f.file),
                string(&f.element),
                string(&f.when)
            );
            for (k, v) in [
                ("layer", &f.layer),
                ("probe", &f.probe),
                ("quantity", &f.quantity),
            ] {
                if let Some(v) = v {
                    let _ = writeln!(o, "{k} = {}", string(v));
                }
            }
            if !f.elements.is_empty() {
                o.push_str("elements = [\n");
                for (name, blocks) in &f.elements {
                    let blocks: Vec<String> = blocks.iter().map(|b| string(b)).collect();
                    let _ = writeln!(
                        o,
                        "    {{ name = {}, blocks = [{}] }},",
                        string(name),
                        blocks.join(", ")
                    );
                }
                o.push_str("]\n");
            }
        }
    }

    /// The domain's tables: chip or package, grid, boundary and output.
    fn render_domain(&self, o: &mut String) {
        comments(o, &self.chip_comment);
        let _ = writeln!(
            o,
            "[{}]\nwidth = {}     # x extent, m\nlength = {}    # y extent, m\n",
            if self.package { "package" } else { "chip" },
            num(self.width),
            num(self.length)
        );
        comments(o, &self.grid_comment);
        match (&self.edges, self.cell) {
            (Some((xe, ye)), _) => {
                let list = |e: &[f64]| e.iter().map(|v| num(*v)).collect::<Vec<_>>().join(", ");
                let _ = writeln!(
                    o,
                    "[grid]\nx_edges = [{}]    # m\ny_edges = [{}]    # m\n",
                    list(xe),
                    list(ye)
                );
            }
            (None, Some((cell, growth))) => {
                let _ = writeln!(
                    o,
                    "[grid]\ncell = {}    # m, largest cell over the powered dies\ngrowth = {}    # largest ratio of neighbouring cells elsewhere\n",
                    num(cell),
                    num(growth)
                );
            }
            (None, None) => {
                let _ = writeln!(o, "[grid]\nnx = {}\nny = {}\n", self.nx, self.ny);
            }
        }

        comments(o, &self.boundary_comment);
        let _ = writeln!(
            o,
            "[boundary]\nambient = {}    # K\nh_top = {}    # W/(m^2 K)",
            num(self.ambient),
            num(self.h_top)
        );
        match self.h_bottom {
            Some(h) => {
                let _ = writeln!(o, "h_bottom = {}    # W/(m^2 K)\n", num(h));
            }
            None => o.push_str("# no h_bottom: adiabatic bottom\n\n"),
        }
        if self.block_map.is_some() || self.hotspot.is_some() {
            o.push_str("[output]\n");
        }
        if let Some(mode) = &self.block_map {
            let _ = writeln!(
                o,
                "block_map = {}    # blocks.steady per block; --block-map overrides",
                string(mode)
            );
        }
        if let Some((rows, cols, layers)) = self.hotspot {
            let _ = writeln!(
                o,
                "hotspot = {{ rows = {rows}, cols = {cols}, layers = {} }}    # HotSpot's files too",
                string(layers)
            );
        }
        if self.block_map.is_some() || self.hotspot.is_some() {
            o.push('\n');
        }
    }
}

fn render_material(o: &mut String, m: &MaterialDoc) {
    comments(o, &m.comment);
    let _ = writeln!(o, "[materials.{}]", key(&m.name));
    match m.k {
        Conductivity::Iso(k) => {
            let _ = writeln!(o, "k = {}    # W/(m K)", num(k));
        }
        Conductivity::Aniso([x, y, z]) => {
            let _ = writeln!(
                o,
                "kx = {}    # W/(m K)\nky = {}\nkz = {}",
                num(x),
                num(y),
                num(z)
            );
        }
    }
    let _ = writeln!(
        o,
        "heat_capacity = {}    # J/(m^3 K)\n",
        num(m.heat_capacity)
    );
}

fn render_layer(o: &mut String, l: &LayerDoc) {
    o.push('\n');
    comments(o, &l.comment);
    let _ = writeln!(
        o,
        "[[layers]]\nname = {}\nmaterial = {}\nthickness = {}    # m",
        string(&l.name),
        string(&l.material),
        num(l.thickness)
    );
    if l.cells != 1 {
        let _ = writeln!(o, "cells = {}", l.cells);
    }
    if let Some([x, y, w, len]) = l.outline {
        let _ = writeln!(
            o,
            "outline = {{ x = {}, y = {}, width = {}, length = {} }}    # m",
            num(x),
            num(y),
            num(w),
            num(len)
        );
    }
    if let Some(f) = &l.fill {
        let _ = writeln!(o, "fill = {}", string(f));
    }
    if let Some(f) = &l.floorplan {
        let _ = writeln!(o, "floorplan = {}", string(f));
    }
    match &l.power {
        None => {}
        Some(PowerDoc::Ptrace { file }) => {
            let _ = writeln!(
                o,
                "power = {{ type = \"ptrace\", file = {} }}    # mean of the rows",
                string(file)
            );
        }
        Some(PowerDoc::Blocks(blocks)) => {
            o.push_str("[layers.power]\ntype = \"blocks\"\n");
            for b in blocks {
                let _ = writeln!(
                        o,
                        "[[layers.power.blocks]]\nname = {}\nx = {}\ny = {}\nwidth = {}\nheight = {}\npower = {}    # W",
                        string(&b.name),
                        num(b.x),
                        num(b.y),
                        num(b.width),
                        num(b.height),
                        num(b.power)
                    );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_a_loadable_stack() {
        let doc = StackDoc {
            header: vec!["imported".into()],
            title: "t \"q\"".into(),
            package: true,
            width: 0.0124,
            length: 1e-2,
            nx: 4,
            ny: 3,
            cell: Some((2.5e-4, 1.3)),
            ambient: 318.15,
            h_top: 63201.537061381336,
            h_bottom: Some(1e-5),
            materials: vec![MaterialDoc {
                name: "si licon".into(),
                k: Conductivity::Aniso([1.0, 2.0, 3.5]),
                heat_capacity: 1.75e6,
                comment: vec!["c".into(), String::new()],
            }],
            layers: vec![LayerDoc {
                name: "die".into(),
                material: "si licon".into(),
                thickness: 0.00015,
                cells: 2,
                floorplan: None,
                power: Some(PowerDoc::Blocks(vec![BlockDoc {
                    name: "b".into(),
                    x: 0.0,
                    y: 0.0,
                    width: 1e-3,
                    height: 2e-3,
                    power: 1.5,
                }])),
                outline: Some([1e-3, 2e-3, 5e-3, 6e-3]),
                fill: Some("none".into()),
                comment: vec![],
            }],
            probes: vec![ProbeDoc {
                name: "n1".into(),
                x: 5e-3,
                y: 4.8e-3,
                layer: "die".into(),
                comment: "c".into(),
            }],
            ..Default::default()
        };
        let text = doc.render();
        let stack = crate::stack::Stack::from_toml(&text, std::path::Path::new("x.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(stack.title.as_deref(), Some("t \"q\""));
        assert_eq!(stack.h_top, 63201.537061381336);
        assert_eq!(stack.h_bottom, Some(1e-5));
        assert_eq!(stack.layers[0].material.k, [1.0, 2.0, 3.5]);
        assert_eq!(stack.layers[0].thickness_m, 0.00015);
        assert_eq!(stack.layers[0].cells, 2);
        let o = stack.layers[0].outline.expect("outline");
        for (got, want) in [o.x0, o.y0, o.x1, o.y1]
            .iter()
            .zip([1e-3, 2e-3, 6e-3, 8e-3])
        {
            assert!((got - want).abs() < 1e-15, "{o:?}");
        }
        // `cell` replaces nx, ny: a non-uniform grid snapped to the outline.
        let (edges, _) = stack.plane_edges.as_ref().expect("non-uniform grid");
        let wx = crate::grid::widths_of(edges);
        assert!(wx.iter().all(|w| *w <= 8.0 * 2.5e-4 * (1.0 + 1e-12)));
        assert!(edges.iter().any(|e| (e - 6e-3).abs() < 1e-15), "{edges:?}");
        assert!(text.contains("[package]"), "{text}");
        assert_eq!(stack.probes.len(), 1);
        assert_eq!((stack.probes[0].x_m, stack.probes[0].y_m), (5e-3, 4.8e-3));
    }
}
