//! `[output.threedice]`: the output instructions of an imported 3D-ICE
//! stack (`T`, `Tflp`, `Tflpel`, `Tmap`, `Pmap`, `T3d`, `Tcoolant`), kept so that a run
//! writes the files a 3D-ICE user's scripts read, under the run's output
//! folder, with 3D-ICE's names. Checked here like any other field: every
//! layer, probe and block named must exist, and a file must stay inside
//! the output folder.

pub use super::peer_spec::{
    PeerElementSpec, PeerFileSpec, PeerKind, PeerOutputsSpec, Quantity, When,
};
use super::schema::PowerSpec;
use super::{Layer, Probe, StackError};
use std::path::{Component, Path, PathBuf};

/// `[output.threedice]`, checked.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerOutputs {
    pub slot_s: Option<f64>,
    pub files: Vec<PeerFile>,
}

/// One checked instruction.
#[derive(Clone, Debug, PartialEq)]
pub struct PeerFile {
    pub kind: PeerKind,
    /// Relative, plain components only.
    pub file: PathBuf,
    pub element: String,
    /// Layer index (bottom = 0); `None` for `T3d`.
    pub layer: Option<usize>,
    /// Index into the stack's probes (`T`).
    pub probe: Option<usize>,
    pub quantity: Quantity,
    pub when: When,
    pub elements: Vec<PeerElementSpec>,
}

impl PeerOutputs {
    /// Whether some instruction reads layer `l`'s map.
    pub fn reads_layer(&self, l: usize) -> bool {
        self.files.iter().any(|f| f.layer == Some(l))
    }

    /// Whether some instruction writes the whole field.
    pub fn needs_field(&self) -> bool {
        self.files.iter().any(|f| f.kind == PeerKind::T3d)
    }
}

/// What cuth itself writes at the top of an output folder.
const RESERVED: [&str; 13] = [
    "summary.json",
    "blocks.csv",
    "blocks.steady",
    "probes.csv",
    "field.vtr",
    "field.npy",
    "field.pvd",
    "timeseries.csv",
    "temperature.png",
    "final",
    "snapshots",
    "xaxis.txt",
    "yaxis.txt",
];

fn invalid(file: &Path, field: String, message: impl Into<String>) -> StackError {
    StackError::Invalid {
        file: file.to_path_buf(),
        field,
        message: message.into(),
    }
}

/// Checks `spec` against the resolved layers and probes.
pub(super) fn resolve(
    spec: PeerOutputsSpec,
    file: &Path,
    layers: &[Layer],
    probes: &[Probe],
) -> Result<PeerOutputs, StackError> {
    if let Some(s) = spec.slot {
        if !(s.is_finite() && s > 0.0) {
            return Err(invalid(
                file,
                "output.threedice.slot".into(),
                format!("must be a positive number of seconds, got {s}"),
            ));
        }
    }
    let mut files = Vec::with_capacity(spec.files.len());
    for (i, f) in spec.files.into_iter().enumerate() {
        let field = |k: &str| format!("output.threedice.files[{i}] ({}).{k}", f.file);
        files.push(resolve_one(&f, file, layers, probes, &field)?);
    }
    Ok(PeerOutputs {
        slot_s: spec.slot,
        files,
    })
}

fn resolve_one(
    f: &PeerFileSpec,
    file: &Path,
    layers: &[Layer],
    probes: &[Probe],
    field: &dyn Fn(&str) -> String,
) -> Result<PeerFile, StackError> {
    let path = Path::new(&f.file);
    let plain = path.components().all(|c| matches!(c, Component::Normal(_)));
    if f.file.is_empty() || !plain {
        return Err(invalid(
            file,
            field("file"),
            "must be a relative path inside the run's output folder (no `..`, no root)",
        ));
    }
    let top = path
        .components()
        .next()
        .map(|c| c.as_os_str().to_string_lossy());
    if let Some(t) = top.filter(|t| RESERVED.contains(&t.as_ref())) {
        return Err(invalid(
            file,
            field("file"),
            format!("`{t}` is a file cuth writes itself in the output folder; choose another name"),
        ));
    }
    let layer = match &f.layer {
        Some(name) => Some(
            layers
                .iter()
                .position(|l| &l.name == name)
                .ok_or_else(|| invalid(file, field("layer"), format!("unknown layer `{name}`")))?,
        ),
        None => None,
    };
    let probe = match &f.probe {
        Some(name) => Some(
            probes
                .iter()
                .position(|p| &p.name == name)
                .ok_or_else(|| invalid(file, field("probe"), format!("unknown probe `{name}`")))?,
        ),
        None => None,
    };
    let need = |ok: bool, k: &str, what: &str| {
        if ok {
            Ok(())
        } else {
            Err(invalid(
                file,
                field(k),
                format!("{:?} needs {what}", f.kind),
            ))
        }
    };
    match f.kind {
        PeerKind::T => need(probe.is_some(), "probe", "a `probe`")?,
        PeerKind::T3d => {}
        _ => need(layer.is_some(), "layer", "a `layer`")?,
    }
    if f.kind == PeerKind::Tcoolant {
        need(f.quantity.is_some(), "quantity", "a `quantity`")?;
        let l = &layers[layer.expect("checked above")];
        need(l.cavity.is_some(), "layer", "a cavity layer")?;
    }
    if matches!(f.kind, PeerKind::Tflp | PeerKind::Tflpel) {
        need(f.quantity.is_some(), "quantity", "a `quantity`")?;
        need(
            !f.elements.is_empty(),
            "elements",
            "its floorplan `elements`",
        )?;
        let l = &layers[layer.expect("checked above")];
        let known: Vec<&str> = match &l.power {
            Some(PowerSpec::Blocks { blocks }) => blocks.iter().map(|b| b.name.as_str()).collect(),
            _ => Vec::new(),
        };
        for e in &f.elements {
            if let Some(b) = e
                .blocks
                .iter()
                .find(|b| !known.contains(&b.as_str()))
                .or(e.blocks.is_empty().then_some(&e.name))
            {
                return Err(invalid(
                    file,
                    field("elements"),
                    format!(
                        "element `{}`: layer `{}` has no inline block `{b}`",
                        e.name, l.name
                    ),
                ));
            }
        }
    }
    Ok(PeerFile {
        kind: f.kind,
        file: path.to_path_buf(),
        element: f.element.clone(),
        layer,
        probe,
        quantity: f.quantity.unwrap_or(Quantity::Average),
        when: f.when,
        elements: f.elements.clone(),
    })
}

