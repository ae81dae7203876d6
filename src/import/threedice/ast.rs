//! The parsed `.stk`: what `stk.rs` hands to the conversion. Numbers stay
//! as written, in 3D-ICE's units (µm, W/(µm·K), J/(µm³·K), W/(µm²·K)).

#[derive(Clone, Debug)]
pub struct StkMaterial {
    pub name: String,
    pub line: usize,
    /// One value (isotropic) or three (x, y, z), W/(µm·K).
    pub k: Vec<String>,
    /// J/(µm³·K).
    pub c: String,
}

#[derive(Clone, Debug)]
pub struct Sink {
    /// W/(µm²·K).
    pub htc: String,
    /// K.
    pub temperature: String,
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct Dimensions {
    /// x extent, µm ("chip length").
    pub chip_length: String,
    /// y extent, µm ("chip width").
    pub chip_width: String,
    pub cell_length: String,
    pub cell_width: String,
    pub line: usize,
    pub non_uniform: bool,
}

/// A layer: height in µm and material name.
#[derive(Clone, Debug)]
pub struct LayerSpec {
    pub height: String,
    pub material: String,
    pub line: usize,
}

#[derive(Clone, Debug)]
pub struct Die {
    pub name: String,
    pub line: usize,
    /// Top to bottom, as written; `source` marks the one source layer.
    pub layers: Vec<(LayerSpec, bool)>,
}

#[derive(Clone, Debug)]
pub enum Element {
    Layer(LayerSpec),
    Die {
        die: String,
        floorplan: String,
    },
    /// A cavity, as the `.stk`'s `microchannel` or `pinfin` section says.
    Channel,
}

/// Which cavity the `microchannel` or `pinfin` section declares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CavityKind {
    FourRm,
    TwoRm,
    PinFin,
}

/// The `microchannel 4rm`, `microchannel 2rm` or `pinfin` section, numbers
/// as written: lengths µm, flow rate ml/min (per cavity), Darcy velocity
/// µm/s, coefficients W/(µm²·K), heat capacity J/(µm³·K), temperature K.
#[derive(Clone, Debug)]
pub struct CavitySection {
    pub kind: CavityKind,
    pub line: usize,
    pub height: Option<String>,
    pub channel_length: Option<String>,
    pub wall_length: Option<String>,
    pub first_wall_length: Option<String>,
    pub last_wall_length: Option<String>,
    pub pin_diameter: Option<String>,
    pub pin_pitch: Option<String>,
    pub pin_distribution: Option<String>,
    /// The wall (or pin) material.
    pub material: Option<String>,
    pub flow_rate: Option<String>,
    pub darcy_velocity: Option<String>,
    /// `(face, value)`: one `("", h)`, or side, top and bottom as written.
    pub htc: Vec<(String, String)>,
    pub heat_capacity: Option<String>,
    pub inlet: Option<String>,
}

#[derive(Clone, Debug)]
pub struct StackElement {
    pub name: String,
    pub line: usize,
    pub element: Element,
    /// `discretization NX NY` (cells along x and y in 3D-ICE's non-uniform
    /// mode), as written.
    pub discretization: Option<(String, String)>,
}

/// A `T (ELEMENT, X, Y, "FILE", WHEN) ;` output instruction: a probe.
#[derive(Clone, Debug)]
pub struct ProbeOut {
    pub element: String,
    /// µm, as written.
    pub x: String,
    pub y: String,
    pub file: String,
    /// `final`, `slot` or `step` (`final` when not written).
    pub when: String,
    pub line: usize,
}

/// An output instruction other than `T`:
/// `KIND ( [ELEMENT[.FLOORPLAN_ELEMENT] ,] "FILE" [, QUANTITY] [, WHEN] ) ;`.
#[derive(Clone, Debug)]
pub struct OutputInstr {
    /// `Tflp`, `Tflpel`, `Tmap`, `Pmap`, `Tcoolant` or `T3d`.
    pub kind: String,
    /// The stack element (none for `T3d`).
    pub element: Option<String>,
    /// `Tflpel`'s floorplan element.
    pub floorplan_element: Option<String>,
    pub file: String,
    /// `maximum`, `minimum`, `average` or `gradient`.
    pub quantity: Option<String>,
    /// `final`, `slot` or `step`.
    pub when: String,
    pub line: usize,
}

#[derive(Clone, Debug, Default)]
pub struct Stk {
    pub materials: Vec<StkMaterial>,
    pub top_sink: Option<Sink>,
    pub bottom_sink: Option<Sink>,
    pub dimensions: Option<Dimensions>,
    pub layer_defs: Vec<(String, LayerSpec)>,
    pub dies: Vec<Die>,
    /// Top to bottom, as written.
    pub stack: Vec<StackElement>,
    pub cavity: Option<CavitySection>,
    /// (step, slot) in seconds for a transient solver.
    pub transient: Option<(String, String)>,
    /// K, and its line.
    pub initial_temperature: Option<(String, usize)>,
    /// The `T` output instructions.
    pub probes: Vec<ProbeOut>,
    /// The other output instructions (`Tflp`, `Tflpel`, `Tmap`, `Pmap`,
    /// `Tcoolant`, `T3d`).
    pub outputs: Vec<OutputInstr>,
    /// Statements carried as comments only (solver extras).
    pub ignored: Vec<String>,
}