#[cfg(test)]
mod tests {
    use crate::stack::Stack;
    use std::path::Path;

    const BASE: &str = r#"
[chip]
width = 0.002
length = 0.001
[grid]
GRID
[boundary]
ambient = 300.0
h_top = 1e4
[materials.si]
k = 130.0
heat_capacity = 1.6e6
[[layers]]
name = "die"
material = "si"
thickness = 1e-4
[layers.power]
type = "blocks"
[[layers.power.blocks]]
name = "a.1"
x = 0.0
y = 0.0
width = 0.001
height = 0.001
power = 1.0
[[probes]]
name = "p"
x = 0.001
y = 0.0005
layer = "die"
"#;

    fn load(grid: &str, extra: &str) -> Result<Stack, String> {
        let text = BASE.replace("GRID", grid) + extra;
        Stack::from_toml(&text, Path::new("s.toml")).map_err(|e| e.to_string())
    }

    const UNIFORM: &str = "nx = 4\nny = 2";

    #[test]
    fn grid_lines_given_one_by_one() {
        let st = load("x_edges = [0.0, 0.0005, 0.002]\ny_edges = [0.0, 0.001]", "").unwrap();
        assert_eq!((st.nx, st.ny), (2, 1));
        let (xe, _) = st.plane_edges.unwrap();
        assert_eq!(xe, [0.0, 0.0005, 0.002]);
        for (grid, needle) in [
            (
                "x_edges = [0.0, 0.001, 0.0005, 0.002]\ny_edges = [0.0, 0.001]",
                "grid.x_edges",
            ),
            (
                "x_edges = [0.0, 0.0019]\ny_edges = [0.0, 0.001]",
                "grid.x_edges",
            ),
            ("x_edges = [0.0, 0.002]", "both `x_edges` and `y_edges`"),
            (
                "nx = 2\nx_edges = [0.0, 0.002]\ny_edges = [0.0, 0.001]",
                "neither",
            ),
        ] {
            let e = load(grid, "").unwrap_err();
            assert!(e.contains(needle), "{grid}: {e}");
        }
    }

    #[test]
    fn instructions_name_what_exists_and_stay_in_the_output_folder() {
        let file = |kv: &str| {
            format!("[output.threedice]\nslot = 0.1\n[[output.threedice.files]]\nelement = \"D\"\n{kv}\n")
        };
        let st = load(
            UNIFORM,
            &file("kind = \"Tflpel\"\nfile = \"o/a.txt\"\nlayer = \"die\"\nquantity = \"maximum\"\nelements = [{ name = \"a\", blocks = [\"a.1\"] }]"),
        )
        .unwrap();
        let outs = st.threedice.unwrap();
        assert_eq!(outs.slot_s, Some(0.1));
        assert!(outs.reads_layer(0) && !outs.needs_field());
        for (kv, needle) in [
            ("kind = \"T\"\nfile = \"../a.txt\"\nprobe = \"p\"", "inside the run's output folder"),
            ("kind = \"T\"\nfile = \"summary.json\"\nprobe = \"p\"", "cuth writes itself"),
            ("kind = \"T\"\nfile = \"a.txt\"\nprobe = \"q\"", "unknown probe `q`"),
            ("kind = \"Tmap\"\nfile = \"a.txt\"", "needs a `layer`"),
            ("kind = \"Tcoolant\"\nfile = \"c.txt\"\nlayer = \"die\"\nquantity = \"maximum\"", "needs a cavity layer"),
            ("kind = \"Tcoolant\"\nfile = \"c.txt\"\nlayer = \"die\"", "needs a `quantity`"),
            ("kind = \"Tflp\"\nfile = \"a.txt\"\nlayer = \"die\"\nquantity = \"average\"\nelements = [{ name = \"b\", blocks = [\"b\"] }]", "no inline block `b`"),
        ] {
            let e = load(UNIFORM, &file(kv)).unwrap_err();
            assert!(e.contains(needle), "{kv}: {e}");
        }
    }
}
